//! The output-folder policy: an `--out` must be empty or new unless `--overwrite` names it,
//! and then only an earlier run's own files are removed.

use super::*;

/// Describes an output folder's contents in a few words.
pub(crate) fn describe_contents(c: &FolderContents) -> String {
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
pub(crate) fn prepare_out(out: &Path, overwrite: bool) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {}: is a file, not a folder", out.display());
    }
    let contents = eddy::output::survey_folder(out)
        .with_context(|| format!("--out {}: cannot list the folder", out.display()))?;
    if let Some(c) = &contents {
        eddy::output::refuse_foreign_entries(c)
            .with_context(|| format!("--out {}", out.display()))?;
    }
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
