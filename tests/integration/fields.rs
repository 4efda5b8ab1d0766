//! Field caches (`eddy run --dump-fields`): what eddy writes as VTK XML is read back by
//! vtkio's parser (not eddy's writer code), and by a raw reader here that shares no code
//! with either, and must equal the GPU's fields at every cell and
//! face, with the grid's extent, origin and spacing in metres, for a liquid and a smoke run;
//! the `.pvd` collection lists every file with its time.

use crate::common;
use eddy::output::vtk;
use eddy::scene::{Scene, SceneKind};
use eddy::sim::{liquid::views::Field, smoke::SmokeSimulation, Simulation};
use std::path::Path;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, VertexNumbers};

/// What vtkio reads from an image file: whole extent (inclusive ranges), origin, spacing,
/// and its (point or cell) arrays by name.
struct Image {
    extent: [[i32; 2]; 3],
    origin: [f32; 3],
    spacing: [f32; 3],
    arrays: Vec<(String, usize, Vec<f32>)>,
}

fn arrays(attrs: &[Attribute]) -> Vec<(String, usize, Vec<f32>)> {
    attrs
        .iter()
        .map(|a| match a {
            Attribute::DataArray(d) => {
                let values = match &d.data {
                    IOBuffer::F32(v) => v.clone(),
                    other => panic!("{}: not f32 data: {other:?}", d.name),
                };
                (d.name.clone(), d.num_comp(), values)
            }
            other => panic!("unexpected attribute {other:?}"),
        })
        .collect()
}

/// A second reader that shares no code with eddy or vtkio: the file's text scanned for
/// its `ImageData` attributes and each `DataArray`'s base64 block, whose first 8 bytes
/// (header_type UInt64, which the root element must declare, as ParaView reads it) give
/// the byte count of the little-endian f32 values that follow. Checks that it reads what
/// vtkio read: the extent, origin, spacing and every array, bit for bit.
fn check_with_raw_reader(path: &Path, img: &Image) {
    use base64::Engine;
    let text = std::fs::read_to_string(path).unwrap();
    let attr = |tag: &str, key: &str| -> String {
        let t = &text[text
            .find(&format!("<{tag} "))
            .unwrap_or_else(|| panic!("no <{tag}>"))..];
        let t = &t[..t.find('>').unwrap()];
        let k = t
            .find(&format!(" {key}=\""))
            .unwrap_or_else(|| panic!("<{tag}> has no {key}"));
        let v = &t[k + key.len() + 3..];
        v[..v.find('"').unwrap()].to_string()
    };
    assert_eq!(
        attr("VTKFile", "header_type"),
        "UInt64",
        "{}",
        path.display()
    );
    assert_eq!(attr("VTKFile", "byte_order"), "LittleEndian");
    let nums =
        |s: String| -> Vec<f64> { s.split_whitespace().map(|v| v.parse().unwrap()).collect() };
    let extent = nums(attr("ImageData", "WholeExtent"));
    let want: Vec<f64> = img
        .extent
        .iter()
        .flat_map(|r| [r[0] as f64, r[1] as f64])
        .collect();
    assert_eq!(extent, want, "extent");
    assert_eq!(
        nums(attr("ImageData", "Origin")),
        img.origin.map(|v| v as f64).to_vec()
    );
    assert_eq!(
        nums(attr("ImageData", "Spacing")),
        img.spacing.map(|v| v as f64).to_vec()
    );
    let mut rest = text.as_str();
    let mut seen = 0;
    while let Some(at) = rest.find("<DataArray ") {
        rest = &rest[at..];
        let open = rest.find('>').unwrap();
        let head = &rest[..open];
        let name = head
            .split("Name=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(
            head.contains("type=\"Float32\"") && head.contains("format=\"binary\""),
            "{head}"
        );
        let close = rest.find("</DataArray>").unwrap();
        let raw = base64::engine::general_purpose::STANDARD
            .decode(rest[open + 1..close].trim())
            .unwrap_or_else(|e| panic!("{name}: not base64: {e}"));
        let bytes = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
        assert_eq!(bytes, raw.len() - 8, "{name}: its size word");
        let values: Vec<f32> = raw[8..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let (_, _, theirs) = array(img, name);
        assert!(
            values.len() == theirs.len()
                && values
                    .iter()
                    .zip(theirs)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}: the raw reader and vtkio disagree"
        );
        seen += 1;
        rest = &rest[close..];
    }
    assert_eq!(seen, img.arrays.len(), "arrays");
}

fn read_image(path: &Path) -> Image {
    let vtk = vtkio::Vtk::import(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let DataSet::ImageData {
        extent,
        origin,
        spacing,
        pieces,
        ..
    } = vtk.data
    else {
        panic!("{}: not image data", path.display());
    };
    let vtkio::model::Extent::Ranges(r) = extent else {
        panic!("no ranges")
    };
    let Piece::Inline(piece) = &pieces[0] else {
        panic!("not inline")
    };
    let mut all = arrays(&piece.data.cell);
    all.extend(arrays(&piece.data.point));
    Image {
        extent: r.map(|x| [*x.start(), *x.end()]),
        origin,
        spacing,
        arrays: all,
    }
}

fn array<'a>(img: &'a Image, name: &str) -> &'a (String, usize, Vec<f32>) {
    img.arrays
        .iter()
        .find(|a| a.0 == name)
        .unwrap_or_else(|| panic!("no array {name}"))
}

#[test]
fn liquid_field_caches_read_back_equal_the_gpu_fields() {
    let mut scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/dam_break.ron"))
        .unwrap()
        .with_resolution(16);
    scene.name = "fields".into();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    // The divergence is a view's field, as `eddy run --fields` keeps it.
    sim.keep_grid_views();
    for _ in 0..3 {
        sim.step_frame().unwrap();
    }
    let names: Vec<String> = vtk::LIQUID_FIELDS.iter().map(|s| s.to_string()).collect();
    let frame = sim.field_frame(&names).unwrap();
    let dir = scratch!("liquid");
    vtk::write_cells(&dir.join("cells.vti"), &frame).unwrap();
    let [nx, ny, nz] = sim.fields.params.n;
    let h = scene.h() as f32;
    let img = read_image(&dir.join("cells.vti"));
    check_with_raw_reader(&dir.join("cells.vti"), &img);
    assert_eq!(img.extent, [[0, nx as i32], [0, ny as i32], [0, nz as i32]]);
    assert_eq!(img.origin, [0.0; 3]);
    assert_eq!(img.spacing, [h; 3]);
    for (name, field) in [
        ("cell_type", Field::CellType),
        ("pressure", Field::Pressure),
        ("divergence", Field::DivergenceAfter),
        ("level_set", Field::LevelSet),
    ] {
        let gpu = sim.read_field(field).unwrap().values;
        let (_, comps, values) = array(&img, name);
        assert_eq!(*comps, 1);
        assert_eq!(values, &gpu, "{name}");
        assert!(gpu.iter().any(|v| *v != 0.0), "{name} is all zeros");
    }
    // Faces: u at (i h, (j + 1/2) h, (k + 1/2) h), one point per face.
    let u = sim.read_field(Field::U).unwrap();
    for (comp, axis, field) in [(0, "u", Field::U), (1, "v", Field::V), (2, "w", Field::W)] {
        let path = dir.join(format!("faces_{axis}.vti"));
        vtk::write_faces(&path, &frame, comp, axis).unwrap();
        let img = read_image(&path);
        let mut dims = [nx, ny, nz];
        dims[comp] += 1;
        assert_eq!(img.extent, dims.map(|d| [0, d as i32 - 1]), "{axis}");
        let mut origin = [0.5 * h; 3];
        origin[comp] = 0.0;
        assert_eq!(img.origin, origin, "{axis}");
        assert_eq!(
            array(&img, axis).2,
            sim.read_field(field).unwrap().values,
            "{axis}"
        );
    }
    // The cell-centred velocity is the mean of the two faces, at a cell in the moving column.
    let (i, j, k) = (3u32, 2u32, 2u32);
    let c = (i + nx * (j + ny * k)) as usize;
    let expect = 0.5 * (u.get(i, j, k) + u.get(i + 1, j, k));
    let (_, comps, vel) = array(&img, "velocity");
    assert_eq!(*comps, 3);
    assert!(expect != 0.0 && (vel[3 * c] - expect).abs() <= 1e-6 * expect.abs());
    // Particles: one vertex each, the velocity as point data.
    let (pos, pvel) = sim.read_particles().unwrap();
    vtk::write_particles(&dir.join("p.vtp"), &pos, &pvel).unwrap();
    let vtk = vtkio::Vtk::import(dir.join("p.vtp")).unwrap();
    let DataSet::PolyData { pieces, .. } = vtk.data else {
        panic!("not polydata")
    };
    let Piece::Inline(p) = &pieces[0] else {
        panic!("not inline")
    };
    let IOBuffer::F32(points) = &p.points else {
        panic!("points not f32")
    };
    assert_eq!(points.len(), 3 * pos.len());
    assert_eq!(&points[3 * 17..3 * 18], &pos[17][..3]);
    let Some(VertexNumbers::XML { connectivity, .. }) = &p.verts else {
        panic!("no vertices: {:?}", p.verts)
    };
    assert_eq!(connectivity.len(), pos.len());
    let (_, comps, v) = &arrays(&p.data.point)[0];
    assert_eq!(*comps, 3);
    assert_eq!(&v[3 * 17..3 * 18], &pvel[17][..3]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn smoke_field_caches_are_2d_images_of_the_slice() {
    let scene = Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/smoke_plume.ron"
    ))
    .unwrap()
    .with_resolution(48);
    assert_eq!(scene.kind, SceneKind::Smoke);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.keep_grid_views();
    for _ in 0..5 {
        sim.step_frame().unwrap();
    }
    let names: Vec<String> = vtk::SMOKE_FIELDS.iter().map(|s| s.to_string()).collect();
    let frame = sim.field_frame(&names).unwrap();
    let dir = scratch!("smoke");
    vtk::write_cells(&dir.join("cells.vti"), &frame).unwrap();
    let [nx, ny, _] = sim.dims();
    let img = read_image(&dir.join("cells.vti"));
    check_with_raw_reader(&dir.join("cells.vti"), &img);
    // A 2D image of points at the cells' centres.
    assert_eq!(img.extent, [[0, nx as i32 - 1], [0, ny as i32 - 1], [0, 0]]);
    let h = scene.h() as f32;
    assert_eq!(img.origin, [0.5 * h, 0.5 * h, 0.0]);
    assert_eq!(img.spacing[..2], [h, h]);
    let view = |f| sim.read_view(f).unwrap().values;
    use eddy::sim::smoke::views::SmokeField;
    assert_eq!(array(&img, "temperature").2, view(SmokeField::Temperature));
    assert_eq!(array(&img, "pressure").2, view(SmokeField::Pressure));
    assert!(array(&img, "temperature").2.iter().any(|t| *t > 0.1));
    let dye = &array(&img, "dye");
    assert_eq!((dye.1, dye.2.len()), (3, 3 * (nx * ny) as usize));
    let vel = sim.read_centre_velocity().unwrap();
    let (_, comps, v) = array(&img, "velocity");
    assert_eq!(*comps, 3);
    let c = (nx / 2 + nx * (ny / 4)) as usize;
    assert_eq!(
        [v[3 * c], v[3 * c + 1], v[3 * c + 2]],
        [vel[c][0], vel[c][1], 0.0]
    );
    assert!(vel[c][1] > 0.0, "no plume at the probe: {:?}", vel[c]);
    vtk::write_faces(&dir.join("v.vti"), &frame, 1, "v").unwrap();
    let img = read_image(&dir.join("v.vti"));
    check_with_raw_reader(&dir.join("v.vti"), &img);
    assert_eq!(img.extent, [[0, nx as i32 - 1], [0, ny as i32], [0, 0]]);
    assert_eq!(img.origin, [0.5 * scene.h() as f32, 0.0, 0.0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn eddy_run_dump_fields_writes_a_collection_paraview_opens() {
    let out = std::env::temp_dir().join(format!("eddy-fields-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args([
                "run",
                "dam_break",
                "--resolution",
                "12",
                "--frames",
                "4",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let o = run(&["--dump-fields", "2", "--fields", "pressure,faces"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pvd = std::fs::read_to_string(out.join("fields.pvd")).unwrap();
    // Frames 0, 2 and 4: the cells and the three face grids each.
    for frame in ["00000", "00002", "00004"] {
        for f in ["fields_", "faces_u_", "faces_v_", "faces_w_"] {
            let name = format!("{f}{frame}.vti");
            assert!(
                pvd.contains(&format!("file=\"{name}\"")),
                "{name} not in {pvd}"
            );
            read_image(&out.join(&name));
        }
    }
    assert!(
        !out.join("particles_00002.vtp").exists(),
        "particles were not asked for"
    );
    let times: Vec<f64> = pvd
        .split("timestep=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 12);
    assert!((times[4] - 2.0 / 60.0).abs() < 1e-6, "{times:?}");
    let img = read_image(&out.join("fields_00002.vti"));
    assert_eq!(img.arrays.len(), 1);
    let _ = std::fs::remove_dir_all(&out);
    for (args, needle) in [
        (
            vec!["--dump-fields", "2", "--fields", "vorticity"],
            "not a field of a liquid scene",
        ),
        (vec!["--dump-fields", "0"], "at least 1"),
    ] {
        let o = run(&args);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{err}");
        assert!(!out.exists() || std::fs::read_dir(&out).unwrap().count() == 0);
    }
}

/// Where the solids cut faces, the face files carry each face's open fraction beside the
/// velocity, as the solve used it.
#[test]
fn face_caches_carry_the_cut_faces() {
    let scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/obstacle.ron"))
        .unwrap()
        .with_resolution(24);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.step_frame().unwrap();
    let frame = sim.field_frame(&["faces".to_string()]).unwrap();
    let dir = scratch!("cut");
    for (comp, axis, field) in [
        (0, "u", Field::OpenU),
        (1, "v", Field::OpenV),
        (2, "w", Field::OpenW),
    ] {
        let path = dir.join(format!("faces_{axis}.vti"));
        vtk::write_faces(&path, &frame, comp, axis).unwrap();
        let img = read_image(&path);
        check_with_raw_reader(&path, &img);
        let open = &array(&img, "open_fraction").2;
        assert_eq!(open, &sim.read_field(field).unwrap().values, "{axis}");
        assert!(
            open.iter().any(|f| *f > 0.0 && *f < 1.0),
            "{axis}: no cut face"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
