//! The viewer's smoke mode: views of the slice (dye, velocity, pressure, divergence,
//! vorticity, temperature, obstacles), the mouse tools (force and dye splats, painting and
//! erasing obstacles, dragging the moving obstacle) and the tracers' fading trails.

use crate::render::colormap::{cell_type, to_rgba8, Scale};
use crate::render::slice::{Range, SliceImage, SliceSpec};
use crate::render::LineVertex;
pub use crate::sim::smoke::views::SmokeField;
use crate::sim::smoke::{Emitter, SmokeSimulation, SmokeStage, TRAIL_LEN};
use crate::sim::views::{Field, MgField};
use crate::sim::SimError;
use glam::Vec3;

/// What the left mouse button does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Left-drag pushes the air along the drag (and drags the moving obstacle when the
    /// drag starts on it); right-drag adds dye.
    Splat,
    /// Left-drag paints SOLID cells.
    Draw,
    /// Left-drag erases SOLID cells (scene solids too).
    Erase,
}

/// The smoke panel's state.
pub struct SmokePanel {
    pub field: SmokeField,
    pub tool: Tool,
    /// Splat and brush radius in cells.
    pub radius_cells: f32,
    pub color: [f32; 3],
    /// Temperature added with the dye (makes painted smoke rise).
    pub heat: f32,
    /// Multiplies the drag velocity of force splats.
    pub force: f32,
    pub trails: bool,
    /// Dye drawn with bilinear filtering; off shows one flat colour per cell.
    pub bilinear: bool,
    pub stop_after: SmokeStage,
    pub auto_range: bool,
    pub lo: f32,
    pub hi: f32,
    pub hover: Option<String>,
    pub legend: Option<(Scale, String)>,
    /// The multigrid levels that can be shown (finest first), set by the app.
    pub mg_levels: Vec<[u32; 3]>,
    /// Why the last chosen view could not be shown.
    pub note: Option<String>,
}

impl Default for SmokePanel {
    fn default() -> Self {
        Self {
            field: SmokeField::Dye,
            tool: Tool::Splat,
            radius_cells: 4.0,
            color: [1.0, 0.6, 0.25],
            heat: 0.0,
            force: 1.0,
            trails: true,
            bilinear: true,
            stop_after: SmokeStage::Tracers,
            auto_range: true,
            lo: -1.0,
            hi: 1.0,
            hover: None,
            legend: None,
            mg_levels: vec![],
            note: None,
        }
    }
}

impl SmokePanel {
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let shown = self.field;
        egui::ComboBox::from_label("view")
            .selected_text(match self.field {
                SmokeField::Mg(m) => m.describe(&self.mg_levels).into(),
                f => f.label(),
            })
            .show_ui(ui, |ui| {
                for f in SmokeField::ALL {
                    ui.selectable_value(&mut self.field, f, f.label());
                }
                for m in MgField::list(&self.mg_levels) {
                    let label = m.describe(&self.mg_levels);
                    ui.selectable_value(&mut self.field, SmokeField::Mg(m), label);
                }
            });
        if self.field != shown {
            self.note = None;
        }
        if let Some(n) = &self.note {
            ui.label(n);
        }
        if self.field != SmokeField::Dye && !self.field.is_cell_types() {
            ui.checkbox(&mut self.auto_range, "auto range");
            if !self.auto_range {
                ui.add(egui::DragValue::new(&mut self.lo).speed(0.01).prefix("lo "));
                ui.add(egui::DragValue::new(&mut self.hi).speed(0.01).prefix("hi "));
            }
        }
        if let Some((scale, label)) = &self.legend {
            super::panels::legend(ui, *scale, label);
        }
        if let Some(h) = &self.hover {
            ui.label(h);
        }
        ui.checkbox(&mut self.trails, "tracer trails");
        if self.field == SmokeField::Dye {
            ui.checkbox(&mut self.bilinear, "smooth dye (off: one colour per cell)");
        }
        ui.separator();
        ui.label("Mouse");
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.tool, Tool::Splat, "splat");
            ui.radio_value(&mut self.tool, Tool::Draw, "draw solid");
            ui.radio_value(&mut self.tool, Tool::Erase, "erase solid");
        });
        ui.label(match self.tool {
            Tool::Splat => {
                "left-drag: push the air (on the moving obstacle: drag it)\nright-drag: add dye"
            }
            Tool::Draw => "left-drag: paint obstacle cells; right-drag: add dye",
            Tool::Erase => "left-drag: erase obstacle cells; right-drag: add dye",
        });
        ui.add(egui::Slider::new(&mut self.radius_cells, 1.0..=30.0).text("radius (cells)"));
        ui.horizontal(|ui| {
            ui.color_edit_button_rgb(&mut self.color);
            ui.label("dye colour");
        });
        ui.add(egui::Slider::new(&mut self.heat, 0.0..=2.0).text("heat with dye"));
        ui.add(egui::Slider::new(&mut self.force, 0.1..=5.0).text("force"));
        ui.separator();
        egui::ComboBox::from_label("stop after")
            .selected_text(self.stop_after.name())
            .show_ui(ui, |ui| {
                for s in SmokeStage::ALL {
                    ui.selectable_value(&mut self.stop_after, s, s.name());
                }
            });
        if self.stop_after != SmokeStage::Tracers {
            ui.label("Each step is one substep that stops after this stage.");
        }
    }

    fn range(&self) -> Range {
        if self.auto_range {
            Range::Auto
        } else {
            Range::Fixed {
                lo: self.lo,
                hi: self.hi,
            }
        }
    }
}

/// Reads the slice as the panel's field and colours it. Also returns the cell types.
pub fn build_image(
    sim: &SmokeSimulation,
    panel: &SmokePanel,
) -> Result<(SliceImage, Vec<u32>), SimError> {
    let data = sim.read_view(panel.field)?;
    let [nx, ny] = data.dims;
    let h = sim.scene.h() as f32;
    let cell = [data.spacing[0] as f32 * h, data.spacing[1] as f32 * h, h];
    let types = &data.cell_type;
    let solid_rgb = |c: usize| (types[c] == crate::scene::SOLID).then(|| cell_type(types[c]));
    let values = &data.values;
    let (rgba, scale): (Vec<u8>, Scale) = match (panel.field, &data.rgb, &data.velocity) {
        (SmokeField::Dye, Some(rgb), _) => {
            let rgba = (0..values.len())
                .flat_map(|c| to_rgba8(solid_rgb(c).unwrap_or(rgb[c].map(|x| x.clamp(0.0, 1.0)))))
                .collect();
            (rgba, Scale::Sequential { lo: 0.0, hi: 1.0 })
        }
        (SmokeField::Direction, _, Some(u)) => {
            let max = values.iter().copied().fold(1e-6f32, f32::max);
            let rgba = (0..values.len())
                .flat_map(|c| {
                    to_rgba8(solid_rgb(c).unwrap_or_else(|| {
                        let hue = u[c][1].atan2(u[c][0]) / std::f32::consts::TAU + 0.5;
                        hsv(hue, 0.85, (values[c] / max).sqrt())
                    }))
                })
                .collect();
            (rgba, Scale::Sequential { lo: 0.0, hi: max })
        }
        (f, _, _) if f.is_cell_types() => (
            types.iter().flat_map(|t| to_rgba8(cell_type(*t))).collect(),
            Scale::CellTypes,
        ),
        (f, _, _) => {
            let scale = match panel.range() {
                Range::Auto => Scale::auto(values, f.signed()),
                Range::Fixed { lo, hi } if f.signed() => Scale::Diverging {
                    max: lo.abs().max(hi.abs()),
                },
                Range::Fixed { lo, hi } => Scale::Sequential { lo, hi },
            };
            let rgba = (0..values.len())
                .flat_map(|c| to_rgba8(solid_rgb(c).unwrap_or_else(|| scale.color(values[c]))))
                .collect();
            (rgba, scale)
        }
    };
    let spec = SliceSpec {
        field: Field::CellType,
        axis: 2,
        index: 0,
        range: panel.range(),
    };
    let types = data.cell_type.clone();
    let mut img = SliceImage::xy_layer(spec, nx, ny, cell, rgba, data.values, scale);
    img.bilinear = panel.bilinear && panel.field == SmokeField::Dye;
    Ok((img, types))
}

/// HSV (all in [0, 1]) to RGB.
fn hsv(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h6 = (h.rem_euclid(1.0)) * 6.0;
    let c = v * s;
    let x = c * (1.0 - ((h6 % 2.0) - 1.0).abs());
    let (r, g, b) = match h6 as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [r + m, g + m, b + m]
}

/// The tracers' trails as line segments, oldest segments darkest (they fade into the
/// background). The newest position is in the slot before `trail_slot`.
pub fn trail_lines(sim: &SmokeSimulation) -> Result<Vec<LineVertex>, SimError> {
    let count = sim.tracers.count as usize;
    if count == 0 {
        return Ok(vec![]);
    }
    let trail: Vec<[f32; 4]> = crate::gpu::read_buffer(&sim.ctx, &sim.smoke.trail)?;
    let len = TRAIL_LEN as usize;
    // Slots written so far (a fresh simulation has every slot at the seed position).
    let newest = (sim.trail_slot() as usize + len - 1) % len;
    let z = (sim.scene.h() * 0.5) as f32 + 1e-4;
    let mut out = Vec::with_capacity(count * (len - 1) * 2);
    for age in 0..len - 1 {
        let a = (newest + len - age) % len;
        let b = (newest + len - age - 1) % len;
        let fade = 1.0 - age as f32 / (len - 1) as f32;
        let color = [0.95 * fade, 0.95 * fade, 0.3 + 0.65 * fade];
        for t in 0..count {
            let (p, q) = (trail[a * count + t], trail[b * count + t]);
            out.push(LineVertex {
                pos: [p[0], p[1], z],
                color,
            });
            out.push(LineVertex {
                pos: [q[0], q[1], z],
                color,
            });
        }
    }
    Ok(out)
}

/// The point under the cursor on the smoke slice's plane (z = h/2), in metres.
pub fn plane_point(origin: Vec3, dir: Vec3, h: f64) -> Option<[f64; 2]> {
    if dir.z.abs() < 1e-9 {
        return None;
    }
    let t = (0.5 * h as f32 - origin.z) / dir.z;
    (t > 0.0).then(|| {
        let p = origin + dir * t;
        [p.x as f64, p.y as f64]
    })
}

/// The state of a mouse drag in the smoke slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drag {
    None,
    /// Left button: tool action.
    Left {
        last: [f64; 2],
    },
    /// Left button that started on the moving obstacle.
    Obstacle {
        last: [f64; 2],
    },
    /// Right button: dye.
    Right {
        last: [f64; 2],
    },
    /// Left button that started on rigid body `index`: a spring pulls the grabbed point
    /// towards the mouse, so the body turns as well as moves.
    Body {
        index: usize,
    },
}

/// Stiffness per kg of the mouse's spring on a grabbed body, 1/s^2 (a period of 0.2 s).
const GRAB_STIFFNESS: f64 = 1000.0;

/// Applies one mouse move of a drag at `p` (m) to the simulation. `frame_dt` turns the
/// drag distance into a velocity. Returns true when the state changed.
pub fn apply_drag(
    sim: &mut SmokeSimulation,
    panel: &SmokePanel,
    drag: &mut Drag,
    p: [f64; 2],
    frame_dt: f64,
) -> bool {
    let h = sim.scene.h();
    let radius = panel.radius_cells as f64 * h;
    let domain = [sim.scene.domain.0, sim.scene.domain.1];
    let inside = p[0] >= 0.0 && p[1] >= 0.0 && p[0] <= domain[0] && p[1] <= domain[1];
    let velocity = |last: [f64; 2]| {
        let v = [(p[0] - last[0]) / frame_dt, (p[1] - last[1]) / frame_dt];
        let s = (v[0] * v[0] + v[1] * v[1]).sqrt();
        let max = 20.0;
        if s > max {
            [v[0] * max / s, v[1] * max / s]
        } else {
            v
        }
    };
    match drag {
        Drag::None => false,
        Drag::Body { index } => {
            let Some(b) = sim.bodies.as_mut() else {
                return false;
            };
            let z = 0.5 * b.set.domain.z;
            if let Some(g) = b.set.bodies.get_mut(*index).and_then(|b| b.grab.as_mut()) {
                g.target = glam::DVec3::new(p[0], p[1], z);
            }
            true
        }
        Drag::Obstacle { last } => {
            let v = velocity(*last);
            *last = p;
            if let Some(o) = sim.obstacle.as_mut() {
                o.held = true;
                o.velocity = v;
                o.set_centre(p, domain);
            }
            true
        }
        Drag::Left { last } => {
            let v = velocity(*last);
            *last = p;
            if !inside {
                return false;
            }
            match panel.tool {
                Tool::Splat => {
                    let f = panel.force as f64;
                    sim.add_splat(Emitter::splat(
                        [p[0] as f32, p[1] as f32],
                        radius as f32,
                        [0.0; 3],
                        [(v[0] * f) as f32, (v[1] * f) as f32],
                    ));
                    true
                }
                Tool::Draw | Tool::Erase => {
                    sim.paint_solid(p, radius, panel.tool == Tool::Draw) > 0
                }
            }
        }
        Drag::Right { last } => {
            *last = p;
            if !inside {
                return false;
            }
            let mut e = Emitter::splat(
                [p[0] as f32, p[1] as f32],
                radius as f32,
                panel.color,
                [0.0; 2],
            );
            // Per move, a fraction of the colour: a slow drag lays down dense dye.
            for k in 0..3 {
                e.dye[k] *= 0.25;
            }
            e.dye[3] = 0.25 * panel.heat;
            sim.add_splat(e);
            true
        }
    }
}

/// Starts a drag with the left (or right) button at `p`.
pub fn start_drag(sim: &SmokeSimulation, panel: &SmokePanel, left: bool, p: [f64; 2]) -> Drag {
    if !left {
        return Drag::Right { last: p };
    }
    if panel.tool == Tool::Splat {
        if let Some(b) = &sim.bodies {
            let z = 0.5 * b.set.domain.z;
            let at = glam::DVec3::new(p[0], p[1], z);
            if let Some(index) = b.set.body_at(at) {
                return Drag::Body { index };
            }
        }
        if let Some(o) = &sim.obstacle {
            let c = o.centre();
            let half = o.half();
            if (p[0] - c[0]).abs() <= half[0] && (p[1] - c[1]).abs() <= half[1] {
                return Drag::Obstacle { last: p };
            }
        }
    }
    Drag::Left { last: p }
}

/// Grabs the body a drag started on, at the point under the mouse (call after
/// [`start_drag`]).
pub fn grab_body(sim: &mut SmokeSimulation, drag: &Drag, p: [f64; 2]) {
    if let (Drag::Body { index }, Some(b)) = (drag, sim.bodies.as_mut()) {
        let z = 0.5 * b.set.domain.z;
        if let Some(body) = b.set.bodies.get_mut(*index) {
            let at = glam::DVec3::new(p[0], p[1], z);
            body.grab = Some(grab_at(body, at));
        }
    }
}

/// A spring from the body point under `at` to `at`.
fn grab_at(body: &crate::sim::bodies::RigidBody, at: glam::DVec3) -> crate::sim::bodies::Grab {
    crate::sim::bodies::Grab {
        local: body.orientation.inverse() * (at - body.position),
        target: at,
        stiffness: GRAB_STIFFNESS,
    }
}

/// Ends a drag: a dragged obstacle goes back to moving on its own, with the scene's
/// velocity; a grabbed body is let go.
pub fn end_drag(sim: &mut SmokeSimulation, drag: &mut Drag) {
    if let (Drag::Body { index }, Some(b)) = (*drag, sim.bodies.as_mut()) {
        if let Some(body) = b.set.bodies.get_mut(index) {
            body.grab = None;
        }
    }
    if let Drag::Obstacle { .. } = drag {
        let scene_velocity = sim
            .scene
            .smoke
            .obstacle
            .as_ref()
            .map(|s| s.velocity())
            .unwrap_or([0.0; 3]);
        if let Some(o) = sim.obstacle.as_mut() {
            o.held = false;
            o.velocity = [scene_velocity[0], scene_velocity[1]];
        }
    }
    *drag = Drag::None;
}

/// Text about the cell under the cursor.
pub fn hover_text(
    img: &SliceImage,
    types: &[u32],
    origin: Vec3,
    dir: Vec3,
    label: &str,
) -> Option<String> {
    let (c, value) = img.pick(origin, dir)?;
    let t = types
        .get((c[0] + img.width * c[1]) as usize)
        .copied()
        .unwrap_or(0);
    let tname = ["AIR", "FLUID", "SOLID"]
        .get(t as usize)
        .copied()
        .unwrap_or("?");
    Some(format!(
        "{label} at ({}, {}): {value:.6e}\ncell is {tname}",
        c[0], c[1]
    ))
}
