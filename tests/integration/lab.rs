//! The solver lab (src/sim/lab/): a frozen system stepped on the GPU is the
//! simulation's solve bit for bit; going back is exact; the Lanczos condition estimate
//! against dense eigenvalues; `eddy bench --system` against the run that exported the
//! system and the in-process race; bad system folders.

use crate::common;

use crate::common::eddy;
use eddy::output::frozen::{load_frozen_system, save_frozen_system};
use eddy::scene::{PreconditionerKind, StandardProblem};
use eddy::sim::lab::{self, FrozenSystem, LabVectors, SolverLab};
use eddy::sim::{Simulation, Stage};
use std::path::PathBuf;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn same(a: &LabVectors, b: &LabVectors, what: &str) {
    same_but_d(a, b, what);
    assert_eq!(bits(&a.d), bits(&b.d), "{what}: d");
}

/// p, r, z and q: after a solve stopped at its iteration limit, d is not defined (the last
/// update_d's workgroups race the done flag its first workgroup sets; nothing reads d
/// after), so it is compared only where the solve converged.
fn same_but_d(a: &LabVectors, b: &LabVectors, what: &str) {
    for (name, x, y) in [
        ("p", &a.p, &b.p),
        ("r", &a.r, &b.r),
        ("z", &a.z, &b.z),
        ("q", &a.q, &b.q),
    ] {
        assert_eq!(x.len(), y.len(), "{what}: {name} length");
        let diff = x
            .iter()
            .zip(y.iter())
            .filter(|(u, v)| u.to_bits() != v.to_bits())
            .count();
        assert!(diff == 0, "{what}: {name} differs in {diff} cells");
        assert_eq!(bits(x), bits(y));
    }
}

/// The dam break's frame-0 system on an n^3 grid, before the projection, solved by the
/// simulation with `kind` stopped after `k` iterations; its vectors and the frozen system.
fn solved_by_the_simulation(
    n: u32,
    kind: PreconditionerKind,
    k: u32,
) -> (LabVectors, FrozenSystem) {
    let (v, sys, it) = solved_with(n, kind, 1e-7, k);
    assert_eq!(it, k, "{kind}");
    (v, sys)
}

/// The same to `tolerance` or `max` iterations; also the iterations the solve took.
fn solved_with(
    n: u32,
    kind: PreconditionerKind,
    tolerance: f64,
    max: u32,
) -> (LabVectors, FrozenSystem, u32) {
    let mut scene = StandardProblem::DamBreak.scene(n);
    scene.pressure.preconditioner = kind;
    scene.pressure.tolerance = tolerance;
    scene.pressure.max_iterations = max;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
    let report = sim.solve_pressure_again().unwrap();
    let k = report.iterations;
    // Read straight after the solve: r, z, d and q live in P2G's accumulators, which the
    // next substep's stages reuse.
    let rd = |b: &eddy::gpu::Region| -> Vec<f32> {
        let mut v: Vec<f32> = b.read(&sim.ctx).unwrap();
        v.truncate(sim.fields.num_cells() as usize);
        v
    };
    let v = LabVectors {
        p: rd(&eddy::gpu::Region::whole(sim.pcg.p.clone())),
        r: rd(&sim.pcg.r),
        z: rd(&sim.pcg.z),
        d: rd(&sim.pcg.d),
        q: rd(&sim.pcg.q),
    };
    let sys = sim.freeze_system().unwrap();
    assert_eq!(sys.solve.as_ref().map(|s| s.iterations), Some(k));
    (v, sys, k)
}

#[test]
fn stepped_iterations_are_the_solve_stopped_there_bit_for_bit() {
    let k = 4;
    for kind in PreconditionerKind::ALL {
        let (solved, sys) = solved_by_the_simulation(16, kind, k);
        // A lab with room for many more iterations, stepped one at a time.
        let mut lab = SolverLab::new(common::gpu(), &sys, kind, 1e-7).unwrap();
        for i in 1..=k {
            assert!(lab.step().unwrap(), "{kind}: stopped before iteration {i}");
        }
        assert_eq!(lab.iteration(), k);
        same_but_d(
            &lab.vectors().unwrap(),
            &solved,
            &format!("{kind}, stepped to {k}"),
        );
        // The solution the simulation stored is the frozen one.
        assert_eq!(bits(&sys.solution), bits(&solved.p));
        let rows = lab.rows();
        assert_eq!(rows.len(), k as usize + 1);
        assert!(
            rows[1..].iter().all(|r| r.alpha > 0.0 && r.beta > 0.0),
            "{rows:?}"
        );
        assert!(rows.iter().all(|r| r.true_residual.is_some()));
        // The true residual of the iterate is the recursive one up to f32 drift.
        let last = rows.last().unwrap();
        let t = last.true_residual.unwrap();
        assert!(
            (t - last.residual).abs() <= 0.05 * last.residual + 1e-6,
            "{kind}: {last:?}"
        );
        // A lab stopped at k (max_iterations = k) ends as the simulation's solve did.
        let mut capped =
            SolverLab::with_max_iterations(common::gpu(), &sys, kind, 1e-7, k).unwrap();
        capped.run_to_convergence(100).unwrap();
        assert_eq!(capped.iteration(), k);
        assert_eq!(
            capped.status(),
            eddy::sim::core::pressure::SolveStatus::IterationLimit
        );
        same_but_d(
            &capped.vectors().unwrap(),
            &solved,
            &format!("{kind}, capped at {k}"),
        );
        // The last V-cycle ran on the r of iteration k (a converged solve skips the
        // preconditioner at its last iteration, so this is checked at a cap).
        if kind == PreconditionerKind::Mg {
            let levels = capped.mg_levels().unwrap();
            assert!(levels.len() >= 2);
            assert_eq!(bits(&levels[0].rhs), bits(&solved.r));
            assert_eq!(bits(&levels[0].correction), bits(&solved.z));
            assert!(levels[1].rhs.iter().any(|&x| x != 0.0));
        }
        // To convergence: every vector, d included, and the same iteration count.
        let (solved, sys, iterations) = solved_with(16, kind, 1e-5, 2000);
        let mut lab = SolverLab::new(common::gpu(), &sys, kind, 1e-5).unwrap();
        lab.run_to_convergence(2000).unwrap();
        assert_eq!(
            lab.status(),
            eddy::sim::core::pressure::SolveStatus::Converged
        );
        assert_eq!(lab.iteration(), iterations, "{kind}");
        same(
            &lab.vectors().unwrap(),
            &solved,
            &format!("{kind}, converged"),
        );
    }
}

#[test]
fn back_recomputes_the_iteration_before_exactly() {
    let (_, sys) = solved_by_the_simulation(16, PreconditionerKind::Mg, 3);
    for kind in [PreconditionerKind::Mic0, PreconditionerKind::Mg] {
        let mut lab = SolverLab::new(common::gpu(), &sys, kind, 1e-7).unwrap();
        lab.run_to(4).unwrap();
        let before = lab.vectors().unwrap();
        let rows = lab.rows().to_vec();
        lab.step().unwrap();
        assert_eq!(lab.iteration(), 5);
        assert_eq!(lab.back().unwrap(), 4);
        same(
            &lab.vectors().unwrap(),
            &before,
            &format!("{kind}: back to 4"),
        );
        assert_eq!(lab.rows(), &rows[..]);
        // Restart with another preconditioner and come back.
        lab.restart(PreconditionerKind::Ip, 1e-5).unwrap();
        assert_eq!(lab.iteration(), 0);
        lab.restart(kind, 1e-7).unwrap();
        lab.run_to(4).unwrap();
        same(
            &lab.vectors().unwrap(),
            &before,
            &format!("{kind}: after restarts"),
        );
        let worst = lab.worst_cells(5, false).unwrap();
        assert_eq!(worst.len(), 5);
        assert!(worst.windows(2).all(|w| w[0].residual >= w[1].residual));
        assert!(worst
            .iter()
            .all(|w| w.cell_type == "fluid" && w.diagonal > 0.0));
        assert!((worst[0].residual - lab.rows()[4].residual).abs() <= 1e-6 * worst[0].residual);
    }
}

/// Eigenvalues of M^-1 A over the FLUID cells, M^-1 built densely by applying the GPU
/// preconditioner to unit vectors: those of A^1/2 M^-1 A^1/2 (symmetric).
fn dense_kappa(lab: &mut SolverLab) -> (f64, f64) {
    let sys = lab.system().clone();
    let rows: Vec<usize> = (0..sys.cells()).filter(|&c| sys.a[c][0] != 0.0).collect();
    let m = rows.len();
    let mut minv = nalgebra::DMatrix::<f64>::zeros(m, m);
    let mut a = nalgebra::DMatrix::<f64>::zeros(m, m);
    for (j, &c) in rows.iter().enumerate() {
        let mut e = vec![0f32; sys.cells()];
        e[c] = 1.0;
        let z = lab.apply_preconditioner(&e).unwrap();
        let ax = sys.apply_a_f64(&e.iter().map(|&v| v as f64).collect::<Vec<_>>());
        for (i, &r) in rows.iter().enumerate() {
            minv[(i, j)] = z[r] as f64;
            a[(i, j)] = ax[r];
        }
    }
    let minv = (&minv + minv.transpose()) * 0.5;
    let ea = nalgebra::SymmetricEigen::new(a);
    let half = &ea.eigenvectors
        * nalgebra::DMatrix::from_diagonal(&ea.eigenvalues.map(|l| l.max(0.0).sqrt()))
        * ea.eigenvectors.transpose();
    let s = &half * minv * &half;
    let s = (&s + s.transpose()) * 0.5;
    let e = nalgebra::SymmetricEigen::new(s).eigenvalues;
    let lo = e.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

#[test]
fn lanczos_condition_estimate_matches_dense_eigenvalues() {
    let (_, sys) = solved_by_the_simulation(8, PreconditionerKind::Mg, 2);
    for kind in PreconditionerKind::ALL {
        let mut lab = SolverLab::new(common::gpu(), &sys, kind, 1e-7).unwrap();
        lab.track_true_residual = false;
        let (lo, hi) = dense_kappa(&mut lab);
        let dense = hi / lo;
        lab.run_to_convergence(400).unwrap();
        let s = lab.spectrum().unwrap();
        let rel = (s.kappa - dense).abs() / dense;
        println!(
            "{kind}: {} fluid cells, {} iterations, Lanczos [{:.4}, {:.4}] kappa {:.3}, \
             dense [{lo:.4}, {hi:.4}] kappa {dense:.3} ({:.2}%), bound {:.1}",
            sys.fluid_cells(),
            s.steps,
            s.lambda_min,
            s.lambda_max,
            s.kappa,
            100.0 * rel,
            s.bound_iterations
        );
        assert!(
            rel <= 0.05,
            "{kind}: Lanczos kappa {} vs dense {dense}",
            s.kappa
        );
    }
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("eddy-lab-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn bench_system_counts_the_iterations_of_the_run_and_the_race() {
    let dir = temp("bench");
    let scene = dir.join("small.ron");
    std::fs::write(
        &scene,
        "(domain: (1.0, 0.5, 0.5), resolution: (16, 8, 8), \
         fluid: [Box(min: (0,0,0), max: (0.4,0.3,0.5))], pressure: (preconditioner: ip, tolerance: 1e-5))",
    )
    .unwrap();
    let out = dir.join("run");
    let sys_dir = dir.join("system");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let run = eddy(&[
        "run",
        &s(&scene),
        "--frames",
        "2",
        "--out",
        &s(&out),
        "--export-system",
        &s(&sys_dir),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for f in [
        "A.mtx",
        "b.mtx",
        "p.mtx",
        "cells.csv",
        "system.json",
        "A.f32x4",
        "b.f32",
    ] {
        assert!(sys_dir.join(f).exists(), "{f} missing");
    }
    let stats = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let mut lines = stats.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "pcg_iterations").unwrap();
    let last: Vec<&str> = lines.last().unwrap().split(',').collect();
    let run_iterations: u32 = last[col].parse().unwrap();

    let csv = dir.join("race.csv");
    let bench = eddy(&["bench", "--system", &s(&sys_dir), "--csv", &s(&csv)]);
    let stdout = String::from_utf8_lossy(&bench.stdout);
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    println!("{stdout}");
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut lines = table.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("preconditioner,iterations,final_residual,dispatches,time_ms"));
    let cli: Vec<(String, u32)> = lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[0].to_string(), c[1].parse().unwrap())
        })
        .collect();
    assert_eq!(cli.len(), PreconditionerKind::ALL.len());
    let ip = cli.iter().find(|(k, _)| k == "ip").unwrap().1;
    assert_eq!(
        ip, run_iterations,
        "bench --system ip vs the run's last solve"
    );
    let history = std::fs::read_to_string(dir.join("race_history.csv")).unwrap();
    assert!(history.starts_with("preconditioner,iteration,residual"));

    let sys = load_frozen_system(&sys_dir).unwrap();
    assert_eq!(sys.solve.as_ref().unwrap().iterations, run_iterations);
    let race = lab::race(common::gpu(), &sys, sys.settings.tolerance, 4000).unwrap();
    for row in &race {
        let c = cli
            .iter()
            .find(|(k, _)| k == row.preconditioner.name())
            .unwrap()
            .1;
        assert_eq!(row.iterations, c, "{}", row.preconditioner);
        let spec = row.spectrum.unwrap();
        assert_eq!(spec.steps as u32, row.iterations, "{}", row.preconditioner);
        assert!(spec.kappa >= 1.0);
        assert_eq!(row.history.len(), row.iterations as usize + 1);
    }
}

#[test]
fn a_bad_system_folder_is_one_clear_error() {
    let (_, sys) = solved_by_the_simulation(8, PreconditionerKind::Ip, 2);
    let good = temp("good");
    save_frozen_system(&good, &sys).unwrap();
    assert_eq!(load_frozen_system(&good).unwrap(), sys);
    let copy = |name: &str| {
        let d = temp(name);
        for e in std::fs::read_dir(&good).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
        }
        d
    };
    let json = |d: &PathBuf, from: &str, to: &str| {
        let p = d.join("system.json");
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(t.contains(from), "{from}");
        std::fs::write(&p, t.replacen(from, to, 1)).unwrap();
    };
    let expect = |d: &PathBuf, words: &str| {
        let e = load_frozen_system(d).unwrap_err();
        println!("{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(words), "{e}");
        assert!(e.starts_with("system folder "), "{e}");
    };
    let d = copy("missing");
    std::fs::remove_file(d.join("b.f32")).unwrap();
    expect(&d, "b.f32 is missing");
    let d = copy("nojson");
    std::fs::remove_file(d.join("system.json")).unwrap();
    expect(&d, "no system.json");
    let d = copy("version");
    json(&d, "\"version\": 4", "\"version\": 7");
    expect(&d, "format version 7");
    let d = copy("truncated");
    let a = std::fs::read(d.join("A.f32x4")).unwrap();
    std::fs::write(d.join("A.f32x4"), &a[..a.len() - 5]).unwrap();
    expect(&d, "truncated");
    let d = copy("size");
    let p = d.join("system.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["dims"][0] = serde_json::json!(sys.dims[0] + 1);
    // Edited without its checksum set anew: the edit is caught as damage.
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    expect(&d, "system.json fails its checksum");
    v["crc32"] = eddy::output::frozen::json_crc(&v).into();
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    expect(&d, "needs");
    let d = copy("checksum");
    let mut b = std::fs::read(d.join("b.f32")).unwrap();
    b[0] ^= 1;
    std::fs::write(d.join("b.f32"), &b).unwrap();
    expect(&d, "checksum");
    // Through the command line: a non-zero exit and the same one line.
    let out = eddy(&["bench", "--system", d.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fails its checksum"), "{err}");
}

/// A 32 x 48 smoke slice with a hot source (a closed box: A is singular, b has zero mean).
fn plume() -> eddy::scene::Scene {
    use eddy::scene::{Scene, SceneKind, Shape, SmokeSource};
    let mut s = Scene {
        name: "lab plume".into(),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.5, 1.0 / 32.0),
        resolution: (32, 48, 1),
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Ip;
    s.pressure.tolerance = 1e-5;
    s.smoke.buoyancy = 4.0;
    s.smoke.sources = vec![SmokeSource {
        shape: Shape::Sphere {
            center: (0.5, 0.15, 0.0156),
            radius: 0.08,
            velocity: (0.0, 0.0, 0.0),
        },
        dye: (1.0, 1.0, 1.0),
        temperature: 1.0,
        velocity: (0.0, 0.0, 0.0),
    }];
    s.validate().unwrap();
    s
}

#[test]
fn a_smoke_slice_freezes_and_races_like_its_solve() {
    let s = plume();
    let mut sim = eddy::sim::smoke::SmokeSimulation::new(common::gpu(), &s).unwrap();
    for _ in 0..3 {
        sim.step_frame().unwrap();
    }
    let sys = sim.freeze_system().unwrap();
    let iterations = sys.solve.as_ref().unwrap().iterations;
    let dir = temp("smoke");
    save_frozen_system(&dir, &sys).unwrap();
    let sys = load_frozen_system(&dir).unwrap();
    let race = lab::race_some(
        common::gpu(),
        &sys,
        &[PreconditionerKind::Ip, PreconditionerKind::Mg],
        1e-5,
        2000,
        &mut |_, _| {},
    )
    .unwrap();
    println!(
        "{:?}",
        race.iter()
            .map(|r| (r.preconditioner, r.iterations, r.spectrum.map(|s| s.kappa)))
            .collect::<Vec<_>>()
    );
    assert_eq!(race[0].iterations, iterations);
    assert!(race[1].iterations < race[0].iterations);
}

#[test]
fn a_warm_started_solve_freezes_with_its_initial_guess() {
    // The smoke: the liquid's volume correction shares p and cold-starts it, so a liquid's
    // warm start begins from the correction's potential (often zero).
    let mut scene = plume();
    scene.pressure.warm_start = true;
    let mut sim = eddy::sim::smoke::SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.step_frame().unwrap();
    let refused = sim.freeze_system().unwrap_err().to_string();
    assert!(refused.contains("keep_initial_guess"), "{refused}");
    sim.keep_initial_guess(true);
    sim.step_frame().unwrap();
    let sys = sim.freeze_system().unwrap();
    let x0 = sys.x0.as_ref().expect("the initial guess");
    assert!(x0.iter().any(|&v| v != 0.0));
    let iterations = sys.solve.as_ref().unwrap().iterations;
    let dir = temp("warm");
    save_frozen_system(&dir, &sys).unwrap();
    assert!(dir.join("x0.f32").exists());
    let sys = load_frozen_system(&dir).unwrap();
    let race = lab::race_some(
        common::gpu(),
        &sys,
        &[PreconditionerKind::Ip],
        1e-5,
        2000,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(race[0].iterations, iterations);
    // The warm start's first residual is below b's.
    assert!(race[0].history[0] < 1.0, "{:?}", race[0].history);
    let mut lab = SolverLab::new(common::gpu(), &sys, PreconditionerKind::Ip, 1e-5).unwrap();
    lab.run_to_convergence(2000).unwrap();
    assert_eq!(lab.iteration(), iterations);
    assert_eq!(bits(&lab.vectors().unwrap().p), bits(&sys.solution));
}

/// A liquid with rigid bodies in the strong coupling: the frozen system carries the bodies'
/// term, and the lab solves (A + K) phi = b with the simulation's own kernels, to the same
/// iterations and the same bits; the term matters (A alone leaves a large residual), and
/// the folder round trip keeps every body word.
#[test]
fn a_system_with_strongly_coupled_bodies_freezes_and_replays_bit_for_bit() {
    let mut scene = StandardProblem::FloatingBodies.scene(16);
    scene.pressure.preconditioner = PreconditionerKind::Mg;
    scene.pressure.tolerance = 1e-5;
    // Deflated, so the replay covers the deflation's kernels too.
    scene.body_deflation = Some(true);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.keep_initial_guess(true);
    // Its right-hand side outlasts the substep (the viewer keeps it the same way).
    sim.keep_solver_vectors();
    for _ in 0..2 {
        sim.step_frame().unwrap();
    }
    let sys = sim.freeze_system().unwrap();
    let fb = sys.bodies.as_ref().expect("the strong coupling's bodies");
    assert_eq!(fb.couple.len(), scene.bodies.len());
    assert!(fb.body_id.iter().any(|&id| id > 0));
    assert!(!fb.project, "the liquid's term is K itself");
    assert!(
        fb.deflate,
        "the scene's mg solve deflates the bodies' modes"
    );
    let iterations = sys.solve.as_ref().unwrap().iterations;
    assert!(iterations > 0);
    // The simulation's solution solves (A + K) phi = b; without K it does not.
    let with_k = sys.true_residual(&sys.solution);
    let mut a_alone = sys.clone();
    a_alone.bodies = None;
    let without_k = a_alone.true_residual(&sys.solution);
    assert!(with_k < 1e-4, "{with_k:e}");
    assert!(
        without_k > 10.0 * with_k,
        "{without_k:e} against {with_k:e}"
    );
    // Saved and loaded: the same system.
    let dir = temp("bodies");
    save_frozen_system(&dir, &sys).unwrap();
    assert!(dir.join("body_id.u32").exists());
    let loaded = load_frozen_system(&dir).unwrap();
    assert_eq!(loaded, sys);
    // Replayed: the same iterations and the same solution, bit for bit.
    let mut lab = SolverLab::new(common::gpu(), &loaded, PreconditionerKind::Mg, 1e-5).unwrap();
    lab.run_to_convergence(2000).unwrap();
    assert_eq!(lab.iteration(), iterations);
    assert_eq!(bits(&lab.vectors().unwrap().p), bits(&sys.solution));
    let rows = lab.rows();
    let t = rows.last().unwrap().true_residual.unwrap();
    assert!(t < 1e-4, "{t:e}");
    // The race runs the term too (ip needs more iterations than mg, both converge).
    let race = lab::race_some(
        common::gpu(),
        &loaded,
        &[PreconditionerKind::Mg, PreconditionerKind::Ip],
        1e-5,
        4000,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(race[0].iterations, iterations);
    // The set-up is timed apart from the iterations (the race plot's time at iteration 0).
    for r in &race {
        if r.timer == "gpu" {
            assert!(r.setup_ms > 0.0 && r.setup_ms < r.time_ms, "{r:?}");
        }
    }
    assert!(
        race[1].iterations > race[0].iterations,
        "{:?}",
        race.iter().map(|r| r.iterations).collect::<Vec<_>>()
    );
    // A folder whose body words were cut is one clear error.
    let json = std::fs::read_to_string(dir.join("system.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut v2 = v.clone();
    v2["bodies"]["couple"][0] = serde_json::json!([1, 2, 3]);
    v2["crc32"] = eddy::output::frozen::json_crc(&v2).into();
    std::fs::write(dir.join("system.json"), serde_json::to_string(&v2).unwrap()).unwrap();
    let err = load_frozen_system(&dir).unwrap_err();
    assert!(err.contains("body 0 has 3 words"), "{err}");
}

/// The smoke's closed box with bodies: the term is P K P (the projection off the constant),
/// and the replay is still the simulation's solve bit for bit.
#[test]
fn a_smoke_system_with_bodies_replays_its_projected_term() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/smoke_rigid_bodies.ron");
    let scene = eddy::scene::Scene::load(path).unwrap().with_resolution(48);
    let mut sim = eddy::sim::smoke::SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.keep_initial_guess(true);
    for _ in 0..2 {
        sim.step_frame().unwrap();
    }
    let sys = sim.freeze_system().unwrap();
    let fb = sys
        .bodies
        .as_ref()
        .expect("the smoke's bodies are strongly coupled");
    assert!(fb.project, "the smoke's closed box takes P K P");
    let iterations = sys.solve.as_ref().unwrap().iterations;
    let kind = sys.settings.preconditioner;
    let tolerance = sys.settings.tolerance;
    let mut lab = SolverLab::new(common::gpu(), &sys, kind, tolerance).unwrap();
    lab.run_to_convergence(4000).unwrap();
    assert_eq!(lab.iteration(), iterations);
    assert_eq!(bits(&lab.vectors().unwrap().p), bits(&sys.solution));
    let with_k = sys.true_residual(&sys.solution);
    assert!(with_k < 10.0 * tolerance.max(1e-5), "{with_k:e}");
}

/// `eddy run --export-system` on a smoke scene (warm-started, with the initial guess kept)
/// writes a system `eddy bench --system` races to the run's own iteration count.
#[test]
fn a_smoke_run_exports_a_system_the_bench_races() {
    let dir = temp("smoke_export");
    let out = dir.join("run");
    let sys_dir = dir.join("system");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let run = eddy(&[
        "run",
        "smoke_plume",
        "--resolution",
        "32",
        "--frames",
        "2",
        "--out",
        &s(&out),
        "--export-system",
        &s(&sys_dir),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(sys_dir.join("system.json").exists());
    assert!(
        sys_dir.join("x0.f32").exists(),
        "the warm start's initial guess"
    );
    let sys = load_frozen_system(&sys_dir).unwrap();
    assert_eq!(sys.dims[2], 1);
    let iterations = sys.solve.as_ref().unwrap().iterations;
    let csv = dir.join("race.csv");
    let kind = sys.settings.preconditioner.name().to_string();
    let bench = eddy(&[
        "bench",
        "--system",
        &s(&sys_dir),
        "--preconditioners",
        &kind,
        "--csv",
        &s(&csv),
    ]);
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    let table = std::fs::read_to_string(&csv).unwrap();
    let row = table.lines().nth(1).unwrap();
    let cols: Vec<&str> = row.split(',').collect();
    assert_eq!(cols[0], kind);
    assert_eq!(cols[1].parse::<u32>().unwrap(), iterations, "{table}");
}
