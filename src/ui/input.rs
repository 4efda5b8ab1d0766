//! The viewer's input: window events to camera moves, panel shortcuts, pushes of the
//! liquid, the smoke mode's mouse tools, and the hover text of the cell under the cursor.

use super::panels::Action;
use super::{smoke, Sim, Viewer, ViewerError};
use crate::render::create_depth;
use glam::Vec3;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::ActiveEventLoop;
use winit::keyboard::{Key, NamedKey};

impl Viewer {
    pub(super) fn hover_text(&self) -> Option<String> {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        if let Sim::Smoke(m) = &self.sim {
            let img = m.image.as_ref()?;
            return smoke::hover_text(img, &m.types, o, d, &m.panel.field.label());
        }
        let (img, types) = self.slice.as_ref()?;
        let (c, value) = img.pick(o, d)?;
        let n = types.dims;
        let cell = [c[0].min(n[0] - 1), c[1].min(n[1] - 1), c[2].min(n[2] - 1)];
        let t = types.get(cell[0], cell[1], cell[2]) as u32;
        let tname = crate::render::colormap::cell_type_name(t);
        Some(format!(
            "{} at ({}, {}, {}): {:.6e}\ncell ({}, {}, {}) is {tname}",
            img.spec.field.label(),
            c[0],
            c[1],
            c[2],
            value,
            cell[0],
            cell[1],
            cell[2]
        ))
    }

    pub(super) fn handle(
        &mut self,
        event_loop: &ActiveEventLoop,
        event: WindowEvent,
    ) -> Result<(), ViewerError> {
        let response = self.egui_state.on_window_event(&self.window, &event);
        let egui_wants = self.egui_state.egui_ctx().egui_wants_pointer_input();
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                self.config.width = size.width.max(1);
                self.config.height = size.height.max(1);
                self.surface.configure(&self.ctx.device, &self.config);
                self.depth = create_depth(&self.ctx.device, self.config.width, self.config.height);
            }
            WindowEvent::ModifiersChanged(m) => self.mouse.shift = m.state().shift_key(),
            WindowEvent::KeyboardInput { event, .. }
                if !response.consumed && event.state == ElementState::Pressed =>
            {
                match event.logical_key {
                    Key::Named(NamedKey::Space) => self.controls.playing = !self.controls.playing,
                    Key::Named(NamedKey::Escape) => event_loop.exit(),
                    Key::Character(c) => match c.as_str() {
                        "f" | "F" => self.controls.actions.push(Action::FrameDomain),
                        "p" | "P" => self.controls.actions.push(Action::Screenshot),
                        "n" | "N" => {
                            self.controls.playing = false;
                            self.controls.actions.push(Action::Step);
                        }
                        "r" | "R" => self.controls.actions.push(Action::Reset),
                        _ => {}
                    },
                    _ => {}
                }
            }
            WindowEvent::MouseInput { state, button, .. } if self.is_smoke() => {
                let down = state == ElementState::Pressed && !egui_wants;
                self.smoke_button(button, down);
            }
            WindowEvent::CursorMoved { position, .. } if self.is_smoke() => {
                let (x, y) = (position.x as f32, position.y as f32);
                let (dx, dy) = (x - self.mouse.pos.0, y - self.mouse.pos.1);
                self.mouse.pos = (x, y);
                if self.mouse.right {
                    self.camera.pan(dx, dy, self.config.height as f32);
                } else {
                    self.smoke_move();
                }
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let down = state == ElementState::Pressed && !egui_wants;
                match button {
                    MouseButton::Left => self.mouse.left = down,
                    MouseButton::Right | MouseButton::Middle => self.mouse.right = down,
                    _ => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                let (dx, dy) = (x - self.mouse.pos.0, y - self.mouse.pos.1);
                self.mouse.pos = (x, y);
                if self.mouse.left && self.mouse.shift {
                    self.push(dx, dy);
                } else if self.mouse.left && self.camera.flat.is_some() {
                    self.camera.pan(dx, dy, self.config.height as f32);
                } else if self.mouse.left {
                    self.camera.orbit(dx, dy);
                } else if self.mouse.right {
                    self.camera.pan(dx, dy, self.config.height as f32);
                }
            }
            WindowEvent::MouseWheel { delta, .. } if !egui_wants => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.camera.zoom(steps);
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop)?,
            _ => {}
        }
        Ok(())
    }

    /// Shift-drag: kick the particles along the ray under the cursor in the drag direction.
    fn push(&mut self, dx: f32, dy: f32) {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        let (o0, d0) = self
            .camera
            .ray(self.mouse.pos.0 - dx, self.mouse.pos.1 - dy, w, h);
        // The drag's world-space direction at the target's distance.
        let at = |o: Vec3, d: Vec3| o + d * self.camera.distance;
        let drag = at(o, d) - at(o0, d0);
        let dv = drag * 20.0;
        let radius = (self.scene.h() * 3.0) as f32;
        if let Sim::Liquid(sim) = &self.sim {
            self.pusher
                .push(sim, o, d, radius, dv.clamp_length_max(10.0));
        }
    }

    fn is_smoke(&self) -> bool {
        matches!(self.sim, Sim::Smoke(_))
    }

    /// The cursor's point on the smoke slice (m).
    fn smoke_cursor(&self) -> Option<[f64; 2]> {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        smoke::plane_point(o, d, self.scene.h())
    }

    /// Smoke mode buttons: left and right start and end drags (the panel's tool decides
    /// what they do); middle drags pan the view.
    fn smoke_button(&mut self, button: MouseButton, down: bool) {
        let p = self.smoke_cursor();
        let Sim::Smoke(m) = &mut self.sim else { return };
        match button {
            MouseButton::Middle => self.mouse.right = down,
            MouseButton::Left | MouseButton::Right => {
                if down {
                    if let Some(p) = p {
                        m.drag =
                            smoke::start_drag(&m.sim, &m.panel, button == MouseButton::Left, p);
                        // A drag that starts on a rigid body holds it on a spring.
                        smoke::grab_body(&mut m.sim, &m.drag, p);
                    }
                } else {
                    smoke::end_drag(&mut m.sim, &mut m.drag);
                }
            }
            _ => {}
        }
    }

    fn smoke_move(&mut self) {
        let Some(p) = self.smoke_cursor() else { return };
        let frame_dt = self.scene.frame_dt;
        let Sim::Smoke(m) = &mut self.sim else { return };
        if smoke::apply_drag(&mut m.sim, &m.panel, &mut m.drag, p, frame_dt) {
            // Painted solids show at once, even when paused.
            m.image_key = None;
        }
    }
}
