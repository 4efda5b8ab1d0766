//! The viewer's input: window events to camera moves, panel shortcuts, pushes of the
//! liquid, dragging a rigid body in 3D, the smoke mode's mouse tools, and the hover text of
//! the cell under the cursor.

use super::panels::Action;
use super::{smoke, BodyGrab, Sim, Viewer, ViewerError};
use crate::render::create_depth;
use glam::{DVec3, Vec3};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::ActiveEventLoop;
use winit::keyboard::{Key, NamedKey};

impl Viewer {
    pub(super) fn hover_text(&self) -> Option<String> {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        if let Sim::Smoke(_) = &self.sim {
            let m = &self.smoke;
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
                    Key::Named(NamedKey::F5) => self.controls.actions.push(Action::SaveState),
                    Key::Named(NamedKey::F9) => self.controls.actions.push(Action::LoadState),
                    Key::Named(NamedKey::F1) => self.layout.left_open = !self.layout.left_open,
                    Key::Named(NamedKey::F2) => self.layout.right_open = !self.layout.right_open,
                    Key::Character(c) => match c.as_str() {
                        "f" | "F" => self.controls.actions.push(Action::FrameDomain),
                        "p" | "P" => self.controls.actions.push(Action::Screenshot),
                        "n" | "N" => {
                            self.controls.playing = false;
                            self.controls.actions.push(Action::Step);
                        }
                        "r" | "R" => self.controls.actions.push(Action::Reset),
                        "v" => self.cycle_view(true),
                        "V" => self.cycle_view(false),
                        // The solver lab: freeze the last solve, then race it; close.
                        "l" => {
                            let a = match self.lab.lab {
                                None => super::lab::LabAction::Freeze,
                                Some(_) => super::lab::LabAction::Race,
                            };
                            self.lab.actions.push(a);
                        }
                        "L" => self.lab.actions.push(super::lab::LabAction::Close),
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
                    MouseButton::Left => {
                        self.mouse.left = down;
                        if down && !self.mouse.shift {
                            self.grab_body();
                        } else if !down {
                            self.release_body();
                        }
                    }
                    MouseButton::Right | MouseButton::Middle => self.mouse.right = down,
                    _ => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                let (dx, dy) = (x - self.mouse.pos.0, y - self.mouse.pos.1);
                self.mouse.pos = (x, y);
                if self.grab.is_some() {
                    self.drag_body();
                } else if self.mouse.left && self.mouse.shift {
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

    /// The world ray under the cursor, f64.
    fn cursor_ray(&self) -> (DVec3, DVec3) {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        (o.as_dvec3(), d.as_dvec3())
    }

    /// Left press in the 3D view: a press on a dynamic or kinematic body grabs it at the
    /// point under the cursor (the smoke's spring); anywhere else (a fixed body included)
    /// the drag orbits as before.
    fn grab_body(&mut self) {
        if self.camera.flat.is_some() {
            return;
        }
        let (o, d) = self.cursor_ray();
        let Some(b) = super::liquid_bodies_mut(&mut self.sim) else {
            return;
        };
        let Some((index, t)) = crate::ui::picking::ray_hit(&b.set, o, d) else {
            return;
        };
        let point = o + d * t;
        if b.set.grab(index, point, crate::ui::picking::MOUSE_SPRING) {
            self.grab = Some(BodyGrab { index, point });
            self.update_solids();
        }
    }

    /// Cursor move while a body is held: the spring's end goes to where the cursor's ray
    /// meets the plane through the grab point facing the camera.
    fn drag_body(&mut self) {
        let Some(g) = &self.grab else { return };
        let (o, d) = self.cursor_ray();
        let Some(target) = grab_target(
            o,
            d,
            g.point,
            (self.camera.target - self.camera.eye()).as_dvec3(),
        ) else {
            return;
        };
        let index = g.index;
        if let Some(b) = super::liquid_bodies_mut(&mut self.sim) {
            b.set.move_grab(index, target);
        }
        // A kinematic body moved at once (even while paused).
        self.bodies_moved();
    }

    /// Left release: lets go of a held body.
    fn release_body(&mut self) {
        let Some(g) = self.grab.take() else { return };
        if let Some(b) = super::liquid_bodies_mut(&mut self.sim) {
            b.set.release(g.index, &self.scene);
        }
        self.update_solids();
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
        let Sim::Smoke(s) = &mut self.sim else { return };
        let m = &mut self.smoke;
        match button {
            MouseButton::Middle => self.mouse.right = down,
            MouseButton::Left | MouseButton::Right => {
                if down {
                    if let Some(p) = p {
                        m.drag = smoke::start_drag(s, &m.panel, button == MouseButton::Left, p);
                        // A drag that starts on a rigid body holds it on a spring.
                        smoke::grab_body(s, &m.drag, p);
                    }
                } else {
                    smoke::end_drag(s, &mut m.drag);
                }
            }
            _ => {}
        }
    }

    fn smoke_move(&mut self) {
        let Some(p) = self.smoke_cursor() else { return };
        let frame_dt = self.scene.frame_dt;
        let Sim::Smoke(s) = &mut self.sim else { return };
        let m = &mut self.smoke;
        if smoke::apply_drag(s, &m.panel, &mut m.drag, p, frame_dt) {
            // Painted solids show at once, even when paused.
            m.image_key = None;
        }
    }
}

/// Where the ray `o + t d` meets the plane through `point` whose normal is the camera's
/// viewing direction `forward`; None when the ray runs along the plane or the plane lies
/// behind the camera.
fn grab_target(o: DVec3, d: DVec3, point: DVec3, forward: DVec3) -> Option<DVec3> {
    let n = forward.normalize_or_zero();
    let denom = n.dot(d);
    if denom.abs() < 1e-9 {
        return None;
    }
    let t = n.dot(point - o) / denom;
    (t > 0.0).then(|| o + d * t)
}

impl Viewer {
    /// Shows the next (or the previous) debug view: the bare 3D view, every grid field,
    /// then the multigrid levels there are; a smoke slice's fields likewise.
    fn cycle_view(&mut self, forward: bool) {
        use crate::sim::liquid::views::{Field, MgField};
        fn step<T: PartialEq + Clone>(list: &[T], now: &T, forward: bool) -> T {
            let n = list.len();
            let i = list.iter().position(|x| x == now).unwrap_or(0);
            list[if forward {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            }]
            .clone()
        }
        if self.is_smoke() {
            let p = &mut self.smoke.panel;
            let mut list: Vec<_> = crate::sim::smoke::views::SmokeField::ALL.to_vec();
            list.extend(
                MgField::list(&p.mg_levels)
                    .into_iter()
                    .map(crate::sim::smoke::views::SmokeField::Mg),
            );
            p.field = step(&list, &p.field, forward);
        } else {
            let mut list: Vec<Option<Field>> = vec![None];
            list.extend(Field::ALL.into_iter().map(Some));
            list.extend(
                MgField::list(&self.view.mg_levels)
                    .into_iter()
                    .map(|m| Some(Field::Mg(m))),
            );
            self.view.field = step(&list, &self.view.field, forward);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grab_target_stays_at_the_grab_points_depth() {
        let eye = DVec3::new(0.5, 0.5, 3.0);
        let forward = DVec3::new(0.0, 0.0, -1.0);
        let point = DVec3::new(0.4, 0.6, 0.3);
        // The ray through the grab point finds the grab point.
        let d = (point - eye).normalize();
        let p = grab_target(eye, d, point, forward).unwrap();
        assert!((p - point).length() < 1e-12);
        // Another ray: a point in the plane z = 0.3, on that ray.
        let d = DVec3::new(0.1, -0.2, -1.0);
        let p = grab_target(eye, d, point, forward).unwrap();
        assert!((p.z - 0.3).abs() < 1e-12);
        assert!(((p - eye).normalize() - d.normalize()).length() < 1e-12);
        // Along the plane, or away from it: none.
        assert!(grab_target(eye, DVec3::X, point, forward).is_none());
        assert!(grab_target(eye, -d, point, forward).is_none());
    }
}
