//! Shared set-up for the GPU tests: one software (or real) adapter per test binary.
#![allow(dead_code)]

use eddy::gpu::GpuContext;
use std::sync::{Arc, OnceLock};

/// The GPU context shared by the tests of one binary. Panics with the adapter error
/// (which says how to install the software adapter) when there is none.
pub fn gpu() -> Arc<GpuContext> {
    static CTX: OnceLock<Arc<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| Arc::new(GpuContext::new().unwrap_or_else(|e| panic!("{e}"))))
        .clone()
}

/// Max |a - b| over two slices.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

pub fn to_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| *x as f64).collect()
}

/// Max |a - b| over the three face arrays of two MAC fields.
pub fn mac_diff(a: &eddy::reference::MacField, b: &eddy::reference::MacField) -> f64 {
    max_abs_diff(&a.u, &b.u)
        .max(max_abs_diff(&a.v, &b.v))
        .max(max_abs_diff(&a.w, &b.w))
}

/// Max |u| over the three face arrays of a MAC field.
pub fn mac_max(a: &eddy::reference::MacField) -> f64 {
    max_abs(&a.u).max(max_abs(&a.v)).max(max_abs(&a.w))
}

/// The shipped scene `name` (scenes/NAME.ron) at `resolution` cells along its longest axis.
pub fn shipped(name: &str, resolution: u32) -> eddy::scene::Scene {
    eddy::scene::Scene::load(format!("{}/scenes/{name}.ron", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .with_resolution(resolution)
}
