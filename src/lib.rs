//! eddy: a GPU PIC/FLIP liquid and smoke simulator built for studying pressure solvers.
//!
//! Layers, top to bottom: `ui` -> `render` -> `sim` -> `gpu`, `scene`. `reference` is a CPU
//! (f64) implementation of every stage that the tests compare the GPU against.

// The numerical code indexes several arrays (and vector components) by one index, the way
// the formulas and the GPU kernels it mirrors are written; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

pub mod bench;
pub mod files;
pub mod gpu;
pub mod mesh;
pub mod output;
pub mod reference;
pub mod render;
pub mod scene;
pub mod sim;
pub mod ui;
pub mod validate;
