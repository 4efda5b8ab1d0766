//!include sim/core/prelude.wgsl
//!include sim/core/pressure/mg_common.wgsl
// Multigrid V-cycle preconditioner z = M^-1 r (`mg`): the levels the GPU runs one dispatch
// per step (src/sim/core/pressure/multigrid.rs says which), each step over all of the
// level's cells at once. The steps themselves are in mg_common.wgsl; the small levels at the
// bottom of the cycle run in one workgroup (mg_tail.wgsl).
//
// One bind group per level: this level's matrix, types, solution x, right-hand side b and
// residual, and the next coarser level's matrix, types, solution and right-hand side. On
// level 0, x is PCG's z, b is PCG's r and the residual is PCG's scratch t. The coarser
// level of the last one here is the tail's first, at the start of its packed buffers.

@group(0) @binding(0) var<uniform> lvl: MgLevel;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> types: array<u32>;
// b, r, z, d, q and t are regions of one buffer (PcgVectors), and wgpu refuses a buffer bound
// both read-only and read-write in one dispatch: all of them are bound read_write.
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;
@group(0) @binding(5) var<storage, read_write> res: array<f32>;
@group(0) @binding(6) var<storage, read_write> ca: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> ctypes: array<u32>;
@group(0) @binding(8) var<storage, read> cx: array<f32>;
@group(0) @binding(9) var<storage, read_write> cb: array<f32>;
@group(0) @binding(10) var<storage, read> done: array<u32>;
@group(0) @binding(11) var<storage, read_write> winv: array<u32>;

// --- set-up (once per solve) ---

@compute @workgroup_size(WORKGROUP)
fn coarsen(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c < lvl.coarse_cells) { coarsen_at(c); }
}

@compute @workgroup_size(WORKGROUP)
fn build_coarse(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c < lvl.coarse_cells) { build_coarse_at(c); }
}

@compute @workgroup_size(WORKGROUP)
fn weights(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c < lvl.cells) { weights_at(c); }
}

// --- smoothing ---

@compute @workgroup_size(WORKGROUP)
fn smooth_first(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c < lvl.cells) { smooth_first_at(c); }
}

@compute @workgroup_size(WORKGROUP)
fn smooth_red(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    relax_colour(linear_id(wg, nwg, li), 0u, false);
}

@compute @workgroup_size(WORKGROUP)
fn smooth_black(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    relax_colour(linear_id(wg, nwg, li), 1u, false);
}

@compute @workgroup_size(WORKGROUP)
fn boundary_red(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    relax_colour(linear_id(wg, nwg, li), 0u, true);
}

@compute @workgroup_size(WORKGROUP)
fn boundary_black(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    relax_colour(linear_id(wg, nwg, li), 1u, true);
}

// --- transfers ---

@compute @workgroup_size(WORKGROUP)
fn residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c < lvl.cells) { residual_at(c); }
}

@compute @workgroup_size(WORKGROUP)
fn prolong(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c < lvl.cells) { prolong_at(c); }
}

@compute @workgroup_size(WORKGROUP)
fn restrict_residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c < lvl.coarse_cells) { restrict_at(c); }
}
