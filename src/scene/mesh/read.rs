//! Reading meshes: OBJ and STL (ASCII and binary), bounded before they are read,
//! degenerate triangles dropped, non-finite vertices refused.

use super::*;

/// The file formats eddy reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    Obj,
    Stl,
}

impl MeshFormat {
    /// The format of `path` by its extension (case-insensitive).
    pub fn of(path: &Path) -> Result<Self, MeshError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "obj" => Ok(Self::Obj),
            "stl" => Ok(Self::Stl),
            _ => Err(MeshError::Format {
                path: path.to_path_buf(),
                ext: path
                    .extension()
                    .map(|e| format!(".{}", e.to_string_lossy()))
                    .unwrap_or_default(),
            }),
        }
    }
}

/// Reads an OBJ or STL file (by its extension). Files over [`MAX_MESH_BYTES`] are refused
/// before they are read, meshes over [`MAX_MESH_TRIANGLES`] before their triangles are.
pub fn load_mesh(path: impl AsRef<Path>) -> Result<TriMesh, MeshError> {
    let path = path.as_ref();
    let format = MeshFormat::of(path)?;
    let bytes = read_limited(path)?;
    parse_mesh(&bytes, format, path)
}

/// The bytes of `path`, refused when it is not a regular file or holds more than
/// [`MAX_MESH_BYTES`].
pub fn read_limited(path: &Path) -> Result<Vec<u8>, MeshError> {
    use std::io::Read;
    let p = || path.to_path_buf();
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => MeshError::Missing { path: p() },
        _ => MeshError::Io {
            path: p(),
            cause: e.to_string(),
        },
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(MeshError::NotAFile { path: p() });
    }
    if meta.len() > MAX_MESH_BYTES {
        return Err(MeshError::TooLarge {
            path: p(),
            bytes: meta.len(),
        });
    }
    let mut bytes = Vec::new();
    crate::files::open_regular(path)
        .map_err(io)?
        .0
        .take(MAX_MESH_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_MESH_BYTES {
        return Err(MeshError::TooLarge {
            path: p(),
            bytes: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// Parses the bytes of a mesh file; `path` names it in messages.
pub fn parse_mesh(bytes: &[u8], format: MeshFormat, path: &Path) -> Result<TriMesh, MeshError> {
    if bytes.len() as u64 > MAX_MESH_BYTES {
        return Err(MeshError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
        });
    }
    let (vertices, triangles) = match format {
        MeshFormat::Obj => parse_obj(bytes, path)?,
        MeshFormat::Stl => parse_stl(bytes, path)?,
    };
    finish(vertices, triangles, path)
}

fn malformed(path: &Path, format: &'static str, reason: impl Into<String>) -> MeshError {
    MeshError::Malformed {
        path: path.to_path_buf(),
        format,
        reason: reason.into(),
    }
}

fn non_finite(path: &Path, what: String, v: [f64; 3]) -> MeshError {
    MeshError::NonFinite {
        path: path.to_path_buf(),
        what,
        value: format!("({}, {}, {})", v[0], v[1], v[2]),
    }
}

type Parsed = (Vec<[f64; 3]>, Vec<[u32; 3]>);

fn parse_obj(bytes: &[u8], path: &Path) -> Result<Parsed, MeshError> {
    const F: &str = "OBJ";
    if bytes.contains(&0) {
        return Err(malformed(
            path,
            F,
            "it holds binary data (NUL bytes), not OBJ text",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        malformed(
            path,
            F,
            format!(
                "it is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })?;
    // A first pass over the lines: the triangles the faces will make (refused above the
    // limit before anything is allocated for them) and every vertex's finiteness, by its
    // number in the file (OBJ counts from 1).
    let mut triangles = 0u64;
    let mut vertex = 0usize;
    for (line_no, line) in text.lines().enumerate() {
        let mut tokens = line.split_whitespace();
        match tokens.next() {
            Some("f") => triangles += tokens.count().saturating_sub(2) as u64,
            Some("v") => {
                vertex += 1;
                let v: Vec<f64> = tokens.take(3).filter_map(|t| t.parse().ok()).collect();
                if v.iter().any(|x| !x.is_finite()) {
                    let mut p = [0.0; 3];
                    p[..v.len()].copy_from_slice(&v);
                    return Err(non_finite(
                        path,
                        format!("vertex {vertex} (line {})", line_no + 1),
                        p,
                    ));
                }
            }
            _ => {}
        }
    }
    if triangles > MAX_MESH_TRIANGLES as u64 {
        return Err(MeshError::TooManyTriangles {
            path: path.to_path_buf(),
            count: triangles,
        });
    }
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut reader = std::io::Cursor::new(bytes);
    let (models, _materials) = tobj::load_obj_buf(&mut reader, &options, |_| {
        // Materials do not matter to an obstacle; `mtllib` files are not read.
        Err(tobj::LoadError::GenericFailure)
    })
    .map_err(|e| malformed(path, F, e.to_string()))?;
    let mut vertices = Vec::new();
    let mut tris = Vec::new();
    for m in &models {
        let base = vertices.len() as u32;
        vertices.extend(m.mesh.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]));
        tris.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [base + t[0], base + t[1], base + t[2]]),
        );
    }
    Ok((vertices, tris))
}

fn parse_stl(bytes: &[u8], path: &Path) -> Result<Parsed, MeshError> {
    if bytes.is_empty() {
        return Err(MeshError::Empty {
            path: path.to_path_buf(),
        });
    }
    let count = (bytes.len() >= 84)
        .then(|| u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as u64);
    let exact_binary = count.is_some_and(|n| 84 + 50 * n == bytes.len() as u64);
    let ascii = !exact_binary && bytes.trim_ascii_start().starts_with(b"solid");
    let format = if ascii { "ASCII STL" } else { "binary STL" };
    // A binary STL's header says how many triangles follow: checked before reading them.
    if !ascii {
        let Some(n) = count else {
            return Err(malformed(
                path,
                format,
                format!(
                    "{} bytes is shorter than a binary STL's 84-byte header",
                    bytes.len()
                ),
            ));
        };
        if n > MAX_MESH_TRIANGLES as u64 && exact_binary {
            return Err(MeshError::TooManyTriangles {
                path: path.to_path_buf(),
                count: n,
            });
        }
        if n > MAX_MESH_TRIANGLES as u64 {
            return Err(malformed(
                path,
                format,
                format!(
                    "its header says {n} triangles, more than the {MAX_MESH_TRIANGLES} eddy \
                     voxelises (and they would take {} bytes; the file has {})",
                    84 + 50 * n,
                    bytes.len()
                ),
            ));
        }
        if !exact_binary {
            return Err(malformed(
                path,
                format,
                format!(
                    "its header says {n} triangles, which take {} bytes, but it has {}",
                    84 + 50 * n,
                    bytes.len()
                ),
            ));
        }
    }
    // stl_io tells the two apart by a first line starting "solid ": a binary header may start
    // with "solid" too (some exporters write it), and an ASCII file may have no name.
    let data: std::borrow::Cow<[u8]> = if ascii {
        let start = bytes.len() - bytes.trim_ascii_start().len();
        let mut v = b"solid eddy".to_vec();
        v.extend_from_slice(&bytes[start + 5..]);
        std::borrow::Cow::Owned(v)
    } else if bytes.starts_with(b"solid") {
        let mut v = bytes.to_vec();
        v[..5].copy_from_slice(b"STL  ");
        std::borrow::Cow::Owned(v)
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    let mut cursor = std::io::Cursor::new(&data[..]);
    let reader = stl_io::create_stl_reader(&mut cursor)
        .map_err(|e| malformed(path, format, e.to_string()))?;
    let mut vertices: Vec<[f64; 3]> = Vec::new();
    let mut index: std::collections::HashMap<[u32; 3], u32> = Default::default();
    let mut tris = Vec::new();
    for (f, t) in reader.enumerate() {
        if f >= MAX_MESH_TRIANGLES {
            return Err(MeshError::TooManyTriangles {
                path: path.to_path_buf(),
                count: f as u64 + 1,
            });
        }
        let t = t.map_err(|e| malformed(path, format, format!("facet {}: {e}", f + 1)))?;
        let mut tri = [0u32; 3];
        for (c, v) in t.vertices.iter().enumerate() {
            let p = [v[0] as f64, v[1] as f64, v[2] as f64];
            if p.iter().any(|x| !x.is_finite()) {
                return Err(non_finite(
                    path,
                    format!("facet {}, vertex {}", f + 1, c + 1),
                    p,
                ));
            }
            let key = [v[0], v[1], v[2]].map(|x| (x + 0.0).to_bits());
            tri[c] = *index.entry(key).or_insert_with(|| {
                vertices.push(p);
                (vertices.len() - 1) as u32
            });
        }
        tris.push(tri);
    }
    Ok((vertices, tris))
}

/// Checks the vertices and drops the degenerate triangles.
fn finish(
    vertices: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    path: &Path,
) -> Result<TriMesh, MeshError> {
    if let Some((i, v)) = vertices
        .iter()
        .enumerate()
        .find(|(_, v)| v.iter().any(|x| !x.is_finite()))
    {
        return Err(non_finite(path, format!("vertex {}", i + 1), *v));
    }
    if triangles.is_empty() {
        return Err(MeshError::Empty {
            path: path.to_path_buf(),
        });
    }
    let total = triangles.len();
    let kept: Vec<[u32; 3]> = triangles
        .into_iter()
        .filter(|t| {
            t.iter().all(|&i| (i as usize) < vertices.len())
                && !degenerate(t.map(|i| DVec3::from(vertices[i as usize])))
        })
        .collect();
    if kept.is_empty() {
        return Err(MeshError::AllDegenerate {
            path: path.to_path_buf(),
            count: total,
        });
    }
    Ok(TriMesh {
        dropped: total - kept.len(),
        vertices,
        triangles: kept,
    })
}

/// Zero area (to rounding) or a repeated vertex.
fn degenerate(t: [DVec3; 3]) -> bool {
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    // Edges scaled to at most 1 first: a mesh at 1e200 m must not square past f64's range
    // (inf <= inf called every triangle degenerate).
    let m = e1.abs().max_element().max(e2.abs().max_element());
    if m == 0.0 || !m.is_finite() {
        return true;
    }
    let (e1, e2) = (e1 / m, e2 / m);
    let scale = e1.length_squared().max(e2.length_squared());
    e1.cross(e2).length_squared() <= 1e-24 * scale * scale
}
