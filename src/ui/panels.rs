//! The viewer's egui panels, one struct per panel. Panels edit their own state and report
//! what the user asked for as [`Action`]s; the app applies them.

use crate::render::slice::Range;
use crate::render::{ParticleColor, ParticleStyle, SliceOcclusion};
use crate::scene::{
    AdvectionScheme, PreconditionerKind, Scene, SceneKind, SmokeSettings, TransferKind,
};
use crate::sim::{
    liquid::views::{Field, MgField},
    Stage,
};
use std::path::PathBuf;

/// Requests from the panels to the app.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Step,
    Reset,
    FrameDomain,
    Screenshot,
    LoadScene(PathBuf),
    ApplyParameters,
    /// Save the simulation's state to the state file (F5), or load it back (F9).
    SaveState,
    LoadState,
}

/// Play, step, "stop after stage", reset, scene picker.
pub struct ControlsPanel {
    pub playing: bool,
    /// Stages run per step; less than Advect stops inside the step to inspect fields.
    pub stop_after: Stage,
    pub scenes: Vec<PathBuf>,
    pub current: PathBuf,
    pub error: Option<String>,
    pub actions: Vec<Action>,
    /// Smoke scenes pick their stop-after stage in the smoke panel.
    pub smoke: bool,
    /// Where "Save state" writes and "Load state" reads (the checkpoint format of
    /// `eddy run --checkpoint-every`, so a run's checkpoint loads too).
    pub state_path: String,
    /// What the last save or load did.
    pub state_message: Option<String>,
    /// Most redraws a second while the simulation runs (0: as fast as it steps). Paused or
    /// idle, the viewer redraws only when something changed.
    pub max_fps: u32,
}

impl ControlsPanel {
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("eddy");
        if let Some(e) = &self.error {
            ui.colored_label(
                egui::Color32::from_rgb(255, 120, 100),
                format!("Scene error:\n{e}"),
            );
            ui.label("Still showing the last good scene.");
            ui.separator();
        }
        ui.horizontal(|ui| {
            let label = if self.playing { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                self.playing = !self.playing;
            }
            if ui.button("Step").on_hover_text("N").clicked() {
                self.playing = false;
                self.actions.push(Action::Step);
            }
            if ui.button("Reset").on_hover_text("R").clicked() {
                self.actions.push(Action::Reset);
            }
        });
        ui.horizontal(|ui| {
            ui.add(egui::DragValue::new(&mut self.max_fps).range(0..=240))
                .on_hover_text(
                    "Most redraws a second while the simulation runs (0: no cap). Paused, the \
                     viewer redraws only on input or a change.",
                );
            ui.label("max fps");
        });
        if !self.smoke {
            egui::ComboBox::from_label("stop after")
                .selected_text(self.stop_after.name())
                .show_ui(ui, |ui| {
                    for s in Stage::ALL {
                        ui.selectable_value(&mut self.stop_after, s, s.name());
                    }
                });
        }
        if self.stop_after != Stage::Advect && !self.smoke {
            ui.label("Each step stops after this stage so its fields can be inspected.");
        }
        ui.horizontal(|ui| {
            if ui.button("Frame domain").on_hover_text("F").clicked() {
                self.actions.push(Action::FrameDomain);
            }
            if ui.button("Screenshot").on_hover_text("P").clicked() {
                self.actions.push(Action::Screenshot);
            }
        });
        ui.horizontal(|ui| {
            if ui
                .button("Save state")
                .on_hover_text("F5: the whole simulation, to the file below")
                .clicked()
            {
                self.actions.push(Action::SaveState);
            }
            if ui
                .button("Load state")
                .on_hover_text("F9: back to the saved moment (its scene too)")
                .clicked()
            {
                self.actions.push(Action::LoadState);
            }
        });
        ui.add(egui::TextEdit::singleline(&mut self.state_path).hint_text("state file"));
        if let Some(m) = &self.state_message {
            ui.label(m);
        }
        let name = |p: &PathBuf| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            )
        };
        egui::ComboBox::from_label("scene")
            .selected_text(name(&self.current))
            .show_ui(ui, |ui| {
                for p in self.scenes.clone() {
                    if ui.selectable_label(p == self.current, name(&p)).clicked() {
                        self.actions.push(Action::LoadScene(p));
                    }
                }
            });
    }
}

/// The scene's parameters: live ones apply at once, the rest on reset.
pub struct ParametersPanel {
    pub edit: Scene,
    pub message: Option<String>,
    pub actions: Vec<Action>,
}

impl ParametersPanel {
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let s = &mut self.edit;
        let smoke = s.kind == SceneKind::Smoke;
        let mut changed = false;
        if smoke {
            changed |= smoke_settings(ui, &mut s.smoke);
        } else {
            egui::ComboBox::from_label("transfer")
                .selected_text(s.transfer.name())
                .show_ui(ui, |ui| {
                    for k in TransferKind::ALL {
                        changed |= ui.selectable_value(&mut s.transfer, k, k.name()).changed();
                    }
                });
            // APIC replaces the PIC/FLIP blend; the ratio stays for a switch back.
            ui.add_enabled_ui(s.transfer == TransferKind::Flip, |ui| {
                changed |= ui
                    .add(egui::Slider::new(&mut s.pic_ratio, 0.0..=1.0).text("PIC ratio"))
                    .changed();
            });
        }
        changed |= ui
            .add(
                egui::Slider::new(&mut s.viscosity, 0.0..=1.0)
                    .logarithmic(true)
                    .text("viscosity (m²/s)"),
            )
            .on_hover_text("kinematic viscosity, solved implicitly each substep; 0 is inviscid")
            .changed();
        changed |= ui
            .add(egui::Slider::new(&mut s.cfl, 0.1..=5.0).text("CFL"))
            .changed();
        changed |= ui
            .add(egui::Slider::new(&mut s.gravity.1, -30.0..=30.0).text("gravity y (m/s²)"))
            .changed();
        egui::ComboBox::from_label("preconditioner")
            .selected_text(s.pressure.preconditioner.name())
            .show_ui(ui, |ui| {
                for k in PreconditionerKind::ALL {
                    changed |= ui
                        .selectable_value(&mut s.pressure.preconditioner, k, k.name())
                        .changed();
                }
            });
        let mut log_tol = s.pressure.tolerance.log10();
        if ui
            .add(egui::Slider::new(&mut log_tol, -8.0..=-1.0).text("log10 tolerance"))
            .changed()
        {
            s.pressure.tolerance = 10f64.powf(log_tol);
            changed = true;
        }
        changed |= ui
            .add(egui::Slider::new(&mut s.pressure.max_iterations, 1..=5000).text("max iterations"))
            .changed();
        changed |= ui
            .checkbox(&mut s.pressure.warm_start, "warm start")
            .changed();
        changed |= ui
            .checkbox(&mut s.pressure.pipelined, "queue solves ahead")
            .on_hover_text(
                "the host does not read an mg solve before its projection: it queues the last \
                 count plus the margin; a solve that runs out stops and is counted unconverged \
                 (other preconditioners' solves are read back as they run)",
            )
            .changed();
        if s.pressure.pipelined {
            changed |= ui
                .add(egui::Slider::new(&mut s.pressure.margin, 0..=8).text("margin (iterations)"))
                .changed();
        }
        if !smoke {
            changed |= ui
                .add(
                    egui::Slider::new(&mut s.extrapolation_layers, 1..=16)
                        .text("extrapolation layers"),
                )
                .changed();
            changed |= ui
                .checkbox(&mut s.volume_correction, "volume correction")
                .on_hover_text("move particles out of over-dense cells each substep")
                .changed();
            let most = 0.5 * (s.particles_per_cell as f64).cbrt();
            changed |= ui
                .add(
                    egui::Slider::new(&mut s.particle_spacing, 0.0..=most).text("particle spacing"),
                )
                .on_hover_text(
                    "minimum distance between particles, as a fraction of the rest spacing; \
                     closer ones push apart (0: off)",
                )
                .changed();
        }
        if changed {
            self.actions.push(Action::ApplyParameters);
        }
        ui.separator();
        ui.label("Applied by reset:");
        let mut n = s.resolution.0;
        if ui
            .add(
                egui::Slider::new(&mut n, 4..=if smoke { 2048 } else { 256 }).text("cells along x"),
            )
            .changed()
        {
            let scaled = s.with_resolution(n.max(2));
            s.resolution = scaled.resolution;
            s.domain = scaled.domain;
        }
        if ui.button("Reset with these settings").clicked() {
            self.actions.push(Action::Reset);
        }
        if let Some(m) = &self.message {
            ui.label(m);
        }
    }
}

/// What is drawn: the field slice, its colour range, arrows, and the particles.
pub struct ViewPanel {
    pub field: Option<Field>,
    /// The multigrid levels that can be shown (finest first), set by the app.
    pub mg_levels: Vec<[u32; 3]>,
    /// Why the last chosen field could not be shown.
    pub note: Option<String>,
    pub axis: usize,
    pub index: u32,
    pub max_index: [u32; 3],
    pub auto_range: bool,
    pub lo: f32,
    pub hi: f32,
    pub arrows: bool,
    /// Flat layout: the slice as a 2D image filling the view.
    pub flat: bool,
    pub particles: ParticleStyle,
    pub auto_particle_range: bool,
    /// Text about the hovered cell, set by the app.
    pub hover: Option<String>,
    /// Legend: colour range and whether it is diverging.
    pub legend: Option<(crate::render::colormap::Scale, String)>,
}

impl ViewPanel {
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

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let shown = self.field;
        egui::ComboBox::from_label("field")
            .selected_text(match self.field {
                Some(Field::Mg(m)) => m.describe(&self.mg_levels).into(),
                f => f.map_or("none".into(), |f| f.label()),
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut self.field, None, "none");
                for f in Field::ALL {
                    ui.selectable_value(&mut self.field, Some(f), f.label());
                }
                for m in MgField::list(&self.mg_levels) {
                    let label = m.describe(&self.mg_levels);
                    ui.selectable_value(&mut self.field, Some(Field::Mg(m)), label);
                }
            });
        if self.field != shown {
            self.note = None;
        }
        if let Some(n) = &self.note {
            ui.label(n);
        }
        if self.field.is_some() {
            ui.horizontal(|ui| {
                for (a, n) in ["x", "y", "z"].iter().enumerate() {
                    ui.radio_value(&mut self.axis, a, *n);
                }
            });
            let max = self.max_index[self.axis];
            self.index = self.index.min(max);
            ui.add(egui::Slider::new(&mut self.index, 0..=max).text("slice"));
            ui.checkbox(&mut self.auto_range, "auto range");
            if !self.auto_range {
                ui.add(egui::DragValue::new(&mut self.lo).speed(0.01).prefix("lo "));
                ui.add(egui::DragValue::new(&mut self.hi).speed(0.01).prefix("hi "));
            }
            ui.checkbox(&mut self.arrows, "velocity arrows");
            ui.checkbox(&mut self.flat, "flat layout (2D slice)")
                .on_hover_text("Look straight at the slice: wheel zooms, drag pans; grid lines show when zoomed in");
            ui.horizontal(|ui| {
                ui.label("liquid in front");
                for (o, n) in [
                    (SliceOcclusion::Show, "show"),
                    (SliceOcclusion::Fade, "fade"),
                    (SliceOcclusion::Hide, "hide"),
                ] {
                    ui.radio_value(&mut self.particles.occlusion, o, n);
                }
            });
            if let Some((scale, label)) = &self.legend {
                legend(ui, *scale, label);
            }
            if let Some(h) = &self.hover {
                ui.label(h);
            }
        }
        ui.separator();
        ui.checkbox(&mut self.particles.visible, "liquid");
        super::liquid::liquid_ui(ui, &mut self.particles);
        ui.add(
            egui::Slider::new(&mut self.particles.radius, 0.001..=0.05)
                .logarithmic(true)
                .text("radius (m)"),
        );
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.particles.color, ParticleColor::Speed, "speed");
            ui.radio_value(
                &mut self.particles.color,
                ParticleColor::FlipDelta,
                "FLIP delta",
            );
        });
        ui.checkbox(&mut self.auto_particle_range, "auto colour range");
        if !self.auto_particle_range {
            ui.add(
                egui::DragValue::new(&mut self.particles.hi)
                    .speed(0.01)
                    .prefix("max m/s "),
            );
        }
        legend(
            ui,
            crate::render::colormap::Scale::Sequential {
                lo: self.particles.lo,
                hi: self.particles.hi,
            },
            if self.particles.color == ParticleColor::Speed {
                "particle speed (m/s)"
            } else {
                "FLIP |Δv| (m/s)"
            },
        );
    }
}

/// A colour bar with its end values.
pub fn legend(ui: &mut egui::Ui, scale: crate::render::colormap::Scale, label: &str) {
    use crate::render::colormap::Scale;
    let (lo, hi) = match scale {
        Scale::Sequential { lo, hi } => (lo, hi),
        Scale::Diverging { max } => (-max, max),
        Scale::CellTypes => {
            use crate::render::colormap::{cell_type, cell_type_name, to_rgba8};
            for t in [crate::scene::AIR, crate::scene::FLUID, crate::scene::SOLID] {
                let c = to_rgba8(cell_type(t));
                let n = cell_type_name(t);
                ui.colored_label(egui::Color32::from_rgb(c[0], c[1], c[2]), format!("■ {n}"));
            }
            return;
        }
    };
    ui.label(label);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(200.0, 14.0), egui::Sense::hover());
    let n = 32;
    for i in 0..n {
        let t = i as f32 / (n - 1) as f32;
        let c = crate::render::colormap::to_rgba8(scale.color(lo + (hi - lo) * t));
        let x0 = rect.left() + rect.width() * i as f32 / n as f32;
        let x1 = rect.left() + rect.width() * (i + 1) as f32 / n as f32;
        ui.painter().rect_filled(
            egui::Rect::from_min_max(
                egui::pos2(x0, rect.top()),
                egui::pos2(x1 + 0.5, rect.bottom()),
            ),
            0.0,
            egui::Color32::from_rgb(c[0], c[1], c[2]),
        );
    }
    ui.horizontal(|ui| {
        ui.label(format!("{lo:.3e}"));
        ui.add_space(80.0);
        ui.label(format!("{hi:.3e}"));
    });
}

/// Redraw time, simulated frames per second, GPU time per stage, particles, and the last
/// solve's residual history.
#[derive(Default)]
pub struct StatsPanel {
    /// Wall time of the last redraw (window frame), which may or may not have simulated.
    pub frame_ms: f64,
    /// CFL substeps behind `stage_ms`: the last simulated frame's, or 1 after a single
    /// substep ("stop after").
    pub substeps: u32,
    /// Simulated frames per wall-clock second, smoothed.
    pub sim_fps: f64,
    /// When the last frame was simulated (for `sim_fps`).
    pub last_sim_frame: Option<std::time::Instant>,
    pub sim_time: f64,
    pub particles: u32,
    pub fluid_cells: u32,
    pub stage_ms: Vec<(String, f64)>,
    pub timestamps: bool,
    pub iterations: u32,
    pub residual: f64,
    /// The last solve's true residual max|b - A p| / max|b| (None before one ran).
    pub true_residual: Option<f64>,
    pub history: Vec<f32>,
    pub adapter: String,
    /// Smoke: the particles are tracers and every non-SOLID cell is fluid.
    pub smoke: bool,
    /// What the last simulated frame (or substep) asked of the GPU, over its `substeps`.
    pub traffic: crate::gpu::Traffic,
}

impl StatsPanel {
    /// Called when a frame (or a single substep) of `substeps` has been simulated.
    pub fn frame_simulated(&mut self, substeps: u32, now: std::time::Instant) {
        self.substeps = substeps;
        if let Some(last) = self.last_sim_frame {
            let fps = 1.0 / (now - last).as_secs_f64().max(1e-6);
            // A few frames of smoothing: readable, and still follows a change of scene.
            self.sim_fps = if self.sim_fps > 0.0 {
                0.7 * self.sim_fps + 0.3 * fps
            } else {
                fps
            };
        }
        self.last_sim_frame = Some(now);
    }

    /// The timing lines: what each number measures is in its label (a redraw need not
    /// simulate, and a simulated frame runs several substeps).
    pub fn timing_labels(&self) -> [String; 2] {
        let substeps = match self.substeps {
            1 => "1 substep".to_string(),
            n => format!("{n} substeps"),
        };
        [
            format!(
                "redraw {:.1} ms, simulated {:.2} frames/s, t = {:.3} s",
                self.frame_ms, self.sim_fps, self.sim_time
            ),
            format!("GPU per simulated frame ({substeps}):"),
        ]
    }

    /// The host's traffic per substep of the last simulated frame: what bounds a small
    /// grid's substep rate on a GPU (each read is a round trip the GPU idles through).
    pub fn traffic_label(&self) -> String {
        let n = self.substeps.max(1) as f64;
        let t = &self.traffic;
        format!(
            "per substep: {:.1} host reads ({:.1} idling the GPU, {:.1} kB), {:.1} submits, \
             {:.0} dispatches",
            t.reads as f64 / n,
            t.drains as f64 / n,
            t.bytes_read as f64 / n / 1000.0,
            t.submits as f64 / n,
            t.dispatches as f64 / n
        )
    }

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.label(&self.adapter);
        let [redraw, gpu] = self.timing_labels();
        ui.label(redraw);
        ui.label(self.traffic_label()).on_hover_text(
            "counted by the host: blocking reads of GPU buffers (those idling the GPU waited \
             for everything submitted), command buffers submitted, compute dispatches recorded",
        );
        ui.label(format!(
            "{} {}, {} fluid cells",
            self.particles,
            if self.smoke { "tracers" } else { "particles" },
            self.fluid_cells
        ));
        if self.timestamps {
            ui.label(gpu);
            egui::Grid::new("stage_ms").show(ui, |ui| {
                for (n, ms) in &self.stage_ms {
                    ui.label(n);
                    ui.label(format!("{ms:.3} ms"));
                    ui.end_row();
                }
                ui.label("total");
                ui.label(format!(
                    "{:.3} ms",
                    self.stage_ms.iter().map(|(_, ms)| ms).sum::<f64>()
                ));
                ui.end_row();
            });
        } else {
            ui.label("No GPU timestamps on this adapter.");
        }
        ui.label(format!(
            "PCG: {} iterations, residual {:.2e}",
            self.iterations, self.residual
        ))
        .on_hover_text("max|r| / max|b| of the recursive residual the convergence test reads");
        if let Some(t) = self.true_residual {
            ui.label(format!("true residual {t:.2e}"))
                .on_hover_text("max|b - A p| / max|b| of the solution as stored (f32)");
        }
        let points: Vec<[f64; 2]> = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, r)| **r > 0.0)
            .map(|(i, r)| [i as f64, (*r as f64).log10()])
            .collect();
        egui_plot::Plot::new("residual")
            .height(140.0)
            .x_axis_label("iteration")
            .y_axis_label("log10 residual")
            .show(ui, |p| p.line(egui_plot::Line::new("residual", points)));
    }
}

/// The smoke settings that apply live. Returns whether any changed.
fn smoke_settings(ui: &mut egui::Ui, s: &mut SmokeSettings) -> bool {
    let mut changed = false;
    egui::ComboBox::from_label("advection")
        .selected_text(s.advection.name())
        .show_ui(ui, |ui| {
            for a in AdvectionScheme::ALL {
                changed |= ui.selectable_value(&mut s.advection, a, a.name()).changed();
            }
        });
    let mut slider =
        |ui: &mut egui::Ui, v: &mut f64, range: std::ops::RangeInclusive<f64>, text: &str| {
            changed |= ui.add(egui::Slider::new(v, range).text(text)).changed();
        };
    slider(ui, &mut s.vorticity, 0.0..=2.0, "vorticity confinement");
    slider(
        ui,
        &mut s.buoyancy,
        -10.0..=20.0,
        "buoyancy (m/s² per unit T)",
    );
    slider(
        ui,
        &mut s.dye_weight,
        -5.0..=5.0,
        "dye weight (m/s² per unit dye)",
    );
    slider(
        ui,
        &mut s.ambient_temperature,
        -2.0..=2.0,
        "ambient temperature",
    );
    slider(
        ui,
        &mut s.velocity_dissipation,
        0.0..=5.0,
        "velocity dissipation (1/s)",
    );
    slider(
        ui,
        &mut s.dye_dissipation,
        0.0..=5.0,
        "dye dissipation (1/s)",
    );
    slider(
        ui,
        &mut s.temperature_dissipation,
        0.0..=5.0,
        "temperature dissipation (1/s)",
    );
    for (v, text) in [
        (&mut s.temperature_diffusion, "heat diffusion (m²/s)"),
        (&mut s.dye_diffusion, "dye diffusion (m²/s)"),
    ] {
        changed |= ui
            .add(egui::Slider::new(v, 0.0..=1.0).logarithmic(true).text(text))
            .on_hover_text(
                "implicit diffusion; walls with a fixed value (scene file) are held at it",
            )
            .changed();
    }
    changed
}

/// One rigid body as the bodies panel shows it.
#[derive(Clone, Debug, Default)]
pub struct BodyRow {
    pub shape: String,
    pub mass: f64,
    /// Cells across the body's thinnest side (a dynamic body in the liquid; None otherwise)
    /// and whether that is under [`crate::sim::bodies::THIN_BODY_CELLS`].
    pub cells_across: Option<(f64, bool)>,
    pub velocity: [f64; 3],
    pub omega: [f64; 3],
    /// The fluid's force and torque in the last substep: from the pressure the solve found
    /// (at the FLUID cells' centres), and the hydrostatic correction (the liquid: the half
    /// cell from those centres to the body's faces; the smoke, whose pressure leaves out
    /// the hydrostatic part: the air's buoyancy -rho_air V g), and their sum.
    pub pressure_force: [f64; 3],
    pub correction_force: [f64; 3],
    /// The viscous stress's force and torque (the viscosity step's change of momentum).
    pub viscous_force: [f64; 3],
    pub viscous_torque: [f64; 3],
    pub force: [f64; 3],
    pub torque: [f64; 3],
}

/// The scene's rigid bodies: mass, velocity and angular velocity, and the force and
/// torque the fluid put on each in the last substep, and the coupling scheme.
#[derive(Default)]
pub struct BodiesPanel {
    pub rows: Vec<BodyRow>,
    pub scheme: crate::scene::CouplingScheme,
}

impl BodiesPanel {
    /// Reads the bodies' current state (`h`: the grid's cell size, m).
    pub fn update(&mut self, set: &crate::sim::bodies::BodySet, h: f64) {
        use crate::sim::bodies::{Solid, THIN_BODY_CELLS};
        let v3 = |v: glam::DVec3| [v.x, v.y, v.z];
        self.scheme = set.scheme;
        self.rows = set
            .bodies
            .iter()
            .map(|b| {
                let correction = if set.hydrostatic_buoyancy {
                    -set.fluid_density * b.volume() * set.gravity
                } else {
                    b.surface_force
                };
                (b, correction)
            })
            .map(|(b, correction)| BodyRow {
                cells_across: set
                    .cells_across(b, h)
                    .map(|cells| (cells, cells < THIN_BODY_CELLS)),
                shape: match b.solid {
                    Solid::Box { .. } => format!("box, {:?}", b.motion).to_lowercase(),
                    Solid::Sphere { .. } if set.slice => {
                        format!("disc, {:?}", b.motion).to_lowercase()
                    }
                    Solid::Sphere { .. } => format!("sphere, {:?}", b.motion).to_lowercase(),
                },
                mass: b.mass,
                velocity: v3(b.velocity()),
                omega: v3(b.omega()),
                pressure_force: v3(b.fluid_force - b.surface_force),
                correction_force: v3(correction),
                viscous_force: v3(b.viscous_force),
                viscous_torque: v3(b.viscous_torque),
                force: v3(b.fluid_force - b.surface_force + correction + b.viscous_force),
                torque: v3(b.fluid_torque + b.viscous_torque),
            })
            .collect();
    }

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let v = |a: [f64; 3]| format!("({:+.3}, {:+.3}, {:+.3})", a[0], a[1], a[2]);
        // Forces on light smoke bodies are micronewtons: keep their digits.
        let e = |a: [f64; 3]| format!("({:+.2e}, {:+.2e}, {:+.2e})", a[0], a[1], a[2]);
        ui.label(match self.scheme {
            crate::scene::CouplingScheme::Strong => {
                "coupling: strong (the bodies are in the pressure solve; its iterations are \
                 the coupled solve's)"
            }
            crate::scene::CouplingScheme::Weak => {
                "coupling: weak (the pressure moves the bodies after the solve)"
            }
        });
        for (i, r) in self.rows.iter().enumerate() {
            ui.label(egui::RichText::new(format!("body {i}: {}", r.shape)).strong());
            egui::Grid::new(("body", i)).num_columns(2).show(ui, |ui| {
                ui.label("mass");
                ui.label(format!("{:.4} kg", r.mass));
                ui.end_row();
                if let Some((cells, thin)) = r.cells_across {
                    ui.label("resolution").on_hover_text(format!(
                        "cells across the body's thinnest side; under {} a floating body is \
                         under-resolved and its rocking can grow instead of dying out",
                        crate::sim::bodies::THIN_BODY_CELLS
                    ));
                    let text = format!("{cells:.1} cells across");
                    if thin {
                        ui.colored_label(
                            ui.visuals().warn_fg_color,
                            format!("{text}: too thin for the grid"),
                        );
                    } else {
                        ui.label(text);
                    }
                    ui.end_row();
                }
                ui.label("velocity");
                ui.label(format!("{} m/s", v(r.velocity)));
                ui.end_row();
                ui.label("angular velocity");
                ui.label(format!("{} rad/s", v(r.omega)));
                ui.end_row();
                ui.label("pressure force")
                    .on_hover_text("from the pressure the solve found at the FLUID cells' centres");
                ui.label(format!("{} N", e(r.pressure_force)));
                ui.end_row();
                ui.label("hydrostatic correction").on_hover_text(
                    "the liquid: the hydrostatic half cell from the cells' centres to the \
                     body's faces; the smoke: the air's buoyancy -rho_air V g",
                );
                ui.label(format!("{} N", e(r.correction_force)));
                ui.end_row();
                ui.label("viscous force").on_hover_text(
                    "the liquid's viscous stress on the body, solved with it in the viscosity \
                     step (zero without viscosity)",
                );
                ui.label(format!("{} N", e(r.viscous_force)));
                ui.end_row();
                ui.label("viscous torque");
                ui.label(format!("{} N m", e(r.viscous_torque)));
                ui.end_row();
                ui.label("fluid force");
                ui.label(format!("{} N", e(r.force)));
                ui.end_row();
                ui.label("fluid torque");
                ui.label(format!("{} N m", e(r.torque)));
                ui.end_row();
            });
        }
    }
}
