//! The viewer in a real window (under Xvfb when there is no display): it runs frames,
//! saves a screenshot that shows the liquid, and survives a broken scene file.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `eddy view ...`, under `xvfb-run` when no display is set.
fn view(args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_eddy");
    let has_display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let mut c = if has_display {
        Command::new(exe)
    } else {
        let probe = Command::new("xvfb-run").arg("--help").output();
        assert!(
            probe.is_ok(),
            "no DISPLAY and no xvfb-run: install Xvfb (apt-get install xvfb) or run scripts/test.sh"
        );
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24", exe]);
        c
    };
    c.arg("view")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = c.output().expect("cannot start the viewer");
    // A shared X server busy with the other viewer tests now and then refuses a connection
    // (seen once in a full run); that is the machine, not eddy: try once more.
    if String::from_utf8_lossy(&out.stderr).contains("Failed to open connection to X server") {
        std::thread::sleep(std::time::Duration::from_secs(2));
        return c.output().expect("cannot start the viewer");
    }
    out
}

/// Fraction of pixels in the central region that are strongly coloured (the particles'
/// colormap), as opposed to the grey background, panels and box lines.
fn coloured_fraction(path: &Path) -> f64 {
    let img = image::open(path)
        .expect("screenshot is not a readable PNG")
        .to_rgba8();
    let (w, h) = img.dimensions();
    assert!(w >= 320 && h >= 200, "screenshot is {w}x{h}");
    let (mut n, mut total) = (0u32, 0u32);
    for y in h / 4..3 * h / 4 {
        for x in w / 4..3 * w / 4 {
            let p = img.get_pixel(x, y).0;
            let (mx, mn) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            total += 1;
            if mx as i32 - mn as i32 > 40 {
                n += 1;
            }
        }
    }
    n as f64 / total as f64
}

#[test]
fn screenshot_shows_the_liquid() {
    let shot = scratch!(path "shot.png");
    let out = view(&[
        "scenes/dam_break.ron",
        "--frames",
        "3",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "viewer failed: {err}");
    let f = coloured_fraction(&shot);
    assert!(
        f > 0.05,
        "only {:.1}% of the centre shows liquid",
        100.0 * f
    );
}

#[test]
fn a_broken_scene_fails_a_headless_view() {
    // With --frames/--screenshot nobody watches the window, so the viewer's fallback to the
    // built-in scene would hide the error behind a screenshot of the wrong scene.
    let broken = scratch!(path "broken.ron");
    std::fs::write(&broken, "(\n  domain: (1.0, 1.0 1.0),\n)").unwrap();
    let shot = scratch!(path "broken.png");
    let out = view(&[
        broken.to_str().unwrap(),
        "--frames",
        "1",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("broken.ron:2:"),
        "the parse error is not reported: {err}"
    );
    assert!(!shot.exists(), "a screenshot of another scene was saved");
}

#[test]
fn smoke_scene_opens_and_shows_its_dye() {
    // A small plume so the software adapter gets through the frames quickly.
    let scene = scratch!(path "smoke.ron");
    std::fs::write(
        &scene,
        "(kind: smoke, domain: (1.0, 1.0, 0.04), resolution: (24, 24, 1), pressure: (preconditioner: ip), \
         smoke: (tracers: 200, sources: [(shape: Sphere(center: (0.5, 0.2, 0.0), radius: 0.15), dye: (1.0, 0.3, 0.1), temperature: 1)]))",
    )
    .unwrap();
    let shot = scratch!(path "smoke.png");
    let out = view(&[
        scene.to_str().unwrap(),
        "--frames",
        "8",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The dye (orange-red) fills a visible part of the middle of the window.
    let frac = coloured_fraction(&shot);
    assert!(frac > 0.01, "only {frac} of the view is coloured");
    let _ = std::fs::remove_file(&shot);
    let _ = std::fs::remove_file(&scene);
}

#[test]
fn multigrid_levels_can_be_viewed_and_missing_ones_are_reported() {
    // A small dam break solved with mg: levels 24x24x12, 12x12x6, 6x6x3.
    let scene = scratch!(path "mg.ron");
    std::fs::write(
        &scene,
        "(domain: (1.0, 1.0, 0.5), resolution: (24, 24, 12), \
         fluid: [Box(min: (0.0, 0.0, 0.0), max: (0.35, 0.6, 0.5))], pressure: (preconditioner: mg))",
    )
    .unwrap();
    let shot = scratch!(path "mg.png");
    let run = |field: &str| {
        let out = view(&[
            scene.to_str().unwrap(),
            "--field",
            field,
            "--frames",
            "2",
            "--screenshot",
            shot.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "--field {field}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    let err = run("mg_correction_1");
    assert!(!err.contains("field mg_"), "level 1 was not shown: {err}");
    // The coarsest level has no residual: the viewer says so and stays open.
    let err = run("mg_residual_2");
    assert!(
        err.contains("field mg_residual_2: level 2 is the coarsest"),
        "{err}"
    );

    // The smoke mode reads the same levels (24x24 and 12x12 and 6x6).
    let smoke = scratch!(path "mg_smoke.ron");
    std::fs::write(
        &smoke,
        "(kind: smoke, domain: (1.0, 1.0, 0.04), resolution: (24, 24, 1), pressure: (preconditioner: mg), \
         smoke: (tracers: 50, sources: [(shape: Sphere(center: (0.5, 0.2, 0.0), radius: 0.15), dye: (1.0, 0.3, 0.1), temperature: 1)]))",
    )
    .unwrap();
    let out = view(&[
        smoke.to_str().unwrap(),
        "--smoke-view",
        "mg_correction_1",
        "--frames",
        "3",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("field mg_"), "level 1 was not shown: {err}");
    // The level's correction fills the slice with the diverging colormap.
    assert!(coloured_fraction(&shot) > 0.05);
    for f in [&scene, &smoke, &shot] {
        let _ = std::fs::remove_file(f);
    }
}

/// A small dam break (16 x 16 x 8 cells) for the quicker viewer tests.
fn small_dam_break(name: &str) -> std::path::PathBuf {
    let scene = scratch!(path name);
    std::fs::write(
        &scene,
        "(domain: (1.0, 1.0, 0.5), resolution: (16, 16, 8), \
         fluid: [Box(min: (0.0, 0.0, 0.0), max: (0.35, 0.6, 0.5))])",
    )
    .unwrap();
    scene
}

/// Share of the window's centre drawn in colours of the diverging colormap, and how many
/// of 20 equal parts of the colormap cover at least 0.1% of the centre each.
fn diverging_colours(path: &Path) -> (f64, usize) {
    use eddy::render::colormap::{diverging, to_rgba8};
    let img = image::open(path).unwrap().to_rgba8();
    let (w, h) = img.dimensions();
    let samples: Vec<(usize, [u8; 4])> = (0..=400)
        .map(|i| {
            let t = i as f32 / 200.0 - 1.0;
            (((t + 1.0) / 2.0 * 19.999) as usize, to_rgba8(diverging(t)))
        })
        .collect();
    let mut bins = [0u32; 20];
    let (mut hits, mut total) = (0u32, 0u32);
    for y in h / 4..3 * h / 4 {
        for x in w / 4..3 * w / 4 {
            total += 1;
            let p = img.get_pixel(x, y).0;
            let near = samples.iter().find(|(_, c)| {
                (0..3)
                    .map(|k| (p[k] as i32 - c[k] as i32).abs())
                    .sum::<i32>()
                    <= 6
            });
            if let Some((bin, _)) = near {
                bins[*bin] += 1;
                hits += 1;
            }
        }
    }
    let used = bins
        .iter()
        .filter(|n| **n as f64 >= 0.001 * total as f64)
        .count();
    (hits as f64 / total as f64, used)
}

#[test]
fn a_pressure_slice_reads_in_the_default_camera_and_the_flat_layout() {
    let scene = small_dam_break("pressure.ron");
    let shot = scratch!(path "pressure.png");
    for layout in ["perspective", "flat"] {
        let out = view(&[
            scene.to_str().unwrap(),
            "--field",
            "pressure",
            "--layout",
            layout,
            "--frames",
            "3",
            "--screenshot",
            shot.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{layout}: {err}");
        let (share, bins) = diverging_colours(&shot);
        // The slice shows (not hidden behind the liquid) and shows a range of values.
        let min_share = if layout == "flat" { 0.5 } else { 0.1 };
        assert!(
            share > min_share,
            "{layout}: only {:.1}% of the centre shows the slice",
            100.0 * share
        );
        assert!(
            bins >= 5,
            "{layout}: the slice shows {bins} of 20 colour steps"
        );
    }
    for f in [&scene, &shot] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn the_surface_mode_screenshot_differs_from_the_particles() {
    let scene = small_dam_break("surface.ron");
    let shots = ["particles", "surface", "both"].map(|mode| {
        let shot = scratch!(path & format!("{mode}.png"));
        let out = view(&[
            scene.to_str().unwrap(),
            "--render",
            mode,
            "--frames",
            "2",
            "--screenshot",
            shot.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "--render {mode}: {err}");
        image::open(&shot).unwrap().to_rgba8()
    });
    let differ = |a: &image::RgbaImage, b: &image::RgbaImage| {
        let (w, h) = a.dimensions();
        let mut n = 0;
        for y in h / 4..3 * h / 4 {
            for x in w / 4..3 * w / 4 {
                let (p, q) = (a.get_pixel(x, y).0, b.get_pixel(x, y).0);
                n += ((0..3)
                    .map(|k| (p[k] as i32 - q[k] as i32).abs())
                    .sum::<i32>()
                    > 30) as u32;
            }
        }
        n as f64 / (w * h / 4) as f64
    };
    let d = differ(&shots[0], &shots[1]);
    assert!(
        d > 0.03,
        "surface and particles differ in {:.2}% of the centre",
        100.0 * d
    );
    let d = differ(&shots[1], &shots[2]);
    assert!(
        d > 0.001,
        "both and surface differ in {:.3}% of the centre",
        100.0 * d
    );
    let bad = view(&[scene.to_str().unwrap(), "--render", "mesh", "--frames", "1"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("particles, surface"));
    let _ = std::fs::remove_file(&scene);
    for mode in ["particles", "surface", "both"] {
        let _ = std::fs::remove_file(scratch!(path & format!("{mode}.png")));
    }
}

/// Share of the screenshot's pixels in a shade of the body colour `color` (sRGB): the
/// colour's linear value times a lighting factor, as the body shader writes it.
fn body_shaded_share(path: &Path, color: [f32; 3]) -> f64 {
    let img = image::open(path).unwrap().to_rgba8();
    let lin = color.map(|c| c.powf(2.2));
    let srgb = |l: f32| {
        let l = l.clamp(0.0, 1.0);
        255.0
            * if l <= 0.0031308 {
                12.92 * l
            } else {
                1.055 * l.powf(1.0 / 2.4) - 0.055
            }
    };
    let shades: Vec<[f32; 3]> = (35..=100)
        .map(|k| lin.map(|c| srgb(c * k as f32 / 100.0)))
        .collect();
    let n = img
        .pixels()
        .filter(|p| {
            shades
                .iter()
                .any(|s| (0..3).all(|k| (p.0[k] as f32 - s[k]).abs() <= 4.0))
        })
        .count();
    n as f64 / (img.width() * img.height()) as f64
}

#[test]
fn bodies_show_as_shaded_solids_in_the_3d_view() {
    use eddy::render::bodies::{DYNAMIC_COLOR, FIXED_COLOR};
    let scene = scratch!(path "bodies.ron");
    std::fs::write(
        &scene,
        "(domain: (1.0, 1.0, 0.5), resolution: (16, 16, 8), \
         fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.3, 0.5))], \
         bodies: [(shape: Box(half_extents: (0.12, 0.08, 0.1)), center: (0.35, 0.6, 0.25), \
                   density: 500.0, rotation_deg: (10.0, 30.0, 0.0)), \
                  (shape: Sphere(radius: 0.1), center: (0.75, 0.6, 0.25), density: 500.0, \
                   motion: fixed)])",
    )
    .unwrap();
    let shot = scratch!(path "bodies.png");
    let out = view(&[
        scene.to_str().unwrap(),
        "--frames",
        "2",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Each body covers a visible patch of the window in its own tint (outlines alone
    // would cover a few hundred pixels in another colour).
    let dynamic = body_shaded_share(&shot, DYNAMIC_COLOR);
    let fixed = body_shaded_share(&shot, FIXED_COLOR);
    assert!(
        dynamic > 0.003,
        "dynamic box covers {:.3}%",
        100.0 * dynamic
    );
    assert!(fixed > 0.003, "fixed ball covers {:.3}%", 100.0 * fixed);
    for f in [&scene, &shot] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn mesh_solids_show_as_shaded_solids_in_the_3d_view() {
    use eddy::render::lines::SOLID_COLOR;
    let scene = scratch!(path "mesh_solid.ron");
    // The shipped pier (meshes/pillar.obj, found with no file beside the scene).
    std::fs::write(
        &scene,
        "(domain: (1.0, 0.5, 0.5), resolution: (16, 8, 8), \
         fluid: [Box(min: (0.0, 0.0, 0.0), max: (0.3, 0.3, 0.5))], \
         solids: [Mesh(path: \"meshes/pillar.obj\", scale: 0.6, translation: (0.6, 0.0, 0.25))])",
    )
    .unwrap();
    let shot = scratch!(path "mesh_solid.png");
    let out = view(&[
        scene.to_str().unwrap(),
        "--frames",
        "1",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The pier covers a patch of the window in the solids' colour, lit like the bodies
    // (its outline alone would cover a few hundred pixels).
    let share = body_shaded_share(&shot, SOLID_COLOR);
    assert!(share > 0.01, "the mesh covers {:.3}%", 100.0 * share);
    for f in [&scene, &shot] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn the_viewer_opens_a_checkpoint_of_a_headless_run() {
    // A run's checkpoint is a saved state: the viewer starts from it (its scene, frame and
    // particles) and goes on; a file that is not one is refused with its name.
    let dir = scratch!(path "ckpt-run");
    let _ = std::fs::remove_dir_all(&dir);
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["run", "dam_break", "--resolution", "16", "--frames", "6"])
        .args(["--checkpoint-every", "6", "--out", dir.to_str().unwrap()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ckpt = dir.join("checkpoint_00006.eddy");
    let shot = scratch!(path "ckpt.png");
    let out = view(&[
        "--state",
        ckpt.to_str().unwrap(),
        "--frames",
        "2",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "viewer failed: {err}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("loaded frame 6"), "{said}");
    assert!(coloured_fraction(&shot) > 0.02, "no liquid shown");
    let junk = scratch!(path "junk.eddy");
    std::fs::write(&junk, b"not a state").unwrap();
    let out = view(&["--state", junk.to_str().unwrap(), "--frames", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "junk state accepted");
    assert!(err.contains("not an eddy checkpoint"), "{err}");
}

/// Mean absolute difference per channel between two screenshots over a region
/// [x0, x1) x [y0, y1) given as fractions of the window.
fn region_difference(a: &Path, b: &Path, [x0, y0, x1, y1]: [f64; 4]) -> f64 {
    let a = image::open(a).unwrap().to_rgba8();
    let b = image::open(b).unwrap().to_rgba8();
    assert_eq!(a.dimensions(), b.dimensions());
    let (w, h) = a.dimensions();
    let (mut sum, mut n) = (0u64, 0u64);
    for y in (y0 * h as f64) as u32..(y1 * h as f64) as u32 {
        for x in (x0 * w as f64) as u32..(x1 * w as f64) as u32 {
            let (p, q) = (a.get_pixel(x, y).0, b.get_pixel(x, y).0);
            for k in 0..3 {
                sum += (p[k] as i32 - q[k] as i32).unsigned_abs() as u64;
            }
            n += 3;
        }
    }
    sum as f64 / n as f64
}

#[test]
fn the_solver_lab_steps_a_frozen_solve_and_races_the_preconditioners() {
    let scene = small_dam_break("lab.ron");
    let shot = |name: &str, extra: &[&str]| {
        let path = scratch!(path name);
        let mut args = vec![
            scene.to_str().unwrap(),
            "--frames",
            "1",
            "--field",
            "pcg_r",
            "--layout",
            "flat",
            "--lab",
            "mg",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--screenshot", path.to_str().unwrap()]);
        let out = view(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "viewer failed: {err}");
        path
    };
    let one = shot("lab1.png", &["--lab-step", "1"]);
    let three = shot("lab3.png", &["--lab-step", "3"]);
    // The lab's window (top of the view) and the residual slice under it change with the
    // iteration shown.
    let d = region_difference(&one, &three, [0.25, 0.05, 0.7, 0.95]);
    assert!(
        d > 0.5,
        "iterations 1 and 3 look the same ({d:.3} per channel)"
    );
    // Racing adds the race's window with its plots below the lab's.
    let raced = shot("lab_race.png", &["--lab-step", "3", "--lab-race"]);
    let d = region_difference(&three, &raced, [0.25, 0.55, 0.68, 0.98]);
    assert!(d > 5.0, "no race drawn ({d:.3} per channel)");
}

#[test]
fn the_solver_lab_opens_an_exported_system_and_a_smoke_scene() {
    let scene = small_dam_break("lab_export.ron");
    let dir = scratch!(path "lab_system");
    let out_dir = scratch!(path "lab_run");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out_dir);
    let run = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "run",
            scene.to_str().unwrap(),
            "--frames",
            "2",
            "--export-system",
        ])
        .arg(&dir)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let shot = scratch!(path "lab_system.png");
    let out = view(&[
        scene.to_str().unwrap(),
        "--frames",
        "1",
        "--system",
        dir.to_str().unwrap(),
        "--lab",
        "ip",
        "--lab-step",
        "4",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(image::open(&shot).is_ok());
    // A smoke scene's solve freezes too (warm-started: the viewer keeps its initial
    // guess) and its lab steps.
    let smoke_shot = scratch!(path "lab_smoke.png");
    let smoke = view(&[
        "smoke_plume",
        "--frames",
        "1",
        "--lab",
        "mg",
        "--lab-step",
        "2",
        "--screenshot",
        smoke_shot.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&smoke.stderr);
    assert!(smoke.status.success(), "{err}");
    assert!(image::open(&smoke_shot).is_ok());
}

/// Pixels of the probes' marker colour (yellow: red and green high, blue low) in the 3D
/// view (the left three quarters of the window, clear of the stats panel's plots).
fn probe_pixels(path: &Path) -> u32 {
    let img = image::open(path).unwrap().to_rgba8();
    let (w, h) = img.dimensions();
    let mut n = 0;
    for y in 0..h {
        for x in w / 4..3 * w / 4 {
            let p = img.get_pixel(x, y).0;
            if p[0] > 200 && p[1] > 170 && p[2] < 140 && p[0] as i32 - p[2] as i32 > 100 {
                n += 1;
            }
        }
    }
    n
}

/// A scene's probes show where they sample (a gauge's line, a sensor's square), and the
/// Probes panel opens without breaking the frame.
#[test]
fn probes_show_in_the_3d_view() {
    let dir = scratch!("probes");
    let base =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/dam_break.ron"))
            .unwrap();
    let with = base.replacen(
        "solids: [],",
        "solids: [], probes: [Gauge(name: \"H1\", x: 0.5, z: 0.25), \
         Gauge(name: \"H2\", x: 0.8, z: 0.25), \
         Sensor(name: \"P\", at: (1.0, 0.1, 0.25), radius: 0.05)],",
        1,
    );
    let mut counts = vec![];
    for (name, text) in [("plain", &base), ("probes", &with)] {
        let scene = dir.join(format!("{name}.ron"));
        std::fs::write(&scene, text).unwrap();
        let shot = dir.join(format!("{name}.png"));
        let out = view(&[
            scene.to_str().unwrap(),
            "--frames",
            "2",
            "--screenshot",
            shot.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "viewer failed: {err}");
        counts.push(probe_pixels(&shot));
    }
    assert!(
        counts[1] > counts[0] + 100,
        "the probes' markers: {} yellow pixels with them, {} without",
        counts[1],
        counts[0]
    );
}
