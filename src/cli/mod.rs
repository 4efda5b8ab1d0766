//! The eddy command line: view | run | check | bench | scenes. Each command's work is in
//! its own file; this one parses the arguments and dispatches.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use eddy::gpu::GpuContext;
use eddy::output::{FolderContents, RowWriter};
use eddy::scene::{InitialState, PreconditionerKind, Scene, SceneKind};
use eddy::sim::{FrameStats, Sim, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Diagnostics go to stderr, and a stderr that cannot be written (closed, full) must not
/// turn a finished run into a panic: `eprintln!` would panic, this drops the line.
macro_rules! note {
    ($($arg:tt)*) => {{
        // Control characters (a terminal escape in a file name) are shown escaped.
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            crate::cli::escape_controls(&format!($($arg)*))
        );
    }};
}

mod bench;
mod check;
mod out_dir;
mod run;
mod runtime_dir;
mod signals;
mod validate;
mod view;

use bench::{check_json_path, run_bench};
use check::check;
use check::scene_warnings;
use out_dir::prepare_out;
use run::{run, with_resolution_flag, RunOptions};
use signals::{signal_name, StopRequest};
use view::{parse_camera, parse_size, view, view_fields_help};

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
    /// Ctrl-C (or SIGTERM) stops after the current frame's outputs; a second one at once.
    Run(RunArgs),
    /// Open the viewer on a scene (plain `eddy` opens it on the dam break).
    #[command(after_help = view_fields_help())]
    View(ViewArgs),
    /// Validate a scene against the adapter's limits and print its summary without
    /// simulating.
    Check {
        /// Scene file (RON), or the name of a shipped scene (`eddy scenes`).
        scene: PathBuf,
        /// Size the scene for another adapter instead of this machine's: a known one (h100,
        /// h200, a100, rtx4090, llvmpipe) or a limits file (RON: `(name: "...",
        /// max_binding: BYTES, memory: Some(BYTES))`); also prints the largest resolution
        /// of the scene that fits it.
        #[arg(long, value_name = "NAME|FILE")]
        limits: Option<String>,
        /// Override the resolution: cells along the longest axis.
        #[arg(long, allow_hyphen_values = true)]
        resolution: Option<u32>,
    },
    /// List the scenes shipped with eddy (usable by name from any folder).
    Scenes,
    /// Compare the preconditioners on the standard problems (see BENCHMARKS.md); with
    /// --smoke, time the 2D smoke mode instead.
    Bench(BenchArgs),
    /// Run the validation cases (each at several resolutions against its reference) and
    /// write DIR/index.html with plots, the plots as PNG and SVG, and summary.csv; exits
    /// non-zero when a case misses its tolerance. The report is rewritten as each case
    /// finishes: Ctrl-C stops after the case running (a second Ctrl-C at once) and keeps
    /// the cases done. Off a terminal (a log file, CI) it prints a line per case.
    Validate {
        /// Small grids and short runs (a software adapter; the default). Measured on a
        /// 2-core VM's software adapter, 624 s in all: pressure 4 s, hydrostatic 2 s,
        /// viscous 13 s, floating 17 s, exchange 7 s, settling 72 s, stokes 127 s, disc 66
        /// s, laplace 38 s, capillary_wave 66 s, surge 3 s, impact 41 s, dam_break 43 s,
        /// standing_wave 31 s, advection 10 s, rayleigh_benard 31 s, cavity 53 s.
        #[arg(long, conflicts_with = "full")]
        quick: bool,
        /// Larger grids, for a real GPU (about 65 minutes on that software adapter).
        #[arg(long)]
        full: bool,
        /// Cases, comma separated [default: all]: pressure, hydrostatic, viscous, floating,
        /// exchange, settling, stokes, disc, laplace, surge, impact, dam_break,
        /// standing_wave, advection, rayleigh_benard, cavity.
        #[arg(long, value_delimiter = ',')]
        cases: Vec<String>,
        /// Report folder; must be empty or new unless --overwrite is given [default:
        /// validation].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Reuse a non-empty --out: delete an earlier report's files there first.
        #[arg(long)]
        overwrite: bool,
    },
}

// `eddy run`'s options (its help text is the variant's doc comment).
#[derive(clap::Args)]
struct RunArgs {
    /// Scene file (RON), or the name of a shipped scene (`eddy scenes`). With --resume,
    /// optional: the checkpoint holds its scene.
    #[arg(required_unless_present = "resume")]
    scene: Option<PathBuf>,
    /// Frames to simulate: the run ends after frame N (with --resume too, so the same
    /// command line plus --resume finishes a stopped run).
    // Hyphen values reach the parser, so `--frames -1` is named in the error as a bad
    // value rather than reported as an unknown argument `-1`.
    #[arg(long, default_value_t = 120, allow_hyphen_values = true)]
    frames: u64,
    /// Output directory; must be empty or new unless --overwrite is given [default: out].
    #[arg(long)]
    out: Option<PathBuf>,
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
    /// Write the grid fields every K frames as VTK XML image data (fields_NNNNN.vti, the
    /// MAC faces as faces_u/v/w_NNNNN.vti; the liquid's particles as
    /// particles_NNNNN.vtp) and fields.pvd, the collection ParaView opens as a time series.
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    dump_fields: Option<u64>,
    /// Write OpenVDB volumes every K frames (volume_NNNNN.vdb, for Blender and Houdini).
    /// Liquid: `surface` (narrow-band level set), `density` (fog) and `velocity`. Smoke:
    /// `density`, `dye`, `temperature` and `velocity`.
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    dump_vdb: Option<u64>,
    /// With --dump-fields: the fields, comma separated [default: all]. Liquid:
    /// cell_type, pressure, velocity, faces, divergence, level_set, particles. Smoke:
    /// cell_type, pressure, velocity, faces, divergence, vorticity, temperature, dye.
    #[arg(long, value_delimiter = ',', requires = "dump_fields")]
    fields: Option<Vec<String>>,
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
    /// After every frame, fail unless every pressure and diffusion solve reached its
    /// tolerance and every particle (tracer) is finite and inside the domain (reads them
    /// back: slower).
    #[arg(long)]
    check_invariants: bool,
    /// Write a checkpoint every K frames (DIR/checkpoint_NNNNN.eddy: everything that
    /// determines the rest of the run, for --resume).
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    checkpoint_every: Option<u64>,
    /// With --checkpoint-every: keep the newest N checkpoints (at least 1).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        allow_hyphen_values = true
    )]
    keep_checkpoints: u64,
    /// Continue the run in DIR from its newest checkpoint (bit for bit the run that was
    /// not stopped); rows and dumps past the checkpoint's frame are dropped first.
    #[arg(long, value_name = "DIR", conflicts_with = "overwrite")]
    resume: Option<PathBuf>,
    /// With --resume: run SCENE even though it differs from the checkpoint's scene.
    #[arg(long, requires = "resume")]
    allow_scene_change: bool,
    /// Write the scene's probes only (probes.csv and probes_units.csv): no stats.csv,
    /// bodies.csv or dumps, for long parameter sweeps. Checkpoints and --resume still work
    /// (with --probe-only again).
    #[arg(
        long,
        conflicts_with_all = ["dump_particles", "dump_mesh", "dump_fields", "dump_vdb", "export_system"]
    )]
    probe_only: bool,
}

// `eddy view`'s options (its help text is the variant's doc comment).
#[derive(clap::Args)]
struct ViewArgs {
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
    /// Start from a saved state (F5 in the viewer) or a checkpoint of `eddy run
    /// --checkpoint-every` (its scene replaces SCENE); F5 saves there, F9 loads it.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Show a slice of this grid field (liquid scenes; the names are listed below).
    #[arg(long, value_name = "FIELD")]
    field: Option<eddy::sim::liquid::views::Field>,
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
    /// After --frames, open the solver lab: freeze that substep's pressure system and
    /// solve it with this preconditioner (`mg` when given without one).
    #[arg(long, value_name = "PRECONDITIONER", num_args = 0..=1, default_missing_value = "mg", requires = "frames")]
    lab: Option<eddy::scene::PreconditionerKind>,
    /// With --lab: step the lab's solve this many iterations.
    #[arg(long, value_name = "K", default_value_t = 0, requires = "lab")]
    lab_step: u32,
    /// With --lab: race every preconditioner on the system.
    #[arg(long, requires = "lab")]
    lab_race: bool,
    /// Open the solver lab on a pressure system exported by `eddy run --export-system
    /// DIR` (SCENE must be the scene it came from, for the grid the views draw on).
    #[arg(long, value_name = "DIR")]
    system: Option<PathBuf>,
    /// Most redraws a second while the simulation runs (0: as fast as it steps; also in
    /// the Controls panel). Paused or idle, the viewer redraws only on input or a change.
    #[arg(long, value_name = "FPS", default_value_t = eddy::ui::DEFAULT_MAX_FPS)]
    max_fps: u32,
}

// `eddy bench`'s options (its help text is the variant's doc comment).
#[derive(clap::Args)]
struct BenchArgs {
    /// Grid sizes (cells per axis), comma separated [default: 16,32,64; smoke:
    /// 128,256,512].
    #[arg(long, value_delimiter = ',')]
    sizes: Option<Vec<u32>>,
    /// Problems, comma separated: dam_break, settled_pool, floating_bodies (16 bodies in the
    /// strong coupling), floating_bodies_weak (the same scene in the weak scheme: its own
    /// settled state, whole cells), floating_bodies_deflated (strong, with the deflation
    /// of the bodies' modes), floating_bodies_alone (floating_bodies' own system with
    /// the bodies' term left out: what the coupling adds to the solve).
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
    /// Race the preconditioners on a pressure system exported by `eddy run
    /// --export-system DIR` (its tolerance unless --tolerance is given).
    #[arg(long, conflicts_with_all = ["smoke", "transfer"])]
    system: Option<PathBuf>,
    /// With --system: write the table as CSV to FILE and the residual histories to
    /// FILE's stem + `_history.csv`.
    #[arg(long, requires = "system")]
    csv: Option<PathBuf>,
}

pub fn main() -> ExitCode {
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
    let headless = !matches!(cli.command, None | Some(Command::View(_)));
    runtime_dir::quiet_window_system(headless);
    match cli.command {
        None => view(PathBuf::from(DEFAULT_SCENE), None, None),
        Some(Command::Scenes) => {
            print_stdout(&eddy::scene::catalog::table()?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::View(args)) => view_command(args),
        Some(Command::Check {
            scene,
            limits,
            resolution,
        }) => check(&scene, limits.as_deref(), resolution),
        Some(Command::Validate {
            quick: _,
            full,
            cases,
            out,
            overwrite,
        }) => validate::run_validate(
            full,
            &cases,
            &out.unwrap_or_else(|| PathBuf::from("validation")),
            overwrite,
        ),
        Some(Command::Bench(args)) => bench_command(args),
        Some(Command::Run(args)) => run_command(args),
    }
}

/// `eddy view`: the viewer, or its headless screenshots and recordings.
fn view_command(args: ViewArgs) -> Result<ExitCode> {
    let ViewArgs {
        scene,
        frames,
        record,
        every,
        camera,
        size,
        screenshot,
        state,
        field,
        axis,
        slice,
        smoke_view,
        render,
        layout,
        lab,
        lab_step,
        lab_race,
        system,
        max_fps,
    } = args;
    // Headless use (scripts, CI) must fail on a broken scene: the viewer's own
    // fallback to the built-in dam break is for someone looking at the window.
    // Options for the other mode, or a slice past the grid, would be ignored
    // silently: refused whenever the scene loads. A broken scene fails headless use
    // (scripts, CI); in the window it falls back to the built-in dam break for
    // someone looking at it, with its own error shown.
    match Scene::load(&scene) {
        Ok(s) => view::check_view_options(&s, field.is_some(), smoke_view.is_some(), &axis, slice)?,
        Err(e) if frames.is_some() || screenshot.is_some() || record.is_some() => {
            return Err(e.into())
        }
        Err(_) => {}
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
        state,
        // --system opens the lab at once (after --frames, else after 0 frames).
        lab: (lab.is_some() || system.is_some()).then_some(eddy::ui::lab::LabStart {
            preconditioner: lab,
            step: lab_step,
            race: lab_race,
            system,
        }),
        max_fps,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `eddy bench`: the solver, smoke or transfer benchmarks, or a frozen system raced.
fn bench_command(args: BenchArgs) -> Result<ExitCode> {
    let BenchArgs {
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
        system,
        csv,
    } = args;
    // The scene files' own bound: PCG keeps a residual history of this length.
    let max = 100_000;
    if max_iterations > max {
        bail!("--max-iterations must be at most {max}, got {max_iterations}");
    }
    if let Some(dir) = system {
        return bench::bench_system(
            &dir,
            preconditioners.as_deref(),
            tolerance,
            max_iterations,
            csv.as_deref(),
            json.as_deref(),
        );
    }
    if transfer {
        let d = eddy::bench::transfer::TransferBenchOptions::default();
        let slosh_cells = match sizes.as_deref() {
            None => d.slosh_cells,
            Some([n]) => *n,
            Some(_) => {
                bail!("--transfer takes one --sizes value (the tank's cells across)")
            }
        };
        let opts = eddy::bench::transfer::TransferBenchOptions {
            slosh_cells,
            blob_substeps: steps.unwrap_or(d.blob_substeps),
            ..d
        };
        opts.validate()?;
        check_json_path(json.as_deref())?;
        return run_bench(
            |ctx, progress, _report| eddy::bench::transfer::run(ctx, &opts, progress),
            json.as_deref(),
        );
    }
    if smoke {
        let d = eddy::bench::smoke::SmokeBenchOptions::default();
        let opts = eddy::bench::smoke::SmokeBenchOptions {
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
            |ctx, progress, report| eddy::bench::smoke::run(ctx, &opts, progress, report),
            json.as_deref(),
        );
    }
    let problems = problems
        .iter()
        .map(|p| eddy::bench::solver::parse_problem(p))
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

/// `eddy run`: a scene (or the checkpoint `--resume` names) simulated headless.
fn run_command(args: RunArgs) -> Result<ExitCode> {
    let RunArgs {
        scene,
        frames,
        out,
        overwrite,
        dump_particles,
        dump_mesh,
        dump_fields,
        dump_vdb,
        fields,
        mesh_resolution,
        export_system,
        preconditioner,
        resolution,
        check_invariants,
        checkpoint_every,
        keep_checkpoints,
        resume,
        allow_scene_change,
        probe_only,
    } = args;
    let resumed = match &resume {
        Some(dir) => Some(run::open_resume(dir, out.as_deref(), probe_only)?),
        None => None,
    };
    let (mut s, scene_path) = match (&scene, &resumed) {
        (Some(path), _) => (Scene::load(path)?, path.clone()),
        (None, Some((path, c))) => (c.scene.clone(), path.clone()),
        (None, None) => unreachable!("clap requires SCENE without --resume"),
    };
    if let Some(p) = preconditioner {
        s.pressure.preconditioner = p;
    }
    if let Some(n) = resolution {
        s = with_resolution_flag(&s, n, &scene_path)?;
    }
    if let Some((path, c)) = &resumed {
        run::check_resumed_scene(path, &c.scene, &s, allow_scene_change)?;
    }
    let checkpoint = match checkpoint_every {
        Some(0) => anyhow::bail!("--checkpoint-every must be at least 1"),
        Some(k) => {
            if !(1..=100_000).contains(&keep_checkpoints) {
                anyhow::bail!("--keep-checkpoints must be 1 to 100000, got {keep_checkpoints}");
            }
            Some((k, keep_checkpoints as usize))
        }
        None => None,
    };
    let out = match (&resume, out) {
        (Some(dir), _) => dir.clone(),
        (None, o) => o.unwrap_or_else(|| PathBuf::from("out")),
    };
    let opts = RunOptions {
        scene_path,
        frames,
        out,
        overwrite,
        dump: dump_particles,
        mesh: dump_mesh.map(|every| (every, mesh_resolution.unwrap_or(1))),
        fields: dump_fields.map(|every| (every, fields.unwrap_or_default())),
        vdb: dump_vdb,
        export: export_system,
        check_invariants,
        checkpoint,
        resume: resumed.map(|(_, c)| c),
        probe_only,
    };
    run(&s, &opts)
}

/// Writes `text` to stdout. A reader that went away (`eddy check s.ron | head -1`) is a
/// normal end; any other failure (a full disk) is an error.
pub(crate) fn print_stdout(text: &str) -> Result<()> {
    // What reaches the terminal is escaped here as on stderr: paths, scene and mesh names
    // and a system's origin come from the user's files and arguments.
    let text = escape_controls(text);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to standard output"),
    }
}

/// `text` with its control characters (a terminal escape in a file name, say) and Unicode
/// bidirectional overrides written as `\u{1b}` escapes, so a message can never drive the
/// user's terminal or reorder what they read; line breaks and tabs stay as they are.
pub(crate) fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if eddy::files::is_unsafe_char(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
