// Liquid surface, pass 4b: shades the smoothed depth. Normals come from the depth's screen
// derivatives (the one-sided difference with the smaller depth step, so silhouettes do not
// bend the normal); the colour mixes what lies behind (refracted: looked up at an offset
// along the normal, dimmed by Beer-Lambert absorption over the thickness, tinted by light
// scattered in deep liquid) with a Fresnel-weighted sky reflection, plus a specular
// highlight. Writes the surface's depth, so whatever the scene drew in front stays in front.

//!include render_surface_common.wgsl

@group(0) @binding(1) var depth_tex: texture_2d<f32>;
@group(0) @binding(2) var thickness_tex: texture_2d<f32>;
@group(0) @binding(3) var scene: texture_2d<f32>;

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

fn depth_at(p: vec2<i32>) -> f32 {
    let size = vec2<i32>(textureDimensions(depth_tex));
    if (any(p < vec2<i32>(0)) || any(p >= size)) {
        return 0.0;
    }
    return textureLoad(depth_tex, p, 0).r;
}

// The neighbour difference along `dir` with the smaller depth step (either side).
fn derivative(p: vec2<i32>, dir: vec2<i32>, centre: vec3<f32>) -> vec3<f32> {
    let zf = depth_at(p + dir);
    let zb = depth_at(p - dir);
    let fwd = view_pos(vec2<f32>(p + dir), zf) - centre;
    let back = centre - view_pos(vec2<f32>(p - dir), zb);
    if (zf <= 0.0) {
        return back;
    }
    if (zb <= 0.0 || abs(fwd.z) < abs(back.z)) {
        return fwd;
    }
    return back;
}

fn sky(d: vec3<f32>) -> vec3<f32> {
    let horizon = vec3<f32>(0.60, 0.70, 0.80);
    let zenith = vec3<f32>(0.12, 0.30, 0.65);
    let ground = vec3<f32>(0.10, 0.09, 0.08);
    if (d.y < 0.0) {
        return mix(horizon * 0.5, ground, min(-d.y * 4.0, 1.0));
    }
    return mix(horizon, zenith, sqrt(d.y));
}

struct FOut {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs(i: VOut) -> FOut {
    // Target pixel, and the liquid texel it lies in (the liquid has a coarser grid).
    let p_full = vec2<i32>(i.clip.xy);
    let p = p_full / LIQUID_SCALE;
    let z = depth_at(p);
    if (z <= 0.0) {
        discard;
    }
    let centre = view_pos(vec2<f32>(p), z);
    let dx = derivative(p, vec2<i32>(1, 0), centre);
    let dy = derivative(p, vec2<i32>(0, 1), centre);
    var n = normalize(cross(dy, dx));
    if (n.z < 0.0) {
        n = -n;
    }
    let v = normalize(-centre);
    let thickness = max(textureLoad(thickness_tex, p, 0).r, 0.0);

    // Refraction: what lies behind, displaced along the normal by the liquid crossed.
    let size = vec2<i32>(textureDimensions(scene));
    let shift = vec2<f32>(n.x, -n.y) * s.refraction * min(thickness, 1.0) * focal_px() / z
        * f32(LIQUID_SCALE);
    let q = clamp(p_full + vec2<i32>(shift), vec2<i32>(0), size - vec2<i32>(1));
    let behind = textureLoad(scene, q, 0).rgb;
    let transmit = exp(-s.absorption.rgb * thickness);
    let scattered = s.deep_color.rgb * (vec3<f32>(1.0) - transmit);
    let refracted = behind * transmit + scattered;

    // Reflection of the sky, weighted by Schlick's Fresnel term (water: F0 = 0.02).
    let n_world = normalize((s.inv_view * vec4<f32>(n, 0.0)).xyz);
    let v_world = normalize((s.inv_view * vec4<f32>(v, 0.0)).xyz);
    let fresnel = 0.02 + 0.98 * pow(1.0 - max(dot(n, v), 0.0), 5.0);
    let reflected = sky(reflect(-v_world, n_world));

    let light = normalize(vec3<f32>(0.4, 0.8, 0.6));
    let half_vec = normalize(light + v_world);
    let spec = s.specular * pow(max(dot(n_world, half_vec), 0.0), s.shininess);

    var o: FOut;
    o.color = vec4<f32>(mix(refracted, reflected, fresnel) + vec3<f32>(spec), 1.0);
    let clip = s.proj * vec4<f32>(centre, 1.0);
    o.depth = clip.z / clip.w;
    return o;
}
