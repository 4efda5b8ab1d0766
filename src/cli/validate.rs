//! `eddy validate`: runs the validation cases with a progress bar per case, writes the
//! report folder (index.html, summary.csv, every plot as PNG and SVG) and fails when a
//! case misses its tolerance, a line per failure on stderr.

use super::*;
use eddy::validate::{self, Level};
use indicatif::MultiProgress;
use std::io::IsTerminal;

/// The --out policy of `eddy run`, for a report folder: new or empty, or with --overwrite
/// cleared of an earlier report's files (index.html, summary.csv, *.png, *.svg); anything
/// else there is kept and listed.
pub(crate) fn prepare_report_dir(out: &Path, overwrite: bool) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {}: is a file, not a folder", out.display());
    }
    if let Ok(entries) = std::fs::read_dir(out) {
        let mut ours = Vec::new();
        let mut others = Vec::new();
        for e in entries {
            let e =
                e.with_context(|| format!("--out {}: cannot list the folder", out.display()))?;
            let name = e.file_name().to_string_lossy().to_string();
            if e.file_type().map(|t| t.is_file()).unwrap_or(false)
                && validate::report::is_report_file(&name)
            {
                ours.push(e.path());
            } else {
                others.push(name);
            }
        }
        if !(ours.is_empty() && others.is_empty()) {
            if !overwrite {
                bail!(
                    "--out {} is not empty (it holds {} report file(s) and {} other entr{}): \
                     pass --overwrite to replace an earlier report there, or choose a new folder",
                    out.display(),
                    ours.len(),
                    others.len(),
                    if others.len() == 1 { "y" } else { "ies" }
                );
            }
            for f in &ours {
                std::fs::remove_file(f)
                    .with_context(|| format!("--overwrite: cannot remove {}", f.display()))?;
            }
            if !others.is_empty() {
                others.sort();
                note!(
                    "--overwrite: kept {} other entr{} in {} ({})",
                    others.len(),
                    if others.len() == 1 { "y" } else { "ies" },
                    out.display(),
                    others.join(", ")
                );
            }
        }
    }
    eddy::output::ensure_writable_dir(out)
        .with_context(|| format!("--out {}: cannot write there", out.display()))
}

pub(crate) fn run_validate(
    full: bool,
    cases: &[String],
    out: &Path,
    overwrite: bool,
) -> Result<ExitCode> {
    let cases = validate::select(cases)?;
    prepare_report_dir(out, overwrite)?;
    let level = if full { Level::Full } else { Level::Quick };
    let ctx = Arc::new(GpuContext::new()?);
    let started = std::time::Instant::now();
    let multi = MultiProgress::new();
    let style =
        ProgressStyle::with_template("{prefix:>12} {bar:30} {pos}/{len}  {msg}  [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bars: Vec<ProgressBar> = cases
        .iter()
        .map(|c| {
            let b = multi.add(ProgressBar::new(1));
            b.set_style(style.clone());
            b.set_prefix(c.name);
            b.set_message("waiting");
            b
        })
        .collect();
    // Off a terminal the bars hide: a line per case instead (logs, CI, `> log 2>&1`).
    let lines = !std::io::stderr().is_terminal();
    let stop = StopRequest::install()?;
    let total = cases.len();
    let header = |n: usize, secs: f64| {
        let mut h = format!(
            "eddy {} validate --{}, adapter: {}; {n} case(s) in {secs:.0} s.",
            env!("CARGO_PKG_VERSION"),
            if full { "full" } else { "quick" },
            ctx.describe(),
        );
        if n < total {
            h += &format!(" Stopped after {n} of the {total} cases asked for.");
        }
        h
    };
    if lines {
        note!("[1/{total}] {}: running", cases[0].name);
    }
    let mut write_error = None;
    let reports = validate::run_each(
        &ctx,
        level,
        &cases,
        |i, done, total, what| {
            let b = &bars[i];
            b.set_length(total.max(1));
            b.set_position(done);
            b.set_message(what.to_string());
            if done >= total {
                b.finish();
            }
        },
        |so_far| {
            // The report is written as the cases finish: a run stopped (Ctrl-C, a kill)
            // keeps the cases done.
            let n = so_far.len();
            let last = &so_far[n - 1];
            if lines {
                let failed = last.failures().len();
                note!(
                    "[{n}/{total}] {}: {} of {} checks pass ({})",
                    cases[n - 1].name,
                    last.rows.len() - failed,
                    last.rows.len(),
                    last.notes.last().map_or("", |s| s.as_str())
                );
            }
            let written = validate::report::write(
                out,
                so_far,
                &header(n, started.elapsed().as_secs_f64()),
                validate::NOT_IMPLEMENTED,
            );
            if let Err(e) = written {
                write_error = Some(e);
                return false;
            }
            if let Some(sig) = stop.requested() {
                note!(
                    "{}: stopping after {n} of {total} cases; the report holds them",
                    signal_name(sig)
                );
                return false;
            }
            if lines && n < total {
                note!("[{}/{total}] {}: running", n + 1, cases[n].name);
            }
            true
        },
    )?;
    if let Some(e) = write_error {
        return Err(anyhow::Error::new(e)
            .context(format!("cannot write the report into {}", out.display())));
    }
    for b in &bars {
        b.finish();
    }
    let secs = started.elapsed().as_secs_f64();
    validate::report::write(
        out,
        &reports,
        &header(reports.len(), secs),
        validate::NOT_IMPLEMENTED,
    )
    .with_context(|| format!("cannot write the report into {}", out.display()))?;
    let failures: Vec<String> = reports.iter().flat_map(|r| r.failures()).collect();
    let checks: usize = reports.iter().map(|r| r.rows.len()).sum();
    let stopped = if reports.len() < total {
        format!("stopped after {} of {total} cases: ", reports.len())
    } else {
        String::new()
    };
    print_stdout(&format!(
        "{stopped}{} of {checks} checks pass in {secs:.0} s; report in {}\n",
        checks - failures.len(),
        out.join("index.html").display()
    ))?;
    if reports.len() < total {
        // Stopped by a signal: not a pass, whatever the cases done said.
        for f in &failures {
            note!("FAIL {f}");
        }
        return Ok(ExitCode::from(130));
    }
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for f in &failures {
        note!("FAIL {f}");
    }
    Ok(ExitCode::FAILURE)
}
