//! The screen-space liquid surface's depth filter (`src/render/surface_smooth.wgsl`)
//! in f64: a separable bilateral blur, along x then along y, whose radius is given in
//! world units and converted to pixels from each pixel's eye depth.

/// Taps on each side of a pixel (the GPU filter's constant).
pub const SURFACE_TAPS: i64 = crate::gpu::constants::SURFACE_TAPS as i64;
/// Widest radius in pixels.
pub use crate::gpu::constants::SURFACE_MAX_RADIUS_PX;

/// What the filter needs to know besides the image.
#[derive(Clone, Copy, Debug)]
pub struct DepthFilter {
    /// Focal length in pixels: a length L at eye depth z spans L * focal_px / z pixels.
    pub focal_px: f64,
    /// Filter radius, m.
    pub radius: f64,
    /// Depth difference (m) at which a sample's weight falls by 1/e.
    pub falloff: f64,
}

/// One pass of the filter along `dir` over a `width` x `height` image of eye depths
/// (row-major, 0 = no liquid).
fn pass(src: &[f64], width: usize, height: usize, f: &DepthFilter, dir: (i64, i64)) -> Vec<f64> {
    let mut out = vec![0.0; src.len()];
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let z0 = src[y as usize * width + x as usize];
            if z0 <= 0.0 {
                continue;
            }
            let r_px = (f.radius * f.focal_px / z0).min(SURFACE_MAX_RADIUS_PX);
            let step = r_px / SURFACE_TAPS as f64;
            let (mut sum, mut wsum) = (0.0, 0.0);
            for k in -SURFACE_TAPS..=SURFACE_TAPS {
                let off = (k as f64 * step + 0.5).floor() as i64;
                let qx = (x + dir.0 * off).clamp(0, width as i64 - 1);
                let qy = (y + dir.1 * off).clamp(0, height as i64 - 1);
                let z = src[qy as usize * width + qx as usize];
                if z <= 0.0 {
                    continue;
                }
                let t = k as f64 / SURFACE_TAPS as f64;
                let dz = (z - z0) / f.falloff;
                let w = (-2.0 * t * t - dz * dz).exp();
                sum += w * z;
                wsum += w;
            }
            out[y as usize * width + x as usize] = sum / wsum;
        }
    }
    out
}

/// The filtered depth image: a pass along x, then one along y.
pub fn smooth_depth(depth: &[f64], width: usize, height: usize, f: &DepthFilter) -> Vec<f64> {
    assert_eq!(depth.len(), width * height);
    let tmp = pass(depth, width, height, f, (1, 0));
    pass(&tmp, width, height, f, (0, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_surface_stays_flat_and_empty_pixels_stay_empty() {
        let (w, h) = (20, 12);
        let mut d = vec![1.5; w * h];
        // The top row holds no liquid.
        d[..w].fill(0.0);
        let f = DepthFilter {
            focal_px: 100.0,
            radius: 0.05,
            falloff: 0.02,
        };
        let s = smooth_depth(&d, w, h, &f);
        for (a, b) in d.iter().zip(&s) {
            assert!((a - b).abs() < 1e-12, "{a} -> {b}");
        }
    }

    #[test]
    fn a_depth_step_is_kept_and_noise_is_smoothed() {
        // Left half at 1 m, right half at 2 m, with +-1 mm alternating noise.
        let (w, h) = (40, 8);
        let d: Vec<f64> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let base = if x < w / 2 { 1.0 } else { 2.0 };
                base + if (x + y) % 2 == 0 { 1e-3 } else { -1e-3 }
            })
            .collect();
        let f = DepthFilter {
            focal_px: 200.0,
            radius: 0.03,
            falloff: 0.01,
        };
        let s = smooth_depth(&d, w, h, &f);
        for y in 0..h {
            for x in 0..w {
                let base = if x < w / 2 { 1.0 } else { 2.0 };
                // The step survives (no mixing across a 1 m jump)...
                assert!((s[y * w + x] - base).abs() < 1.5e-3);
            }
            // ...and away from the edges the noise is mostly gone.
            let mid = s[y * w + w / 4];
            assert!((mid - 1.0).abs() < 3e-4, "{mid}");
        }
    }
}
