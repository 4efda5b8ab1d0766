//! Mesh obstacles (`Mesh(...)` in `solids`): scenes read them beside the scene file, their
//! SOLID cells are where the signed distance is negative, every bad mesh is one clear error
//! naming `solids[i]` and the file (through `Scene::load`, `eddy check` and `eddy run`),
//! and runs with one pass the invariant checks and repeat bit for bit.

use crate::common::eddy_in;
use eddy::scene::mesh::{voxelise, MAX_MESH_BYTES};
use eddy::scene::{Scene, SceneKind};
use std::path::{Path, PathBuf};

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eddy-mesh-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A UV sphere of radius 1 at the origin as OBJ text (quads and the poles' triangles,
/// counter-clockwise seen from outside).
fn sphere_obj(stacks: u32, slices: u32) -> String {
    let mut s = String::from("# a UV sphere\n");
    s += "v 0 1 0\n";
    for i in 1..stacks {
        let theta = std::f64::consts::PI * i as f64 / stacks as f64;
        for j in 0..slices {
            let phi = std::f64::consts::TAU * j as f64 / slices as f64;
            s += &format!(
                "v {} {} {}\n",
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin()
            );
        }
    }
    s += "v 0 -1 0\n";
    let ring = |i: u32, j: u32| 2 + (i - 1) * slices + j % slices;
    let south = 2 + (stacks - 1) * slices;
    for j in 0..slices {
        s += &format!("f 1 {} {}\n", ring(1, j + 1), ring(1, j));
        s += &format!(
            "f {} {} {south}\n",
            ring(stacks - 1, j),
            ring(stacks - 1, j + 1)
        );
        for i in 1..stacks - 1 {
            s += &format!(
                "f {} {} {} {}\n",
                ring(i, j),
                ring(i, j + 1),
                ring(i + 1, j + 1),
                ring(i + 1, j)
            );
        }
    }
    s
}

const LIQUID: &str = "(name: \"mesh test\", domain: (1.0, 0.5, 0.5), resolution: (24, 12, 12), \
    fluid: [Box(min: (0.0, 0.0, 0.0), max: (0.3, 0.4, 0.5))], solids: [SOLIDS], \
    pressure: (tolerance: 1e-4))";

const SMOKE: &str = "(kind: smoke, domain: (2.0, 1.0, 0.02), resolution: (64, 32, 1), \
    solids: [SOLIDS], smoke: (sources: [(shape: Box(min: (0.0, 0.3, 0.0), \
    max: (0.1, 0.7, 0.02)), dye: (1.0, 1.0, 1.0), velocity: (1.0, 0.0, 0.0))]))";

fn write_scene(dir: &Path, name: &str, template: &str, solids: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, template.replace("SOLIDS", solids)).unwrap();
    p
}

/// Every cell is SOLID exactly where the mesh's signed distance at its centre (a slice's
/// at mid-depth) is negative, or another solid holds it.
fn assert_solid_cells_follow_the_sign(s: &Scene, mesh: usize) {
    let m = s.solids[mesh].solid_mesh().expect("the mesh is loaded");
    let [nx, ny, nz] = s.dims();
    let hz = s.domain.2 / nz as f64;
    let sdf = voxelise(&m.mesh, s.dims(), [s.h(), s.h(), hz]);
    let (solid, _) = s.solid_cells();
    let mut inside = 0;
    for (c, (flag, d)) in solid.iter().zip(&sdf).enumerate() {
        let c = c as u32;
        let (i, j, k) = (c % nx, c / nx % ny, c / (nx * ny));
        let p = [
            (i as f64 + 0.5) * s.h(),
            (j as f64 + 0.5) * s.h(),
            (k as f64 + 0.5) * hz,
        ];
        let other = s.solids.iter().enumerate().any(|(n, o)| {
            n != mesh
                && if s.kind == SceneKind::Smoke {
                    o.contains_xy([p[0], p[1]])
                } else {
                    o.contains(p)
                }
        });
        // A cell whose faces the solids close whole is solid even with its centre outside.
        let closed_by_faces = *flag == eddy::gpu::constants::SOLID_CLOSED && !(other || *d < 0.0);
        assert!(
            (*flag != 0) == (other || *d < 0.0) || closed_by_faces,
            "cell ({i}, {j}, {k}): flag {flag}, sdf {d}"
        );
        inside += (*d < 0.0) as u32;
    }
    assert!(inside > 0, "the mesh makes no SOLID cell");
}

#[test]
fn liquid_and_smoke_scenes_read_their_mesh_solids_and_voxelise_them_by_the_sign() {
    let dir = folder("load");
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    std::fs::write(dir.join("meshes/ball.obj"), sphere_obj(12, 24)).unwrap();
    let liquid = write_scene(
        &dir,
        "liquid.ron",
        LIQUID,
        "Box(min: (0.9, 0.0, 0.0), max: (1.0, 0.1, 0.5)), \
         Mesh(path: \"meshes/ball.obj\", scale: 0.12, translation: (0.6, 0.15, 0.25))",
    );
    let s = Scene::load(&liquid).unwrap();
    assert_solid_cells_follow_the_sign(&s, 1);
    let m = s.solids[1].solid_mesh().unwrap();
    // 12 x 24 UV sphere: 2 x 24 pole triangles and 10 x 24 quads.
    assert_eq!(m.mesh.triangles.len(), 48 + 2 * 240);
    // A path from another folder finds the same mesh (absolute), and the scene is equal.
    let abs = dir.join("meshes/ball.obj");
    let other = folder("load-elsewhere");
    let moved = write_scene(
        &other,
        "liquid.ron",
        LIQUID,
        &format!(
            "Box(min: (0.9, 0.0, 0.0), max: (1.0, 0.1, 0.5)), \
             Mesh(path: {:?}, scale: 0.12, translation: (0.6, 0.15, 0.25))",
            abs.display().to_string()
        ),
    );
    let s2 = Scene::load(&moved).unwrap();
    assert_eq!(s2.solid_cells().0, s.solid_cells().0);
    // Smoke: the pier of the shipped scenes, stood up across the slice; the shipped mesh
    // is found with no file beside the scene.
    let smoke = write_scene(
        &dir,
        "smoke.ron",
        SMOKE,
        "Mesh(path: \"meshes/pillar.obj\", rotation_deg: (90, 0, 0), scale: 0.8, \
         translation: (0.7, 0.5, -0.2)), Sphere(center: (1.5, 0.5, 0.01), radius: 0.1)",
    );
    let s = Scene::load(&smoke).unwrap();
    assert_eq!(
        s.solids[0].solid_mesh().unwrap().source,
        "meshes/pillar.obj (built in)"
    );
    assert_solid_cells_follow_the_sign(&s, 0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

#[test]
fn every_bad_mesh_is_one_error_naming_the_solid_and_the_file() {
    let dir = folder("bad");
    let junk: Vec<u8> = (0..4000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let files: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.obj", vec![], "holds no triangles"),
        ("junk.obj", junk.clone(), "not a readable OBJ file"),
        ("junk.stl", junk, "not a readable binary STL file"),
        (
            "nan.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 NaN 1\nf 1 2 3\n".to_vec(),
            "vertex 3 (line 3) is not finite",
        ),
        (
            "flat.obj",
            b"v 0 0 0\nv 1 1 1\nv 2 2 2\nf 1 2 3\nf 1 1 3\n".to_vec(),
            "degenerate",
        ),
        (
            "huge_header.stl",
            {
                let mut b = vec![0u8; 84];
                b[80..84].copy_from_slice(&10_000_000u32.to_le_bytes());
                b
            },
            "10000000 triangles, more than the 2000000",
        ),
        ("wrong.ply", b"ply\n".to_vec(), "unknown format \".ply\""),
    ];
    for (name, bytes, _) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    // Over the byte limit: a sparse file, refused before anything is read.
    let sparse = std::fs::File::create(dir.join("sparse.stl")).unwrap();
    sparse.set_len(MAX_MESH_BYTES + 1).unwrap();
    let cases = files.iter().map(|(n, _, needle)| (*n, *needle)).chain([
        ("sparse.stl", "more than the 268435456 bytes (256 MiB)"),
        ("missing.obj", "no such file"),
    ]);
    for (name, needle) in cases {
        for (kind, template) in [("liquid", LIQUID), ("smoke", SMOKE)] {
            let scene = write_scene(
                &dir,
                &format!("{kind}.ron"),
                template,
                &format!(
                    "Box(min: (0.9, 0.0, 0.0), max: (1.0, 0.1, 0.02)), Mesh(path: \"{name}\")"
                ),
            );
            let file = dir.join(name).display().to_string();
            let start = std::time::Instant::now();
            let err = Scene::load(&scene).unwrap_err().to_string();
            assert!(
                start.elapsed().as_secs_f64() < 5.0,
                "{name}: {:?}",
                start.elapsed()
            );
            for n in ["solids[1]: mesh", &file, needle] {
                assert!(err.contains(n), "{kind} {name}: missing {n:?} in {err}");
            }
            assert!(!err.contains('\n'), "{err}");
            if kind == "smoke" {
                continue;
            }
            // The same one line from the command line, with no panic.
            let out_dir = dir.join("out");
            for args in [
                vec!["check", scene.to_str().unwrap()],
                vec![
                    "run",
                    scene.to_str().unwrap(),
                    "--frames",
                    "1",
                    "--out",
                    out_dir.to_str().unwrap(),
                ],
            ] {
                let out = eddy_in(&dir, &args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
                assert!(!stderr.contains("panicked"), "{stderr}");
                let lines: Vec<&str> = stderr.lines().collect();
                assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
                assert!(lines[0].contains(&err), "{args:?}: {stderr}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_prints_each_mesh_solid_with_its_voxelisation() {
    let dir = folder("check");
    std::fs::write(dir.join("ball.obj"), sphere_obj(8, 16)).unwrap();
    let scene = write_scene(
        &dir,
        "liquid.ron",
        LIQUID,
        "Mesh(path: \"ball.obj\", scale: 0.12, translation: (0.6, 0.15, 0.25))",
    );
    let out = eddy_in(&dir, &["check", scene.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains("solids[0] mesh"))
        .unwrap_or_else(|| panic!("no mesh line in {text}"));
    let s = Scene::load(&scene).unwrap();
    for n in [
        dir.join("ball.obj").display().to_string(),
        "224 triangles".into(),
        "bounds (0.4800, 0.0300, 0.1300) .. (0.7200, 0.2700, 0.3700) m".into(),
        "voxelised in".into(),
        format!("{} SOLID cells", s.solid_cell_count()),
    ] {
        assert!(line.contains(&n), "missing {n:?} in {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_liquid_run_past_a_mesh_passes_the_invariant_checks_and_repeats_bit_for_bit() {
    let dir = folder("run");
    let scene = write_scene(
        &dir,
        "pier.ron",
        LIQUID,
        "Mesh(path: \"meshes/pillar.obj\", scale: 0.4, translation: (0.6, 0.0, 0.25))",
    );
    let run = |name: &str| {
        let out_dir = dir.join(name);
        let out = eddy_in(
            &dir,
            &[
                "run",
                scene.to_str().unwrap(),
                "--frames",
                "4",
                "--check-invariants",
                "--dump-particles",
                "4",
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read = |f: &str| std::fs::read(out_dir.join(f)).unwrap();
        (read("stats.csv"), read("particles_00004.ply"))
    };
    let (stats1, ply1) = run("a");
    let (stats2, ply2) = run("b");
    assert!(stats1 == stats2, "stats.csv differ");
    assert!(ply1 == ply2, "particle dumps differ");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shipped_mesh_scene_runs_from_any_folder() {
    let dir = folder("shipped");
    for scene in ["smoke_mesh_obstacle", "scenes/smoke_mesh_obstacle.ron"] {
        let out = eddy_in(
            &dir,
            &[
                "run",
                scene,
                "--frames",
                "5",
                "--out",
                dir.join("out").to_str().unwrap(),
                "--overwrite",
            ],
        );
        assert!(
            out.status.success(),
            "{scene}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stats = std::fs::read_to_string(dir.join("out/stats.csv")).unwrap();
        assert_eq!(stats.lines().count(), 6, "{stats}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_checkpoint_of_a_mesh_scene_resumes_from_another_folder() {
    let dir = folder("resume");
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::write(dir.join("scenes/ball.obj"), sphere_obj(8, 16)).unwrap();
    let scene = write_scene(
        &dir.join("scenes"),
        "ball.ron",
        LIQUID,
        "Mesh(path: \"ball.obj\", scale: 0.1, translation: (0.6, 0.1, 0.25))",
    );
    let out = dir.join("out");
    let run = |args: &[&str], cwd: &Path| {
        let o = eddy_in(cwd, args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(
        &[
            "run",
            scene.to_str().unwrap(),
            "--frames",
            "2",
            "--checkpoint-every",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    // From the output folder itself, with no scene named: the mesh is found where the scene
    // read it, not beside the checkpoint.
    run(&["run", "--resume", ".", "--frames", "3"], &out);
    let stats = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    assert_eq!(stats.lines().count(), 4, "{stats}");
    let _ = std::fs::remove_dir_all(&dir);
}
