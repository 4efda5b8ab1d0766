//! The pressure solve on the GPU: convergence, preconditioner ordering, bad settings.
//! (Agreement with the f64 reference is in tests/stages.rs.)

mod common;

use eddy::scene::{PreconditionerKind, Scene, StandardProblem};
use eddy::sim::pressure::SolveStatus;
use eddy::sim::{Simulation, Stage};

/// Iterations to a relative residual of 1e-6 for each preconditioner on the frame-0
/// system of a standard problem.
fn iterations(problem: StandardProblem, n: u32) -> Vec<(PreconditionerKind, u32)> {
    let mut scene = problem.scene(n);
    scene.pressure.tolerance = 1e-6;
    scene.pressure.max_iterations = 2000;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    for _ in 0..problem.settle_frames() {
        sim.step_frame().unwrap();
    }
    sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
    PreconditionerKind::ALL
        .iter()
        .map(|&p| {
            let mut s = scene.clone();
            s.pressure.preconditioner = p;
            sim.apply_live_settings(&s).unwrap();
            let r = sim.solve_pressure_again().unwrap();
            assert_eq!(
                r.status,
                SolveStatus::Converged,
                "{p} on {} {n}^3: {r:?}",
                problem.name()
            );
            assert!(r.residual <= 1e-6);
            // The history ends at the reported residual and starts at 1 (x0 = 0).
            assert!((r.history[0] - 1.0).abs() < 1e-6);
            assert_eq!(r.history.len(), r.iterations as usize + 1);
            (p, r.iterations)
        })
        .collect()
}

#[test]
fn preconditioners_rank_mic0_ip_none() {
    for problem in StandardProblem::ALL {
        for n in [16, 24] {
            let it = iterations(problem, n);
            let get = |k| it.iter().find(|(p, _)| *p == k).unwrap().1;
            let (none, jacobi, ip, mic0) = (
                get(PreconditionerKind::None),
                get(PreconditionerKind::Jacobi),
                get(PreconditionerKind::Ip),
                get(PreconditionerKind::Mic0),
            );
            println!(
                "{} {n}^3: none {none}, jacobi {jacobi}, ip {ip}, mic0 {mic0}",
                problem.name()
            );
            assert!(mic0 < ip && ip < none, "{} {n}^3: {it:?}", problem.name());
            // Jacobi only rescales by the diagonal, which varies next to walls and solids.
            // On the settled pool that is worth about nothing; on the dam break at frame 0
            // it costs iterations (36 -> 48 at 16^3; scipy's f64 PCG on the exported
            // system gives the same 32 -> 48), so only the pool is held to "none + 2".
            if problem == StandardProblem::SettledPool {
                assert!(jacobi <= none + 2, "{} {n}^3: {it:?}", problem.name());
            } else {
                assert!(jacobi < 2 * none, "{} {n}^3: {it:?}", problem.name());
            }
        }
    }
}

#[test]
fn iteration_limit_is_reported() {
    let mut scene = StandardProblem::DamBreak.scene(16);
    scene.pressure.tolerance = 1e-7;
    scene.pressure.max_iterations = 3;
    scene.pressure.preconditioner = PreconditionerKind::None;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let r = sim
        .substep(scene.frame_dt, Stage::Pressure)
        .unwrap()
        .solve
        .unwrap();
    assert_eq!(r.status, SolveStatus::IterationLimit);
    assert_eq!(r.iterations, 3);
    assert!(r.residual > 1e-7);
}

#[test]
fn warm_start_needs_fewer_iterations_on_a_repeated_system() {
    let mut scene = StandardProblem::DamBreak.scene(16);
    scene.pressure.tolerance = 1e-6;
    scene.pressure.preconditioner = PreconditionerKind::Ip;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
    let cold = sim.solve_pressure_again().unwrap();
    scene.pressure.warm_start = true;
    sim.apply_live_settings(&scene).unwrap();
    let warm = sim.solve_pressure_again().unwrap();
    assert!(cold.iterations > 5);
    assert!(
        warm.iterations < cold.iterations / 2,
        "cold {} warm {}",
        cold.iterations,
        warm.iterations
    );
    assert!(warm.residual <= 1e-6);
}

#[test]
fn bad_settings_are_rejected() {
    let mut s = Scene::default();
    s.fluid = StandardProblem::DamBreak.scene(8).fluid;
    s.resolution = (8, 8, 8);
    for (edit, needle) in [
        (
            &(|s: &mut Scene| s.pressure.tolerance = 0.0) as &dyn Fn(&mut Scene),
            "tolerance",
        ),
        (&|s: &mut Scene| s.pressure.tolerance = -1e-3, "tolerance"),
        (
            &|s: &mut Scene| s.pressure.max_iterations = 0,
            "max_iterations",
        ),
        (&|s: &mut Scene| s.pressure.check_every = 0, "check_every"),
    ] {
        let mut bad = s.clone();
        edit(&mut bad);
        let err = bad.validate().unwrap_err();
        assert!(err.contains(needle), "{err}");
    }
    assert!("multigrid"
        .parse::<PreconditionerKind>()
        .unwrap_err()
        .contains("none, jacobi, ip, mic0, mic0_tiled, mg"));
}
