//! Probes (src/sim/core/probes.wgsl): every kind of column against the f64 reference
//! (src/reference/probes.rs) on a flow in motion, in 3D and on a slice; and against
//! physics: still water's hydrostatic pressure at a point and on walls, its depth at a
//! gauge, the load on a block on the floor, and a uniform flow's velocity.

use crate::common::{self, shipped};
use eddy::gpu::read_buffer;
use eddy::reference::probes::{sample, ProbeFields};
use eddy::scene::probes::{ProbePlan, ProbeSpec};
use eddy::scene::{Scene, Shape};
use eddy::sim::Sim;

fn point(name: &str, at: (f64, f64, f64)) -> ProbeSpec {
    ProbeSpec::Point {
        name: name.into(),
        at,
        quantities: None,
    }
}

fn sensor(name: &str, at: (f64, f64, f64), radius: f64) -> ProbeSpec {
    ProbeSpec::Sensor {
        name: name.into(),
        at,
        radius,
    }
}

fn solid_force(name: &str, solid: usize) -> ProbeSpec {
    ProbeSpec::Force {
        name: name.into(),
        solid: Some(solid),
        body: None,
    }
}

/// Runs `frames` frames of `scene` and compares the last probe row with the reference
/// sampled from the fields the last substep left; returns the row.
fn against_reference(scene: &Scene, frames: u32) -> Vec<f64> {
    scene.validate().unwrap();
    let mut sim = Sim::new(common::gpu(), scene).unwrap();
    let mut st = None;
    for _ in 0..frames {
        st = Some(sim.step_frame().unwrap());
    }
    let st = st.unwrap();
    assert_eq!(st.probes.len(), st.substeps as usize, "a row per substep");
    let gpu_row = &st.probes.last().unwrap().values;
    let (core, dye) = match &sim {
        Sim::Liquid(s) => (&s.core, vec![]),
        Sim::Smoke(s) => (
            &s.core,
            read_buffer::<[f32; 4]>(&s.core.ctx, &s.mode.smoke.dye).unwrap(),
        ),
    };
    let ctx = &core.ctx;
    let params: Vec<f32> = read_buffer(ctx, &core.fields.params_buffer).unwrap();
    let p = core.fields.params;
    let fields = ProbeFields {
        n: p.n,
        h: p.h as f64,
        // SimParams::dt, as the GPU's clock left it.
        dt: params[6] as f64,
        gravity: p.gravity.map(|g| g as f64),
        cell_type: &read_buffer::<u32>(ctx, &core.fields.cell_type).unwrap(),
        phi: &read_buffer::<f32>(ctx, &core.pcg.p).unwrap(),
        vel: &read_buffer::<f32>(ctx, &core.fields.vel).unwrap(),
        surface: &read_buffer::<f32>(ctx, &core.fields.surface).unwrap(),
        dye: &dye,
    };
    let plan = ProbePlan::of(scene);
    let want = sample(&plan, &fields);
    let names = scene.probe_columns();
    assert_eq!(want.len(), gpu_row.len());
    for ((name, _), (g, w)) in names.iter().zip(gpu_row.iter().zip(&want)) {
        let scale = w.abs().max(1.0);
        assert!(
            (g - w).abs() <= 2e-5 * scale,
            "{name}: GPU {g} against the reference {w}"
        );
    }
    gpu_row.clone()
}

#[test]
fn probes_match_the_reference_3d() {
    let mut s = shipped("dam_break", 24);
    // A block on the floor in the surge's path, with sensors on its face and the walls.
    s.solids.push(Shape::Box {
        min: (0.6, 0.0, 0.125),
        max: (0.7, 0.125, 0.375),
        velocity: (0.0, 0.0, 0.0),
    });
    s.probes = vec![
        point("a", (0.2, 0.1, 0.21)),
        point("b", (0.45, 0.03, 0.3)),
        ProbeSpec::Gauge {
            name: "H1".into(),
            x: 0.3,
            z: Some(0.2),
        },
        ProbeSpec::Gauge {
            name: "H2".into(),
            x: 0.52,
            z: Some(0.26),
        },
        sensor("P1", (0.6, 0.05, 0.25), 0.03),
        sensor("P2", (0.0, 0.1, 0.3), 0.0),
        sensor("P3", (0.25, 0.0, 0.25), 0.04),
        solid_force("F", 0),
    ];
    let row = against_reference(&s, 12);
    // The surge has reached the block: it is pushed downstream.
    let fx = row[s
        .probe_columns()
        .iter()
        .position(|c| c.0 == "F.fx")
        .unwrap()];
    assert!(fx > 0.0, "the surge pushes the block along +x: {fx}");
}

#[test]
fn probes_match_the_reference_on_a_slice() {
    let mut s = shipped("smoke_obstacles", 48);
    s.probes = vec![
        point("c", (0.3, 0.4, 0.0)),
        point("d", (0.8, 0.2, 0.0)),
        sensor("P", (0.0, 0.3, 0.0), 0.05),
        solid_force("F", 0),
    ];
    against_reference(&s, 6);
}

/// A 16^3 tank half full of still water with a block on its floor.
fn still_water() -> Scene {
    Scene {
        name: "still".into(),
        domain: (0.5, 0.5, 0.5),
        resolution: (16, 16, 16),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.5, 0.25, 0.5),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![Shape::Box {
            min: (0.1875, 0.0, 0.1875),
            max: (0.3125, 0.0625, 0.3125),
            velocity: (0.0, 0.0, 0.0),
        }],
        probes: vec![
            point("c", (0.1, 0.1, 0.1)),
            ProbeSpec::Gauge {
                name: "H".into(),
                x: 0.4,
                z: Some(0.25),
            },
            sensor("wall", (0.5, 0.05, 0.25), 0.02),
            sensor("floor", (0.1, 0.0, 0.1), 0.0),
            sensor("top", (0.25, 0.0625, 0.25), 0.03),
            solid_force("F", 0),
        ],
        ..Scene::default()
    }
}

#[test]
fn still_water_reads_its_hydrostatic_pressure_and_depth() {
    let s = still_water();
    let row = against_reference(&s, 3);
    let col = |n: &str| row[s.probe_columns().iter().position(|c| c.0 == n).unwrap()];
    let rho_g = eddy::sim::DENSITY * 9.81;
    let depth = 0.25;
    let close = |name: &str, want: f64| {
        let got = col(name);
        assert!(
            (got - want).abs() <= 0.005 * want,
            "{name}: {got} against rho g d = {want} (0.5%)"
        );
    };
    close("c.p", rho_g * (depth - 0.1));
    close("wall", rho_g * (depth - 0.05));
    close("floor", rho_g * depth);
    close("top", rho_g * (depth - 0.0625));
    let h = s.h();
    assert!(
        (col("H") - depth).abs() <= 0.02 * h,
        "gauge {} against the depth {depth} (2% of a cell)",
        col("H")
    );
    // The water on the block's top weighs on it; its sides cancel.
    let area = 0.125 * 0.125;
    let want = -rho_g * (depth - 0.0625) * area;
    assert!(
        (col("F.fy") - want).abs() <= 0.005 * want.abs(),
        "F.fy {} against {want}",
        col("F.fy")
    );
    assert!(col("F.fx").abs() <= 1e-3 * want.abs() && col("F.fz").abs() <= 1e-3 * want.abs());
}

#[test]
fn a_uniform_flow_reads_its_velocity() {
    let u = (0.2, -0.1, 0.05);
    let s = Scene {
        name: "uniform".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (16, 16, 16),
        gravity: (0.0, 0.0, 0.0),
        fluid: vec![Shape::Box {
            min: (0.25, 0.25, 0.25),
            max: (0.75, 0.75, 0.75),
            velocity: u,
        }],
        probes: vec![ProbeSpec::Point {
            name: "c".into(),
            at: (0.47, 0.52, 0.49),
            quantities: Some(vec!["u".into(), "v".into(), "w".into()]),
        }],
        ..Scene::default()
    };
    let row = against_reference(&s, 1);
    // The grid holds the flow to P2G's fixed point (a momentum step of 2^-15 per unit
    // weight); the probe reads the grid exactly (the reference above).
    let step = 1.0 / eddy::gpu::constants::MOMENTUM_SCALE as f64;
    for (got, want) in row.iter().zip([u.0, u.1, u.2]) {
        assert!(
            (got - want).abs() <= step,
            "velocity probe {got} against the flow's {want}"
        );
    }
}

#[test]
fn bad_probes_are_refused_with_their_index() {
    let base = still_water();
    let bad = |probe: ProbeSpec, needle: &str| {
        let mut s = base.clone();
        s.probes.push(probe);
        let e = s.validate().unwrap_err();
        assert!(e.contains("probes[6]") && e.contains(needle), "{e}");
    };
    bad(point("out", (0.6, 0.1, 0.1)), "outside the domain");
    bad(point("in", (0.25, 0.03, 0.25)), "inside a solid");
    bad(point("c", (0.3, 0.3, 0.3)), "another probe has this name");
    bad(sensor("mid", (0.25, 0.3, 0.25), 0.01), "on no wall");
    bad(solid_force("G", 3), "solid 3");
    bad(
        ProbeSpec::Gauge {
            name: "H2".into(),
            x: 0.2,
            z: None,
        },
        "needs z",
    );
    bad(
        ProbeSpec::Point {
            name: "q".into(),
            at: (0.1, 0.1, 0.1),
            quantities: Some(vec!["dye".into()]),
        },
        "quantity \"dye\"",
    );
}

/// A force probe on a rigid body reads the body's pressure and viscous force and moment
/// of each substep, as the host moves it.
#[test]
fn a_body_force_probe_reads_the_body_load() {
    use eddy::scene::{BodyShape, BodySpec};
    let mut s = still_water();
    s.viscosity = 1e-3;
    s.bodies = vec![BodySpec::at_rest(
        BodyShape::Box {
            half_extents: (0.06, 0.04, 0.06),
        },
        (0.25, 0.3, 0.25),
        600.0,
    )];
    s.probes = vec![ProbeSpec::Force {
        name: "B".into(),
        solid: None,
        body: Some(0),
    }];
    s.validate().unwrap();
    let mut sim = Sim::new(common::gpu(), &s).unwrap();
    let mut st = None;
    for _ in 0..4 {
        st = Some(sim.step_frame().unwrap());
    }
    let st = st.unwrap();
    assert_eq!(st.probes.len(), st.substeps as usize);
    let b = &sim.bodies().unwrap().set.bodies[0];
    let (f, t) = (
        b.fluid_force + b.viscous_force,
        b.fluid_torque + b.viscous_torque,
    );
    let row = &st.probes.last().unwrap().values;
    assert_eq!(row, &vec![f.x, f.y, f.z, t.x, t.y, t.z]);
    // Falling into the pool, the liquid holds the block up.
    assert!(f.y > 0.0, "the liquid's force on the falling block: {f:?}");
}

/// `probe_every: frame` reads back only the frame's last row: the same row as a run that
/// keeps them all.
#[test]
fn a_row_per_frame_is_the_last_substeps_row() {
    let mut s = shipped("dam_break", 16);
    // Long frames: several substeps each.
    s.frame_dt = 0.05;
    s.probes = vec![
        point("a", (0.2, 0.1, 0.21)),
        sensor("P", (1.0, 0.05, 0.25), 0.02),
    ];
    let rows = |every| {
        let mut s = s.clone();
        s.probe_every = every;
        let mut sim = Sim::new(common::gpu(), &s).unwrap();
        (0..5)
            .map(|_| sim.step_frame().unwrap().probes)
            .collect::<Vec<_>>()
    };
    let all = rows(eddy::scene::probes::ProbeEvery::Substep);
    let last = rows(eddy::scene::probes::ProbeEvery::Frame);
    assert!(
        all.iter().any(|f| f.len() > 1),
        "some frame takes two substeps"
    );
    for (a, l) in all.iter().zip(&last) {
        assert_eq!(l.len(), 1);
        assert_eq!(a.last(), l.first());
    }
}

/// A sphere held still in still water feels its buoyancy, rho g V, upward. The force probe
/// sums the pressure on the faces of the cells whose centres lie inside the solid, whole,
/// cut faces or not: it reads the buoyancy of that staircase, 8.7% short of the sphere's
/// at 2.6 cells of radius, and the same on the staircase (`cut_faces: false`). Weighting
/// each face by its closed share is not enough: on a linear pressure the shares of the
/// faces inside the cut cells cancel, and it read 54% short; the cut cells' pressure has to
/// act where the surface lies in them.
#[test]
fn a_submerged_sphere_reads_its_buoyancy() {
    let radius = 0.08;
    let scene = |cut: bool| {
        let mut s = still_water();
        s.solids = vec![Shape::Sphere {
            center: (0.25, 0.12, 0.25),
            radius,
            velocity: (0.0, 0.0, 0.0),
        }];
        s.probes = vec![solid_force("F", 0)];
        s.cut_faces = cut;
        s
    };
    let want = eddy::sim::DENSITY * 9.81 * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    let h = scene(true).h();
    for cut in [true, false] {
        let s = scene(cut);
        let row = against_reference(&s, 3);
        let col = |n: &str| row[s.probe_columns().iter().position(|c| c.0 == n).unwrap()];
        let err = (col("F.fy") - want) / want;
        eprintln!(
            "cut faces {cut}: F.fy {} against rho g V = {want} ({:+.2}%)",
            col("F.fy"),
            100.0 * err
        );
        assert!(col("F.fx").abs() < 0.01 * want && col("F.fz").abs() < 0.01 * want);
        // The staircase's volume: the cells whose centres lie inside the sphere.
        let statics = s.static_solids();
        let cells = statics.flags.iter().filter(|f| **f != 0).count() as f64;
        let stair = eddy::sim::DENSITY * 9.81 * cells * h.powi(3);
        assert!(
            (col("F.fy") - stair).abs() < 0.01 * stair,
            "F.fy {} against the staircase's buoyancy {stair}",
            col("F.fy")
        );
        assert!(
            err.abs() < 0.10,
            "{:.2}% off the sphere's buoyancy",
            100.0 * err
        );
    }
}
