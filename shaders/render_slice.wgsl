// One axis-aligned slice of a grid field, drawn in place as a textured quad. The texture
// holds the field already colour-mapped (one texel per sample), sampled without filtering
// so every cell shows its own value.

struct View {
    view_proj: mat4x4<f32>,
};

@group(0) @binding(0) var<uniform> u: View;
@group(0) @binding(1) var tex: texture_2d<f32>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs(@location(0) p: vec3<f32>, @location(1) uv: vec2<f32>) -> VOut {
    var o: VOut;
    o.clip = u.view_proj * vec4<f32>(p, 1.0);
    o.uv = uv;
    return o;
}

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    let d = vec2<f32>(textureDimensions(tex));
    let texel = vec2<i32>(clamp(floor(i.uv * d), vec2<f32>(0.0), d - vec2<f32>(1.0)));
    return textureLoad(tex, texel, 0);
}
