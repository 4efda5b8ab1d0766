//! The imports follow the plan of docs/ARCHITECTURE.md: dependencies point down
//! (`cli` -> `ui` -> `render` -> `sim` -> `gpu`, `scene` -> `files`), the layers inside the
//! simulation point down (core < bodies < lab < runner < modes), and the few places that
//! do not follow the plan yet are the ones ARCHITECTURE names, no more. Comment lines are
//! left out (a doc link may name any module).

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir` (relative to src/), with its text.
fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let root = Path::new(ROOT).join("src");
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((p.strip_prefix(&root).unwrap().to_path_buf(), text));
        }
    }
    assert!(!out.is_empty(), "no sources under src/{dir}");
    out
}

/// Whether `line` names `path` as a whole path segment (`crate::sim` but not
/// `crate::simulation`).
fn names(line: &str, path: &str) -> bool {
    line.match_indices(path).any(|(i, _)| {
        let next = line[i + path.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The code lines of the files under `dir` that name one of `forbidden`, except where a
/// file (relative to src/) and a path are in `allowed`.
fn offenders(dir: &str, forbidden: &[&str], allowed: &[(&str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for (file, text) in sources(dir) {
        let file = file.to_string_lossy().replace('\\', "/");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for path in forbidden {
                let excused = allowed
                    .iter()
                    .any(|(f, p)| file == *f && names(code, p) && p.starts_with(path));
                if names(code, path) && !excused {
                    out.push(format!("src/{file}:{}: {}", n + 1, code.trim()));
                }
            }
        }
    }
    out
}

fn check(dir: &str, forbidden: &[&str], allowed: &[(&str, &str)]) {
    let found = offenders(dir, forbidden, allowed);
    assert!(
        found.is_empty(),
        "src/{dir} imports what docs/ARCHITECTURE.md says it does not:\n{}",
        found.join("\n")
    );
}

const ABOVE_SIM: [&str; 5] = [
    "crate::render",
    "crate::ui",
    "crate::cli",
    "crate::validate",
    "crate::bench",
];

#[test]
fn files_and_gpu_import_nothing_above_them() {
    check("files.rs", &["crate::"], &[]);
    let mut above = vec![
        "crate::sim",
        "crate::scene",
        "crate::output",
        "crate::reference",
    ];
    above.extend(ABOVE_SIM);
    check("gpu", &above, &[]);
}

#[test]
fn scene_imports_neither_the_simulation_nor_its_users() {
    let mut above = vec!["crate::sim", "crate::output"];
    above.extend(ABOVE_SIM);
    check("scene", &above, &[]);
}

#[test]
fn the_simulation_imports_none_of_its_users() {
    let mut above = vec!["crate::output"];
    above.extend(ABOVE_SIM);
    check("sim", &above, &[]);
}

/// `crate::sim::NAME` and the `super::` paths that reach it from a file one or two
/// folders below `sim/`.
fn sim_paths(names: &[&str]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| {
            [
                format!("crate::sim::{n}"),
                format!("super::{n}"),
                format!("super::super::{n}"),
            ]
        })
        .collect()
}

fn check_sim(dir: &str, names: &[&str]) {
    let paths = sim_paths(names);
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    check(dir, &paths, &[]);
}

/// Inside `sim` the layers are core < bodies < lab < runner < the modes < handle: the
/// shared core names no body, the bodies no runner, and no layer a mode.
#[test]
fn the_simulations_layers_point_down() {
    let above_core = ["bodies", "lab", "runner", "liquid", "smoke", "handle"];
    check_sim("sim/core", &above_core);
    check_sim("sim/bodies", &above_core[2..]);
    check_sim("sim/lab", &above_core[2..]);
    check_sim("sim/runner", &above_core[3..]);
    check_sim("sim/liquid", &["handle", "smoke"]);
    // The smoke's multigrid views hand out the liquid's plain FieldData.
    let smoke = sim_paths(&["handle", "liquid"]);
    let smoke: Vec<&str> = smoke.iter().map(String::as_str).collect();
    let field_data = "crate::sim::liquid::views::FieldData";
    check("sim/smoke", &smoke, &[("sim/smoke/views.rs", field_data)]);
}

#[test]
fn the_renderer_and_the_viewer_point_down() {
    check("render", &["crate::ui", "crate::cli"], &[]);
    check("ui", &["crate::cli"], &[]);
}

#[test]
fn the_reference_reads_only_plain_data_and_the_constants() {
    let mut above = vec!["crate::sim", "crate::output"];
    above.extend(ABOVE_SIM);
    check("reference", &above, &[]);
}

#[test]
fn a_named_path_is_a_whole_segment() {
    assert!(names("use crate::sim::bodies;", "crate::sim"));
    assert!(!names("use crate::simulation;", "crate::sim"));
    assert!(names(
        "x = crate::sim::DENSITY * 2.0;",
        "crate::sim::DENSITY"
    ));
}
