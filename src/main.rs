//! The eddy command line: view | run | check | bench | scenes.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use eddy::gpu::GpuContext;
use eddy::output::{FolderContents, RowWriter};
use eddy::scene::{InitialState, PreconditionerKind, Scene, SceneKind};
use eddy::sim::smoke::SmokeSimulation;
use eddy::sim::{FrameStats, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const DEFAULT_SCENE: &str = "scenes/dam_break.ron";

/// Above this many particles `eddy check` skips its CPU estimate of the first step's FLUID
/// cells (a reference P2G over every particle).
const FLUID_ESTIMATE_MAX_PARTICLES: usize = 4 << 20;

/// Diagnostics go to stderr, and a stderr that cannot be written (closed, full) must not
/// turn a finished run into a panic: `eprintln!` would panic, this drops the line.
macro_rules! note {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

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
    /// Ctrl-C (or SIGTERM) stops after the current frame's outputs; a second one at once.
    Run {
        /// Scene file (RON), or the name of a shipped scene (`eddy scenes`).
        scene: PathBuf,
        /// Frames to simulate.
        // Hyphen values reach the parser, so `--frames -1` is named in the error as a bad
        // value rather than reported as an unknown argument `-1`.
        #[arg(long, default_value_t = 120, allow_hyphen_values = true)]
        frames: u64,
        /// Output directory; must be empty or new unless --overwrite is given.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Reuse a non-empty --out: delete the stats, particle and mesh dumps of an earlier run
        /// there first (other files are kept and listed).
        #[arg(long)]
        overwrite: bool,
        /// Write particles as binary PLY every K frames.
        #[arg(long, value_name = "K", allow_hyphen_values = true)]
        dump_particles: Option<u64>,
        /// Write the liquid surface as a binary PLY triangle mesh every K frames
        /// (mesh_NNNNN.ply: vertex normals, closed by caps at the walls).
        #[arg(long, value_name = "K", allow_hyphen_values = true)]
        dump_mesh: Option<u64>,
        /// Sample the surface R times finer than the grid (1 to 8) [default: 1].
        #[arg(
            long,
            value_name = "R",
            requires = "dump_mesh",
            allow_hyphen_values = true
        )]
        mesh_resolution: Option<u32>,
        /// Write the last pressure solve as Matrix Market files into DIR.
        #[arg(long, value_name = "DIR")]
        export_system: Option<PathBuf>,
        /// Override the scene's preconditioner (none, jacobi, ip, mic0, mic0_tiled, mg).
        #[arg(long)]
        preconditioner: Option<PreconditionerKind>,
        /// Override the resolution: cells along the longest axis.
        #[arg(long, allow_hyphen_values = true)]
        resolution: Option<u32>,
        /// After every frame, fail unless every pressure solve reached its tolerance and
        /// every particle (tracer) is finite and inside the domain (reads them back: slower).
        #[arg(long)]
        check_invariants: bool,
    },
    /// Open the viewer on a scene (plain `eddy` opens it on the dam break).
    #[command(after_help = view_fields_help())]
    View {
        /// Scene file (RON), or the name of a shipped scene (`eddy scenes`).
        #[arg(default_value = DEFAULT_SCENE)]
        scene: PathBuf,
        /// Run this many frames, then exit (after --screenshot, if given).
        #[arg(long)]
        frames: Option<u64>,
        /// Save the window every --every simulated frames as DIR/frame_00001.png,
        /// frame_00002.png, ... (the folder must hold no frames yet); with --frames, exit
        /// after them.
        #[arg(long, value_name = "DIR")]
        record: Option<PathBuf>,
        /// With --record: save every K-th simulated frame.
        #[arg(long, value_name = "K", default_value_t = 1, requires = "record")]
        every: u64,
        /// Camera yaw and pitch in degrees and distance in metres from the domain's centre
        /// (e.g. 30,25,2.2); the framed default view otherwise.
        #[arg(long, value_name = "YAW,PITCH,DISTANCE", value_parser = parse_camera, allow_hyphen_values = true)]
        camera: Option<[f32; 3]>,
        /// Window size in pixels (recorded frames and screenshots have this size).
        #[arg(long, value_name = "WxH", value_parser = parse_size)]
        size: Option<[u32; 2]>,
        /// Save the window as PNG after --frames frames.
        #[arg(long, requires = "frames")]
        screenshot: Option<PathBuf>,
        /// Show a slice of this grid field (liquid scenes; the names are listed below).
        #[arg(long, value_name = "FIELD")]
        field: Option<eddy::sim::views::Field>,
        /// Slice axis: x, y or z.
        #[arg(long, default_value = "z", value_parser = ["x", "y", "z"])]
        axis: String,
        /// Slice index along the axis (default: the middle).
        #[arg(long)]
        slice: Option<u32>,
        /// Smoke scenes: open on this view (listed below).
        #[arg(long, value_name = "VIEW")]
        smoke_view: Option<eddy::sim::smoke::views::SmokeField>,
        /// How the liquid is drawn: particles, surface (a smooth screen-space surface) or
        /// both.
        #[arg(long, default_value = "particles")]
        render: eddy::render::surface::RenderMode,
        /// Layout: perspective (orbit camera) or flat (the --field slice as a 2D image
        /// filling the view).
        #[arg(long, default_value = "perspective", value_parser = ["perspective", "flat"])]
        layout: String,
    },
    /// Validate a scene against the adapter's limits and print its summary without
    /// simulating.
    Check {
        /// Scene file (RON), or the name of a shipped scene (`eddy scenes`).
        scene: PathBuf,
    },
    /// List the scenes shipped with eddy (usable by name from any folder).
    Scenes,
    /// Compare the preconditioners on the standard problems (see BENCHMARKS.md); with
    /// --smoke, time the 2D smoke mode instead.
    Bench {
        /// Grid sizes (cells per axis), comma separated [default: 16,32,64; smoke:
        /// 128,256,512].
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<u32>>,
        /// Problems, comma separated: dam_break, settled_pool.
        #[arg(long, value_delimiter = ',', default_value = "dam_break,settled_pool")]
        problems: Vec<String>,
        /// Preconditioners: none, jacobi, ip, mic0, mic0_tiled, mg [default: all; smoke: ip,mg].
        #[arg(long, value_delimiter = ',')]
        preconditioners: Option<Vec<PreconditionerKind>>,
        /// Relative residual (max norm) each solve iterates to [default: 1e-6; smoke: 1e-4].
        #[arg(long)]
        tolerance: Option<f64>,
        /// Most PCG iterations per solve; a solve stopped here is marked in the table.
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
        /// Compare the liquid's transfers (FLIP, PIC, APIC): a rotating blob's angular
        /// momentum over --steps substeps [default: 100] and the first sloshing mode of a
        /// tank --sizes cells across [default: 48].
        #[arg(long, conflicts_with = "smoke")]
        transfer: bool,
        /// PCG iterations submitted between convergence checks (the scene setting
        /// pressure.check_every).
        #[arg(long, default_value_t = 8)]
        check_every: u32,
        /// Smoke only: untimed substeps before timing.
        #[arg(long, default_value_t = 30)]
        warmup: u32,
        /// Smoke only: the plume's kinematic viscosity, m^2/s (adds the viscosity solve).
        #[arg(long, default_value_t = 0.0, requires = "smoke")]
        viscosity: f64,
        /// Also write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // winit's X11 notes (no XSETTINGS, XRandR quirks of virtual displays) are not problems
    // a user can act on; RUST_LOG=winit=warn shows them.
    env_logger::Builder::from_env(
        env_logger::Env::default()
            .default_filter_or("warn,wgpu_core=warn,wgpu_hal=warn,naga=warn,winit=error"),
    )
    .init();
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            note!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<ExitCode> {
    let cli = Cli::parse();
    let headless = !matches!(cli.command, None | Some(Command::View { .. }));
    eddy::runtime_dir::quiet_window_system(headless);
    match cli.command {
        None => view(PathBuf::from(DEFAULT_SCENE), None, None),
        Some(Command::Scenes) => {
            print_stdout(&eddy::scenes::table()?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::View {
            scene,
            frames,
            record,
            every,
            camera,
            size,
            screenshot,
            field,
            axis,
            slice,
            smoke_view,
            render,
            layout,
        }) => {
            // Headless use (scripts, CI) must fail on a broken scene: the viewer's own
            // fallback to the built-in dam break is for someone looking at the window.
            if frames.is_some() || screenshot.is_some() || record.is_some() {
                Scene::load(&scene)?;
            }
            if let Some(p) = &screenshot {
                if p.is_dir() {
                    bail!("--screenshot {}: is a folder, not a PNG file", p.display());
                }
            }
            eddy::ui::run(eddy::ui::ViewerOptions {
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
                render,
                flat: layout == "flat",
                record: record.map(|dir| eddy::ui::record::Recording { dir, every }),
                camera,
                size,
            })?;
            Ok(ExitCode::SUCCESS)
        }
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
            transfer,
            check_every,
            warmup,
            viscosity,
            json,
        }) => {
            // The scene files' own bound: PCG keeps a residual history of this length.
            let max = 100_000;
            if max_iterations > max {
                bail!("--max-iterations must be at most {max}, got {max_iterations}");
            }
            if transfer {
                let d = eddy::bench_transfer::TransferBenchOptions::default();
                let slosh_cells = match sizes.as_deref() {
                    None => d.slosh_cells,
                    Some([n]) => *n,
                    Some(_) => {
                        bail!("--transfer takes one --sizes value (the tank's cells across)")
                    }
                };
                let opts = eddy::bench_transfer::TransferBenchOptions {
                    slosh_cells,
                    blob_substeps: steps.unwrap_or(d.blob_substeps),
                    ..d
                };
                opts.validate()?;
                check_json_path(json.as_deref())?;
                return run_bench(
                    |ctx, progress, _report| eddy::bench_transfer::run(ctx, &opts, progress),
                    json.as_deref(),
                );
            }
            if smoke {
                let d = eddy::bench_smoke::SmokeBenchOptions::default();
                let opts = eddy::bench_smoke::SmokeBenchOptions {
                    sizes: sizes.unwrap_or(d.sizes),
                    preconditioners: preconditioners.unwrap_or(d.preconditioners),
                    tolerance: tolerance.unwrap_or(d.tolerance),
                    warmup,
                    steps: steps.unwrap_or(d.steps),
                    check_every,
                    viscosity,
                };
                opts.validate()?;
                check_json_path(json.as_deref())?;
                return run_bench(
                    |ctx, progress, report| eddy::bench_smoke::run(ctx, &opts, progress, report),
                    json.as_deref(),
                );
            }
            let problems = problems
                .iter()
                .map(|p| eddy::bench::parse_problem(p))
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| anyhow!("--problems: {e}"))?;
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
            opts.validate()?;
            check_json_path(json.as_deref())?;
            run_bench(
                |ctx, progress, report| eddy::bench::run(ctx, &opts, progress, report),
                json.as_deref(),
            )
        }
        Some(Command::Run {
            scene,
            frames,
            out,
            overwrite,
            dump_particles,
            dump_mesh,
            mesh_resolution,
            export_system,
            preconditioner,
            resolution,
            check_invariants,
        }) => {
            let mut s = Scene::load(&scene)?;
            if let Some(p) = preconditioner {
                s.pressure.preconditioner = p;
            }
            if let Some(n) = resolution {
                s = with_resolution_flag(&s, n, &scene)?;
            }
            let opts = RunOptions {
                scene_path: scene,
                frames,
                out,
                overwrite,
                dump: dump_particles,
                mesh: dump_mesh.map(|every| (every, mesh_resolution.unwrap_or(1))),
                export: export_system,
                check_invariants,
            };
            run(&s, &opts)
        }
    }
}

/// Applies `--resolution`, blaming the flag (not the scene file) for a grid it makes invalid.
fn with_resolution_flag(scene: &Scene, n: u32, path: &Path) -> Result<Scene> {
    let max = eddy::scene::MAX_AXIS_CELLS;
    if !(2..=max).contains(&n) {
        bail!("--resolution must be between 2 and {max} cells along the longest axis, got {n}");
    }
    let s = scene.with_resolution(n);
    s.validate().map_err(|m| {
        anyhow!(
            "--resolution {n} gives {} a grid of {:?} cells, which eddy cannot run: {m}",
            path.display(),
            s.resolution
        )
    })?;
    Ok(s)
}

fn view(scene: PathBuf, frames: Option<u64>, screenshot: Option<PathBuf>) -> Result<ExitCode> {
    eddy::ui::run(eddy::ui::ViewerOptions {
        scene,
        frames,
        screenshot,
        ..Default::default()
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--camera 30,25,2.2`: yaw and pitch in degrees, distance in metres.
fn parse_camera(s: &str) -> Result<[f32; 3], String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("expected YAW,PITCH,DISTANCE (three numbers), got {s:?}"))?;
    match v.as_slice() {
        [yaw, pitch, d] if v.iter().all(|x| x.is_finite()) => {
            if pitch.abs() > 87.0 {
                return Err(format!(
                    "pitch must be within -87 to 87 degrees, got {pitch}"
                ));
            }
            if *d <= 0.0 {
                return Err(format!("distance must be positive, got {d}"));
            }
            Ok([*yaw, *pitch, *d])
        }
        _ => Err(format!(
            "expected YAW,PITCH,DISTANCE (three finite numbers), got {s:?}"
        )),
    }
}

/// `--size 960x600`.
fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let bad = || format!("expected WIDTHxHEIGHT in pixels (e.g. 960x600), got {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
    if !(64..=8192).contains(&w) || !(64..=8192).contains(&h) {
        return Err(format!(
            "width and height must be 64 to 8192 pixels, got {w}x{h}"
        ));
    }
    Ok([w, h])
}

/// `eddy view --help` lists every field and smoke view with what it shows.
fn view_fields_help() -> String {
    use eddy::sim::smoke::views::SmokeField;
    use eddy::sim::views::{Field, MgField};
    let mut s = String::from("Fields (--field, liquid scenes):\n");
    for f in Field::ALL {
        s += &format!("  {:<18} {}\n", f.id(), f.meaning());
    }
    s += &format!("  {}\n", MgField::NAMES);
    s += "\nSmoke views (--smoke-view, smoke scenes; also the mg_ names above):\n";
    for f in SmokeField::ALL {
        s += &format!("  {:<18} {}\n", f.name(), f.label());
    }
    s
}

/// Writes `text` to stdout. A reader that went away (`eddy check s.ron | head -1`) is a
/// normal end; any other failure (a full disk) is an error.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to standard output"),
    }
}

/// Warnings for a liquid scene that would simulate nothing, from its seeding.
fn seeding_warnings(scene: &Scene) -> Vec<String> {
    if scene.kind != SceneKind::Liquid {
        return Vec::new();
    }
    let per_shape = scene.seeded_cells_per_shape();
    let mut w: Vec<String> = per_shape
        .iter()
        .enumerate()
        .filter(|(_, n)| **n == 0)
        .map(|(i, _)| {
            format!(
                "fluid[{i}] seeds no particles: it holds no cell centre outside the solids \
                 (or earlier fluid shapes); make it larger than a cell or move it out of the solids"
            )
        })
        .collect();
    if per_shape.iter().all(|n| *n == 0) {
        w.push("the scene seeds no particles at all: nothing will move".into());
    }
    w
}

/// FLUID cells the first substep will mark, estimated on the CPU with the f64 reference
/// (the GPU marks the same cells up to f32 rounding at the density threshold).
fn initial_fluid_cells(scene: &Scene, init: &InitialState) -> usize {
    use eddy::reference as r;
    let [nx, ny, nz] = scene.dims().map(|v| v as usize);
    let g = r::Grid {
        nx,
        ny,
        nz,
        h: scene.h(),
    };
    let pos: Vec<[f64; 3]> = init
        .positions
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let vel = vec![[0.0; 3]; pos.len()];
    let p2g = r::p2g(&g, &pos, &vel);
    let solid: Vec<bool> = init.solid.iter().map(|s| *s != 0).collect();
    r::mark_cells(
        &g,
        &p2g.count,
        &p2g.weight,
        &solid,
        scene.particles_per_cell as f64,
    )
    .iter()
    .filter(|t| **t == r::FLUID)
    .count()
}

fn check(path: &Path) -> Result<ExitCode> {
    let scene = Scene::load(path)?;
    let at = || path.display().to_string();
    // The same size checks `run` applies, on the same adapter, before anything is seeded.
    let (est, adapter) = match GpuContext::new() {
        Ok(ctx) => (
            Some(eddy::sim::check_scene_limits(&ctx, &scene).with_context(at)?),
            Some(ctx.describe()),
        ),
        Err(e) => {
            note!(
                "warning: {}: no GPU adapter, so the adapter's size limits are not checked ({e})",
                path.display()
            );
            let particles = scene.particle_count();
            if particles > eddy::scene::MAX_PARTICLES {
                return Err(eddy::sim::SimError::TooManyParticles {
                    particles,
                    max: eddy::scene::MAX_PARTICLES,
                })
                .with_context(at);
            }
            (None, None)
        }
    };
    let [nx, ny, nz] = scene.dims();
    let mut text = String::new();
    let mut line = |s: String| {
        text.push_str(&s);
        text.push('\n');
    };
    let mut warnings = seeding_warnings(&scene);
    line(format!("scene       {} ({})", scene.name, path.display()));
    line(format!("kind        {:?}", scene.kind));
    line(format!(
        "domain      {} x {} x {} m, grid {nx} x {ny} x {nz} = {} cells of {:.4} m",
        scene.domain.0,
        scene.domain.1,
        scene.domain.2,
        scene.cell_count(),
        scene.h()
    ));
    let solid = scene.solid_cell_count();
    line(format!("solid cells {solid}"));
    let d = &scene.diffusion;
    let implicit = format!("implicit, {} to {:e}", d.preconditioner.name(), d.tolerance);
    line(if scene.viscosity > 0.0 {
        format!("viscosity   {} m^2/s ({implicit})", scene.viscosity)
    } else {
        "viscosity   0 (inviscid)".to_string()
    });
    if scene.kind == SceneKind::Smoke {
        let s = &scene.smoke;
        let walls = |w: &eddy::scene::WallValues| {
            if w.is_empty() {
                "insulated walls".to_string()
            } else {
                let fixed: Vec<String> = eddy::scene::Wall::ALL
                    .iter()
                    .filter_map(|x| w.wall(*x).map(|v| format!("{x:?} {v}").to_lowercase()))
                    .collect();
                format!("walls {}; {} spot(s)", fixed.join(", "), w.spots.len())
            }
        };
        line(format!(
            "diffusion   heat {} m^2/s ({}), dye {} m^2/s ({})",
            s.temperature_diffusion,
            walls(&s.wall_temperature),
            s.dye_diffusion,
            walls(&s.wall_dye)
        ));
    }
    if let Some(set) = eddy::sim::bodies::BodySet::from_scene(&scene) {
        line(format!("bodies      {}", set.bodies.len()));
        for (i, b) in set.bodies.iter().enumerate() {
            let shape = match b.solid {
                eddy::sim::bodies::Solid::Box { half } => {
                    format!(
                        "box {:.3} x {:.3} x {:.3} m",
                        2.0 * half.x,
                        2.0 * half.y,
                        2.0 * half.z
                    )
                }
                eddy::sim::bodies::Solid::Sphere { radius } if set.slice => {
                    format!("disc r {radius:.3} m")
                }
                eddy::sim::bodies::Solid::Sphere { radius } => format!("sphere r {radius:.3} m"),
            };
            let i3 = b.inertia;
            line(format!(
                "  [{i}]      {shape}, {:?}, density {} kg/m^3, mass {:.4e} kg, inertia ({:.4e}, {:.4e}, {:.4e}) kg m^2",
                b.motion, b.density, b.mass, i3.x, i3.y, i3.z
            ));
        }
    }
    let est = if scene.kind == SceneKind::Smoke {
        let s = &scene.smoke;
        line(format!(
            "smoke       {} advection, vorticity {}, buoyancy {}, dye weight {}, sources: {}",
            s.advection.name(),
            s.vorticity,
            s.buoyancy,
            s.dye_weight,
            s.sources.len(),
        ));
        line(format!("tracers     {}", s.tracers));
        if solid == scene.cell_count() {
            warnings.push("every cell is SOLID: there is no room for smoke".into());
        }
        est.unwrap_or_else(|| eddy::sim::smoke::memory_estimate(&scene))
    } else {
        let particles = scene.particle_count();
        line(format!(
            "particles   {particles} ({} per fluid cell)",
            scene.particles_per_cell
        ));
        line(match scene.transfer {
            eddy::scene::TransferKind::Flip => {
                format!("transfer    flip ({}% PIC)", 100.0 * scene.pic_ratio)
            }
            eddy::scene::TransferKind::Apic => {
                "transfer    apic (affine matrix per particle, 48 bytes each)".into()
            }
        });
        line(if scene.volume_correction {
            "volume      corrected each substep where the density is off rest by more than 20%"
                .to_string()
        } else {
            "volume      not corrected (volume_correction: false)".to_string()
        });
        line(if scene.particle_spacing > 0.0 {
            format!(
                "spacing     particles closer than {:.3} m ({} of the rest spacing) push apart",
                eddy::sim::spacing::min_distance(
                    scene.h(),
                    scene.particles_per_cell,
                    scene.particle_spacing
                ),
                scene.particle_spacing
            )
        } else {
            "spacing     off (particle_spacing: 0)".to_string()
        });
        if particles > 0 && particles as usize <= FLUID_ESTIMATE_MAX_PARTICLES {
            let fluid = initial_fluid_cells(&scene, &scene.initial_state());
            line(format!("fluid cells {fluid} at the first step"));
            if fluid == 0 {
                warnings.push(format!(
                    "no cell reaches the FLUID density at the first step (the liquid is too \
                     small or thin for cells of {:.4} m): no pressure will act on it",
                    scene.h()
                ));
            }
        }
        eddy::sim::memory_estimate(&scene, particles)
    };
    line(format!(
        "solver      {} to relative residual {:e}, at most {} iterations",
        scene.pressure.preconditioner, scene.pressure.tolerance, scene.pressure.max_iterations
    ));
    line(format!(
        "memory      {:.1} MiB on the GPU (largest buffer {:.1} MiB: {})",
        est.total as f64 / 1048576.0,
        est.largest_buffer as f64 / 1048576.0,
        est.largest_name
    ));
    if let Some(a) = adapter {
        line(format!("adapter     {a}: the scene fits its limits"));
    }
    for w in &warnings {
        note!("warning: {}: {w}", path.display());
    }
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
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

/// The result of a run, for stdout: where the stats are, the speed, GPU time by stage.
fn run_summary(
    ctx: &GpuContext,
    frames: u64,
    substeps: u64,
    secs: f64,
    stats_path: &Path,
    stage_ms: &eddy::gpu::StageTiming,
) -> String {
    let mut s = format!(
        "{}, {} in {secs:.2} s: {:.2} steps/s, {:.2} frames/s; stats in {}\n",
        count(frames, "frame"),
        count(substeps, "substep"),
        substeps as f64 / secs,
        frames as f64 / secs,
        stats_path.display()
    );
    if substeps == 0 {
        return s;
    }
    if ctx.timestamps {
        s += "GPU time per substep by stage (timestamp queries):\n";
        let total = stage_ms.total();
        for (name, ms) in &stage_ms.stages {
            s += &format!(
                "  {name:<12} {:>9.3} ms  {:>5.1}%\n",
                ms / substeps as f64,
                100.0 * ms / total.max(1e-12)
            );
        }
    } else {
        s += "this adapter has no timestamp queries: no per-stage GPU times\n";
    }
    s
}

/// "1 frame", "3 frames".
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What `eddy run` was asked to do.
struct RunOptions {
    scene_path: PathBuf,
    frames: u64,
    out: PathBuf,
    overwrite: bool,
    dump: Option<u64>,
    /// `--dump-mesh K` and `--mesh-resolution R`.
    mesh: Option<(u64, u32)>,
    export: Option<PathBuf>,
    check_invariants: bool,
}

/// SIGINT (Ctrl-C) and SIGTERM ask a run to stop once the current frame's outputs are
/// written; a second one ends the process at once (exit 128 + signal).
struct StopRequest {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl StopRequest {
    fn install() -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Self {
            flag: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicUsize::new(0)),
        };
        for sig in [SIGINT, SIGTERM] {
            // The shutdown goes first: it fires only once the flag is already set.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.flag.clone())
                .and_then(|_| signal_hook::flag::register(sig, stop.flag.clone()))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, stop.signal.clone(), sig as usize)
                })
                .context("cannot install the Ctrl-C handler")?;
        }
        Ok(stop)
    }

    /// The signal that asked to stop, if any.
    fn requested(&self) -> Option<i32> {
        self.flag
            .load(Ordering::SeqCst)
            .then(|| self.signal.load(Ordering::SeqCst) as i32)
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        signal_hook::consts::SIGINT => "SIGINT (Ctrl-C)",
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Describes an output folder's contents in a few words.
fn describe_contents(c: &FolderContents) -> String {
    let dumps = c
        .eddy_files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ply"))
        .count();
    let mut parts = Vec::new();
    if c.eddy_files.iter().any(|p| p.ends_with("stats.csv")) {
        parts.push("stats.csv".to_string());
    }
    if dumps > 0 {
        parts.push(format!("{dumps} particle or mesh dump(s)"));
    }
    let other_eddy = c.eddy_files.len()
        - dumps
        - c.eddy_files
            .iter()
            .filter(|p| p.ends_with("stats.csv"))
            .count();
    if other_eddy > 0 {
        parts.push(format!("{other_eddy} other eddy file(s)"));
    }
    if !c.others.is_empty() {
        let names: Vec<String> = c
            .others
            .iter()
            .take(3)
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().escape_debug().to_string())
                    .unwrap_or_default()
            })
            .collect();
        let more = if c.others.len() > 3 { ", ..." } else { "" };
        parts.push(format!(
            "{} other entr{} ({}{more})",
            c.others.len(),
            if c.others.len() == 1 { "y" } else { "ies" },
            names.join(", ")
        ));
    }
    parts.join(", ")
}

/// Makes `--out` ready before anything is simulated: new or empty, or (with --overwrite)
/// cleared of an earlier run's files, so old dumps never sit next to new ones.
fn prepare_out(out: &Path, overwrite: bool) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {}: is a file, not a folder", out.display());
    }
    let contents = eddy::output::survey_folder(out)
        .with_context(|| format!("--out {}: cannot list the folder", out.display()))?;
    if let Some(c) = contents.filter(|c| !c.is_empty()) {
        if !overwrite {
            bail!(
                "--out {} is not empty (it holds {}): pass --overwrite to replace an earlier \
                 run's files there, or choose a new folder",
                out.display(),
                describe_contents(&c)
            );
        }
        for f in &c.eddy_files {
            std::fs::remove_file(f)
                .with_context(|| format!("--overwrite: cannot remove {}", f.display()))?;
        }
        if !c.eddy_files.is_empty() {
            note!(
                "--overwrite: removed {} file(s) of an earlier run from {}",
                c.eddy_files.len(),
                out.display()
            );
        }
        if !c.others.is_empty() {
            note!(
                "--overwrite: kept {} in {} (not written by eddy run)",
                describe_contents(&FolderContents {
                    eddy_files: vec![],
                    others: c.others.clone()
                }),
                out.display()
            );
        }
    }
    eddy::output::ensure_writable_dir(out)
        .with_context(|| format!("--out {}: cannot write there", out.display()))
}

/// A liquid or smoke simulation behind the one frame loop of `eddy run`.
enum RunSim {
    Liquid(Box<Simulation>),
    Smoke(Box<SmokeSimulation>),
}

impl RunSim {
    fn step(&mut self) -> Result<FrameStats, eddy::sim::SimError> {
        match self {
            RunSim::Liquid(s) => s.step_frame(),
            RunSim::Smoke(s) => s.step_frame(),
        }
    }

    fn timing(&self) -> &eddy::gpu::StageTiming {
        match self {
            RunSim::Liquid(s) => &s.last_timing,
            RunSim::Smoke(s) => &s.last_timing,
        }
    }

    /// Particles (or tracers) the simulation moves.
    fn particles(&self) -> u32 {
        match self {
            RunSim::Liquid(s) => s.mode.particles.count,
            RunSim::Smoke(s) => s.mode.tracers.count,
        }
    }

    /// The rigid bodies, when the scene has any.
    fn bodies(&self) -> Option<&eddy::sim::bodies::BodySet> {
        match self {
            RunSim::Liquid(s) => s.bodies.as_ref().map(|b| &b.set),
            RunSim::Smoke(s) => s.bodies.as_ref().map(|b| &b.set),
        }
    }

    /// Particle (or tracer) positions, xyz.
    fn positions(&self) -> Result<Vec<[f32; 4]>, eddy::sim::SimError> {
        match self {
            RunSim::Liquid(s) => Ok(s.read_particles()?.0),
            RunSim::Smoke(s) => s.read_tracers(),
        }
    }
}

/// Simulated time, s.
fn sim_time(sim: &RunSim) -> f64 {
    match sim {
        RunSim::Liquid(s) => s.time,
        RunSim::Smoke(s) => s.time,
    }
}

/// `--check-invariants`: every solve converged, and every particle is finite and inside
/// the domain (smoke tracers live in the slice's x and y).
fn check_invariants(
    sim: &RunSim,
    scene: &Scene,
    st: &FrameStats,
    expected_particles: u32,
) -> Result<()> {
    if st.unconverged_solves > 0 {
        bail!(
            "frame {}: {} pressure solve(s) stopped above the tolerance {:e} (at max_iterations \
             {} or on a breakdown), with a residual up to {:.3e}",
            st.frame,
            st.unconverged_solves,
            scene.pressure.tolerance,
            scene.pressure.max_iterations,
            st.pcg_max_residual
        );
    }
    if st.particles != expected_particles {
        bail!(
            "frame {}: {} particles, {expected_particles} expected",
            st.frame,
            st.particles
        );
    }
    let d = scene.domain_size();
    let axes = if scene.kind == SceneKind::Smoke { 2 } else { 3 };
    let pos = sim.positions()?;
    let outside = pos
        .iter()
        .filter(|p| !(0..axes).all(|a| p[a].is_finite() && p[a] >= 0.0 && p[a] as f64 <= d[a]))
        .count();
    if outside > 0 {
        let first = pos
            .iter()
            .find(|p| !(0..axes).all(|a| p[a].is_finite() && p[a] >= 0.0 && p[a] as f64 <= d[a]))
            .map(|p| format!("{:?}", &p[..3]))
            .unwrap_or_default();
        bail!(
            "frame {}: {outside} of {} particles are outside the domain [0, {:?}] or not finite \
             (first: {first})",
            st.frame,
            pos.len(),
            scene.domain
        );
    }
    Ok(())
}

fn run(scene: &Scene, opts: &RunOptions) -> Result<ExitCode> {
    let smoke = scene.kind == SceneKind::Smoke;
    if smoke && opts.dump.is_some() {
        bail!("--dump-particles writes liquid particles; smoke scenes have none (their tracers are drawn by `eddy view`)");
    }
    if smoke && opts.export.is_some() {
        bail!("--export-system is available for liquid scenes only");
    }
    if opts.dump == Some(0) {
        bail!("--dump-particles must be at least 1");
    }
    if let Some((every, resolution)) = opts.mesh {
        if every == 0 {
            bail!("--dump-mesh must be at least 1");
        }
        eddy::mesh::params_for(scene, resolution)?;
    }
    // Every output path is usable before minutes of simulation are spent.
    prepare_out(&opts.out, opts.overwrite)?;
    if let Some(dir) = &opts.export {
        if dir.exists() && !dir.is_dir() {
            bail!("--export-system {}: is a file, not a folder", dir.display());
        }
        eddy::output::ensure_writable_dir(dir)
            .with_context(|| format!("--export-system {}: cannot write there", dir.display()))?;
    }
    let stop = StopRequest::install()?;

    let ctx = Arc::new(GpuContext::new()?);
    note!("adapter: {}", ctx.describe());
    let at = || opts.scene_path.display().to_string();
    let mut sim = if smoke {
        RunSim::Smoke(Box::new(
            SmokeSimulation::new(ctx.clone(), scene).with_context(at)?,
        ))
    } else {
        RunSim::Liquid(Box::new(
            Simulation::new(ctx.clone(), scene).with_context(at)?,
        ))
    };
    for w in seeding_warnings(scene) {
        note!("warning: {}: {w}", opts.scene_path.display());
    }
    // Created once the simulation is set up, so a scene the adapter refuses leaves --out
    // empty (and reusable) rather than holding a header-only stats.csv.
    let stats_path = opts.out.join("stats.csv");
    let header = FrameStats::csv_header(scene.kind);
    let mut csv = RowWriter::create(&stats_path, header)
        .with_context(|| format!("cannot create {}", stats_path.display()))?;
    // One row per body per frame, beside stats.csv.
    let bodies_path = opts.out.join("bodies.csv");
    let mut bodies_csv = match sim.bodies() {
        Some(_) => Some(
            RowWriter::create(&bodies_path, eddy::sim::bodies::CSV_HEADER)
                .with_context(|| format!("cannot create {}", bodies_path.display()))?,
        ),
        None => None,
    };
    let expected_particles = sim.particles();
    if let (Some(k), RunSim::Liquid(s)) = (opts.dump, &sim) {
        dump_particles(s, &opts.out, 0, k)?;
    }
    let mut meshes = MeshLog::default();
    if let (Some(m), RunSim::Liquid(s)) = (opts.mesh, &sim) {
        meshes.dump(s, scene, &opts.out, 0, m, None)?;
    }

    let bar = progress_bar(opts.frames);
    let start = std::time::Instant::now();
    let mut done = 0u64;
    let mut total_substeps = 0u64;
    let mut unconverged = 0u64;
    let mut stage_ms = eddy::gpu::StageTiming::default();
    let mut frame_loop = || -> Result<()> {
        while done < opts.frames && stop.requested().is_none() {
            let st = sim.step()?;
            total_substeps += st.substeps as u64;
            stage_ms.merge(sim.timing());
            csv.row(&st.csv_row())
                .with_context(|| format!("cannot write {}", stats_path.display()))?;
            if let (Some(w), Some(set)) = (bodies_csv.as_mut(), sim.bodies()) {
                let time = sim_time(&sim);
                for row in eddy::sim::bodies::csv_rows(set, st.frame, time) {
                    w.row(&row)
                        .with_context(|| format!("cannot write {}", bodies_path.display()))?;
                }
            }
            if let (Some(k), RunSim::Liquid(s)) = (opts.dump, &sim) {
                dump_particles(s, &opts.out, st.frame, k)?;
            }
            if let (Some(m), RunSim::Liquid(s)) = (opts.mesh, &sim) {
                meshes.dump(s, scene, &opts.out, st.frame, m, Some(&bar))?;
            }
            done = st.frame;
            if opts.check_invariants {
                check_invariants(&sim, scene, &st, expected_particles)?;
            }
            if st.frame == 1 && st.fluid_cells == 0 {
                bar.suspend(|| {
                    if smoke {
                        note!("warning: every cell is SOLID: there is no room for smoke")
                    } else if st.particles > 0 {
                        note!(
                            "warning: frame 1 marked no FLUID cell: the liquid is too small or \
                             thin for the grid, so no pressure acts on it"
                        )
                    }
                });
            }
            if st.unconverged_solves > 0 {
                if unconverged == 0 {
                    bar.suspend(|| {
                        note!(
                            "warning: frame {}: a pressure solve stopped with residual {:.3e} \
                             above the tolerance {:e} (max_iterations {}; counted in the summary)",
                            st.frame,
                            st.pcg_max_residual,
                            scene.pressure.tolerance,
                            scene.pressure.max_iterations
                        )
                    });
                }
                unconverged += st.unconverged_solves as u64;
            }
            let secs = start.elapsed().as_secs_f64();
            bar.set_message(format!(
                "{:.1} steps/s, pcg {} it, |div| {:.1e}{}{}",
                total_substeps as f64 / secs,
                st.pcg_iterations,
                st.max_divergence,
                st.smoke()
                    .map(|m| format!(", dye {:.3e}", m.dye_total))
                    .unwrap_or_default(),
                meshes.progress()
            ));
            bar.inc(1);
        }
        Ok(())
    };
    let result = frame_loop();
    bar.abandon();
    let secs = start.elapsed().as_secs_f64();
    let kept = if done == 0 {
        format!("{} holds the header only", stats_path.display())
    } else {
        format!(
            "{} holds frames 1 to {done}, and every dump written is complete",
            stats_path.display()
        )
    };
    if let Err(e) = result {
        return Err(e.context(format!(
            "run stopped after {done} complete frame(s); {kept}"
        )));
    }
    // Results go to stdout once every file is written, so a failing stdout loses none.
    let mut summary = run_summary(&ctx, done, total_substeps, secs, &stats_path, &stage_ms);
    summary += &meshes.summary();
    if unconverged > 0 {
        note!("warning: {unconverged} pressure solve(s) stopped above the tolerance");
    }
    if opts.check_invariants {
        note!(
            "invariants held for {done} frame(s): every solve within tolerance, all \
             {expected_particles} particles finite and inside the domain"
        );
    }
    if let (Some(dir), RunSim::Liquid(s)) = (&opts.export, &sim) {
        if done > 0 {
            let sys = s.export_system()?;
            eddy::output::write_matrix_market(dir, &sys)
                .with_context(|| format!("cannot write the system to {}", dir.display()))?;
            summary += &format!("pressure system written to {}\n", dir.display());
        }
    }
    print_stdout(&summary)?;
    if let Some(sig) = stop.requested() {
        note!(
            "interrupted by {} after frame {done} of {}: {kept}",
            signal_name(sig),
            opts.frames
        );
        return Ok(ExitCode::from((128 + sig).clamp(1, 255) as u8));
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks `bench --json PATH` before the benchmark runs.
fn check_json_path(json: Option<&Path>) -> Result<()> {
    if let Some(path) = json {
        eddy::output::ensure_writable_file(path)
            .with_context(|| format!("--json {}: cannot write there", path.display()))?;
    }
    Ok(())
}

/// Runs a benchmark with a progress bar on stderr, prints its table on stdout a row at a
/// time as the cases finish, and writes its JSON.
fn run_bench<R: serde::Serialize + eddy::bench::StreamedTable>(
    run: impl FnOnce(
        Arc<GpuContext>,
        &mut dyn FnMut(usize, usize, &str),
        &mut dyn FnMut(&R),
    ) -> Result<R, eddy::bench::BenchError>,
    json: Option<&Path>,
) -> Result<ExitCode> {
    let ctx = Arc::new(GpuContext::new()?);
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} cases  {msg}  [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // The head (with the adapter) once, then each row as its case finishes; a stdout
    // that fails is reported after the run, which still writes its JSON.
    let mut printed: Option<usize> = None;
    let mut stdout_result = Ok(());
    let report = run(
        ctx,
        &mut |done, total, what| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_string());
        },
        &mut |r: &R| {
            let mut text = String::new();
            let from = printed.unwrap_or_else(|| {
                text += &r.head();
                0
            });
            for i in from..r.row_count() {
                text += &r.row(i);
            }
            printed = Some(r.row_count());
            if stdout_result.is_ok() {
                stdout_result = bar.suspend(|| print_stdout(&text));
            }
        },
    )?;
    bar.finish_and_clear();
    let mut tail = report.tail();
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report)?;
        eddy::output::write_atomically(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        tail += &format!("\nJSON written to {}\n", path.display());
    }
    stdout_result?;
    print_stdout(&tail)?;
    Ok(ExitCode::SUCCESS)
}

fn dump_particles(sim: &Simulation, out: &Path, frame: u64, every: u64) -> Result<()> {
    if !frame.is_multiple_of(every) {
        return Ok(());
    }
    let (pos, vel) = sim.read_particles()?;
    let affine = sim.read_affine()?;
    let path = out.join(format!("particles_{frame:05}.ply"));
    eddy::output::write_ply(&path, &pos, &vel, &affine)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `--dump-mesh`: writes the surface meshes and logs the time each took.
#[derive(Default)]
struct MeshLog {
    written: u64,
    total_s: f64,
    max_s: f64,
    last_ms: Option<f64>,
}

impl MeshLog {
    fn dump(
        &mut self,
        sim: &Simulation,
        scene: &Scene,
        out: &Path,
        frame: u64,
        (every, resolution): (u64, u32),
        bar: Option<&ProgressBar>,
    ) -> Result<()> {
        if !frame.is_multiple_of(every) {
            return Ok(());
        }
        let (pos, _) = sim.read_particles()?;
        let path = out.join(format!("mesh_{frame:05}.ply"));
        let comment = format!(
            "eddy liquid surface, frame {frame}, t = {:.6} s, {resolution}x grid resolution",
            sim.time
        );
        let t = eddy::mesh::write_liquid_surface(&path, scene, &pos, resolution, &comment)?;
        self.written += 1;
        self.total_s += t.mesh_s;
        self.max_s = self.max_s.max(t.mesh_s);
        self.last_ms = Some(t.mesh_s * 1e3);
        let line = format!(
            "mesh frame {frame}: {} triangles, {} vertices; meshing {:.1} ms, writing {:.1} ms",
            t.triangles,
            t.vertices,
            t.mesh_s * 1e3,
            t.write_s * 1e3
        );
        match bar {
            Some(b) => b.suspend(|| note!("{line}")),
            None => note!("{line}"),
        }
        Ok(())
    }

    fn progress(&self) -> String {
        self.last_ms
            .map(|ms| format!(", mesh {ms:.0} ms"))
            .unwrap_or_default()
    }

    /// The summary line for stdout (empty without meshes).
    fn summary(&self) -> String {
        if self.written == 0 {
            return String::new();
        }
        format!(
            "{} surface mesh(es) written: meshing {:.1} ms per mesh on average, {:.1} ms at most\n",
            self.written,
            1e3 * self.total_s / self.written as f64,
            1e3 * self.max_s
        )
    }
}
