//! Which body the mouse is on: a ray from the camera through the cursor (the 3D view) or a
//! point of the slice (the smoke view), and the spring a grab pulls with.

use crate::sim::bodies::{BodySet, GrabSpring, RigidBody, Solid};
use glam::DVec3;

/// The viewer's mouse spring: a stiffness per kg of 1000 /s^2 (a period of 0.2 s), the same
/// in the smoke slice and the 3D liquid view; a held kinematic body moves at most 20 m/s
/// (a flick across the window in one frame would otherwise give its faces hundreds of m/s).
pub const MOUSE_SPRING: GrabSpring = GrabSpring {
    stiffness: 1000.0,
    max_speed: 20.0,
};

/// The nearest body the ray `origin + t dir` (t >= 0) meets and its `t` (in units of
/// `dir`'s length): boxes by a slab test in their own frame, spheres analytically. A ray
/// that starts inside a body hits it at t = 0. In a slice a body is its prism or
/// cylinder across the slice's depth.
pub fn ray_hit(set: &BodySet, origin: DVec3, dir: DVec3) -> Option<(usize, f64)> {
    let depth = set.slice.then_some(0.5 * set.domain.z);
    set.bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| ray_body(b, origin, dir, depth).map(|t| (i, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The body under world point `p` (topmost = last in the scene), if any.
pub fn body_at(set: &BodySet, p: DVec3) -> Option<usize> {
    (0..set.bodies.len())
        .rev()
        .find(|&i| set.bodies[i].contains(p, set.slice))
}

/// Where the ray `o + t d` (t >= 0) enters `b`, or None. `slice_half_depth`: the body is
/// its prism (box) or cylinder (sphere) across a slice, z within that of its centre.
fn ray_body(b: &RigidBody, o: DVec3, d: DVec3, slice_half_depth: Option<f64>) -> Option<f64> {
    // The body's frame: the box is axis-aligned there, the sphere's centre is the origin.
    let inv = b.orientation.inverse();
    let lo = inv * (o - b.position);
    let ld = inv * d;
    // span: the part [t0, t1] of the ray inside every slab seen so far.
    let mut span = (0.0f64, f64::INFINITY);
    match b.solid {
        Solid::Box { half } => {
            let hz = slice_half_depth.unwrap_or(half.z);
            let inside = clip_slab(&mut span, lo.x, ld.x, half.x)
                && clip_slab(&mut span, lo.y, ld.y, half.y)
                && clip_slab(&mut span, lo.z, ld.z, hz);
            inside.then_some(span.0)
        }
        Solid::Sphere { radius } => {
            // |lo + t ld|^2 = r^2 over the axes the shape is round in (x, y for a cylinder).
            let round = if slice_half_depth.is_some() {
                DVec3::new(1.0, 1.0, 0.0)
            } else {
                DVec3::ONE
            };
            let (p, v) = (lo * round, ld * round);
            let a = v.length_squared();
            let c = p.length_squared() - radius * radius;
            if a == 0.0 {
                if c > 0.0 {
                    return None;
                }
            } else {
                let half_b = p.dot(v);
                let disc = half_b * half_b - a * c;
                if disc < 0.0 {
                    return None;
                }
                let root = disc.sqrt();
                span.0 = span.0.max((-half_b - root) / a);
                span.1 = span.1.min((-half_b + root) / a);
                if span.0 > span.1 {
                    return None;
                }
            }
            match slice_half_depth {
                Some(hz) => clip_slab(&mut span, lo.z, ld.z, hz).then_some(span.0),
                None => Some(span.0),
            }
        }
    }
}

/// Narrows `span` (ray parameters) to where `p + t v` lies within +-`half`; false when
/// nothing is left.
fn clip_slab(span: &mut (f64, f64), p: f64, v: f64, half: f64) -> bool {
    if v == 0.0 {
        return p.abs() <= half;
    }
    let (a, c) = ((-half - p) / v, (half - p) / v);
    span.0 = span.0.max(a.min(c));
    span.1 = span.1.min(a.max(c));
    span.0 <= span.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{BodyShape, Scene, SceneKind};
    use crate::sim::bodies::tests::{set_of, spec};

    #[test]
    fn a_ray_hits_a_rotated_box_on_the_right_face_at_the_right_t() {
        // A box 0.4 x 0.1 x 0.1 turned 30 degrees about z: a ray along -x at the box's
        // height meets its +x local face (turned), not the axis-aligned box's face.
        let mut s = spec(
            BodyShape::Box {
                half_extents: (0.2, 0.05, 0.05),
            },
            500.0,
        );
        s.rotation_deg = (0.0, 0.0, 30.0);
        let set = set_of(vec![s]);
        let b = &set.bodies[0];
        let origin = DVec3::new(1.5, 0.5, 0.5);
        let dir = DVec3::new(-2.0, 0.0, 0.0);
        let (i, t) = ray_hit(&set, origin, dir).expect("hit");
        assert_eq!(i, 0);
        let p = origin + t * dir;
        let local = b.orientation.inverse() * (p - b.position);
        // The ray at the centre's height enters through a long side of the turned box:
        // |local y| = half y, |local x| < half x.
        assert!((local.y.abs() - 0.05).abs() < 1e-12, "local hit {local}");
        assert!(
            local.x.abs() < 0.2 && local.z.abs() < 0.05,
            "local hit {local}"
        );
        // Analytic: world (dx, 0) from the centre is (dx cos30, -dx sin30) in the box's
        // frame, inside the long side while dx sin30 <= 0.05: it enters at dx = 0.1.
        let expect_x = 0.5 + 0.05 / 30f64.to_radians().sin();
        assert!(
            (p.x - expect_x).abs() < 1e-12,
            "hit at x {} vs {expect_x}",
            p.x
        );
        assert!((t - (1.5 - expect_x) / 2.0).abs() < 1e-12);
        // Beside the box (above its turned top corner), and pointing away: misses.
        assert!(ray_hit(&set, DVec3::new(1.5, 0.5 + 0.2, 0.5), dir).is_none());
        assert!(ray_hit(&set, origin, -dir).is_none());
        // Level with the box but just above its top in z: misses too.
        assert!(ray_hit(&set, DVec3::new(1.5, 0.5, 0.5 + 0.051), dir).is_none());
    }

    #[test]
    fn a_ray_hits_the_nearest_of_two_bodies_and_from_inside_at_zero() {
        let mut near = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
        near.center = (0.5, 0.5, 0.7);
        let mut far = spec(
            BodyShape::Box {
                half_extents: (0.1, 0.1, 0.1),
            },
            500.0,
        );
        far.center = (0.5, 0.5, 0.3);
        // Listed far first: the order in the scene does not decide, the distance does.
        let set = set_of(vec![far, near]);
        let origin = DVec3::new(0.5, 0.5, 1.0);
        let dir = DVec3::new(0.0, 0.0, -1.0);
        let (i, t) = ray_hit(&set, origin, dir).unwrap();
        assert_eq!(i, 1);
        assert!((t - 0.2).abs() < 1e-12, "sphere entered at t {t}");
        // Off the sphere's axis by 0.06: enters at z = 0.7 + sqrt(0.01 - 0.0036).
        let (i, t) = ray_hit(&set, DVec3::new(0.56, 0.5, 1.0), dir).unwrap();
        assert_eq!(i, 1);
        assert!((t - (0.3 - 0.0064f64.sqrt())).abs() < 1e-12, "t {t}");
        // Beside the sphere but over the box's corner: the box, at its top face.
        let (i, t) = ray_hit(&set, DVec3::new(0.59, 0.59, 1.0), dir).unwrap();
        assert_eq!(i, 0);
        assert!((t - 0.6).abs() < 1e-12);
        // From inside the box, the hit is where the ray starts.
        let (i, t) = ray_hit(&set, DVec3::new(0.5, 0.5, 0.3), dir).unwrap();
        assert_eq!((i, t), (0, 0.0));
        // From inside the sphere looking away from the box.
        let (i, t) = ray_hit(&set, DVec3::new(0.5, 0.5, 0.7), -dir).unwrap();
        assert_eq!((i, t), (1, 0.0));
        assert!(ray_hit(&set, DVec3::new(0.9, 0.9, 1.0), dir).is_none());
    }

    #[test]
    fn in_a_slice_a_ray_hits_the_prism_and_the_cylinder_across_its_depth() {
        let mut disc = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
        disc.center = (0.3, 0.5, 0.0);
        let mut plate = spec(
            BodyShape::Box {
                half_extents: (0.1, 0.05, 0.0),
            },
            500.0,
        );
        plate.center = (0.7, 0.5, 0.0);
        let scene = Scene {
            kind: SceneKind::Smoke,
            domain: (1.0, 1.0, 0.04),
            bodies: vec![disc, plate],
            ..Default::default()
        };
        let set = BodySet::from_scene(&scene).unwrap();
        let dir = DVec3::new(0.0, 0.0, -1.0);
        // Looking along -z from z = 1: both enter through the slice's front, z = 0.04, even
        // off the disc's centre by more than a sphere's cap would allow at that depth.
        let (i, t) = ray_hit(&set, DVec3::new(0.38, 0.5, 1.0), dir).unwrap();
        assert_eq!(i, 0);
        assert!((t - 0.96).abs() < 1e-12, "t {t}");
        let (i, t) = ray_hit(&set, DVec3::new(0.79, 0.54, 1.0), dir).unwrap();
        assert_eq!(i, 1);
        assert!((t - 0.96).abs() < 1e-12, "t {t}");
        assert!(ray_hit(&set, DVec3::new(0.5, 0.5, 1.0), dir).is_none());
        // Along the slice, the disc is a circle in x-y.
        let (i, t) = ray_hit(&set, DVec3::new(0.0, 0.5, 0.02), DVec3::X).unwrap();
        assert_eq!(i, 0);
        assert!((t - 0.2).abs() < 1e-12);
    }
}
