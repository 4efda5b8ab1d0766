//! Surface tension (src/sim/core/tension.rs): the GPU's curvature and the right-hand side's
//! jump against their f64 references (src/reference/tension.rs) on a blob that is not a
//! sphere, and the scenes it is refused in.

use crate::common;
use eddy::gpu::read_buffer;
use eddy::reference::{tension, Grid, FLUID};
use eddy::scene::{Scene, SceneKind, Shape};
use eddy::sim::{Simulation, Stage};

/// A sphere fused with a box, at rest without gravity: a level set with corners, flat
/// faces and two curvatures.
fn blob(sigma: f64) -> Scene {
    Scene {
        name: format!("tension blob, sigma {sigma}"),
        domain: (0.04, 0.04, 0.04),
        resolution: (16, 16, 16),
        gravity: (0.0, 0.0, 0.0),
        fluid: vec![
            Shape::Sphere {
                center: (0.017, 0.02, 0.02),
                radius: 0.009,
                velocity: (0.0, 0.0, 0.0),
            },
            Shape::Box {
                min: (0.018, 0.012, 0.014),
                max: (0.031, 0.024, 0.027),
                velocity: (0.0, 0.0, 0.0),
            },
        ],
        surface_tension: sigma,
        ..Scene::default()
    }
}

#[test]
fn the_curvature_and_the_jump_match_their_references() {
    let ctx = common::gpu();
    let dt = 1e-3;
    let run = |sigma: f64| {
        let s = blob(sigma);
        let mut sim = Simulation::new(ctx.clone(), &s).unwrap();
        sim.substep(dt, Stage::Pressure).unwrap();
        let b: Vec<f32> = sim.pcg.b.read(&ctx).unwrap();
        (sim, b)
    };
    let (with, b) = run(0.072);
    let (_, b0) = run(0.0);
    let f = &with.fields;
    let g = Grid {
        nx: 16,
        ny: 16,
        nz: 16,
        h: 0.04 / 16.0,
    };
    let surface: Vec<f64> = read_buffer::<f32>(&ctx, &f.surface)
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    let types: Vec<u8> = read_buffer::<u32>(&ctx, &f.cell_type)
        .unwrap()
        .iter()
        .map(|&t| t as u8)
        .collect();
    let gpu: Vec<f64> = read_buffer::<f32>(&ctx, &f.curvature)
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    let reference = tension::curvature(&g, &surface);
    // Where the level set has a gradient worth the name (within two cells of the surface),
    // the f32 differences agree to a small part of the largest curvature, 1/h.
    let mut compared = 0;
    let mut worst = 0.0f64;
    for c in 0..g.cells() {
        if reference[c] == 0.0 && gpu[c] == 0.0 {
            continue;
        }
        let err = (gpu[c] - reference[c]).abs() * g.h;
        if (0.15..0.85).contains(&surface[c]) {
            compared += 1;
            worst = worst.max(err);
        }
    }
    eprintln!("curvature: {compared} cells near the surface, worst |error| h = {worst:.2e}");
    assert!(compared > 200, "{compared}");
    assert!(worst < 1e-3, "{worst}");
    let curved = reference.iter().filter(|k| k.abs() * g.h > 0.05).count();
    assert!(curved > 100, "a blob with curvature: {curved}");
    // The jump: what surface tension adds to b, against the reference from the GPU's own
    // curvature (so this part checks the jump alone).
    let jump = tension::jump_rhs(
        &g,
        &types,
        &surface,
        None,
        &gpu,
        (0.072 / eddy::sim::DENSITY, dt),
    );
    let scale = jump.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    let mut worst = 0.0f64;
    for c in 0..g.cells() {
        let got = b[c] as f64 - b0[c] as f64;
        let err = (got - jump[c]).abs();
        if types[c] != FLUID {
            assert_eq!(got, 0.0, "cell {c} is not FLUID");
        }
        // b itself is -h^2 div u, at rest 0: the difference is the jump to f32's rounding.
        worst = worst.max(err / scale);
    }
    eprintln!("jump: largest {scale:.3e}, worst relative error {worst:.2e}");
    assert!(worst < 1e-5, "{worst}");
}

/// The viewer's curvature and Laplace-pressure views read what the surface tension
/// computed: the curvature buffer itself, and sigma kappa in pascals; zero without surface
/// tension.
#[test]
fn the_curvature_views_show_what_the_solve_used() {
    use eddy::sim::liquid::views::Field;
    let ctx = common::gpu();
    let sigma = 0.072;
    let mut sim = Simulation::new(ctx.clone(), &blob(sigma)).unwrap();
    sim.substep(1e-3, Stage::Pressure).unwrap();
    let gpu: Vec<f32> = read_buffer(&ctx, &sim.fields.curvature).unwrap();
    let view = sim.read_field(Field::Curvature).unwrap();
    assert_eq!(view.dims, [16, 16, 16]);
    assert_eq!(view.values, gpu);
    assert!(gpu.iter().any(|k| k.abs() > 10.0), "a curved blob");
    let laplace = sim.read_field(Field::LaplacePressure).unwrap();
    for (p, k) in laplace.values.iter().zip(&gpu) {
        let want = sigma * *k as f64;
        assert!(
            (*p as f64 - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{p} against {want}"
        );
    }
    let plain = Simulation::new(ctx, &blob(0.0)).unwrap();
    for f in [Field::Curvature, Field::LaplacePressure] {
        assert!(plain
            .read_field(f)
            .unwrap()
            .values
            .iter()
            .all(|&v| v == 0.0));
    }
}

#[test]
fn surface_tension_is_refused_where_it_means_nothing() {
    let mut smoke = Scene {
        kind: SceneKind::Smoke,
        resolution: (16, 16, 1),
        domain: (1.0, 1.0, 1.0 / 16.0),
        surface_tension: 0.07,
        ..Scene::default()
    };
    let err = smoke.validate().unwrap_err();
    assert!(err.contains("surface_tension"), "{err}");
    smoke.surface_tension = 0.0;
    smoke.validate().unwrap();
    let mut s = blob(-0.01);
    assert!(s.validate().unwrap_err().contains("surface_tension"));
    s.surface_tension = f64::NAN;
    assert!(s.validate().is_err());
    s.surface_tension = 0.072;
    s.pressure.refine = 1e-6;
    let err = s.validate().unwrap_err();
    assert!(err.contains("refine"), "{err}");
}

/// stats.csv says how many of a frame's substeps the capillary limit set: all of them in a
/// blob at rest (its speed's step is far longer), on the GPU's clock as on the host's; a
/// scene without surface tension keeps the header and rows it had.
#[test]
fn stats_count_the_substeps_the_capillary_limit_set() {
    use eddy::sim::FrameStats;
    let ctx = common::gpu();
    let s = blob(0.072);
    let cap = eddy::sim::core::tension::capillary_dt(0.072, eddy::sim::DENSITY, s.h()).unwrap();
    assert!(cap < s.frame_dt / 2.0, "the limit sets several substeps");
    let mut sim = Simulation::new(ctx.clone(), &s).unwrap();
    let header = FrameStats::csv_header_for(&s);
    assert!(header.ends_with(",capillary_substeps"));
    for _ in 0..3 {
        let st = sim.step_frame().unwrap();
        assert!(st.substeps >= 2, "{}", st.substeps);
        assert_eq!(st.capillary_substeps, Some(st.substeps));
        let row = st.csv_row();
        assert_eq!(row.split(',').count(), header.split(',').count());
        assert!(row.ends_with(&format!(",{}", st.substeps)));
    }
    // Thrown at 2 m/s the speed's step (cfl h / 2 m/s, 1.25 ms) is shorter than the limit
    // (5.9 ms): no substep is the limit's.
    let mut thrown = blob(0.072);
    for shape in thrown.fluid.iter_mut() {
        match shape {
            Shape::Sphere { velocity, .. } | Shape::Box { velocity, .. } => {
                *velocity = (2.0, 0.0, 0.0)
            }
            _ => unreachable!(),
        }
    }
    thrown.frame_dt = 0.005;
    let mut sim = Simulation::new(ctx.clone(), &thrown).unwrap();
    let st = sim.step_frame().unwrap();
    assert!(st.substeps >= 2, "{}", st.substeps);
    assert_eq!(st.capillary_substeps, Some(0));
    let plain = blob(0.0);
    assert_eq!(
        FrameStats::csv_header_for(&plain),
        FrameStats::csv_header(plain.kind)
    );
    let mut sim = Simulation::new(ctx, &plain).unwrap();
    let st = sim.step_frame().unwrap();
    assert_eq!(st.capillary_substeps, None);
    assert_eq!(
        st.csv_row().split(',').count(),
        FrameStats::csv_header(plain.kind).split(',').count()
    );
}
