//! eddy's integration tests, one module per area, linked into one binary (linking wgpu and
//! egui once instead of once per file). `scripts/test.sh --test integration pressure::`
//! runs one module. The GPU tests share one adapter (`common::gpu`). Host memory is
//! measured in a binary of its own (tests/host_memory.rs).

#[path = "../common/mod.rs"]
#[macro_use]
mod common;

mod apic;
mod bench_cli;
mod bodies;
mod checkpoint;
mod cli;
mod clock;
mod diffusion;
mod docs;
mod fields;
mod first_run;
mod flow;
mod imports;
mod lab;
mod liquid_volume;
mod mesh;
mod mesh_solids;
mod mg_views;
mod moving_mesh;
mod msrv;
mod physics;
mod pressure;
mod probes;
mod recording;
mod render;
mod robustness;
mod scenes;
mod shaders;
mod smoke;
mod spacing;
mod stages;
mod surface;
mod tension;
mod traffic;
mod untrusted_files;
mod validate;
mod vdb;
mod viewer;
mod viewer_endurance;
