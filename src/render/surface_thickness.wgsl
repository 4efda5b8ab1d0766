// Liquid surface, pass 2: every particle adds the length of its sphere's chord along the
// view ray (additive blending, no depth test), so the sum measures how much liquid the
// ray crosses; `thickness_scale` turns overlapping spheres into metres of liquid.

//!include render/surface_common.wgsl

@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VOut {
    let q = sphere_quad(vi, pos[ii].xyz);
    var o: VOut;
    o.clip = q.clip;
    o.uv = q.uv;
    return o;
}

@fragment
fn fs(i: VOut) -> @location(0) f32 {
    let r2 = dot(i.uv, i.uv);
    if (r2 > 1.0) { discard; }
    return 2.0 * sqrt(1.0 - r2) * s.radius * s.thickness_scale;
}
