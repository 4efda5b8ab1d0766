// Liquid surface, pass 4a: copies the scene drawn without the liquid (box, solids, slice;
// particles too in "both" mode) into the target, under the shaded liquid.

@group(0) @binding(0) var scene: texture_2d<f32>;

//!include render/fullscreen.wgsl

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    return textureLoad(scene, vec2<i32>(i.clip.xy), 0);
}
