//!include gpu/constants.wgsl
// The substep's clock on the GPU: the next substep's length from the largest speed the last
// one measured, so a frame's substeps follow each other without the host reading that
// speed back first (src/sim/core/clock.rs). The host's rule, in f32:
//   dt = cfl h / max(speed + accel, 1e-9), at most what is left of the frame; a sliver of
//   less than a tenth of dt left over joins this substep; with `force_rest` (the frame's
//   max_substeps reached) the substep takes the rest.

// Mirrored by `ClockParams` in src/sim/core/clock.rs.
struct ClockParams {
    cfl_h: f32,      // the CFL number times the cell size (m)
    accel: f32,      // the speed the mode adds to the largest (m/s: sqrt(h |g|) in the liquid)
    remaining: f32,  // what is left of the frame (s)
    force_rest: u32, // 1: take the rest of the frame whatever the CFL step
};

@group(0) @binding(0) var<uniform> clock_in: ClockParams;
@group(0) @binding(1) var<storage, read> counters: array<u32>;
// CLOCK_DT: the substep (f32 bits), CLOCK_CFL: the CFL step before the frame's end cut it
// (f32 bits), CLOCK_LAST: 1 when the substep ends the frame.
@group(0) @binding(2) var<storage, read_write> clock: array<u32>;

@compute @workgroup_size(1)
fn next_dt() {
    let speed = bitcast<f32>(counters[COUNTER_MAX_SPEED]);
    let cfl = clock_in.cfl_h / max(speed + clock_in.accel, 1e-9);
    let rest = clock_in.remaining;
    var dt = min(cfl, rest);
    var last = dt >= rest;
    if (rest - dt < 0.1 * dt || clock_in.force_rest != 0u) {
        dt = rest;
        last = true;
    }
    clock[CLOCK_DT] = bitcast<u32>(dt);
    clock[CLOCK_CFL] = bitcast<u32>(cfl);
    clock[CLOCK_LAST] = select(0u, 1u, last);
}
