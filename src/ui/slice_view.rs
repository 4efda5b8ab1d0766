//! What the 3D view shows besides the liquid: the chosen field's slice (re-read only when
//! the simulation or the choice changed), velocity arrows, the smoke image and trails, and
//! the flat layout that frames a slice as a 2D image.

use super::overlay_lines;
use super::{frame_camera, smoke, Sim, SmokeViewKey, Viewer, ViewerError};
use crate::render::lines::velocity_arrows;
use crate::render::slice::{SliceImage, SliceSpec};
use crate::render::smoke as render_smoke;
use crate::sim::{liquid::views::Field, SimError};

/// Height kept free for the legend overlay when the flat layout frames a slice, pixels.
const LEGEND_OVERLAY_PX: f32 = 120.0;

impl Viewer {
    pub(super) fn update_slice(&mut self) -> Result<(), ViewerError> {
        let sim = match &mut self.sim {
            Sim::Liquid(sim) => {
                self.view.mg_levels = sim.mg_levels();
                sim
            }
            Sim::Smoke(s) => {
                let m = &mut self.smoke;
                m.panel.mg_levels = s.mg_levels();
                if m.image_key == Some((SmokeViewKey::of(&m.panel), self.revision)) {
                    return Ok(());
                }
                let (img, types) = match render_smoke::build_image(
                    s,
                    m.panel.field,
                    m.panel.range(),
                    m.panel.bilinear,
                ) {
                    // Levels come and go with the preconditioner and the grid: say why and
                    // show the dye rather than close the viewer.
                    Err(SimError::Unsupported(why))
                        if matches!(m.panel.field, smoke::SmokeField::Mg(_)) =>
                    {
                        log::warn!("{why}");
                        m.panel.note = Some(why);
                        m.panel.field = smoke::SmokeField::Dye;
                        render_smoke::build_image(
                            s,
                            m.panel.field,
                            m.panel.range(),
                            m.panel.bilinear,
                        )?
                    }
                    r => r?,
                };
                let p = &m.panel;
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, Some(&img));
                let mut lines = overlay_lines(&self.scene, s.bodies.as_ref());
                if p.trails {
                    lines.extend(render_smoke::trail_lines(s)?);
                }
                self.renderer.set_lines(&self.ctx.device, &lines);
                m.panel.legend = (p.field != smoke::SmokeField::Dye)
                    .then(|| (img.scale, p.field.label().to_string()));
                m.image = Some(img);
                m.types = types;
                m.image_key = Some((SmokeViewKey::of(&m.panel), self.revision));
                return Ok(());
            }
        };
        let Some(field) = self.view.field else {
            if self.slice.take().is_some() {
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, None);
                self.renderer.set_lines(
                    &self.ctx.device,
                    &overlay_lines(&self.scene, sim.bodies.as_ref()),
                );
            }
            self.view.legend = None;
            self.slice_key = None;
            return Ok(());
        };
        let spec = SliceSpec {
            field,
            axis: self.view.axis,
            index: self.view.index,
            range: self.view.range(),
        };
        let key = (spec, self.revision, self.view.arrows);
        if self.slice_key == Some(key) {
            return Ok(());
        }
        let lab = self.lab_field(field)?;
        let Sim::Liquid(sim) = &mut self.sim else {
            return Ok(());
        };
        let data = match lab.map_or_else(|| sim.read_field(field), Ok) {
            // Levels come and go with the preconditioner and the grid: say why and show no
            // slice rather than close the viewer.
            Err(SimError::Unsupported(why)) if matches!(field, Field::Mg(_)) => {
                log::warn!("{why}");
                self.view.note = Some(why);
                self.view.field = None;
                return self.update_slice();
            }
            r => r?,
        };
        let types = sim.read_field(field.cell_types())?;
        let img = SliceImage::build(&data, self.scene.h() as f32, spec);
        self.renderer
            .set_slice(&self.ctx.device, &self.ctx.queue, Some(&img));
        let mut lines = overlay_lines(&self.scene, sim.bodies.as_ref());
        if self.view.arrows {
            let (u, v, w) = (
                sim.read_field(Field::U)?,
                sim.read_field(Field::V)?,
                sim.read_field(Field::W)?,
            );
            // Arrows sit on a layer of the simulation grid: on a coarse level, the middle
            // one of the level's layer.
            let s = data.spacing[spec.axis];
            let idx = img.spec.index * s + s / 2;
            lines.extend(velocity_arrows(
                &u,
                &v,
                &w,
                self.scene.h() as f32,
                spec.axis,
                idx,
                self.scene.h() as f32 * 1.5,
            ));
        }
        self.renderer.set_lines(&self.ctx.device, &lines);
        self.view.legend = Some((img.scale, field.label().to_string()));
        self.slice = Some((img, types));
        self.slice_key = Some(key);
        Ok(())
    }

    /// The flat layout: while on (liquid with a shown slice), the camera looks along the
    /// slice's axis and is framed on it whenever the axis, layer, window size or side
    /// panels change;
    /// when turned off, the orbit camera comes back.
    pub(super) fn update_layout(&mut self) {
        let slice = match (&self.sim, self.view.flat, &self.slice) {
            (Sim::Liquid(_), true, Some((img, _))) => img,
            _ => {
                if self.flat_key.take().is_some() || self.camera.flat.is_some() {
                    self.camera.flat = None;
                    frame_camera(&mut self.camera, &self.scene);
                }
                return;
            }
        };
        let (w, h) = (self.config.width, self.config.height);
        let c = self.central.map(|v| v.round() as u32);
        let key = (
            slice.spec.axis,
            slice.spec.index,
            [w, h, c[0], c[1], c[2], c[3]],
        );
        if self.flat_key == Some(key) {
            return;
        }
        let (centre, extent) = slice.centre_and_extent();
        // Leave the bottom of the view to the legend overlay.
        let mut rect = self.central;
        rect[3] = (rect[3] - LEGEND_OVERLAY_PX).max(rect[1] + 1.0);
        self.camera
            .frame_flat(slice.spec.axis, centre, extent, rect, w as f32, h as f32);
        self.flat_key = Some(key);
    }
}
