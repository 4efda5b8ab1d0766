//! The Probes panel: every probe column's series since the scene was loaded, one plotted
//! live at a time, and written to a CSV file on request (the format of `eddy run`'s
//! probes.csv).

use crate::scene::Scene;
use crate::sim::core::probes::ProbeRow;
use std::path::{Path, PathBuf};

/// Rows kept for the plots; the oldest go first (a day of substeps would not fit).
pub const MAX_ROWS: usize = 200_000;

#[derive(Default)]
pub struct ProbesPanel {
    /// The scene's columns (name, unit).
    pub columns: Vec<(String, &'static str)>,
    /// (frame, row) since the scene was loaded, at most [`MAX_ROWS`].
    pub rows: std::collections::VecDeque<(u64, ProbeRow)>,
    /// The column plotted.
    pub shown: usize,
    /// What the last export did.
    pub message: Option<String>,
    exports: u32,
}

impl ProbesPanel {
    /// Starts over for `scene` (a new scene, a reset, a loaded state).
    pub fn reset(&mut self, scene: &Scene) {
        self.columns = scene.probe_columns();
        self.rows.clear();
        self.shown = self.shown.min(self.columns.len().saturating_sub(1));
        self.message = None;
    }

    /// Keeps the rows of frame `frame`.
    pub fn push(&mut self, frame: u64, rows: &[ProbeRow]) {
        for r in rows {
            if self.rows.len() == MAX_ROWS {
                self.rows.pop_front();
            }
            self.rows.push_back((frame, r.clone()));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The shown column's series, (time, value).
    pub fn series(&self) -> Vec<[f64; 2]> {
        self.rows
            .iter()
            .filter_map(|(_, r)| r.values.get(self.shown).map(|v| [r.time, *v]))
            .collect()
    }

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.columns.is_empty() {
            ui.label("This scene has no probes (see the guide's Scenes page).");
            return;
        }
        let label = |c: &(String, &str)| format!("{} ({})", c.0, c.1);
        egui::ComboBox::from_label("column")
            .selected_text(label(&self.columns[self.shown]))
            .show_ui(ui, |ui| {
                for (i, c) in self.columns.iter().enumerate() {
                    ui.selectable_value(&mut self.shown, i, label(c));
                }
            });
        let (name, unit) = &self.columns[self.shown];
        if let Some((_, last)) = self.rows.back() {
            ui.label(format!(
                "t = {:.4} s: {name} = {:.4e} {unit} ({} rows)",
                last.time,
                last.values[self.shown],
                self.rows.len()
            ));
        }
        egui_plot::Plot::new("probes")
            .height(160.0)
            .x_axis_label("time (s)")
            .y_axis_label(format!("{name} ({unit})"))
            .show(ui, |p| {
                p.line(egui_plot::Line::new(name.as_str(), self.series()))
            });
        if ui
            .button("Export CSV")
            .on_hover_text("every column's rows so far, as eddy run writes probes.csv")
            .clicked()
        {
            self.exports += 1;
            let path = PathBuf::from(format!("eddy_probes_{:03}.csv", self.exports));
            self.message = Some(match self.export(&path) {
                Ok(()) => format!("wrote {} rows to {}", self.rows.len(), path.display()),
                Err(e) => format!("cannot write {}: {e}", path.display()),
            });
        }
        if let Some(m) = &self.message {
            ui.label(m);
        }
    }

    /// Writes the rows kept, with probes.csv's header.
    pub fn export(&self, path: &Path) -> std::io::Result<()> {
        let mut text = String::from("frame,time_s");
        for (name, _) in &self.columns {
            text.push(',');
            text.push_str(name);
        }
        text.push('\n');
        for (frame, row) in &self.rows {
            for line in crate::output::probes::csv_rows(*frame, std::slice::from_ref(row)) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        crate::output::write_atomically(path, |w| std::io::Write::write_all(w, text.as_bytes()))
    }
}
