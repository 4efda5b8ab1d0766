//! Files eddy writes: stats rows, binary PLY particle dumps and Matrix Market exports of
//! the pressure system.
//!
//! Nothing here leaves a half-written file behind an interruption: stats rows are written
//! whole and flushed as each frame completes, and every other file is written under a
//! temporary name and renamed into place once complete.

pub mod bodies;
pub mod checkpoint;
pub mod frozen;
pub mod probes;
pub mod stats;
pub mod vdb;
pub mod vtk;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::files::{ensure_writable_file, temp_path, write_atomically, TEMP_SUFFIX};

/// A CSV file that grows by one complete, flushed row per frame, so a run stopped at any
/// point (Ctrl-C, a kill, a crash) leaves every finished frame's row on disk.
pub struct RowWriter {
    file: File,
}

impl RowWriter {
    /// Creates (replaces) `path` with the header line. An existing `path` must be a
    /// regular file: a link or a FIFO there is refused, never written through.
    pub fn create(path: &Path, header: &str) -> std::io::Result<Self> {
        write_atomically(path, |w| writeln!(w, "{header}"))?;
        Self::append(path)
    }

    /// Opens `path`, which holds rows already, to append more (a regular file, not
    /// through a link).
    pub fn append(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            file: crate::files::open_append(path)?,
        })
    }

    /// Appends one line with a single write, then flushes it.
    pub fn row(&mut self, line: &str) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.file.write_all(&bytes)?;
        self.file.flush()
    }
}

/// Makes sure `dir` exists (creating it) and accepts new files, so a run learns that its
/// output folder is unusable before it simulates, not after.
pub fn ensure_writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".eddy-probe-{}{TEMP_SUFFIX}", std::process::id()));
    crate::files::create_exclusive(&probe)?;
    std::fs::remove_file(&probe)
}

/// Files of an output folder, split into those eddy writes and everything else.
#[derive(Clone, Debug, Default)]
pub struct FolderContents {
    pub eddy_files: Vec<PathBuf>,
    pub others: Vec<PathBuf>,
}

impl FolderContents {
    pub fn is_empty(&self) -> bool {
        self.eddy_files.is_empty() && self.others.is_empty()
    }
}

/// True for names eddy writes into an output folder: `stats.csv`, `bodies.csv`,
/// `particles_NNNNN.ply`, `mesh_NNNNN.ply`, the field caches (`fields_NNNNN.vti`,
/// `faces_{u,v,w}_NNNNN.vti`, `particles_NNNNN.vtp`, `fields.pvd`), the checkpoints
/// (`checkpoint_NNNNN.eddy`), the OpenVDB volumes (`volume_NNNNN.vdb`), the system export's files, and any of them with the
/// temporary suffix.
pub fn is_eddy_file(name: &str) -> bool {
    let name = name.strip_suffix(TEMP_SUFFIX).unwrap_or(name);
    let numbered = |prefix: &str, ext: &str| {
        name.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(ext))
            .is_some_and(|n| n.len() >= 5 && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let dump = [
        ("particles_", ".ply"),
        ("mesh_", ".ply"),
        ("fields_", ".vti"),
        ("faces_u_", ".vti"),
        ("faces_v_", ".vti"),
        ("faces_w_", ".vti"),
        ("particles_", ".vtp"),
        ("volume_", ".vdb"),
        ("checkpoint_", ".eddy"),
    ]
    .iter()
    .any(|(p, e)| numbered(p, e));
    dump || [
        "fields.pvd",
        "stats.csv",
        "bodies.csv",
        "probes.csv",
        "probes_units.csv",
        "A.mtx",
        "b.mtx",
        "p.mtx",
        "cells.csv",
    ]
    .contains(&name)
}

/// Lists `dir` (sorted); `None` when it does not exist.
pub fn survey_folder(dir: &Path) -> std::io::Result<Option<FolderContents>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut c = FolderContents::default();
    for entry in entries {
        let entry = entry?;
        let ours =
            entry.file_type()?.is_file() && entry.file_name().to_str().is_some_and(is_eddy_file);
        if ours {
            c.eddy_files.push(entry.path());
        } else {
            c.others.push(entry.path());
        }
    }
    c.eddy_files.sort();
    c.others.sort();
    Ok(Some(c))
}

/// Names of the PLY properties of an APIC affine matrix, row by row (c_u, c_v, c_w).
pub const AFFINE_PLY_PROPERTIES: [&str; 9] = [
    "c_ux", "c_uy", "c_uz", "c_vx", "c_vy", "c_vz", "c_wx", "c_wy", "c_wz",
];

/// Writes particles as binary little-endian PLY with float x y z vx vy vz, the layout
/// ParaView, Blender and Houdini read directly, followed by the nine entries of the APIC
/// affine matrix ([`AFFINE_PLY_PROPERTIES`]) when `affine` holds three rows per particle
/// (pass an empty slice for FLIP). Written under a temporary name and renamed.
pub fn write_ply(
    path: &Path,
    pos: &[[f32; 4]],
    vel: &[[f32; 4]],
    affine: &[[f32; 4]],
) -> std::io::Result<()> {
    let with_affine = !affine.is_empty();
    if with_affine && affine.len() != 3 * pos.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} affine rows for {} particles (three per particle)",
                affine.len(),
                pos.len()
            ),
        ));
    }
    write_atomically(path, |w| {
        write!(
            w,
            "ply\nformat binary_little_endian 1.0\ncomment written by eddy\nelement vertex {}\n\
             property float x\nproperty float y\nproperty float z\n\
             property float vx\nproperty float vy\nproperty float vz\n",
            pos.len()
        )?;
        if with_affine {
            for name in AFFINE_PLY_PROPERTIES {
                writeln!(w, "property float {name}")?;
            }
        }
        w.write_all(b"end_header\n")?;
        for (i, (p, v)) in pos.iter().zip(vel).enumerate() {
            for x in [p[0], p[1], p[2], v[0], v[1], v[2]] {
                w.write_all(&x.to_le_bytes())?;
            }
            if with_affine {
                for row in &affine[3 * i..3 * i + 3] {
                    for x in &row[..3] {
                        w.write_all(&x.to_le_bytes())?;
                    }
                }
            }
        }
        Ok(())
    })
}

/// Reads back position and velocity (the first six properties) of a file written by
/// [`write_ply`] (used by tests and tools).
pub fn read_ply(path: &Path) -> std::io::Result<Vec<[f32; 6]>> {
    let (_, rows) = read_ply_properties(path)?;
    Ok(rows
        .iter()
        .map(|r| std::array::from_fn(|i| r.get(i).copied().unwrap_or(0.0)))
        .collect())
}

/// Reads a file written by [`write_ply`]: its property names and every vertex's values.
pub fn read_ply_properties(path: &Path) -> std::io::Result<(Vec<String>, Vec<Vec<f32>>)> {
    let data = std::fs::read(path)?;
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let marker = b"end_header\n";
    let end = data
        .windows(marker.len())
        .position(|w| w == marker)
        .ok_or_else(|| bad("no end_header"))?
        + marker.len();
    let header = std::str::from_utf8(&data[..end]).map_err(|_| bad("header is not UTF-8"))?;
    let count: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| bad("no vertex count"))?;
    let names: Vec<String> = header
        .lines()
        .filter_map(|l| l.strip_prefix("property float "))
        .map(|n| n.trim().to_string())
        .collect();
    let stride = 4 * names.len();
    let body = &data[end..];
    if names.len() < 6 || body.len() != count * stride {
        return Err(bad("body size does not match the vertex count"));
    }
    let rows = body
        .chunks_exact(stride)
        .map(|c| {
            c.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .collect();
    Ok((names, rows))
}

pub use crate::sim::frames::ExportedSystem;

/// Writes `A.mtx` (symmetric coordinate, lower triangle), `b.mtx`, `p.mtx` (array) and
/// `cells.csv` (row -> i,j,k; rows are FLUID cells in cell-index order, 1-based in .mtx).
pub fn write_matrix_market(dir: &Path, sys: &ExportedSystem) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let [nx, ny, _] = sys.dims.map(|v| v as usize);
    let rows: Vec<usize> = (0..sys.a.len()).filter(|&c| sys.a[c][0] != 0.0).collect();
    let mut row_of = vec![usize::MAX; sys.a.len()];
    for (r, &c) in rows.iter().enumerate() {
        row_of[c] = r;
    }
    // Lower triangle: for row r (cell c) the entries to lower neighbours c-x, c-y, c-z plus the diagonal.
    let mut entries = Vec::new();
    for (r, &c) in rows.iter().enumerate() {
        let (i, j, k) = (c % nx, (c / nx) % ny, c / (nx * ny));
        for (axis, has, stride) in [(1, i > 0, 1), (2, j > 0, nx), (3, k > 0, nx * ny)] {
            if has {
                let m = c - stride;
                let v = sys.a[m][axis];
                if v != 0.0 && row_of[m] != usize::MAX {
                    entries.push((r, row_of[m], v));
                }
            }
        }
        entries.push((r, r, sys.a[c][0]));
    }
    // Each file is complete or absent: a run stopped mid-export leaves no truncated matrix.
    write_atomically(&dir.join("A.mtx"), |w| {
        writeln!(w, "%%MatrixMarket matrix coordinate real symmetric")?;
        writeln!(
            w,
            "% eddy pressure matrix over FLUID cells; rows map to cells in cells.csv"
        )?;
        writeln!(w, "{} {} {}", rows.len(), rows.len(), entries.len())?;
        for (r, c, v) in &entries {
            writeln!(w, "{} {} {}", r + 1, c + 1, v)?;
        }
        Ok(())
    })?;
    for (name, vec) in [("b.mtx", &sys.b), ("p.mtx", &sys.p)] {
        write_atomically(&dir.join(name), |w| {
            writeln!(w, "%%MatrixMarket matrix array real general")?;
            writeln!(w, "{} 1", rows.len())?;
            for &c in &rows {
                writeln!(w, "{:e}", vec[c])?;
            }
            Ok(())
        })?;
    }
    write_atomically(&dir.join("cells.csv"), |w| {
        writeln!(w, "row,i,j,k")?;
        for (r, &c) in rows.iter().enumerate() {
            writeln!(
                w,
                "{},{},{},{}",
                r + 1,
                c % nx,
                (c / nx) % ny,
                c / (nx * ny)
            )?;
        }
        Ok(())
    })
}

/// The largest stats.csv or bodies.csv a resumed run reads back (a million frames of a
/// thousand bodies' rows is well under it).
pub const MAX_CSV_BYTES: u64 = 64 << 30;

/// The fields of the row of `frame` in a CSV whose first column is the frame (stats.csv),
/// or None when it has no such row.
pub fn row_of_frame(path: &Path, frame: u64) -> std::io::Result<Option<Vec<String>>> {
    let text = crate::files::read_text_bounded(path, MAX_CSV_BYTES, "a CSV of frames")?;
    Ok(text.lines().skip(1).find_map(|line| {
        let fields: Vec<String> = line.split(',').map(str::to_string).collect();
        (fields.first()?.parse::<u64>().ok()? == frame).then_some(fields)
    }))
}

/// The last row of `frame` in a CSV whose first column is the frame (probes.csv writes a
/// row per substep), as its fields; None if it has none.
pub fn last_row_of_frame(path: &Path, frame: u64) -> std::io::Result<Option<Vec<String>>> {
    let text = crate::files::read_text_bounded(path, MAX_CSV_BYTES, "a CSV of frames")?;
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<String> = line.split(',').map(str::to_string).collect();
            (fields.first()?.parse::<u64>().ok()? == frame).then_some(fields)
        })
        .last())
}

/// Refuses an output folder that holds, under a name eddy writes (`stats.csv`,
/// `checkpoint_00003.eddy`, `fields.pvd`, ...), something that is not a regular file: a
/// symbolic link (eddy would write through it, or read another file as its own), a FIFO
/// (a read would wait for ever), a device or a folder. Said before any work.
pub fn refuse_foreign_outputs(dir: &Path) -> std::io::Result<()> {
    match survey_folder(dir)? {
        Some(c) => refuse_foreign_entries(&c),
        None => Ok(()),
    }
}

/// [`refuse_foreign_outputs`] on a folder already surveyed.
pub fn refuse_foreign_entries(c: &FolderContents) -> std::io::Result<()> {
    for p in &c.others {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // A temporary name is only ever unlinked and created anew, never written through.
        if !is_eddy_file(name) || name.ends_with(TEMP_SUFFIX) {
            continue;
        }
        let Some(what) = crate::files::irregular(p) else {
            continue;
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} has a name eddy writes but is {what}: eddy reads and writes only its own \
                 regular files there (remove or rename it)",
                crate::files::printable(&p.display().to_string(), 200)
            ),
        ));
    }
    Ok(())
}

/// A resumed run's CSV (`stats.csv`, `bodies.csv`: the frame first on every row): checks
/// its header is `header` and drops the rows of frames after `frame`, which a stopped run
/// left past its checkpoint (rewritten atomically). Returns how many rows went.
pub fn truncate_rows_after(path: &Path, header: &str, frame: u64) -> std::io::Result<usize> {
    let text = crate::files::read_text_bounded(path, MAX_CSV_BYTES, "a CSV of frames")?;
    let mut lines = text.lines();
    if lines.next() != Some(header) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "its header is not the one this run writes (another mode or eddy version)",
        ));
    }
    let mut kept = vec![header];
    let mut dropped = 0;
    for line in lines {
        let row_frame = line.split(',').next().and_then(|f| f.parse::<u64>().ok());
        match row_frame {
            Some(f) if f <= frame => kept.push(line),
            _ => dropped += 1,
        }
    }
    if dropped > 0 {
        write_atomically(path, |w| {
            for l in &kept {
                writeln!(w, "{l}")?;
            }
            Ok(())
        })?;
    }
    Ok(dropped)
}

/// The frame number of a numbered dump eddy writes (`particles_00012.ply`,
/// `faces_u_00012.vti`, `checkpoint_00012.eddy`, also while temporary), else None.
pub fn dump_frame(name: &str) -> Option<u64> {
    if !is_eddy_file(name) {
        return None;
    }
    let name = name.strip_suffix(TEMP_SUFFIX).unwrap_or(name);
    let stem = name.rsplit_once('.')?.0;
    let digits = stem.rsplit_once('_')?.1;
    digits.parse().ok()
}

/// Removes the numbered dumps of `dir` past `frame` and every temporary file eddy left
/// there (a resumed run writes them anew). Returns how many went.
pub fn remove_dumps_after(dir: &Path, frame: u64) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let temp = name.ends_with(TEMP_SUFFIX) && is_eddy_file(&name);
        if temp || dump_frame(&name).is_some_and(|f| f > frame) {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ply_round_trip() {
        let dir = std::env::temp_dir().join(format!("eddy-ply-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.ply");
        let pos = vec![[0.1, 0.2, 0.3, 0.0], [1.0, -2.0, 3.5, 0.0]];
        let vel = vec![[4.0, 5.0, 6.0, 0.0], [-1.0, 0.5, 0.25, 0.0]];
        write_ply(&path, &pos, &vel, &[]).unwrap();
        let back = read_ply(&path).unwrap();
        let expect = vec![
            [0.1, 0.2, 0.3, 4.0, 5.0, 6.0],
            [1.0, -2.0, 3.5, -1.0, 0.5, 0.25],
        ];
        assert_eq!(back, expect);
        // With APIC matrices: nine more properties per particle, the first six unchanged.
        let affine: Vec<[f32; 4]> = (0..6)
            .map(|r| [r as f32, r as f32 + 0.5, -(r as f32), 9.0])
            .collect();
        write_ply(&path, &pos, &vel, &affine).unwrap();
        assert_eq!(read_ply(&path).unwrap(), expect);
        let (names, rows) = read_ply_properties(&path).unwrap();
        assert_eq!(names[6..], AFFINE_PLY_PROPERTIES.map(String::from));
        assert_eq!(
            rows[1][6..],
            [3.0, 3.5, -3.0, 4.0, 4.5, -4.0, 5.0, 5.5, -5.0]
        );
        assert!(write_ply(&path, &pos, &vel, &affine[..4]).is_err());
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("eddy-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_failed_atomic_write_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("atomic");
        let path = dir.join("x.ply");
        std::fs::write(&path, b"old").unwrap();
        let err = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("interrupted"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(!temp_path(&path).exists());
        write_atomically(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!temp_path(&path).exists());
    }

    #[test]
    fn rows_are_on_disk_as_soon_as_they_are_written() {
        let dir = scratch("rows");
        let path = dir.join("stats.csv");
        let mut w = RowWriter::create(&path, "a,b").unwrap();
        w.row("1,2").unwrap();
        // Read while the writer is still open: nothing waits in a buffer.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
    }

    #[test]
    fn eddy_files_are_told_apart_from_the_users() {
        for n in [
            "stats.csv",
            "particles_00012.ply",
            "particles_123456.ply",
            "particles_00012.ply.tmp",
            "mesh_00012.ply",
            "volume_00012.vdb",
            "A.mtx",
            "cells.csv",
        ] {
            assert!(is_eddy_file(n), "{n}");
        }
        for n in [
            "notes.txt",
            "particles_12.ply",
            "particles_abcde.ply",
            "mesh_1.ply",
            "stats.csv.bak",
        ] {
            assert!(!is_eddy_file(n), "{n}");
        }
        let dir = scratch("survey");
        std::fs::write(dir.join("stats.csv"), "").unwrap();
        std::fs::write(dir.join("notes.txt"), "").unwrap();
        let c = survey_folder(&dir).unwrap().unwrap();
        assert_eq!(c.eddy_files, vec![dir.join("stats.csv")]);
        assert_eq!(c.others, vec![dir.join("notes.txt")]);
        assert!(survey_folder(&dir.join("absent")).unwrap().is_none());
    }

    #[test]
    fn writability_checks_leave_nothing_behind() {
        let dir = scratch("probe");
        ensure_writable_dir(&dir.join("new")).unwrap();
        assert_eq!(std::fs::read_dir(dir.join("new")).unwrap().count(), 0);
        ensure_writable_file(&dir.join("r.json")).unwrap();
        assert!(!dir.join("r.json").exists() && !temp_path(&dir.join("r.json")).exists());
        assert!(ensure_writable_file(&dir).is_err());
        assert!(ensure_writable_file(&dir.join("missing/r.json")).is_err());
    }

    #[test]
    fn matrix_market_lists_lower_triangle_of_fluid_rows() {
        // 3x1x1 grid: cells 0 and 1 FLUID and coupled, cell 2 AIR.
        let sys = ExportedSystem {
            dims: [3, 1, 1],
            a: vec![[1.0, -1.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [0.0; 4]],
            b: vec![1.0, 2.0, 0.0],
            p: vec![0.5, 0.25, 0.0],
        };
        let dir = std::env::temp_dir().join(format!("eddy-mtx-{}", std::process::id()));
        write_matrix_market(&dir, &sys).unwrap();
        let a = std::fs::read_to_string(dir.join("A.mtx")).unwrap();
        let lines: Vec<&str> = a.lines().filter(|l| !l.starts_with('%')).collect();
        assert_eq!(lines, vec!["2 2 3", "1 1 1", "2 1 -1", "2 2 2"]);
        let cells = std::fs::read_to_string(dir.join("cells.csv")).unwrap();
        assert_eq!(cells.lines().count(), 3);
    }
}
