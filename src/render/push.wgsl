//!include sim/core/prelude.wgsl
// Mouse push: particles within `radius` of the picking ray get a velocity kick along the
// drag, fading linearly with their distance from the ray.

struct Push {
    origin: vec3<f32>,
    radius: f32,
    dir: vec3<f32>,
    count: u32,
    delta_v: vec3<f32>,
    _pad: u32,
};

@group(0) @binding(0) var<uniform> push: Push;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec4<f32>>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= push.count) { return; }
    let rel = pos[id].xyz - push.origin;
    let along = dot(rel, push.dir);
    let dist = length(rel - along * push.dir);
    if (along > 0.0 && dist < push.radius) {
        let w = 1.0 - dist / push.radius;
        vel[id] = vec4<f32>(vel[id].xyz + w * push.delta_v, 0.0);
    }
}
