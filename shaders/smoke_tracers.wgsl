//!include prelude.wgsl
// Tracer trails: after the tracers move (advect.wgsl, the liquid's particle advection),
// tracers that the moving obstacle ran over are pushed out of it to its nearest edge (a
// solid cannot hold smoke), and their positions are copied into slot `trail_slot` of a
// ring buffer of `trail_len` positions per tracer, which the viewer draws as fading lines.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> trail: array<vec4<f32>>;

//!include smoke_common.wgsl

// The nearest point just outside the obstacle (x inside it), kept in the domain.
fn push_out(x: vec3<f32>) -> vec3<f32> {
    let m = 0.01 * params.h;
    var y = x;
    if (smoke.obstacle_kind == OBSTACLE_BOX) {
        let lo = smoke.obstacle_lo.xy;
        let hi = smoke.obstacle_hi.xy;
        let d = vec4<f32>(x.x - lo.x, hi.x - x.x, x.y - lo.y, hi.y - x.y);
        let k = min(min(d.x, d.y), min(d.z, d.w));
        if (k == d.x) { y.x = lo.x - m; }
        else if (k == d.y) { y.x = hi.x + m; }
        else if (k == d.z) { y.y = lo.y - m; }
        else { y.y = hi.y + m; }
    } else {
        let c = smoke.obstacle_lo.xy;
        var r = x.xy - c;
        if (dot(r, r) < 1e-20) { r = vec2<f32>(0.0, 1.0); }
        y = vec3<f32>(c + normalize(r) * (smoke.obstacle_hi.w + m), x.z);
    }
    let top = vec3<f32>(params.n) * params.h - vec3<f32>(m);
    return clamp(y, vec3<f32>(m), top);
}

@compute @workgroup_size(WORKGROUP)
fn record(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= smoke.num_tracers) { return; }
    var p = pos[i];
    if (in_obstacle(p.xyz)) {
        p = vec4<f32>(push_out(p.xyz), p.w);
        pos[i] = p;
    }
    trail[smoke.trail_slot * smoke.num_tracers + i] = p;
}
