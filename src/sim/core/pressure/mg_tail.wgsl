//!include sim/core/prelude.wgsl
//!include sim/core/pressure/mg_common.wgsl
// The bottom of the multigrid V-cycle in one workgroup: the levels small enough that a
// dispatch per step would cost more in launches than in work (src/sim/core/pressure/
// multigrid.rs picks them) run every step of theirs, the coarsest level's solve included,
// in one dispatch, with a barrier between steps. The steps are those of multigrid.wgsl
// (mg_common.wgsl), in the same order and with the same arithmetic, so the cycle gives the
// same numbers either way.
//
// The tail's levels share packed buffers: level t's cells start at element levels[t].off
// and its coarser level's at levels[t].coff. Each array is bound twice, as this level's and
// as the coarser level's, both read-write (one buffer may not be bound read-only and
// read-write in one dispatch).

@group(0) @binding(0) var<uniform> levels: array<MgLevel, MG_TAIL_LEVELS>;
@group(0) @binding(1) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> types: array<u32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;
@group(0) @binding(5) var<storage, read_write> res: array<f32>;
@group(0) @binding(6) var<storage, read_write> ca: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> ctypes: array<u32>;
@group(0) @binding(8) var<storage, read_write> cx: array<f32>;
@group(0) @binding(9) var<storage, read_write> cb: array<f32>;
@group(0) @binding(10) var<storage, read> done: array<u32>;
@group(0) @binding(11) var<storage, read_write> winv: array<u32>;
// x: the tail's levels (the coarsest last); y: the boundary sweeps per level (0 where the
// systems have no AIR cell, and so no boundary cell: multigrid.rs, `set_air`).
@group(0) @binding(12) var<uniform> tail: vec4<u32>;

// The level the current step works on (mg_common.wgsl reads it).
var<private> lvl: MgLevel;

// The steps, one code per kernel of multigrid.wgsl.
const STEP_COARSEN: u32 = 0u;
const STEP_BUILD: u32 = 1u;
const STEP_WEIGHTS: u32 = 2u;
const STEP_FIRST: u32 = 3u;
const STEP_RED: u32 = 4u;
const STEP_BLACK: u32 = 5u;
const STEP_BOUNDARY_RED: u32 = 6u;
const STEP_BOUNDARY_BLACK: u32 = 7u;
const STEP_RESIDUAL: u32 = 8u;
const STEP_RESTRICT: u32 = 9u;
const STEP_PROLONG: u32 = 10u;

// Items a step covers on level t: coarse cells, half rows of one colour, or cells.
fn step_items(t: u32, step: u32) -> u32 {
    let l = levels[t];
    switch step {
        case STEP_COARSEN, STEP_BUILD, STEP_RESTRICT: { return l.coarse_cells; }
        case STEP_RED, STEP_BLACK, STEP_BOUNDARY_RED, STEP_BOUNDARY_BLACK: { return (l.n.x + 1u) / 2u * l.n.y * l.n.z; }
        default: { return l.cells; }
    }
}

// Runs `step` on level t, the workgroup's invocations sharing its items, then waits until
// every invocation's writes are visible.
fn run_step(t: u32, step: u32, li: u32) {
    lvl = levels[t];
    let items = step_items(t, step);
    for (var k = 0u; k < (items + MG_COARSE_WG - 1u) / MG_COARSE_WG; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < items) {
            switch step {
                case STEP_COARSEN: { coarsen_at(c); }
                case STEP_BUILD: { build_coarse_at(c); }
                case STEP_WEIGHTS: { weights_at(c); }
                case STEP_FIRST: { smooth_first_at(c); }
                case STEP_RED: { relax_colour(c, 0u, false); }
                case STEP_BLACK: { relax_colour(c, 1u, false); }
                case STEP_BOUNDARY_RED: { relax_colour(c, 0u, true); }
                case STEP_BOUNDARY_BLACK: { relax_colour(c, 1u, true); }
                case STEP_RESIDUAL: { residual_at(c); }
                case STEP_RESTRICT: { restrict_at(c); }
                default: { prolong_at(c); }
            }
        }
    }
    storageBarrier();
}

// Per-solve set-up of the tail's levels: coarse types and matrices, weights and boundary
// flags (multigrid.rs's record_setup, level by level).
@compute @workgroup_size(MG_COARSE_WG)
fn tail_setup(@builtin(local_invocation_index) li: u32) {
    for (var t = 0u; t + 1u < tail.x; t++) {
        run_step(t, STEP_COARSEN, li);
        run_step(t, STEP_BUILD, li);
        run_step(t, STEP_WEIGHTS, li);
    }
}

// The V-cycle from the tail's first level down and back: the order of multigrid.rs's
// record_apply.
@compute @workgroup_size(MG_COARSE_WG)
fn tail_cycle(@builtin(local_invocation_index) li: u32) {
    if (workgroup_done(li)) { return; }
    let last = tail.x - 1u;
    for (var t = 0u; t < last; t++) {
        run_step(t, STEP_FIRST, li);
        for (var s = 1u; s < MG_SWEEPS; s++) {
            run_step(t, STEP_RED, li);
            run_step(t, STEP_BLACK, li);
        }
        for (var s = 0u; s < tail.y; s++) {
            run_step(t, STEP_BOUNDARY_RED, li);
            run_step(t, STEP_BOUNDARY_BLACK, li);
        }
        run_step(t, STEP_RESIDUAL, li);
        run_step(t, STEP_RESTRICT, li);
    }
    lvl = levels[last];
    coarse_solve_wg(li);
    storageBarrier();
    for (var t = last; t > 0u; t--) {
        let u = t - 1u;
        run_step(u, STEP_PROLONG, li);
        for (var s = 0u; s < tail.y; s++) {
            run_step(u, STEP_BOUNDARY_BLACK, li);
            run_step(u, STEP_BOUNDARY_RED, li);
        }
        for (var s = 0u; s < MG_SWEEPS; s++) {
            run_step(u, STEP_BLACK, li);
            run_step(u, STEP_RED, li);
        }
    }
}
