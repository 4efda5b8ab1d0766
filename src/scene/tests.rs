//! The scene's unit tests: parsing, validation, defaults and the shipped scenes.

use super::*;

fn parse(s: &str) -> Result<Scene, SceneError> {
    Scene::parse(s, Path::new("test.ron"))
}

const OK: &str = "(domain: (1.0, 0.5, 0.5), resolution: (16, 8, 8), fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))])";

#[test]
fn minimal_scene_parses_with_defaults() {
    let s = parse(OK).unwrap();
    assert_eq!(s.dims(), [16, 8, 8]);
    assert!((s.h() - 1.0 / 16.0).abs() < 1e-12);
    assert_eq!(s.pressure.preconditioner, PreconditionerKind::Mg);
}

#[test]
fn syntax_error_reports_line_and_column() {
    let err = parse("(\n  domain: (1.0, 1.0 1.0),\n)").unwrap_err();
    match err {
        SceneError::Parse { line, col, .. } => {
            assert_eq!(line, 2);
            assert!(col > 1);
        }
        e => panic!("expected a parse error, got {e}"),
    }
}

#[test]
fn unknown_field_is_rejected() {
    let err = parse("(domian: (1.0, 1.0, 1.0))").unwrap_err().to_string();
    assert!(err.contains("domian"), "{err}");
}

#[test]
fn bad_values_are_rejected_with_the_field_named() {
    let cases = [
        ("resolution: (0, 8, 8)", "resolution"),
        ("domain: (-1.0, 0.5, 0.5)", "domain"),
        ("resolution: (16, 9, 8)", "cubes"),
        ("fluid: [Box(min: (2,2,2), max: (3,3,3))]", "outside"),
        (
            "fluid: [Sphere(center: (0.5,0.2,0.2), radius: 0.0)]",
            "radius",
        ),
        ("pressure: (tolerance: 0.0)", "tolerance"),
        ("pressure: (max_iterations: 0)", "max_iterations"),
        ("pic_ratio: 1.5", "pic_ratio"),
        ("particles_per_cell: 5", "particles_per_cell"),
    ];
    for (field, needle) in cases {
        let text = OK.replacen('(', &format!("({field}, "), 1);
        // later keys win in the struct; put the override after the defaults
        let text = if text.contains("resolution: (16, 8, 8)") && field.starts_with("resolution") {
            text.replace(", resolution: (16, 8, 8)", "")
        } else if field.starts_with("domain") {
            text.replace(", domain: (1.0, 0.5, 0.5)", "")
        } else if field.starts_with("fluid") {
            text.replace(", fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))]", "")
        } else {
            text
        };
        let err = parse(&text).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains(needle), "{field}: {err}");
    }
}

#[test]
fn transfer_parses_defaults_to_flip_and_is_checked() {
    assert_eq!(parse(OK).unwrap().transfer, TransferKind::Flip);
    let apic = OK.replacen('(', "(transfer: apic, ", 1);
    assert_eq!(parse(&apic).unwrap().transfer, TransferKind::Apic);
    let err = parse(&OK.replacen('(', "(transfer: mpm, ", 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("mpm") && err.contains("apic"), "{err}");
    let smoke = Scene {
        kind: SceneKind::Smoke,
        resolution: (16, 16, 1),
        ..Scene::default()
    };
    assert!(smoke.validate().is_ok());
    let err = Scene {
        transfer: TransferKind::Apic,
        ..smoke
    }
    .validate()
    .unwrap_err();
    assert!(err.contains("transfer"), "{err}");
}

#[test]
fn settings_a_smoke_scene_would_ignore_are_refused() {
    let smoke = Scene {
        kind: SceneKind::Smoke,
        resolution: (16, 16, 1),
        ..Scene::default()
    };
    let refused = |s: Scene, needle: &str| {
        let err = s.validate().unwrap_err();
        assert!(err.contains(needle), "{err}");
    };
    refused(
        Scene {
            volume_correction: false,
            ..smoke.clone()
        },
        "volume_correction applies to liquid scenes only",
    );
    refused(
        Scene {
            particle_spacing: 0.0,
            ..smoke.clone()
        },
        "particle_spacing applies to liquid scenes only",
    );
    let with = |f: &dyn Fn(&mut SmokeSettings)| {
        let mut s = smoke.clone();
        f(&mut s.smoke);
        s
    };
    refused(
        with(&|m| m.wall_temperature.bottom = Some(2.0)),
        "set smoke.temperature_diffusion above 0",
    );
    assert!(with(&|m| {
        m.wall_temperature.bottom = Some(2.0);
        m.temperature_diffusion = 1e-3;
    })
    .validate()
    .is_ok());
    refused(
        with(&|m| {
            m.wall_dye.top = Some(-0.5);
            m.dye_diffusion = 1e-3;
        }),
        "dye density cannot be negative, got -0.5",
    );
}

#[test]
fn unknown_preconditioner_is_rejected() {
    let text = OK.replacen('(', "(pressure: (preconditioner: amg), ", 1);
    assert!(parse(&text).is_err());
    assert!("amg".parse::<PreconditionerKind>().is_err());
    assert_eq!(
        "IP".parse::<PreconditionerKind>().unwrap(),
        PreconditionerKind::Ip
    );
}

#[test]
fn cell_count_saturates_instead_of_wrapping() {
    let mut s = parse(OK).unwrap();
    // 2^22 * 2^21 * 2^21 = 2^64 wraps to 0 in u64.
    s.resolution = (4_194_304, 2_097_152, 2_097_152);
    assert_eq!(s.cell_count(), u64::MAX);
    assert!(s.validate().is_err());
}

#[test]
fn particle_counts_match_seeding_and_the_bound_covers_them() {
    let text = OK.replace(
        "fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))]",
        "fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5)), Sphere(center: (0.7,0.3,0.25), radius: 0.15)], \
         solids: [Box(min: (0.2,0,0), max: (0.3,0.1,0.5))]",
    );
    let s = parse(&text).unwrap();
    let seeded = s.initial_state().positions.len() as u64;
    assert!(seeded > 0);
    assert_eq!(s.particle_count(), seeded);
    assert!(s.particle_bound() >= seeded);
    let per_shape = s.seeded_cells_per_shape();
    assert_eq!(per_shape.len(), 2);
    assert!(per_shape.iter().all(|n| *n > 0));
    let (solid, _) = s.solid_cells();
    assert_eq!(
        s.solid_cell_count(),
        solid.iter().filter(|c| **c != 0).count() as u64
    );
}

#[test]
fn a_smoke_obstacle_loads_as_a_kinematic_body_and_counts_towards_the_limit() {
    let smoke = |extra: &str| {
        format!("(kind: smoke, domain: (2.0, 1.0, 0.02), resolution: (32, 16, 1), {extra})")
    };
    let disc = "smoke: (obstacle: Some(Sphere(center: (1.2, 0.4, 0.0), radius: 0.1, \
                velocity: (0.3, -0.2, 0.5))))";
    let s = parse(&smoke(disc)).unwrap();
    assert!(s.smoke.obstacle.is_none());
    assert_eq!(s.bodies.len(), 1);
    let b = &s.bodies[0];
    assert_eq!(b.motion, BodyMotion::Kinematic);
    assert_eq!(b.shape, BodyShape::Sphere { radius: 0.1 });
    assert_eq!(b.center, (1.2, 0.4, 0.01));
    // A slice body moves in x-y only.
    assert_eq!(b.velocity, (0.3, -0.2, 0.0));
    // Written back out, the scene says `bodies` and no longer `obstacle`.
    let text = s.to_ron();
    assert!(
        !text.contains("obstacle") && text.contains("kinematic"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap().bodies, s.bodies);
    // After the scene's own bodies, as the last one.
    let both = format!(
        "{disc}, bodies: [(shape: Box(half_extents: (0.1, 0.1, 0.0)), center: (0.4, 0.5, 0.0))]"
    );
    let s = parse(&smoke(&both)).unwrap();
    assert_eq!(s.bodies.len(), 2);
    assert_eq!(s.bodies[0].motion, BodyMotion::Dynamic);
    assert_eq!(s.bodies[1].motion, BodyMotion::Kinematic);
    // The converted obstacle counts towards MAX_BODIES.
    let one = "(shape: Sphere(radius: 0.01), center: (0.5, 0.5, 0.0))";
    let full = format!("{disc}, bodies: [{}]", vec![one; MAX_BODIES].join(", "));
    let err = parse(&smoke(&full)).unwrap_err().to_string();
    assert!(
        err.contains("65 bodies") && err.contains("smoke.obstacle"),
        "{err}"
    );
    let fits = format!("bodies: [{}]", vec![one; MAX_BODIES].join(", "));
    assert_eq!(parse(&smoke(&fits)).unwrap().bodies.len(), MAX_BODIES);
    // The body it becomes is validated too, under the obstacle's name.
    let wide = "smoke: (obstacle: Some(Box(min: (0.1, 0.05, 0.0), max: (1.9, 0.95, 0.02))))";
    let err = parse(&smoke(wide)).unwrap_err().to_string();
    assert!(
        err.contains("smoke.obstacle") && err.contains("too large"),
        "{err}"
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_scene() {
    let s = parse(&format!("\u{feff}{OK}")).unwrap();
    assert_eq!(s.dims(), [16, 8, 8]);
}

#[test]
fn parse_errors_quote_the_line_at_fault() {
    let err = parse("(\n  domain: (1.0, 0.5, 0.5),\n  resolution: (16.5, 8, 8),\n)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("test.ron:3:"), "{err}");
    assert!(err.contains("resolution: (16.5, 8, 8)"), "{err}");
}

#[test]
fn values_beyond_f32_headroom_are_rejected() {
    let cases = [
        ("gravity: (0.0, -1e30, 0.0)", "gravity"),
        ("cfl: 1e-9", "cfl"),
        ("frame_dt: 1e-300", "frame_dt"),
        ("max_substeps: 4294967295", "max_substeps"),
        ("pressure: (tolerance: 1e-300)", "tolerance"),
        ("name: \"a\\u{7}b\"", "control character"),
        (
            "smoke: (buoyancy: 2.0)",
            "smoke settings apply to smoke scenes",
        ),
    ];
    for (field, needle) in cases {
        let text = OK.replacen('(', &format!("({field}, "), 1);
        let err = parse(&text).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains(needle), "{field}: {err}");
    }
}

#[test]
fn with_resolution_keeps_cubic_cells() {
    let s = parse(OK).unwrap().with_resolution(32);
    assert_eq!(s.dims(), [32, 16, 16]);
    s.validate().unwrap();
}
