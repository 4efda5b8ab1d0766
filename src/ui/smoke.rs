//! The viewer's smoke mode: views of the slice (dye, velocity, pressure, divergence,
//! vorticity, temperature, obstacles), the mouse tools (force and dye splats, painting and
//! erasing obstacles, dragging rigid bodies) and the hover text. The images
//! themselves are built in `render::smoke`.

use crate::render::colormap::Scale;
use crate::render::slice::{Range, SliceImage};
pub use crate::sim::smoke::views::SmokeField;
use crate::sim::{
    liquid::views::MgField,
    smoke::{Emitter, SmokeSimulation, SmokeStage},
};
use glam::Vec3;

/// What the left mouse button does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Left-drag pushes the air along the drag (and drags a rigid body when the drag starts
    /// on it); right-drag adds dye.
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
            Tool::Splat => "left-drag: push the air (on a body: drag it)\nright-drag: add dye",
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

    /// The colour range the panel asks for.
    pub fn range(&self) -> Range {
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
    /// Right button: dye.
    Right {
        last: [f64; 2],
    },
    /// Left button that started on rigid body `index`: a spring pulls a dynamic body's
    /// grabbed point towards the mouse, so the body turns as well as moves; a kinematic body
    /// follows the mouse directly, its faces moving with the mouse's velocity.
    Body {
        index: usize,
    },
}

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
    // The mouse's velocity, capped as a held body's is.
    let velocity = |last: [f64; 2]| {
        let v = (glam::DVec2::from(p) - glam::DVec2::from(last)) / frame_dt;
        v.clamp_length_max(crate::ui::picking::MOUSE_SPRING.max_speed)
            .to_array()
    };
    match drag {
        Drag::None => false,
        Drag::Body { index } => {
            let Some(b) = sim.bodies.as_mut() else {
                return false;
            };
            let z = 0.5 * b.set.domain.z;
            b.set.move_grab(*index, glam::DVec3::new(p[0], p[1], z));
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
            if let Some(index) =
                crate::ui::picking::body_at(&b.set, at).filter(|&i| b.set.grabbable(i))
            {
                return Drag::Body { index };
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
        b.set.grab(
            *index,
            glam::DVec3::new(p[0], p[1], z),
            crate::ui::picking::MOUSE_SPRING,
        );
    }
}

/// Ends a drag: a grabbed body is let go; a kinematic one goes back to moving on its own,
/// with the scene's velocity and angular velocity, from where it was dropped.
pub fn end_drag(sim: &mut SmokeSimulation, drag: &mut Drag) {
    if let (Drag::Body { index }, Some(b)) = (*drag, sim.core.bodies.as_mut()) {
        b.set.release(index, &sim.core.scene);
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
    let tname = crate::render::colormap::cell_type_name(t);
    Some(format!(
        "{label} at ({}, {}): {value:.6e}\ncell is {tname}",
        c[0], c[1]
    ))
}
