//! Inspectable fields as data: every grid field the step produces, by name, with the
//! buffer that holds it and how to read one scalar per cell or face. One slice viewer
//! draws any of them; nothing else needs to know where a field lives.

use super::SimError;
use super::Simulation;

/// Where a field's samples sit on the MAC grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Cell,
    /// Faces of velocity component 0 (u), 1 (v) or 2 (w).
    Face(u32),
}

/// Every grid field a user can look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    U,
    V,
    W,
    UBeforeForces,
    VBeforeForces,
    WBeforeForces,
    WeightU,
    WeightV,
    WeightW,
    /// FLIP velocity change, u_new - u_old, per face.
    FlipDeltaU,
    FlipDeltaV,
    FlipDeltaW,
    CellType,
    ParticleCount,
    Divergence,
    DivergenceAfter,
    ADiag,
    APlusX,
    APlusY,
    APlusZ,
    Rhs,
    Pressure,
    Residual,
    Preconditioned,
    SearchDirection,
    ASearchDirection,
    MicPrecon,
}

impl Field {
    pub const ALL: [Field; 27] = [
        Field::U,
        Field::V,
        Field::W,
        Field::UBeforeForces,
        Field::VBeforeForces,
        Field::WBeforeForces,
        Field::WeightU,
        Field::WeightV,
        Field::WeightW,
        Field::FlipDeltaU,
        Field::FlipDeltaV,
        Field::FlipDeltaW,
        Field::CellType,
        Field::ParticleCount,
        Field::Divergence,
        Field::DivergenceAfter,
        Field::ADiag,
        Field::APlusX,
        Field::APlusY,
        Field::APlusZ,
        Field::Rhs,
        Field::Pressure,
        Field::Residual,
        Field::Preconditioned,
        Field::SearchDirection,
        Field::ASearchDirection,
        Field::MicPrecon,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::U => "u (x velocity)",
            Field::V => "v (y velocity)",
            Field::W => "w (z velocity)",
            Field::UBeforeForces => "u after P2G",
            Field::VBeforeForces => "v after P2G",
            Field::WBeforeForces => "w after P2G",
            Field::WeightU => "P2G weight u",
            Field::WeightV => "P2G weight v",
            Field::WeightW => "P2G weight w",
            Field::FlipDeltaU => "FLIP delta u",
            Field::FlipDeltaV => "FLIP delta v",
            Field::FlipDeltaW => "FLIP delta w",
            Field::CellType => "cell type",
            Field::ParticleCount => "particles per cell",
            Field::Divergence => "divergence (before)",
            Field::DivergenceAfter => "divergence (after)",
            Field::ADiag => "A diagonal",
            Field::APlusX => "A +x",
            Field::APlusY => "A +y",
            Field::APlusZ => "A +z",
            Field::Rhs => "b (rhs)",
            Field::Pressure => "pressure (Pa)",
            Field::Residual => "PCG r",
            Field::Preconditioned => "PCG z",
            Field::SearchDirection => "PCG d (search)",
            Field::ASearchDirection => "PCG q = A d",
            Field::MicPrecon => "MIC(0) inverse diagonal",
        }
    }

    /// Short name for the command line (`eddy view --field divergence`).
    pub fn id(self) -> &'static str {
        match self {
            Field::U => "u",
            Field::V => "v",
            Field::W => "w",
            Field::UBeforeForces => "u_p2g",
            Field::VBeforeForces => "v_p2g",
            Field::WBeforeForces => "w_p2g",
            Field::WeightU => "weight_u",
            Field::WeightV => "weight_v",
            Field::WeightW => "weight_w",
            Field::FlipDeltaU => "flip_delta_u",
            Field::FlipDeltaV => "flip_delta_v",
            Field::FlipDeltaW => "flip_delta_w",
            Field::CellType => "cell_type",
            Field::ParticleCount => "particle_count",
            Field::Divergence => "divergence",
            Field::DivergenceAfter => "divergence_after",
            Field::ADiag => "a_diag",
            Field::APlusX => "a_plus_x",
            Field::APlusY => "a_plus_y",
            Field::APlusZ => "a_plus_z",
            Field::Rhs => "rhs",
            Field::Pressure => "pressure",
            Field::Residual => "pcg_r",
            Field::Preconditioned => "pcg_z",
            Field::SearchDirection => "pcg_d",
            Field::ASearchDirection => "pcg_q",
            Field::MicPrecon => "mic_precon",
        }
    }

    pub fn location(self) -> Location {
        match self {
            Field::U | Field::UBeforeForces | Field::WeightU | Field::FlipDeltaU => {
                Location::Face(0)
            }
            Field::V | Field::VBeforeForces | Field::WeightV | Field::FlipDeltaV => {
                Location::Face(1)
            }
            Field::W | Field::WBeforeForces | Field::WeightW | Field::FlipDeltaW => {
                Location::Face(2)
            }
            _ => Location::Cell,
        }
    }

    /// Fields with a sign read best with a diverging colormap centred on 0.
    pub fn signed(self) -> bool {
        !matches!(
            self,
            Field::WeightU
                | Field::WeightV
                | Field::WeightW
                | Field::CellType
                | Field::ParticleCount
                | Field::ADiag
                | Field::MicPrecon
        )
    }
}

impl std::str::FromStr for Field {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Field::ALL
            .iter()
            .copied()
            .find(|f| f.id() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Field::ALL.iter().map(|f| f.id()).collect();
                format!("unknown field {s:?}; one of: {}", names.join(", "))
            })
    }
}

/// One field read back: values over its location's grid of dimensions `dims` (i fastest).
#[derive(Clone, Debug)]
pub struct FieldData {
    pub field: Field,
    pub dims: [u32; 3],
    pub values: Vec<f32>,
}

impl FieldData {
    pub fn get(&self, i: u32, j: u32, k: u32) -> f32 {
        self.values[(i + self.dims[0] * (j + self.dims[1] * k)) as usize]
    }
}

impl Simulation {
    /// Reads one field from the GPU.
    pub fn read_field(&self, field: Field) -> Result<FieldData, SimError> {
        let p = &self.fields.params;
        let n = p.n;
        let read_f32 = |b: &wgpu::Buffer| crate::gpu::read_buffer::<f32>(&self.ctx, b);
        let face_range = |comp: u32| {
            let off = match comp {
                0 => 0,
                1 => p.num_u,
                _ => p.num_u + p.num_v,
            } as usize;
            let len = [p.num_u, p.num_v, p.num_w][comp as usize] as usize;
            off..off + len
        };
        let (dims, values) = match field.location() {
            Location::Face(comp) => {
                let mut d = n;
                d[comp as usize] += 1;
                let r = face_range(comp);
                let values = match field {
                    Field::U | Field::V | Field::W => read_f32(&self.fields.vel)?[r].to_vec(),
                    Field::UBeforeForces | Field::VBeforeForces | Field::WBeforeForces => {
                        read_f32(&self.fields.vel_old)?[r].to_vec()
                    }
                    Field::WeightU | Field::WeightV | Field::WeightW => {
                        read_f32(&self.fields.weight)?[r].to_vec()
                    }
                    _ => {
                        let new = read_f32(&self.fields.vel)?;
                        let old = read_f32(&self.fields.vel_old)?;
                        r.map(|i| new[i] - old[i]).collect()
                    }
                };
                (d, values)
            }
            Location::Cell => {
                let u32s = |b: &wgpu::Buffer| -> Result<Vec<f32>, SimError> {
                    Ok(crate::gpu::read_buffer::<u32>(&self.ctx, b)?
                        .into_iter()
                        .map(|v| v as f32)
                        .collect())
                };
                let a_entry = |k: usize| -> Result<Vec<f32>, SimError> {
                    Ok(crate::gpu::read_buffer::<[f32; 4]>(&self.ctx, &self.pcg.a)?
                        .into_iter()
                        .map(|r| r[k])
                        .collect())
                };
                let v = &self.pcg;
                let values = match field {
                    Field::CellType => u32s(&self.fields.cell_type)?,
                    Field::ParticleCount => u32s(&self.fields.count)?,
                    Field::Divergence => read_f32(&self.fields.divergence)?,
                    Field::DivergenceAfter => read_f32(&self.fields.div_after)?,
                    Field::ADiag => a_entry(0)?,
                    Field::APlusX => a_entry(1)?,
                    Field::APlusY => a_entry(2)?,
                    Field::APlusZ => a_entry(3)?,
                    Field::Rhs => read_f32(&v.b)?,
                    Field::Pressure => {
                        // phi = p dt / rho  =>  p = phi rho / dt
                        let scale = (super::DENSITY / (p.dt.max(1e-12) as f64)) as f32;
                        read_f32(&v.p)?.into_iter().map(|x| x * scale).collect()
                    }
                    Field::Residual => read_f32(&v.r)?,
                    Field::Preconditioned => read_f32(&v.z)?,
                    Field::SearchDirection => read_f32(&v.d)?,
                    Field::ASearchDirection => read_f32(&v.q)?,
                    Field::MicPrecon => read_f32(&v.precon)?,
                    _ => unreachable!("face fields are handled above"),
                };
                (n, values)
            }
        };
        Ok(FieldData {
            field,
            dims,
            values,
        })
    }
}
