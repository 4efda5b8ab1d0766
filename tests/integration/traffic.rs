//! What the host asks of the GPU, counted per thread (`eddy::gpu::Traffic`): a blocking
//! read is counted with its bytes, and the liquid's stages up to the volume correction
//! read back nothing but the substep's counters.

use crate::common;
use eddy::gpu::{read_buffer, storage_buffer, Traffic};
use eddy::scene::StandardProblem;
use eddy::sim::{Simulation, Stage, StageList};

#[test]
fn a_blocking_read_is_counted_with_its_bytes() {
    let ctx = common::gpu();
    let buf = storage_buffer(&ctx.device, "Traffic::probe", 4096);
    let before = Traffic::now();
    let _: Vec<u32> = read_buffer(&ctx, &buf).unwrap();
    let t = Traffic::now().since(before);
    assert_eq!(
        Traffic {
            wait_ns: 0,
            submit_ns: 0,
            ..t
        },
        Traffic {
            dispatches: 0,
            submits: 1,
            reads: 1,
            drains: 1,
            bytes_read: 4096,
            wait_ns: 0,
            submit_ns: 0,
        }
    );
    // The host's time in the submit and in the wait are measured (a clock tick at least).
    assert!(t.submit_ns > 0 && t.wait_ns > 0, "{t:?}");
}

/// Each stage's dispatches are counted (its solves' included): they add up to at most the
/// frame's (the clock's and the readbacks' copies are outside the stages), and the
/// pressure stage, with its multigrid iterations, has the most.
#[test]
fn dispatches_are_counted_by_stage() {
    let scene = StandardProblem::DamBreak.scene(16);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let before = Traffic::now();
    sim.step_frame().unwrap();
    let t = Traffic::now().since(before);
    let stages = &sim.dispatches_by_stage;
    eprintln!("{stages:?} of {}", t.dispatches);
    let sum: u64 = stages.iter().map(|x| x.1).sum();
    assert!(sum > 0 && sum <= t.dispatches, "{stages:?} of {t:?}");
    let most = stages.iter().max_by_key(|x| x.1).unwrap();
    assert_eq!(most.0, "pressure", "{stages:?}");
    assert!(stages.iter().any(|x| x.0 == "p2g" && x.1 > 0), "{stages:?}");
}

#[test]
fn stages_up_to_the_volume_correction_read_back_only_the_counters() {
    let scene = StandardProblem::DamBreak.scene(16);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let before = Traffic::now();
    sim.substep(0.25 * scene.frame_dt, Stage::MarkCells)
        .unwrap();
    let t = Traffic::now().since(before);
    assert_eq!(t.reads, 1, "{t:?}");
    assert!(t.dispatches >= 4, "{t:?}");
    // A whole substep reads more (the solves' convergence checks): counted, not hidden.
    let before = Traffic::now();
    sim.substep(0.25 * scene.frame_dt, Stage::last()).unwrap();
    let full = Traffic::now().since(before);
    eprintln!("16^3 dam break, one substep: {full:?}");
    assert!(
        full.reads > t.reads && full.dispatches > t.dispatches,
        "{full:?}"
    );
}

/// A substep without bodies reads back twice once the solve has a guess: the pressure
/// solve's final state (its first submit queues as many iterations as the last solve
/// needed, with the true residual behind them) and the end of the substep (the counters
/// with the stage timestamps). With `pressure.pipelined` the solve queues its guess plus
/// `pressure.margin` and its state comes back with the substep's end: once. The solve's
/// results are those of the chunked loop: the guess only moves the host's reads.
#[test]
fn a_substep_without_bodies_reads_back_twice_or_once_queued_ahead() {
    let mut scene = StandardProblem::DamBreak.scene(16);
    scene.pressure.pipelined = true;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.25 * scene.frame_dt;
    expect_reads(1, || {
        let rep = sim.substep(dt, Stage::last()).unwrap();
        let solve = rep.solve.as_ref().unwrap();
        assert!(solve.iterations > 0, "{solve:?}");
        assert!(solve.true_residual.unwrap() > 0.0, "{solve:?}");
    });
    scene.pressure.pipelined = false;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    expect_reads(2, || {
        let rep = sim.substep(dt, Stage::last()).unwrap();
        let solve = rep.solve.as_ref().unwrap();
        assert!(solve.iterations > 0, "{solve:?}");
        assert!(solve.true_residual.unwrap() > 0.0, "{solve:?}");
    });
}

/// A guess that falls short leaves the solve where it was: the same dam break with a
/// guess of one iteration (check_every 1 before the first solve) ends with the same
/// pressure, bit for bit, as one whose guess covers the whole solve.
#[test]
fn a_short_guess_changes_nothing_but_the_reads() {
    let run = |check_every: u32| {
        let mut scene = StandardProblem::DamBreak.scene(16);
        scene.pressure.check_every = check_every;
        first_solve(&scene)
    };
    let (a, pa) = run(1);
    let (b, pb) = run(1000);
    assert!(a.iterations > 2, "{a:?}");
    assert_eq!(a.iterations, b.iterations);
    assert_eq!(a.true_residual, b.true_residual);
    assert!(pa.iter().any(|&x| x != 0.0));
    assert_eq!(pa, pb);
}

/// The pressure stage is timed in two parts (its set-up pass, then its iterations from the
/// first chunk to the solve's end), reported together under the stage's name: a solve of
/// many iterations takes several times the stage time of a solve stopped after one.
#[test]
fn the_pressure_stage_is_reported_once_with_its_iterations() {
    let pressure_ms = |max_iterations: u32| {
        let mut scene = StandardProblem::DamBreak.scene(16);
        scene.pressure.preconditioner = eddy::scene::PreconditionerKind::Ip;
        scene.pressure.tolerance = 1e-7;
        scene.pressure.max_iterations = max_iterations;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        sim.substep(0.25 * scene.frame_dt, Stage::Boundary).unwrap();
        let report = sim.solve_pressure_again().unwrap();
        let t = sim.read_stage_timing().unwrap()?;
        assert!(
            t.stages.iter().all(|(n, _)| n != "pressure iterations"),
            "{t:?}"
        );
        Some((report.iterations, t.get("pressure")))
    };
    let (Some((one, short)), Some((many, long))) = (pressure_ms(1), pressure_ms(2000)) else {
        return; // an adapter without timestamps
    };
    assert_eq!(one, 1);
    assert!(many >= 20, "{many} iterations");
    assert!(short > 0.0);
    assert!(
        long > 3.0 * short,
        "{many} iterations took {long:.3} ms, 1 took {short:.3} ms"
    );
}

/// With rigid bodies in the solve (their strong coupling's term) the solve queues its guess
/// the same way, the term's K p for the true residual behind it (into z, which a solve
/// still running writes again before reading): a guess of one iteration (the loop goes on
/// after K p overwrote z), one that covers the solve short of the limit and one of the
/// whole limit end with the same solution and true residual, bit for bit, in the liquid
/// and in the smoke (whose closed box projects the term).
#[test]
fn with_bodies_a_guess_changes_nothing_but_the_reads() {
    for name in ["floating_bodies", "smoke_rigid_bodies"] {
        let run = |check_every: u32| {
            let mut scene = common::shipped(name, 16);
            scene.pressure.check_every = check_every;
            scene.pressure.max_iterations = 400;
            // A body thrown at the start, so the first solve has work (still air has none).
            scene.bodies[0].velocity = (0.5, 0.3, 0.0);
            first_solve(&scene)
        };
        let (a, pa) = run(1);
        let (b, pb) = run(200);
        let (c, pc) = run(400);
        assert!(a.iterations > 2 && a.iterations < 200, "{name}: {a:?}");
        for (x, px) in [(&b, &pb), (&c, &pc)] {
            assert_eq!(a.iterations, x.iterations, "{name}");
            assert_eq!(a.true_residual, x.true_residual, "{name}");
            assert_eq!(&pa, px, "{name}");
        }
        assert!(pa.iter().any(|&x| x != 0.0));
        eprintln!(
            "{name}: {} iterations, true residual {:e}",
            a.iterations,
            a.true_residual.unwrap()
        );
    }
}

/// A substep with rigid bodies reads back twice once the solve has a guess: the solve's
/// final state and the end of the substep (the counters, the stage timestamps, the bodies'
/// force sums and the liquid's push-out sums together: the push-out's momentum, which the
/// bodies lose, is taken off them on the GPU as the next substep starts). Where a body may
/// seal a region of the smoke's closed box, the smoke also reads its solid flags for its
/// regions (at 16 x 24 the plank and the block are within two cells of each other): three.
/// With `pressure.pipelined` the solve's state comes back with the substep's end: one read
/// fewer.
#[test]
fn a_substep_with_bodies_reads_back_twice_or_once_queued_ahead() {
    for (pipelined, less) in [(false, 0), (true, 1)] {
        let mut scene = common::shipped("floating_bodies", 16);
        scene.pressure.pipelined = pipelined;
        let dt = 0.25 * scene.frame_dt;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        expect_reads(2 - less, || {
            sim.substep(dt, Stage::last()).unwrap();
        });
        let mut scene = common::shipped("smoke_rigid_bodies", 16);
        scene.pressure.pipelined = pipelined;
        let mut sim = eddy::sim::smoke::SmokeSimulation::new(common::gpu(), &scene).unwrap();
        let last = eddy::sim::smoke::SmokeStage::last();
        expect_reads(3 - less, || {
            sim.substep(dt, last).unwrap();
        });
    }
}

/// The smoke's regions come from its static solids alone while no body can seal one (each
/// body's bounds, two cells wider, clear of the walls, the static solids and the other
/// bodies): no read for them, and the same flow, bit for bit, as labelling the stamped
/// flags every substep. `smoke_rigid_bodies` at 32 x 48 has its three bodies clear (at
/// 21 x 32 the plank and the disc are within two cells of each other).
#[test]
fn smoke_bodies_clear_of_everything_need_no_labelling() {
    use eddy::sim::smoke::{SmokeSimulation, SmokeStage};
    let scene = common::shipped("smoke_rigid_bodies", 48);
    let dt = 0.5 * scene.frame_dt;
    let run = |always_label: bool| {
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        sim.bodies.as_mut().unwrap().coupling.always_label = always_label;
        // The substep's end read, which brings the solve back too (solves queued ahead,
        // the default), and the labelling's when it runs.
        let reads = if always_label { 2 } else { 1 };
        expect_reads(reads, || {
            sim.substep(dt, SmokeStage::last()).unwrap();
        });
        let vel: Vec<f32> = read_buffer(&sim.ctx, &sim.fields.vel).unwrap();
        let p: Vec<f32> = read_buffer(&sim.ctx, &sim.pcg.p).unwrap();
        let at = sim.bodies.as_ref().unwrap().set.bodies[1].position;
        (vel, p, at)
    };
    let (va, pa, ba) = run(false);
    let (vb, pb, bb) = run(true);
    assert!(va.iter().any(|&v| v != 0.0) && pa.iter().any(|&v| v != 0.0));
    assert_eq!(va, vb, "face velocities");
    assert_eq!(pa, pb, "pressure");
    assert_eq!(ba, bb, "the block's position");
}

/// Runs `substep` once (the first solve has no guess yet: chunks of `check_every` with
/// flag reads), then four times, each of which must read back `reads` times, but for at
/// most one whose guess fell short (the loop went on, counted).
fn expect_reads(reads: u64, mut substep: impl FnMut()) {
    substep();
    let mut misses = 0;
    for _ in 0..4 {
        let before = Traffic::now();
        substep();
        let t = Traffic::now().since(before);
        if t.reads > reads {
            misses += 1;
        } else {
            assert_eq!(t.reads, reads, "{t:?}");
        }
    }
    assert!(misses <= 1, "{misses} misses");
}

/// The first substep of `scene` (liquid or smoke): its solve and the pressure it left.
fn first_solve(scene: &eddy::scene::Scene) -> (eddy::sim::core::pressure::SolveReport, Vec<f32>) {
    let dt = 0.25 * scene.frame_dt;
    if scene.kind == eddy::scene::SceneKind::Smoke {
        let mut sim = eddy::sim::smoke::SmokeSimulation::new(common::gpu(), scene).unwrap();
        let last = eddy::sim::smoke::SmokeStage::last();
        let rep = sim.substep(dt, last).unwrap();
        (
            rep.solve.unwrap(),
            read_buffer(&sim.ctx, &sim.pcg.p).unwrap(),
        )
    } else {
        let mut sim = Simulation::new(common::gpu(), scene).unwrap();
        let rep = sim.substep(dt, Stage::last()).unwrap();
        (
            rep.solve.unwrap(),
            read_buffer(&sim.ctx, &sim.pcg.p).unwrap(),
        )
    }
}

/// The smoke's viscosity and its heat and dye diffusion touch different fields, so both
/// solves are queued before one read brings both back (the same results as one after the
/// other: stats.csv of `smoke_convection` byte-identical over 30 frames, benchmarks/history.md;
/// `diffusion::smoke_step_matches_the_reference` holds the pair to the f64 reference).
#[test]
fn the_smoke_s_two_diffusion_solves_share_one_read() {
    use eddy::sim::smoke::{SmokeSimulation, SmokeStage};
    let scene = common::shipped("smoke_convection", 32);
    let dt = 0.25 * scene.frame_dt;
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.substep(dt, SmokeStage::Mark).unwrap();
    expect_reads(1, || {
        let r = sim.run_diffusion(dt).unwrap();
        assert!(r.velocity.is_some() && r.scalars.is_some(), "{r:?}");
    });
}
