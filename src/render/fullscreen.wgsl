// One triangle that covers the whole target, for the screen-space passes: include it and
// use `vs` as the vertex entry point; fragments get their pixel from `clip.xy`.

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
