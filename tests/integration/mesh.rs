//! Liquid surface meshes: marching cubes is watertight and outward-oriented on random
//! fields and every case, the particle surface has the right size and height, and
//! `eddy run --dump-mesh` writes PLY files that parse back.

use crate::common::eddy;
use eddy::mesh::{extract, liquid_surface, Border, Lattice, SurfaceMesh};
use eddy::scene::Scene;
use std::collections::HashMap;
use std::path::Path;

/// Every undirected edge in exactly two triangles, once in each direction (so the surface
/// is closed and consistently oriented), and no triangle repeats a vertex.
fn check_closed_and_oriented(triangles: &[[u32; 3]]) -> Result<(), String> {
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    for t in triangles {
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            return Err(format!("degenerate triangle {t:?}"));
        }
        for i in 0..3 {
            *directed.entry((t[i], t[(i + 1) % 3])).or_default() += 1;
        }
    }
    for (&(a, b), &n) in &directed {
        if n != 1 {
            return Err(format!(
                "edge {a}->{b} used {n} times in the same direction"
            ));
        }
        if directed.get(&(b, a)) != Some(&1) {
            return Err(format!(
                "edge {a}-{b} has no opposite triangle (a hole or a flip)"
            ));
        }
    }
    Ok(())
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i] as f64 - b[i] as f64)
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn area(pos: &[[f32; 3]], tris: &[[u32; 3]]) -> f64 {
    tris.iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| pos[v as usize]);
            let n = cross(sub(b, a), sub(c, a));
            0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
        })
        .sum()
}

/// Volume enclosed by a closed mesh (divergence theorem); positive when it faces outward.
fn signed_volume(pos: &[[f32; 3]], tris: &[[u32; 3]]) -> f64 {
    tris.iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| pos[v as usize].map(|x| x as f64));
            let n = cross(b, c);
            (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / 6.0
        })
        .sum()
}

/// Triangles grouped by connected component (through shared vertices).
fn components(vertices: usize, tris: &[[u32; 3]]) -> Vec<Vec<[u32; 3]>> {
    let mut parent: Vec<usize> = (0..vertices).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for t in tris {
        for i in 1..3 {
            let (a, b) = (
                root(&mut parent, t[0] as usize),
                root(&mut parent, t[i] as usize),
            );
            parent[a] = b;
        }
    }
    let mut groups: HashMap<usize, Vec<[u32; 3]>> = HashMap::new();
    for t in tris {
        let r = root(&mut parent, t[0] as usize);
        groups.entry(r).or_default().push(*t);
    }
    groups.into_values().collect()
}

fn check_normals(m: &SurfaceMesh) {
    assert_eq!(m.normals.len(), m.positions.len());
    for n in &m.normals {
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((len - 1.0).abs() < 1e-3, "normal {n:?} is not unit length");
    }
}

/// A small deterministic generator (SplitMix64) so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A lattice with random inside values and an outside border, so the surface must close.
fn random_lattice(rng: &mut Rng, dims: [usize; 3], quantised: bool) -> Lattice {
    let mut lat = Lattice::new(dims, [0.0; 3], 0.1, -1.0);
    for k in 1..dims[2] - 1 {
        for j in 1..dims[1] - 1 {
            for i in 1..dims[0] - 1 {
                let r = 2.0 * rng.next() - 1.0;
                // Few distinct magnitudes make ties in the face decider common.
                let v = if quantised {
                    (r * 2.0).round() / 2.0
                } else {
                    r
                };
                let n = lat.index(i, j, k);
                lat.values[n] = v as f32;
            }
        }
    }
    lat
}

#[test]
fn random_fields_give_closed_outward_meshes() {
    let mut rng = Rng(7);
    let mut triangles = 0;
    for trial in 0..300 {
        // At least two layers between the borders: with wall padding those are the walls,
        // and one layer alone would be a liquid of zero thickness.
        let dims = [0, 1, 2].map(|_| 4 + (rng.next() * 9.0) as usize);
        let lat = random_lattice(&mut rng, dims, trial % 3 == 0);
        let inside = lat.values.iter().filter(|&&v| v > 0.0).count();
        for border in [Border::Samples, Border::WallPadding] {
            let m = extract(&lat, border);
            check_closed_and_oriented(&m.triangles)
                .unwrap_or_else(|e| panic!("trial {trial} {dims:?} {border:?}: {e}"));
            check_normals(&m);
            assert_eq!(m.triangles.is_empty(), inside == 0, "trial {trial}");
            if inside > 0 {
                let v = signed_volume(&m.positions, &m.triangles);
                assert!(v > 0.0, "trial {trial} {border:?}: signed volume {v}");
            }
            triangles += m.triangles.len();
        }
    }
    assert!(
        triangles > 10_000,
        "the fuzz made only {triangles} triangles"
    );
}

#[test]
fn every_cube_case_bounds_a_positive_volume_whichever_way_faces_resolve() {
    // One cube with each sign pattern inside a border of outside nodes; random magnitudes
    // make the asymptotic decider go both ways on ambiguous faces. No inside set of a 2x2x2
    // block can enclose a cavity, so every component must have a positive volume.
    let mut rng = Rng(11);
    for case in 1..256usize {
        for _ in 0..12 {
            let mut lat = Lattice::new([4, 4, 4], [0.0; 3], 1.0, -1.0);
            for c in 0..8 {
                let mag = 0.05 + rng.next() as f32;
                let n = lat.index(1 + (c & 1), 1 + ((c >> 1) & 1), 1 + ((c >> 2) & 1));
                lat.values[n] = if (case >> c) & 1 == 1 { mag } else { -mag };
            }
            let m = extract(&lat, Border::Samples);
            check_closed_and_oriented(&m.triangles)
                .unwrap_or_else(|e| panic!("case {case:08b}: {e}"));
            for comp in components(m.positions.len(), &m.triangles) {
                let v = signed_volume(&m.positions, &comp);
                assert!(v > 0.0, "case {case:08b}: a component has volume {v}");
            }
        }
    }
}

#[test]
fn a_sphere_of_particles_meshes_to_its_area_without_holes() {
    let scene = Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/drop_into_pool.ron"
    ))
    .unwrap();
    let (centre, radius) = ([0.5, 0.7, 0.5], 0.15);
    let pos = scene.initial_state().positions;
    for resolution in [1, 2] {
        let m = liquid_surface(&scene, &pos, resolution).unwrap();
        check_closed_and_oriented(&m.triangles).unwrap();
        check_normals(&m);
        let comps = components(m.positions.len(), &m.triangles);
        assert_eq!(
            comps.len(),
            2,
            "R={resolution}: expected the pool and the drop"
        );
        let drop = comps
            .iter()
            .find(|c| {
                c.iter()
                    .flatten()
                    .all(|&v| m.positions[v as usize][1] > 0.45)
            })
            .expect("no component above the pool");
        let a = area(&m.positions, drop);
        let expected = 4.0 * std::f64::consts::PI * radius * radius;
        assert!(
            (a / expected - 1.0).abs() < 0.05,
            "R={resolution}: area {a:.5}, 4 pi r^2 = {expected:.5}"
        );
        // Every vertex of the drop lies within one cell of the sphere.
        let h = scene.h();
        for &v in drop.iter().flatten() {
            let p = m.positions[v as usize];
            let r = (0..3)
                .map(|i| (p[i] as f64 - centre[i]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                (r - radius).abs() < h,
                "R={resolution}: vertex {p:?} at radius {r}"
            );
        }
    }
}

#[test]
fn a_dam_break_column_is_closed_by_the_walls_and_keeps_its_volume() {
    let scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/dam_break.ron")).unwrap();
    let pos = scene.initial_state().positions;
    // The column fills x < 0.35 (cells whose centres lie inside), y < 0.6, all of z.
    let h = scene.h();
    let seeded = ((0.35 / h).round() * h) * 0.6 * 0.5;
    for resolution in [1, 2] {
        let m = liquid_surface(&scene, &pos, resolution).unwrap();
        check_closed_and_oriented(&m.triangles).unwrap();
        let v = signed_volume(&m.positions, &m.triangles);
        assert!(
            (v / seeded - 1.0).abs() < 0.03,
            "R={resolution}: volume {v:.5}, seeded {seeded:.5}"
        );
        // The caps lie in the walls x = 0, y = 0, z = 0 and z = 0.5.
        for wall in [(0, 0.0f32), (1, 0.0), (2, 0.0), (2, 0.5)] {
            let on = m
                .positions
                .iter()
                .filter(|p| (p[wall.0] - wall.1).abs() < 1e-6)
                .count();
            assert!(on > 20, "R={resolution}: {on} vertices on wall {wall:?}");
        }
    }
}

#[test]
fn bubbles_below_the_threshold_are_dropped_and_larger_ones_kept() {
    // A block of liquid holding a one-node bubble and a 3 x 3 x 3-node bubble.
    let mut lat = Lattice::new([12, 12, 12], [0.0; 3], 1.0, -1.0);
    for k in 1..11 {
        for j in 1..11 {
            for i in 1..11 {
                let n = lat.index(i, j, k);
                let big = (6..9).contains(&i) && (6..9).contains(&j) && (6..9).contains(&k);
                lat.values[n] = if big { -0.5 } else { 0.5 };
            }
        }
    }
    let n = lat.index(3, 3, 3);
    lat.values[n] = -0.05;
    let m = extract(&lat, Border::Samples);
    let volumes = |m: &SurfaceMesh| {
        let mut v: Vec<f64> = components(m.positions.len(), &m.triangles)
            .iter()
            .map(|c| signed_volume(&m.positions, c))
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let before = volumes(&m);
    assert_eq!(before.len(), 3, "{before:?}");
    assert!(
        before[0] < -10.0 && before[1] < 0.0 && before[1] > -0.01,
        "{before:?}"
    );
    let kept = eddy::mesh::without_small_cavities(m, 1.0);
    check_closed_and_oriented(&kept.triangles).unwrap();
    let after = volumes(&kept);
    assert_eq!(after, vec![before[0], before[2]]);
    assert!(kept
        .triangles
        .iter()
        .flatten()
        .all(|&v| (v as usize) < kept.positions.len()));

    // From particles: a pool with a spherical hole of radius 2.5 cells keeps it as a bubble
    // (negative volume, about the hole's size); the same pool without the hole has none.
    let scene = Scene {
        domain: (1.0, 1.0, 1.0),
        resolution: (16, 16, 16),
        fluid: vec![eddy::scene::Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.75, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        ..Scene::default()
    };
    let h = scene.h() as f32;
    let all = scene.initial_state().positions;
    let hole: Vec<[f32; 4]> = all
        .iter()
        .filter(|p| {
            let d = [p[0] - 0.5, p[1] - 0.35, p[2] - 0.5];
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() > 2.5 * h
        })
        .copied()
        .collect();
    let cavities = |pos: &[[f32; 4]]| -> Vec<f64> {
        let m = liquid_surface(&scene, pos, 1).unwrap();
        volumes(&m).into_iter().filter(|&v| v < 0.0).collect()
    };
    assert!(cavities(&all).is_empty());
    let bubble = cavities(&hole);
    let sphere = 4.0 / 3.0 * std::f64::consts::PI * (2.5 * h as f64).powi(3);
    assert_eq!(bubble.len(), 1, "{bubble:?}");
    assert!(
        -bubble[0] > 0.3 * sphere && -bubble[0] < 1.2 * sphere,
        "bubble {:.3e} m^3, hole {sphere:.3e} m^3",
        -bubble[0]
    );
}

#[test]
fn mesh_files_parse_back() {
    let scene = Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/drop_into_pool.ron"
    ))
    .unwrap();
    let m = liquid_surface(&scene, &scene.initial_state().positions, 1).unwrap();
    let dir = scratch!(path "ply");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mesh_00000.ply");
    eddy::mesh::ply::write_mesh_ply(&path, &m, "test").unwrap();
    let back = read_mesh_ply(&path);
    assert_eq!(back.positions, m.positions);
    assert_eq!(back.normals, m.normals);
    assert_eq!(back.triangles, m.triangles);
    assert!(!path.with_extension("ply.tmp").exists());
}

/// A minimal PLY reader: binary little-endian, float vertex properties, and faces as a
/// uchar-counted list of uint indices, read by the header's property names.
fn read_mesh_ply(path: &Path) -> SurfaceMesh {
    let data = std::fs::read(path).unwrap();
    let end = data
        .windows(11)
        .position(|w| w == b"end_header\n")
        .expect("no end_header")
        + 11;
    let header = std::str::from_utf8(&data[..end]).unwrap();
    let mut lines = header.lines();
    assert_eq!(lines.next(), Some("ply"));
    assert_eq!(lines.next(), Some("format binary_little_endian 1.0"));
    let (mut vertices, mut faces) = (0usize, 0usize);
    let mut props: Vec<String> = Vec::new();
    let mut element = "";
    for l in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["element", "vertex", n] => (element, vertices) = ("vertex", n.parse().unwrap()),
            ["element", "face", n] => (element, faces) = ("face", n.parse().unwrap()),
            ["property", "float", name] if element == "vertex" => props.push(name.to_string()),
            ["property", "list", "uchar", "uint", "vertex_indices"] => {
                assert_eq!(element, "face")
            }
            ["property", ..] => panic!("unexpected property line {l:?}"),
            _ => {}
        }
    }
    let f32_at = |o: usize| f32::from_le_bytes(data[o..o + 4].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
    let col = |name: &str| props.iter().position(|p| p == name).unwrap();
    let stride = 4 * props.len();
    let mut m = SurfaceMesh::default();
    for v in 0..vertices {
        let o = end + v * stride;
        let get = |name: &str| f32_at(o + 4 * col(name));
        m.positions.push([get("x"), get("y"), get("z")]);
        m.normals.push([get("nx"), get("ny"), get("nz")]);
    }
    let mut o = end + vertices * stride;
    for _ in 0..faces {
        assert_eq!(data[o], 3, "not a triangle");
        m.triangles
            .push([u32_at(o + 1), u32_at(o + 5), u32_at(o + 9)]);
        o += 13;
    }
    assert_eq!(o, data.len(), "trailing bytes");
    for t in &m.triangles {
        assert!(t.iter().all(|&v| (v as usize) < vertices));
    }
    m
}

#[test]
fn a_settled_pools_mesh_matches_the_liquid_volume_and_height() {
    let dir = scratch!(path "pool");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("pool.ron");
    std::fs::write(
        &scene,
        "(domain: (1.0, 1.0, 1.0), resolution: (16, 16, 16), \
         fluid: [Box(min: (0, 0, 0), max: (1.0, 0.4, 1.0))])",
    )
    .unwrap();
    let out = dir.join("out");
    let frames = 30;
    let r = eddy(&[
        "run",
        scene.to_str().unwrap(),
        "--frames",
        &frames.to_string(),
        "--dump-mesh",
        "15",
        "--mesh-resolution",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(
        err.contains("mesh frame 30:") && err.contains("ms"),
        "{err}"
    );
    for f in [0, 15, 30] {
        assert!(out.join(format!("mesh_{f:05}.ply")).exists(), "frame {f}");
    }
    assert!(!out.join("mesh_00010.ply").exists());
    let stats = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let header: Vec<&str> = stats.lines().next().unwrap().split(',').collect();
    let last: Vec<&str> = stats.lines().last().unwrap().split(',').collect();
    let volume: f64 = last[header.iter().position(|c| *c == "volume").unwrap()]
        .parse()
        .unwrap();
    let m = read_mesh_ply(&out.join(format!("mesh_{frames:05}.ply")));
    check_closed_and_oriented(&m.triangles).unwrap();
    let v = signed_volume(&m.positions, &m.triangles);
    assert!(
        (v / volume - 1.0).abs() < 0.05,
        "mesh volume {v:.5}, stats.csv volume {volume:.5}"
    );
    // The free surface: every upward-facing vertex above the walls' caps lies within one
    // cell of the height the liquid volume gives over the 1 m^2 floor.
    let height = volume;
    let h = 1.0 / 16.0;
    let top: Vec<f32> = m
        .positions
        .iter()
        .zip(&m.normals)
        .filter(|(p, n)| n[1] > 0.7 && p[1] as f64 > 0.5 * height)
        .map(|(p, _)| p[1])
        .collect();
    assert!(top.len() > 100, "only {} top vertices", top.len());
    for y in top {
        assert!(
            (y as f64 - height).abs() < h,
            "top vertex at y = {y}, pool height {height:.4}"
        );
    }
}

#[test]
fn bad_mesh_arguments_fail_before_the_run() {
    let dir = scratch!(path "args");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    let scene = "scenes/dam_break.ron";
    let fails = |args: &[&str], code: i32, needles: &[&str]| {
        let r = eddy(args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(code), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        // Refused before the adapter opens or a frame runs.
        assert!(!err.contains("adapter:"), "{args:?} started the run: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: missing {n:?} in {err}");
        }
    };
    fails(
        &["run", scene, "--dump-mesh", "0", "--out", o],
        1,
        &["--dump-mesh must be at least 1"],
    );
    for r in ["0", "9"] {
        fails(
            &[
                "run",
                scene,
                "--dump-mesh",
                "1",
                "--mesh-resolution",
                r,
                "--out",
                o,
            ],
            1,
            &["--mesh-resolution must be between 1 and 8"],
        );
    }
    fails(
        &["run", scene, "--mesh-resolution", "2", "--out", o],
        2,
        &["--dump-mesh"],
    );
    fails(
        &[
            "run",
            "scenes/smoke_plume.ron",
            "--dump-mesh",
            "1",
            "--out",
            o,
        ],
        1,
        &["smoke"],
    );
    // A folder below a plain file can never be created, even by root.
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("out");
    fails(
        &[
            "run",
            scene,
            "--dump-mesh",
            "1",
            "--out",
            bad.to_str().unwrap(),
        ],
        1,
        &["--out", "file/out"],
    );
    assert!(!out.exists(), "a refused run created --out");
}
