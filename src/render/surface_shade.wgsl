// Liquid surface, pass 4b: shades the smoothed depth. Normals come from the depth's screen
// derivatives (the one-sided difference with the smaller depth step, so silhouettes do not
// bend the normal); the colour mixes what lies behind (refracted: looked up at an offset
// along the normal, dimmed by Beer-Lambert absorption over the thickness, tinted by light
// scattered in deep liquid) with a Fresnel-weighted sky reflection, plus a specular
// highlight. Writes the surface's depth, so whatever the scene drew in front stays in front.

//!include render/surface_common.wgsl

@group(0) @binding(1) var depth_tex: texture_2d<f32>;
@group(0) @binding(2) var thickness_tex: texture_2d<f32>;
@group(0) @binding(3) var scene: texture_2d<f32>;

//!include render/fullscreen.wgsl

fn depth_at(p: vec2<i32>) -> f32 {
    let size = vec2<i32>(textureDimensions(depth_tex));
    if (any(p < vec2<i32>(0)) || any(p >= size)) {
        return 0.0;
    }
    return textureLoad(depth_tex, p, 0).r;
}

// View-space position of target pixel centre `pf` (pixels) at eye depth `z`.
fn view_pos_target(pf: vec2<f32>, z: f32) -> vec3<f32> {
    let ndc = vec2<f32>(pf.x / s.target_width * 2.0 - 1.0, 1.0 - pf.y / s.target_height * 2.0);
    return vec3<f32>(ndc.x / s.proj[0][0] * z, ndc.y / s.proj[1][1] * z, -z);
}

// The smoothed depth at target pixel centre `pf`: 0 unless the liquid texel it lies in
// holds liquid; else bilinear between the four nearest liquid texels that hold liquid, so
// the coarser liquid grid does not show as 2x2 facets. Across a depth jump (more than the
// filter's edge depth) the texel it lies in is used alone, keeping edges sharp.
fn depth_fine(pf: vec2<f32>) -> f32 {
    let own = depth_at(vec2<i32>(floor(pf / f32(LIQUID_SCALE))));
    if (own <= 0.0) {
        return 0.0;
    }
    let t = pf / f32(LIQUID_SCALE) - vec2<f32>(0.5);
    let i0 = vec2<i32>(floor(t));
    let f = t - floor(t);
    let z = vec4<f32>(
        depth_at(i0),
        depth_at(i0 + vec2<i32>(1, 0)),
        depth_at(i0 + vec2<i32>(0, 1)),
        depth_at(i0 + vec2<i32>(1, 1)),
    );
    let valid = vec4<f32>(z > vec4<f32>(0.0));
    let w = vec4<f32>((1.0 - f.x) * (1.0 - f.y), f.x * (1.0 - f.y), (1.0 - f.x) * f.y, f.x * f.y)
        * valid;
    let far = max(max(z.x, z.y), max(z.z, z.w));
    let near = min(min(select(far, z.x, z.x > 0.0), select(far, z.y, z.y > 0.0)),
                   min(select(far, z.z, z.z > 0.0), select(far, z.w, z.w > 0.0)));
    if (far - near > s.depth_falloff) {
        return own;
    }
    return dot(w, z) / dot(w, vec4<f32>(1.0));
}

// The difference to the neighbour pixel along `dir`, on the side with the smaller depth
// step (either side).
fn derivative(pf: vec2<f32>, dir: vec2<f32>, centre: vec3<f32>) -> vec3<f32> {
    let zf = depth_fine(pf + dir);
    let zb = depth_fine(pf - dir);
    let fwd = view_pos_target(pf + dir, zf) - centre;
    let back = centre - view_pos_target(pf - dir, zb);
    if (zf <= 0.0) {
        return back;
    }
    if (zb <= 0.0 || abs(fwd.z) < abs(back.z)) {
        return fwd;
    }
    return back;
}

fn sky(d: vec3<f32>) -> vec3<f32> {
    // Dim enough that grazing reflections at silhouettes do not outshine the liquid.
    let horizon = vec3<f32>(0.40, 0.48, 0.56);
    let zenith = vec3<f32>(0.10, 0.24, 0.50);
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
    // Target pixel and its liquid texel (the liquid has a coarser grid).
    let pf = i.clip.xy;
    let p_full = vec2<i32>(pf);
    let p = p_full / LIQUID_SCALE;
    let z = depth_fine(pf);
    if (z <= 0.0) {
        discard;
    }
    let centre = view_pos_target(pf, z);
    let dx = derivative(pf, vec2<f32>(1.0, 0.0), centre);
    let dy = derivative(pf, vec2<f32>(0.0, 1.0), centre);
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
