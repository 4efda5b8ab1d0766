//!include prelude.wgsl
// Cell classification: SOLID where the scene's solids are, FLUID where at least one
// particle lies (counted during P2G), AIR elsewhere. Also counts FLUID cells for the stats.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> solid: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var t = AIR;
    if (solid[c] != 0u) {
        t = SOLID;
    } else if (count[c] > 0u) {
        t = FLUID;
        atomicAdd(&counters[0], 1u);
    }
    cell_type[c] = t;
}
