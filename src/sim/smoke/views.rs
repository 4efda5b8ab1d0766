//! The smoke mode's inspectable fields: every view of the slice the viewer offers, read
//! from the simulation's buffers as one value per cell (the viewer colours them).

use super::{SmokeSimulation, AIR_DENSITY};
use crate::sim::{
    liquid::views::{mg_levels, read_mg, MgField, MgVector},
    SimError,
};
use std::borrow::Cow;

/// What the slice shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmokeField {
    /// Dye as RGB over black.
    Dye,
    /// |u| at cell centres.
    Speed,
    /// Hue from the flow direction, brightness from the speed.
    Direction,
    /// Pressure (Pa, air density 1.2 kg/m^3).
    Pressure,
    /// div u before the projection (1/s).
    DivergenceBefore,
    /// div u after the projection (1/s).
    DivergenceAfter,
    /// omega_z (1/s).
    Vorticity,
    Temperature,
    /// Cell types: SOLID obstacles (static, painted, rigid bodies) and FLUID.
    Obstacles,
    /// Velocity of the solid in each SOLID cell (a static solid's, a rigid body's
    /// v + w x r): hue from the direction, brightness from the speed; the flow is left out.
    SolidVelocity,
    /// A vector of one level of the `mg` preconditioner (the levels of the grid:
    /// [`MgField::list`]).
    Mg(MgField),
}

impl SmokeField {
    /// The views of the simulation grid (the multigrid levels come from [`MgField::list`]).
    pub const ALL: [SmokeField; 10] = [
        SmokeField::Dye,
        SmokeField::Speed,
        SmokeField::Direction,
        SmokeField::Pressure,
        SmokeField::DivergenceBefore,
        SmokeField::DivergenceAfter,
        SmokeField::Vorticity,
        SmokeField::Temperature,
        SmokeField::Obstacles,
        SmokeField::SolidVelocity,
    ];

    pub fn label(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            SmokeField::Mg(m) => return Cow::Owned(m.label()),
            SmokeField::Dye => "dye (rgb)",
            SmokeField::Speed => "speed |u| (m/s)",
            SmokeField::Direction => "velocity direction",
            SmokeField::Pressure => "pressure (Pa)",
            SmokeField::DivergenceBefore => "div u before projection (1/s)",
            SmokeField::DivergenceAfter => "div u after projection (1/s)",
            SmokeField::Vorticity => "vorticity ω_z (1/s)",
            SmokeField::Temperature => "temperature",
            SmokeField::Obstacles => "obstacles (cell type)",
            SmokeField::SolidVelocity => "solid velocity (obstacles and bodies, m/s)",
        })
    }

    /// The name on the command line (`eddy view --smoke-view NAME`).
    pub fn name(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            SmokeField::Mg(m) => return Cow::Owned(m.id()),
            SmokeField::Dye => "dye",
            SmokeField::Speed => "speed",
            SmokeField::Direction => "direction",
            SmokeField::Pressure => "pressure",
            SmokeField::DivergenceBefore => "divergence",
            SmokeField::DivergenceAfter => "divergence_after",
            SmokeField::Vorticity => "vorticity",
            SmokeField::Temperature => "temperature",
            SmokeField::Obstacles => "obstacles",
            SmokeField::SolidVelocity => "solid_velocity",
        })
    }

    /// Whether the view has a sign (drawn with a diverging colormap).
    pub fn signed(self) -> bool {
        match self {
            SmokeField::Mg(m) => m.signed(),
            _ => matches!(
                self,
                SmokeField::Pressure
                    | SmokeField::DivergenceBefore
                    | SmokeField::DivergenceAfter
                    | SmokeField::Vorticity
            ),
        }
    }

    /// Whether the view shows the cell types of its grid.
    pub fn is_cell_types(self) -> bool {
        matches!(
            self,
            SmokeField::Obstacles
                | SmokeField::Mg(MgField {
                    vector: MgVector::CellType,
                    ..
                })
        )
    }
}

impl std::str::FromStr for SmokeField {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        SmokeField::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .or_else(|| MgField::parse(&s).map(SmokeField::Mg))
            .ok_or_else(|| {
                let names: Vec<Cow<str>> = SmokeField::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown smoke view {s:?}; expected one of {}, or {}",
                    names.join(", "),
                    MgField::NAMES
                )
            })
    }
}

/// Per-cell values of a view (i-fastest), with the cell types and, for the velocity
/// views, the cell-centred velocity (x, y).
pub struct SmokeFieldData {
    pub field: SmokeField,
    pub dims: [u32; 2],
    /// Simulation-grid cells per value along x and y (more than 1 on a coarse multigrid
    /// level, which covers the same slice).
    pub spacing: [u32; 2],
    pub values: Vec<f32>,
    pub cell_type: Vec<u32>,
    /// Dye rgb per cell (the dye view only).
    pub rgb: Option<Vec<[f32; 3]>>,
    /// Cell-centred (u, v) (the velocity views only).
    pub velocity: Option<Vec<[f32; 2]>>,
}

impl SmokeSimulation {
    /// Cell-centred (u, v), the mean of the two faces per component.
    pub fn read_centre_velocity(&self) -> Result<Vec<[f32; 2]>, SimError> {
        let [nx, ny, _] = self.dims().map(|v| v as usize);
        let v = self.read_velocity()?;
        let nu = (nx + 1) * ny;
        Ok((0..nx * ny)
            .map(|c| {
                let (i, j) = (c % nx, c / nx);
                let u = 0.5 * (v[i + (nx + 1) * j] + v[i + 1 + (nx + 1) * j]);
                let w = 0.5 * (v[nu + c] + v[nu + c + nx]);
                [u, w]
            })
            .collect())
    }

    /// Dimensions of the multigrid levels whose vectors can be viewed, finest first.
    pub fn mg_levels(&self) -> Vec<[u32; 3]> {
        mg_levels(&self.pressure, self.scene.pressure.preconditioner)
    }

    fn read_mg(&self, f: MgField) -> Result<crate::sim::liquid::views::FieldData, SimError> {
        read_mg(&self.core, f)
    }

    /// Reads one view of the slice. Values in SOLID cells are 0 (except the cell types).
    pub fn read_view(&self, field: SmokeField) -> Result<SmokeFieldData, SimError> {
        let read = |b: &wgpu::Buffer| crate::gpu::read_buffer::<f32>(&self.ctx, b);
        // A multigrid level has its own grid and cell types; the other views share the slice's.
        let ([nx, ny, _], spacing, cell_type) = match field {
            SmokeField::Mg(m) => {
                let t = self.read_mg(MgField {
                    vector: MgVector::CellType,
                    ..m
                })?;
                let types = t.values.iter().map(|&v| v as u32).collect();
                (t.dims, [t.spacing[0], t.spacing[1]], types)
            }
            _ => (
                self.dims(),
                [1, 1],
                crate::gpu::read_buffer::<u32>(&self.ctx, &self.fields.cell_type)?,
            ),
        };
        let mut rgb = None;
        let mut velocity = None;
        let mut values: Vec<f32> = match field {
            SmokeField::Dye => {
                let dye = self.read_dye()?;
                rgb = Some(dye.iter().map(|d| [d[0], d[1], d[2]]).collect());
                dye.iter().map(|d| (d[0] + d[1] + d[2]) / 3.0).collect()
            }
            SmokeField::Speed | SmokeField::Direction => {
                let u = self.read_centre_velocity()?;
                let speed = u
                    .iter()
                    .map(|u| (u[0] * u[0] + u[1] * u[1]).sqrt())
                    .collect();
                velocity = Some(u);
                speed
            }
            SmokeField::Pressure => {
                // phi = p dt / rho  =>  p = phi rho / dt
                let scale = (AIR_DENSITY / (self.fields.params.dt.max(1e-12) as f64)) as f32;
                read(&self.pcg.p)?.iter().map(|x| x * scale).collect()
            }
            SmokeField::DivergenceBefore => read(
                self.core
                    .view_field(&self.fields.divergence, "divergence before the projection")?,
            )?,
            SmokeField::DivergenceAfter => read(
                self.core
                    .view_field(&self.fields.div_after, "divergence after the projection")?,
            )?,
            SmokeField::Vorticity => {
                crate::gpu::read_buffer::<[f32; 4]>(&self.ctx, &self.mode.smoke.curl)?
                    .iter()
                    .map(|w| w[2])
                    .collect()
            }
            SmokeField::Temperature => self.read_dye()?.iter().map(|d| d[3]).collect(),
            SmokeField::SolidVelocity => {
                // In the solids' cells, cut ones included (FLUID for the solve).
                let solid = crate::gpu::read_buffer::<u32>(&self.ctx, &self.fields.solid)?;
                let v: Vec<[f32; 2]> =
                    crate::gpu::read_buffer::<[f32; 4]>(&self.ctx, &self.fields.solid_vel)?
                        .iter()
                        .zip(&solid)
                        .map(|(v, s)| if *s != 0 { [v[0], v[1]] } else { [0.0; 2] })
                        .collect();
                let speed = v
                    .iter()
                    .map(|u| (u[0] * u[0] + u[1] * u[1]).sqrt())
                    .collect();
                velocity = Some(v);
                speed
            }
            SmokeField::Obstacles
            | SmokeField::Mg(MgField {
                vector: MgVector::CellType,
                ..
            }) => cell_type.iter().map(|t| *t as f32).collect(),
            SmokeField::Mg(m) => self.read_mg(m)?.values,
        };
        if !field.is_cell_types() && field != SmokeField::SolidVelocity {
            for (v, t) in values.iter_mut().zip(&cell_type) {
                if *t == crate::scene::SOLID {
                    *v = 0.0;
                }
            }
        }
        Ok(SmokeFieldData {
            field,
            dims: [nx, ny],
            spacing,
            values,
            cell_type,
            rgb,
            velocity,
        })
    }
}

impl SmokeSimulation {
    /// The slice's fields named in `names` (of [`crate::output::vtk::SMOKE_FIELDS`]) for a
    /// field cache: cell types, pressure (Pa), the cell-centred velocity (z zero), the MAC
    /// faces (u, v), the divergence after the projection, the vorticity (z), temperature
    /// and dye (rgb). Values in SOLID cells are 0, as in the views.
    pub fn field_frame(
        &self,
        names: &[String],
    ) -> Result<crate::sim::frames::FieldFrame, SimError> {
        use crate::sim::frames::{CellArray, FieldFrame};
        let has = |s: &str| names.iter().any(|x| x == s);
        let mut cells = vec![];
        for (name, field) in [
            ("cell_type", SmokeField::Obstacles),
            ("pressure", SmokeField::Pressure),
            ("divergence", SmokeField::DivergenceAfter),
            ("vorticity", SmokeField::Vorticity),
            ("temperature", SmokeField::Temperature),
        ] {
            if has(name) {
                cells.push(CellArray {
                    name: name.into(),
                    components: 1,
                    values: self.read_view(field)?.values,
                });
            }
        }
        if has("dye") {
            let rgb = self.read_view(SmokeField::Dye)?.rgb.unwrap_or_default();
            cells.push(CellArray {
                name: "dye".into(),
                components: 3,
                values: rgb.iter().flatten().copied().collect(),
            });
        }
        if has("velocity") {
            let v = self.read_centre_velocity()?;
            cells.push(CellArray {
                name: "velocity".into(),
                components: 3,
                values: v.iter().flat_map(|u| [u[0], u[1], 0.0]).collect(),
            });
        }
        let faces = if has("faces") {
            let v = self.read_velocity()?;
            let nu = self.fields.params.num_u as usize;
            let nv = self.fields.params.num_v as usize;
            Some([v[..nu].to_vec(), v[nu..nu + nv].to_vec(), vec![]])
        } else {
            None
        };
        let open = if has("faces") && self.fields.has_cut_faces() {
            let o = crate::gpu::read_buffer::<f32>(&self.ctx, &self.fields.open)?;
            let nu = self.fields.params.num_u as usize;
            let nv = self.fields.params.num_v as usize;
            Some([o[..nu].to_vec(), o[nu..nu + nv].to_vec(), vec![]])
        } else {
            None
        };
        Ok(FieldFrame {
            dims: self.dims(),
            h: self.fields.params.h as f64,
            cells,
            faces,
            open,
        })
    }
}
