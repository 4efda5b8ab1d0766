//! Saved states and checkpoints: a run stopped, saved, restored into a new simulation and
//! continued is bit for bit the run that never stopped (stats rows, particles, bodies),
//! for the liquid (FLIP and APIC, with bodies) and the smoke (bodies and tracers).

use crate::common;

use eddy::scene::{Scene, TransferKind};
use eddy::sim::{smoke::SmokeSimulation, Simulation};

/// `frames` frames straight, against `split` frames, a save, a new simulation restored
/// from it and the rest: the stats rows, the bodies and `read` of the end state agree.
fn liquid_resumes_exactly(scene: &Scene, split: u64, frames: u64) {
    let ctx = common::gpu();
    let mut whole = Simulation::new(ctx.clone(), scene).unwrap();
    let mut straight = vec![];
    for _ in 0..frames {
        straight.push(whole.step_frame().unwrap().csv_row());
    }
    let mut first = Simulation::new(ctx.clone(), scene).unwrap();
    let mut resumed = vec![];
    for _ in 0..split {
        resumed.push(first.step_frame().unwrap().csv_row());
    }
    let state = first.save_state().unwrap();
    drop(first);
    let mut second = Simulation::new(ctx.clone(), scene).unwrap();
    second.restore_state(&state).unwrap();
    for _ in split..frames {
        resumed.push(second.step_frame().unwrap().csv_row());
    }
    for (i, (a, b)) in straight.iter().zip(&resumed).enumerate() {
        assert_eq!(
            a,
            b,
            "{}: frame {} differs after resuming at {split}",
            scene.name,
            i + 1
        );
    }
    let (pa, va) = whole.read_particles().unwrap();
    let (pb, vb) = second.read_particles().unwrap();
    assert!(pa == pb && va == vb, "{}: particles differ", scene.name);
    if let (Some(a), Some(b)) = (&whole.bodies, &second.bodies) {
        assert_eq!(
            a.set.state_words(),
            b.set.state_words(),
            "{}: bodies",
            scene.name
        );
    }
}

#[test]
fn a_liquid_run_resumed_from_a_saved_state_is_the_same_run() {
    let dam = common::shipped("dam_break", 16);
    liquid_resumes_exactly(&dam, 4, 8);
    let mut apic = dam.clone();
    apic.transfer = TransferKind::Apic;
    apic.name = "dam break, APIC".into();
    liquid_resumes_exactly(&apic, 3, 6);
    liquid_resumes_exactly(&common::shipped("floating_bodies", 16), 4, 8);
}

/// Viscous runs carry the viscosity's incremental correction (src/sim/core/split.rs: the
/// liquid's last pressure, the smoke's last acceleration of each face) in the saved state:
/// resumed, they are the runs that never stopped.
#[test]
fn viscous_runs_resumed_are_the_same_runs() {
    let mut bodies = common::shipped("floating_bodies", 16);
    bodies.viscosity = 0.005;
    bodies.name = "floating bodies, viscous".into();
    liquid_resumes_exactly(&bodies, 3, 6);
    let mut smoke = common::shipped("smoke_rigid_bodies", 32);
    smoke.viscosity = 0.01;
    smoke_resumes_exactly(&smoke);
}

#[test]
fn a_smoke_run_with_bodies_resumed_from_a_saved_state_is_the_same_run() {
    smoke_resumes_exactly(&common::shipped("smoke_rigid_bodies", 32));
}

/// 8 frames straight against 4, a save, a new simulation restored from it and 4 more:
/// stats rows, dye, tracers and bodies agree.
fn smoke_resumes_exactly(scene: &Scene) {
    let scene = scene.clone();
    let ctx = common::gpu();
    let (split, frames) = (4, 8);
    let mut whole = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
    let straight: Vec<String> = (0..frames)
        .map(|_| whole.step_frame().unwrap().csv_row())
        .collect();
    let mut first = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
    let mut resumed: Vec<String> = (0..split)
        .map(|_| first.step_frame().unwrap().csv_row())
        .collect();
    let state = first.save_state().unwrap();
    drop(first);
    let mut second = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
    second.restore_state(&state).unwrap();
    resumed.extend((split..frames).map(|_| second.step_frame().unwrap().csv_row()));
    assert_eq!(straight, resumed);
    assert_eq!(whole.read_dye().unwrap(), second.read_dye().unwrap());
    assert_eq!(
        whole.read_tracers().unwrap(),
        second.read_tracers().unwrap()
    );
    assert_eq!(whole.trail_slot(), second.trail_slot());
    assert_eq!(
        whole.bodies.as_ref().unwrap().set.state_words(),
        second.bodies.as_ref().unwrap().set.state_words()
    );
}

#[test]
fn a_state_of_another_scene_is_refused() {
    let ctx = common::gpu();
    let dam = common::shipped("dam_break", 16);
    let mut sim = Simulation::new(ctx.clone(), &dam).unwrap();
    sim.step_frame().unwrap();
    let state = sim.save_state().unwrap();
    let mut other = Simulation::new(ctx.clone(), &common::shipped("dam_break", 12)).unwrap();
    let e = other.restore_state(&state).unwrap_err().to_string();
    assert!(e.contains("particles") || e.contains("bytes"), "{e}");
    let mut smoke = SmokeSimulation::new(ctx, &common::shipped("smoke_plume", 32)).unwrap();
    let e = smoke.restore_state(&state).unwrap_err().to_string();
    assert!(e.contains("the saved state"), "{e}");
}

mod cli {
    //! `eddy run --checkpoint-every` and `--resume`, as a user runs them.

    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    fn eddy(args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cannot start eddy")
    }

    fn ok(out: &Output) -> String {
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "eddy failed: {err}");
        err
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("eddy-ckpt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Every file of `d` with its bytes.
    fn snapshot(d: &Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().to_string(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    }

    fn run(scene: &str, out: &Path, frames: u32, extra: &[&str]) -> Output {
        let f = frames.to_string();
        let mut args = vec!["run", scene, "--resolution", "16", "--frames", &f];
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        eddy(&args)
    }

    /// `frames` frames straight against a run stopped after `stop` (its checkpoints every
    /// `every`) and resumed: every file the straight run wrote is there, byte for byte.
    fn resumed_equals_straight(scene: &str, every: u32, stop: u32, frames: u32, dumps: &[&str]) {
        // A scene file's path or a shipped scene's name.
        let tag = Path::new(scene).file_stem().unwrap().to_string_lossy();
        let straight = dir(&format!("{tag}-straight"));
        let resumed = dir(&format!("{tag}-resumed"));
        let k = every.to_string();
        let mut with_ckpt = vec!["--checkpoint-every", &k];
        with_ckpt.extend(dumps);
        ok(&run(scene, &straight, frames, dumps));
        ok(&run(scene, &resumed, stop, &with_ckpt));
        let f = frames.to_string();
        let mut args = vec!["run", "--resume", resumed.to_str().unwrap(), "--frames", &f];
        args.extend(dumps);
        let err = ok(&eddy(&args));
        if !stop.is_multiple_of(every) {
            assert!(
                err.contains("dropped"),
                "no word of the dropped rows: {err}"
            );
        }
        let got: Vec<(String, Vec<u8>)> = snapshot(&resumed)
            .into_iter()
            .filter(|(n, _)| !n.starts_with("checkpoint_"))
            .collect();
        let want = snapshot(&straight);
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(&want), "{scene}: files");
        for ((n, a), (_, b)) in got.iter().zip(&want) {
            assert!(a == b, "{scene}: {n} differs after resuming");
        }
    }

    #[test]
    fn a_stopped_run_resumed_writes_the_files_of_the_run_that_never_stopped() {
        resumed_equals_straight(
            "dam_break",
            3,
            7,
            10,
            &[
                "--dump-particles",
                "2",
                "--dump-fields",
                "5",
                "--dump-mesh",
                "5",
            ],
        );
        resumed_equals_straight("floating_bodies", 4, 8, 11, &["--dump-particles", "4"]);
        resumed_equals_straight("smoke_rigid_bodies", 5, 6, 12, &["--dump-fields", "4"]);
        // probes.csv too: a row per substep, cut back to the checkpoint's frame.
        let probes = dir("probe-scene");
        std::fs::create_dir_all(&probes).unwrap();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/dam_break.ron"),
        )
        .unwrap()
        .replacen(
            "solids: [],",
            "solids: [], probes: [Gauge(name: \"H\", x: 0.6, z: 0.25), \
             Sensor(name: \"P\", at: (1.0, 0.05, 0.25), radius: 0.02), \
             Point(name: \"c\", at: (0.3, 0.1, 0.2))],",
            1,
        );
        let path = probes.join("dam_probes.ron");
        std::fs::write(&path, text).unwrap();
        resumed_equals_straight(path.to_str().unwrap(), 3, 7, 10, &[]);
        let straight = std::env::temp_dir().join(format!(
            "eddy-ckpt-dam_probes-straight-{}",
            std::process::id()
        ));
        let rows = std::fs::read_to_string(straight.join("probes.csv")).unwrap();
        assert!(rows.lines().count() >= 11, "a row per substep: {rows}");
        // --probe-only: probes.csv and its units alone, the same rows, resumed alike.
        let only = probes.join("dam_probes_only.ron");
        std::fs::copy(&path, &only).unwrap();
        resumed_equals_straight(only.to_str().unwrap(), 3, 7, 10, &["--probe-only"]);
        let only_straight = std::env::temp_dir().join(format!(
            "eddy-ckpt-dam_probes_only-straight-{}",
            std::process::id()
        ));
        let files: Vec<String> = snapshot(&only_straight).into_iter().map(|f| f.0).collect();
        assert_eq!(files, ["probes.csv", "probes_units.csv"]);
        assert!(
            std::fs::read(only_straight.join("probes.csv")).unwrap() == rows.as_bytes(),
            "--probe-only wrote other rows"
        );
    }

    #[test]
    fn probe_only_refuses_what_it_cannot_do() {
        // A scene without probes; a dump beside it; a folder of the other kind resumed.
        let d = dir("probe-only-refusals");
        let out = run("dam_break", &d, 2, &["--probe-only"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("--probe-only") && err.contains("has none"),
            "{err}"
        );
        assert!(!d.exists() || snapshot(&d).is_empty(), "it wrote files");
        let out = run(
            "dam_break",
            &d,
            2,
            &["--probe-only", "--dump-particles", "1"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("cannot be used with"),
            "{err}"
        );
        ok(&run("dam_break", &d, 2, &["--checkpoint-every", "1"]));
        let args = ["run", "--resume", d.to_str().unwrap(), "--frames", "3"];
        let mut with = args.to_vec();
        with.push("--probe-only");
        refused(&with, &d, &["wrote stats.csv", "without --probe-only"]);
        let e = dir("probe-only-refusals-2");
        std::fs::create_dir_all(&e).unwrap();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/dam_break.ron"),
        )
        .unwrap()
        .replacen(
            "solids: [],",
            "solids: [], probes: [Gauge(name: \"H\", x: 0.6, z: 0.25)],",
            1,
        );
        let scene = e.join("gauge.ron");
        std::fs::write(&scene, text).unwrap();
        let out_dir = e.join("out");
        let only = ["--probe-only", "--checkpoint-every", "1"];
        ok(&run(scene.to_str().unwrap(), &out_dir, 2, &only));
        let args = [
            "run",
            "--resume",
            out_dir.to_str().unwrap(),
            "--frames",
            "3",
        ];
        refused(&args, &out_dir, &["probes.csv only", "with --probe-only"]);
    }

    fn refused(args: &[&str], d: &Path, needles: &[&str]) {
        let before = snapshot(d);
        let out = eddy(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n:?} missing in {err}");
        }
        assert!(snapshot(d) == before, "{args:?} changed the folder");
    }

    #[test]
    fn bad_checkpoints_are_refused_and_nothing_is_touched() {
        let d = dir("bad");
        ok(&run(
            "dam_break",
            &d,
            6,
            &["--checkpoint-every", "3", "--keep-checkpoints", "1"],
        ));
        let ckpt = d.join("checkpoint_00006.eddy");
        let good = std::fs::read(&ckpt).unwrap();
        assert!(
            !d.join("checkpoint_00003.eddy").exists(),
            "--keep-checkpoints 1 kept two"
        );
        let resume = |extra: &[&str]| {
            let mut a = vec!["run", "--resume", d.to_str().unwrap(), "--frames", "9"];
            a.extend(extra);
            a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
        };
        let args = resume(&[]);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        // Truncated, flipped, another format version.
        std::fs::write(&ckpt, &good[..good.len() / 2]).unwrap();
        refused(&args, &d, &["checkpoint_00006.eddy", "truncated"]);
        let mut flipped = good.clone();
        let at = good.len() - 100;
        flipped[at] ^= 0x40;
        std::fs::write(&ckpt, &flipped).unwrap();
        refused(&args, &d, &["checksum"]);
        let mut version = good.clone();
        version[8] = 7;
        std::fs::write(&ckpt, &version).unwrap();
        refused(&args, &d, &["format 7"]);
        std::fs::write(&ckpt, &good).unwrap();
        // Another scene, a resolution the checkpoint was not run at, frames not past it.
        let a = resume(&[]);
        let mut other: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        other.insert(1, "double_dam_break");
        refused(&other, &d, &["differs", "--allow-scene-change"]);
        let a = resume(&["--resolution", "12"]);
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        refused(&a, &d, &["resolution"]);
        refused(
            &["run", "--resume", d.to_str().unwrap(), "--frames", "6"],
            &d,
            &["frame 6", "must be larger"],
        );
        // A run killed while writing a checkpoint leaves a temporary file: the complete one
        // before it is used, and the resumed run still matches.
        std::fs::write(d.join("checkpoint_00009.eddy.tmp"), &good[..100]).unwrap();
        let err = ok(&eddy(&args));
        assert!(err.contains("checkpoint_00006.eddy"), "{err}");
        assert!(!d.join("checkpoint_00009.eddy.tmp").exists());
        // No checkpoint at all, a folder that is not there.
        let empty = dir("empty");
        std::fs::create_dir_all(&empty).unwrap();
        refused(
            &["run", "--resume", empty.to_str().unwrap(), "--frames", "3"],
            &empty,
            &["holds no checkpoint"],
        );
        let out = eddy(&["run", "--resume", "/nonexistent/eddy-run", "--frames", "3"]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("no such folder"));
    }
}
