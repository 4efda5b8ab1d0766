//! The substep's clock on the GPU (src/sim/core/clock.rs): the kernel against the host's
//! rule, frames on the GPU clock against frames on the host's, and pipelined frames
//! (`pressure.pipelined`) against frames that read each solve.

use crate::common;
use eddy::gpu::{read_buffer, Traffic};
use eddy::scene::StandardProblem;
use eddy::sim::core::clock::{
    from_fixed, next_tick, start_words, substep_length, to_fixed, CflTerms, Clock, ClockParams,
    Tick,
};
use eddy::sim::core::fields::GridFields;
use eddy::sim::core::params::SimParams;
use eddy::sim::Simulation;

/// The clock on a 4^3 grid, for the kernel's own tests.
struct ClockRig {
    ctx: std::sync::Arc<eddy::gpu::GpuContext>,
    fields: GridFields,
    clock: Clock,
}

impl ClockRig {
    fn new() -> Self {
        let ctx = common::gpu();
        let fields = GridFields::new(
            &ctx.device,
            SimParams::new([4, 4, 4], 0.25, 0),
            eddy::sim::core::fields::FieldRoom::SOLVE,
        );
        let clock = Clock::new(&ctx.device, &fields);
        Self { ctx, fields, clock }
    }

    /// The tick the kernel takes after a substep that measured `speed` (m/s).
    fn tick(&self, speed: f32) -> Tick {
        let mut counters = vec![0u32; eddy::gpu::constants::COUNTERS];
        counters[eddy::gpu::constants::COUNTER_MAX_SPEED] = speed.to_bits();
        let ctx = &self.ctx;
        ctx.queue
            .write_buffer(&self.fields.counters, 0, bytemuck::cast_slice(&counters));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.clock.record(&mut enc, &self.fields);
        ctx.submit(enc.finish());
        Tick::from_words(&read_buffer::<u32>(ctx, &self.clock.out).unwrap())
    }
}

#[test]
fn the_gpu_clock_takes_the_host_rule() {
    // The kernel reads the largest speed from the counters and writes the substep's length
    // into SimParams::dt; the host's rule (f64) decides the same length to f32 and the same
    // end of frame: a CFL step well inside the frame, one that leaves a sliver (taken
    // whole), one past the frame's end, and max_substeps reached. The frame's rest is the
    // GPU's, in fixed point: it goes down by each substep exactly, and a substep recorded
    // after the frame's end does not run.
    let rig = ClockRig::new();
    let (ctx, fields, clock) = (&rig.ctx, &rig.fields, &rig.clock);
    let terms = CflTerms {
        cfl_h: 1.5 * 0.03125,
        accel: (0.03125f64 * 9.81).sqrt(),
        cap: None,
    };
    let frame = 1.0 / 30.0;
    let max_substeps = 6;
    // (speed, remaining, substeps begun before)
    let cases = [
        (2.3, frame, 1),
        (2.3, 0.0172, 1),
        (0.01, 0.004, 1),
        (4.0, frame, max_substeps - 1),
    ];
    let tick_of = |speed: f64| rig.tick(speed as f32);
    for (speed, remaining, started) in cases {
        clock.start_frame(&ctx.queue, terms, remaining, started, max_substeps);
        let tick = tick_of(speed);
        let params: Vec<SimParams> = read_buffer(ctx, &fields.params_buffer).unwrap();
        let cfl = terms.dt(speed as f32 as f64);
        let force = started + 1 >= max_substeps;
        let dt = substep_length(cfl, remaining, force);
        let rel = |a: f64, b: f64| (a - b).abs() / b;
        eprintln!("speed {speed}, remaining {remaining}, force {force}: {tick:?}, host {dt}");
        assert!(tick.ran, "{tick:?}");
        assert_eq!(tick.started, started + 1);
        assert!(rel(tick.cfl as f64, cfl) < 1e-6, "{tick:?} against {cfl}");
        assert!(rel(tick.dt as f64, dt) < 1e-6, "{tick:?} against {dt}");
        assert_eq!(tick.last, dt >= remaining, "{tick:?}");
        assert_eq!(params[0].dt, tick.dt, "SimParams::dt");
        if tick.last {
            // Recorded past the frame's end: it does not run and leaves dt alone.
            let after = tick_of(speed);
            assert!(!after.ran && !after.last, "{after:?}");
            let params: Vec<SimParams> = read_buffer(ctx, &fields.params_buffer).unwrap();
            assert_eq!(params[0].dt, tick.dt, "SimParams::dt after the frame's end");
        } else {
            assert_eq!(tick.rest, to_fixed(remaining) - to_fixed(tick.dt as f64));
        }
    }
}

#[test]
fn the_gpu_clock_s_fixed_point_rest_matches_its_host_mirror_bit_for_bit() {
    // What is left of a frame lives on the GPU as a u64 count of 2^-59 s: its rounding to
    // f32 (ties to even, in u32 arithmetic) and each substep's subtraction against the
    // host's mirror (`next_tick`: Rust's u64-to-f32 rounding), on 300 random frames'
    // states and speeds, from 1e-6 s to 10 s left, a tenth of them one or two substeps
    // from max_substeps; and on rests that sit exactly half-way between two f32s.
    let rig = ClockRig::new();
    let (ctx, clock) = (&rig.ctx, &rig.clock);
    let mut rng = eddy::scene::SplitMix64(27);
    let mut cases: Vec<(f64, f32, u32)> = (0..300)
        .map(|i| {
            let rest = 10f64.powf(-6.0 + 7.0 * rng.next_f64());
            let speed = (10f64.powf(-3.0 + 5.0 * rng.next_f64())) as f32;
            let started = if i % 10 == 0 { 4 + (i % 2) as u32 } else { 1 };
            (rest, speed, started)
        })
        .collect();
    // Half-way cases: an f32 with its next 1 bit below the mantissa, and the tie's even
    // neighbour.
    for m in [0x00c0_0001u64, 0x00c0_0002, 0x00ff_ffff] {
        let units = (m << 1 | 1) << 14;
        cases.push((units as f64 / 59f64.exp2(), 1.0, 1));
    }
    let mut differ = 0;
    for (i, &(rest, speed, started)) in cases.iter().enumerate() {
        let cfl_h = 0.01 + 0.05 * (i % 7) as f64;
        // A third of the frames with a capillary cap on the substep.
        let cap = (i % 3 == 0).then_some(0.003 + 0.01 * (i % 5) as f64);
        let terms = CflTerms {
            cfl_h,
            accel: 0.3,
            cap,
        };
        clock.start_frame(&ctx.queue, terms, rest, started, 6);
        let gpu = rig.tick(speed);
        let p = ClockParams {
            cfl_h: cfl_h as f32,
            accel: 0.3,
            max_substeps: 6,
            cap: cap.map_or(0.0, |c| c as f32),
        };
        let host = next_tick(&start_words(rest, started), &p, speed);
        if gpu != host || gpu.dt.to_bits() != host.dt.to_bits() {
            differ += 1;
            eprintln!("rest {rest:e} s, speed {speed}: GPU {gpu:?} against host {host:?}");
        }
        assert_eq!(from_fixed(to_fixed(rest)), rest as f32, "{rest:e}");
    }
    assert_eq!(differ, 0, "{differ} of {} ticks differ", cases.len());
}

/// What [`frames`] returns: each frame's stats, the particles' positions at the end, the
/// simulated time, and each frame's host reads and substeps.
type Frames = (
    Vec<eddy::sim::FrameStats>,
    Vec<[f32; 4]>,
    f64,
    Vec<(u64, u32)>,
);

/// Five frames of a 16^3 dam break (frames of 1/10 s, two to nine substeps each) with the
/// clock on the GPU and on the host, each solve read back before its projection.
fn frames(gpu_clock: bool) -> Frames {
    let (stats, pos, time, traffic) = run_frames(gpu_clock, false, 2, 5);
    let reads = traffic
        .iter()
        .zip(&stats)
        .map(|(t, s)| (t.reads, s.substeps))
        .collect();
    (stats, pos, time, reads)
}

/// `n` frames of the 16^3 dam break of [`frames`], with `pipelined` solves queued
/// `margin` iterations past the last count; each frame's stats and traffic.
fn run_frames(
    gpu_clock: bool,
    pipelined: bool,
    margin: u32,
    n: usize,
) -> (Vec<eddy::sim::FrameStats>, Vec<[f32; 4]>, f64, Vec<Traffic>) {
    let mut scene = StandardProblem::DamBreak.scene(16);
    scene.frame_dt = 0.1;
    scene.pressure.pipelined = pipelined;
    scene.pressure.margin = margin;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.gpu_clock_enabled = gpu_clock;
    let mut stats = Vec::new();
    let mut traffic = Vec::new();
    for _ in 0..n {
        let before = Traffic::now();
        let s = sim.step_frame().unwrap();
        traffic.push(Traffic::now().since(before));
        stats.push(s);
    }
    let state = sim.read_particles().unwrap();
    (stats, state.0, sim.time, traffic)
}

#[test]
fn pipelined_frames_are_the_same_frames_and_drain_the_gpu_once_each() {
    // From the second frame on (the first solve has no guess), the host reads nothing
    // inside a substep: it records the substeps it expects the frame to need, the GPU's
    // clock gating any past the frame's end, and the frame's counters, ticks and solves
    // come back together in one read that waits for everything submitted (two when the
    // frame needed more substeps than expected). The results are those of frames that
    // read each solve, bit for bit: the iterations queued past convergence return at once.
    let (a, pa, ta, fa) = run_frames(true, true, 2, 5);
    let (b, pb, tb, fb) = run_frames(true, false, 2, 5);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.csv_row(), y.csv_row(), "frame {}", x.frame);
        assert_eq!(x.unconverged_solves, 0, "frame {}", x.frame);
    }
    assert_eq!(pa, pb, "particles");
    assert_eq!(ta, tb, "time");
    eprintln!("pipelined {fa:?}\nreading each solve {fb:?}");
    for (t, s) in fa.iter().zip(&a).skip(1) {
        assert_eq!(t.reads, t.drains, "frame {}: {t:?}", s.frame);
        assert!(t.reads <= 2, "frame {}: {t:?}", s.frame);
    }
    let once = fa.iter().zip(&a).skip(1);
    assert!(
        once.filter(|(t, s)| s.substeps >= 3 && t.reads == 1)
            .count()
            >= 2,
        "{a:?}\n{fa:?}"
    );
    let reads: u64 = fa.iter().skip(1).map(|t| t.reads).sum();
    let substeps: u64 = a.iter().skip(1).map(|s| s.substeps as u64).sum();
    assert!(
        2 * reads < substeps,
        "{reads} reads for {substeps} substeps"
    );
    for (t, s) in fb.iter().zip(&b) {
        assert!(t.drains > s.substeps as u64, "frame {}: {t:?}", s.frame);
    }
}

#[test]
fn a_pipelined_solve_whose_queue_runs_out_stops_is_counted_and_the_next_queue_more() {
    // Two frames at a loose tolerance set the guess; the tolerance then tightens 1000x
    // (a live change, as the viewer makes). The next frame's solves need more iterations
    // than the guess (no margin here): each stops where its queue ends (its true residual
    // still taken), the frame counts them as unconverged, and the guess grows to what the
    // stopped solves' residual histories say the tolerance needs, so the next frame
    // converges again. Reading each solve instead, no frame has an unconverged solve.
    let run = |pipelined: bool| {
        let mut scene = StandardProblem::DamBreak.scene(16);
        scene.frame_dt = 0.1;
        scene.pressure.pipelined = pipelined;
        scene.pressure.margin = 0;
        scene.pressure.tolerance = 1e-2;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let mut rows = Vec::new();
        for f in 0..6 {
            if f == 2 {
                scene.pressure.tolerance = 1e-5;
                sim.apply_live_settings(&scene).unwrap();
            }
            let s = sim.step_frame().unwrap();
            let per = s.pcg_iterations_total as f64 / s.substeps as f64;
            rows.push((s.substeps, s.unconverged_solves, s.pcg_max_residual, per));
        }
        rows
    };
    let a = run(true);
    eprintln!("substeps, stopped solves, worst residual per frame: {a:?}");
    // The frame the tolerance tightens in: every solve stopped, above the tolerance.
    assert_eq!(a[2].1, a[2].0, "{a:?}");
    assert!(a[2].2 > 1e-5 && a[2].2.is_finite(), "{a:?}");
    // The frame after queues what the stopped histories asked for and converges.
    assert!(a[3..].iter().all(|r| r.1 == 0 && r.2 <= 1e-5), "{a:?}");
    let b = run(false);
    assert!(b.iter().all(|r| r.1 == 0), "{b:?}");
}

#[test]
fn frames_on_the_gpu_clock_match_the_host_clock_with_fewer_reads() {
    // The same substeps, the same time, the same particles but for what the substeps'
    // lengths differ by: the GPU takes the rule in f32, the host in f64. The first length
    // that differs does so by under an ulp of f32; from there the two runs' states and
    // lengths drift apart (up to ~35 ulps, 2e-6 relative, over 33 substeps; each frame's
    // last substep takes up the difference), and the splash amplifies it: measured
    // 2.5e-4 m (1/250 of a cell) after 33 substeps. A frame whose solves keep their guess reads once per substep and once at
    // its end (the counters of a substep come back with the next one's solve) instead of
    // twice per substep.
    let (a, pa, ta, ra) = frames(true);
    let (b, pb, tb, rb) = frames(false);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.substeps, y.substeps, "frame {}", x.frame);
        assert_eq!(x.fluid_cells, y.fluid_cells, "frame {}", x.frame);
        let rel = (x.kinetic_energy - y.kinetic_energy).abs() / y.kinetic_energy;
        assert!(
            rel < 1e-3,
            "frame {}: energy {} against {}",
            x.frame,
            x.kinetic_energy,
            y.kinetic_energy
        );
    }
    assert!((ta - tb).abs() < 1e-12, "time {ta} against {tb}");
    let moved = pa
        .iter()
        .zip(&pb)
        .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).abs()).fold(0.0f32, f32::max))
        .fold(0.0f32, f32::max);
    eprintln!(
        "largest difference of a particle's position: {moved:e} m; reads {ra:?} against {rb:?}"
    );
    assert!(moved < 1e-3, "{moved}");
    assert!(
        ra.iter().any(|&(r, s)| s >= 2 && r == s as u64 + 1),
        "on the GPU clock, reads and substeps per frame: {ra:?}"
    );
    assert!(
        rb.iter().any(|&(r, s)| s >= 2 && r == 2 * s as u64),
        "on the host clock, reads and substeps per frame: {rb:?}"
    );
    let sum = |r: &[(u64, u32)]| r.iter().map(|x| x.0).sum::<u64>();
    assert!(sum(&ra) < sum(&rb), "{ra:?} against {rb:?}");
}

#[test]
fn smoke_frames_with_diffusion_on_the_gpu_clock_match_the_host_clock() {
    // The convection box (viscosity, heat diffusion) at 32 x 16, frames of 1/5 s: the
    // diffusion solves take their coefficient from the substep's dt on the GPU, and each
    // substep's solve reports stay with that substep although its counters come back with
    // the next one's solve (`Mode::Host`): the same substeps and viscosity iterations per
    // frame as on the host's clock, the dye to f32 rounding of the substeps' lengths.
    use eddy::sim::smoke::SmokeSimulation;
    use eddy::sim::ModeColumns;
    let run = |gpu_clock: bool| {
        let mut scene = common::shipped("smoke_convection", 32);
        scene.frame_dt = 0.2;
        // Each solve read back on both clocks (queued ahead, the host's clock reads a
        // solve with its substep's end, while the GPU clock's diffusion solves read while
        // recording: a comparison of the two settings, not of the clocks).
        scene.pressure.pipelined = false;
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        sim.gpu_clock_enabled = gpu_clock;
        let mut rows = Vec::new();
        for _ in 0..6 {
            let before = Traffic::now();
            let s = sim.step_frame().unwrap();
            let reads = Traffic::now().since(before).reads;
            let ModeColumns::Smoke(c) = &s.columns else {
                panic!("smoke columns")
            };
            rows.push((s.substeps, c.viscosity_iterations, c.dye_total, reads));
        }
        rows
    };
    let a = run(true);
    let b = run(false);
    eprintln!("GPU clock {a:?}\nhost clock {b:?}");
    assert!(a.iter().any(|r| r.0 >= 2), "{a:?}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.0, y.0, "substeps");
        assert!(
            x.1.abs_diff(y.1) <= x.0,
            "viscosity iterations {x:?} against {y:?}"
        );
        assert!(x.1 > 0, "{x:?}");
        assert!(
            (x.2 - y.2).abs() <= 1e-4 * y.2.abs(),
            "dye {x:?} against {y:?}"
        );
    }
    let reads = |r: &[(u32, u32, f64, u64)]| r.iter().map(|x| x.3).sum::<u64>();
    assert!(reads(&a) < reads(&b), "{a:?} against {b:?}");
}

#[test]
fn pipelined_smoke_frames_are_the_same_frames_and_drain_the_gpu_once_each() {
    // The plume at 32 x 48 with frames of 1/10 s (two or more substeps each): pipelined
    // from the second frame on, the same stats and dye as reading each solve.
    use eddy::sim::smoke::SmokeSimulation;
    let run = |pipelined: bool| {
        let mut scene = common::shipped("smoke_plume", 48);
        scene.frame_dt = 0.1;
        scene.pressure.pipelined = pipelined;
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        let mut rows = Vec::new();
        for _ in 0..4 {
            let before = Traffic::now();
            let s = sim.step_frame().unwrap();
            rows.push((s.csv_row(), s.substeps, Traffic::now().since(before)));
        }
        let dye: Vec<f32> = sim.read_dye().unwrap().iter().flatten().copied().collect();
        (rows, dye)
    };
    let (a, da) = run(true);
    let (b, db) = run(false);
    assert!(da.iter().any(|&d| d != 0.0));
    assert_eq!(da, db, "dye");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.0, y.0);
    }
    for (_, substeps, t) in &a[1..] {
        assert!(*substeps >= 2, "{a:?}");
        assert_eq!(t.reads, t.drains, "{t:?}");
        assert!(t.reads <= 2, "{t:?}");
    }
    assert_eq!(a.last().unwrap().2.reads, 1, "{a:?}");
}

#[test]
fn substeps_recorded_past_the_frame_s_end_change_nothing() {
    // A pipelined frame on the GPU clock records the substeps it expects; those past the
    // frame's end must not run. Made to record at least 12 per frame (frames of 2 to 9
    // substeps), a dam break and a plume give the same rows, particles, dye and tracers
    // (their trail's ring slot included) as frames that record what they need, with one
    // read per frame; the dam break keeps its solves' vectors and warm starts' guesses (as
    // the viewer and the solver lab do), and the last solve's are the same too.
    use eddy::sim::smoke::SmokeSimulation;
    let liquid = |ahead: u32| {
        let mut scene = StandardProblem::DamBreak.scene(16);
        scene.frame_dt = 0.1;
        scene.pressure.warm_start = true;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        sim.keep_solver_vectors();
        sim.keep_initial_guess(true);
        let mut rows = Vec::new();
        for _ in 0..4 {
            sim.record_ahead_at_least(ahead);
            let before = Traffic::now();
            let s = sim.step_frame().unwrap();
            rows.push((s.csv_row(), Traffic::now().since(before).reads));
        }
        let ctx = sim.ctx.clone();
        let mut vectors: Vec<Vec<f32>> = [&sim.pcg.b, &sim.pcg.r, &sim.pcg.z]
            .into_iter()
            .map(|v| sim.solver_vector(v).unwrap().read(&ctx).unwrap())
            .collect();
        vectors.push(sim.freeze_system().unwrap().x0.unwrap());
        let particles = sim.read_particles().unwrap().0;
        // Every dispatch of a substep recorded ahead went through the gate, in a handful
        // of distinct sizes (7 at 16^3): far from its capacity.
        let sizes = sim.gate_sizes();
        eprintln!("dispatch sizes gated: {sizes}");
        assert!(
            (4..eddy::gpu::constants::GATE_CAPACITY / 8).contains(&sizes),
            "{sizes}"
        );
        (rows, (particles, vectors), sim.skipped_substeps)
    };
    let (a, (pa, va), skipped) = liquid(12);
    let (b, (pb, vb), none) = liquid(0);
    assert!(va.iter().all(|v| v.iter().any(|&x| x != 0.0)));
    assert_eq!(va, vb, "the last solve's b, r, z and initial guess");
    eprintln!("liquid: {skipped} substeps skipped; {a:?}");
    assert!(skipped >= 12, "{skipped}");
    assert_eq!(none, 0);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.0, y.0);
    }
    assert!(a[1..].iter().all(|r| r.1 == 1), "{a:?}");
    assert!(pa.iter().any(|p| p[1] != pa[0][1]));
    assert_eq!(pa, pb, "particles");
    let smoke = |ahead: u32| {
        let mut scene = common::shipped("smoke_plume", 48);
        scene.frame_dt = 0.1;
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        let mut rows = Vec::new();
        for _ in 0..4 {
            sim.record_ahead_at_least(ahead);
            rows.push(sim.step_frame().unwrap().csv_row());
        }
        let dye: Vec<f32> = sim.read_dye().unwrap().iter().flatten().copied().collect();
        let tracers = sim.read_tracers().unwrap();
        (rows, dye, tracers, sim.trail_slot(), sim.skipped_substeps)
    };
    let a = smoke(12);
    let b = smoke(0);
    eprintln!("smoke: {} substeps skipped, trail slot {}", a.4, a.3);
    assert!(a.4 >= 12, "{}", a.4);
    assert_eq!(a.0, b.0, "rows");
    assert!(a.1.iter().any(|&d| d != 0.0));
    assert_eq!(a.1, b.1, "dye");
    assert_eq!(a.2, b.2, "tracers");
    assert_eq!(a.3, b.3, "the trail's slot");
}

/// The rows, dye or particles, and traffic of `frames` frames of a diffusing scene with
/// `pressure.pipelined` on or off.
type DiffusingRun = (Vec<(String, u32, Traffic, u32)>, Vec<f32>);

fn diffusing_frames(mut scene: eddy::scene::Scene, pipelined: bool, frames: usize) -> DiffusingRun {
    use eddy::scene::SceneKind;
    use eddy::sim::smoke::SmokeSimulation;
    scene.pressure.pipelined = pipelined;
    let mut rows = Vec::new();
    let mut record = |step: &mut dyn FnMut() -> eddy::sim::FrameStats| {
        for _ in 0..frames {
            let before = Traffic::now();
            let s = step();
            let viscosity = s.viscosity_iterations();
            rows.push((
                s.csv_row(),
                s.substeps,
                Traffic::now().since(before),
                viscosity,
            ));
        }
    };
    let state = if scene.kind == SceneKind::Smoke {
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        record(&mut || sim.step_frame().unwrap());
        sim.read_dye().unwrap().iter().flatten().copied().collect()
    } else {
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        record(&mut || sim.step_frame().unwrap());
        sim.read_particles()
            .unwrap()
            .1
            .iter()
            .flatten()
            .copied()
            .collect()
    };
    (rows, state)
}

#[test]
fn pipelined_frames_queue_the_diffusion_solves_and_change_nothing() {
    // Once each diffusion solve has iterated (its count is the guess), a pipelined frame
    // queues it ahead like the pressure's, its state coming back with the substep's slot:
    // the convection box's viscosity and heat, and a viscous dam break's viscosity, give
    // the same stats and fields as reading each solve, and those frames read the GPU once
    // (their slots, at the frame's end).
    let mut viscous = StandardProblem::DamBreak.scene(16);
    viscous.viscosity = 0.002;
    viscous.frame_dt = 0.05;
    let mut convection = common::shipped("smoke_convection", 32);
    convection.frame_dt = 0.2;
    for scene in [convection, viscous] {
        let (a, sa) = diffusing_frames(scene.clone(), true, 5);
        let (b, sb) = diffusing_frames(scene.clone(), false, 5);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0, "{}", scene.name);
        }
        assert!(sa.iter().any(|&x| x != 0.0), "{}", scene.name);
        let differ = sa.iter().zip(&sb).filter(|(x, y)| x != y).count();
        assert_eq!(differ, 0, "{}: {differ} values differ", scene.name);
        // The viscosity solves iterated in every frame after the first.
        assert!(a[1..].iter().all(|r| r.3 > 0), "{a:?}");
        let (_, substeps, t, _) = a.last().unwrap();
        assert!(*substeps >= 2, "{}: {a:?}", scene.name);
        assert_eq!(t.drains, 1, "{}: {t:?}", scene.name);
        assert_eq!(t.reads, 1, "{}: {t:?}", scene.name);
        let (_, _, u, _) = b.last().unwrap();
        assert!(u.reads > t.reads, "{}: {u:?} against {t:?}", scene.name);
    }
}
