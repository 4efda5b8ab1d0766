//! The viewer's solver lab: freeze the pressure system of the moment, step its PCG solve
//! iteration by iteration (the PCG views then show the lab's vectors), go back, restart
//! with another preconditioner or tolerance, race every preconditioner on it, and see
//! where the residual is. The lab itself is `sim::lab`.

use super::{Sim, Viewer, ViewerError};
use crate::scene::PreconditionerKind;
use crate::sim::lab::{self, FrozenSystem, RaceRow, SolverLab, WorstCell};
use crate::sim::liquid::views::{Field, FieldData, MgField, MgVector};
use crate::sim::SimError;
use std::path::PathBuf;

/// What the panel asks the viewer to do.
#[derive(Clone, Debug, PartialEq)]
pub enum LabAction {
    Freeze,
    Step,
    Back,
    JumpTo(u32),
    Converge,
    Restart,
    Race,
    ExportRace,
    Close,
}

/// How the viewer starts the lab by itself (`eddy view --lab ...`, for scripts and tests):
/// after `--frames`, freeze, step `step` iterations, race when asked.
#[derive(Clone, Debug, Default)]
pub struct LabStart {
    pub preconditioner: Option<PreconditionerKind>,
    pub step: u32,
    pub race: bool,
    /// A system exported by `eddy run --export-system` to open instead of freezing.
    pub system: Option<PathBuf>,
}

/// Most worst cells listed.
const WORST: usize = 8;

/// The panel: its settings and the lab, when one is open.
pub struct LabPanel {
    pub kind: PreconditionerKind,
    pub tolerance: f64,
    pub jump: u32,
    /// The Residual view shows |b - A x| per cell (the true residual) instead of PCG's r.
    pub true_residual_view: bool,
    pub lab: Option<SolverLab>,
    pub race: Option<Vec<RaceRow>>,
    pub worst: Vec<WorstCell>,
    pub message: Option<String>,
    pub actions: Vec<LabAction>,
    /// Frames to draw before a scripted screenshot (the lab's window appears a frame late).
    pub settle: u32,
}

impl Default for LabPanel {
    fn default() -> Self {
        Self {
            kind: PreconditionerKind::Mg,
            tolerance: 1e-6,
            jump: 10,
            true_residual_view: false,
            lab: None,
            race: None,
            worst: Vec::new(),
            message: None,
            actions: Vec::new(),
            settle: 0,
        }
    }
}

fn kind_combo(ui: &mut egui::Ui, id: &str, kind: &mut PreconditionerKind) {
    egui::ComboBox::from_id_salt(id)
        .selected_text(kind.name())
        .show_ui(ui, |ui| {
            for k in PreconditionerKind::ALL {
                ui.selectable_value(kind, k, k.name());
            }
        });
}

/// log10 of a residual for the plots (floored so a zero shows at the bottom).
fn log10(r: f64) -> f64 {
    r.max(1e-30).log10()
}

impl LabPanel {
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if let Some(m) = &self.message {
            ui.label(m);
        }
        let Some(lab) = &self.lab else {
            ui.label(
                "Freeze the pressure system of this substep and step its solve iteration by \
                 iteration (the simulation stays paused).",
            );
            ui.horizontal(|ui| {
                kind_combo(ui, "lab_kind", &mut self.kind);
                if ui.button("Freeze this solve").clicked() {
                    self.actions.push(LabAction::Freeze);
                }
            });
            return;
        };
        let sys = lab.system();
        ui.label(format!(
            "{}: {} x {} x {}, {} FLUID cells",
            crate::files::printable(&sys.origin, 200),
            sys.dims[0],
            sys.dims[1],
            sys.dims[2],
            sys.fluid_cells()
        ));
        ui.horizontal(|ui| {
            kind_combo(ui, "lab_kind", &mut self.kind);
            ui.add(
                egui::DragValue::new(&mut self.tolerance)
                    .range(1e-10..=1e-1)
                    .speed(0.0)
                    .custom_formatter(|v, _| format!("{v:.0e}"))
                    .custom_parser(|s| s.parse().ok()),
            )
            .on_hover_text("tolerance, max|r| / max|b|");
            if ui.button("Restart").clicked() {
                self.actions.push(LabAction::Restart);
            }
        });
        ui.horizontal(|ui| {
            if ui.button("< Back").clicked() {
                self.actions.push(LabAction::Back);
            }
            if ui.button("Step >").clicked() {
                self.actions.push(LabAction::Step);
            }
            ui.add(egui::DragValue::new(&mut self.jump).range(0..=lab::LAB_MAX_ITERATIONS));
            if ui.button("Go to").clicked() {
                self.actions.push(LabAction::JumpTo(self.jump));
            }
            if ui.button("Converge").clicked() {
                self.actions.push(LabAction::Converge);
            }
        });
        ui.label(format!(
            "{}: iteration {}, {:?}, {} dispatches per iteration",
            lab.preconditioner().name(),
            lab.iteration(),
            lab.status(),
            lab.dispatches_per_iteration()
        ));
        egui::ScrollArea::vertical()
            .id_salt("lab_rows")
            .max_height(150.0)
            .stick_to_bottom(true)
            .show(ui, |ui| {
                egui::Grid::new("lab_table").striped(true).show(ui, |ui| {
                    for h in ["k", "alpha", "beta", "r.z", "|r|/|b|", "true"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for r in lab.rows() {
                        ui.label(r.iteration.to_string());
                        ui.label(format!("{:.3e}", r.alpha));
                        ui.label(format!("{:.3e}", r.beta));
                        ui.label(format!("{:.3e}", r.rz));
                        ui.label(format!("{:.2e}", r.residual));
                        ui.label(r.true_residual.map_or("-".into(), |t| format!("{t:.2e}")));
                        ui.end_row();
                    }
                });
            });
        if let Some(s) = lab.spectrum() {
            ui.label(format!(
                "Lanczos ({} steps): lambda {:.3e} .. {:.3e}, kappa {:.1}, bound {:.0} iterations",
                s.steps, s.lambda_min, s.lambda_max, s.kappa, s.bound_iterations
            ))
            .on_hover_text(
                "extreme eigenvalues of the preconditioned operator from CG's alpha and beta; \
                 bound: 1/2 sqrt(kappa) ln(2/tolerance)",
            );
        }
        ui.checkbox(
            &mut self.true_residual_view,
            "Residual view: |b - A x| per cell (else PCG's r)",
        );
        if !self.worst.is_empty() {
            ui.label("Worst cells (|r| / max|b|):");
            egui::Grid::new("lab_worst").striped(true).show(ui, |ui| {
                for h in ["cell", "|r|", "type", "fluid nb", "diag"] {
                    ui.strong(h);
                }
                ui.end_row();
                for w in &self.worst {
                    ui.label(format!("{:?}", w.cell));
                    ui.label(format!("{:.2e}", w.residual));
                    ui.label(w.cell_type);
                    ui.label(w.fluid_neighbours.to_string());
                    ui.label(format!("{:.3}", w.diagonal));
                    ui.end_row();
                }
            });
        }
        ui.separator();
        ui.horizontal(|ui| {
            if ui.button("Race every preconditioner").clicked() {
                self.actions.push(LabAction::Race);
            }
            if self.race.is_some() && ui.button("Export CSV + PNG").clicked() {
                self.actions.push(LabAction::ExportRace);
            }
            if ui.button("Close lab").clicked() {
                self.actions.push(LabAction::Close);
            }
        });
    }

    /// The race's own window: the plots and the table.
    pub fn race_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(rows) = &self.race {
            race_ui(ui, rows);
        }
    }
}

/// The race: residual against iteration and against time, and the table.
fn race_ui(ui: &mut egui::Ui, rows: &[RaceRow]) {
    let lines = |time: bool| {
        rows.iter()
            .map(|r| {
                // The set-up is the time at iteration 0; the iterations (the same kernels
                // each) share the rest evenly.
                let per = if r.history.len() > 1 {
                    (r.time_ms - r.setup_ms).max(0.0) / (r.history.len() - 1) as f64
                } else {
                    0.0
                };
                let pts: Vec<[f64; 2]> = r
                    .history
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let x = if time {
                            r.setup_ms + k as f64 * per
                        } else {
                            k as f64
                        };
                        [x, log10(*v as f64)]
                    })
                    .collect();
                (r.preconditioner.name(), pts)
            })
            .collect::<Vec<_>>()
    };
    for (id, time, xl) in [
        ("race_iterations", false, "iteration"),
        ("race_time", true, "time, ms"),
    ] {
        egui_plot::Plot::new(id)
            .height(150.0)
            .legend(egui_plot::Legend::default())
            .x_axis_label(xl)
            .y_axis_label("log10 max|r|/max|b|")
            .show(ui, |p| {
                for (name, pts) in lines(time) {
                    p.line(egui_plot::Line::new(name, pts));
                }
            });
    }
    egui::Grid::new("race_table").striped(true).show(ui, |ui| {
        for h in ["precond", "iters", "dispatches", "ms", "kappa", "bound"] {
            ui.strong(h);
        }
        ui.end_row();
        for r in rows {
            ui.label(r.preconditioner.name());
            ui.label(r.iterations.to_string());
            ui.label((r.iterations * r.dispatches_per_iteration).to_string());
            ui.label(format!("{:.2} ({})", r.time_ms, r.timer));
            ui.label(r.spectrum.map_or("-".into(), |s| format!("{:.1}", s.kappa)));
            ui.label(
                r.spectrum
                    .map_or("-".into(), |s| format!("{:.0}", s.bound_iterations)),
            );
            ui.end_row();
        }
    });
}

/// The race as a plot for the PNG export (the validation report's plotting).
pub fn race_plot(rows: &[RaceRow]) -> crate::validate::Plot {
    use crate::validate::{Mark, Plot, Series};
    Plot {
        name: "race".into(),
        title: "PCG residual per preconditioner on the frozen system".into(),
        x_label: "iteration".into(),
        y_label: "max|r| / max|b|".into(),
        log_x: false,
        log_y: true,
        series: rows
            .iter()
            .map(|r| {
                Series::new(
                    format!("{} ({} it)", r.preconditioner.name(), r.iterations),
                    r.history
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| **v > 0.0)
                        .map(|(k, v)| (k as f64, *v as f64))
                        .collect(),
                    Mark::MarkersLine,
                )
            })
            .collect(),
    }
}

impl Viewer {
    /// Runs what the lab panel asked for.
    pub(super) fn apply_lab_actions(&mut self) -> Result<(), ViewerError> {
        let actions = std::mem::take(&mut self.lab.actions);
        for a in actions {
            let r = self.lab_action(a);
            match r {
                Ok(()) => {}
                // A lab that cannot do something says why; the viewer goes on.
                Err(SimError::Unsupported(m)) => self.lab.message = Some(m),
                Err(e) => return Err(e.into()),
            }
            self.refresh_lab();
        }
        Ok(())
    }

    fn lab_action(&mut self, a: LabAction) -> Result<(), SimError> {
        let p = &mut self.lab;
        match a {
            LabAction::Freeze => {
                let (solved, frozen) = (self.sim.has_solved(), self.sim.freeze_system());
                if !solved {
                    return Err(SimError::Unsupported(
                        "no pressure solve yet: step a frame first".into(),
                    ));
                }
                let sys = frozen?;
                self.open_lab(sys)?;
                // The solve is looked at with the simulation paused.
                self.controls.playing = false;
            }
            LabAction::Step => {
                if let Some(l) = p.lab.as_mut() {
                    l.step()?;
                }
            }
            LabAction::Back => {
                if let Some(l) = p.lab.as_mut() {
                    l.back()?;
                }
            }
            LabAction::JumpTo(k) => {
                if let Some(l) = p.lab.as_mut() {
                    if k < l.iteration() {
                        l.restart(p.kind, p.tolerance)?;
                    }
                    l.run_to(k)?;
                }
            }
            LabAction::Converge => {
                if let Some(l) = p.lab.as_mut() {
                    l.run_to_convergence(lab::LAB_MAX_ITERATIONS)?;
                }
            }
            LabAction::Restart => {
                if let Some(l) = p.lab.as_mut() {
                    l.restart(p.kind, p.tolerance)?;
                }
            }
            LabAction::Race => {
                if let Some(l) = &p.lab {
                    let sys = l.system().clone();
                    p.race = Some(lab::race(self.ctx.clone(), &sys, p.tolerance, 2000)?);
                }
            }
            LabAction::ExportRace => {
                if let Some(rows) = &p.race {
                    p.message = Some(export_race(rows));
                }
            }
            LabAction::Close => {
                p.lab = None;
                p.race = None;
                p.worst.clear();
                p.message = None;
            }
        }
        Ok(())
    }

    /// Opens the lab on `sys` with the panel's preconditioner and tolerance.
    pub(super) fn open_lab(&mut self, sys: FrozenSystem) -> Result<(), SimError> {
        let dims = self.scene.dims();
        if sys.dims != dims {
            return Err(SimError::Unsupported(format!(
                "the system's grid {:?} is not the scene's {dims:?}: the lab shows its \
                 vectors on the scene's grid, so open it with the scene it was exported from",
                sys.dims
            )));
        }
        let p = &mut self.lab;
        p.tolerance = sys.settings.tolerance;
        let lab = SolverLab::new(self.ctx.clone(), &sys, p.kind, p.tolerance)?;
        p.message = None;
        p.race = None;
        p.lab = Some(lab);
        // The liquid's PCG views show the lab's vectors: open on its residual (the smoke's
        // field panel keeps its own fields; the lab's window and race work the same).
        if matches!(self.sim, Sim::Liquid(_)) && self.view.field.is_none() {
            self.view.field = Some(Field::Residual);
        }
        Ok(())
    }

    /// After the lab moved: its worst cells, and the views re-read.
    fn refresh_lab(&mut self) {
        let p = &mut self.lab;
        p.worst = p
            .lab
            .as_ref()
            .and_then(|l| l.worst_cells(WORST, p.true_residual_view).ok())
            .unwrap_or_default();
        self.revision += 1;
    }

    /// What the views show of a field while the lab is open: its vectors in place of the
    /// simulation's PCG vectors and multigrid levels (None for the other fields).
    pub(super) fn lab_field(&self, field: Field) -> Result<Option<FieldData>, SimError> {
        let Some(lab) = &self.lab.lab else {
            return Ok(None);
        };
        let dims = lab.system().dims;
        let cell = |values: Vec<f32>| FieldData {
            field,
            dims,
            spacing: [1, 1, 1],
            values,
        };
        Ok(match field {
            Field::Residual if self.lab.true_residual_view => Some(cell(
                lab.residual_field(true)?
                    .iter()
                    .map(|v| *v as f32)
                    .collect(),
            )),
            Field::Pressure
            | Field::Residual
            | Field::Preconditioned
            | Field::SearchDirection
            | Field::ASearchDirection => {
                let v = lab.vectors()?;
                Some(cell(match field {
                    Field::Pressure => v.p,
                    Field::Residual => v.r,
                    Field::Preconditioned => v.z,
                    Field::SearchDirection => v.d,
                    _ => v.q,
                }))
            }
            Field::Rhs => Some(cell(lab.system().b.clone())),
            Field::Mg(MgField { level, vector }) if vector != MgVector::CellType => {
                let levels = lab.mg_levels()?;
                let Some(l) = levels.iter().find(|l| l.level == level as usize) else {
                    return Ok(None);
                };
                let values = match vector {
                    MgVector::Rhs => l.rhs.clone(),
                    MgVector::Residual => l.residual.clone(),
                    _ => l.correction.clone(),
                };
                if values.is_empty() {
                    return Ok(None);
                }
                let s = |a: usize| (dims[a] / l.dims[a].max(1)).max(1);
                Some(FieldData {
                    field,
                    dims: l.dims,
                    spacing: [s(0), s(1), s(2)],
                    values,
                })
            }
            _ => None,
        })
    }

    /// `eddy view --lab`: after the frames, freeze (or open the exported system), step,
    /// race.
    pub(super) fn start_lab(&mut self, start: LabStart) -> Result<(), ViewerError> {
        if let Some(k) = start.preconditioner {
            self.lab.kind = k;
        }
        let opened = match &start.system {
            Some(dir) => crate::output::frozen::load_frozen_system(dir)
                .map_err(SimError::Unsupported)
                .and_then(|sys| self.open_lab(sys)),
            None => self.lab_action(LabAction::Freeze),
        };
        if let Err(e) = opened {
            return Err(ViewerError::Options(format!("--lab: {e}")));
        }
        self.lab.settle = 2;
        self.lab.actions.push(LabAction::JumpTo(start.step));
        if start.race {
            self.lab.actions.push(LabAction::Race);
        }
        self.apply_lab_actions()
    }
}

/// Writes the race as race.csv, race_history.csv and race.png in the current folder; says
/// what it wrote or why not.
fn export_race(rows: &[RaceRow]) -> String {
    let write = || -> Result<(), String> {
        crate::output::frozen::write_race_csv(std::path::Path::new("race.csv"), rows)
            .map_err(|e| format!("race.csv: {e}"))?;
        crate::output::frozen::write_race_history_csv(
            std::path::Path::new("race_history.csv"),
            rows,
        )
        .map_err(|e| format!("race_history.csv: {e}"))?;
        let png = crate::validate::report::png(&race_plot(rows)).map_err(|e| e.to_string())?;
        std::fs::write("race.png", png).map_err(|e| format!("race.png: {e}"))
    };
    match write() {
        Ok(()) => "wrote race.csv, race_history.csv and race.png".into(),
        Err(e) => format!("export failed: {e}"),
    }
}
