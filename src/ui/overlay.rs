//! Over the 3D view, always visible while a field is shown (whatever the panels'
//! state): the colour legend with its value range, and the hovered cell's value.

use crate::render::colormap::Scale;

pub fn legend_overlay(ctx: &egui::Context, legend: Option<&(Scale, String)>, hover: Option<&str>) {
    if legend.is_none() && hover.is_none() {
        return;
    }
    egui::Area::new(egui::Id::unique("legend_overlay"))
        .anchor(egui::Align2::CENTER_BOTTOM, egui::vec2(0.0, -12.0))
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                if let Some((scale, label)) = legend {
                    super::panels::legend(ui, *scale, label);
                }
                if let Some(h) = hover {
                    ui.label(h);
                }
            });
        });
}
