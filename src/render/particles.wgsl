// Particles as lit sphere impostors: a camera-facing quad per particle whose fragment
// shader carves a sphere, shades it and writes its true depth. Reads the simulation's
// particle buffers directly, so nothing is copied per frame.
//!include gpu/constants.wgsl

// Mirrored by `ParticleUniform` in src/render/mod.rs (tests/integration/shaders.rs checks the layout).

struct View {
    view: mat4x4<f32>,
    proj: mat4x4<f32>,
    radius: f32,
    color_lo: f32,
    color_hi: f32,
    mode: u32,             // PARTICLE_COLOR_SPEED or PARTICLE_COLOR_FLIP_DELTA
    // World plane of the shown slice, xyz towards the camera: particles with
    // dot(xyz, p) > w - radius are (partly) in front of it.
    cut_plane: vec4<f32>,
    cut: u32,              // SLICE_CUT_DRAW, SLICE_CUT_FADE (screen-door: one pixel in four), SLICE_CUT_HIDE
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<uniform> u: View;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> flip_delta: array<vec4<f32>>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) centre: vec3<f32>,
    @location(2) value: f32,
    @location(3) @interpolate(flat) faded: u32,
};

const VIRIDIS = array<vec3<f32>, 9>(
    vec3<f32>(0.267, 0.005, 0.329), vec3<f32>(0.283, 0.141, 0.458), vec3<f32>(0.254, 0.265, 0.530),
    vec3<f32>(0.207, 0.372, 0.553), vec3<f32>(0.164, 0.471, 0.558), vec3<f32>(0.128, 0.567, 0.551),
    vec3<f32>(0.135, 0.659, 0.518), vec3<f32>(0.477, 0.821, 0.318), vec3<f32>(0.993, 0.906, 0.144));

fn viridis(t: f32) -> vec3<f32> {
    let x = clamp(t, 0.0, 1.0) * 8.0;
    let i = min(u32(floor(x)), 7u);
    return mix(VIRIDIS[i], VIRIDIS[i + 1u], x - f32(i));
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    return pow(c, vec3<f32>(2.2));
}

@vertex
fn vs(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VOut {
    let corner = vec2<f32>(f32(vi & 1u) * 2.0 - 1.0, f32((vi >> 1u) & 1u) * 2.0 - 1.0);
    let c = (u.view * vec4<f32>(pos[ii].xyz, 1.0)).xyz;
    var o: VOut;
    o.faded = 0u;
    if (u.cut != SLICE_CUT_DRAW && dot(u.cut_plane.xyz, pos[ii].xyz) > u.cut_plane.w - u.radius) {
        if (u.cut == SLICE_CUT_HIDE) {
            // Outside the clip volume: nothing is rasterised.
            o.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
            return o;
        }
        o.faded = 1u;
    }
    o.clip = u.proj * vec4<f32>(c + vec3<f32>(corner * u.radius, 0.0), 1.0);
    o.uv = corner;
    o.centre = c;
    if (u.mode == PARTICLE_COLOR_SPEED) { o.value = length(vel[ii].xyz); } else { o.value = flip_delta[ii].w; }
    return o;
}

struct FOut {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs(i: VOut) -> FOut {
    let r2 = dot(i.uv, i.uv);
    if (r2 > 1.0) { discard; }
    // Screen-door fade: without blending, keep one pixel of each 2x2 block, so the slice
    // behind shows through the other three.
    if (i.faded != 0u && ((u32(i.clip.x) & 1u) != 0u || (u32(i.clip.y) & 1u) != 0u)) { discard; }
    let n = vec3<f32>(i.uv, sqrt(1.0 - r2));
    let p = i.centre + n * u.radius;
    let clip = u.proj * vec4<f32>(p, 1.0);
    let light = normalize(vec3<f32>(0.4, 0.8, 0.6));
    let base = srgb_to_linear(viridis((i.value - u.color_lo) / max(u.color_hi - u.color_lo, 1e-6)));
    let shade = 0.35 + 0.65 * max(dot(n, light), 0.0);
    var o: FOut;
    o.color = vec4<f32>(base * shade, 1.0);
    o.depth = clip.z / clip.w;
    return o;
}
