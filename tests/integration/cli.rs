//! The command line: bad input gets a clear message and a non-zero exit, never a panic.

use std::path::PathBuf;
use std::process::{Command, Output};

fn eddy(args: &[&str], env: &[(&str, &str)]) -> Output {
    crate::common::eddy_command()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("cannot start eddy")
}

fn scene_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eddy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn assert_clean_failure(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure, stderr: {err}");
    assert_eq!(out.status.code(), Some(1), "exit code; stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in: {err}");
    }
}

const GOOD: &str = "(domain: (1.0, 0.5, 0.5), resolution: (8, 4, 4), fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5))])";

#[test]
fn check_prints_a_summary() {
    let out = eddy(&["check", "scenes/dam_break.ron"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    for n in ["32 x 32 x 16", "particles", "memory", "mg"] {
        assert!(s.contains(n), "{n} missing: {s}");
    }
    // The memory's split adds up to its total: "memory M MiB on the GPU: C B per cell,
    // P B per particle (...)", with "particles N (...)" above.
    let field = |line: &str, i: usize| -> f64 {
        let l = s.lines().find(|l| l.starts_with(line)).unwrap();
        l.split_whitespace().nth(i).unwrap().parse().unwrap()
    };
    let (total, per_cell, per_particle) =
        (field("memory", 1), field("memory", 6), field("memory", 10));
    let particles = field("particles", 1);
    let sum = (per_cell * 16384.0 + per_particle * particles) / 1048576.0;
    assert!(
        (sum - total).abs() < 0.05,
        "{per_cell} B/cell and {per_particle} B/particle make {sum}, not {total}: {s}"
    );
    assert!(per_particle >= 32.0 && per_cell > 50.0, "{s}");
    // The viewer's views on top: 8 B per cell of divergence, 4 per face of weights, 16 per
    // particle of FLIP change and 24 per cell of kept solve vectors, about 44 B per cell
    // and 16 per particle here.
    let viewer = field("viewer", 1);
    let expect = (44.0 * 16384.0 + 16.0 * particles) / 1048576.0;
    assert!(
        (viewer / expect - 1.0).abs() < 0.1,
        "the viewer's {viewer} MiB, expected about {expect}: {s}"
    );
}

#[test]
fn malformed_ron_names_file_line_and_column() {
    let p = scene_file("broken.ron", "(\n  domain: (1.0, 0.5 0.5),\n)");
    let out = eddy(&["check", p.to_str().unwrap()], &[]);
    assert_clean_failure(&out, &["broken.ron:2:"]);
}

#[test]
fn unknown_field_is_named() {
    let p = scene_file(
        "unknown.ron",
        &GOOD.replacen('(', "(contact_angle: 90.0, ", 1),
    );
    let out = eddy(&["check", p.to_str().unwrap()], &[]);
    assert_clean_failure(&out, &["contact_angle"]);
}

#[test]
fn zero_and_negative_sizes_are_rejected() {
    let p = scene_file("zero.ron", &GOOD.replace("(8, 4, 4)", "(0, 4, 4)"));
    assert_clean_failure(&eddy(&["check", p.to_str().unwrap()], &[]), &["resolution"]);
    let p = scene_file(
        "neg.ron",
        &GOOD.replace("(1.0, 0.5, 0.5)", "(-1.0, 0.5, 0.5)"),
    );
    assert_clean_failure(&eddy(&["check", p.to_str().unwrap()], &[]), &["domain"]);
}

#[test]
fn fluid_outside_the_domain_is_rejected() {
    let p = scene_file(
        "outside.ron",
        &GOOD.replace(
            "max: (0.5,0.25,0.5)",
            "max: (0.5,0.25,0.5)), Box(min: (2,2,2), max: (3,3,3)",
        ),
    );
    assert_clean_failure(
        &eddy(&["check", p.to_str().unwrap()], &[]),
        &["fluid[1]", "outside"],
    );
}

/// Devices and FIFOs are not scene files: refused at once, never read (a FIFO blocked
/// forever, /dev/zero read until memory ran out); a folder is named as one.
#[cfg(unix)]
#[test]
fn special_files_are_not_read_as_scenes() {
    let dir = std::env::temp_dir().join(format!("eddy-cli-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("scene.ron");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    let folder = dir.to_str().unwrap();
    for (path, why) in [
        ("/dev/zero", "not a regular file"),
        (fifo, "not a regular file"),
        (folder, "a folder"),
    ] {
        let out = eddy(&["check", path], &[]);
        assert_clean_failure(&out, &[path, why, "not a scene file"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Viewer options the scene would ignore are refused before a window opens.
#[test]
fn viewer_options_for_the_other_mode_or_past_the_grid_are_refused() {
    for (args, needle) in [
        (
            vec!["view", "smoke_plume", "--field", "pressure"],
            "a smoke scene takes --smoke-view",
        ),
        (
            vec!["view", "dam_break", "--smoke-view", "vorticity"],
            "a liquid scene takes --field",
        ),
        (
            vec![
                "view",
                "dam_break",
                "--field",
                "pressure",
                "--axis",
                "z",
                "--slice",
                "16",
            ],
            "--slice 16 is past the grid: z has cells 0 to 15",
        ),
    ] {
        let out = eddy(&args, &[]);
        assert_clean_failure(&out, &[needle]);
    }
}

/// A terminal escape in a file name is shown escaped, not sent to the terminal.
#[test]
fn control_characters_in_file_names_are_escaped() {
    let p = scene_file("red\u{1b}[31mtext.ron", "(cfl: -1.0)");
    let out = eddy(&["check", p.to_str().unwrap()], &[]);
    assert_clean_failure(&out, &["red\\u{1b}[31mtext.ron"]);
    assert!(!out.stderr.contains(&0x1b), "a raw escape reached stderr");
}

#[test]
fn missing_file_is_reported() {
    let out = eddy(&["check", "scenes/does_not_exist.ron"], &[]);
    assert_clean_failure(&out, &["does_not_exist.ron"]);
}

#[test]
fn grid_too_large_for_the_adapter_is_named_before_allocation() {
    // 600^3 cells pass the scene's own limit but not any adapter's storage-binding limit.
    let p = scene_file(
        "huge.ron",
        "(domain: (1.0, 1.0, 1.0), resolution: (600, 600, 600), fluid: [Box(min: (0,0,0), max: (0.01,0.01,0.01))])",
    );
    let dir = scratch!(path "huge");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&out, &["allows at most", "reduce the resolution"]);
}

#[test]
fn unknown_adapter_lists_the_available_ones() {
    let p = scene_file("ok.ron", GOOD);
    let dir = scratch!(path "adapter");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[("WGPU_ADAPTER_NAME", "no-such-gpu-xyz")],
    );
    assert_clean_failure(&out, &["no-such-gpu-xyz", "available adapters"]);
}

#[test]
fn no_adapter_explains_how_to_get_the_software_one() {
    // On Linux no Metal/DX12 adapter exists, which is exactly "no adapter at all".
    if cfg!(not(target_os = "linux")) {
        return;
    }
    let p = scene_file("ok2.ron", GOOD);
    let dir = scratch!(path "noadapter");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[("WGPU_BACKEND", "metal")],
    );
    assert_clean_failure(&out, &["no GPU adapter", "mesa-vulkan-drivers"]);
}

#[test]
fn bad_solver_options_are_rejected() {
    let p = scene_file(
        "tol.ron",
        &GOOD.replacen('(', "(pressure: (tolerance: -1.0), ", 1),
    );
    assert_clean_failure(&eddy(&["check", p.to_str().unwrap()], &[]), &["tolerance"]);
    let p = scene_file(
        "iters.ron",
        &GOOD.replacen('(', "(pressure: (max_iterations: 0), ", 1),
    );
    assert_clean_failure(
        &eddy(&["check", p.to_str().unwrap()], &[]),
        &["max_iterations"],
    );
    let out = eddy(
        &["run", "scenes/dam_break.ron", "--preconditioner", "amg"],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("amg") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn run_writes_stats_and_particles() {
    let p = scene_file(
        "small.ron",
        "(domain: (1.0, 0.5, 0.5), resolution: (12, 6, 6), fluid: [Box(min: (0,0,0), max: (0.4,0.3,0.5))])",
    );
    let dir = scratch!(path "run");
    let sys = dir.join("system");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "4",
            "--out",
            dir.to_str().unwrap(),
            "--dump-particles",
            "2",
            "--export-system",
            sys.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("stats.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x"
    ));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 4);
    let cols: Vec<f64> = rows[3].split(',').map(|c| c.parse().unwrap()).collect();
    assert_eq!(cols[0], 4.0);
    assert!((cols[1] - 4.0 / 60.0).abs() < 1e-4, "time {}", cols[1]);
    assert!(cols[3] > 0.0 && cols[4] > 0.0 && cols[10] > 0.0);
    // Particle dumps at frames 0, 2, 4, readable and inside the domain.
    for f in [0, 2, 4] {
        let ply = eddy::output::read_ply(&dir.join(format!("particles_{f:05}.ply"))).unwrap();
        assert_eq!(ply.len() as f64, cols[3]);
        assert!(ply
            .iter()
            .all(|v| v[0] >= 0.0 && v[0] <= 1.0 && v[1] >= 0.0 && v[1] <= 0.5));
    }
    assert!(!dir.join("particles_00001.ply").exists());
    for f in ["A.mtx", "b.mtx", "p.mtx", "cells.csv"] {
        assert!(sys.join(f).exists(), "{f} missing");
    }
}

#[test]
fn smoke_run_writes_the_liquid_columns_and_its_own() {
    let p = scene_file(
        "smoke_small.ron",
        "(kind: smoke, domain: (1.0, 1.0, 0.05), resolution: (20, 20, 1), pressure: (preconditioner: ip), \
         smoke: (tracers: 100, sources: [(shape: Sphere(center: (0.5, 0.15, 0.0), radius: 0.1), dye: (1, 1, 1), temperature: 1)]))",
    );
    let dir = scratch!(path "smoke");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "6",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("stats.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let liquid = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x";
    assert_eq!(header[..12].join(","), liquid);
    let dye_col = header.iter().position(|c| *c == "dye_total").unwrap();
    let y_col = header.iter().position(|c| *c == "dye_center_y").unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[5][3], 100.0, "tracers");
    assert_eq!(rows[5][4], 400.0, "non-solid cells");
    assert!(rows[5][dye_col] > rows[0][dye_col] && rows[0][dye_col] > 0.0);
    assert!(
        rows[5][y_col] > rows[0][y_col],
        "the hot source's dye rises"
    );
    assert!(rows[5][5] > 0.0, "pressure solved");
    // Liquid-only options are refused with a reason.
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            dir.to_str().unwrap(),
            "--dump-particles",
            "1",
        ],
        &[],
    );
    assert_clean_failure(&out, &["smoke"]);
    let out = eddy(&["check", p.to_str().unwrap()], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("tracers"));
    let bad = scene_file(
        "smoke_3d.ron",
        "(kind: smoke, domain: (1.0, 1.0, 1.0), resolution: (10, 10, 10))",
    );
    assert_clean_failure(
        &eddy(&["check", bad.to_str().unwrap()], &[]),
        &["resolution z must be 1"],
    );
}

#[test]
fn a_closed_stdout_is_a_normal_end() {
    use std::process::Stdio;
    // `eddy check scene | true`: the reader is gone before eddy writes its summary.
    let mut child = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["check", "scenes/dam_break.ron"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["check", "scenes/dam_break.ron"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(full)
        .output()
        .unwrap();
    assert_clean_failure(&out, &["cannot write to standard output", "No space left"]);
}

#[test]
fn an_io_error_names_its_cause_once() {
    // A path through a regular file: the system says "Not a directory" (a folder itself is
    // refused before any read, as not a scene file).
    let dir = scratch!(path "io-once");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("file"), "x").unwrap();
    let out = eddy(
        &["check", dir.join("file/scene.ron").to_str().unwrap()],
        &[],
    );
    assert_clean_failure(&out, &["cannot read scene", "scene.ron"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("(os error").count(), 1, "{err}");
}

#[test]
fn reusing_an_out_folder_needs_overwrite_which_clears_only_eddys_files() {
    let p = scene_file("reuse.ron", GOOD);
    let dir = scratch!(path "reuse");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            p.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--dump-particles",
            "1",
        ];
        args.extend_from_slice(extra);
        eddy(&args, &[])
    };
    let first = run(&["--frames", "3"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(dir.join("particles_00003.ply").exists());
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    // Refused, and nothing touched.
    let again = run(&["--frames", "1"]);
    assert_clean_failure(&again, &["--out", "not empty", "--overwrite", "notes.txt"]);
    assert!(dir.join("particles_00003.ply").exists());
    // With --overwrite: the old run's dumps are gone, the user's file is kept and named.
    let over = run(&["--frames", "1", "--overwrite"]);
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(over.status.success(), "{err}");
    assert!(err.contains("kept") && err.contains("notes.txt"), "{err}");
    assert!(
        !dir.join("particles_00003.ply").exists(),
        "a stale dump survived"
    );
    assert!(dir.join("particles_00001.ply").exists() && dir.join("notes.txt").exists());
    let csv = std::fs::read_to_string(dir.join("stats.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

#[test]
fn zero_frames_write_the_header_without_a_timestamp_remark() {
    let p = scene_file("zero_frames.ron", GOOD);
    let dir = scratch!(path "zero-frames");
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--frames",
            "0",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("timestamp"), "{err}");
    let csv = std::fs::read_to_string(dir.join("stats.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1, "{csv}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("--frames 0: nothing simulated") && !said.contains("steps/s"),
        "{said}"
    );
}

#[test]
fn headless_view_of_a_broken_scene_fails_without_a_screenshot() {
    let p = scene_file("broken_view.ron", &GOOD.replacen('(', "(cfl: 0.0, ", 1));
    let shot = scratch!(path "shot").with_extension("png");
    let out = eddy(
        &[
            "view",
            p.to_str().unwrap(),
            "--frames",
            "1",
            "--screenshot",
            shot.to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&out, &["broken_view.ron", "cfl"]);
    assert!(!shot.exists());
}

#[test]
fn resolution_flag_is_blamed_for_the_grid_it_makes() {
    let p = scene_file("res2.ron", GOOD);
    let out = eddy(
        &[
            "run",
            p.to_str().unwrap(),
            "--resolution",
            "2",
            "--out",
            scratch!(path "res2").to_str().unwrap(),
        ],
        &[],
    );
    assert_clean_failure(&out, &["--resolution 2 gives", "(2, 1, 1)"]);
}

/// `eddy check --limits`: sizing a scene for an adapter this machine does not have, and
/// the largest resolution of it that fits.
#[test]
fn check_sizes_a_scene_for_another_adapter() {
    let ok = |args: &[&str]| {
        let out = crate::common::eddy(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let fail = |args: &[&str]| {
        let out = crate::common::eddy(args);
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    // The 256 cells dam break fits an H100; the largest fits its 2 GiB particle binding.
    let text = ok(&[
        "check",
        "dam_break",
        "--resolution",
        "256",
        "--limits",
        "h100",
    ]);
    assert!(text.contains("limits      NVIDIA H100 80GB"), "{text}");
    let largest = text.lines().find(|l| l.starts_with("largest")).unwrap();
    let n: u32 = largest.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((512..1024).contains(&n), "{largest}");
    assert!(largest.contains("one more cell exceeds"), "{largest}");
    // At that size the estimate is at most the binding limit; one cell more is not.
    let at = |n: u32| {
        ok(&[
            "check",
            "dam_break",
            "--resolution",
            &n.to_string(),
            "--limits",
            "h100",
        ])
    };
    at(n);
    let e = fail(&[
        "check",
        "dam_break",
        "--resolution",
        &(n + 1).to_string(),
        "--limits",
        "h100",
    ]);
    assert!(e.contains("allows at most 2147483647"), "{e}");
    // The software adapter's 128 MiB binding refuses it, naming the buffer.
    let e = fail(&[
        "check",
        "dam_break",
        "--resolution",
        "256",
        "--limits",
        "llvmpipe",
    ]);
    assert!(
        e.contains("P2G accumulator") && e.contains("134217728"),
        "{e}"
    );
    // A limits file, its memory checked too.
    let dir = scratch!("limits");
    let file = dir.join("small.ron");
    std::fs::write(
        &file,
        "(name: \"small card\", max_binding: 1073741824, memory: Some(268435456))",
    )
    .unwrap();
    let e = fail(&[
        "check",
        "dam_break",
        "--resolution",
        "256",
        "--limits",
        file.to_str().unwrap(),
    ]);
    assert!(e.contains("GPU memory for all its buffers together"), "{e}");
    let text = ok(&["check", "dam_break", "--limits", file.to_str().unwrap()]);
    assert!(
        text.contains("memory; one more cell exceeds") || text.contains("exceeds the GPU memory"),
        "{text}"
    );
    std::fs::write(&file, "(name: \"x\", max_binding: 12)").unwrap();
    let e = fail(&["check", "dam_break", "--limits", file.to_str().unwrap()]);
    assert!(e.contains("at least 1 MiB"), "{e}");
    std::fs::write(&file, vec![b' '; 1 << 17]).unwrap();
    let e = fail(&["check", "dam_break", "--limits", file.to_str().unwrap()]);
    assert!(e.contains("too large for a limits file"), "{e}");
    let e = fail(&["check", "dam_break", "--limits", "/dev/zero"]);
    assert!(e.contains("neither a known adapter"), "{e}");
    let e = fail(&["check", "dam_break", "--limits", "gtx9999"]);
    assert!(e.contains("h100") && e.contains("limits file"), "{e}");
}
