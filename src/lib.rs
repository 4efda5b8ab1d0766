//! eddy: a GPU PIC/FLIP liquid and smoke simulator built for studying pressure solvers.
//!
//! Layers, top to bottom: `ui` -> `render` -> `sim` -> `gpu`, `scene`. `reference` is a CPU
//! (f64) implementation of every stage that the tests compare the GPU against.

pub mod bench;
pub mod bench_smoke;
pub mod bench_transfer;
pub mod gpu;
pub mod mesh;
pub mod output;
pub mod reference;
pub mod render;
pub mod runtime_dir;
pub mod scene;
pub mod scenes;
pub mod sim;
pub mod ui;
