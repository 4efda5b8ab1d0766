//! Hostile input and interrupted runs: the corpus of bad scenes and command lines in
//! tests/corpus, runs stopped by SIGINT/SIGTERM, and simulations that blow up.

use crate::common;

use crate::common::eddy;
use eddy::scene::{Scene, SceneKind};
use eddy::sim::{smoke::SmokeSimulation, SimError, Simulation};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

const GOOD: &str = "(domain: (1.0, 0.5, 0.5), resolution: (8, 4, 4), fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))])";
const SMOKE: &str = "(kind: smoke, domain: (1.0, 1.0, 0.05), resolution: (16, 16, 1), pressure: (preconditioner: ip), \
     smoke: (tracers: 64, sources: [(shape: Sphere(center: (0.5, 0.15, 0.0), radius: 0.1), dye: (1, 1, 1), temperature: 1)]))";

/// What a failure must look like: a clean exit code (1, or clap's 2), no panic, and every
/// needle in stderr. Returns a description of what is wrong, if anything.
fn failure_problem(out: &Output, needles: &[&str]) -> Option<String> {
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    if !matches!(code, Some(1) | Some(2)) {
        return Some(format!("exit {code:?} (expected 1 or 2); stderr: {err}"));
    }
    if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
        return Some(format!("panic: {err}"));
    }
    let missing: Vec<&&str> = needles.iter().filter(|n| !err.contains(**n)).collect();
    if !missing.is_empty() {
        return Some(format!("missing {missing:?} in: {err}"));
    }
    None
}

/// The needles of a corpus scene: its `// expect: a | b` line (after any byte-order mark).
fn expectations(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_start_matches('\u{feff}');
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("// expect:"))
        .expect("corpus file without an `// expect:` line");
    line.split('|').map(|n| n.trim().to_string()).collect()
}

#[test]
fn every_bad_scene_in_the_corpus_fails_cleanly_naming_file_and_field() {
    let dir = corpus().join("bad_scenes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 60, "only {} bad scenes", files.len());
    let mut problems = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut needles = expectations(&std::fs::read(path).unwrap());
        needles.push(name.clone());
        let needles: Vec<&str> = needles.iter().map(|s| s.as_str()).collect();
        let out = eddy(&["check", path.to_str().unwrap()]);
        if let Some(p) = failure_problem(&out, &needles) {
            problems.push(format!("{name}: {p}"));
        }
        // The library says the same, without the command line around it.
        if Scene::load(path).is_ok() {
            problems.push(format!("{name}: Scene::load accepts it"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn unreadable_scene_files_fail_cleanly() {
    let dir = scratch!("unreadable");
    let not_utf8 = dir.join("latin1.ron");
    std::fs::write(&not_utf8, b"(name: \"caf\xe9\")").unwrap();
    let empty = dir.join("empty.ron");
    std::fs::write(&empty, b"").unwrap();
    let huge = dir.join("huge.ron");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(64 << 20).unwrap();
    let folder = dir.join("folder.ron");
    std::fs::create_dir_all(&folder).unwrap();
    let cases: [(&Path, &[&str]); 5] = [
        (&not_utf8, &["latin1.ron", "UTF-8"]),
        (&empty, &["empty.ron"]),
        (&huge, &["huge.ron", "not a scene file"]),
        (&folder, &["folder.ron", "a folder, not a scene file"]),
        (
            Path::new("scenes/does_not_exist.ron"),
            &["does_not_exist.ron"],
        ),
    ];
    for (path, needles) in cases {
        let out = eddy(&["check", path.to_str().unwrap()]);
        if let Some(p) = failure_problem(&out, needles) {
            panic!("{}: {p}", path.display());
        }
        // An I/O error names its cause once, not twice through the error chain.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.matches("(os error").count() <= 1, "{err}");
    }
}

/// Splits a corpus command line and fills its placeholders.
fn expand(line: &str, dir: &Path, n: usize) -> (Vec<String>, Vec<String>) {
    let (args, needles) = line.split_once(";;").expect("a line without `;;`");
    let tmp = dir.join(format!("out{n}"));
    let subst = |s: &str| {
        s.replace("{good}", dir.join("good.ron").to_str().unwrap())
            .replace("{smoke}", dir.join("smoke.ron").to_str().unwrap())
            .replace("{bad}", dir.join("bad.ron").to_str().unwrap())
            .replace(
                "{missing}",
                dir.join("does_not_exist.ron").to_str().unwrap(),
            )
            .replace("{file}", dir.join("a_file.txt").to_str().unwrap())
            .replace("{nonempty}", dir.join("nonempty").to_str().unwrap())
            .replace("{dir}", dir.join("empty_dir").to_str().unwrap())
            .replace("{tmp}", tmp.to_str().unwrap())
    };
    (
        args.split_whitespace().map(subst).collect(),
        needles.split('|').map(|s| s.trim().to_string()).collect(),
    )
}

#[test]
fn every_bad_command_line_in_the_corpus_fails_before_simulating() {
    let dir = scratch!("cmdline");
    std::fs::write(dir.join("good.ron"), GOOD).unwrap();
    std::fs::write(dir.join("smoke.ron"), SMOKE).unwrap();
    std::fs::write(dir.join("bad.ron"), GOOD.replacen('(', "(cfl: -2.0, ", 1)).unwrap();
    std::fs::write(dir.join("a_file.txt"), "not a folder").unwrap();
    std::fs::create_dir_all(dir.join("nonempty")).unwrap();
    std::fs::write(dir.join("nonempty/notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(dir.join("empty_dir")).unwrap();
    let text = std::fs::read_to_string(corpus().join("bad_command_lines.txt")).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 30, "only {} bad command lines", lines.len());
    let mut problems = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let (args, needles) = expand(line, &dir, n);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let needles: Vec<&str> = needles.iter().map(|s| s.as_str()).collect();
        let out = eddy(&args);
        if let Some(p) = failure_problem(&out, &needles) {
            problems.push(format!("`{line}`: {p}"));
        }
        // Checked before the run: no adapter was opened, no output folder made.
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("adapter:") {
            problems.push(format!("`{line}`: opened an adapter before failing: {err}"));
        }
        if dir.join(format!("out{n}")).join("stats.csv").exists() {
            problems.push(format!("`{line}`: wrote stats.csv before failing"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        !dir.join("nonempty/stats.csv").exists() && dir.join("nonempty/notes.txt").exists(),
        "a refused --out was touched"
    );
}

#[test]
fn silent_blow_up_scenes_now_stop_run_with_the_field_named() {
    // The scenes the issue found running to NaN/inf with exit 0 (or hanging): `run` refuses
    // each before opening an adapter, naming the field.
    let cases = [
        ("domain_1e300.ron", "domain"),
        ("domain_1e-300.ron", "domain"),
        ("velocity_1e30.ron", "velocity"),
        ("velocity_inf.ron", "velocity"),
        ("gravity_1e30.ron", "gravity"),
        ("smoke_buoyancy_1e30.ron", "smoke.buoyancy"),
        ("smoke_source_dye_1e30.ron", "smoke.sources[0].dye"),
        (
            "smoke_source_temperature_1e30.ron",
            "smoke.sources[0].temperature",
        ),
        (
            "smoke_source_velocity_1e30.ron",
            "smoke.sources[0].velocity",
        ),
        ("smoke_obstacle_velocity_1e30.ron", "smoke.obstacle"),
        ("max_substeps_u32_max.ron", "max_substeps"),
        ("cfl_tiny.ron", "cfl"),
        ("resolution_wraps_u64.ron", "resolution"),
    ];
    let dir = scratch!("blowups");
    for (i, (file, field)) in cases.iter().enumerate() {
        let path = corpus().join("bad_scenes").join(file);
        let out_dir = dir.join(format!("o{i}"));
        let out = eddy(&[
            "run",
            path.to_str().unwrap(),
            "--frames",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        if let Some(p) = failure_problem(&out, &[file, field]) {
            panic!("{file}: {p}");
        }
        assert!(
            !out_dir.exists(),
            "{file}: outputs made for a refused scene"
        );
    }
}

#[test]
fn check_applies_the_adapter_limits_that_run_applies() {
    // Grids, tracer counts and particle counts that `check` used to approve and `run` then
    // refused (or that aborted on allocation while seeding). Whatever the adapter, both
    // commands must agree, and neither may seed particles it cannot hold.
    let dir = scratch!("limits");
    let cases = [
        ("grid512.ron", "(domain: (1.0, 1.0, 1.0), resolution: (512, 512, 512), fluid: [Box(min: (0,0,0), max: (0.01,0.01,0.01))])"),
        ("smoke8192.ron", "(kind: smoke, domain: (1.0, 1.0, 0.01), resolution: (8192, 8192, 1))"),
        ("tracers4m.ron", "(kind: smoke, domain: (1.0, 1.0, 0.01), resolution: (32, 32, 1), smoke: (tracers: 4194304))"),
        ("particles.ron", "(domain: (1.0, 1.0, 1.0), resolution: (128, 128, 128), particles_per_cell: 27, fluid: [Box(min: (0,0,0), max: (1,1,1))])"),
    ];
    let mut refused = 0;
    for (name, text) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let check = eddy(&["check", path.to_str().unwrap()]);
        if check.status.success() {
            // A large adapter holds it; a run would take minutes, so only `check`'s claim
            // is verified.
            assert!(String::from_utf8_lossy(&check.stdout).contains("fits its limits"));
            continue;
        }
        refused += 1;
        let check_err = String::from_utf8_lossy(&check.stderr).to_string();
        assert!(
            failure_problem(&check, &[name, "allows at most"]).is_none(),
            "{check_err}"
        );
        let check_line = check_err
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or("");
        let out_dir = dir.join(format!("out-{name}"));
        let run = eddy(&[
            "run",
            path.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let run_err = String::from_utf8_lossy(&run.stderr);
        let run_line = run_err
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or("");
        assert_eq!(check_line, run_line, "check and run disagree on {name}");
    }
    // The tracer trails (1 GiB) and the particle buffer (0.9 GiB) exceed lavapipe's 128 MiB.
    let ctx = common::gpu();
    if eddy::sim::buffer_limit(&ctx) < 1 << 30 {
        assert!(refused >= 2, "only {refused} refused on a small adapter");
    }
}

#[test]
fn scenes_that_simulate_nothing_are_warned_about() {
    let dir = scratch!("nothing");
    let cases = [
        (
            "in_solid.ron",
            "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8), fluid: [Box(min: (0.3,0.3,0.3), max: (0.5,0.5,0.5))], \
             solids: [Box(min: (0.2,0.2,0.2), max: (0.6,0.6,0.6))])",
            &["fluid[0] seeds no particles", "no particles at all"][..],
        ),
        (
            "between_centres.ron",
            "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8), fluid: [Box(min: (0.0,0.0,0.0), max: (1.0,0.05,1.0))])",
            &["fluid[0] seeds no particles"][..],
        ),
        (
            "one_cell.ron",
            "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8), fluid: [Box(min: (0.3,0.3,0.3), max: (0.4,0.4,0.4))])",
            &["no cell reaches the FLUID density"][..],
        ),
    ];
    for (name, text, needles) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = eddy(&["check", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        for n in needles.iter().chain(&[name, "warning"]) {
            assert!(err.contains(n), "{name}: missing {n:?} in {err}");
        }
    }
    // `run` warns as well: before simulating for no particles, after frame 1 for no FLUID.
    for (name, needle) in [
        ("in_solid.ron", "seeds no particles"),
        ("one_cell.ron", "frame 1 marked no FLUID cell"),
    ] {
        let out_dir = dir.join(format!("out-{name}"));
        let out = eddy(&[
            "run",
            dir.join(name).to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(err.contains(needle), "{name}: missing {needle:?} in {err}");
    }
}

#[test]
fn bodies_too_thin_for_the_grid_are_warned_about() {
    // A box 0.1 m thin on a 16^3 grid of 1 m spans 1.6 cells (under the 3 a floating body
    // needs; see `THIN_BODY_CELLS`), 3.2 cells at 32^3. Held fixed, it cannot rock.
    let dir = scratch!("thin");
    let scene = |motion: &str, n: u32| {
        format!(
            "(domain: (1.0, 1.0, 1.0), resolution: ({n}, {n}, {n}), \
             fluid: [Box(min: (0,0,0), max: (1.0,0.5,1.0))], \
             bodies: [(shape: Sphere(radius: 0.15), center: (0.25, 0.5, 0.25), density: 500.0), \
             (shape: Box(half_extents: (0.08, 0.05, 0.08)), center: (0.7, 0.5, 0.7), \
             density: 500.0, motion: {motion})])"
        )
    };
    let thin = dir.join("thin.ron");
    std::fs::write(&thin, scene("dynamic", 16)).unwrap();
    let fine = dir.join("fine.ron");
    std::fs::write(&fine, scene("dynamic", 32)).unwrap();
    let fixed = dir.join("fixed.ron");
    std::fs::write(&fixed, scene("fixed", 16)).unwrap();
    let needle = "body 1 spans 1.6 cells across its thinnest side";
    let out = eddy(&["check", thin.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(needle), "missing {needle:?} in {err}");
    assert!(!err.contains("body 0 spans"), "the 4.8-cell ball: {err}");
    for path in [&fine, &fixed] {
        let out = eddy(&["check", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {err}", path.display());
        assert!(!err.contains("spans"), "{}: {err}", path.display());
    }
    let out_dir = dir.join("out");
    let out = eddy(&[
        "run",
        thin.to_str().unwrap(),
        "--frames",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(needle), "run: missing {needle:?} in {err}");
}

fn tiny_liquid() -> Scene {
    Scene::parse(GOOD, Path::new("tiny.ron")).unwrap()
}

#[test]
fn a_nan_velocity_stops_the_run_naming_the_frame_and_quantity() {
    let mut sim = Simulation::new(common::gpu(), &tiny_liquid()).unwrap();
    sim.step_frame().unwrap();
    let (pos, mut vel) = sim.read_particles().unwrap();
    vel[3][1] = f32::NAN;
    sim.upload_particles(&pos, &vel).unwrap();
    match sim.step_frame() {
        Err(e @ SimError::NonFinite { frame: 2, .. }) => {
            let m = e.to_string();
            assert!(m.contains("frame 2") && m.contains("blew up"), "{m}");
        }
        other => panic!("expected a non-finite error at frame 2, got {other:?}"),
    }
}

#[test]
fn an_infinite_or_absurd_speed_never_spins_through_empty_substeps() {
    let mut sim = Simulation::new(common::gpu(), &tiny_liquid()).unwrap();
    let (pos, vel) = sim.read_particles().unwrap();
    // Infinite: the CFL substep would be 0 s, repeated max_substeps times.
    let mut v = vel.clone();
    v[0][0] = f32::INFINITY;
    sim.upload_particles(&pos, &v).unwrap();
    let e = sim.step_frame().unwrap_err();
    assert!(
        matches!(
            e,
            SimError::NonFinite {
                frame: 1,
                substep: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("the largest speed became inf"),
        "{e}"
    );
    // Finite but absurd: the substep falls below its floor (a millionth of a frame).
    let mut v = vel;
    v[0][0] = 1e18;
    sim.upload_particles(&pos, &v).unwrap();
    let e = sim.step_frame().unwrap_err();
    match &e {
        SimError::SubstepTooShort { dt, floor, .. } => assert!(dt < floor, "{e}"),
        other => panic!("expected a substep below the floor, got {other:?}"),
    }
    assert!(e.to_string().contains("below the floor"), "{e}");
}

#[test]
fn a_smoke_blow_up_stops_naming_the_frame_and_quantity() {
    let scene = Scene::parse(SMOKE, Path::new("smoke.ron")).unwrap();
    assert_eq!(scene.kind, SceneKind::Smoke);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.step_frame().unwrap();
    let dye = sim.read_dye().unwrap();
    // One NaN face would be cleaned up by MacCormack's clamp (min/max drop NaN); a field
    // gone NaN everywhere, as after a real blow-up, is not.
    let vel = vec![f32::NAN; sim.read_velocity().unwrap().len()];
    sim.upload_state(&dye, &vel).unwrap();
    let e = sim.step_frame().unwrap_err();
    assert!(matches!(e, SimError::NonFinite { frame: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("frame 2"), "{e}");
}

/// Rows of a stats.csv: every line after the header parsed as numbers, with the frame
/// numbers checked to run 1, 2, 3, ... without a gap.
fn complete_rows(csv: &str, columns: usize) -> Vec<Vec<f64>> {
    let mut lines = csv.lines();
    let header = lines.next().expect("no header");
    assert_eq!(header.split(',').count(), columns, "header: {header}");
    assert!(csv.ends_with('\n'), "the last row is cut: {csv:?}");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|c| c.parse().expect(l)).collect();
            assert_eq!(v.len(), columns, "incomplete row {l}");
            v
        })
        .collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], (i + 1) as f64, "frames are not consecutive");
    }
    rows
}

/// A 12^3 dam break in `dir`, for the runs that are stopped by a signal.
#[cfg(unix)]
fn small_dam_break(dir: &Path) -> PathBuf {
    let scene = dir.join("s.ron");
    std::fs::write(
        &scene,
        "(domain: (1.0, 1.0, 1.0), resolution: (12, 12, 12), fluid: [Box(min: (0,0,0), max: (0.4,0.6,1.0))])",
    )
    .unwrap();
    scene
}

/// Starts `eddy run`, waits until stats.csv holds `rows` rows, then sends `signal`.
#[cfg(unix)]
fn interrupt_after(args: &[&str], out: &Path, rows: usize, signal: &str) -> Output {
    use std::process::Stdio;
    let child = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
    loop {
        let n = std::fs::read_to_string(out.join("stats.csv"))
            .map(|s| s.lines().count().saturating_sub(1))
            .unwrap_or(0);
        if n >= rows {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run made no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The next frame has just started: the signal lands mid-frame.
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn sigint_mid_run_keeps_every_finished_frame_and_only_complete_dumps() {
    let dir = scratch!("sigint");
    let scene = small_dam_break(&dir);
    let out = dir.join("out");
    let args = [
        "run",
        scene.to_str().unwrap(),
        "--frames",
        "100000",
        "--out",
        out.to_str().unwrap(),
        "--dump-particles",
        "1",
    ];
    let o = interrupt_after(&args, &out, 3, "-INT");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    let rows = complete_rows(
        &std::fs::read_to_string(out.join("stats.csv")).unwrap(),
        eddy::output::stats::LIQUID_CSV_HEADER.split(',').count(),
    );
    let last = rows.len() as u64;
    assert!((3..100_000).contains(&last), "{last} rows");
    assert!(
        err.contains(&format!("after frame {last} of 100000")),
        "{err}"
    );
    // A dump for frames 0..=last, each complete, and no temporary file left over.
    let mut dumps = Vec::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(!name.ends_with(".tmp"), "left over: {name}");
        if let Some(n) = name.strip_prefix("particles_") {
            let frame: u64 = n.trim_end_matches(".ply").parse().unwrap();
            let ply = eddy::output::read_ply(&out.join(&name)).unwrap();
            assert_eq!(ply.len() as f64, rows[0][3], "{name}");
            dumps.push(frame);
        }
    }
    dumps.sort();
    assert_eq!(dumps, (0..=last).collect::<Vec<_>>());
}

#[cfg(unix)]
#[test]
fn sigterm_mid_smoke_run_keeps_every_finished_frame() {
    let dir = scratch!("sigterm");
    let scene = dir.join("smoke.ron");
    std::fs::write(&scene, SMOKE).unwrap();
    let out = dir.join("out");
    let args = [
        "run",
        scene.to_str().unwrap(),
        "--frames",
        "100000",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = interrupt_after(&args, &out, 2, "-TERM");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    let rows = complete_rows(
        &std::fs::read_to_string(out.join("stats.csv")).unwrap(),
        eddy::output::stats::SMOKE_CSV_HEADER.split(',').count(),
    );
    assert!(rows.len() >= 2, "{} rows", rows.len());
}

#[test]
fn check_invariants_passes_a_healthy_run() {
    let dir = scratch!("invariants");
    let scene = dir.join("s.ron");
    std::fs::write(&scene, GOOD).unwrap();
    let out = eddy(&[
        "run",
        scene.to_str().unwrap(),
        "--frames",
        "3",
        "--out",
        dir.join("out").to_str().unwrap(),
        "--check-invariants",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("invariants held for 3 frame(s)"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_run_stopped_by_sigterm_checkpoints_its_last_frame_and_resumes_there() {
    let dir = scratch!("sigterm-ckpt");
    let scene = small_dam_break(&dir);
    let out = dir.join("out");
    let s = scene.to_str().unwrap();
    let o = out.to_str().unwrap();
    let args = [
        "run",
        s,
        "--frames",
        "100000",
        "--out",
        o,
        "--checkpoint-every",
        "1000",
    ];
    let r = interrupt_after(&args, &out, 3, "-TERM");
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(143), "{err}");
    let rows = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let last = rows.lines().count() as u64 - 1;
    let ckpt = out.join(eddy::output::checkpoint::file_name(last));
    assert!(
        ckpt.exists(),
        "no checkpoint of the last frame {last}: {err}"
    );
    // Resumed two frames further, it matches a run that was never stopped.
    let end = (last + 2).to_string();
    let resumed = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["run", "--resume", o, "--frames", &end])
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let straight = dir.join("straight");
    let whole = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "run",
            s,
            "--frames",
            &end,
            "--out",
            straight.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(whole.status.success());
    assert_eq!(
        std::fs::read(out.join("stats.csv")).unwrap(),
        std::fs::read(straight.join("stats.csv")).unwrap()
    );
}
