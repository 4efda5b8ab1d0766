//! OpenVDB volumes (`--dump-vdb`): what eddy writes is read back by OpenVDB's own library
//! (its Python bindings, `pyopenvdb`, which scripts/test.sh installs from Debian's
//! python3-openvdb) and must hold every voxel's value and active state bit for bit, the
//! grid's class, background and transform, on grids that take every path of the writer
//! (several internal nodes, a level set's inside and outside, tiles, each way a node
//! stores its inactive values); and a liquid run's volumes must agree with its VTK field
//! caches and its surface.

use crate::common;
use eddy::output::vdb::{self, DenseGrid, Grid, GridClass};
use serde_json::Value;
use std::path::Path;

/// OpenVDB's reading of `path`: per grid (in the order of `grids`, names and boxes), its
/// name, class, type, background, the world positions of index (0,0,0) and (1,1,1), the
/// active count, and over the box (from index 0) every value (flattened, x fastest) and
/// active flag. Fails unless the file holds exactly those grids.
fn read_with_openvdb(path: &Path, grids: &[(&str, [usize; 3])]) -> Vec<Value> {
    let script = r#"
import json, sys
import pyopenvdb as vdb
path, wanted = sys.argv[1], json.loads(sys.argv[2])
grids, meta = vdb.readAll(path)
by_name = {g.name: g for g in grids}
assert sorted(by_name) == sorted(n for n, _ in wanted), (sorted(by_name), wanted)
out = []
for name, (nx, ny, nz) in wanted:
    g = by_name[name]
    acc = g.getConstAccessor()
    values, active = [], []
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                v, on = acc.probeValue((i, j, k))
                values.append(list(v) if isinstance(v, tuple) else v)
                active.append(bool(on))
    bg = g.background
    out.append({
        "name": g.name, "class": g.gridClass, "type": g.valueTypeName,
        "background": list(bg) if isinstance(bg, tuple) else bg,
        "origin": list(g.transform.indexToWorld((0, 0, 0))),
        "step": list(g.transform.indexToWorld((1, 1, 1))),
        "active_count": g.activeVoxelCount(),
        "values": values, "active": active, "creator": meta.get("creator"),
    })
print(json.dumps(out))
"#;
    let dims = serde_json::to_string(grids).unwrap();
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script, path.to_str().unwrap(), &dims])
        .output()
        .expect("cannot start /usr/bin/python3 (install python3-openvdb; scripts/test.sh does)");
    assert!(
        out.status.success(),
        "OpenVDB could not read {} (pyopenvdb comes with Debian's python3-openvdb, which \
         scripts/test.sh installs):\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    match v {
        Value::Array(a) => a.iter().flat_map(floats).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap() as f32],
        other => panic!("not a number: {other}"),
    }
}

fn bools(v: &Value) -> Vec<bool> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect()
}

/// Checks OpenVDB's reading `read` of `g` (written over its `dims`): every value and flag
/// bit for bit, the class, background and transform.
fn check_grid<T: vdb::VdbValue>(read: &Value, g: &DenseGrid<T>, flat: impl Fn(&T) -> Vec<f32>) {
    assert_eq!(read["name"], g.name.as_str());
    let class = match g.class {
        GridClass::LevelSet => "level set",
        GridClass::FogVolume => "fog volume",
        GridClass::Unknown => "unknown",
    };
    assert_eq!(read["class"], class, "{}", g.name);
    assert_eq!(floats(&read["background"]), flat(&g.background));
    let origin = floats(&read["origin"]);
    let step = floats(&read["step"]);
    for a in 0..3 {
        assert!((origin[a] as f64 - g.origin[a]).abs() < 1e-6);
        assert!((step[a] as f64 - g.origin[a] - g.h).abs() < 1e-6);
    }
    let values = floats(&read["values"]);
    let expected: Vec<f32> = g.values.iter().flat_map(&flat).collect();
    assert_eq!(values.len(), expected.len());
    for (n, (a, b)) in values.iter().zip(&expected).enumerate() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{}: value {n}: {a} read, {b} written",
            g.name
        );
    }
    assert_eq!(bools(&read["active"]), g.active, "{}: active flags", g.name);
    let count = g.active.iter().filter(|&&a| a).count() as u64;
    assert_eq!(read["active_count"].as_u64(), Some(count), "{}", g.name);
}

/// A deterministic pseudo-random number in [0, 1) from an index.
fn hash01(n: usize) -> f32 {
    let mut x = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851_f42d;
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    (x % 1_000_000) as f32 / 1e6
}

#[test]
fn openvdb_reads_every_voxel_eddy_writes() {
    // 150 voxels along x: two lower internal nodes (128 voxels each), leaves cut by the
    // box's edges.
    let dims = [150usize, 20, 12];
    let n = dims.iter().product::<usize>();
    let at = |n: usize| {
        [
            n % dims[0],
            (n / dims[0]) % dims[1],
            n / (dims[0] * dims[1]),
        ]
    };
    let h = 0.02;
    let origin = [-0.02, 0.01, 0.5];
    // A level set: a sphere's signed distance in a band, +/- background elsewhere (the
    // inside holds whole leaves of -background, the outside tiles of +background).
    let band = 3.0 * h as f32;
    let sphere = |p: [usize; 3]| {
        let c = [40.0, 10.0, 6.0];
        let d = (0..3)
            .map(|a| (p[a] as f64 - c[a]).powi(2))
            .sum::<f64>()
            .sqrt();
        ((d - 7.5) * h) as f32
    };
    let level: Vec<f32> = (0..n).map(|i| sphere(at(i)).clamp(-band, band)).collect();
    let level_set = DenseGrid {
        name: "surface".into(),
        class: GridClass::LevelSet,
        dims,
        h,
        origin,
        background: band,
        active: level.iter().map(|v| v.abs() < band).collect(),
        values: level,
    };
    // A fog volume whose inactive voxels take every storage path: the background only
    // (most leaves), one other value, two values, and three or more (all values written).
    let fog_values: Vec<f32> = (0..n)
        .map(|i| {
            let p = at(i);
            match p[0] / 8 {
                2 => 0.25,
                3 => [0.25, 0.5][p[1] % 2],
                4 => [0.25, 0.5, 0.75][p[1] % 3],
                _ => 0.0,
            }
        })
        .collect();
    let fog_active: Vec<bool> = (0..n).map(|i| hash01(i) < 0.3).collect();
    let fog = DenseGrid {
        name: "density".into(),
        class: GridClass::FogVolume,
        dims,
        h,
        origin,
        background: 0.0,
        values: fog_values
            .iter()
            .zip(&fog_active)
            .enumerate()
            .map(|(i, (&v, &on))| if on { hash01(i + n) } else { v })
            .collect(),
        active: fog_active,
    };
    // A vector grid, active in a slab, negative zeros and all.
    let velocity = DenseGrid {
        name: "velocity".into(),
        class: GridClass::Unknown,
        dims,
        h,
        origin,
        background: [0.0; 3],
        values: (0..n)
            .map(|i| {
                if at(i)[2] < 5 {
                    [hash01(3 * i) - 0.5, hash01(3 * i + 1), -hash01(3 * i + 2)]
                } else {
                    [0.0; 3]
                }
            })
            .collect(),
        active: (0..n).map(|i| at(i)[2] < 5).collect(),
    };
    let dir = scratch!("every_voxel");
    let path = dir.join("grids.vdb");
    let grids = [
        Grid::Float(level_set.clone()),
        Grid::Float(fog.clone()),
        Grid::Vec3(velocity.clone()),
    ];
    let bytes = vdb::write_vdb(&path, &grids, "eddy test").unwrap();
    assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
    let read = read_with_openvdb(
        &path,
        &[("surface", dims), ("density", dims), ("velocity", dims)],
    );
    assert_eq!(read.len(), 3);
    assert_eq!(read[0]["creator"], "eddy test");
    check_grid(&read[0], &level_set, |v| vec![*v]);
    check_grid(&read[1], &fog, |v| vec![*v]);
    check_grid(&read[2], &velocity, |v| v.to_vec());
    // The same grids write the same bytes (the UUID comes from the contents).
    assert_eq!(
        vdb::encode(&grids, "eddy test").unwrap(),
        std::fs::read(&path).unwrap()
    );
}

#[test]
fn bad_grids_are_refused() {
    let g = |name: &str, n: usize| DenseGrid {
        name: name.into(),
        class: GridClass::Unknown,
        dims: [2, 2, 2],
        h: 0.1,
        origin: [0.0; 3],
        background: 0.0f32,
        values: vec![0.0; n],
        active: vec![false; n],
    };
    for (grids, what) in [
        (vec![Grid::Float(g("a", 7))], "7 values"),
        (vec![Grid::Float(g("", 8))], "not allowed"),
        (
            vec![Grid::Float(g("a", 8)), Grid::Float(g("a", 8))],
            "two grids",
        ),
    ] {
        let e = vdb::encode(&grids, "x").unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

/// `eddy run --dump-vdb` on the dam break: the volumes are listed frame by frame; OpenVDB
/// reads the velocity the VTK caches of the same frames hold on the FLUID cells (bit for
/// bit), zero elsewhere; the level set is negative exactly where the fog density is above
/// one half, and its narrow band is at most 3 voxels wide.
#[test]
fn a_liquid_run_s_volumes_match_its_field_caches() {
    let dir = scratch!("liquid_run");
    let out = common::eddy(&[
        "run",
        "dam_break",
        "--frames",
        "4",
        "--resolution",
        "16",
        "--dump-vdb",
        "2",
        "--dump-fields",
        "2",
        "--fields",
        "cell_type,velocity",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("3 OpenVDB volume(s) written"), "{stdout}");
    let scene = common::shipped("dam_break", 16);
    let cells = scene.dims().map(|d| d as usize);
    let h = scene.h();
    let lattice = cells.map(|c| c + 3);
    for frame in [0, 2, 4] {
        let path = dir.join(format!("volume_{frame:05}.vdb"));
        let read = read_with_openvdb(
            &path,
            &[
                ("surface", lattice),
                ("density", lattice),
                ("velocity", cells),
            ],
        );
        // The velocity against the VTK cache of the same frame.
        let vti = std::fs::read(dir.join(format!("fields_{frame:05}.vti"))).unwrap();
        let vtk = vtkio::Vtk::parse_xml(&vti[..]).unwrap();
        let vtkio::model::DataSet::ImageData { pieces, .. } = vtk.data else {
            panic!("not image data")
        };
        let vtkio::model::Piece::Inline(piece) = &pieces[0] else {
            panic!("not inline")
        };
        let array = |name: &str| -> Vec<f32> {
            piece
                .data
                .cell
                .iter()
                .find_map(|a| match a {
                    vtkio::model::Attribute::DataArray(d) if d.name == name => {
                        Some(d.data.clone().into_vec::<f32>().unwrap())
                    }
                    _ => None,
                })
                .unwrap()
        };
        let (types, velocity) = (array("cell_type"), array("velocity"));
        let v = floats(&read[2]["values"]);
        let active = bools(&read[2]["active"]);
        let mut fluid = 0;
        for c in 0..types.len() {
            let is_fluid = types[c] == eddy::scene::FLUID as f32;
            assert_eq!(active[c], is_fluid, "frame {frame}, cell {c}");
            for a in 0..3 {
                let expected = if is_fluid { velocity[3 * c + a] } else { 0.0 };
                assert_eq!(v[3 * c + a].to_bits(), expected.to_bits(), "cell {c}");
            }
            fluid += is_fluid as usize;
        }
        // (Frame 0 is written before the first substep marks any cell.)
        assert!(
            frame == 0 || fluid > 100,
            "frame {frame}: {fluid} FLUID cells"
        );
        // The level set against the fog density, and its band.
        let (surface, density) = (floats(&read[0]["values"]), floats(&read[1]["values"]));
        let band = (3.0 * h) as f32;
        let on = bools(&read[0]["active"]);
        let mut inside = 0;
        for n in 0..surface.len() {
            assert!(surface[n].abs() <= band, "node {n}: {}", surface[n]);
            // (A node on a wall cap is at distance -0: inside, on the surface.)
            if surface[n].is_sign_negative() {
                assert!(
                    density[n] >= 0.5,
                    "node {n}: inside at density {}",
                    density[n]
                );
                inside += 1;
            } else {
                assert!(
                    density[n] <= 0.5,
                    "node {n}: outside at density {}",
                    density[n]
                );
            }
            assert_eq!(on[n], surface[n].abs() < band, "node {n}");
        }
        assert!(inside > 100, "frame {frame}: {inside} nodes inside");
        let first = read[0]["origin"].as_array().unwrap()[0].as_f64().unwrap();
        assert!(
            (first + h).abs() < 1e-6,
            "the lattice starts one cell outside the wall"
        );
    }
}

#[test]
fn dump_vdb_refuses_zero_and_writes_smoke() {
    let dir = scratch!("smoke");
    let out = common::eddy(&[
        "run",
        "dam_break",
        "--frames",
        "1",
        "--dump-vdb",
        "0",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dump-vdb must be at least 1"));
    let out = common::eddy(&[
        "run",
        "smoke_plume",
        "--frames",
        "2",
        "--resolution",
        "48",
        "--dump-vdb",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--overwrite",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scene = common::shipped("smoke_plume", 48);
    let dims = scene.dims().map(|d| d as usize);
    let read = read_with_openvdb(
        &dir.join("volume_00002.vdb"),
        &[
            ("density", dims),
            ("dye", dims),
            ("temperature", dims),
            ("velocity", dims),
        ],
    );
    // The plume's source has dyed and heated the air by frame 2.
    assert!(floats(&read[0]["values"]).iter().any(|&d| d > 0.1));
    assert!(floats(&read[2]["values"]).iter().any(|&t| t != 0.0));
    assert_eq!(read[0]["class"], "fog volume");
}
