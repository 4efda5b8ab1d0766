// A rigid body's shape on the GPU: its struct and the point tests. Include in a shader that
// says whether the grid is a slice (`body_slice`: a slice's bodies are prisms across z).

// Mirrored by `GpuBody` in src/sim/bodies/coupling.rs (layout checked by tests/integration/shaders.rs).
struct Body {
    centre: vec4<f32>,  // xyz (m), w: shape (0 none, 1 box, 2 sphere)
    axis_x: vec4<f32>,  // world direction of the body's x axis
    axis_y: vec4<f32>,
    axis_z: vec4<f32>,
    half: vec4<f32>,    // box half extents (m), or the radius in x
    vel: vec4<f32>,     // m/s
    omega: vec4<f32>,   // rad/s
    // 1/m, then 1/I about the body's own x, y, z axes (0 where the body keeps its motion:
    // not dynamic; a slice's about x and y): what the push-out's exchange with it weighs.
    inverse: vec4<f32>,
};

// `x` in body `b`'s frame (z dropped in a slice).
fn to_local(b: Body, x: vec3<f32>) -> vec3<f32> {
    var d = x - b.centre.xyz;
    if (body_slice()) { d.z = 0.0; }
    var l = vec3<f32>(dot(d, b.axis_x.xyz), dot(d, b.axis_y.xyz), dot(d, b.axis_z.xyz));
    if (body_slice()) { l.z = 0.0; }
    return l;
}

fn inside(b: Body, x: vec3<f32>) -> bool {
    let l = to_local(b, x);
    if (b.centre.w == BODY_SHAPE_SPHERE) {
        return dot(l, l) <= b.half.x * b.half.x;
    }
    return all(abs(l) <= b.half.xyz);
}

// Signed distance from `x` to the surface of body `b` (m, negative inside; a slice's bodies
// are prisms across z).
fn body_distance(b: Body, x: vec3<f32>) -> f32 {
    let l = to_local(b, x);
    if (b.centre.w == BODY_SHAPE_SPHERE) { return length(l) - b.half.x; }
    var q = abs(l) - b.half.xyz;
    if (body_slice()) { q.z = -1e30; }
    return length(max(q, vec3<f32>(0.0))) + min(max(q.x, max(q.y, q.z)), 0.0);
}
