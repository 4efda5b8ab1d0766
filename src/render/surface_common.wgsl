// Shared by the screen-space liquid surface passes (render_surface_*.wgsl): the uniform
// block, the particle sphere quad, and the cut that removes liquid in front of a shown
// slice. `Surface` is mirrored by `SurfaceUniform` in src/render/surface.rs (tests/integration/shaders.rs
// checks the layout).
//!include gpu/constants.wgsl

struct Surface {
    view: mat4x4<f32>,
    proj: mat4x4<f32>,
    // Camera to world, for the sky reflection.
    inv_view: mat4x4<f32>,
    // World plane of the shown slice: xyz points towards the camera; a particle with
    // dot(xyz, p) > w - radius lies (partly) in front of the slice.
    cut_plane: vec4<f32>,
    // Beer-Lambert absorption per metre of liquid (rgb).
    absorption: vec4<f32>,
    // Colour light scattered inside deep liquid takes on (rgb, linear).
    deep_color: vec4<f32>,
    // Sphere radius of the depth and thickness passes, m.
    radius: f32,
    // Filter radius in world units, m (converted to pixels per fragment from its depth).
    smooth_radius: f32,
    // Depth difference (m) at which the bilateral weight falls to 1/e.
    depth_falloff: f32,
    // Liquid volume per particle over the sphere's volume: the summed chords become metres
    // of liquid.
    thickness_scale: f32,
    // Refraction: screen offset in metres per metre of liquid along the normal's xy.
    refraction: f32,
    specular: f32,
    shininess: f32,
    // 0: draw every particle; otherwise particles in front of `cut_plane` are left out.
    cut: u32,
    // Size of the liquid's textures (depth, thickness) in pixels.
    width: f32,
    height: f32,
    // Size of the target in pixels.
    target_width: f32,
    target_height: f32,
};

@group(0) @binding(0) var<uniform> s: Surface;

// The liquid's textures have 1/LIQUID_SCALE of the target's resolution (LIQUID_SCALE is
// generated from src/gpu/constants.rs).

// A camera-facing quad around particle `centre_world` (corner from the vertex index),
// or a quad outside the clip volume when the particle is cut away.
struct Quad {
    clip: vec4<f32>,
    uv: vec2<f32>,
    centre: vec3<f32>,
};

fn sphere_quad(vi: u32, centre_world: vec3<f32>) -> Quad {
    var q: Quad;
    let corner = vec2<f32>(f32(vi & 1u) * 2.0 - 1.0, f32((vi >> 1u) & 1u) * 2.0 - 1.0);
    q.uv = corner;
    q.centre = (s.view * vec4<f32>(centre_world, 1.0)).xyz;
    if (s.cut != 0u && dot(s.cut_plane.xyz, centre_world) > s.cut_plane.w - s.radius) {
        q.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
        return q;
    }
    q.clip = s.proj * vec4<f32>(q.centre + vec3<f32>(corner * s.radius, 0.0), 1.0);
    return q;
}

// Focal length in pixels: a length L at eye depth z spans L * focal_px() / z pixels.
fn focal_px() -> f32 {
    return s.proj[1][1] * 0.5 * s.height;
}

// View-space position of the centre of pixel `px` at eye depth `z` (> 0).
fn view_pos(px: vec2<f32>, z: f32) -> vec3<f32> {
    let ndc = vec2<f32>((px.x + 0.5) / s.width * 2.0 - 1.0, 1.0 - (px.y + 0.5) / s.height * 2.0);
    return vec3<f32>(ndc.x / s.proj[0][0] * z, ndc.y / s.proj[1][1] * z, -z);
}
