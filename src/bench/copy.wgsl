//!include sim/core/prelude.wgsl
// Plain copy of a vec4<f32> array, one vec4 per thread: the reference bandwidth that
// `eddy bench` compares the PCG iteration with (bytes read + written per second).
// `params.num_cells` holds the number of vec4 elements.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i < params.num_cells) { dst[i] = src[i]; }
}
