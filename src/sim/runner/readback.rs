//! The end-of-substep readback: where each part of it lies, its staging buffers, and the
//! pressure iterations that read it back with their convergence.

use super::*;

/// Bytes of the counters at the head of the end-of-substep readback (the stage
/// timestamps follow, 8-byte aligned, then the bodies' force sums).
pub(super) const COUNTERS_BYTES: u64 = (COUNTERS as u64 * 4).next_multiple_of(8);

/// Where the bodies' force sums start in the end-of-substep readback.
pub(super) fn sums_offset(timer: &PassTimer) -> u64 {
    (COUNTERS_BYTES + timer.resolved().map_or(0, |(_, n)| n)).next_multiple_of(8)
}

/// Where each part of the end-of-substep readback starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReadbackLayout {
    pub(super) sums_at: u64,
    pub(super) extra_at: u64,
    /// The GPU clock's tick of the substep after (copied by that substep, which reads it
    /// back with its solve).
    pub(super) clock_at: u64,
    /// The push-out's sums the substep's bodies lost (the liquid's).
    pub(super) push_at: u64,
}

/// Adds the dispatches recorded since `since` (a stage's name and the thread's count when
/// it began) to that stage's in `counts`.
pub(super) fn count_dispatches(
    counts: &mut Vec<(&'static str, u64)>,
    since: Option<(&'static str, u64)>,
) {
    let Some((name, d0)) = since else { return };
    let d = Traffic::now().dispatches - d0;
    match counts.iter_mut().find(|(n, _)| *n == name) {
        Some((_, total)) => *total += d,
        None => counts.push((name, d)),
    }
}

/// A staging buffer for a solve's whole state (header and residual history).
pub(super) fn solve_reader(ctx: &GpuContext, pcg: &PcgVectors) -> BufferReader {
    BufferReader::new(&ctx.device, pcg.state.size(), "Runner::solve")
}

/// One substep's readbacks in a pipelined frame.
pub(super) struct Slot {
    pub(super) counters: BufferReader,
    pub(super) solve: BufferReader,
}

/// Bytes of the push-out's sums in the readback.
pub(super) const PUSH_BYTES: u64 = crate::sim::bodies::coupling::PUSH_WORDS * 4;

impl ReadbackLayout {
    pub(super) fn new(timer: &PassTimer, extra: u64) -> Self {
        let sums_at = sums_offset(timer);
        let extra_at = sums_at + StrongCoupling::SUMS_BYTES;
        let clock_at = extra_at + extra;
        Self {
            sums_at,
            extra_at,
            clock_at,
            push_at: clock_at + CLOCK_BYTES,
        }
    }
}

/// The end-of-substep readback: the counters, the stage timestamps, the bodies' force sums,
/// `extra` bytes of the mode's own ([`Mode::readback`]), the next substep's tick and the
/// push-out's sums.
pub(super) fn counters_reader(ctx: &GpuContext, timer: &PassTimer, extra: u64) -> BufferReader {
    let size = ReadbackLayout::new(timer, extra).push_at + PUSH_BYTES;
    BufferReader::new(&ctx.device, size, "Runner::counters")
}

/// The name of the modes' pressure stage, and of the timer slot of its iterations.
pub(super) const PRESSURE_STAGE: &str = "pressure";
pub(super) const PRESSURE_ITERATIONS: &str = "pressure iterations";

/// Runs the pressure iterations (recorded and submitted by the solver, which reads its
/// convergence back, with `with`'s staging buffer in the same read), timed in the pressure
/// stage's second part (`PRESSURE_ITERATIONS`).
#[allow(clippy::too_many_arguments)]
pub(super) fn iterate(
    pressure: &mut PressureSolver,
    ctx: &GpuContext,
    fields: &GridFields,
    pcg: &PcgVectors,
    scene: &Scene,
    timer: &PassTimer,
    bodies: Option<&Bodies>,
    with: Option<&BufferReader>,
) -> Result<(SolveReport, Option<Vec<u32>>), SimError> {
    let timer = timer.enabled().then_some((timer, PRESSURE_ITERATIONS));
    let term = bodies.and_then(|b| b.added_term());
    Ok(pressure.iterate_with(ctx, fields, pcg, &scene.pressure, timer, term, with)?)
}
