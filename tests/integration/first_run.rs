//! What a new user meets first: shipped scenes by name from any folder, help that lists
//! what flags accept, quiet stderr on a machine without a desktop session, results on
//! stdout that a closed pipe cannot break, benchmark rows as they finish.

use crate::common;

use crate::common::eddy_in;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A fresh folder outside the repository, so nothing resolves against `scenes/`.
fn elsewhere(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eddy-first-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn shipped_scenes_load_by_name_from_any_folder_and_a_file_there_wins() {
    let dir = elsewhere("names");
    for name in ["dam_break", "smoke_plume.ron", "scenes/obstacle.ron"] {
        let out = eddy_in(&dir, &["check", name]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    }
    let out = eddy_in(&dir, &["check", "double_dam_break"]);
    assert!(
        text(&out.stdout).contains("40 x 30 x 20"),
        "{}",
        text(&out.stdout)
    );

    // A file of that name in the current folder is read instead of the shipped scene.
    std::fs::write(
        dir.join("dam_break.ron"),
        "(domain: (1.0, 0.5, 0.5), resolution: (8, 4, 4), fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))])",
    )
    .unwrap();
    let out = eddy_in(&dir, &["check", "dam_break.ron"]);
    assert!(
        text(&out.stdout).contains("8 x 4 x 4"),
        "{}",
        text(&out.stdout)
    );

    // A headless run by name, from a folder with no scenes/ in it.
    let out = eddy_in(
        &dir,
        &[
            "run",
            "drop_into_pool",
            "--frames",
            "1",
            "--resolution",
            "8",
            "--out",
            "o",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("o/stats.csv"))
            .unwrap()
            .lines()
            .count(),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_scene_is_reported_once_with_the_shipped_names() {
    let dir = elsewhere("unknown");
    for args in [
        vec!["check", "tsunami"],
        vec!["run", "tsunami.ron", "--out", "o"],
    ] {
        let out = eddy_in(&dir, &args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.matches("cannot read scene").count(), 1, "{err}");
        for s in &eddy::scene::shipped::SHIPPED {
            assert!(err.contains(s.name), "{} missing: {err}", s.name);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenes_lists_name_mode_grid_and_description() {
    let out = eddy_in(&std::env::temp_dir(), &["scenes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let line = |name: &str| {
        s.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed: {s}"))
            .to_string()
    };
    for shipped in &eddy::scene::shipped::SHIPPED {
        line(shipped.name);
    }
    let dam = line("dam_break");
    assert!(
        dam.contains("liquid") && dam.contains("32x32x16") && dam.contains("collapses"),
        "{dam}"
    );
    let plume = line("smoke_plume");
    assert!(
        plume.contains("smoke") && plume.contains("128x192x1"),
        "{plume}"
    );
}

#[test]
fn help_lists_every_field_and_describes_every_option() {
    let view = text(&eddy_in(&std::env::temp_dir(), &["view", "--help"]).stdout);
    for f in eddy::sim::liquid::views::Field::ALL {
        let line = view
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&*f.id()))
            .unwrap_or_else(|| panic!("--field {} not listed: {view}", f.id()));
        assert!(line.contains(f.meaning()), "{line}");
    }
    for f in eddy::sim::smoke::views::SmokeField::ALL {
        assert!(
            view.contains(&format!("  {:<18} {}", f.name(), f.label())),
            "{view}"
        );
    }
    for flag in ["--record", "--every", "--camera"] {
        assert!(view.contains(flag), "{flag}: {view}");
    }
    let bench = text(&eddy_in(&std::env::temp_dir(), &["bench", "--help"]).stdout);
    assert!(
        bench.contains("[default: dam_break,settled_pool]"),
        "{bench}"
    );
    let check = text(&eddy_in(&std::env::temp_dir(), &["check", "--help"]).stdout);
    assert!(check.contains("<SCENE>  Scene file"), "{check}");
    // Every option of every command says what it does.
    for cmd in ["run", "view", "check", "bench"] {
        let help = text(&eddy_in(&std::env::temp_dir(), &[cmd, "--help"]).stdout);
        let lines: Vec<&str> = help.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if !t.starts_with("--") || t.starts_with("--help") {
                continue;
            }
            // clap puts the description on the line, or (long help) on the next one.
            let described = l.split_whitespace().count() > 2
                || lines.get(i + 1).is_some_and(|n| {
                    let n = n.trim_start();
                    !n.is_empty() && !n.starts_with('-')
                });
            assert!(described, "`eddy {cmd}`: option without a description: {l}");
        }
    }
}

#[test]
fn a_headless_run_without_a_runtime_dir_prints_only_its_own_lines() {
    let dir = elsewhere("quiet");
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "run",
            "dam_break",
            "--frames",
            "2",
            "--resolution",
            "8",
            "--out",
            "o",
        ])
        .current_dir(&dir)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The adapter line is eddy's; nothing from the window system or the drivers.
    for l in err.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            l.starts_with("adapter: "),
            "unexpected stderr line: {l:?}\n{err}"
        );
    }
    let s = text(&out.stdout);
    assert!(
        s.contains("2 frames, ") && s.contains("stats in o/stats.csv"),
        "{s}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reader_that_goes_away_does_not_stop_a_run() {
    use std::io::Read;
    // `eddy run ... | head -c 1`: the reader takes a byte and leaves.
    let dir = elsewhere("pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "run",
            "dam_break",
            "--frames",
            "3",
            "--resolution",
            "8",
            "--out",
            "o",
        ])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let csv = std::fs::read_to_string(dir.join("o/stats.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_reports_each_row_as_it_finishes_and_names_the_adapter_once() {
    use eddy::bench::StreamedTable;
    use eddy::scene::{PreconditionerKind, StandardProblem};
    let opts = eddy::bench::BenchOptions {
        sizes: vec![8],
        problems: vec![StandardProblem::DamBreak],
        preconditioners: vec![PreconditionerKind::Ip, PreconditionerKind::Jacobi],
        solves: 1,
        steps: 1,
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut streamed = String::new();
    let report = eddy::bench::run(
        common::gpu(),
        &opts,
        |_, _, _| {},
        |r| {
            if seen.is_empty() {
                streamed += &r.head();
            }
            if let Some(i) = r.row_count().checked_sub(1) {
                streamed += &r.row(i);
            }
            seen.push(r.row_count());
        },
    )
    .unwrap();
    assert_eq!(
        seen,
        vec![0, 1, 2],
        "the report grows a row per finished case"
    );
    assert_eq!(streamed + &report.tail(), report.table());

    let out = eddy_in(
        &std::env::temp_dir(),
        &[
            "bench",
            "--sizes",
            "8",
            "--problems",
            "dam_break",
            "--preconditioners",
            "ip",
            "--solves",
            "1",
            "--steps",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(all.matches("adapter:").count(), 1, "{all}");
}
