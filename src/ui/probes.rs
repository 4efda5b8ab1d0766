//! The Probes panel: every probe column's series since the scene was loaded, one plotted
//! live at a time, and written on request to a CSV file (the format of `eddy run`'s
//! probes.csv) or, the column shown, to a PNG drawn as `eddy validate` draws its plots.

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
        if ui
            .button("Export PNG")
            .on_hover_text("the column shown, plotted against time")
            .clicked()
        {
            self.exports += 1;
            let path = PathBuf::from(format!("eddy_probes_{:03}.png", self.exports));
            self.message = Some(match self.export_png(&path) {
                Ok(()) => format!("wrote {name} to {}", path.display()),
                Err(e) => format!("cannot write {}: {e}", path.display()),
            });
        }
        if let Some(m) = &self.message {
            ui.label(m);
        }
    }

    /// Writes the column shown against time as a PNG (1200 x 800, `eddy validate`'s
    /// renderer).
    pub fn export_png(&self, path: &Path) -> Result<(), String> {
        let Some((name, unit)) = self.columns.get(self.shown) else {
            return Err("the scene has no probes".into());
        };
        if self.rows.is_empty() {
            return Err("no rows yet: run the simulation first".into());
        }
        use crate::validate::{report, Mark, Plot, Series};
        let points = self.series().iter().map(|p| (p[0], p[1])).collect();
        let plot = Plot {
            name: format!("probe {name}"),
            title: format!("Probe {name}"),
            x_label: "time (s)".into(),
            y_label: format!("{name} ({unit})"),
            log_x: false,
            log_y: false,
            series: vec![Series::new(name.clone(), points, Mark::Line)],
        };
        let bytes = report::png(&plot).map_err(|e| e.to_string())?;
        crate::output::write_atomically(path, |w| std::io::Write::write_all(w, &bytes))
            .map_err(|e| e.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_column_exports_as_a_png() {
        let mut panel = ProbesPanel {
            columns: vec![("H1".into(), "m"), ("P1".into(), "Pa")],
            shown: 1,
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("eddy-ui-probes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p1.png");
        assert!(panel.export_png(&path).unwrap_err().contains("no rows"));
        let rows: Vec<ProbeRow> = (0..50)
            .map(|i| ProbeRow {
                time: i as f64 * 0.01,
                values: vec![0.1, (i as f64 * 0.3).sin() * 100.0],
            })
            .collect();
        panel.push(1, &rows);
        panel.export_png(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG file");
        let img = image::load_from_memory(&bytes).unwrap();
        assert_eq!((img.width(), img.height()), (1200, 800));
        std::fs::remove_dir_all(&dir).ok();
    }
}
