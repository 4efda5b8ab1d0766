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
    assert_eq!(
        Traffic::now().since(before),
        Traffic {
            dispatches: 0,
            submits: 1,
            reads: 1,
            bytes_read: 4096,
        }
    );
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
