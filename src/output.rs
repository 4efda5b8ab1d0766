//! Files eddy writes: binary PLY particle dumps and Matrix Market exports of the pressure
//! system.

use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes particles as binary little-endian PLY with float x y z vx vy vz, the layout
/// ParaView, Blender and Houdini read directly.
pub fn write_ply(path: &Path, pos: &[[f32; 4]], vel: &[[f32; 4]]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    write!(
        w,
        "ply\nformat binary_little_endian 1.0\ncomment written by eddy\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\n\
         property float vx\nproperty float vy\nproperty float vz\nend_header\n",
        pos.len()
    )?;
    for (p, v) in pos.iter().zip(vel) {
        for x in [p[0], p[1], p[2], v[0], v[1], v[2]] {
            w.write_all(&x.to_le_bytes())?;
        }
    }
    w.flush()
}

/// Reads back a file written by [`write_ply`] (used by tests and tools).
pub fn read_ply(path: &Path) -> std::io::Result<Vec<[f32; 6]>> {
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
    let body = &data[end..];
    if body.len() != count * 24 {
        return Err(bad("body size does not match the vertex count"));
    }
    Ok(body
        .chunks_exact(24)
        .map(|c| {
            let mut v = [0f32; 6];
            for (i, x) in v.iter_mut().enumerate() {
                *x = f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
            }
            v
        })
        .collect())
}

/// The pressure system of one solve in plain data, rows restricted to FLUID cells.
pub struct ExportedSystem {
    pub dims: [u32; 3],
    /// Packed matrix per cell (diag, +x, +y, +z).
    pub a: Vec<[f32; 4]>,
    pub b: Vec<f32>,
    pub p: Vec<f32>,
}

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
    let mut w = BufWriter::new(std::fs::File::create(dir.join("A.mtx"))?);
    writeln!(w, "%%MatrixMarket matrix coordinate real symmetric")?;
    writeln!(
        w,
        "% eddy pressure matrix over FLUID cells; rows map to cells in cells.csv"
    )?;
    writeln!(w, "{} {} {}", rows.len(), rows.len(), entries.len())?;
    for (r, c, v) in entries {
        writeln!(w, "{} {} {}", r + 1, c + 1, v)?;
    }
    w.flush()?;
    for (name, vec) in [("b.mtx", &sys.b), ("p.mtx", &sys.p)] {
        let mut w = BufWriter::new(std::fs::File::create(dir.join(name))?);
        writeln!(w, "%%MatrixMarket matrix array real general")?;
        writeln!(w, "{} 1", rows.len())?;
        for &c in &rows {
            writeln!(w, "{:e}", vec[c])?;
        }
        w.flush()?;
    }
    let mut w = BufWriter::new(std::fs::File::create(dir.join("cells.csv"))?);
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
    w.flush()
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
        write_ply(&path, &pos, &vel).unwrap();
        let back = read_ply(&path).unwrap();
        assert_eq!(
            back,
            vec![
                [0.1, 0.2, 0.3, 4.0, 5.0, 6.0],
                [1.0, -2.0, 3.5, -1.0, 0.5, 0.25]
            ]
        );
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
