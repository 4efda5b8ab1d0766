//! Keyframed mesh solids: where the path puts the mesh its cells are SOLID, with the
//! velocity of the motion (translation and rotation), and a mesh pushed through a pool
//! pushes the liquid, under the invariant checks, the same bytes twice.

use crate::common;

use eddy::scene::Scene;
use eddy::sim::liquid::moving::MovingSolids;
use eddy::sim::Simulation;
use std::path::PathBuf;

/// A unit cube [-0.5, 0.5]^3 as OBJ text, outward faces.
fn cube_obj() -> String {
    let mut s = String::from("# a unit cube\n");
    for z in [-0.5, 0.5] {
        for y in [-0.5, 0.5] {
            for x in [-0.5, 0.5] {
                s += &format!("v {x} {y} {z}\n");
            }
        }
    }
    // Vertex (x, y, z) is 1 + xi + 2 yi + 4 zi.
    for f in [
        "1 3 4 2", "5 6 8 7", "1 2 6 5", "3 7 8 4", "1 5 7 3", "2 4 8 6",
    ] {
        s += &format!("f {f}\n");
    }
    s
}

fn scene_with(keys: &str) -> (Scene, PathBuf) {
    let dir = std::env::temp_dir().join(format!("eddy-moving-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    let text = format!(
        "(name: \"paddle\", domain: (1.0, 0.5, 0.5), resolution: (32, 16, 16),
          fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.25, 0.5))],
          solids: [Mesh(path: \"cube.obj\", scale: 0.16, keyframes: [{keys}])],
          frame_dt: 0.02)"
    );
    let path = dir.join("paddle.ron");
    std::fs::write(&path, text).unwrap();
    (Scene::load(&path).unwrap(), dir)
}

#[test]
fn a_keyframed_mesh_is_solid_where_its_path_puts_it_with_the_motions_velocity() {
    // From x = 0.2 to 0.8 in 2 s (0.3 m/s), turning 90 degrees about y on the way.
    let (scene, _) = scene_with(
        "(time: 0.0, translation: (0.2, 0.2, 0.25)), \
         (time: 2.0, translation: (0.8, 0.2, 0.25), rotation_deg: (0.0, 90.0, 0.0))",
    );
    let mut m = MovingSolids::from_scene(&scene).unwrap().unwrap();
    let h = scene.h();
    let dims = scene.dims();
    let omega = std::f64::consts::FRAC_PI_2 / 2.0;
    for t in [0.0, 0.7, 1.5] {
        let dt = 1e-3;
        m.stamp(&scene, t, dt);
        let centre = [0.2 + 0.3 * t, 0.2, 0.25];
        let angle = omega * t;
        let mut solid = 0;
        for c in 0..scene.cell_count() as usize {
            let (i, j, k) = (
                c % dims[0] as usize,
                c / dims[0] as usize % dims[1] as usize,
                c / (dims[0] * dims[1]) as usize,
            );
            let p = [
                (i as f64 + 0.5) * h,
                (j as f64 + 0.5) * h,
                (k as f64 + 0.5) * h,
            ];
            let d = [p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]];
            // The cube turned by `angle` about y: its local coordinates.
            let (s, co) = angle.sin_cos();
            let local = [co * d[0] - s * d[2], d[1], s * d[0] + co * d[2]];
            let margin = 1e-6;
            let inside = local.iter().all(|x| x.abs() < 0.08 - margin);
            let outside = local.iter().any(|x| x.abs() > 0.08 + margin);
            if inside {
                assert_ne!(m.solid[c], 0, "t {t}: cell {c} at {p:?} should be SOLID");
                solid += 1;
                // v = (0.3, 0, 0) + omega y x d.
                let want = [0.3 + omega * d[2], 0.0, -omega * d[0]];
                for a in 0..3 {
                    assert!(
                        (m.vel[c][a] as f64 - want[a]).abs() < 2e-3,
                        "t {t}: cell {c} velocity {:?} vs {want:?}",
                        m.vel[c]
                    );
                }
            } else if outside {
                assert_eq!(
                    m.solid[c], 0,
                    "t {t}: cell {c} at {p:?} should not be SOLID"
                );
            }
        }
        assert!(solid >= 100, "t {t}: only {solid} cells inside");
    }
    // Past the last key the mesh rests: stamped once more (at rest), then left alone.
    assert!(m.stamp(&scene, 2.5, 0.01));
    assert_eq!(m.max_speed, 0.0);
    assert!(!m.stamp(&scene, 2.51, 0.01));
    // Moving again (a stamp on the path) stamps.
    assert!(m.stamp(&scene, 1.0, 0.01));
}

#[test]
fn a_mesh_pushed_through_a_pool_pushes_the_liquid_and_repeats_bit_for_bit() {
    let (scene, _) = scene_with(
        "(time: 0.0, translation: (0.2, 0.12, 0.25)), (time: 1.0, translation: (0.7, 0.12, 0.25))",
    );
    let run = || {
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let mut rows = Vec::new();
        for _ in 0..15 {
            rows.push(sim.step_frame().unwrap());
        }
        (sim, rows)
    };
    let (a, rows) = run();
    for r in &rows {
        assert_eq!(r.unconverged_solves, 0, "frame {}", r.frame);
    }
    let (pos, vel) = a.read_particles().unwrap();
    // The liquid moves the way the mesh does: the particles ahead of it, within a few
    // cells, move in +x on average.
    let ahead: Vec<f32> = pos
        .iter()
        .zip(&vel)
        .filter(|(p, _)| {
            let x = 0.2 + 0.5 * 0.3;
            p[0] > x as f32 + 0.08 && p[0] < x as f32 + 0.2 && p[1] < 0.25
        })
        .map(|(_, v)| v[0])
        .collect();
    assert!(ahead.len() > 100, "{} particles ahead", ahead.len());
    let mean = ahead.iter().sum::<f32>() / ahead.len() as f32;
    // (0.035 m/s with cut faces for a mesh at 0.5 m/s; a whole-cell stamp pushed harder,
    // 0.05+, its cube a cell larger at times.)
    assert!(mean > 0.02, "mean x velocity ahead of the mesh {mean} m/s");
    // Every particle finite and in the domain, and the same bytes on a second run.
    assert!(pos
        .iter()
        .all(|p| (0..3).all(|k| p[k].is_finite() && p[k] >= 0.0 && p[k] <= 1.0)));
    let (b, _) = run();
    let (pos_b, _) = b.read_particles().unwrap();
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&pos),
        bytemuck::cast_slice::<_, u8>(&pos_b)
    );
}

#[test]
fn keyframed_meshes_are_refused_where_they_cannot_move() {
    let dir = std::env::temp_dir().join(format!("eddy-moving-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    let bad = |extra: &str, keys: &str, want: &str| {
        let text = format!(
            "(domain: (1.0, 0.5, 0.5), resolution: (16, 8, 8),
              fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.2, 0.5))],
              solids: [Mesh(path: \"cube.obj\", scale: 0.1{extra}, keyframes: [{keys}])])"
        );
        let path = dir.join("bad.ron");
        std::fs::write(&path, text).unwrap();
        let e = Scene::load(&path).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    };
    let two =
        "(time: 0.0, translation: (0.3, 0.3, 0.25)), (time: 1.0, translation: (0.6, 0.3, 0.25))";
    bad(
        "",
        "(time: 1.0, translation: (0.3, 0.3, 0.25)), (time: 0.5)",
        "keyframes[1].time",
    );
    bad(
        ", translation: (0.5, 0.2, 0.2)",
        two,
        "leave out translation",
    );
    bad(
        "",
        "(time: 0.0, translation: (NaN, 0.3, 0.25))",
        "keyframes[0].translation",
    );
}

/// A cube sliding at constant speed through still liquid (no gravity): the liquid's kinetic
/// energy should follow the motion smoothly. Stamped as whole cells, the cube jumps a cell at
/// a time and the energy with it; with cut faces its faces close gradually. Measured as the
/// mean |second difference| of the energy over frames, against the mean energy.
#[test]
fn a_sliding_mesh_moves_the_liquid_smoothly_through_cut_faces() {
    let dir = std::env::temp_dir().join(format!("eddy-moving-slide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cube.obj"), cube_obj()).unwrap();
    let roughness = |cut: bool| {
        let text = format!(
            "(name: \"slide\", domain: (1.0, 0.5, 0.5), resolution: (32, 16, 16),
              gravity: (0.0, 0.0, 0.0),
              fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.4, 0.5))],
              solids: [Mesh(path: \"cube.obj\", scale: 0.13, keyframes: [
                  (time: 0.0, translation: (0.25, 0.2, 0.25)),
                  (time: 4.0, translation: (0.75, 0.2, 0.25))])],
              cut_faces: {cut})"
        );
        let path = dir.join(format!("slide_{cut}.ron"));
        std::fs::write(&path, text).unwrap();
        let scene = Scene::load(&path).unwrap();
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let mut ke = Vec::new();
        for _ in 0..90 {
            let row = sim.step_frame().unwrap();
            assert_eq!(row.unconverged_solves, 0);
            ke.push(row.kinetic_energy as f64);
        }
        let e = &ke[20..];
        let bumps: f64 = e.windows(3).map(|w| (w[2] - 2.0 * w[1] + w[0]).abs()).sum();
        bumps / e.iter().sum::<f64>()
    };
    let (cut, stairs) = (roughness(true), roughness(false));
    eprintln!("energy roughness: cut faces {cut:.4}, whole cells {stairs:.4}");
    assert!(cut < 0.5 * stairs, "cut faces {cut}, whole cells {stairs}");
}
