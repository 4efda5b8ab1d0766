//! `eddy bench`: the tables streamed as they grow, optionally written as JSON.

use super::*;

/// Checks `bench --json PATH` before the benchmark runs.
pub(crate) fn check_json_path(json: Option<&Path>) -> Result<()> {
    if let Some(path) = json {
        eddy::output::ensure_writable_file(path)
            .with_context(|| format!("--json {}: cannot write there", path.display()))?;
    }
    Ok(())
}

/// Runs a benchmark with a progress bar on stderr, prints its table on stdout a row at a
/// time as the cases finish, and writes its JSON.
pub(crate) fn run_bench<R: serde::Serialize + eddy::bench::StreamedTable>(
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

/// `eddy bench --system DIR`: every preconditioner (or those given) on an exported pressure
/// system; a table on stdout, optionally CSV (the table and the residual histories) and JSON.
pub(crate) fn bench_system(
    dir: &Path,
    kinds: Option<&[PreconditionerKind]>,
    tolerance: Option<f64>,
    max_iterations: u32,
    csv: Option<&Path>,
    json: Option<&Path>,
) -> Result<ExitCode> {
    let sys = eddy::output::frozen::load_frozen_system(dir).map_err(|e| anyhow!(e))?;
    let tolerance = tolerance.unwrap_or(sys.settings.tolerance);
    if !(tolerance > 0.0 && tolerance < 1.0) {
        bail!("--tolerance must be in (0, 1), got {tolerance}");
    }
    let history_csv = csv.map(|p| {
        let stem = p
            .file_stem()
            .map_or("race".into(), |s| s.to_string_lossy().into_owned());
        p.with_file_name(format!("{stem}_history.csv"))
    });
    for p in csv.iter().chain(history_csv.as_deref().iter()) {
        eddy::output::ensure_writable_file(p)
            .with_context(|| format!("--csv {}: cannot write there", p.display()))?;
    }
    check_json_path(json)?;
    let kinds = kinds.unwrap_or(&PreconditionerKind::ALL);
    let ctx = Arc::new(GpuContext::new()?);
    let mut text = format!(
        "adapter: {}\nsystem {}: {}, {} FLUID cells of {:?}, tolerance {tolerance:e}",
        ctx.describe(),
        dir.display(),
        eddy::files::printable(&sys.origin, 200),
        sys.fluid_cells(),
        sys.dims,
    );
    if let Some(s) = &sys.solve {
        text += &format!(
            "\nthe run solved it with {}: {} iterations, {} (residual {:.2e})",
            sys.settings.preconditioner, s.iterations, s.status, s.residual
        );
    }
    text += "\n";
    print_stdout(&text)?;
    let rows = eddy::sim::lab::race_some(
        ctx.clone(),
        &sys,
        kinds,
        tolerance,
        max_iterations,
        &mut |i, k| eprintln!("[{}/{}] {k}", i + 1, kinds.len()),
    )?;
    let timer = rows.first().map_or("wall", |r| r.timer);
    let mut t = format!(
        "{:<11} {:>6} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8}  status\n",
        "precond",
        "iters",
        "residual",
        "true res",
        "disp/it",
        if timer == "gpu" { "gpu ms" } else { "wall ms" },
        "lambda_min",
        "lambda_max",
        "kappa",
        "bound"
    );
    for r in &rows {
        let s = r.spectrum;
        let g = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3e}"));
        t += &format!(
            "{:<11} {:>6} {:>10.2e} {:>10} {:>8} {:>10.3} {:>10} {:>10} {:>10} {:>8}  {:?}\n",
            r.preconditioner.name(),
            r.iterations,
            r.residual,
            g(r.true_residual),
            r.dispatches_per_iteration,
            r.time_ms,
            g(s.map(|s| s.lambda_min)),
            g(s.map(|s| s.lambda_max)),
            g(s.map(|s| s.kappa)),
            s.map_or("-".into(), |s| format!("{:.1}", s.bound_iterations)),
            r.status,
        );
    }
    t += &format!(
        "time: {} (set-up and iterations); kappa: Lanczos from the CG coefficients; bound: \
         1/2 sqrt(kappa) ln(2/tol) iterations\n",
        if timer == "gpu" {
            "GPU timestamp queries"
        } else {
            "wall clock (no timestamp queries on this adapter)"
        }
    );
    if let (Some(p), Some(h)) = (csv, &history_csv) {
        eddy::output::frozen::write_race_csv(p, &rows)
            .with_context(|| format!("cannot write {}", p.display()))?;
        eddy::output::frozen::write_race_history_csv(h, &rows)
            .with_context(|| format!("cannot write {}", h.display()))?;
        t += &format!("CSV written to {} and {}\n", p.display(), h.display());
    }
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&rows)?;
        eddy::output::write_atomically(p, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?;
        t += &format!("JSON written to {}\n", p.display());
    }
    print_stdout(&t)?;
    Ok(ExitCode::SUCCESS)
}
