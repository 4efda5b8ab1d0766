//! `eddy validate`: runs the validation cases with a progress bar per case, writes the
//! report folder (index.html, summary.csv, every plot as PNG and SVG) and fails when a
//! case misses its tolerance, a line per failure on stderr.

use super::*;
use eddy::validate::{self, Level};
use indicatif::MultiProgress;

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
    let reports = validate::run(&ctx, level, &cases, |i, done, total, what| {
        let b = &bars[i];
        b.set_length(total.max(1));
        b.set_position(done);
        b.set_message(what.to_string());
        if done >= total {
            b.finish();
        }
    })?;
    for b in &bars {
        b.finish();
    }
    let secs = started.elapsed().as_secs_f64();
    let header = format!(
        "eddy {} validate --{}, adapter: {}; {} case(s) in {:.0} s.",
        env!("CARGO_PKG_VERSION"),
        if full { "full" } else { "quick" },
        ctx.describe(),
        reports.len(),
        secs
    );
    validate::report::write(out, &reports, &header, validate::NOT_IMPLEMENTED)
        .with_context(|| format!("cannot write the report into {}", out.display()))?;
    let failures: Vec<String> = reports.iter().flat_map(|r| r.failures()).collect();
    let checks: usize = reports.iter().map(|r| r.rows.len()).sum();
    print_stdout(&format!(
        "{} of {checks} checks pass in {secs:.0} s; report in {}\n",
        checks - failures.len(),
        out.join("index.html").display()
    ))?;
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for f in &failures {
        note!("FAIL {f}");
    }
    Ok(ExitCode::FAILURE)
}
