//!include sim/core/prelude.wgsl
// Per-particle statistics: max speed and largest x (integer max over f32 bits, exact and
// order-independent) and kinetic-energy partial sums per workgroup (summed on the host in
// f64, in workgroup order, so the total is reproducible).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> energy: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP>;

@compute @workgroup_size(WORKGROUP)
fn particles(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    var e = 0.0;
    if (id < params.num_particles) {
        let v = vel[id].xyz;
        let s2 = dot(v, v);
        e = 0.5 * s2;
        atomicMax(&counters[COUNTER_MAX_SPEED], bitcast<u32>(sqrt(s2)));
        atomicMax(&counters[COUNTER_FRONT_X], bitcast<u32>(max(pos[id].x, 0.0)));
    }
    partial[li] = e;
    for (var stride = WORKGROUP / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) { partial[li] += partial[li + stride]; }
    }
    let slot = wg.y * nwg.x + wg.x;
    if (li == 0u && slot * WORKGROUP < params.num_particles) { energy[slot] = partial[0]; }
}
