//! criterion benches: the pressure solve per preconditioner and size, P2G, the full
//! step and the smoke substep, on the adapter chosen by WGPU_BACKEND / WGPU_ADAPTER_NAME.
//! Sizes default to 16^3 (smoke 64^2) so `cargo bench` finishes in minutes on the software
//! adapter; EDDY_BENCH_SIZES=16,32,64 chooses others.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use eddy::gpu::GpuContext;
use eddy::scene::{PreconditionerKind, StandardProblem};
use eddy::sim::{
    smoke::{SmokeSimulation, SmokeStage},
    Simulation, Stage,
};
use std::sync::Arc;

fn sizes() -> Vec<u32> {
    std::env::var("EDDY_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<u32>| !v.is_empty())
        .unwrap_or_else(|| vec![16])
}

fn context() -> Arc<GpuContext> {
    Arc::new(GpuContext::new().unwrap_or_else(|e| panic!("{e}")))
}

fn pressure(c: &mut Criterion) {
    let ctx = context();
    let mut group = c.benchmark_group("pressure_solve");
    group.sample_size(10);
    for n in sizes() {
        let mut scene = StandardProblem::DamBreak.scene(n);
        scene.pressure.tolerance = 1e-6;
        scene.pressure.max_iterations = 4000;
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
        for kind in PreconditionerKind::ALL {
            let mut s = scene.clone();
            s.pressure.preconditioner = kind;
            sim.apply_live_settings(&s).unwrap();
            group.bench_with_input(
                BenchmarkId::new(kind.name(), format!("{n}^3")),
                &kind,
                |b, _| b.iter(|| sim.solve_pressure_again().unwrap()),
            );
        }
    }
    group.finish();
}

fn transfers_and_step(c: &mut Criterion) {
    let ctx = context();
    let mut group = c.benchmark_group("step");
    group.sample_size(10);
    for n in sizes() {
        let scene = StandardProblem::DamBreak.scene(n);
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        let (pos, vel) = sim.read_particles().unwrap();
        group.bench_function(BenchmarkId::new("p2g", format!("{n}^3")), |b| {
            b.iter(|| sim.substep(scene.frame_dt, Stage::P2g).unwrap())
        });
        group.bench_function(BenchmarkId::new("full_step", format!("{n}^3")), |b| {
            b.iter(|| {
                sim.upload_particles(&pos, &vel).unwrap();
                sim.substep(scene.frame_dt, Stage::Advect).unwrap()
            })
        });
    }
    group.finish();
}

/// One smoke substep of the benchmark plume (developed for 10 substeps first), per
/// preconditioner, on n x n grids with n = 4 x the liquid sizes (64^2 by default).
fn smoke_step(c: &mut Criterion) {
    let ctx = context();
    let mut group = c.benchmark_group("smoke_step");
    group.sample_size(10);
    for n in sizes().into_iter().map(|n| 4 * n) {
        for kind in [
            PreconditionerKind::Ip,
            PreconditionerKind::Mic0,
            PreconditionerKind::Mg,
        ] {
            let scene = eddy::bench::smoke::plume_scene(n, kind, 1e-4);
            let mut sim = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
            for _ in 0..10 {
                sim.substep(1.0 / 120.0, SmokeStage::Tracers).unwrap();
            }
            group.bench_function(BenchmarkId::new(kind.name(), format!("{n}^2")), |b| {
                b.iter(|| sim.substep(1.0 / 120.0, SmokeStage::Tracers).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, pressure, transfers_and_step, smoke_step);
criterion_main!(benches);
