//! Generates two tables from the source tree, so no hand-kept list can miss a file:
//! every `.wgsl` file under `src/` (the include step resolves `//!include PATH` in it), and
//! every Rust mirror of a WGSL struct declared with `wgsl_mirror!` (tests/integration/shaders.rs
//! checks each against naga's layout).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `src/sim/core/params.rs` -> `crate::sim::core::params`; `.../mod.rs` names its folder.
fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    let mut path = String::from("crate");
    for p in parts {
        path.push_str("::");
        path.push_str(&p);
    }
    path
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let src = root.join("src");
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    walk(&src, &mut files);

    let mut wgsl =
        String::from("/// Every `.wgsl` file under `src/`: (path relative to `src/`, text).\n");
    wgsl.push_str("pub(crate) static FILES: &[(&str, &str)] = &[\n");
    let mut mirrors = String::from(
        "/// Every Rust mirror of a WGSL struct (each `wgsl_mirror!` under `src/`).\n\
         pub fn all() -> Vec<MirrorLayout> {\n    vec![\n",
    );
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let rel_str = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        match f.extension().and_then(|e| e.to_str()) {
            Some("wgsl") => {
                writeln!(
                    wgsl,
                    "    ({rel_str:?}, include_str!({:?})),",
                    f.display().to_string()
                )
                .unwrap();
            }
            Some("rs") => {
                let text = std::fs::read_to_string(f).expect("read source");
                let module = module_path(rel);
                for (i, _) in text.match_indices("wgsl_mirror!(") {
                    // Only invocations that open a line (not mentions in docs or the macro's
                    // own recursion).
                    let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                    let before = text[line_start..i].trim();
                    if !(before.is_empty() || before == "crate::") {
                        continue;
                    }
                    let rest = &text[i + "wgsl_mirror!(".len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && rest[name.len()..].trim_start().starts_with(':') {
                        writeln!(mirrors, "        {module}::{name}(),").unwrap();
                    }
                }
            }
            _ => {}
        }
    }
    wgsl.push_str("];\n");
    mirrors.push_str("    ]\n}\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    std::fs::write(out.join("wgsl_files.rs"), wgsl).expect("write wgsl_files.rs");
    std::fs::write(out.join("mirrors.rs"), mirrors).expect("write mirrors.rs");
}
