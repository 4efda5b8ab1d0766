// Liquid surface, pass 1: the particles as spheres, keeping the nearest sphere's eye depth
// (metres in front of the camera; 0 where there is no liquid) in an R32Float target.

//!include render/surface_common.wgsl

@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) centre: vec3<f32>,
};

@vertex
fn vs(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VOut {
    let q = sphere_quad(vi, pos[ii].xyz);
    var o: VOut;
    o.clip = q.clip;
    o.uv = q.uv;
    o.centre = q.centre;
    return o;
}

struct FOut {
    @location(0) eye_depth: f32,
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs(i: VOut) -> FOut {
    let r2 = dot(i.uv, i.uv);
    if (r2 > 1.0) { discard; }
    let p = i.centre + vec3<f32>(i.uv, sqrt(1.0 - r2)) * s.radius;
    let clip = s.proj * vec4<f32>(p, 1.0);
    var o: FOut;
    o.eye_depth = -p.z;
    o.depth = clip.z / clip.w;
    return o;
}
