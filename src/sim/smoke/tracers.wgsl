//!include sim/core/prelude.wgsl
// Tracer trails: after the tracers move (advect.wgsl, the liquid's particle advection, which
// keeps them out of SOLID cells, rigid bodies' included), their positions are copied into
// slot `trail_slot` of a ring buffer of `trail_len` positions per tracer, which the viewer
// draws as fading lines. Tracers a moving body runs over are pushed out of it when it moves
// (`push_out` in src/sim/bodies/coupling.wgsl).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> trail: array<vec4<f32>>;

//!include sim/smoke/common.wgsl

@compute @workgroup_size(WORKGROUP)
fn record(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= smoke.num_tracers) { return; }
    trail[smoke.trail_slot * smoke.num_tracers + i] = pos[i];
}
