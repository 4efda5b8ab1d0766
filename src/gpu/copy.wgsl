//!include gpu/constants.wgsl
// A copy as a kernel (src/gpu/copy.rs): unlike a queue copy, its dispatch goes through the
// gate of a substep recorded ahead (src/gpu/gate.rs), so a substep that does not run
// copies nothing. One u32 per thread, as many as `dst` holds.

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nwg.x + wg.x) * WORKGROUP + li;
    if (i < arrayLength(&dst)) {
        dst[i] = src[i];
    }
}
