//! Orbit camera: yaw and pitch around a target, with pitch clamped short of the poles so
//! the view never flips, and a distance that stays positive so the target is never lost.

use glam::{Mat4, Vec3};

#[derive(Clone, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    /// Radians around +y.
    pub yaw: f32,
    /// Radians above the horizontal, within +-MAX_PITCH.
    pub pitch: f32,
    pub fov_y: f32,
}

const MAX_PITCH: f32 = 1.53; // ~87.7 degrees
const MIN_DISTANCE: f32 = 1e-3;

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            target: Vec3::splat(0.5),
            distance: 2.5,
            yaw: 0.6,
            pitch: 0.45,
            fov_y: 45f32.to_radians(),
        }
    }
}

impl OrbitCamera {
    /// Looks at the centre of a box of `size` from a distance that shows all of it.
    pub fn frame(&mut self, size: Vec3) {
        self.target = size * 0.5;
        let radius = size.length() * 0.5;
        self.distance = (radius / (self.fov_y * 0.5).sin()).max(MIN_DISTANCE) * 1.05;
    }

    pub fn eye(&self) -> Vec3 {
        let dir = Vec3::new(
            self.pitch.cos() * self.yaw.sin(),
            self.pitch.sin(),
            self.pitch.cos() * self.yaw.cos(),
        );
        self.target + dir * self.distance
    }

    /// Left-drag: `dx`, `dy` in pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Right/middle-drag: moves the target in the view plane, scaled to the distance.
    pub fn pan(&mut self, dx: f32, dy: f32, viewport_height: f32) {
        let (right, up) = self.axes();
        let scale = 2.0 * self.distance * (self.fov_y * 0.5).tan() / viewport_height.max(1.0);
        self.target += (-right * dx + up * dy) * scale;
    }

    /// Wheel: positive `steps` zoom in.
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * (-steps * 0.1).exp()).max(MIN_DISTANCE);
    }

    fn axes(&self) -> (Vec3, Vec3) {
        let forward = (self.target - self.eye()).normalize();
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        (right, up)
    }

    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    pub fn proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.01).max(1e-4);
        Mat4::perspective_rh(
            self.fov_y,
            aspect.max(1e-3),
            near,
            self.distance * 20.0 + 10.0,
        )
    }

    /// World-space ray through a pixel (x right, y down) of a `w` x `h` viewport.
    pub fn ray(&self, x: f32, y: f32, w: f32, h: f32) -> (Vec3, Vec3) {
        let ndc_x = 2.0 * x / w.max(1.0) - 1.0;
        let ndc_y = 1.0 - 2.0 * y / h.max(1.0);
        let inv = (self.proj(w / h.max(1.0)) * self.view()).inverse();
        let near = inv.project_point3(Vec3::new(ndc_x, ndc_y, 0.0));
        let far = inv.project_point3(Vec3::new(ndc_x, ndc_y, 1.0));
        (near, (far - near).normalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbiting_over_the_pole_never_flips() {
        let mut c = OrbitCamera::default();
        for _ in 0..1000 {
            c.orbit(3.0, 7.0);
            let up = c.view().inverse().transform_vector3(Vec3::Y);
            assert!(up.y > 0.0, "camera flipped at pitch {}", c.pitch);
            assert!(c.view().is_finite());
        }
        assert!(c.pitch <= MAX_PITCH);
    }

    #[test]
    fn the_target_stays_in_the_centre() {
        let mut c = OrbitCamera::default();
        c.frame(Vec3::new(2.0, 1.0, 1.0));
        for i in 0..50 {
            c.orbit(i as f32, -(i as f32));
            c.zoom(if i % 2 == 0 { 5.0 } else { -3.0 });
            let clip = c.proj(1.5) * c.view() * c.target.extend(1.0);
            let ndc = clip.truncate() / clip.w;
            assert!(ndc.x.abs() < 1e-3 && ndc.y.abs() < 1e-3, "{ndc}");
        }
        for _ in 0..200 {
            c.zoom(10.0);
        }
        assert!(c.distance >= MIN_DISTANCE);
    }

    #[test]
    fn pan_moves_the_target_and_framing_shows_the_box() {
        let mut c = OrbitCamera::default();
        c.frame(Vec3::ONE);
        let t = c.target;
        c.pan(100.0, 0.0, 600.0);
        assert!((c.target - t).length() > 0.01);
        c.frame(Vec3::ONE);
        for corner in 0..8 {
            let p = Vec3::new(
                (corner & 1) as f32,
                ((corner >> 1) & 1) as f32,
                ((corner >> 2) & 1) as f32,
            );
            let clip = c.proj(1.0) * c.view() * p.extend(1.0);
            let ndc = clip.truncate() / clip.w;
            assert!(
                ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0,
                "corner {p} off screen"
            );
        }
    }

    #[test]
    fn centre_ray_points_at_the_target() {
        let c = OrbitCamera::default();
        let (o, d) = c.ray(400.0, 300.0, 800.0, 600.0);
        let to_target = (c.target - o).normalize();
        assert!(d.dot(to_target) > 0.9999);
    }
}
