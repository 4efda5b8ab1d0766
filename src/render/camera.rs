//! Orbit camera: yaw and pitch around a target, with pitch clamped short of the poles so
//! the view never flips, and a distance that stays positive so the target is never lost.
//! A flat camera looks straight along one grid axis with an orthographic projection, so a
//! slice across that axis shows as a 2D image (zoom and pan still apply).

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
    /// `Some(axis)`: orthographic, looking along that axis (x from -x with z to the right,
    /// y from above with x to the right, z from +z with x to the right).
    pub flat: Option<usize>,
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
            flat: None,
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

    /// Looks along `axis` at a slice of `extent` (m along its two in-plane axes, in the
    /// order of [`crate::render::slice::SliceImage::plane_axes`]) centred at `centre`, so
    /// that it fills the pixel rectangle `rect` ([x0, y0, x1, y1]) of a `w` x `h` viewport.
    pub fn frame_flat(
        &mut self,
        axis: usize,
        centre: Vec3,
        extent: [f32; 2],
        rect: [f32; 4],
        w: f32,
        h: f32,
    ) {
        self.flat = Some(axis.min(2));
        let (rw, rh) = ((rect[2] - rect[0]).max(1.0), (rect[3] - rect[1]).max(1.0));
        // Metres per pixel that fit the slice into the rectangle, with a small margin.
        let m = (extent[0] / rw).max(extent[1] / rh).max(1e-9) * 1.05;
        self.distance = (m * h.max(1.0) * 0.5 / (self.fov_y * 0.5).tan()).max(MIN_DISTANCE);
        self.target = centre;
        let (right, up) = self.axes();
        let (cx, cy) = ((rect[0] + rect[2]) * 0.5, (rect[1] + rect[3]) * 0.5);
        self.target = centre - right * (cx - w * 0.5) * m + up * (cy - h * 0.5) * m;
    }

    /// Direction from the target to the eye and the up vector of a flat camera.
    fn flat_axes(axis: usize) -> (Vec3, Vec3) {
        match axis {
            0 => (-Vec3::X, Vec3::Y),
            1 => (Vec3::Y, -Vec3::Z),
            _ => (Vec3::Z, Vec3::Y),
        }
    }

    pub fn eye(&self) -> Vec3 {
        if let Some(axis) = self.flat {
            return self.target + Self::flat_axes(axis).0 * self.distance;
        }
        let dir = Vec3::new(
            self.pitch.cos() * self.yaw.sin(),
            self.pitch.sin(),
            self.pitch.cos() * self.yaw.cos(),
        );
        self.target + dir * self.distance
    }

    /// Left-drag: `dx`, `dy` in pixels. A flat camera does not turn.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        if self.flat.is_some() {
            return;
        }
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

    /// The screen's right and up directions in world space.
    fn axes(&self) -> (Vec3, Vec3) {
        let inv = self.view().inverse();
        (inv.x_axis.truncate(), inv.y_axis.truncate())
    }

    pub fn view(&self) -> Mat4 {
        let up = self.flat.map_or(Vec3::Y, |a| Self::flat_axes(a).1);
        Mat4::look_at_rh(self.eye(), self.target, up)
    }

    pub fn proj(&self, aspect: f32) -> Mat4 {
        if self.flat.is_some() {
            // The same visible height at the target as the perspective view, so zooming
            // and panning feel the same; depth spans the whole scene on both sides.
            let hh = self.distance * (self.fov_y * 0.5).tan();
            let hw = hh * aspect.max(1e-3);
            let depth = self.distance * 20.0 + 10.0;
            return Mat4::orthographic_rh(-hw, hw, -hh, hh, -depth, depth);
        }
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
    fn a_flat_camera_shows_the_slice_axis_aligned_in_the_rectangle() {
        for axis in 0..3 {
            let mut c = OrbitCamera::default();
            // A 2 m x 1 m slice centred at (1, 0.5, 0.25), shown in the pixel rectangle
            // x 300..900, y 100..700 of a 1200 x 800 viewport.
            let centre = Vec3::new(1.0, 0.5, 0.25);
            let (w, h) = (1200.0, 800.0);
            c.frame_flat(axis, centre, [2.0, 1.0], [300.0, 100.0, 900.0, 700.0], w, h);
            let vp = c.proj(w / h) * c.view();
            let to_px = |p: Vec3| {
                let n = vp.project_point3(p);
                (0.5 * (n.x + 1.0) * w, 0.5 * (1.0 - n.y) * h, n.z)
            };
            let (cx, cy, cz) = to_px(centre);
            assert!(
                (cx - 600.0).abs() < 0.5 && (cy - 400.0).abs() < 0.5,
                "{cx} {cy}"
            );
            assert!((0.0..=1.0).contains(&cz), "centre clipped at depth {cz}");
            // The plane's in-plane axes map to screen x and y; the normal axis to neither.
            let (a, b) = match axis {
                0 => (2, 1),
                1 => (0, 2),
                _ => (0, 1),
            };
            let mut da = centre;
            da[a] += 1.0;
            let (ax, ay, _) = to_px(da);
            assert!(
                (ax - cx).abs() > 1.0 && (ay - cy).abs() < 1e-3,
                "axis {axis}"
            );
            // 2 m along a fits 600 px (with the margin): 1 m is ~286 px.
            assert!(
                ((ax - cx).abs() - 600.0 / 2.0 / 1.05).abs() < 1.0,
                "{}",
                ax - cx
            );
            let mut db = centre;
            db[b] += 0.5;
            let (bx, by, _) = to_px(db);
            assert!(
                (bx - cx).abs() < 1e-3 && (by - cy).abs() > 1.0,
                "axis {axis}"
            );
            let mut dn = centre;
            dn[axis] += 0.3;
            let (nx, ny, _) = to_px(dn);
            assert!((nx - cx).abs() < 1e-3 && (ny - cy).abs() < 1e-3);
            // Rays run along the axis, and the one through the centre pixel hits the centre.
            let (o, d) = c.ray(600.0, 400.0, w, h);
            assert!(d[axis].abs() > 0.9999, "{d}");
            let t = (centre[axis] - o[axis]) / d[axis];
            assert!((o + d * t - centre).length() < 1e-3);
            // Orbiting does not turn a flat camera; panning moves it in the plane.
            let before = c.clone();
            c.orbit(50.0, 20.0);
            assert_eq!(c, before);
            c.pan(100.0, 0.0, h);
            assert!((c.target - before.target)[axis].abs() < 1e-6);
            assert!((c.target - before.target).length() > 1e-3);
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
