//!include prelude.wgsl
// Cell classification: SOLID where the scene's solids are; FLUID where a particle lies and
// the mean P2G weight of the cell's six faces (a smooth particle density, about the
// particles per cell inside the liquid) reaches params.fluid_weight; AIR elsewhere.
// Also counts FLUID cells for the stats.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> solid: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> weight: array<f32>;

fn mean_face_weight(c: u32) -> f32 {
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        s += weight[off + face_index(x, d)] + weight[off + face_index(x + unit(comp), d)];
    }
    return s / 6.0;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var t = AIR;
    if (solid[c] != 0u) {
        t = SOLID;
    } else if (count[c] > 0u && mean_face_weight(c) >= params.fluid_weight) {
        t = FLUID;
        atomicAdd(&counters[0], 1u);
    }
    cell_type[c] = t;
}
