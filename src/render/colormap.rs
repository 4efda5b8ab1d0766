//! Colormaps for fields and particles: a sequential one (viridis, sampled), a diverging one
//! (blue - white - red, centred on zero) and the categorical cell-type colours.

use crate::scene::{AIR, FLUID, SOLID};

/// Viridis at 9 stops, linearly interpolated. (0.318 is a colour sample, not 1/pi.)
#[allow(clippy::approx_constant)]
const VIRIDIS: [[f32; 3]; 9] = [
    [0.267, 0.005, 0.329],
    [0.283, 0.141, 0.458],
    [0.254, 0.265, 0.530],
    [0.207, 0.372, 0.553],
    [0.164, 0.471, 0.558],
    [0.128, 0.567, 0.551],
    [0.135, 0.659, 0.518],
    [0.477, 0.821, 0.318],
    [0.993, 0.906, 0.144],
];

fn lerp(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Sequential colour of `t` in [0, 1] (clamped), sRGB-encoded components in [0, 1].
pub fn sequential(t: f32) -> [f32; 3] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f32;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    lerp(VIRIDIS[i], VIRIDIS[i + 1], x - i as f32)
}

/// Diverging colour of `t` in [-1, 1] (clamped): blue below zero, white at zero, red above.
pub fn diverging(t: f32) -> [f32; 3] {
    let t = if t.is_finite() {
        t.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let blue = [0.23, 0.30, 0.75];
    let white = [0.97, 0.97, 0.97];
    let red = [0.71, 0.02, 0.15];
    if t < 0.0 {
        lerp(white, blue, -t)
    } else {
        lerp(white, red, t)
    }
}

/// Categorical colours of the cell types.
pub fn cell_type(t: u32) -> [f32; 3] {
    match t {
        AIR => [0.86, 0.88, 0.92],
        FLUID => [0.16, 0.43, 0.90],
        SOLID => [0.30, 0.30, 0.30],
        _ => [1.0, 0.0, 1.0],
    }
}

/// Name of cell type `t`, "?" for a value that is no cell type.
pub fn cell_type_name(t: u32) -> &'static str {
    match t {
        AIR => "AIR",
        FLUID => "FLUID",
        SOLID => "SOLID",
        _ => "?",
    }
}

/// How field values map to colours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Values in [lo, hi] -> sequential.
    Sequential {
        lo: f32,
        hi: f32,
    },
    /// Values in [-m, m] -> diverging.
    Diverging {
        max: f32,
    },
    CellTypes,
}

impl Scale {
    pub fn color(&self, v: f32) -> [f32; 3] {
        match *self {
            Scale::Sequential { lo, hi } => sequential((v - lo) / (hi - lo).max(1e-30)),
            Scale::Diverging { max } => diverging(v / max.max(1e-30)),
            Scale::CellTypes => cell_type(v.round().max(0.0) as u32),
        }
    }

    /// The automatic scale of a set of values: robust, so that a few extreme cells (a
    /// spike at a solid corner, one stray particle) do not flatten the rest into one
    /// colour. Sequential scales span the 1st to 99th percentile; diverging ones are
    /// symmetric about zero out to the 99th percentile of the nonzero magnitudes (cells
    /// that are exactly zero, such as AIR in a pressure field, do not shrink the range).
    /// Values outside the range saturate.
    pub fn auto(values: &[f32], signed: bool) -> Scale {
        if signed {
            let mut mags: Vec<f32> = values
                .iter()
                .filter(|v| v.is_finite() && **v != 0.0)
                .map(|v| v.abs())
                .collect();
            mags.sort_by(f32::total_cmp);
            let m = percentile(&mags, ROBUST_HI);
            return Scale::Diverging {
                max: if m > 0.0 { m } else { 1.0 },
            };
        }
        let mut v: Vec<f32> = values.iter().copied().filter(|v| v.is_finite()).collect();
        v.sort_by(f32::total_cmp);
        let (lo, hi) = (percentile(&v, ROBUST_LO), percentile(&v, ROBUST_HI));
        if hi > lo {
            return Scale::Sequential { lo, hi };
        }
        // Almost every value equal: the full range still shows the few that differ.
        let (min, max) = (v.first().copied(), v.last().copied());
        match (min, max) {
            (Some(lo), Some(hi)) if hi > lo => Scale::Sequential { lo, hi },
            (Some(lo), _) => Scale::Sequential {
                lo: 0.0,
                hi: lo.abs().max(1.0),
            },
            _ => Scale::Sequential { lo: 0.0, hi: 1.0 },
        }
    }
}

/// Percentiles of the automatic range.
const ROBUST_LO: f32 = 0.01;
const ROBUST_HI: f32 = 0.99;

/// The `q`-quantile (nearest rank) of sorted values; 0 when there are none.
fn percentile(sorted: &[f32], q: f32) -> f32 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = (q * (sorted.len() - 1) as f32).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub fn to_rgba8(c: [f32; 3]) -> [u8; 4] {
    [
        (c[0] * 255.0).round() as u8,
        (c[1] * 255.0).round() as u8,
        (c[2] * 255.0).round() as u8,
        255,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_and_centre() {
        assert_eq!(sequential(0.0), VIRIDIS[0]);
        assert_eq!(sequential(1.0), VIRIDIS[8]);
        assert_eq!(sequential(f32::NAN), VIRIDIS[0]);
        let w = diverging(0.0);
        assert!(w.iter().all(|c| *c > 0.9));
        assert!(diverging(-1.0)[2] > diverging(-1.0)[0]);
        assert!(diverging(1.0)[0] > diverging(1.0)[2]);
    }

    #[test]
    fn auto_scale_covers_the_values() {
        match Scale::auto(&[-2.0, 0.5, 1.0], true) {
            Scale::Diverging { max } => assert_eq!(max, 2.0),
            s => panic!("{s:?}"),
        }
        match Scale::auto(&[3.0, 5.0, 4.0], false) {
            Scale::Sequential { lo, hi } => assert_eq!((lo, hi), (3.0, 5.0)),
            s => panic!("{s:?}"),
        }
        assert_ne!(cell_type(AIR), cell_type(FLUID));
        assert_ne!(cell_type(FLUID), cell_type(SOLID));
    }

    #[test]
    fn one_outlier_does_not_flatten_the_auto_range() {
        // A smooth ramp of 1000 values with one spike a million times larger.
        let mut v: Vec<f32> = (0..1000).map(|i| i as f32 / 999.0).collect();
        v[500] = 1e6;
        match Scale::auto(&v, false) {
            Scale::Sequential { lo, hi } => {
                assert!(lo < 0.02 && hi > 0.97 && hi < 1.0, "{lo} {hi}");
            }
            s => panic!("{s:?}"),
        }
        // Signed: zeros (AIR) and one huge negative spike; the range follows the body.
        let mut v: Vec<f32> = (0..1000).map(|i| (i as f32 - 500.0) / 500.0).collect();
        v.extend([0.0; 3000]);
        v.push(-1e6);
        match Scale::auto(&v, true) {
            Scale::Diverging { max } => assert!(max > 0.95 && max <= 1.0, "{max}"),
            s => panic!("{s:?}"),
        }
        // The ramp reads as many distinct colours, not one.
        let s = Scale::auto(&v, true);
        let distinct: std::collections::HashSet<[u8; 4]> =
            (0..1000).map(|i| to_rgba8(s.color(v[i]))).collect();
        assert!(distinct.len() > 100, "{}", distinct.len());
    }

    #[test]
    fn auto_range_of_nothing_or_constants_is_usable() {
        assert_eq!(
            Scale::auto(&[], false),
            Scale::Sequential { lo: 0.0, hi: 1.0 }
        );
        assert_eq!(Scale::auto(&[0.0; 5], true), Scale::Diverging { max: 1.0 });
        assert_eq!(
            Scale::auto(&[3.0; 5], false),
            Scale::Sequential { lo: 0.0, hi: 3.0 }
        );
        // 99.5% equal values: the percentiles coincide, the full range is used.
        let mut v = vec![2.0f32; 1000];
        v[3] = 5.0;
        assert_eq!(
            Scale::auto(&v, false),
            Scale::Sequential { lo: 2.0, hi: 5.0 }
        );
    }
}
