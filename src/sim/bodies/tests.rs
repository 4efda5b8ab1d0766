//! The bodies' unit tests (and helpers other modules' tests share): mass and inertia,
//! dynamics, contacts, state words.

use super::*;
use crate::scene::BodySpec;

const SPRING: GrabSpring = GrabSpring {
    stiffness: 1000.0,
    max_speed: 20.0,
};

pub(crate) fn spec(shape: BodyShape, density: f64) -> BodySpec {
    BodySpec {
        shape,
        center: (0.5, 0.5, 0.5),
        density,
        velocity: (0.0, 0.0, 0.0),
        angular_velocity: (0.0, 0.0, 0.0),
        rotation_deg: (0.0, 0.0, 0.0),
        restitution: 0.5,
        friction: 0.4,
        motion: BodyMotion::Dynamic,
    }
}

#[test]
fn box_and_sphere_mass_and_inertia() {
    let b = RigidBody::new(
        &spec(
            BodyShape::Box {
                half_extents: (0.1, 0.2, 0.3),
            },
            1000.0,
        ),
        None,
    );
    assert!((b.mass - 1000.0 * 0.2 * 0.4 * 0.6).abs() < 1e-12);
    let expect = b.mass / 12.0 * (0.4f64.powi(2) + 0.6f64.powi(2));
    assert!((b.inertia.x - expect).abs() < 1e-12);
    let s = RigidBody::new(&spec(BodyShape::Sphere { radius: 0.1 }, 500.0), None);
    assert!((s.volume() - 4.0 / 3.0 * std::f64::consts::PI * 1e-3).abs() < 1e-12);
    assert!((s.inertia.y - 0.4 * s.mass * 0.01).abs() < 1e-12);
    // A slice disc is a cylinder of the slice's depth.
    let d = RigidBody::new(&spec(BodyShape::Sphere { radius: 0.1 }, 500.0), Some(0.02));
    assert!((d.mass - 500.0 * std::f64::consts::PI * 0.01 * 0.02).abs() < 1e-12);
    assert!((d.inertia.z - 0.5 * d.mass * 0.01).abs() < 1e-12);
}

#[test]
fn rotated_box_contains_its_corners_only() {
    let mut s = spec(
        BodyShape::Box {
            half_extents: (0.2, 0.05, 0.05),
        },
        500.0,
    );
    s.rotation_deg = (0.0, 0.0, 90.0);
    let b = RigidBody::new(&s, None);
    assert!(b.contains(DVec3::new(0.5, 0.69, 0.5), false));
    assert!(!b.contains(DVec3::new(0.69, 0.5, 0.5), false));
}

#[test]
fn free_spinning_body_keeps_angular_momentum_and_energy() {
    let mut s = spec(
        BodyShape::Box {
            half_extents: (0.1, 0.05, 0.02),
        },
        800.0,
    );
    s.angular_velocity = (0.3, 2.0, 0.1);
    let scene = Scene {
        gravity: (0.0, 0.0, 0.0),
        bodies: vec![s],
        ..Default::default()
    };
    let mut set = BodySet::from_scene(&scene).unwrap();
    set.added_mass = 0.0;
    // Rigid dynamics alone: the forces all apply in `step`.
    set.scheme = crate::scene::CouplingScheme::Weak;
    let l0 = set.bodies[0].angular_momentum;
    let e = |b: &RigidBody| 0.5 * b.omega().dot(b.angular_momentum);
    let e0 = e(&set.bodies[0]);
    for _ in 0..1000 {
        set.step(1e-3);
    }
    let b = &set.bodies[0];
    assert!((b.angular_momentum - l0).length() < 1e-12);
    // The explicit rotation update drifts the energy slowly; a thousand steps of a
    // tumbling box stay within a percent.
    assert!((e(b) / e0 - 1.0).abs() < 0.01, "energy {} vs {e0}", e(b));
}

#[test]
fn a_grab_spring_pulls_the_point_to_the_mouse_and_turns_the_body() {
    let scene = Scene {
        gravity: (0.0, 0.0, 0.0),
        bodies: vec![spec(
            BodyShape::Box {
                half_extents: (0.15, 0.05, 0.05),
            },
            400.0,
        )],
        ..Default::default()
    };
    let mut set = BodySet::from_scene(&scene).unwrap();
    set.added_mass = 0.0;
    // Rigid dynamics alone: the forces all apply in `step`.
    set.scheme = crate::scene::CouplingScheme::Weak;
    let local = DVec3::new(0.15, 0.0, 0.0);
    let target = DVec3::new(0.6, 0.7, 0.5);
    set.bodies[0].grab = Some(Grab {
        local,
        target,
        stiffness: 400.0,
        max_speed: 20.0,
        frame_start: target,
    });
    let mut turned = 0.0f64;
    for _ in 0..3000 {
        set.step(1e-3);
        turned = turned.max(set.bodies[0].omega().z);
    }
    let b = &set.bodies[0];
    let p = b.position + b.orientation * local;
    assert!((p - target).length() < 0.01, "grabbed point at {p}");
    // Pulled up at its +x end, it turned counter-clockwise about z.
    assert!(turned > 0.5, "largest w_z {turned}");
}

pub(crate) fn set_of(specs: Vec<BodySpec>) -> BodySet {
    let scene = Scene {
        bodies: specs,
        ..Default::default()
    };
    BodySet::from_scene(&scene).unwrap()
}

#[test]
fn bodies_thinner_than_three_cells_are_found_dynamic_ones_only() {
    let flat = BodyShape::Box {
        half_extents: (0.08, 0.05, 0.08),
    };
    let mut held = spec(flat.clone(), 500.0);
    held.motion = BodyMotion::Fixed;
    let set = set_of(vec![
        spec(flat.clone(), 500.0),
        spec(BodyShape::Sphere { radius: 0.09 }, 500.0),
        held,
        spec(BodyShape::Sphere { radius: 0.1 }, 500.0),
    ]);
    // At h = 1/16: the box 1.6 cells thin, the small ball 2.88 across, the big one 3.2.
    let thin = set.thin_bodies(1.0 / 16.0);
    assert_eq!(thin.len(), 2, "{thin:?}");
    assert_eq!(thin[0].0, 0);
    assert!((thin[0].1 - 1.6).abs() < 1e-12, "{thin:?}");
    assert_eq!(thin[1].0, 1);
    assert!((thin[1].1 - 2.88).abs() < 1e-12, "{thin:?}");
    assert!(set.thin_bodies(1.0 / 32.0).is_empty());
    // A smoke slice's prisms are not floated.
    let mut slice = set_of(vec![spec(flat, 500.0)]);
    slice.slice = true;
    assert!(slice.thin_bodies(1.0 / 16.0).is_empty());
}

#[test]
fn a_lost_body_is_named_with_what_went_wrong() {
    let sphere = || BodyShape::Sphere { radius: 0.1 };
    let mut set = set_of(vec![spec(sphere(), 500.0), spec(sphere(), 500.0)]);
    set.bodies[1].position = DVec3::new(0.2, 0.8, 0.5);
    assert!(set.check(0.01, 0.1).is_ok());
    set.bodies[1].position.y = 1.2;
    let (i, what) = set.check(0.01, 0.1).unwrap_err();
    assert_eq!(i, 1);
    assert!(what.contains("outside the domain"), "{what}");
    set.bodies[1].position.y = 0.8;
    set.bodies[0].momentum = DVec3::new(f64::NAN, 0.0, 0.0);
    let (i, what) = set.check(0.01, 0.1).unwrap_err();
    assert_eq!(i, 0);
    assert!(what.contains("finite"), "{what}");
    // 20 m/s over 0.01 s is 0.2 m, twice what the substep may move it.
    set.bodies[0].momentum = DVec3::X * 20.0 * set.bodies[0].mass;
    let (i, what) = set.check(0.01, 0.1).unwrap_err();
    assert_eq!(i, 0);
    assert!(what.contains("moved up to 2.000e-1 m"), "{what}");
    assert!(set.check(0.004, 0.1).is_ok());
}

#[test]
fn a_kinematic_body_past_a_wall_is_put_back_before_it_bounces() {
    let mut s = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
    s.motion = BodyMotion::Kinematic;
    s.velocity = (50.0, 0.0, 0.0);
    let mut set = set_of(vec![s]);
    set.bodies[0].position.x = 1.5;
    set.step(1e-3);
    let b = &set.bodies[0];
    assert!(b.velocity().x < 0.0, "not bounced: {}", b.velocity());
    assert!(
        (b.position.x - (0.9 - 0.05)).abs() < 1e-12,
        "not back inside: {}",
        b.position
    );
}

#[test]
fn bodies_that_start_inside_each_other_or_a_solid_are_refused_by_name() {
    let at = |x: f64, y: f64| BodySpec {
        center: (x, y, 0.5),
        ..spec(
            BodyShape::Box {
                half_extents: (0.1, 0.1, 0.1),
            },
            500.0,
        )
    };
    assert!(set_of(vec![at(0.5, 0.5), at(0.2, 0.2)])
        .check_start(1e-6)
        .is_ok());
    // Faces touching is a contact, not an overlap.
    assert!(set_of(vec![at(0.5, 0.5), at(0.7, 0.5)])
        .check_start(1e-6)
        .is_ok());
    let e = set_of(vec![at(0.5, 0.5), at(0.2, 0.2), at(0.55, 0.5)])
        .check_start(1e-6)
        .unwrap_err()
        .to_string();
    assert!(e.contains("body 0 and body 2 by 1.500e-1 m"), "{e}");
    let scene = Scene {
        bodies: vec![at(0.2, 0.2), at(0.5, 0.5)],
        solids: vec![crate::scene::Shape::Box {
            min: (0.4, 0.0, 0.4),
            max: (0.6, 0.45, 0.6),
            velocity: (0.0, 0.0, 0.0),
        }],
        ..Default::default()
    };
    let e = BodySet::from_scene(&scene)
        .unwrap()
        .check_start(1e-6)
        .unwrap_err()
        .to_string();
    assert!(e.contains("body 1 and solid 0 by 5.000e-2 m"), "{e}");
    // A ball 0.05 m into a box's face, and one into its corner region but clear of it.
    let ball = |x: f64, y: f64| BodySpec {
        center: (x, y, 0.5),
        ..spec(BodyShape::Sphere { radius: 0.1 }, 500.0)
    };
    let e = set_of(vec![at(0.5, 0.5), ball(0.5, 0.35)])
        .check_start(1e-6)
        .unwrap_err()
        .to_string();
    assert!(e.contains("body 0 and body 1 by 5.000e-2 m"), "{e}");
    // Off the corner (0.4, 0.4) by 0.08 m on each axis: 0.113 m from it, clear of the
    // box though their bounding boxes overlap.
    assert!(set_of(vec![at(0.5, 0.5), ball(0.32, 0.32)])
        .check_start(1e-6)
        .is_ok());
}

#[test]
fn fixed_bodies_cannot_be_grabbed_and_kinematic_ones_follow_the_mouse() {
    let mut fixed = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
    fixed.motion = BodyMotion::Fixed;
    fixed.center = (0.2, 0.2, 0.2);
    let mut kin = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
    kin.motion = BodyMotion::Kinematic;
    kin.velocity = (0.3, 0.0, 0.0);
    let mut dynamic = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
    dynamic.center = (0.5, 0.2, 0.8);
    let scene = Scene {
        bodies: vec![fixed, kin, dynamic],
        ..Default::default()
    };
    let mut set = BodySet::from_scene(&scene).unwrap();
    assert!(!set.grab(0, DVec3::splat(0.2), SPRING));
    assert!(set.bodies[0].grab.is_none());
    assert!(set.grab(1, DVec3::new(0.55, 0.5, 0.5), SPRING));
    assert!(set.grab(2, DVec3::new(0.55, 0.2, 0.8), SPRING));
    let g = set.bodies[2].grab.unwrap();
    assert_eq!(g.stiffness, SPRING.stiffness);
    assert!((g.local - DVec3::new(0.05, 0.0, 0.0)).length() < 1e-12);
    // Grabbed, the kinematic body stops.
    assert_eq!(set.bodies[1].velocity(), DVec3::ZERO);
    // The mouse moves in two events within a frame of 0.1 s.
    set.move_grab(1, DVec3::new(0.6, 0.55, 0.5));
    let target = DVec3::new(0.7, 0.6, 0.4);
    set.move_grab(1, target);
    set.move_grab(2, target);
    // The kinematic body is there at once; the dynamic one only feels the spring.
    assert!((set.bodies[1].position - DVec3::new(0.65, 0.6, 0.4)).length() < 1e-12);
    assert!((set.bodies[2].position - DVec3::new(0.5, 0.2, 0.8)).length() < 1e-12);
    // Its faces move with the mouse's displacement over the frame ...
    set.begin_frame(0.1);
    let v = (target - DVec3::new(0.55, 0.5, 0.5)) / 0.1;
    assert!((set.bodies[1].velocity() - v).length() < 1e-12);
    // ... the kinematic body stays under the mouse through a step ...
    set.step(0.01);
    assert!((set.bodies[1].position - DVec3::new(0.65, 0.6, 0.4)).length() < 1e-12);
    // ... and once the mouse stops, the body is at rest for the fluid.
    set.begin_frame(0.1);
    assert_eq!(set.bodies[1].velocity(), DVec3::ZERO);
    // Moves made while paused do not count as motion when the run resumes.
    set.move_grab(1, target + DVec3::new(0.0, 0.1, 0.0));
    set.restart_grab_motion();
    set.begin_frame(0.1);
    assert_eq!(set.bodies[1].velocity(), DVec3::ZERO);
    set.move_grab(1, target);
    // A flick is capped.
    set.move_grab(1, target + DVec3::new(-0.5, 0.0, 0.0));
    set.begin_frame(1e-3);
    assert!((set.bodies[1].velocity().length() - SPRING.max_speed).abs() < 1e-9);
    // Let go, it moves on with the scene's velocity again.
    set.release(1, &scene);
    assert_eq!(set.bodies[1].velocity(), DVec3::new(0.3, 0.0, 0.0));
    assert!(set.bodies[1].grab.is_none());
}

#[test]
fn bad_bodies_are_refused_with_the_field_named() {
    let base = spec(BodyShape::Sphere { radius: 0.1 }, 500.0);
    let cases: Vec<(BodySpec, &str)> = vec![
        (
            BodySpec {
                density: 0.0,
                ..base.clone()
            },
            "density",
        ),
        (
            BodySpec {
                shape: BodyShape::Box {
                    half_extents: (0.1, -0.1, 0.1),
                },
                ..base.clone()
            },
            "half_extents",
        ),
        (
            BodySpec {
                center: (1.5, 0.5, 0.5),
                ..base.clone()
            },
            "outside the domain",
        ),
        (
            BodySpec {
                restitution: 1.5,
                ..base.clone()
            },
            "restitution",
        ),
        (
            BodySpec {
                shape: BodyShape::Sphere { radius: 0.6 },
                ..base.clone()
            },
            "too large",
        ),
    ];
    for (b, needle) in cases {
        let scene = Scene {
            fluid: vec![crate::scene::Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (1.0, 0.4, 1.0),
                velocity: (0.0, 0.0, 0.0),
            }],
            bodies: vec![base.clone(), b],
            ..Default::default()
        };
        let err = scene.validate().unwrap_err();
        assert!(
            err.contains("bodies[1]") && err.contains(needle),
            "{needle}: {err}"
        );
    }
    let too_many = Scene {
        fluid: vec![crate::scene::Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.4, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        bodies: vec![base; MAX_BODIES + 1],
        ..Default::default()
    };
    assert!(too_many.validate().unwrap_err().contains("at most 64"));
}
