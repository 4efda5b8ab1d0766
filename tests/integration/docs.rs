//! The documents a reader meets first: README.md and BENCHMARKS.md stay short, every
//! relative link in them, the guide (docs/guide/), docs/ARCHITECTURE.md and the benchmarks'
//! dated log points at a file that exists (and an anchor at a heading of that file), and
//! the README's example scene loads.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The anchor GitHub gives a heading: lower case, spaces to hyphens, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = [
        "README.md",
        "BENCHMARKS.md",
        "benchmarks/history.md",
        "docs/ARCHITECTURE.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
    ]
    .iter()
    .map(|p| Path::new(ROOT).join(p))
    .collect();
    for e in std::fs::read_dir(Path::new(ROOT).join("docs/guide")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    docs
}

#[test]
fn every_link_in_the_documents_resolves() {
    let mut broken = vec![];
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        // Inline links and images: ](target); code spans hold no links.
        for part in text.split("](").skip(1) {
            let Some(target) = part.split(')').next() else {
                continue;
            };
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (file, frag) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target}", doc.display()));
                continue;
            }
            if !frag.is_empty() && path.extension().is_some_and(|x| x == "md") {
                let headings = std::fs::read_to_string(&path).unwrap();
                let found = headings
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|l| anchor(l.trim_start_matches('#')))
                    .any(|a| a == frag);
                if !found {
                    broken.push(format!("{}: {target} (no such heading)", doc.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn benchmarks_md_holds_todays_figures_only() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("BENCHMARKS.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "BENCHMARKS.md has {lines} lines; dated measurements go to benchmarks/history.md"
    );
}

#[test]
fn the_readme_is_short_and_its_scene_loads() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; the guide under docs/ holds the rest"
    );
    let scene = text
        .split("```ron\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("README.md shows a scene");
    eddy::scene::Scene::parse(scene, Path::new("README.md")).unwrap();
}

/// Every option of every command (`eddy COMMAND --help`) is on the guide's command-line
/// page, so a new flag cannot ship undocumented.
#[test]
fn every_command_line_option_is_in_the_guide() {
    let page =
        std::fs::read_to_string(Path::new(ROOT).join("docs/guide/01-command-line.md")).unwrap();
    let mut missing = vec![];
    for command in ["run", "view", "check", "scenes", "bench", "validate"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "eddy {command} --help failed");
        let help = String::from_utf8(out.stdout).unwrap();
        let options = help.lines().filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-h, ").unwrap_or(l);
            let l = if l.len() > 4 && l.as_bytes()[0] == b'-' && &l[2..4] == ", " {
                &l[4..]
            } else {
                l
            };
            l.strip_prefix("--").map(|rest| {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                format!("--{name}")
            })
        });
        for option in options {
            if option != "--help" && option != "--version" && !page.contains(&option) {
                missing.push(format!("eddy {command} {option}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options missing from docs/guide/01-command-line.md:\n{}",
        missing.join("\n")
    );
}

/// The fields of `pub struct NAME` in `src/PATH`, as written there.
fn struct_fields(path: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("src").join(path)).unwrap();
    let start = text
        .find(&format!("pub struct {name} {{"))
        .unwrap_or_else(|| panic!("no struct {name} in src/{path}"));
    let body = &text[start..start + text[start..].find("\n}").unwrap()];
    body.lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':').map(|(f, _)| f.trim().to_string()))
        .filter(|f| {
            f.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .collect()
}

/// Whether `text` holds `word` as a whole word.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let ok = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        ok(text[..i].chars().next_back()) && ok(text[i + word.len()..].chars().next())
    })
}

/// Every setting a scene file takes is in the guide: the scene's and its nested settings'
/// on the Scenes page, a body's on the Rigid bodies page.
#[test]
fn every_scene_setting_is_in_the_guide() {
    let read = |p: &str| std::fs::read_to_string(Path::new(ROOT).join(p)).unwrap();
    let scenes = read("docs/guide/05-scenes.md");
    let bodies = read("docs/guide/07-rigid-bodies.md");
    let mut missing = vec![];
    for (path, name, page, page_name) in [
        ("scene/mod.rs", "Scene", &scenes, "05-scenes.md"),
        ("scene/mod.rs", "PressureSettings", &scenes, "05-scenes.md"),
        ("scene/mod.rs", "SmokeSettings", &scenes, "05-scenes.md"),
        (
            "scene/diffusion.rs",
            "DiffusionSettings",
            &scenes,
            "05-scenes.md",
        ),
        ("scene/bodies.rs", "BodySpec", &bodies, "07-rigid-bodies.md"),
    ] {
        let fields = struct_fields(path, name);
        assert!(fields.len() >= 3, "{name}: read only {fields:?}");
        for f in fields {
            if !has_word(page, &f) {
                missing.push(format!("{name}.{f} (docs/guide/{page_name})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "scene settings missing from the guide:\n{}",
        missing.join("\n")
    );
}
