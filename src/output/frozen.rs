//! The folder a frozen pressure system is saved to (`eddy run --export-system DIR`) and
//! loaded from (`eddy bench --system DIR`, the solver lab):
//!
//! - `A.mtx`, `b.mtx`, `p.mtx`, `cells.csv`: the Matrix Market export over the FLUID cells
//!   (written by [`super::write_matrix_market`]; for other tools, not read back);
//! - `system.json`: `format` ("eddy-frozen-system"), `version` ([`VERSION`]), `dims`, `h`,
//!   `origin`, the solve's `settings` and how the simulation's `solve` ended, and `files`:
//!   per raw file its name, element type, entries and CRC-32;
//! - raw little-endian arrays over every cell of the grid, i fastest then j then k:
//!   `cell_type.u32` (0 AIR, 1 FLUID, 2 SOLID), `A.f32x4` (diag, +x, +y, +z per cell),
//!   `b.f32`, `surface.f32`, `solution.f32`, `x0.f32` where the solve was warm-started,
//!   and `body_id.u32` (0, or k + 1 in the cells of body k) where rigid bodies were in the
//!   solve through the strong coupling; their term's bodies are then in system.json's
//!   `bodies` (`project`, and per body the 36 words of strong.wgsl's `CoupleBody` as
//!   unsigned integers, bit for bit; `deflate` where the solve deflated the bodies' modes,
//!   absent in folders written before it existed), with `cover.u32` over every face (u, v, w back to
//!   back: the covering body's index + 1 in the top 8 bits and its share of the face in
//!   unorm24, src/sim/bodies/coupling.wgsl). Version 1 folders (no bodies) still load, and
//!   version 2 folders (bodies as whole cells, no `cover.u32`) take their cover from
//!   `body_id.u32`.
//!
//! Loading checks the version, every file's presence, size and checksum, and the sizes
//! against the grid, and fails with one line naming the folder and what is wrong.

use super::{write_atomically, write_matrix_market, ExportedSystem};
use crate::scene::PressureSettings;
use crate::sim::bodies::strong::CoupleBody;
use crate::sim::lab::{FrozenBodies, FrozenSolve, FrozenSystem};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// The `format` field of system.json.
pub const FORMAT: &str = "eddy-frozen-system";
/// The version this build writes and reads. Version 4 added system.json's own checksum
/// (`crc32`); folders of versions 1 to 3 still load, their raw files checked as before.
pub const VERSION: u32 = 4;
/// The largest system.json eddy reads (its bodies' words are its largest part).
const MAX_JSON_BYTES: u64 = 64 << 20;

/// Words of one body in system.json (strong.wgsl's `CoupleBody`).
const COUPLE_WORDS: usize = std::mem::size_of::<CoupleBody>() / 4;

/// The bodies of a system with the strong coupling's term.
#[derive(Serialize, Deserialize)]
struct BodiesHeader {
    project: bool,
    /// The solve deflated the bodies' modes (absent in older folders, solved without).
    #[serde(default)]
    deflate: bool,
    /// Per body, `CoupleBody`'s words as u32 (exact bits).
    couple: Vec<Vec<u32>>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    name: String,
    /// "u32" or "f32".
    element: String,
    /// Elements per cell.
    components: u32,
    bytes: u64,
    crc32: u32,
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    dims: [u32; 3],
    h: f32,
    origin: String,
    settings: PressureSettings,
    solve: Option<FrozenSolve>,
    fluid_cells: usize,
    files: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bodies: Option<BodiesHeader>,
}

fn bytes_of<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    // Little-endian on every target eddy builds for (wgpu's own buffers assume it).
    bytemuck::cast_slice(v).to_vec()
}

/// Writes `sys` to `dir` (created if needed): the Matrix Market files, the raw arrays and
/// system.json (last, so a folder with a system.json is complete).
pub fn save_frozen_system(dir: &Path, sys: &FrozenSystem) -> std::io::Result<()> {
    sys.check()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    write_matrix_market(
        dir,
        &ExportedSystem {
            dims: sys.dims,
            a: sys.a.clone(),
            b: sys.b.clone(),
            p: sys.solution.clone(),
        },
    )?;
    let mut raws: Vec<(&str, &str, u32, Vec<u8>)> = vec![
        ("cell_type.u32", "u32", 1, bytes_of(&sys.cell_type)),
        ("A.f32x4", "f32", 4, bytes_of(&sys.a)),
        ("b.f32", "f32", 1, bytes_of(&sys.b)),
        ("surface.f32", "f32", 1, bytes_of(&sys.surface)),
        ("solution.f32", "f32", 1, bytes_of(&sys.solution)),
    ];
    if let Some(x0) = &sys.x0 {
        raws.push(("x0.f32", "f32", 1, bytes_of(x0)));
    }
    if let Some(fb) = &sys.bodies {
        raws.push(("body_id.u32", "u32", 1, bytes_of(&fb.body_id)));
        raws.push(("cover.u32", "u32", 1, bytes_of(&fb.cover)));
    }
    let mut files = Vec::new();
    for (name, element, components, data) in raws {
        write_atomically(&dir.join(name), |w| w.write_all(&data))?;
        files.push(FileEntry {
            name: name.into(),
            element: element.into(),
            components,
            bytes: data.len() as u64,
            crc32: crc32fast::hash(&data),
        });
    }
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        dims: sys.dims,
        h: sys.h,
        origin: sys.origin.clone(),
        settings: sys.settings.clone(),
        solve: sys.solve.clone(),
        fluid_cells: sys.fluid_cells(),
        files,
        bodies: sys.bodies.as_ref().map(|fb| BodiesHeader {
            project: fb.project,
            deflate: fb.deflate,
            couple: fb
                .couple
                .iter()
                .map(|c| bytemuck::cast_slice::<CoupleBody, u32>(std::slice::from_ref(c)).to_vec())
                .collect(),
        }),
    };
    let mut value = serde_json::to_value(&header).map_err(std::io::Error::other)?;
    let crc = json_crc(&value);
    value["crc32"] = crc.into();
    let text = serde_json::to_string_pretty(&value).map_err(std::io::Error::other)?;
    write_atomically(&dir.join("system.json"), |w| w.write_all(text.as_bytes()))
}

/// The CRC-32 of system.json's contents without its `crc32` field, in serde_json's compact
/// form of the parsed value (keys sorted), so the pretty layout on disk does not matter.
/// A system.json edited on purpose loads again once its `crc32` is set to this.
pub fn json_crc(value: &serde_json::Value) -> u32 {
    let mut v = value.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("crc32");
    }
    crc32fast::hash(&serde_json::to_vec(&v).unwrap_or_default())
}

/// Reads a folder [`save_frozen_system`] wrote. The error is one line.
pub fn load_frozen_system(dir: &Path) -> Result<FrozenSystem, String> {
    let at = |what: String| folder_error(dir, what);
    let h = read_header(dir)?;
    // Dims are read from the file: multiplied without wrapping.
    let cells = crate::files::checked_product(&h.dims.map(|d| d as u64)).unwrap_or(u64::MAX);
    if cells == 0 || cells > u32::MAX as u64 {
        return Err(at(format!("grid {:?} is not a valid grid", h.dims)));
    }
    let faces = crate::scene::fractions::face_counts(h.dims.map(|v| v as usize))
        .iter()
        .sum::<usize>() as u64;
    let raw = RawFiles {
        dir,
        files: &h.files,
        dims: h.dims,
        cells,
        faces,
    };
    let sys = FrozenSystem {
        dims: h.dims,
        h: h.h,
        cell_type: cast(raw.need("cell_type.u32", 1)?),
        a: cast(raw.need("A.f32x4", 4)?),
        b: cast(raw.need("b.f32", 1)?),
        surface: cast(raw.need("surface.f32", 1)?),
        solution: cast(raw.need("solution.f32", 1)?),
        x0: raw.read("x0.f32", 1, false)?.map(cast),
        settings: h.settings,
        solve: h.solve,
        origin: h.origin,
        bodies: match &h.bodies {
            None => None,
            Some(bh) => Some(load_bodies(&raw, bh, h.h)?),
        },
    };
    sys.check().map_err(at)?;
    Ok(sys)
}

/// The one-line error for the folder `dir`: the folder, then what is wrong.
fn folder_error(dir: &Path, what: String) -> String {
    format!("system folder {}: {what}", dir.display())
}

/// Reads and checks the folder `dir`'s system.json: its format, its version and, from
/// version 4, its own checksum.
fn read_header(dir: &Path) -> Result<Header, String> {
    let at = |what: String| folder_error(dir, what);
    if !dir.is_dir() {
        return Err(at("not a folder".into()));
    }
    let json = dir.join("system.json");
    let text =
        crate::files::read_text_bounded(&json, MAX_JSON_BYTES, "a system.json").map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                at("no system.json (write one with `eddy run SCENE --export-system DIR`)".into())
            } else {
                at(format!("cannot read system.json: {e}"))
            }
        })?;
    // The version first, so a newer layout is named as such rather than as a parse error.
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| at(format!("system.json is not JSON: {e}")))?;
    if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(at(format!("system.json is not an {FORMAT} file")));
    }
    match v.get("version").and_then(|x| x.as_u64()) {
        Some(n) if (1..=VERSION as u64).contains(&n) => {}
        Some(n) => {
            return Err(at(format!(
                "format version {n}, this eddy reads versions 1 to {VERSION}"
            )))
        }
        None => return Err(at("system.json has no version".into())),
    }
    if v.get("version").and_then(|x| x.as_u64()) >= Some(4) {
        let crc = json_crc(&v);
        match v.get("crc32").and_then(|c| c.as_u64()) {
            Some(c) if c == crc as u64 => {}
            Some(c) => {
                return Err(at(format!(
                    "system.json fails its checksum (crc32 {crc:08x}, it says {c:08x}): the \
                     file was changed or damaged"
                )))
            }
            None => return Err(at("system.json has no crc32 (version 4 has one)".into())),
        }
    }
    let h: Header = serde_json::from_value(v).map_err(|e| at(format!("system.json: {e}")))?;
    Ok(h)
}

/// Reinterprets the bytes of a raw file as its elements.
fn cast<T: bytemuck::Pod>(d: Vec<u8>) -> Vec<T> {
    bytemuck::pod_collect_to_vec(&d)
}

/// The raw files of a system folder as its system.json lists them, with the sizes its grid
/// gives them.
struct RawFiles<'a> {
    dir: &'a Path,
    files: &'a [FileEntry],
    dims: [u32; 3],
    cells: u64,
    faces: u64,
}

impl RawFiles<'_> {
    /// Reads the raw file `name`, checking its size against the grid and its checksum; a
    /// file that is not `required` and not listed reads as None.
    /// `components` per cell; a per-face file passes 0 and has one per face.
    fn read(&self, name: &str, components: u64, required: bool) -> Result<Option<Vec<u8>>, String> {
        let at = |what: String| folder_error(self.dir, what);
        let Some(entry) = self.files.iter().find(|f| f.name == name) else {
            return if required {
                Err(at(format!("system.json lists no {name}")))
            } else {
                Ok(None)
            };
        };
        let (want, comps) = if components == 0 {
            (self.faces * 4, 1)
        } else {
            (self.cells * 4 * components, components)
        };
        if entry.bytes != want || entry.components as u64 != comps {
            return Err(at(format!(
                "system.json gives {name} {} bytes, the grid {:?} needs {want}",
                entry.bytes, self.dims
            )));
        }
        // A file of another size than the grid needs is refused before it is read.
        let (file, len) = crate::files::open_regular(&self.dir.join(name)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                at(format!("{name} is missing"))
            } else {
                at(format!("cannot read {name}: {e}"))
            }
        })?;
        if len != want {
            return Err(at(format!(
                "{name} has {len} bytes, expected {want} ({} the grid {:?})",
                if len < want {
                    "truncated: shorter than"
                } else {
                    "longer than"
                },
                self.dims
            )));
        }
        let mut data = Vec::with_capacity(want as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(file, want), &mut data)
            .map_err(|e| at(format!("cannot read {name}: {e}")))?;
        if data.len() as u64 != want {
            return Err(at(format!("{name} changed while it was read")));
        }
        let crc = crc32fast::hash(&data);
        if crc != entry.crc32 {
            return Err(at(format!(
                "{name} fails its checksum (crc32 {crc:08x}, system.json says {:08x}): the file was changed or damaged",
                entry.crc32
            )));
        }
        Ok(Some(data))
    }

    /// Reads the raw file `name`, which system.json must list.
    fn need(&self, name: &str, comps: u64) -> Result<Vec<u8>, String> {
        Ok(self.read(name, comps, true)?.unwrap_or_default())
    }
}

/// The rigid bodies of the strong coupling's term, from system.json's `bodies` (`bh`) and
/// the raw files; version 2 folders take their face cover from `body_id.u32` (cells of
/// size `h`).
fn load_bodies(raw: &RawFiles, bh: &BodiesHeader, h: f32) -> Result<FrozenBodies, String> {
    let at = |what: String| folder_error(raw.dir, what);
    let mut couple = Vec::with_capacity(bh.couple.len());
    for (k, words) in bh.couple.iter().enumerate() {
        if words.len() != COUPLE_WORDS {
            return Err(at(format!(
                "system.json: body {k} has {} words, a body has {COUPLE_WORDS}",
                words.len()
            )));
        }
        couple.push(bytemuck::pod_read_unaligned::<CoupleBody>(
            bytemuck::cast_slice(words),
        ));
    }
    let body_id: Vec<u32> = cast(raw.need("body_id.u32", 1)?);
    let cover = match raw.read("cover.u32", 0, false)? {
        Some(d) => cast(d),
        None => {
            let g = crate::reference::Grid {
                nx: raw.dims[0] as usize,
                ny: raw.dims[1] as usize,
                nz: raw.dims[2] as usize,
                h: h as f64,
            };
            crate::reference::bodies::whole_cell_cover(g, &body_id, couple.len())
        }
    };
    Ok(FrozenBodies {
        body_id,
        cover,
        couple,
        project: bh.project,
        deflate: bh.deflate,
    })
}

/// Writes a race ([`crate::sim::lab::race`]) as CSV: one row per
/// preconditioner (`preconditioner,iterations,final_residual,dispatches,time_ms,...`).
pub fn write_race_csv(path: &Path, rows: &[crate::sim::lab::RaceRow]) -> std::io::Result<()> {
    write_atomically(path, |w| {
        writeln!(
            w,
            "preconditioner,iterations,final_residual,dispatches,time_ms,status,true_residual,\
             dispatches_per_iteration,timer,wall_ms,lambda_min,lambda_max,kappa,bound_iterations,\
             setup_ms"
        )?;
        for r in rows {
            let s = r.spectrum;
            let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:e}"));
            writeln!(
                w,
                "{},{},{:e},{},{:.4},{:?},{},{},{},{:.4},{},{},{},{},{:.4}",
                r.preconditioner,
                r.iterations,
                r.residual,
                r.iterations * r.dispatches_per_iteration,
                r.time_ms,
                r.status,
                f(r.true_residual),
                r.dispatches_per_iteration,
                r.timer,
                r.wall_ms,
                f(s.map(|s| s.lambda_min)),
                f(s.map(|s| s.lambda_max)),
                f(s.map(|s| s.kappa)),
                s.map_or(String::new(), |s| format!("{:.1}", s.bound_iterations)),
                r.setup_ms,
            )?;
        }
        Ok(())
    })
}

/// Writes the residual histories of a race as CSV: `preconditioner,iteration,residual`
/// (max|r| / max|b| before the first and after each iteration).
pub fn write_race_history_csv(
    path: &Path,
    rows: &[crate::sim::lab::RaceRow],
) -> std::io::Result<()> {
    write_atomically(path, |w| {
        writeln!(w, "preconditioner,iteration,residual")?;
        for r in rows {
            for (k, v) in r.history.iter().enumerate() {
                writeln!(w, "{},{k},{v:e}", r.preconditioner)?;
            }
        }
        Ok(())
    })
}
