//!include sim/core/prelude.wgsl
// Smoke statistics per workgroup of WORKGROUP cells, summed on the host in f64 in workgroup
// order (reproducible): x = dye (mean of r, g, b), y = dye * height, z = |omega|^2,
// w = |u|^2 at the cell centre; over non-SOLID cells. COUNTER_MAX_SPEED gets the largest
// cell-centre speed and COUNTER_FRONT_X the largest x holding dye (f32 bits, integer max).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read> vel: array<f32>;
@group(0) @binding(4) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> curl: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;

//!include sim/smoke/common.wgsl

// Dye below FRONT_DYE does not count as the smoke's front.

var<workgroup> partial: array<vec4<f32>, WORKGROUP>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    var s = vec4<f32>(0.0);
    if (i < params.num_cells && cell_type[i] != SOLID) {
        let c = cell_coord(i, params.n);
        var u = vec3<f32>(0.0);
        for (var comp = 0u; comp < 3u; comp++) {
            let d = face_dims(comp, params.n);
            let off = face_offset(comp, params);
            u[comp] = 0.5 * (vel[off + face_index(c, d)] + vel[off + face_index(c + unit(comp), d)]);
        }
        let q = dye[i];
        let m = (q.x + q.y + q.z) / 3.0;
        let x = cell_centre(c);
        let w = curl[i].xyz;
        s = vec4<f32>(m, m * x.y, dot(w, w), dot(u, u));
        atomicMax(&counters[COUNTER_MAX_SPEED], bitcast<u32>(length(u)));
        if (m > FRONT_DYE) { atomicMax(&counters[COUNTER_FRONT_X], bitcast<u32>(x.x)); }
    }
    partial[li] = s;
    for (var stride = WORKGROUP / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) { partial[li] += partial[li + stride]; }
    }
    let slot = wg.y * nwg.x + wg.x;
    if (li == 0u && slot * WORKGROUP < params.num_cells) { partials[slot] = partial[0]; }
}
