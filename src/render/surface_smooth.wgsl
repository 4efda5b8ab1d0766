// Liquid surface, pass 3: an edge-preserving (bilateral) blur of the eye depth, run once
// along x (fs_h) and once along y (fs_v). The radius is in world units, converted to
// pixels from each pixel's depth, so the surface looks the same at every zoom. Samples
// weigh by distance (gaussian) and by depth difference, so a near splash is not smeared
// into the pool behind it. Pixels without liquid stay without. The CPU reference is
// src/reference/surface.rs.

//!include render/surface_common.wgsl

@group(0) @binding(1) var src: texture_2d<f32>;

// SURFACE_TAPS taps on each side: a constant loop bound (the software adapter leaks per
// dispatch on loops bounded by uniforms). SURFACE_MAX_RADIUS_PX, the widest radius in
// pixels: at most one tap per pixel, since taps spread further apart skip pixels and the
// sphere bumps between them alias into speckled normals. Close up, the filter covers less
// of the world instead. (Both are generated from src/gpu/constants.rs.)

fn bilateral(p: vec2<i32>, dir: vec2<i32>) -> f32 {
    let size = vec2<i32>(textureDimensions(src));
    let z0 = textureLoad(src, p, 0).r;
    if (z0 <= 0.0) {
        return 0.0;
    }
    let r_px = min(s.smooth_radius * focal_px() / z0, SURFACE_MAX_RADIUS_PX);
    let step = r_px / f32(SURFACE_TAPS);
    var sum = 0.0;
    var wsum = 0.0;
    for (var k = -SURFACE_TAPS; k <= SURFACE_TAPS; k++) {
        let off = i32(floor(f32(k) * step + 0.5));
        let q = clamp(p + dir * off, vec2<i32>(0), size - vec2<i32>(1));
        let z = textureLoad(src, q, 0).r;
        if (z <= 0.0) {
            continue;
        }
        let x = f32(k) / f32(SURFACE_TAPS);
        let dz = (z - z0) / s.depth_falloff;
        let w = exp(-2.0 * x * x - dz * dz);
        sum += w * z;
        wsum += w;
    }
    return sum / wsum;
}

//!include render/fullscreen.wgsl

@fragment
fn fs_h(i: VOut) -> @location(0) f32 {
    return bilateral(vec2<i32>(i.clip.xy), vec2<i32>(1, 0));
}

@fragment
fn fs_v(i: VOut) -> @location(0) f32 {
    return bilateral(vec2<i32>(i.clip.xy), vec2<i32>(0, 1));
}
