// Rigid bodies as shaded solids: a unit mesh (box or sphere) drawn once per body, placed by
// the instance's model matrix (rotation, half extents or radius, centre) and tinted by its
// colour. Ambient plus diffuse from one light fixed in the world, in linear space.
// `body_shade` in src/render/bodies.rs is the same lighting on the host (the tests' reference).
//!include gpu/constants.wgsl

// Mirrored by `BodyView` in src/render/bodies.rs (tests/integration/shaders.rs checks the layout).
struct View {
    view_proj: mat4x4<f32>,
    // World plane of the shown slice, xyz towards the camera: fragments with
    // dot(xyz, p) > w are in front of it.
    cut_plane: vec4<f32>,
    cut: u32,              // SLICE_CUT_DRAW, SLICE_CUT_FADE (screen-door: one pixel in four), SLICE_CUT_HIDE
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<uniform> u: View;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) @interpolate(flat) color: vec3<f32>,
};

@vertex
fn vs(
    @location(0) pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) m0: vec4<f32>,
    @location(3) m1: vec4<f32>,
    @location(4) m2: vec4<f32>,
    @location(5) m3: vec4<f32>,
    @location(6) color: vec4<f32>,
) -> VOut {
    let model = mat4x4<f32>(m0, m1, m2, m3);
    let world = model * vec4<f32>(pos, 1.0);
    var o: VOut;
    o.clip = u.view_proj * world;
    o.world = world.xyz;
    // The model's scale is along the mesh's axes: a box's face normals (along those axes)
    // keep their direction under it, and a sphere's scale is uniform, so the model matrix
    // turns normals right for both shapes.
    o.normal = (model * vec4<f32>(normal, 0.0)).xyz;
    o.color = color.rgb;
    return o;
}

// Whether the shown slice's cut removes this fragment.
fn cut_away(i: VOut) -> bool {
    if (u.cut != SLICE_CUT_DRAW && dot(u.cut_plane.xyz, i.world) > u.cut_plane.w) {
        if (u.cut == SLICE_CUT_HIDE) { return true; }
        if ((u32(i.clip.x) & 1u) != 0u || (u32(i.clip.y) & 1u) != 0u) { return true; }
    }
    return false;
}

// Depth only: the liquid's passes test their particles against the bodies
// (src/render/surface.rs), so liquid behind a body adds nothing to what is seen through it.
@fragment
fn fs_depth(i: VOut) {
    if (cut_away(i)) { discard; }
}

@fragment
fn fs(i: VOut) -> @location(0) vec4<f32> {
    if (cut_away(i)) { discard; }
    let n = normalize(i.normal);
    let light = normalize(vec3<f32>(0.4, 0.8, 0.6));
    let base = pow(i.color, vec3<f32>(2.2));
    return vec4<f32>(base * (0.35 + 0.65 * max(dot(n, light), 0.0)), 1.0);
}
