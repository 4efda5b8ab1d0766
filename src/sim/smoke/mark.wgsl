//!include sim/core/prelude.wgsl
// Smoke cell types: every cell is FLUID (smoke fills the box) except the static solids
// (scene solids and painted cells), which are SOLID with the solid's velocity (`main`).
// Rigid bodies, the moving ones included, are stamped over them next (src/sim/bodies/coupling.wgsl);
// `clear` then empties the dye and temperature of every SOLID cell: smoke never enters a
// solid. A cell the static solids only cut (SOLID_PARTIAL, src/scene/fractions.rs) is FLUID
// for the solve, through its open faces, and keeps its flag so the dye stays out of it.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> static_solid: array<u32>;
@group(0) @binding(2) var<storage, read> static_vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> solid: array<u32>;
@group(0) @binding(5) var<storage, read_write> solid_vel: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (static_solid[c] == SOLID_PARTIAL) {
        cell_type[c] = FLUID;
        solid[c] = SOLID_PARTIAL;
        solid_vel[c] = static_vel[c];
        atomicAdd(&counters[COUNTER_FLUID_CELLS], 1u);
    } else if (static_solid[c] != 0u) {
        cell_type[c] = SOLID;
        solid[c] = 1u;
        solid_vel[c] = static_vel[c];
    } else {
        cell_type[c] = FLUID;
        solid[c] = 0u;
        solid_vel[c] = vec4<f32>(0.0);
        atomicAdd(&counters[COUNTER_FLUID_CELLS], 1u);
    }
}

@compute @workgroup_size(WORKGROUP)
fn clear(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (cell_type[c] == SOLID) {
        dye[c] = vec4<f32>(0.0);
    }
}
