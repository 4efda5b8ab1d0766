//! `eddy view --record`: numbered PNGs of the window, headless under Xvfb, with the camera
//! and window size asked for; and the stats panel's timing labels.

use eddy::ui::panels::StatsPanel;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `eddy view ...` in `dir`, under `xvfb-run` when no display is set.
fn view_in(dir: &Path, args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_eddy");
    let has_display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let mut c = if has_display {
        Command::new(exe)
    } else {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24", exe]);
        c
    };
    c.arg("view").args(args).current_dir(dir);
    c.output()
        .expect("cannot start the viewer (xvfb-run missing?)")
}

fn pngs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn record_writes_every_kth_frame_at_the_window_size_with_the_camera_asked_for() {
    // A shipped scene by name, from a folder without scenes/.
    let dir = scratch!("frames");
    let run = |rec: &str, frames: &str, every: &str, camera: &str| {
        let out = view_in(
            &dir,
            &[
                "dam_break",
                "--frames",
                frames,
                "--record",
                rec,
                "--every",
                every,
                "--size",
                "1000x500",
                "--camera",
                camera,
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(!err.contains("error"), "{err}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = run("a", "4", "2", "20,30,2.5");
    assert!(said.contains("recorded 2 frame(s)"), "{said}");
    assert_eq!(pngs(&dir.join("a")), ["frame_00001.png", "frame_00002.png"]);
    for f in pngs(&dir.join("a")) {
        let img = image::open(dir.join("a").join(&f))
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .to_rgba8();
        assert_eq!(img.dimensions(), (1000, 500), "{f}");
    }
    // Simulated frame 2 (a's first picture) from another camera is another picture; from
    // the same camera, the same.
    run("b", "2", "2", "200,10,1.2");
    run("c", "2", "2", "20,30,2.5");
    let load = |d: &str| {
        image::open(dir.join(d).join("frame_00001.png"))
            .unwrap()
            .to_rgba8()
    };
    let (a, b, c) = (load("a"), load("b"), load("c"));
    // Between the panels (300 and 280 points wide): the stats panel's timings change
    // between runs, the 3D view does not.
    let differing = |x: &image::RgbaImage, y: &image::RgbaImage| {
        let (mut n, mut total) = (0, 0);
        for py in 0..500 {
            for px in 320..700 {
                total += 1;
                n += (x.get_pixel(px, py) != y.get_pixel(px, py)) as u32;
            }
        }
        n as f64 / total as f64
    };
    assert!(differing(&a, &c) < 0.05, "{}", differing(&a, &c));
    assert!(differing(&a, &b) > 0.10, "{}", differing(&a, &b));

    // A folder that already holds frames is refused before the window opens.
    let out = view_in(&dir, &["dam_break", "--frames", "1", "--record", "a"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("already holds 2 frame_NNNNN.png"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_scene_opens_from_a_folder_without_scenes() {
    // Plain `eddy` opens this scene; --frames/--screenshot make it end on its own.
    let dir = scratch!("default");
    let out = view_in(
        &dir,
        &[
            "--frames",
            "1",
            "--screenshot",
            "s.png",
            "--size",
            "320x200",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("error"), "{err}");
    let img = image::open(dir.join("s.png")).unwrap();
    assert_eq!((img.width(), img.height()), (320, 200));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_camera_and_size_values_are_named() {
    let dir = scratch!("bad");
    for (args, needle) in [
        (vec!["--camera", "10,20"], "YAW,PITCH,DISTANCE"),
        (vec!["--camera", "0,95,2"], "pitch"),
        (vec!["--camera", "0,10,-1"], "distance"),
        (vec!["--size", "10x10"], "64 to 8192"),
        (vec!["--every", "2"], "--record"),
    ] {
        let mut a = vec!["dam_break", "--frames", "1"];
        a.extend(args);
        let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
            .arg("view")
            .args(&a)
            .current_dir(&dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_labels_say_what_each_time_measures() {
    let mut s = StatsPanel {
        frame_ms: 107.5,
        ..Default::default()
    };
    let t0 = Instant::now();
    s.frame_simulated(3, t0);
    s.frame_simulated(3, t0 + Duration::from_millis(500));
    let [redraw, gpu] = s.timing_labels();
    assert!(redraw.contains("redraw 107.5 ms"), "{redraw}");
    assert!(redraw.contains("simulated 2.00 frames/s"), "{redraw}");
    assert_eq!(gpu, "GPU per simulated frame (3 substeps):");
    s.frame_simulated(1, t0 + Duration::from_millis(750));
    assert_eq!(s.timing_labels()[1], "GPU per simulated frame (1 substep):");
    // Smoothed: between the old rate (2/s) and the new interval's (4/s).
    assert!(s.sim_fps > 2.0 && s.sim_fps < 4.0, "{}", s.sim_fps);
    // The host's traffic, per substep of the last simulated frame.
    s.frame_simulated(4, t0 + Duration::from_millis(900));
    s.traffic = eddy::gpu::Traffic {
        dispatches: 1290,
        submits: 17,
        reads: 6,
        drains: 1,
        bytes_read: 50_000,
        ..Default::default()
    };
    assert_eq!(
        s.traffic_label(),
        "per substep: 1.5 host reads (0.2 idling the GPU, 12.5 kB), 4.2 submits, 322 dispatches"
    );
}
