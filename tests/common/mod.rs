//! Shared fixtures of the tests: one GPU adapter per test binary, one way to run the
//! binary (`eddy`, `eddy_in`, `eddy_command`), scratch folders (`scratch!`), the shipped
//! scenes (`shipped`; bodies are built with `BodySpec::at_rest`) and field comparisons.
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

/// The eddy binary under test, started in the repository root (where `scenes/` is).
pub fn eddy_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_eddy"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Runs the binary with `args` in the repository root and waits for it.
pub fn eddy(args: &[&str]) -> std::process::Output {
    eddy_command()
        .args(args)
        .output()
        .expect("cannot start eddy")
}

/// Runs the binary with `args` in `dir` and waits for it.
pub fn eddy_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    eddy_command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cannot start eddy")
}

/// A path under the temporary folder for one test's files, unique to this process, the
/// test's module `module` and `name`; whatever an earlier run left there is removed.
pub fn scratch_path(module: &str, name: &str) -> std::path::PathBuf {
    let module = module.rsplit("::").next().unwrap_or(module);
    // The process id first: `name` may be a file name whose extension must stay last.
    let dir = std::env::temp_dir().join(format!("eddy-{module}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// [`scratch_path`], created empty.
pub fn scratch_dir(module: &str, name: &str) -> std::path::PathBuf {
    let dir = scratch_path(module, name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `scratch!("name")`: an empty folder for this module's test `name`
/// ([`scratch_dir`]); `scratch!(path "name")` the same path, not created.
#[macro_export]
macro_rules! scratch {
    (path $name:expr) => {
        $crate::common::scratch_path(module_path!(), $name)
    };
    ($name:expr) => {
        $crate::common::scratch_dir(module_path!(), $name)
    };
}
