//! The View panel's liquid section: the mouse's controls, how the liquid is drawn
//! (particles, surface or both) and the surface's live parameters.

use crate::render::surface::RenderMode;
use crate::render::ParticleStyle;

/// What the mouse does in the 3D liquid view.
pub const MOUSE_HELP: &str = "left-drag: orbit; on a body: drag it (a spring at the grabbed \
point; kinematic bodies follow the cursor, fixed ones stay)\nshift + left-drag: push the \
liquid; right-drag: pan; wheel: zoom";

/// Render mode selector and, when a surface is drawn, its parameters. They apply on the
/// next redraw.
pub fn liquid_ui(ui: &mut egui::Ui, style: &mut ParticleStyle) {
    ui.label(MOUSE_HELP);
    ui.horizontal(|ui| {
        ui.label("draw");
        for m in RenderMode::ALL {
            ui.radio_value(&mut style.mode, m, m.name());
        }
    });
    if style.mode == RenderMode::Particles {
        return;
    }
    let s = &mut style.surface;
    fn log<'a>(
        v: &'a mut f32,
        range: std::ops::RangeInclusive<f32>,
        text: &str,
    ) -> egui::Slider<'a> {
        egui::Slider::new(v, range)
            .logarithmic(true)
            .text(text.to_string())
    }
    ui.add(log(&mut s.radius, 0.001..=0.1, "sphere radius (m)"))
        .on_hover_text("Radius of each particle's sphere in the depth and thickness passes");
    ui.add(log(
        &mut s.smooth_radius,
        0.0005..=0.2,
        "smoothing radius (m)",
    ))
    .on_hover_text("Filter radius in world units: the look does not change with zoom");
    ui.add(log(&mut s.depth_falloff, 0.0005..=0.2, "edge depth (m)"))
        .on_hover_text(
            "Depth difference at which smoothing stops: keeps splashes apart from the body behind",
        );
    ui.horizontal(|ui| {
        ui.color_edit_button_rgb(&mut s.deep_color);
        ui.label("deep colour");
    });
    ui.label("absorption per metre (r, g, b)");
    ui.horizontal(|ui| {
        for a in s.absorption.iter_mut() {
            ui.add(egui::DragValue::new(a).speed(0.05).range(0.0..=200.0));
        }
    });
    ui.add(egui::Slider::new(&mut s.refraction, 0.0..=1.0).text("refraction"));
    ui.add(egui::Slider::new(&mut s.specular, 0.0..=4.0).text("specular"));
    ui.add(log(&mut s.shininess, 2.0..=1000.0, "shininess"));
}
