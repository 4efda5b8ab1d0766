// One axis-aligned slice of a grid field, drawn in place as a textured quad. The texture
// holds the field already colour-mapped (one texel per sample), sampled without filtering
// so every cell shows its own value, or bilinearly (smoke dye) when the slice asks for it.
// Zoomed in far enough that a cell spans many pixels, cell borders are drawn as grid lines.

struct View {
    view_proj: mat4x4<f32>,
};

@group(0) @binding(0) var<uniform> u: View;
@group(0) @binding(1) var tex: texture_2d<f32>;

// Mirrored by `SliceUniform` in src/render/mod.rs (tests/integration/shaders.rs checks the layout).
struct SliceStyle {
    bilinear: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};
@group(0) @binding(2) var<uniform> style: SliceStyle;

// Pixels per cell at which grid lines start to show, and where they are fully drawn.
const GRID_FROM_PX: f32 = 8.0;
const GRID_FULL_PX: f32 = 16.0;

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

fn texel(t: vec2<i32>) -> vec4<f32> {
    let last = vec2<i32>(textureDimensions(tex)) - vec2<i32>(1);
    return textureLoad(tex, clamp(t, vec2<i32>(0), last), 0);
}

// Bilinear between the four nearest texel centres (in linear colour), clamped at the edges
// like a clamp-to-edge sampler.
fn bilinear(t: vec2<f32>) -> vec4<f32> {
    let c = t - vec2<f32>(0.5);
    let i0 = vec2<i32>(floor(c));
    let f = c - floor(c);
    let a = mix(texel(i0), texel(i0 + vec2<i32>(1, 0)), f.x);
    let b = mix(texel(i0 + vec2<i32>(0, 1)), texel(i0 + vec2<i32>(1, 1)), f.x);
    return mix(a, b, f.y);
}

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    let d = vec2<f32>(textureDimensions(tex));
    let t = i.uv * d;
    // Cells per pixel, taken before any branch (derivatives need uniform control flow).
    let per_px = fwidth(t);
    var color: vec4<f32>;
    if (style.bilinear != 0u) {
        color = bilinear(t);
    } else {
        color = texel(vec2<i32>(floor(t)));
    }
    let cell_px = 1.0 / max(max(per_px.x, per_px.y), 1e-6);
    let f = fract(t);
    let edge_px = min(min(f.x, 1.0 - f.x) / max(per_px.x, 1e-6), min(f.y, 1.0 - f.y) / max(per_px.y, 1e-6));
    // Smooth (bilinear) images are not read cell by cell: no grid.
    let strength = select(smoothstep(GRID_FROM_PX, GRID_FULL_PX, cell_px), 0.0, style.bilinear != 0u);
    let line = strength * (1.0 - smoothstep(0.5, 1.0, edge_px));
    return vec4<f32>(mix(color.rgb, color.rgb * 0.35, line), 1.0);
}
