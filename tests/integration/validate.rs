//! `eddy validate` through the binary on two fast cases: the exit code, summary.csv's
//! columns and rows, and the page: index.html shows every plot inline and links its PNG
//! and SVG files, every PNG decodes and every SVG (the files and the inline copies) parses
//! as XML with an <svg> root. This stands in for opening the page in a browser (none is
//! installed on CI): the page loads nothing from the network, so its images are all there is.

use std::path::Path;
use std::process::Command;

const PLOTS: [&str; 4] = [
    "pressure_residual",
    "pressure_scaling",
    "hydrostatic_profile",
    "hydrostatic_convergence",
];

fn validate(out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "validate",
            "--quick",
            "--cases",
            "pressure,hydrostatic",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// The root element's name of an XML document, after checking that the whole document
/// parses (matched end tags, well-formed attributes).
fn xml_root(text: &str) -> String {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut root = None;
    let mut depth = 0i32;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                if root.is_none() {
                    root = Some(String::from_utf8_lossy(e.name().as_ref()).to_string());
                }
                depth += 1;
            }
            Ok(Event::Empty(e)) if root.is_none() => {
                root = Some(String::from_utf8_lossy(e.name().as_ref()).to_string());
            }
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("SVG does not parse: {e}"),
        }
    }
    assert_eq!(depth, 0, "unclosed elements");
    root.expect("no root element")
}

#[test]
fn validate_writes_a_page_whose_plots_all_load() {
    let out = std::env::temp_dir().join(format!("eddy-validate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = validate(&out, &[]);
    assert!(
        run.status.success(),
        "exit {:?}: {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );

    // summary.csv: the header, then one row per check with seven columns, all passing.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("case,resolution,measured,reference,error,tolerance,pass")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // pressure: 3 sizes x 6 preconditioners; hydrostatic: 3 sizes.
    assert_eq!(rows.len(), 3 * 6 + 3, "{csv}");
    for r in &rows {
        assert_eq!(r.len(), 7, "{r:?}");
        assert!(["pressure", "hydrostatic"].contains(&r[0]), "{r:?}");
        for v in &r[2..6] {
            assert!(v.parse::<f64>().unwrap().is_finite(), "{r:?}");
        }
        assert_eq!(r[6], "true", "{r:?}");
    }
    assert!(rows.iter().any(|r| r[0] == "hydrostatic"));

    // The page: every plot inline and linked as PNG and SVG; nothing from the network.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // (The inline SVGs' xmlns is a name, not a request.)
    for remote in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "<script",
        "<link",
        "@import",
    ] {
        assert!(!html.contains(remote), "index.html loads {remote}...");
    }
    let inline: Vec<&str> = html
        .match_indices("<svg")
        .map(|(i, _)| {
            let end = html[i..].find("</svg>").expect("unclosed inline svg") + i + 6;
            &html[i..end]
        })
        .collect();
    assert_eq!(inline.len(), PLOTS.len(), "inline plots");
    for svg in &inline {
        assert_eq!(xml_root(svg), "svg");
    }
    for name in PLOTS {
        for ext in ["png", "svg"] {
            assert!(
                html.contains(&format!("href=\"{name}.{ext}\"")),
                "index.html does not link {name}.{ext}"
            );
        }
        let png = image::open(out.join(format!("{name}.png")))
            .unwrap_or_else(|e| panic!("{name}.png: {e}"));
        assert_eq!((png.width(), png.height()), (1200, 800));
        let svg = std::fs::read_to_string(out.join(format!("{name}.svg"))).unwrap();
        assert_eq!(xml_root(&svg), "svg", "{name}.svg");
    }
    // Every local link on the page names a file that is there.
    for (i, _) in html.match_indices("href=\"") {
        let rest = &html[i + 6..];
        let target = &rest[..rest.find('"').unwrap()];
        if !target.starts_with('#') {
            assert!(out.join(target).is_file(), "broken link {target}");
        }
    }

    // The folder now holds a report: refused without --overwrite, replaced with it.
    let again = validate(&out, &[]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--overwrite"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let replaced = validate(&out, &["--overwrite"]);
    assert!(
        replaced.status.success(),
        "{}",
        String::from_utf8_lossy(&replaced.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn validate_refuses_unknown_cases() {
    let out = std::env::temp_dir().join(format!("eddy-validate-bad-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["validate", "--cases", "lid_cavity", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("cavity"), "the known cases are listed: {err}");
    assert!(!out.exists(), "a refused run must not create its folder");
}

/// Off a terminal (this test's pipe) a line per case; Ctrl-C during the first case stops
/// the suite after it, with the report of that case written and a non-zero exit.
#[cfg(unix)]
#[test]
fn validate_as_a_long_job_prints_a_line_per_case_and_keeps_the_cases_done_on_ctrl_c() {
    use std::io::BufRead;
    let out = std::env::temp_dir().join(format!("eddy-validate-stop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "validate",
            "--quick",
            "--cases",
            "hydrostatic,viscous,pressure",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut lines = vec![];
    for line in stderr.lines() {
        let line = line.unwrap();
        if line == "[1/3] hydrostatic: running" {
            // SIGINT, as Ctrl-C sends.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let text = lines.join("\n");
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(lines[0] == "[1/3] hydrostatic: running", "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[1/3] hydrostatic: 3 of 3 checks pass (ran in")),
        "{text}"
    );
    assert!(text.contains("stopping after 1 of 3 cases"), "{text}");
    assert!(!text.contains("viscous: running"), "{text}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .skip(1)
            .all(|l| l.starts_with("hydrostatic")),
        "{summary}"
    );
    assert!(summary.lines().count() > 1, "{summary}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("Stopped after 1 of the 3 cases asked for"));
    let _ = std::fs::remove_dir_all(&out);
}
