//! The eddy command line: view | run | check | bench.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use eddy::gpu::GpuContext;
use eddy::scene::{PreconditionerKind, Scene, SceneKind};
use eddy::sim::smoke::{SmokeFrameStats, SmokeSimulation};
use eddy::sim::{FrameStats, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DEFAULT_SCENE: &str = "scenes/dam_break.ron";

#[derive(Parser)]
#[command(
    name = "eddy",
    version,
    about = "GPU PIC/FLIP liquid and smoke simulator"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene headless and write stats.csv (and optional particle dumps).
    Run {
        /// Scene file (RON).
        scene: PathBuf,
        /// Frames to simulate.
        #[arg(long, default_value_t = 120)]
        frames: u64,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Write particles as binary PLY every K frames.
        #[arg(long, value_name = "K")]
        dump_particles: Option<u64>,
        /// Write the last pressure solve as Matrix Market files into DIR.
        #[arg(long, value_name = "DIR")]
        export_system: Option<PathBuf>,
        /// Override the scene's preconditioner (none, jacobi, ip, mic0, mic0_tiled, mg).
        #[arg(long)]
        preconditioner: Option<PreconditionerKind>,
        /// Override the resolution: cells along the longest axis.
        #[arg(long)]
        resolution: Option<u32>,
    },
    /// Open the viewer on a scene (plain `eddy` opens it on scenes/dam_break.ron).
    View {
        #[arg(default_value = DEFAULT_SCENE)]
        scene: PathBuf,
        /// Run this many frames, then exit (after --screenshot, if given).
        #[arg(long)]
        frames: Option<u64>,
        /// Save the window as PNG after --frames frames.
        #[arg(long, requires = "frames")]
        screenshot: Option<PathBuf>,
        /// Show a slice of this grid field (e.g. cell_type, divergence, pressure, pcg_r;
        /// with the mg preconditioner also each multigrid level's mg_rhs_L, mg_residual_L,
        /// mg_correction_L and mg_cell_type_L, L = 0 finest).
        #[arg(long)]
        field: Option<eddy::sim::views::Field>,
        /// Slice axis: x, y or z.
        #[arg(long, default_value = "z", value_parser = ["x", "y", "z"])]
        axis: String,
        /// Slice index along the axis (default: the middle).
        #[arg(long)]
        slice: Option<u32>,
        /// Smoke scenes: open on this view (dye, speed, direction, pressure, divergence,
        /// divergence_after, vorticity, temperature, obstacles; with the mg preconditioner
        /// also the multigrid levels' vectors, as for --field).
        #[arg(long)]
        smoke_view: Option<eddy::sim::smoke::views::SmokeField>,
    },
    /// Validate a scene and print its summary without simulating.
    Check { scene: PathBuf },
    /// Compare the preconditioners on the standard problems (see BENCHMARKS.md); with
    /// --smoke, time the 2D smoke mode instead.
    Bench {
        /// Grid sizes (cells per axis), comma separated [default: 16,32,64; smoke:
        /// 128,256,512].
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<u32>>,
        /// Problems: dam_break, settled_pool.
        #[arg(long, value_delimiter = ',', default_values = ["dam_break", "settled_pool"])]
        problems: Vec<String>,
        /// Preconditioners: none, jacobi, ip, mic0, mic0_tiled, mg [default: all; smoke: ip,mg].
        #[arg(long, value_delimiter = ',')]
        preconditioners: Option<Vec<PreconditionerKind>>,
        /// Relative residual (max norm) each solve iterates to [default: 1e-6; smoke: 1e-4].
        #[arg(long)]
        tolerance: Option<f64>,
        #[arg(long, default_value_t = 4000)]
        max_iterations: u32,
        /// Timed solves per case.
        #[arg(long, default_value_t = 3)]
        solves: u32,
        /// Timed full steps per case [default: 3; smoke: 30].
        #[arg(long)]
        steps: Option<u32>,
        /// Benchmark the smoke mode: a hot plume on square grids, steps/s per size.
        #[arg(long)]
        smoke: bool,
        /// PCG iterations submitted between convergence checks (the scene setting
        /// pressure.check_every).
        #[arg(long, default_value_t = 8)]
        check_every: u32,
        /// Smoke only: untimed substeps before timing.
        #[arg(long, default_value_t = 30)]
        warmup: u32,
        /// Also write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn main() {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_core=warn,wgpu_hal=warn,naga=warn"),
    )
    .init();
    if let Err(e) = real_main() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None => view(PathBuf::from(DEFAULT_SCENE), None, None),
        Some(Command::View {
            scene,
            frames,
            screenshot,
            field,
            axis,
            slice,
            smoke_view,
        }) => eddy::ui::run(eddy::ui::ViewerOptions {
            scene,
            frames,
            screenshot,
            field,
            axis: match axis.as_str() {
                "x" => 0,
                "y" => 1,
                _ => 2,
            },
            slice,
            smoke_view,
        })
        .map_err(Into::into),
        Some(Command::Check { scene }) => check(&scene),
        Some(Command::Bench {
            sizes,
            problems,
            preconditioners,
            tolerance,
            max_iterations,
            solves,
            steps,
            smoke,
            check_every,
            warmup,
            json,
        }) => {
            if smoke {
                let d = eddy::bench_smoke::SmokeBenchOptions::default();
                let opts = eddy::bench_smoke::SmokeBenchOptions {
                    sizes: sizes.unwrap_or(d.sizes),
                    preconditioners: preconditioners.unwrap_or(d.preconditioners),
                    tolerance: tolerance.unwrap_or(d.tolerance),
                    warmup,
                    steps: steps.unwrap_or(d.steps),
                    check_every,
                };
                return bench_smoke(&opts, json.as_deref());
            }
            let problems = problems
                .iter()
                .map(|p| eddy::bench::parse_problem(p))
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| anyhow::anyhow!(e))?;
            let d = eddy::bench::BenchOptions::default();
            let opts = eddy::bench::BenchOptions {
                sizes: sizes.unwrap_or(d.sizes),
                problems,
                preconditioners: preconditioners.unwrap_or(d.preconditioners),
                tolerance: tolerance.unwrap_or(d.tolerance),
                max_iterations,
                solves,
                steps: steps.unwrap_or(d.steps),
                check_every,
            };
            bench(&opts, json.as_deref())
        }
        Some(Command::Run {
            scene,
            frames,
            out,
            dump_particles,
            export_system,
            preconditioner,
            resolution,
        }) => {
            let mut s = Scene::load(&scene)?;
            if let Some(p) = preconditioner {
                s.pressure.preconditioner = p;
            }
            if let Some(n) = resolution {
                if n < 2 {
                    bail!("--resolution must be at least 2");
                }
                s = s.with_resolution(n);
                s.validate()
                    .map_err(|m| anyhow::anyhow!("{}: {m}", scene.display()))?;
            }
            run(&s, frames, &out, dump_particles, export_system.as_deref())
        }
    }
}

fn view(scene: PathBuf, frames: Option<u64>, screenshot: Option<PathBuf>) -> Result<()> {
    eddy::ui::run(eddy::ui::ViewerOptions {
        scene,
        frames,
        screenshot,
        field: None,
        axis: 2,
        slice: None,
        smoke_view: None,
    })?;
    Ok(())
}

fn check(path: &Path) -> Result<()> {
    let scene = Scene::load(path)?;
    let init = scene.initial_state();
    let [nx, ny, nz] = scene.dims();
    let est = eddy::sim::memory_estimate(&scene, init.positions.len() as u64);
    let solid = init.solid.iter().filter(|s| **s != 0).count();
    println!("scene       {} ({})", scene.name, path.display());
    println!("kind        {:?}", scene.kind);
    println!(
        "domain      {} x {} x {} m, grid {nx} x {ny} x {nz} = {} cells of {:.4} m",
        scene.domain.0,
        scene.domain.1,
        scene.domain.2,
        scene.cell_count(),
        scene.h()
    );
    println!("solid cells {solid}");
    let est = if scene.kind == SceneKind::Smoke {
        let s = &scene.smoke;
        println!(
            "smoke       {} advection, vorticity {}, buoyancy {}, dye weight {}, sources: {}{}",
            s.advection.name(),
            s.vorticity,
            s.buoyancy,
            s.dye_weight,
            s.sources.len(),
            if s.obstacle.is_some() {
                ", moving obstacle"
            } else {
                ""
            }
        );
        println!("tracers     {}", s.tracers);
        eddy::sim::smoke::memory_estimate(&scene)
    } else {
        println!(
            "particles   {} ({} per fluid cell)",
            init.positions.len(),
            scene.particles_per_cell
        );
        est
    };
    println!(
        "solver      {} to relative residual {:e}, at most {} iterations",
        scene.pressure.preconditioner, scene.pressure.tolerance, scene.pressure.max_iterations
    );
    println!(
        "memory      {:.1} MiB on the GPU (largest buffer {:.1} MiB: {})",
        est.total as f64 / 1048576.0,
        est.largest_buffer as f64 / 1048576.0,
        est.largest_name
    );
    Ok(())
}

fn progress_bar(frames: u64) -> ProgressBar {
    let bar = ProgressBar::new(frames);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} frames  {msg}  [{elapsed_precise} < {eta_precise}]",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

fn create_stats(out: &Path, header: &str) -> Result<(PathBuf, std::io::BufWriter<std::fs::File>)> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let stats_path = out.join("stats.csv");
    let mut csv = std::io::BufWriter::new(
        std::fs::File::create(&stats_path)
            .with_context(|| format!("cannot create {}", stats_path.display()))?,
    );
    writeln!(csv, "{header}")?;
    Ok((stats_path, csv))
}

fn report_run(
    ctx: &GpuContext,
    frames: u64,
    substeps: u64,
    secs: f64,
    stats_path: &Path,
    stage_ms: &eddy::gpu::StageTiming,
) {
    eprintln!(
        "{frames} frames, {substeps} substeps in {secs:.2} s: {:.2} steps/s, {:.2} frames/s; stats in {}",
        substeps as f64 / secs,
        frames as f64 / secs,
        stats_path.display()
    );
    if ctx.timestamps && substeps > 0 {
        eprintln!("GPU time per substep by stage (timestamp queries):");
        let total = stage_ms.total();
        for (name, ms) in &stage_ms.stages {
            eprintln!(
                "  {name:<12} {:>9.3} ms  {:>5.1}%",
                ms / substeps as f64,
                100.0 * ms / total.max(1e-12)
            );
        }
    } else {
        eprintln!("this adapter has no timestamp queries: no per-stage GPU times");
    }
}

fn run(
    scene: &Scene,
    frames: u64,
    out: &Path,
    dump: Option<u64>,
    export: Option<&Path>,
) -> Result<()> {
    if scene.kind == SceneKind::Smoke {
        if dump.is_some() {
            bail!("--dump-particles writes liquid particles; smoke scenes have none (their tracers are drawn by `eddy view`)");
        }
        if export.is_some() {
            bail!("--export-system is available for liquid scenes only");
        }
        return run_smoke(scene, frames, out);
    }
    if dump == Some(0) {
        bail!("--dump-particles must be at least 1");
    }
    let (stats_path, mut csv) = create_stats(out, FrameStats::CSV_HEADER)?;
    let ctx = Arc::new(GpuContext::new()?);
    eprintln!("adapter: {}", ctx.describe());
    let mut sim = Simulation::new(ctx.clone(), scene)?;
    let bar = progress_bar(frames);
    let start = std::time::Instant::now();
    let mut total_substeps = 0u64;
    let mut stage_ms = eddy::gpu::StageTiming::default();
    if let Some(k) = dump {
        dump_particles(&sim, out, 0, k)?;
    }
    for _ in 0..frames {
        let st = sim.step_frame()?;
        total_substeps += st.substeps as u64;
        stage_ms.merge(&sim.last_timing);
        writeln!(csv, "{}", st.csv_row())?;
        if let Some(k) = dump {
            dump_particles(&sim, out, st.frame, k)?;
        }
        let secs = start.elapsed().as_secs_f64();
        bar.set_message(format!(
            "{:.1} steps/s, pcg {} it, |div| {:.1e}",
            total_substeps as f64 / secs,
            st.pcg_iterations,
            st.max_divergence
        ));
        bar.inc(1);
    }
    csv.flush()?;
    bar.finish();
    let secs = start.elapsed().as_secs_f64();
    report_run(&ctx, frames, total_substeps, secs, &stats_path, &stage_ms);
    if let Some(dir) = export {
        let sys = sim.export_system()?;
        eddy::output::write_matrix_market(dir, &sys)
            .with_context(|| format!("cannot write the system to {}", dir.display()))?;
        eprintln!("pressure system written to {}", dir.display());
    }
    Ok(())
}

fn run_smoke(scene: &Scene, frames: u64, out: &Path) -> Result<()> {
    let (stats_path, mut csv) = create_stats(out, SmokeFrameStats::CSV_HEADER)?;
    let ctx = Arc::new(GpuContext::new()?);
    eprintln!("adapter: {}", ctx.describe());
    let mut sim = SmokeSimulation::new(ctx.clone(), scene)?;
    let bar = progress_bar(frames);
    let start = std::time::Instant::now();
    let mut total_substeps = 0u64;
    let mut stage_ms = eddy::gpu::StageTiming::default();
    for _ in 0..frames {
        let st = sim.step_frame()?;
        total_substeps += st.substeps as u64;
        stage_ms.merge(&sim.last_timing);
        writeln!(csv, "{}", st.csv_row())?;
        let secs = start.elapsed().as_secs_f64();
        bar.set_message(format!(
            "{:.1} steps/s, pcg {} it, |div| {:.1e}, dye {:.3e}",
            total_substeps as f64 / secs,
            st.pcg_iterations,
            st.max_divergence,
            st.dye_total
        ));
        bar.inc(1);
    }
    csv.flush()?;
    bar.finish();
    let secs = start.elapsed().as_secs_f64();
    report_run(&ctx, frames, total_substeps, secs, &stats_path, &stage_ms);
    Ok(())
}

fn bench(opts: &eddy::bench::BenchOptions, json: Option<&Path>) -> Result<()> {
    opts.validate()?;
    run_bench(
        |ctx, progress| eddy::bench::run(ctx, opts, progress),
        eddy::bench::table,
        json,
    )
}

fn bench_smoke(opts: &eddy::bench_smoke::SmokeBenchOptions, json: Option<&Path>) -> Result<()> {
    opts.validate()?;
    run_bench(
        |ctx, progress| eddy::bench_smoke::run(ctx, opts, progress),
        eddy::bench_smoke::table,
        json,
    )
}

/// Runs a benchmark with a progress bar, prints its table and writes its JSON.
fn run_bench<R: serde::Serialize>(
    run: impl FnOnce(
        Arc<GpuContext>,
        &mut dyn FnMut(usize, usize, &str),
    ) -> Result<R, eddy::bench::BenchError>,
    table: impl Fn(&R) -> String,
    json: Option<&Path>,
) -> Result<()> {
    let ctx = Arc::new(GpuContext::new()?);
    eprintln!("adapter: {}", ctx.describe());
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} cases  {msg}  [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = run(ctx, &mut |done, total, what| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(what.to_string());
    })?;
    bar.finish_and_clear();
    print!("{}", table(&report));
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("JSON written to {}", path.display());
    }
    Ok(())
}

fn dump_particles(sim: &Simulation, out: &Path, frame: u64, every: u64) -> Result<()> {
    if frame % every != 0 {
        return Ok(());
    }
    let (pos, vel) = sim.read_particles()?;
    let path = out.join(format!("particles_{frame:05}.ply"));
    eddy::output::write_ply(&path, &pos, &vel)
        .with_context(|| format!("cannot write {}", path.display()))
}
