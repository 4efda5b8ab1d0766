//! Host memory stays flat over many multigrid applications and over whole frames. In a test binary of its own:
//! the process's resident memory is the measurement, and tests running beside it in other
//! threads would add theirs.

mod common;

use eddy::scene::{PreconditionerKind, StandardProblem};
use eddy::sim::{Simulation, Stage};

/// The tests take turns: the process's resident memory is shared by every thread.
#[cfg(target_os = "linux")]
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The process's resident memory, MB.
#[cfg(target_os = "linux")]
fn rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmRSS")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<f64>()
        .unwrap()
        / 1024.0
}

/// Host memory stays flat over many multigrid applications. lavapipe 22.3 leaked about
/// 1 MB per V-cycle (20 MB per frame of the default scene) while two of the multigrid
/// kernels looped over counts read from a uniform; this would catch it coming back.
#[cfg(target_os = "linux")]
#[test]
fn multigrid_applications_do_not_grow_host_memory() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scene = StandardProblem::DamBreak.scene(16);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(scene.frame_dt, Stage::Pressure).unwrap();
    let r = vec![0.5f32; 16 * 16 * 16];
    for _ in 0..20 {
        sim.apply_preconditioner(PreconditionerKind::Mg, &r)
            .unwrap();
    }
    let before = rss_mb();
    for _ in 0..300 {
        sim.apply_preconditioner(PreconditionerKind::Mg, &r)
            .unwrap();
    }
    let grown = rss_mb() - before;
    assert!(
        grown < 30.0,
        "300 V-cycles grew host memory by {grown:.1} MB"
    );
}

/// Host memory stays flat over whole frames of the default scene. lavapipe 22.3 leaked
/// about 0.37 MB per substep (7 MB/s of a headless run, more in the viewer) while P2G and
/// G2P branched on the transfer (a uniform) inside their loops.
#[cfg(target_os = "linux")]
#[test]
fn frames_of_the_default_scene_do_not_grow_host_memory() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/dam_break.ron");
    let scene = eddy::scene::Scene::load(path).unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    for _ in 0..20 {
        sim.step_frame().unwrap();
    }
    let before = rss_mb();
    let mut substeps = 0;
    for _ in 0..50 {
        substeps += sim.step_frame().unwrap().substeps;
    }
    let grown = rss_mb() - before;
    assert!(substeps >= 100, "{substeps} substeps");
    assert!(
        grown < 15.0,
        "{substeps} substeps grew host memory by {grown:.1} MB"
    );
}
