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
