//! The meshes' tests: reading, placement, the tree and the winding numbers against
//! brute force, voxelising.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A path in the temporary folder no other test (or run) uses.
fn temp_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "eddy_mesh_{}_{}_{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = temp_path(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// An icosahedron subdivided `levels` times, projected on the sphere of radius `r` at
/// `c`, counter-clockwise seen from outside.
pub(crate) fn icosphere(c: [f64; 3], r: f64, levels: u32) -> TriMesh {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut v: Vec<DVec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| DVec3::new(x, y, z).normalize())
    .collect();
    let mut f: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut midpoint = |a: u32, b: u32, v: &mut Vec<DVec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                v.push(((v[a as usize] + v[b as usize]) / 2.0).normalize());
                v.len() as u32 - 1
            })
        };
        let mut next = Vec::new();
        for [a, b, c] in f {
            let ab = midpoint(a, b, &mut v);
            let bc = midpoint(b, c, &mut v);
            let ca = midpoint(c, a, &mut v);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        f = next;
    }
    let c = DVec3::from(c);
    TriMesh {
        vertices: v.iter().map(|p| (c + *p * r).to_array()).collect(),
        triangles: f,
        dropped: 0,
    }
}

/// The cube [lo, hi]^3 with each face cut into `split` x `split` squares (two triangles
/// each), each square shrunk about its centre by `gap` (m) on every side, the faces in
/// `skip` (0..6: -x, +x, -y, +y, -z, +z) left out.
fn cube(lo: f64, hi: f64, split: u32, gap: f64, skip: &[usize]) -> TriMesh {
    let mut m = TriMesh::default();
    let s = (hi - lo) / split as f64;
    for face in 0..6 {
        if skip.contains(&face) {
            continue;
        }
        let axis = face / 2;
        let positive = face % 2 == 1;
        // In-face axes (a, b) with a x b along the outward normal.
        let (mut a, mut b) = ((axis + 1) % 3, (axis + 2) % 3);
        if !positive {
            std::mem::swap(&mut a, &mut b);
        }
        for i in 0..split {
            for j in 0..split {
                let base = m.vertices.len() as u32;
                for (di, dj) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
                    let mut p = [0.0; 3];
                    p[axis] = if positive { hi } else { lo };
                    p[a] = lo + s * (i as f64 + di) + if di == 0.0 { gap } else { -gap };
                    p[b] = lo + s * (j as f64 + dj) + if dj == 0.0 { gap } else { -gap };
                    m.vertices.push(p);
                }
                m.triangles.push([base, base + 1, base + 2]);
                m.triangles.push([base, base + 2, base + 3]);
            }
        }
    }
    m
}

fn grid_points(n: u32, h: f64) -> impl Iterator<Item = [f64; 3]> {
    (0..n * n * n).map(move |c| [c % n, c / n % n, c / (n * n)].map(|i| (i as f64 + 0.5) * h))
}

#[test]
fn a_meshed_sphere_has_the_analytic_signed_distance_within_a_quarter_cell() {
    let (c, r) = ([12.1, 11.9, 12.3], 7.3);
    let mesh = icosphere(c, r, 4);
    assert_eq!(mesh.triangles.len(), 5120);
    let sdf = voxelise(&mesh, [24; 3], [1.0; 3]);
    let mut worst = 0.0f64;
    for (p, got) in grid_points(24, 1.0).zip(&sdf) {
        let exact = (DVec3::from(p) - DVec3::from(c)).length() - r;
        worst = worst.max((*got as f64 - exact).abs());
        assert!(
            (*got as f64 - exact).abs() < 0.25,
            "at {p:?}: {got} vs {exact}"
        );
        assert_eq!(*got < 0.0, exact < 0.0, "sign at {p:?}");
    }
    // The inscribed polyhedron is within r (1 - cos(edge angle)) of the sphere.
    assert!(worst < 0.02, "largest error {worst} cells");
}

#[test]
fn the_fast_winding_number_stays_near_the_exact_one() {
    let bvh = Bvh::new(&icosphere([0.0; 3], 1.0, 4));
    let mut worst = 0.0f64;
    let mut rng = crate::scene::SplitMix64(7);
    for _ in 0..2000 {
        let p = [0, 1, 2].map(|_| 3.0 * rng.next_f64() - 1.5);
        let fast = bvh.winding_number_with(p, BETA);
        let exact = bvh.winding_number_with(p, f64::INFINITY);
        worst = worst.max((fast - exact).abs());
        let r = DVec3::from(p).length();
        if (r - 1.0).abs() > 0.01 {
            assert!(
                (exact - (r < 1.0) as u8 as f64).abs() < 1e-9,
                "{p:?}: {exact}"
            );
        }
    }
    assert!(
        worst < AMBIGUOUS,
        "largest error of the dipole terms: {worst}"
    );
}

#[test]
fn a_cube_with_a_face_missing_still_classifies_every_cell_centre() {
    let (lo, hi) = (3.3, 12.7);
    let analytic = |p: [f64; 3]| p.iter().all(|x| *x > lo && *x < hi);
    // One face at a time: from inside, a single missing face subtends less than a
    // hemisphere, so w > 1/2 there and < 1/2 outside. (Two adjacent faces missing can
    // leave cells near their shared corner below 1/2: a hole that large is a bowl.)
    for skip in [vec![1], vec![4]] {
        let mesh = cube(lo, hi, 3, 0.0, &skip);
        let bvh = Bvh::new(&mesh);
        let sdf = voxelise(&mesh, [16; 3], [1.0; 3]);
        for (p, d) in grid_points(16, 1.0).zip(&sdf) {
            assert_eq!(
                bvh.contains(p),
                analytic(p),
                "faces {skip:?} missing, at {p:?}"
            );
            assert_eq!(*d < 0.0, analytic(p), "sdf at {p:?}: {d}");
        }
    }
}

#[test]
fn a_cube_of_split_and_gapped_faces_still_classifies_every_cell_centre() {
    let (lo, hi) = (2.6, 13.1);
    let analytic = |p: [f64; 3]| p.iter().all(|x| *x > lo && *x < hi);
    // Each face in 4 x 4 squares, each 1% of the cube's side smaller than its place.
    let mesh = cube(lo, hi, 4, 0.005 * (hi - lo), &[]);
    let bvh = Bvh::new(&mesh);
    for p in grid_points(16, 1.0) {
        assert_eq!(bvh.contains(p), analytic(p), "at {p:?}");
    }
    // Seen through a gap from close by, the winding number drops but stays above 1/2.
    let w = bvh.winding_number([lo + 0.25 * (hi - lo), lo + 0.1, 8.0]);
    assert!(w > 0.6 && w < 1.0, "{w}");
}

#[test]
fn an_inside_out_mesh_has_the_same_inside() {
    let mut mesh = icosphere([5.0; 3], 3.0, 2);
    let bvh = Bvh::new(&mesh);
    for t in &mut mesh.triangles {
        t.swap(1, 2);
    }
    let flipped = Bvh::new(&mesh);
    assert!(mesh.signed_volume() < 0.0);
    for p in grid_points(10, 1.0) {
        assert_eq!(bvh.contains(p), flipped.contains(p), "{p:?}");
    }
}

const CUBE_OBJ: &str = "# a unit cube of quads\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n\
    v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
    f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";

fn check_unit_cube(m: &TriMesh) {
    assert_eq!(m.triangles.len(), 12);
    assert_eq!(m.dropped, 0);
    assert_eq!(m.bounds(), ([0.0; 3], [1.0; 3]));
    assert!(
        (m.signed_volume() - 1.0).abs() < 1e-12,
        "{}",
        m.signed_volume()
    );
    let bvh = Bvh::new(m);
    assert!(bvh.contains([0.5, 0.5, 0.5]));
    assert!(!bvh.contains([1.5, 0.5, 0.5]));
    assert!((bvh.sdf([0.5, 0.5, 0.25]) + 0.25).abs() < 1e-12);
}

/// The cube as STL facets (corner triples).
fn cube_facets() -> Vec<[[f32; 3]; 3]> {
    let m = load_mesh(write_temp("cube.obj", CUBE_OBJ.as_bytes())).unwrap();
    m.triangles
        .iter()
        .map(|t| t.map(|i| m.vertices[i as usize].map(|x| x as f32)))
        .collect()
}

fn ascii_stl(facets: &[[[f32; 3]; 3]], header: &str) -> String {
    let mut s = format!("{header}\n");
    for f in facets {
        s += "  facet normal 0 0 0\n    outer loop\n";
        for v in f {
            s += &format!("      vertex {} {} {}\n", v[0], v[1], v[2]);
        }
        s += "    endloop\n  endfacet\n";
    }
    s + "endsolid cube\n"
}

fn binary_stl(facets: &[[[f32; 3]; 3]], header: &[u8]) -> Vec<u8> {
    let tris: Vec<stl_io::Triangle> = facets
        .iter()
        .map(|f| stl_io::Triangle {
            normal: stl_io::Normal::new([0.0; 3]),
            vertices: f.map(stl_io::Vertex::new),
        })
        .collect();
    let mut bytes = Vec::new();
    stl_io::write_stl(&mut bytes, tris.iter()).unwrap();
    bytes[..header.len()].copy_from_slice(header);
    bytes
}

#[test]
fn a_cube_round_trips_through_obj_ascii_stl_and_binary_stl() {
    check_unit_cube(&load_mesh(write_temp("cube.obj", CUBE_OBJ.as_bytes())).unwrap());
    // The extension's case does not matter.
    check_unit_cube(&load_mesh(write_temp("cube.OBJ", CUBE_OBJ.as_bytes())).unwrap());
    let facets = cube_facets();
    for header in ["solid cube", "solid", "  solid  cube"] {
        let text = ascii_stl(&facets, header);
        check_unit_cube(&load_mesh(write_temp("cube.stl", text.as_bytes())).unwrap());
    }
    // A binary header that starts with "solid" (some exporters write one) is still binary.
    for header in [&b"binary cube"[..], b"solid cube, but binary"] {
        let bytes = binary_stl(&facets, header);
        assert_eq!(bytes.len(), 84 + 50 * 12);
        check_unit_cube(&load_mesh(write_temp("cube.Stl", &bytes)).unwrap());
    }
}

#[test]
fn degenerate_triangles_are_dropped_and_counted() {
    let text = format!("{CUBE_OBJ}f 1 1 2\nv 2 0 0\nf 1 2 9\n");
    let m = load_mesh(write_temp("cube.obj", text.as_bytes())).unwrap();
    assert_eq!((m.triangles.len(), m.dropped), (12, 2));
    let err = load_mesh(write_temp(
        "flat.obj",
        b"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 2\n",
    ))
    .unwrap_err();
    assert!(
        matches!(err, MeshError::AllDegenerate { count: 2, .. }),
        "{err}"
    );
    // The same cube 1e200 m across: no triangle of it is degenerate (its squared edges
    // would pass f64's range).
    let huge: String = CUBE_OBJ
        .lines()
        .map(|l| match l.strip_prefix("v ") {
            Some(r) => {
                let v: Vec<String> = r.split_whitespace().map(|x| format!("{x}e200")).collect();
                format!("v {}\n", v.join(" "))
            }
            None => format!("{l}\n"),
        })
        .collect();
    let m = load_mesh(write_temp("huge.obj", huge.as_bytes())).unwrap();
    assert_eq!((m.triangles.len(), m.dropped), (12, 0));
}

#[test]
fn every_bad_input_is_one_line_naming_the_file() {
    let facets = cube_facets();
    let junk: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let mut nan_stl = ascii_stl(&facets, "solid cube");
    nan_stl = nan_stl.replacen("vertex 0 1 0", "vertex 0 NaN 0", 1);
    let mut nan_facets = facets.clone();
    nan_facets[1][2] = [0.0, f32::NAN, 1.0];
    let nan_binary = binary_stl(&nan_facets, b"nan");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("junk.obj", junk.clone(), "binary data"),
        ("junk.stl", junk.clone(), "not a readable binary STL file"),
        (
            "junk2.stl",
            b"solid x\nfacet nonsense\n".to_vec(),
            "ASCII STL",
        ),
        ("empty.obj", vec![], "holds no triangles"),
        ("empty.stl", vec![], "holds no triangles"),
        (
            "points.obj",
            b"v 0 0 0\nv 1 0 0\n".to_vec(),
            "holds no triangles",
        ),
        (
            "nan.obj",
            b"v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n".to_vec(),
            "vertex 2 (line 2) is not finite: (NaN, 0, 0)",
        ),
        (
            "inf.obj",
            b"v 0 0 0\nv 1 0 0\nv 0 inf 0\nf 1 2 3\n".to_vec(),
            "vertex 3 (line 3) is not finite",
        ),
        ("nan.stl", nan_stl.into_bytes(), "facet 1: expected finite"),
        (
            "nan_binary.stl",
            nan_binary,
            "facet 2, vertex 3 is not finite: (0, NaN, 1)",
        ),
        (
            "flat.stl",
            ascii_stl(&[[[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]], "solid f").into_bytes(),
            "degenerate",
        ),
        (
            "cube.ply",
            CUBE_OBJ.as_bytes().to_vec(),
            "unknown format \".ply\"",
        ),
        ("cube", CUBE_OBJ.as_bytes().to_vec(), "unknown format"),
    ];
    for (name, bytes, needle) in cases {
        let p = write_temp(name, &bytes);
        let err = load_mesh(&p).unwrap_err().to_string();
        assert!(err.contains(needle), "{name}: {err}");
        assert!(err.contains(&p.display().to_string()), "{name}: {err}");
        assert!(!err.contains('\n'), "{name}: {err}");
    }
    let missing = temp_path("missing.obj");
    let err = load_mesh(&missing).unwrap_err();
    assert_eq!(err, MeshError::Missing { path: missing });
    let dir = temp_path("folder.obj");
    std::fs::create_dir(&dir).unwrap();
    assert!(matches!(load_mesh(&dir), Err(MeshError::NotAFile { .. })));
}

#[test]
fn a_mesh_over_the_limits_is_refused_before_it_is_read() {
    // A binary STL header claiming 10 million triangles, with none behind it.
    let mut header = vec![0u8; 84];
    header[80..84].copy_from_slice(&10_000_000u32.to_le_bytes());
    let start = std::time::Instant::now();
    let err = load_mesh(write_temp("huge.stl", &header)).unwrap_err();
    assert!(
        err.to_string()
            .contains("header says 10000000 triangles, more than the 2000000"),
        "{err}"
    );
    // The same count with all its bytes present, as a sparse file: over the byte limit.
    let p = temp_path("huge_sparse.stl");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(84 + 50 * 10_000_000).unwrap();
    let err = load_mesh(&p).unwrap_err();
    assert!(matches!(err, MeshError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("256 MiB"), "{err}");
    let _ = std::fs::remove_file(&p);
    // An OBJ whose faces would make more triangles than the limit: counted first.
    let polygon = format!(
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf {}\n",
        "1 2 3 ".repeat(MAX_MESH_TRIANGLES / 3 + 2)
    );
    let err = match load_mesh(write_temp("huge.obj", polygon.as_bytes())) {
        Err(e) => e,
        Ok(m) => panic!("read {} triangles", m.triangles.len()),
    };
    assert!(matches!(err, MeshError::TooManyTriangles { .. }), "{err}");
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
}

#[test]
fn placement_scales_then_turns_about_x_y_z_then_moves() {
    let p = Placement {
        scale: 2.0,
        rotation_deg: (90.0, 90.0, 0.0),
        translation: (1.0, 2.0, 3.0),
    };
    // y -> z (about x), then z -> x (about y).
    let got = DVec3::from(p.apply([0.0, 1.0, 0.0]));
    assert!((got - DVec3::new(3.0, 2.0, 3.0)).length() < 1e-12, "{got}");
    // The same quaternion as a body's `rotation_deg` (src/sim/bodies).
    let r = (10.0f64, -20.0f64, 30.0f64);
    let body = DQuat::from_rotation_z(r.2.to_radians())
        * DQuat::from_rotation_y(r.1.to_radians())
        * DQuat::from_rotation_x(r.0.to_radians());
    let q = Placement {
        scale: 1.0,
        rotation_deg: r,
        translation: (0.0, 0.0, 0.0),
    };
    let v = DVec3::new(0.3, -0.7, 0.2);
    assert!((DVec3::from(q.apply(v.to_array())) - body * v).length() < 1e-12);
}

#[test]
fn the_shipped_pillar_is_what_pillar_obj_generates() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/meshes/pillar.obj");
    let text = pillar_obj();
    if std::env::var_os("EDDY_REGENERATE_MESHES").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == text,
        "scenes/meshes/pillar.obj differs from pillar_obj(); regenerate it with \
         EDDY_REGENERATE_MESHES=1 cargo test --lib pillar"
    );
}

#[test]
fn the_pillar_is_closed_and_wound_outwards() {
    let m = load_mesh(write_temp("pillar.obj", pillar_obj().as_bytes())).unwrap();
    assert_eq!((m.triangles.len(), m.dropped), (1344, 0));
    let mut edges = std::collections::HashMap::new();
    for t in &m.triangles {
        for k in 0..3 {
            *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    for (&(a, b), &n) in &edges {
        assert_eq!((n, edges.get(&(b, a))), (1, Some(&1)), "edge {a}-{b}");
    }
    let (lo, hi) = m.bounds();
    let expect = ([-0.25, 0.0, -0.1], [0.25, 1.0, 0.1]);
    for a in 0..3 {
        assert!((lo[a] - expect.0[a]).abs() < 1e-6 && (hi[a] - expect.1[a]).abs() < 1e-6);
    }
    // Outward: positive volume, a little less than its 0.5 x 0.2 box.
    let v = m.signed_volume();
    assert!(v > 0.07 && v < 0.1, "{v}");
    let bvh = Bvh::new(&m);
    assert!(bvh.contains([0.0, 0.5, 0.0]));
    assert!(bvh.contains([-0.2, 0.5, 0.0]));
    assert!(!bvh.contains([-0.2, 0.5, 0.08]));
}

/// `mesh` as OBJ text.
pub(crate) fn to_obj(mesh: &TriMesh) -> String {
    let mut s = String::new();
    for v in &mesh.vertices {
        s += &format!("v {} {} {}\n", v[0], v[1], v[2]);
    }
    for t in &mesh.triangles {
        s += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}

/// A folder of its own holding `files`.
fn temp_folder(files: &[(&str, &[u8])]) -> PathBuf {
    let dir = temp_path("scene");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    dir
}

const LIQUID: &str = "(domain: (1.0, 0.5, 0.5), resolution: (32, 16, 16), \
    fluid: [Box(min: (0, 0, 0), max: (0.3, 0.4, 0.5))], solids: [SOLID])";

fn liquid_with(solid: &str) -> String {
    LIQUID.replace("SOLID", solid)
}

#[test]
fn a_scene_reads_its_mesh_solid_next_to_it_and_voxelises_it_by_the_sign() {
    use crate::scene::{Scene, Shape};
    let sphere = to_obj(&icosphere([0.0; 3], 1.0, 3));
    let dir = temp_folder(&[("ball.obj", sphere.as_bytes())]);
    let text = liquid_with(
        "Box(min: (0.9, 0, 0), max: (1, 0.1, 0.1)), \
         Mesh(path: \"ball.obj\", scale: 0.2, translation: (0.6, 0.25, 0.25))",
    );
    let path = dir.join("scene.ron");
    std::fs::write(&path, &text).unwrap();
    let s = Scene::load(&path).unwrap();
    let m = s.solids[1].solid_mesh().expect("loaded");
    assert_eq!(m.mesh.triangles.len(), 1280);
    assert_eq!(m.source, dir.join("ball.obj").display().to_string());
    let (lo, hi) = s.solids[1].bounds();
    assert!(
        (lo[0] - 0.4).abs() < 1e-9 && (hi[1] - 0.45).abs() < 1e-9,
        "{lo:?} {hi:?}"
    );
    // SOLID cells: the box's, and the mesh's where its signed distance is negative.
    let (solid, _) = s.solid_cells();
    let sdf = voxelise(&m.mesh, s.dims(), [s.h(); 3]);
    let [nx, ny, _] = s.dims();
    let mut mesh_cells = 0;
    for (c, (flag, d)) in solid.iter().zip(&sdf).enumerate() {
        let ijk = [c as u32 % nx, c as u32 / nx % ny, c as u32 / (nx * ny)];
        let p = ijk.map(|i| (i as f64 + 0.5) * s.h());
        let in_box = s.solids[0].contains(p);
        assert_eq!(*flag != 0, in_box || *d < 0.0, "cell {c}");
        mesh_cells += (*d < 0.0) as u32;
    }
    assert!(mesh_cells > 200, "{mesh_cells}");
    assert_eq!(
        s.solid_cell_count(),
        solid.iter().filter(|f| **f != 0).count() as u64
    );
    // No particle is seeded in the mesh (the fluid box does not reach it; move it there).
    assert!(s.initial_state().positions.iter().all(|p| !m.contains([
        p[0] as f64,
        p[1] as f64,
        p[2] as f64
    ])));
    // The scene's text and equality are what the file says: the mesh is not in them.
    let back = Scene::parse(&s.to_ron(), &path).unwrap();
    assert_eq!(back, s);
    assert!(!s.to_ron().contains("loaded"), "{}", s.to_ron());
    assert!(matches!(&s.solids[1], Shape::Mesh { scale, .. } if *scale == 0.2));
}

#[test]
fn a_smoke_slice_cuts_its_mesh_at_mid_depth() {
    use crate::scene::Scene;
    // The pillar stood up along z (turned 90 degrees about x), across the slice.
    let text = "(kind: smoke, domain: (2.0, 1.0, 0.02), resolution: (64, 32, 1), \
        solids: [Mesh(path: \"meshes/pillar.obj\", rotation_deg: (90, 0, 0), \
        translation: (0.8, 0.5, -0.1))])";
    for base in [MeshBase::Shipped, MeshBase::Folder(temp_folder(&[]))] {
        let s = Scene::parse_with(text, Path::new("s.ron"), &base).unwrap();
        let m = s.solids[0].solid_mesh().unwrap();
        assert_eq!(m.source, "meshes/pillar.obj (built in)");
        let (lo, hi) = m.bounds;
        assert!((lo[2] + 0.1).abs() < 1e-9 && (hi[2] - 0.9).abs() < 1e-9);
        let (solid, _) = s.solid_cells();
        let h = s.h();
        for (c, flag) in solid.iter().enumerate() {
            let p = [(c % 64) as f64 + 0.5, (c / 64) as f64 + 0.5].map(|x| x * h);
            let expect = m.contains([p[0], p[1], 0.01]);
            assert_eq!(*flag != 0, expect, "cell {c}");
        }
        // 0.5 x 0.2 m at cells of 1/32 m: about 90 cells.
        let n = s.solid_cell_count();
        assert!((70..110).contains(&n), "{n}");
    }
}

#[test]
fn mesh_errors_name_the_solid_and_the_file() {
    use crate::scene::Scene;
    let ball = to_obj(&icosphere([0.0; 3], 1.0, 1));
    let junk: Vec<u8> = (0..300u32).map(|i| (i * 31 % 256) as u8).collect();
    let dir = temp_folder(&[
        ("ball.obj", ball.as_bytes()),
        ("junk.obj", &junk),
        ("empty.stl", b""),
        ("nan.obj", b"v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n"),
        ("flat.obj", b"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n"),
    ]);
    let load = |solid: &str| {
        let path = dir.join("scene.ron");
        std::fs::write(&path, liquid_with(solid)).unwrap();
        Scene::load(&path).map(|_| ()).unwrap_err().to_string()
    };
    let file = |name: &str| dir.join(name).display().to_string();
    for (solid, needles) in [
        (
            "Mesh(path: \"gone.obj\")",
            vec!["solids[0]", &file("gone.obj"), "no such file"],
        ),
        (
            "Mesh(path: \"junk.obj\")",
            vec!["solids[0]", &file("junk.obj"), "binary data"],
        ),
        (
            "Mesh(path: \"empty.stl\")",
            vec!["solids[0]", &file("empty.stl"), "no triangles"],
        ),
        (
            "Mesh(path: \"nan.obj\")",
            vec!["solids[0]", &file("nan.obj"), "vertex 2"],
        ),
        (
            "Mesh(path: \"flat.obj\")",
            vec!["solids[0]", &file("flat.obj"), "degenerate"],
        ),
        (
            "Mesh(path: \"ball.ply\")",
            vec!["solids[0]", &file("ball.ply"), ".ply"],
        ),
        (
            "Mesh(path: \"ball.obj\", scale: 0.0)",
            vec!["solids[0]", "scale must be positive"],
        ),
        (
            "Mesh(path: \"ball.obj\", scale: 5.0, translation: (9, 9, 9))",
            vec!["solids[0]", "outside the domain"],
        ),
    ] {
        let err = load(solid);
        for n in needles {
            assert!(err.contains(n), "{solid}: {err}");
        }
        assert!(!err.contains('\n'), "{err}");
    }
    // A mesh only where eddy supports one.
    let path = dir.join("scene.ron");
    let fluid = LIQUID
        .replace(
            "fluid: [Box(min: (0, 0, 0), max: (0.3, 0.4, 0.5))]",
            "fluid: [Mesh(path: \"ball.obj\")]",
        )
        .replace("SOLID", "");
    std::fs::write(&path, fluid).unwrap();
    let err = Scene::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("fluid[0]: a Mesh can only be a solid"),
        "{err}"
    );
    let smoke = "(kind: smoke, domain: (1.0, 1.0, 0.02), resolution: (16, 16, 1), smoke: \
        (sources: [(shape: Mesh(path: \"ball.obj\"), dye: (1, 1, 1))]))";
    std::fs::write(&path, smoke).unwrap();
    let err = Scene::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("smoke.sources[0].shape") && err.contains("only be a solid"),
        "{err}"
    );
    // A scene built in code reads its meshes with load_meshes.
    let mut s: Scene = ron::from_str(&liquid_with(
        "Mesh(path: \"ball.obj\", scale: 0.1, translation: (0.5, 0.2, 0.2))",
    ))
    .unwrap();
    assert!(s.validate().unwrap_err().contains("not loaded"));
    s.load_meshes(&MeshBase::Folder(dir.clone())).unwrap();
    s.validate().unwrap();
}

/// Figures for the guide and benchmarks/history.md (`cargo test --release --lib measure_mesh --
/// --ignored --nocapture`): the SDF error on a meshed sphere, the dipole terms' error, and
/// the voxelisation's time for about 100 k triangles on a 64^3 grid.
#[test]
#[ignore]
fn measure_mesh_voxelisation() {
    let (c, r) = ([12.1, 11.9, 12.3], 7.3);
    let sdf = voxelise(&icosphere(c, r, 4), [24; 3], [1.0; 3]);
    let worst = grid_points(24, 1.0)
        .zip(&sdf)
        .map(|(p, d)| (*d as f64 - ((DVec3::from(p) - DVec3::from(c)).length() - r)).abs())
        .fold(0.0, f64::max);
    println!("sphere r = 7.3 cells, 5120 triangles: largest SDF error {worst:.4} cells");
    let bvh = Bvh::new(&icosphere([0.0; 3], 1.0, 4));
    let mut rng = crate::scene::SplitMix64(7);
    let mut err = 0.0f64;
    for _ in 0..20000 {
        let p = [0, 1, 2].map(|_| 3.0 * rng.next_f64() - 1.5);
        err = err.max(
            (bvh.winding_number_with(p, BETA) - bvh.winding_number_with(p, f64::INFINITY)).abs(),
        );
    }
    println!("dipole terms (beta {BETA}): largest winding-number error {err:.2e}");
    // Level 6: 81920 triangles; with a box around it, about 100 k.
    let mut mesh = icosphere([32.0; 3], 20.0, 6);
    let boxy = cube(5.3, 58.7, 64, 0.0, &[]);
    let base = mesh.vertices.len() as u32;
    mesh.vertices.extend(boxy.vertices);
    mesh.triangles
        .extend(boxy.triangles.iter().map(|t| t.map(|i| i + base)));
    let n = mesh.triangles.len();
    let t = std::time::Instant::now();
    let sdf = voxelise(&mesh, [64; 3], [1.0; 3]);
    let secs = t.elapsed().as_secs_f64();
    let inside = sdf.iter().filter(|d| **d < 0.0).count();
    println!(
        "{n} triangles, 64^3 cells: voxelise (SDF) {secs:.2} s on {} threads, {inside} inside",
        std::thread::available_parallelism().map_or(1, |t| t.get())
    );
    let solid = SolidMesh::new(mesh, "test".into());
    let t = std::time::Instant::now();
    let mask = solid.compute_cell_mask([64; 3], [1.0; 3]);
    println!(
        "the inside test alone (cell mask): {:.2} s, {} cells",
        t.elapsed().as_secs_f64(),
        mask.count()
    );
}
