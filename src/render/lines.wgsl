// Coloured line segments: the domain box, solid cells' outlines, velocity arrows.

struct View {
    view_proj: mat4x4<f32>,
};

@group(0) @binding(0) var<uniform> u: View;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs(@location(0) p: vec3<f32>, @location(1) color: vec3<f32>) -> VOut {
    var o: VOut;
    o.clip = u.view_proj * vec4<f32>(p, 1.0);
    o.color = color;
    return o;
}

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    return vec4<f32>(pow(i.color, vec3<f32>(2.2)), 1.0);
}
