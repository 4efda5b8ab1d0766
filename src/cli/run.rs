//! `eddy run`: a scene simulated headless, its outputs written frame by frame.

use super::*;

/// Applies `--resolution`, blaming the flag (not the scene file) for a grid it makes invalid.
pub(crate) fn with_resolution_flag(scene: &Scene, n: u32, path: &Path) -> Result<Scene> {
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

pub(crate) fn progress_bar(frames: u64) -> ProgressBar {
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
pub(crate) fn run_summary(
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
pub(crate) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What `eddy run` was asked to do.
pub(crate) struct RunOptions {
    pub(crate) scene_path: PathBuf,
    pub(crate) frames: u64,
    pub(crate) out: PathBuf,
    pub(crate) overwrite: bool,
    pub(crate) dump: Option<u64>,
    /// `--dump-mesh K` and `--mesh-resolution R`.
    pub(crate) mesh: Option<(u64, u32)>,
    /// `--dump-fields K` and `--fields` (empty: all).
    pub(crate) fields: Option<(u64, Vec<String>)>,
    /// `--dump-vdb K`.
    pub(crate) vdb: Option<u64>,
    pub(crate) export: Option<PathBuf>,
    pub(crate) check_invariants: bool,
    /// `--checkpoint-every K` and `--keep-checkpoints N`.
    pub(crate) checkpoint: Option<(u64, usize)>,
    /// `--resume`: the checkpoint the run goes on from (`out` is its folder).
    pub(crate) resume: Option<eddy::output::checkpoint::Checkpoint>,
    /// `--probe-only`: probes.csv (and its units) and checkpoints, nothing else.
    pub(crate) probe_only: bool,
}

/// `--resume DIR`: the newest checkpoint of DIR, read and checked, and its path.
pub(crate) fn open_resume(
    dir: &Path,
    out: Option<&Path>,
    probe_only: bool,
) -> Result<(PathBuf, eddy::output::checkpoint::Checkpoint)> {
    if let Some(o) = out.filter(|o| *o != dir) {
        bail!(
            "--resume {} goes on writing into that folder; --out {} names another",
            dir.display(),
            o.display()
        );
    }
    if !dir.is_dir() {
        bail!("--resume {}: no such folder", dir.display());
    }
    eddy::output::refuse_foreign_outputs(dir).map_err(|e| {
        anyhow!(
            "cannot resume {}: {e} (nothing in the folder was changed)",
            dir.display()
        )
    })?;
    let (path, c) = eddy::output::checkpoint::newest(dir).map_err(|e| {
        anyhow!("cannot resume: {e} (nothing in the folder was changed; remove or rename a damaged checkpoint to resume from the one before it)")
    })?;
    check_checkpoint_is_the_folders(dir, &path, &c, probe_only)?;
    Ok((path, c))
}

/// A checkpoint resumed in a folder must be that folder's run's: stats.csv's row of its
/// frame (written before the checkpoint) gives the same time and, for a liquid, the same
/// particle count. A checkpoint copied in from another run would otherwise go on writing
/// another scene's rows under this run's. A `--probe-only` run's folder has no stats.csv:
/// probes.csv's last row of the frame gives its time.
fn check_checkpoint_is_the_folders(
    dir: &Path,
    path: &Path,
    c: &eddy::output::checkpoint::Checkpoint,
    probe_only: bool,
) -> Result<()> {
    let stats = dir.join("stats.csv");
    let frame = c.state.frame;
    let refuse = |why: String| {
        anyhow!(
            "cannot resume from {}: {why} (nothing in the folder was changed)",
            path.display()
        )
    };
    let probes = dir.join("probes.csv");
    match (probe_only, stats.exists()) {
        (true, true) => {
            return Err(refuse(format!(
                "the run in {} wrote stats.csv: resume it without --probe-only",
                dir.display()
            )))
        }
        (false, false) if probes.exists() => {
            return Err(refuse(format!(
                "the run in {} wrote probes.csv only: resume it with --probe-only",
                dir.display()
            )))
        }
        (true, false) => {
            let row = eddy::output::last_row_of_frame(&probes, frame)
                .map_err(|e| refuse(format!("{}: {e}", probes.display())))?
                .ok_or_else(|| {
                    refuse(format!(
                        "{} has no row of its frame {frame}: the checkpoint is another run's",
                        probes.display()
                    ))
                })?;
            let time = format!("{:.9}", c.state.time);
            if row.get(1).map(String::as_str) != Some(time.as_str()) {
                return Err(refuse(format!(
                    "at frame {frame} it holds time {time} s against probes.csv's {}: the \
                     checkpoint is not of the run in this folder (copied from another?)",
                    eddy::files::printable(row.get(1).map_or("", |s| s.as_str()), 40)
                )));
            }
            return Ok(());
        }
        _ => {}
    }
    let row = eddy::output::row_of_frame(&stats, frame)
        .map_err(|e| refuse(format!("{}: {e}", stats.display())))?
        .ok_or_else(|| {
            refuse(format!(
                "{} has no row of its frame {frame}, which the run that wrote it wrote first:                  the checkpoint is another run's",
                stats.display()
            ))
        })?;
    let time = format!("{:.6}", c.state.time);
    let mut differs = Vec::new();
    if row.get(1).map(String::as_str) != Some(time.as_str()) {
        differs.push(format!(
            "time {time} s against stats.csv's {}",
            eddy::files::printable(row.get(1).map_or("", |s| s.as_str()), 40)
        ));
    }
    if let Some(n) = c.particle_count() {
        if row.get(3).map(String::as_str) != Some(n.to_string().as_str()) {
            differs.push(format!(
                "{n} particles against stats.csv's {}",
                eddy::files::printable(row.get(3).map_or("", |s| s.as_str()), 40)
            ));
        }
    }
    if !differs.is_empty() {
        return Err(refuse(format!(
            "at frame {frame} it holds {}: the checkpoint is not of the run in this folder \
             (copied from another?)",
            differs.join(", ")
        )));
    }
    Ok(())
}

/// A resumed run's scene must be the checkpoint's unless `--allow-scene-change` says
/// otherwise; the fields that differ are named.
pub(crate) fn check_resumed_scene(
    path: &Path,
    saved: &Scene,
    now: &Scene,
    allow: bool,
) -> Result<()> {
    if saved.to_ron() == now.to_ron() {
        return Ok(());
    }
    let (a, b) = (
        serde_json::to_value(saved).unwrap_or_default(),
        serde_json::to_value(now).unwrap_or_default(),
    );
    let mut fields: Vec<String> = match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => a
            .keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect(),
        _ => vec![],
    };
    fields.sort();
    fields.dedup();
    let what = if fields.is_empty() {
        "its settings".to_string()
    } else {
        fields.join(", ")
    };
    if allow {
        note!(
            "warning: --allow-scene-change: the scene differs from {}'s in {what}; the run \
             goes on with the new one",
            path.display()
        );
        Ok(())
    } else {
        bail!(
            "the scene differs from the one {} was run with, in {what}; the resumed run would \
             not be the run that was stopped (--allow-scene-change runs it anyway)",
            path.display()
        )
    }
}

/// Checkpoints written, their size and the time each took.
#[derive(Default)]
pub(crate) struct CheckpointLog {
    written: u64,
    bytes: u64,
    total_s: f64,
}

impl CheckpointLog {
    fn write(
        &mut self,
        sim: &Sim,
        scene: &Scene,
        out: &Path,
        frame: u64,
        keep: usize,
    ) -> Result<()> {
        let t = std::time::Instant::now();
        let state = sim.save_state()?;
        let (path, bytes) = eddy::output::checkpoint::write(out, scene, &state)
            .with_context(|| format!("cannot write the checkpoint of frame {frame}"))?;
        eddy::output::checkpoint::prune(out, keep)
            .with_context(|| format!("cannot remove old checkpoints beside {}", path.display()))?;
        self.written += 1;
        self.bytes = bytes;
        self.total_s += t.elapsed().as_secs_f64();
        Ok(())
    }

    fn summary(&self) -> String {
        if self.written == 0 {
            return String::new();
        }
        format!(
            "checkpoints: {} written, {:.2} MB each, {:.0} ms each to save\n",
            self.written,
            self.bytes as f64 / 1e6,
            1e3 * self.total_s / self.written as f64
        )
    }
}

/// What to change when a pressure solve queued ahead may have stopped at its queue's end.
fn queue_hint(scene: &Scene) -> &'static str {
    if scene.pressure.pipelined && eddy::sim::runner::queues_ahead(&scene.pressure) {
        "; a solve queued ahead stops where its queue ends: a larger pressure.margin queues \
         more, pressure.pipelined: false reads each solve until it converges"
    } else {
        ""
    }
}

/// `--check-invariants`: every solve converged, every particle is finite and inside the
/// domain (smoke tracers live in the slice's x and y), and every body is finite and inside
/// the domain up to a cell (the contacts' slop).
pub(crate) fn check_invariants(
    sim: &Sim,
    scene: &Scene,
    st: &FrameStats,
    expected_particles: u32,
) -> Result<()> {
    if st.unconverged_solves > 0 {
        bail!(
            "frame {}: {} pressure solve(s) stopped above the tolerance {:e} (at max_iterations \
             {}, at the end of their queue or on a breakdown), with a residual up to {:.3e}{}",
            st.frame,
            st.unconverged_solves,
            scene.pressure.tolerance,
            scene.pressure.max_iterations,
            st.pcg_max_residual,
            queue_hint(scene)
        );
    }
    if st.diffusion_unconverged() > 0 {
        bail!(
            "frame {}: {} diffusion solve(s) (viscosity, heat or dye) stopped above the \
             tolerance {:e} (at max_iterations {}, at the end of their queue or on a \
             breakdown)",
            st.frame,
            st.diffusion_unconverged(),
            scene.diffusion.tolerance,
            scene.diffusion.max_iterations
        );
    }
    if st.particles != expected_particles {
        bail!(
            "frame {}: {} particles, {expected_particles} expected{}",
            st.frame,
            st.particles,
            if scene.has_flow() {
                " (the frame before's count plus those emitted less those removed)"
            } else {
                ""
            }
        );
    }
    check_state(sim, scene, st.frame)
}

/// `--check-invariants`' checks of a state (after frame `frame`): every particle (tracer)
/// finite and inside the domain, every body finite and inside it up to a cell. Also run on
/// a resumed run's restored state, before its first frame.
pub(crate) fn check_state(sim: &Sim, scene: &Scene, frame: u64) -> Result<()> {
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
            frame,
            pos.len(),
            scene.domain
        );
    }
    if let Some(set) = sim.bodies().map(|b| &b.set) {
        let h = scene.h();
        for (i, b) in set.bodies.iter().enumerate() {
            let half = b.aabb_half();
            let out = (0..axes).any(|a| {
                let p = b.position[a];
                !p.is_finite() || p - half[a] < -h || p + half[a] > d[a] + h
            });
            if out {
                bail!(
                    "frame {}: body {i} (centre {:.4?} m, half extents {:.4?} m) is not finite \
                     or reaches more than a cell outside the domain [0, {:?}]",
                    frame,
                    b.position.to_array(),
                    half.to_array(),
                    scene.domain
                );
            }
        }
    }
    Ok(())
}

pub(crate) fn run(scene: &Scene, opts: &RunOptions) -> Result<ExitCode> {
    let caches = check_options(scene, opts)?;
    let start_frame = opts.resume.as_ref().map_or(0, |c| c.state.frame);
    let stop = StopRequest::install()?;

    let ctx = Arc::new(GpuContext::new()?);
    note!("adapter: {}", ctx.describe());
    let mut sim = start_sim(&ctx, scene, opts, caches.as_ref(), start_frame)?;
    let mut outs = Outputs::open(scene, opts, &sim, caches, start_frame)?;
    // Emitters add particles and drains and open sides remove them: the count a frame must
    // have is the last one's plus its emitted less its removed.
    let mut tally = Tally {
        done: start_frame,
        expected_particles: sim.particles(),
        ..Default::default()
    };

    let bar = progress_bar(opts.frames - start_frame);
    let start = std::time::Instant::now();
    let mut frame_loop = || -> Result<()> {
        while tally.done < opts.frames && stop.requested().is_none() {
            let before = eddy::gpu::Traffic::now();
            let st = sim.step_frame()?;
            tally.traffic += eddy::gpu::Traffic::now().since(before);
            tally.substeps += st.substeps as u64;
            tally.stage_ms.merge(sim.timing());
            outs.frame(&sim, scene, opts, &st, &bar)?;
            tally.done = st.frame;
            if let Some(l) = st.liquid() {
                tally.expected_particles = (tally.expected_particles as u64 + l.particles_emitted)
                    .saturating_sub(l.particles_removed)
                    as u32;
            }
            if opts.check_invariants {
                check_invariants(&sim, scene, &st, tally.expected_particles)?;
            }
            // After the checks: a frame that broke an invariant is no state to go on from.
            if let Some((_, keep)) = opts.checkpoint.filter(|c| st.frame.is_multiple_of(c.0)) {
                outs.checkpoints
                    .write(&sim, scene, &opts.out, st.frame, keep)?;
            }
            tally.warn(scene, &st, &bar);
            let secs = start.elapsed().as_secs_f64();
            bar.set_message(format!(
                "{:.1} steps/s, pcg {} it, |div| {:.1e}{}{}",
                tally.substeps as f64 / secs,
                st.pcg_iterations,
                st.max_divergence,
                st.smoke()
                    .map(|m| format!(", dye {:.3e}", m.dye_total))
                    .unwrap_or_default(),
                outs.meshes.progress()
            ));
            bar.inc(1);
        }
        Ok(())
    };
    let result = frame_loop();
    bar.abandon();
    let done = tally.done;
    // Stopped by a signal between checkpoints: the last complete frame is saved too, so
    // --resume goes on from where the run was stopped rather than from the checkpoint before.
    if let (Ok(()), Some((every, keep)), Some(_)) = (&result, opts.checkpoint, stop.requested()) {
        if done > start_frame && !done.is_multiple_of(every) {
            outs.checkpoints.write(&sim, scene, &opts.out, done, keep)?;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let kept = if done == 0 {
        format!("{} holds the header only", outs.stats_path.display())
    } else {
        format!(
            "{} holds frames 1 to {done}, and every dump written is complete",
            outs.stats_path.display()
        )
    };
    if let Err(e) = result {
        return Err(e.context(format!(
            "run stopped after {done} complete frame(s); {kept}"
        )));
    }
    // Results go to stdout once every file is written, so a failing stdout loses none.
    let mut summary = if opts.frames == 0 {
        format!(
            "--frames 0: nothing simulated; {} holds the header only\n",
            outs.stats_path.display()
        )
    } else {
        run_summary(
            &ctx,
            done - start_frame,
            tally.substeps,
            secs,
            &outs.stats_path,
            &tally.stage_ms,
        )
    };
    summary += &traffic_summary(&sim, &tally, secs);
    summary += &outs.summary(&sim);
    if tally.unconverged > 0 {
        note!(
            "warning: {} pressure solve(s) stopped above the tolerance",
            tally.unconverged
        );
    }
    if opts.check_invariants {
        note!(
            "invariants held for {done} frame(s): every solve within tolerance, all \
             {} particles finite and inside the domain{}",
            tally.expected_particles,
            if scene.has_flow() {
                " (the count is the frame before's plus those emitted less those removed)"
            } else {
                ""
            }
        );
    }
    if let (Some(dir), true) = (&opts.export, done > 0) {
        summary += &export_system(&sim, dir)?;
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

/// The options checked against the scene, and every output path found usable, before
/// minutes of simulation are spent; the field caches `--dump-fields` asks for.
fn check_options(scene: &Scene, opts: &RunOptions) -> Result<Option<FieldCaches>> {
    let smoke = scene.kind == SceneKind::Smoke;
    if smoke && opts.dump.is_some() {
        bail!("--dump-particles writes liquid particles; smoke scenes have none (their tracers are drawn by `eddy view`)");
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
    if opts.vdb == Some(0) {
        bail!("--dump-vdb must be at least 1");
    }
    if let (Some(_), SceneKind::Liquid) = (opts.vdb, scene.kind) {
        // The level set is sampled on the surface mesh's lattice: the same limits.
        eddy::mesh::params_for(scene, 1)?;
    }
    let caches = match &opts.fields {
        Some((every, names)) => Some(FieldCaches::new(scene, &opts.out, *every, names)?),
        None => None,
    };
    if opts.probe_only && scene.probes.is_empty() {
        bail!(
            "--probe-only writes the scene's probes and nothing else, and {} has none (add \
             `probes: [...]`, see docs/guide/05-scenes.md)",
            opts.scene_path.display()
        );
    }
    let start_frame = opts.resume.as_ref().map_or(0, |c| c.state.frame);
    if opts.resume.is_some() && opts.frames <= start_frame {
        bail!(
            "the newest checkpoint in {} is of frame {start_frame}: --frames N is the frame \
             the run ends at, so it must be larger",
            opts.out.display()
        );
    }
    if opts.resume.is_none() {
        prepare_out(&opts.out, opts.overwrite)?;
    }
    if let Some(dir) = &opts.export {
        if dir.exists() && !dir.is_dir() {
            bail!("--export-system {}: is a file, not a folder", dir.display());
        }
        eddy::output::ensure_writable_dir(dir)
            .with_context(|| format!("--export-system {}: cannot write there", dir.display()))?;
    }
    Ok(caches)
}

/// The simulation of `scene`, keeping what the outputs asked for read, restored from the
/// checkpoint `--resume` names (and checked, with `--check-invariants`).
fn start_sim(
    ctx: &Arc<GpuContext>,
    scene: &Scene,
    opts: &RunOptions,
    caches: Option<&FieldCaches>,
    start_frame: u64,
) -> Result<Sim> {
    let at = || opts.scene_path.display().to_string();
    let mut sim = Sim::new(ctx.clone(), scene).with_context(at)?;
    if opts.export.is_some() {
        // A warm-started scene's system is exported with its initial guess, and the last
        // solve's right-hand side must outlast its substep.
        sim.keep_initial_guess(scene.pressure.warm_start);
        sim.keep_solver_vectors();
    }
    if caches.is_some_and(|c| c.names.iter().any(|n| n == "divergence")) {
        // The caches' divergence is a view's field, kept only where asked for.
        sim.keep_grid_views();
    }
    if let Some(c) = &opts.resume {
        sim.restore_state(&c.state).with_context(|| {
            format!(
                "cannot resume from the checkpoint of frame {start_frame} in {} (nothing in the \
                 folder was changed)",
                opts.out.display()
            )
        })?;
        if opts.check_invariants {
            check_state(&sim, scene, start_frame).with_context(|| {
                format!(
                    "the checkpoint of frame {start_frame} in {}",
                    opts.out.display()
                )
            })?;
        }
        if c.eddy_version != env!("CARGO_PKG_VERSION") {
            note!(
                "warning: the checkpoint was written by eddy {}, this is {}: the resumed run \
                 may differ from the one that was stopped",
                c.eddy_version,
                env!("CARGO_PKG_VERSION")
            );
        }
    }
    for w in scene_warnings(scene) {
        note!("warning: {}: {w}", opts.scene_path.display());
    }
    Ok(sim)
}

/// What a run writes as it goes: stats.csv, bodies.csv, the dumps and the checkpoints.
struct Outputs {
    stats_path: PathBuf,
    /// None with `--probe-only`.
    csv: Option<RowWriter>,
    bodies_path: PathBuf,
    bodies_csv: Option<RowWriter>,
    probes_path: PathBuf,
    probes_csv: Option<RowWriter>,
    meshes: MeshLog,
    volumes: VolumeLog,
    caches: Option<FieldCaches>,
    checkpoints: CheckpointLog,
}

impl Outputs {
    /// Creates the CSV files (a resumed run's cut back to its checkpoint, and its later
    /// dumps removed) and writes frame 0's dumps.
    fn open(
        scene: &Scene,
        opts: &RunOptions,
        sim: &Sim,
        mut caches: Option<FieldCaches>,
        start_frame: u64,
    ) -> Result<Outputs> {
        // Created once the simulation is set up, so a scene the adapter refuses leaves --out
        // empty (and reusable) rather than holding a header-only stats.csv.
        let mut stats_path = opts.out.join("stats.csv");
        let header = FrameStats::csv_header_for(scene);
        // One row per body per frame, beside stats.csv.
        let bodies_path = opts.out.join("bodies.csv");
        let open_csv = |path: &Path, header: &str| -> Result<RowWriter> {
            if opts.resume.is_none() {
                return RowWriter::create(path, header)
                    .with_context(|| format!("cannot create {}", path.display()));
            }
            let dropped = eddy::output::truncate_rows_after(path, header, start_frame)
                .with_context(|| format!("cannot resume {}", path.display()))?;
            if dropped > 0 {
                note!(
                    "{}: dropped {} past the checkpoint's frame {start_frame} (the stopped run \
                     went on after it); they are simulated again",
                    path.display(),
                    count(dropped as u64, "row")
                );
            }
            RowWriter::append(path).with_context(|| format!("cannot append to {}", path.display()))
        };
        let csv = match opts.probe_only {
            true => None,
            false => Some(open_csv(&stats_path, &header)?),
        };
        let bodies_csv = match sim.bodies() {
            Some(_) if !opts.probe_only => {
                Some(open_csv(&bodies_path, eddy::output::bodies::CSV_HEADER)?)
            }
            _ => None,
        };
        // One row per substep (or frame) of the scene's probes, their units beside them.
        let probes_path = opts.out.join("probes.csv");
        if opts.probe_only {
            // The rows the run is for: the frame summaries and messages name this file.
            stats_path = probes_path.clone();
        }
        let probes_csv = if scene.probes.is_empty() {
            None
        } else {
            let units = opts.out.join("probes_units.csv");
            let text = eddy::output::probes::units_csv(scene);
            eddy::output::write_atomically(&units, |w| w.write_all(text.as_bytes()))
                .with_context(|| format!("cannot write {}", units.display()))?;
            Some(open_csv(
                &probes_path,
                &eddy::output::probes::csv_header(scene),
            )?)
        };
        if opts.resume.is_some() {
            let removed = eddy::output::remove_dumps_after(&opts.out, start_frame)
                .with_context(|| format!("cannot clear {}", opts.out.display()))?;
            if removed > 0 {
                note!(
                    "{}: removed {} past the checkpoint's frame {start_frame}",
                    opts.out.display(),
                    count(removed as u64, "dump")
                );
            }
            if let Some(c) = caches.as_mut() {
                c.resume(start_frame, scene.frame_dt)?;
            }
            note!(
                "resuming at frame {start_frame} (t = {:.6} s) from {}",
                sim.time(),
                opts.out
                    .join(eddy::output::checkpoint::file_name(start_frame))
                    .display()
            );
        }
        let mut outs = Outputs {
            stats_path,
            csv,
            bodies_path,
            bodies_csv,
            probes_path,
            probes_csv,
            meshes: MeshLog::default(),
            volumes: VolumeLog::default(),
            caches,
            checkpoints: CheckpointLog::default(),
        };
        if opts.resume.is_none() {
            outs.dumps(sim, scene, opts, 0, None)?;
        }
        Ok(outs)
    }

    /// The particle, mesh and field dumps of frame `frame` that are due.
    fn dumps(
        &mut self,
        sim: &Sim,
        scene: &Scene,
        opts: &RunOptions,
        frame: u64,
        bar: Option<&ProgressBar>,
    ) -> Result<()> {
        if let (Some(k), Sim::Liquid(s)) = (opts.dump, sim) {
            dump_particles(s, &opts.out, frame, k)?;
        }
        if let (Some(m), Sim::Liquid(s)) = (opts.mesh, sim) {
            self.meshes.dump(s, scene, &opts.out, frame, m, bar)?;
        }
        if let Some(c) = self.caches.as_mut() {
            c.dump(sim, frame)?;
        }
        if let Some(every) = opts.vdb {
            self.volumes
                .dump(sim, scene, &opts.out, frame, every, bar)?;
        }
        Ok(())
    }

    /// A simulated frame's rows and dumps.
    fn frame(
        &mut self,
        sim: &Sim,
        scene: &Scene,
        opts: &RunOptions,
        st: &FrameStats,
        bar: &ProgressBar,
    ) -> Result<()> {
        if let Some(w) = self.csv.as_mut() {
            w.row(&st.csv_row())
                .with_context(|| format!("cannot write {}", self.stats_path.display()))?;
        }
        if let (Some(w), Some(b)) = (self.bodies_csv.as_mut(), sim.bodies()) {
            for row in eddy::output::bodies::csv_rows(&b.set, st.frame, sim.time()) {
                w.row(&row)
                    .with_context(|| format!("cannot write {}", self.bodies_path.display()))?;
            }
        }
        if let Some(w) = self.probes_csv.as_mut() {
            for row in eddy::output::probes::csv_rows(st.frame, &st.probes) {
                w.row(&row)
                    .with_context(|| format!("cannot write {}", self.probes_path.display()))?;
            }
        }
        self.dumps(sim, scene, opts, st.frame, Some(bar))
    }

    /// What the outputs add to the run's summary: the flow's totals, the meshes, the
    /// checkpoints and the caches.
    fn summary(&self, sim: &Sim) -> String {
        let mut summary = String::new();
        if let Sim::Liquid(s) = sim {
            if let Some(flow) = &s.mode.flow {
                let t = flow.totals;
                summary += &format!(
                    "inflow/outflow over the whole run: {} particles emitted, {} removed, {} \
                     now (max_particles {}){}\n",
                    t.emitted,
                    t.removed,
                    s.mode.particles.count,
                    s.mode.particles.capacity,
                    if t.not_emitted > 0 {
                        format!("; {} not emitted for want of room", t.not_emitted)
                    } else {
                        String::new()
                    }
                );
            }
        }
        summary += &self.meshes.summary();
        summary += &self.volumes.summary();
        summary += &self.checkpoints.summary();
        if let Some(c) = &self.caches {
            summary += &c.summary();
        }
        summary
    }
}

/// A run's running sums over its frames.
#[derive(Default)]
struct Tally {
    /// The last complete frame.
    done: u64,
    substeps: u64,
    unconverged: u64,
    expected_particles: u32,
    stage_ms: eddy::gpu::StageTiming,
    /// What the simulation's frames asked of the GPU (dumps and CSV rows left out).
    traffic: eddy::gpu::Traffic,
}

impl Tally {
    /// The warnings a frame earns: nothing to simulate after frame 1, and the first
    /// pressure solve that stopped above the tolerance (the rest are counted).
    fn warn(&mut self, scene: &Scene, st: &FrameStats, bar: &ProgressBar) {
        if st.frame == 1 && st.fluid_cells == 0 {
            bar.suspend(|| {
                if scene.kind == SceneKind::Smoke {
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
            if self.unconverged == 0 {
                bar.suspend(|| {
                    note!(
                        "warning: frame {}: a pressure solve stopped with residual {:.3e} \
                         above the tolerance {:e} (max_iterations {}; counted in the \
                         summary){}",
                        st.frame,
                        st.pcg_max_residual,
                        scene.pressure.tolerance,
                        scene.pressure.max_iterations,
                        queue_hint(scene)
                    )
                });
            }
            self.unconverged += st.unconverged_solves as u64;
        }
    }
}

/// The summary's lines on what each substep asked of the GPU and the host.
fn traffic_summary(sim: &Sim, tally: &Tally, secs: f64) -> String {
    let n = tally.substeps;
    if n == 0 {
        return String::new();
    }
    let traffic = &tally.traffic;
    let per = |v: u64| v as f64 / n as f64;
    let mut summary = format!(
        "per substep: {:.1} dispatches, {:.1} submits, {:.1} host reads ({:.0} bytes), \
         {:.1} of them with nothing queued behind (the GPU idles)\n",
        per(traffic.dispatches),
        per(traffic.submits),
        per(traffic.reads),
        per(traffic.bytes_read),
        per(traffic.drains)
    );
    let ms = |ns: u64| ns as f64 * 1e-6 / n as f64;
    let wall = secs * 1e3 / n as f64;
    summary += &format!(
        "host per substep: {wall:.3} ms of wall time, {:.3} ms of it waiting for the GPU \
         in reads, {:.3} ms in submits, {:.3} ms recording and the host's own work\n",
        ms(traffic.wait_ns),
        ms(traffic.submit_ns),
        (wall - ms(traffic.wait_ns) - ms(traffic.submit_ns)).max(0.0)
    );
    let stages: Vec<String> = sim
        .dispatches_by_stage()
        .iter()
        .map(|(name, d)| format!("{name} {:.1}", *d as f64 / n as f64))
        .collect();
    summary += &format!("dispatches per substep by stage: {}\n", stages.join(", "));
    let skipped = sim.skipped_substeps();
    if skipped > 0 {
        summary += &format!(
            "substeps recorded ahead that did not run (their frame had ended; counted in \
             the dispatches above): {skipped}\n"
        );
    }
    summary
}

/// `--export-system`: the last solve's system, as the solver lab's files beside the Matrix
/// Market ones where it can be frozen (a warm-started solve needs its initial guess kept).
/// With bodies in the strong coupling A.mtx is A alone; their term K is in system.json
/// and body_id.u32. Returns the summary's line.
fn export_system(sim: &Sim, dir: &Path) -> Result<String> {
    match sim.freeze_system() {
        Ok(frozen) => eddy::output::frozen::save_frozen_system(dir, &frozen)
            .with_context(|| format!("cannot write the system to {}", dir.display()))?,
        Err(e) => {
            let sys = sim.export_system()?;
            eddy::output::write_matrix_market(dir, &sys)
                .with_context(|| format!("cannot write the system to {}", dir.display()))?;
            note!("note: Matrix Market files only, no system.json for `eddy bench --system`: {e}");
        }
    }
    Ok(format!("pressure system written to {}\n", dir.display()))
}

pub(crate) fn dump_particles(sim: &Simulation, out: &Path, frame: u64, every: u64) -> Result<()> {
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
pub(crate) struct MeshLog {
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

/// `--dump-vdb`: writes the OpenVDB volumes and logs their sizes.
#[derive(Default)]
pub(crate) struct VolumeLog {
    written: u64,
    bytes: u64,
    total_s: f64,
}

impl VolumeLog {
    fn dump(
        &mut self,
        sim: &Sim,
        scene: &Scene,
        out: &Path,
        frame: u64,
        every: u64,
        bar: Option<&ProgressBar>,
    ) -> Result<()> {
        if !frame.is_multiple_of(every) {
            return Ok(());
        }
        let t0 = std::time::Instant::now();
        let grids = match sim {
            Sim::Liquid(s) => {
                let (pos, _) = s.read_particles()?;
                let frame = s.field_frame(&eddy::output::vdb::LIQUID_INPUTS.map(String::from))?;
                eddy::output::vdb::liquid_grids(scene, &pos, &frame)?
            }
            Sim::Smoke(s) => eddy::output::vdb::smoke_grids(
                &s.field_frame(&eddy::output::vdb::SMOKE_INPUTS.map(String::from))?,
            ),
        };
        let path = out.join(format!("volume_{frame:05}.vdb"));
        let creator = format!(
            "eddy {}, frame {frame}, t = {:.6} s",
            env!("CARGO_PKG_VERSION"),
            sim.time()
        );
        let bytes = eddy::output::vdb::write_vdb(&path, &grids, &creator)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let s = t0.elapsed().as_secs_f64();
        self.written += 1;
        self.bytes += bytes;
        self.total_s += s;
        let active: Vec<String> = grids
            .iter()
            .map(|g| format!("{} {}", g.name(), g.active_count()))
            .collect();
        let line = format!(
            "volume frame {frame}: {:.2} MB, active voxels: {}; {:.0} ms",
            bytes as f64 / 1e6,
            active.join(", "),
            s * 1e3
        );
        match bar {
            Some(b) => b.suspend(|| note!("{line}")),
            None => note!("{line}"),
        }
        Ok(())
    }

    /// The summary line for stdout (empty without volumes).
    fn summary(&self) -> String {
        if self.written == 0 {
            return String::new();
        }
        format!(
            "{} OpenVDB volume(s) written: {:.2} MB per frame on average, {:.0} ms each\n",
            self.written,
            self.bytes as f64 / 1e6 / self.written as f64,
            1e3 * self.total_s / self.written as f64
        )
    }
}

/// `--dump-fields`: the VTK field caches of a run and their `.pvd` collection.
pub(crate) struct FieldCaches {
    out: PathBuf,
    every: u64,
    names: Vec<String>,
    collection: eddy::output::vtk::Collection,
    written: u64,
    bytes: u64,
}

impl FieldCaches {
    /// Checks `names` against the fields `scene`'s mode has (empty: all of them).
    fn new(scene: &Scene, out: &Path, every: u64, names: &[String]) -> Result<Self> {
        if every == 0 {
            bail!("--dump-fields must be at least 1");
        }
        let (mode, known): (&str, &[&str]) = match scene.kind {
            SceneKind::Liquid => ("liquid", &eddy::output::vtk::LIQUID_FIELDS),
            SceneKind::Smoke => ("smoke", &eddy::output::vtk::SMOKE_FIELDS),
        };
        let mut chosen = vec![];
        for n in names {
            let n = n.trim().to_ascii_lowercase();
            if n == "all" {
                chosen.extend(known.iter().map(|s| s.to_string()));
            } else if known.contains(&n.as_str()) {
                chosen.push(n);
            } else {
                bail!(
                    "--fields: {n:?} is not a field of a {mode} scene; expected some of {} (or all)",
                    known.join(", ")
                );
            }
        }
        if chosen.is_empty() {
            chosen = known.iter().map(|s| s.to_string()).collect();
        }
        chosen.dedup();
        Ok(Self {
            out: out.to_path_buf(),
            every,
            names: chosen,
            collection: eddy::output::vtk::Collection::new(out.join("fields.pvd")),
            written: 0,
            bytes: 0,
        })
    }

    /// A resumed run: the collection keeps the files of frames up to `frame`.
    fn resume(&mut self, frame: u64, frame_dt: f64) -> Result<()> {
        let path = self.out.join("fields.pvd");
        let (collection, added) =
            eddy::output::vtk::Collection::resume(path.clone(), frame, frame_dt)
                .with_context(|| format!("cannot read {}", path.display()))?;
        if added > 0 {
            note!(
                "{}: listed {} of the earlier frames it was missing (the collection was \
                 missing, damaged or cut short; their times are their frames' ends)",
                path.display(),
                count(added as u64, "cache file")
            );
            collection
                .write()
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        self.collection = collection;
        Ok(())
    }

    fn dump(&mut self, sim: &Sim, frame: u64) -> Result<()> {
        if !frame.is_multiple_of(self.every) {
            return Ok(());
        }
        use eddy::output::vtk;
        let frame_data = match sim {
            Sim::Liquid(s) => s.field_frame(&self.names)?,
            Sim::Smoke(s) => s.field_frame(&self.names)?,
        };
        let time = sim.time();
        let mut files = vec![];
        if !frame_data.cells.is_empty() {
            let name = format!("fields_{frame:05}.vti");
            vtk::write_cells(&self.out.join(&name), &frame_data)
                .with_context(|| format!("cannot write {}", self.out.join(&name).display()))?;
            files.push(name);
        }
        if frame_data.faces.is_some() {
            let comps = if frame_data.is_slice() { 2 } else { 3 };
            for (comp, axis) in ["u", "v", "w"].iter().enumerate().take(comps) {
                let name = format!("faces_{axis}_{frame:05}.vti");
                vtk::write_faces(&self.out.join(&name), &frame_data, comp, axis)
                    .with_context(|| format!("cannot write {}", self.out.join(&name).display()))?;
                files.push(name);
            }
        }
        if let (Sim::Liquid(s), true) = (sim, self.names.iter().any(|n| n == "particles")) {
            let (pos, vel) = s.read_particles()?;
            let name = format!("particles_{frame:05}.vtp");
            vtk::write_particles(&self.out.join(&name), &pos, &vel)
                .with_context(|| format!("cannot write {}", self.out.join(&name).display()))?;
            files.push(name);
        }
        for (part, name) in files.iter().enumerate() {
            self.bytes += std::fs::metadata(self.out.join(name)).map_or(0, |m| m.len());
            self.collection.add(time, part, name);
        }
        self.collection
            .write()
            .with_context(|| format!("cannot write {}", self.out.join("fields.pvd").display()))?;
        self.written += 1;
        Ok(())
    }

    fn summary(&self) -> String {
        format!(
            "field caches: {} frame(s) of {} ({:.1} MB) listed in {} (open it in ParaView)\n",
            self.written,
            self.names.join(", "),
            self.bytes as f64 / 1e6,
            self.out.join("fields.pvd").display()
        )
    }
}
