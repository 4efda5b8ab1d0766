//! Field caches ParaView, VisIt and Python's VTK readers open: the grid fields as VTK XML
//! image data (`.vti`), particles as VTK XML polydata (`.vtp`), written with the `vtkio`
//! crate (binary arrays, base64 inline, uncompressed), and one `.pvd` collection per run
//! that lists every file with its simulated time so ParaView opens the run as a time series.
//!
//! Geometry in metres: the cell grid is an image of `n` cells of size `h` from the origin,
//! its fields cell data; a smoke slice is a 2D image of points at the cells' centres, its
//! fields point data. The MAC face velocities are their
//! own images of points, one per component, at the faces' centres: the u faces at
//! (i h, (j + 1/2) h, (k + 1/2) h), and so on.

use std::io::Write;
use std::path::{Path, PathBuf};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataArray, DataSet, ElementType, Extent, IOBuffer,
    ImageDataPiece, Piece, PolyDataPiece, Version, VertexNumbers, Vtk,
};

pub use crate::sim::frames::{CellArray, FieldFrame};

fn image(extent_points: [u32; 3], origin: [f64; 3], h: f64, data: Attributes) -> Vtk {
    let range = |n: u32| 0..=(n as i32 - 1).max(0);
    let extent = Extent::Ranges([
        range(extent_points[0]),
        range(extent_points[1]),
        range(extent_points[2]),
    ]);
    Vtk {
        version: Version::new_xml(1, 0),
        title: String::new(),
        byte_order: ByteOrder::LittleEndian,
        file_path: None,
        data: DataSet::ImageData {
            extent: extent.clone(),
            origin: origin.map(|v| v as f32),
            spacing: [h as f32; 3],
            meta: None,
            pieces: vec![Piece::Inline(Box::new(ImageDataPiece { extent, data }))],
        },
    }
}

fn array(name: &str, components: u32, values: Vec<f32>) -> Attribute {
    Attribute::DataArray(DataArray {
        name: name.to_string(),
        elem: ElementType::Generic(components),
        data: IOBuffer::F32(values),
    })
}

fn write_vtk(path: &Path, vtk: Vtk) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    vtk.write_xml(&mut bytes)
        .map_err(|e| std::io::Error::other(format!("VTK XML: {e}")))?;
    super::write_atomically(path, |w| w.write_all(&bytes))
}

/// Writes the cell arrays of `frame` as image data: in 3D, (n + 1) points per axis and the
/// arrays as cell data; a slice as a 2D image whose points are the cells' centres (origin
/// (h/2, h/2, 0)), the arrays as point data (2D cell data is read as no cells by some
/// readers, vtkio among them).
pub fn write_cells(path: &Path, frame: &FieldFrame) -> std::io::Result<()> {
    let cells = frame.dims.iter().map(|&v| v as usize).product::<usize>();
    for a in &frame.cells {
        if a.values.len() != cells * a.components as usize {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{}: {} values for {cells} cells of {} components",
                    a.name,
                    a.values.len(),
                    a.components
                ),
            ));
        }
    }
    let arrays: Vec<Attribute> = frame
        .cells
        .iter()
        .map(|a| array(&a.name, a.components, a.values.clone()))
        .collect();
    let vtk = if frame.is_slice() {
        let h = 0.5 * frame.h;
        let data = Attributes {
            point: arrays,
            cell: vec![],
        };
        image(
            [frame.dims[0], frame.dims[1], 1],
            [h, h, 0.0],
            frame.h,
            data,
        )
    } else {
        let data = Attributes {
            point: vec![],
            cell: arrays,
        };
        image(frame.dims.map(|v| v + 1), [0.0; 3], frame.h, data)
    };
    write_vtk(path, vtk)
}

/// Writes face component `comp` of `frame` (0 u, 1 v, 2 w) as image data of points at the
/// faces' centres, with the point array `name`.
pub fn write_faces(
    path: &Path,
    frame: &FieldFrame,
    comp: usize,
    name: &str,
) -> std::io::Result<()> {
    let Some(faces) = &frame.faces else {
        return Ok(());
    };
    let (dims, origin) = frame.face_grid(comp);
    let count = dims.iter().map(|&v| v as usize).product::<usize>();
    if faces[comp].len() != count {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{name}: {} values for {count} faces", faces[comp].len()),
        ));
    }
    let mut point = vec![array(name, 1, faces[comp].clone())];
    if let Some(open) = frame.open.as_ref().filter(|o| o[comp].len() == count) {
        point.push(array("open_fraction", 1, open[comp].clone()));
    }
    let data = Attributes {
        point,
        cell: vec![],
    };
    write_vtk(path, image(dims, origin, frame.h, data))
}

/// Writes particles as polydata: one vertex per particle at its position, with its velocity
/// as point data.
pub fn write_particles(path: &Path, pos: &[[f32; 4]], vel: &[[f32; 4]]) -> std::io::Result<()> {
    let n = pos.len();
    let points: Vec<f32> = pos.iter().flat_map(|p| [p[0], p[1], p[2]]).collect();
    let velocity: Vec<f32> = vel
        .iter()
        .take(n)
        .flat_map(|v| [v[0], v[1], v[2]])
        .collect();
    let piece = PolyDataPiece {
        points: IOBuffer::F32(points),
        verts: Some(VertexNumbers::XML {
            connectivity: (0..n as u64).collect(),
            offsets: (1..=n as u64).collect(),
        }),
        lines: None,
        polys: None,
        strips: None,
        data: Attributes {
            point: vec![array("velocity", 3, velocity)],
            cell: vec![],
        },
    };
    let vtk = Vtk {
        version: Version::new_xml(1, 0),
        title: String::new(),
        byte_order: ByteOrder::LittleEndian,
        file_path: None,
        data: DataSet::inline(piece),
    };
    write_vtk(path, vtk)
}

/// The `.pvd` collection of a run: every file written so far with its simulated time and
/// part (ParaView groups the parts of one time into a multiblock). Rewritten (atomically)
/// after each frame's files, so a stopped run leaves a collection of complete files.
#[derive(Clone, Debug, Default)]
pub struct Collection {
    path: PathBuf,
    entries: Vec<(f64, usize, String)>,
}

impl Collection {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            entries: vec![],
        }
    }

    /// The collection at `path` as an earlier run wrote it, keeping the files of frames up
    /// to `frame` (a resumed run goes on from there). The cache files on disk decide what
    /// it lists: an entry whose file is gone is dropped, and a file of a kept frame that it
    /// does not list (a collection missing, damaged or cut short) is added at its frame's
    /// time, `frame * frame_dt` (the listed times are the clock's own, kept as they were).
    /// Returns the collection and how many files had to be added back.
    pub fn resume(path: PathBuf, frame: u64, frame_dt: f64) -> std::io::Result<(Self, usize)> {
        let text = match crate::files::read_text_bounded(&path, MAX_PVD_BYTES, "a .pvd collection")
        {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            // Not UTF-8, or too large: damaged, rebuilt from the files.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => String::new(),
            Err(e) => return Err(e),
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let attr = |line: &str, key: &str| -> Option<String> {
            let start = line.find(&format!(" {key}=\""))? + key.len() + 3;
            let end = start + line[start..].find('"')?;
            Some(line[start..end].to_string())
        };
        let mut listed: std::collections::HashMap<String, f64> = Default::default();
        for line in text.lines().filter(|l| l.contains("<DataSet")) {
            let (Some(t), Some(file)) = (attr(line, "timestep"), attr(line, "file")) else {
                continue;
            };
            let file = xml_unescape(&file);
            if let Ok(t) = t.parse::<f64>() {
                listed.insert(file, t);
            }
        }
        // Every cache file of a kept frame, in the order a frame writes them (its parts).
        let mut on_disk: Vec<(u64, usize, String)> = vec![];
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().to_string();
            let (Some(part), Some(f)) = (cache_part(&name), super::dump_frame(&name)) else {
                continue;
            };
            if f <= frame && entry.file_type()?.is_file() {
                on_disk.push((f, part, name));
            }
        }
        on_disk.sort();
        let mut entries = vec![];
        let mut added = 0;
        let mut last_frame = None;
        let mut part = 0;
        for (f, _, name) in on_disk {
            if last_frame != Some(f) {
                last_frame = Some(f);
                part = 0;
            }
            let time = match listed.get(&name) {
                Some(t) => *t,
                None => {
                    added += 1;
                    f as f64 * frame_dt
                }
            };
            entries.push((time, part, name));
            part += 1;
        }
        Ok((Self { path, entries }, added))
    }

    /// Adds `file` (a name relative to the collection's folder) at `time`, as `part`.
    pub fn add(&mut self, time: f64, part: usize, file: &str) {
        self.entries.push((time, part, file.to_string()));
    }

    pub fn write(&self) -> std::io::Result<()> {
        super::write_atomically(&self.path, |w| {
            writeln!(w, "<?xml version=\"1.0\"?>")?;
            writeln!(
                w,
                "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">"
            )?;
            writeln!(w, "  <Collection>")?;
            for (time, part, file) in &self.entries {
                writeln!(
                    w,
                    "    <DataSet timestep=\"{time:.9e}\" group=\"\" part=\"{part}\" file=\"{}\"/>",
                    xml_escape(file)
                )?;
            }
            writeln!(w, "  </Collection>")?;
            writeln!(w, "</VTKFile>")
        })
    }
}

/// The largest `.pvd` a resumed run reads back (an entry is about 100 bytes).
const MAX_PVD_BYTES: u64 = 1 << 30;

/// The cache files a frame writes, in the order of their parts: the cells, the u, v and w
/// faces, the particles; None for any other name.
fn cache_part(name: &str) -> Option<usize> {
    let name = name
        .strip_suffix(crate::files::TEMP_SUFFIX)
        .map_or(Some(name), |_| None)?;
    ["fields_", "faces_u_", "faces_v_", "faces_w_", "particles_"]
        .iter()
        .zip([".vti", ".vti", ".vti", ".vti", ".vtp"])
        .position(|(p, e)| {
            name.strip_prefix(p)
                .and_then(|r| r.strip_suffix(e))
                .is_some_and(|n| n.len() >= 5 && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The inverse of [`xml_escape`].
fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The fields `--fields` may name, per mode (`all` takes every one the mode has).
pub const LIQUID_FIELDS: [&str; 7] = [
    "cell_type",
    "pressure",
    "velocity",
    "faces",
    "divergence",
    "level_set",
    "particles",
];
pub const SMOKE_FIELDS: [&str; 8] = [
    "cell_type",
    "pressure",
    "velocity",
    "faces",
    "divergence",
    "vorticity",
    "temperature",
    "dye",
];
