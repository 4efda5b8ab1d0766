// Liquid surface, pass 4a: copies the scene drawn without the liquid (box, solids, slice;
// particles too in "both" mode) into the target, under the shaded liquid.

@group(0) @binding(0) var scene: texture_2d<f32>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
};

@vertex
fn vs(@builtin(vertex_index) vi: u32) -> VOut {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));
    var o: VOut;
    o.clip = vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
    return o;
}

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    return textureLoad(scene, vec2<i32>(i.clip.xy), 0);
}
