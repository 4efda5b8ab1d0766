//! Mesh obstacles: triangle meshes read from OBJ and STL files, placed in the scene (scale,
//! rotation, translation) and voxelised robustly. Pure CPU, in f64.
//!
//! - **Distance**: the exact closest point on the triangles, found through a bounding-volume
//!   hierarchy (an AABB tree over the triangles, split at the median of the longest axis).
//! - **Inside or outside**: the generalised winding number w (Jacobson et al. 2013, "Robust
//!   inside-outside segmentation using generalized winding numbers"): the signed solid angle
//!   the triangles subtend at a point, over 4 pi. It is 1 inside a closed surface and 0
//!   outside, and degrades gracefully where the surface has holes, gaps or overlaps: a point
//!   is inside where |w| > 1/2 (the absolute value also accepts a mesh wound inside out).
//! - **Fast winding numbers** (after Barill et al. 2018): each tree node keeps the sum of its
//!   triangles' area vectors, their area-weighted centre and a radius about it; a node
//!   farther from the point than `BETA` times its radius contributes its first-order (dipole)
//!   term, the nodes near the point their exact triangles. A point whose |w| comes out near
//!   1/2 is evaluated again with a stricter `beta`, then exactly, so the approximation cannot
//!   flip a classification that the exact sum would make.
//!
//! A point outside the mesh's bounding box is outside (an open surface subtends less than
//! a hemisphere from there). The signed distance is -d inside and +d outside.

use glam::{DQuat, DVec3};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// Largest mesh file eddy reads, bytes (checked before the file is read).
pub const MAX_MESH_BYTES: u64 = 256 << 20;
/// Most triangles a mesh may have (checked before the triangles are read where the format
/// says how many there are: a binary STL's header, an OBJ's face lines).
pub const MAX_MESH_TRIANGLES: usize = 2_000_000;
/// A node farther from the query point than `BETA` times its radius contributes its dipole
/// term to the winding number.
const BETA: f64 = 2.0;
/// The stricter `beta` for points whose first estimate is near 1/2, and the band around 1/2
/// that triggers each refinement.
const FINE_BETA: f64 = 8.0;
const AMBIGUOUS: f64 = 0.1;
const STILL_AMBIGUOUS: f64 = 0.02;
/// Triangles per leaf of the tree.
const LEAF_SIZE: usize = 4;

/// What can go wrong reading a mesh; every message is one line naming the file.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum MeshError {
    #[error("mesh {path}: no such file")]
    Missing { path: PathBuf },
    #[error("mesh {path}: not a regular file")]
    NotAFile { path: PathBuf },
    #[error("mesh {path}: cannot read it: {cause}")]
    Io { path: PathBuf, cause: String },
    #[error("mesh {path}: unknown format {ext:?}; eddy reads .obj and .stl files")]
    Format { path: PathBuf, ext: String },
    #[error(
        "mesh {path}: {bytes} bytes is more than the {max} bytes (256 MiB) a mesh file may have",
        max = MAX_MESH_BYTES
    )]
    TooLarge { path: PathBuf, bytes: u64 },
    #[error(
        "mesh {path}: {count} triangles is more than the {max} eddy voxelises",
        max = MAX_MESH_TRIANGLES
    )]
    TooManyTriangles { path: PathBuf, count: u64 },
    #[error("mesh {path}: not a readable {format} file: {reason}")]
    Malformed {
        path: PathBuf,
        format: &'static str,
        reason: String,
    },
    #[error("mesh {path}: holds no triangles")]
    Empty { path: PathBuf },
    #[error(
        "mesh {path}: all {count} of its triangles are degenerate (zero area or a repeated \
         vertex)"
    )]
    AllDegenerate { path: PathBuf, count: usize },
    #[error("mesh {path}: {what} is not finite: {value}")]
    NonFinite {
        path: PathBuf,
        what: String,
        value: String,
    },
}

/// A triangle mesh: vertices and triangles (indices into `vertices`, counter-clockwise seen
/// from outside for a correctly wound mesh; the inside test accepts either winding).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    pub vertices: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
    /// Degenerate triangles (zero area, a repeated vertex) dropped while reading.
    pub dropped: usize,
}

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

/// Where a mesh goes in the scene: scaled by `scale` about the file's origin, turned by
/// `rotation_deg` about the world x, then y, then z axes (as a body's `rotation_deg`), then
/// moved by `translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    pub scale: f64,
    pub rotation_deg: (f64, f64, f64),
    pub translation: (f64, f64, f64),
}

impl Placement {
    fn rotation(&self) -> DQuat {
        let r = self.rotation_deg;
        (DQuat::from_rotation_z(r.2.to_radians())
            * DQuat::from_rotation_y(r.1.to_radians())
            * DQuat::from_rotation_x(r.0.to_radians()))
        .normalize()
    }

    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let t = self.translation;
        (self.rotation() * (DVec3::from(p) * self.scale) + DVec3::new(t.0, t.1, t.2)).to_array()
    }
}

impl TriMesh {
    /// The mesh placed by `placement` (same triangles, moved vertices).
    pub fn placed(&self, placement: &Placement) -> TriMesh {
        let q = placement.rotation();
        let t = placement.translation;
        let t = DVec3::new(t.0, t.1, t.2);
        TriMesh {
            vertices: self
                .vertices
                .iter()
                .map(|p| (q * (DVec3::from(*p) * placement.scale) + t).to_array())
                .collect(),
            triangles: self.triangles.clone(),
            dropped: self.dropped,
        }
    }

    /// Bounds (min, max) of the vertices the triangles use.
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        for t in &self.triangles {
            for &i in t {
                let p = DVec3::from(self.vertices[i as usize]);
                lo = lo.min(p);
                hi = hi.max(p);
            }
        }
        (lo.to_array(), hi.to_array())
    }

    /// The enclosed volume by the divergence theorem, m^3: negative for a mesh wound inside
    /// out, only meaningful for a closed one.
    pub fn signed_volume(&self) -> f64 {
        self.corners()
            .map(|[a, b, c]| a.dot(b.cross(c)) / 6.0)
            .sum()
    }

    fn corners(&self) -> impl Iterator<Item = [DVec3; 3]> + '_ {
        self.triangles
            .iter()
            .map(|t| t.map(|i| DVec3::from(self.vertices[i as usize])))
    }
}

/// A node of the tree: its box, what the winding number's far field needs, and its
/// triangles (a leaf) or its children (`first` and `first + 1`).
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    lo: DVec3,
    hi: DVec3,
    /// Area-weighted centre of the triangles, the sum of their area vectors (n A), their
    /// total area, and the largest distance from `centre` to any of their points.
    centre: DVec3,
    area_normal: DVec3,
    area: f64,
    radius: f64,
    first: u32,
    /// Triangles of a leaf; 0 for an inner node.
    count: u32,
}

/// An AABB tree over a mesh's triangles, with each node's dipole moment.
#[derive(Clone, Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// The triangles' corners, in leaf order.
    tris: Vec<[DVec3; 3]>,
}

/// Deepest tree the fixed query stacks hold: a median split halves the triangles at each
/// level, so [`MAX_MESH_TRIANGLES`] needs about 20.
const MAX_DEPTH: usize = 64;

impl Bvh {
    pub fn new(mesh: &TriMesh) -> Self {
        let corners: Vec<[DVec3; 3]> = mesh.corners().collect();
        let centroids: Vec<DVec3> = corners.iter().map(|t| (t[0] + t[1] + t[2]) / 3.0).collect();
        let mut order: Vec<u32> = (0..corners.len() as u32).collect();
        let mut nodes = vec![Node::default()];
        let mut stack = vec![(0usize, 0usize, corners.len())];
        while let Some((ni, s, e)) = stack.pop() {
            let items = &mut order[s..e];
            let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
            for &i in items.iter() {
                lo = lo.min(centroids[i as usize]);
                hi = hi.max(centroids[i as usize]);
            }
            let extent = hi - lo;
            let axis = if extent.x >= extent.y && extent.x >= extent.z {
                0
            } else if extent.y >= extent.z {
                1
            } else {
                2
            };
            if e - s <= LEAF_SIZE || extent[axis] <= 0.0 {
                nodes[ni].first = s as u32;
                nodes[ni].count = (e - s) as u32;
                continue;
            }
            let mid = (e - s) / 2;
            items.select_nth_unstable_by(mid, |a, b| {
                centroids[*a as usize][axis]
                    .total_cmp(&centroids[*b as usize][axis])
                    .then(a.cmp(b))
            });
            let left = nodes.len();
            nodes.push(Node::default());
            nodes.push(Node::default());
            nodes[ni].first = left as u32;
            stack.push((left, s, s + mid));
            stack.push((left + 1, s + mid, e));
        }
        let tris: Vec<[DVec3; 3]> = order.iter().map(|&i| corners[i as usize]).collect();
        // Children come after their parent: fill the nodes from the last one back.
        for ni in (0..nodes.len()).rev() {
            let n = nodes[ni];
            let filled = if n.count > 0 {
                leaf_node(&tris[n.first as usize..(n.first + n.count) as usize], n)
            } else {
                let (a, b) = (nodes[n.first as usize], nodes[n.first as usize + 1]);
                let area = a.area + b.area;
                let centre = if area > 0.0 {
                    (a.centre * a.area + b.centre * b.area) / area
                } else {
                    0.5 * (a.centre + b.centre)
                };
                Node {
                    lo: a.lo.min(b.lo),
                    hi: a.hi.max(b.hi),
                    centre,
                    area_normal: a.area_normal + b.area_normal,
                    area,
                    radius: (a.radius + (a.centre - centre).length())
                        .max(b.radius + (b.centre - centre).length()),
                    ..n
                }
            };
            nodes[ni] = filled;
        }
        Self { nodes, tris }
    }

    /// Distance from `p` to the nearest point of the triangles.
    pub fn distance(&self, p: [f64; 3]) -> f64 {
        self.closest_sq(DVec3::from(p), f64::INFINITY).sqrt()
    }

    /// Whether `p` lies on a triangle (distance exactly 0).
    fn touches(&self, p: DVec3) -> bool {
        self.closest_sq(p, f64::MIN_POSITIVE) == 0.0
    }

    /// The squared distance to the nearest triangle, or `bound` when none is nearer than
    /// its square root. Nearest child first, boxes no nearer than the best so far skipped.
    fn closest_sq(&self, p: DVec3, bound: f64) -> f64 {
        let mut best = bound;
        let mut stack = [0u32; MAX_DEPTH];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = &self.nodes[stack[top] as usize];
            if box_distance_sq(n, p) >= best {
                continue;
            }
            if n.count > 0 {
                for t in &self.tris[n.first as usize..(n.first + n.count) as usize] {
                    best = best.min((closest_point_on_triangle(p, t) - p).length_squared());
                }
                continue;
            }
            let (a, b) = (n.first, n.first + 1);
            let da = box_distance_sq(&self.nodes[a as usize], p);
            let db = box_distance_sq(&self.nodes[b as usize], p);
            let (near, far, dnear, dfar) = if da <= db {
                (a, b, da, db)
            } else {
                (b, a, db, da)
            };
            if dfar < best {
                stack[top] = far;
                top += 1;
            }
            if dnear < best {
                stack[top] = near;
                top += 1;
            }
        }
        best
    }

    /// The generalised winding number at `p`, nodes farther than `beta` radii taken by their
    /// dipole term (`beta = f64::INFINITY` sums every triangle exactly).
    pub fn winding_number_with(&self, p: [f64; 3], beta: f64) -> f64 {
        let q = DVec3::from(p);
        let mut sum = 0.0;
        let mut stack = [0u32; MAX_DEPTH];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = &self.nodes[stack[top] as usize];
            let d = n.centre - q;
            let d2 = d.length_squared();
            let far = beta * n.radius;
            if d2 > far * far {
                sum += d.dot(n.area_normal) / (d2 * d2.sqrt());
            } else if n.count > 0 {
                for t in &self.tris[n.first as usize..(n.first + n.count) as usize] {
                    sum += solid_angle(t, q);
                }
            } else {
                stack[top] = n.first;
                stack[top + 1] = n.first + 1;
                top += 2;
            }
        }
        sum / (4.0 * std::f64::consts::PI)
    }

    /// The winding number as the inside test uses it: fast, refined near 1/2.
    pub fn winding_number(&self, p: [f64; 3]) -> f64 {
        let w = self.winding_number_with(p, BETA);
        if (w.abs() - 0.5).abs() > AMBIGUOUS {
            return w;
        }
        let w = self.winding_number_with(p, FINE_BETA);
        if (w.abs() - 0.5).abs() > STILL_AMBIGUOUS {
            return w;
        }
        self.winding_number_with(p, f64::INFINITY)
    }

    fn bounds(&self) -> (DVec3, DVec3) {
        (self.nodes[0].lo, self.nodes[0].hi)
    }

    /// Inside: within the bounding box and |w| > 1/2.
    pub fn inside(&self, p: [f64; 3]) -> bool {
        let (lo, hi) = self.bounds();
        let q = DVec3::from(p);
        q.cmpge(lo).all() && q.cmple(hi).all() && self.winding_number(p).abs() > 0.5
    }

    /// Signed distance: -d inside, +d outside.
    pub fn sdf(&self, p: [f64; 3]) -> f64 {
        let d = self.distance(p);
        if self.inside(p) {
            -d
        } else {
            d
        }
    }

    /// `sdf(p) < 0` without the full distance query.
    pub fn contains(&self, p: [f64; 3]) -> bool {
        self.inside(p) && !self.touches(DVec3::from(p))
    }
}

fn leaf_node(tris: &[[DVec3; 3]], n: Node) -> Node {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let mut area_normal = DVec3::ZERO;
    let mut weighted = DVec3::ZERO;
    let mut area = 0.0;
    for t in tris {
        for v in t {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let an = 0.5 * (t[1] - t[0]).cross(t[2] - t[0]);
        let a = an.length();
        area_normal += an;
        area += a;
        weighted += a * (t[0] + t[1] + t[2]) / 3.0;
    }
    let centre = if area > 0.0 {
        weighted / area
    } else {
        0.5 * (lo + hi)
    };
    let radius = tris
        .iter()
        .flatten()
        .map(|v| (*v - centre).length())
        .fold(0.0, f64::max);
    Node {
        lo,
        hi,
        centre,
        area_normal,
        area,
        radius,
        ..n
    }
}

fn box_distance_sq(n: &Node, p: DVec3) -> f64 {
    let d = (n.lo - p).max(p - n.hi).max(DVec3::ZERO);
    d.length_squared()
}

/// The signed solid angle triangle `t` subtends at `q` (Van Oosterom and Strackee 1983):
/// positive when `q` is behind it (on the side its counter-clockwise normal points away
/// from).
fn solid_angle(t: &[DVec3; 3], q: DVec3) -> f64 {
    let (a, b, c) = (t[0] - q, t[1] - q, t[2] - q);
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let det = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    2.0 * det.atan2(den)
}

/// The point of triangle `t` nearest `p`, by the region of the triangle's plane `p`
/// projects into (a vertex, an edge, or the face).
fn closest_point_on_triangle(p: DVec3, t: &[DVec3; 3]) -> DVec3 {
    let [a, b, c] = *t;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// Runs `f` on every index in `0..n` on all cores, in chunks; results in index order (the
/// same whatever the scheduling).
pub(crate) fn parallel_cells<T: Send + Copy + Default>(
    n: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(16);
    let mut out = vec![T::default(); n];
    let chunk = n.div_ceil(threads * 8).max(1024);
    let work = Mutex::new(out.chunks_mut(chunk).enumerate());
    std::thread::scope(|s| {
        for _ in 0..threads.min(n.div_ceil(chunk)) {
            s.spawn(|| loop {
                let next = work.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((c, slice)) = next else { break };
                for (k, o) in slice.iter_mut().enumerate() {
                    *o = f(c * chunk + k);
                }
            });
        }
    });
    out
}

/// The signed distance of `mesh` at the centre of every cell of a `dims` grid of cells
/// `h` (cell (i, j, k) centred at ((i + 0.5) h_x, (j + 0.5) h_y, (k + 0.5) h_z), index
/// i + nx (j + ny k)): negative inside, in the units of the mesh.
pub fn voxelise(mesh: &TriMesh, dims: [u32; 3], h: [f64; 3]) -> Vec<f32> {
    let bvh = Bvh::new(mesh);
    let [nx, ny, nz] = dims.map(|n| n as usize);
    parallel_cells(nx * ny * nz, |c| {
        let p = [
            ((c % nx) as f64 + 0.5) * h[0],
            ((c / nx % ny) as f64 + 0.5) * h[1],
            ((c / (nx * ny)) as f64 + 0.5) * h[2],
        ];
        bvh.sdf(p) as f32
    })
}

/// Which cells of a grid are inside a mesh, over the box of cells its bounds reach.
#[derive(Clone, Debug, PartialEq)]
pub struct CellMask {
    /// First cell of the box and its size in cells.
    pub lo: [u32; 3],
    pub size: [u32; 3],
    pub inside: Vec<bool>,
}

impl CellMask {
    pub fn get(&self, i: u32, j: u32, k: u32) -> bool {
        let (a, b, c) = (
            i.wrapping_sub(self.lo[0]),
            j.wrapping_sub(self.lo[1]),
            k.wrapping_sub(self.lo[2]),
        );
        if a >= self.size[0] || b >= self.size[1] || c >= self.size[2] {
            return false;
        }
        self.inside[(a + self.size[0] * (b + self.size[1] * c)) as usize]
    }

    pub fn count(&self) -> u64 {
        self.inside.iter().filter(|x| **x).count() as u64
    }
}

type MaskKey = ([u32; 3], [u64; 3]);

/// A mesh solid as the scene uses it: the file's mesh placed in the scene, its tree, and the
/// cell masks of the grids it was voxelised on.
pub struct SolidMesh {
    /// Where it was read from (a path, or a shipped mesh's name), for messages.
    pub source: String,
    /// The placed mesh (world coordinates, m), degenerate triangles dropped.
    pub mesh: TriMesh,
    pub bounds: ([f64; 3], [f64; 3]),
    /// Where the scene's relative mesh paths were found (a folder made absolute).
    pub base: MeshBase,
    bvh: Bvh,
    masks: Mutex<Vec<(MaskKey, Arc<CellMask>)>>,
}

impl std::fmt::Debug for SolidMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SolidMesh({}, {} triangles)",
            self.source,
            self.mesh.triangles.len()
        )
    }
}

impl SolidMesh {
    pub fn new(mesh: TriMesh, source: String) -> Self {
        let bvh = Bvh::new(&mesh);
        Self {
            source,
            base: MeshBase::Shipped,
            bounds: mesh.bounds(),
            mesh,
            bvh,
            masks: Mutex::new(Vec::new()),
        }
    }

    pub fn distance(&self, p: [f64; 3]) -> f64 {
        self.bvh.distance(p)
    }

    pub fn winding_number(&self, p: [f64; 3]) -> f64 {
        self.bvh.winding_number(p)
    }

    pub fn sdf(&self, p: [f64; 3]) -> f64 {
        self.bvh.sdf(p)
    }

    /// Whether the signed distance at `p` is negative.
    pub fn contains(&self, p: [f64; 3]) -> bool {
        self.bvh.contains(p)
    }

    /// The cells of a `dims` grid of cells `h` whose centres are inside ([`Self::contains`]),
    /// computed on all cores the first time a grid asks and kept for the next.
    pub fn cell_mask(&self, dims: [u32; 3], h: [f64; 3]) -> Arc<CellMask> {
        let key = (dims, h.map(f64::to_bits));
        let lock = || self.masks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, m)) = lock().iter().find(|(k, _)| *k == key) {
            return m.clone();
        }
        let m = Arc::new(self.compute_cell_mask(dims, h));
        let mut masks = lock();
        if masks.len() >= 4 {
            masks.remove(0);
        }
        masks.push((key, m.clone()));
        m
    }

    /// [`Self::cell_mask`] without the cache (what `eddy check` times).
    pub fn compute_cell_mask(&self, dims: [u32; 3], h: [f64; 3]) -> CellMask {
        let (lo, hi) = self.bounds;
        let mut first = [0u32; 3];
        let mut size = [0u32; 3];
        for a in 0..3 {
            // Cells whose centre (i + 0.5) h lies in [lo, hi].
            let f = (lo[a] / h[a] - 0.5).ceil().max(0.0);
            let l = (hi[a] / h[a] - 0.5).floor().min(dims[a] as f64 - 1.0);
            if l.is_nan() || f.is_nan() || l < f {
                return CellMask {
                    lo: [0; 3],
                    size: [0; 3],
                    inside: Vec::new(),
                };
            }
            first[a] = f as u32;
            size[a] = (l - f) as u32 + 1;
        }
        let [sx, sy, sz] = size.map(|n| n as usize);
        let inside = parallel_cells(sx * sy * sz, |c| {
            let idx = [c % sx, c / sx % sy, c / (sx * sy)];
            let p: [f64; 3] =
                std::array::from_fn(|a| ((first[a] as usize + idx[a]) as f64 + 0.5) * h[a]);
            self.contains(p)
        });
        CellMask {
            lo: first,
            size,
            inside,
        }
    }
}

/// Where a scene's relative mesh paths are found.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshBase {
    /// The scene file's folder. A relative path with no file there that names a mesh shipped
    /// with eddy (`meshes/pillar.obj`) reads the copy compiled in, as a shipped scene's name
    /// does.
    Folder(PathBuf),
    /// A scene compiled into eddy: its meshes are the ones compiled in.
    Shipped,
}

/// Reads the mesh `path` (relative to `base`) and places it.
pub fn load_placed(
    path: &str,
    placement: &Placement,
    base: &MeshBase,
) -> Result<SolidMesh, MeshError> {
    let written = Path::new(path);
    let shipped = written
        .is_relative()
        .then(|| crate::scene::shipped::find_mesh(path))
        .flatten();
    let file = match base {
        MeshBase::Folder(dir) => Some(dir.join(written)),
        MeshBase::Shipped => None,
    };
    // Messages name the file eddy looked for.
    let named = file.clone().unwrap_or_else(|| written.to_path_buf());
    let format = MeshFormat::of(written).map_err(|e| match e {
        MeshError::Format { ext, .. } => MeshError::Format {
            path: named.clone(),
            ext,
        },
        e => e,
    })?;
    let read = match &file {
        Some(f) => match read_limited(f) {
            Err(MeshError::Missing { .. }) if shipped.is_some() => None,
            r => Some(r?),
        },
        None => None,
    };
    let (bytes, source) = match (read, shipped) {
        (Some(b), _) => (std::borrow::Cow::Owned(b), named),
        (None, Some(m)) => (
            std::borrow::Cow::Borrowed(m.bytes),
            PathBuf::from(format!("{} (built in)", m.path)),
        ),
        (None, None) => {
            return Err(MeshError::Missing {
                path: PathBuf::from(format!("{path} (built in: no mesh of that name)")),
            })
        }
    };
    let mesh = parse_mesh(&bytes, format, &source)?;
    let mut solid = SolidMesh::new(mesh.placed(placement), source.display().to_string());
    // Kept absolute, so a checkpoint of the scene finds its meshes from anywhere.
    solid.base = match base {
        MeshBase::Folder(dir) => MeshBase::Folder(std::path::absolute(dir).unwrap_or(dir.clone())),
        MeshBase::Shipped => MeshBase::Shipped,
    };
    Ok(solid)
}

/// A `Mesh` shape's loaded mesh, shared by the scene's clones. Scenes compare by their
/// text, so two slots are always equal.
#[derive(Clone, Default)]
pub struct MeshSlot(Option<Arc<SolidMesh>>);

impl MeshSlot {
    pub fn new(mesh: SolidMesh) -> Self {
        Self(Some(Arc::new(mesh)))
    }

    pub fn get(&self) -> Option<&Arc<SolidMesh>> {
        self.0.as_ref()
    }
}

impl PartialEq for MeshSlot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for MeshSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(m) => write!(f, "{m:?}"),
            None => f.write_str("not loaded"),
        }
    }
}

/// The obstacle shipped as `scenes/meshes/pillar.obj`: a bridge pier standing on y = 0,
/// 1 m tall, 0.5 m long along x with a wedge nose pointing to -x (upstream) and a round tail,
/// 0.2 m wide along z, centred on x = z = 0. Its plan is the convex outline of a wedge of
/// half-angle 35 degrees rounded at the tip, straight sides and a half-disc tail, with 96
/// points; the sides are 6 bands high and the top and bottom are fans about the centre:
/// 1344 triangles, wound counter-clockwise seen from outside. Fixed-point text (6 decimals),
/// so the file is the same on every platform.
pub fn pillar_obj() -> String {
    let outline = pillar_outline();
    let n = outline.len();
    let bands = 6;
    let height = 1.0;
    let mut s = String::new();
    s.push_str(
        "# Generated by eddy: eddy::scene::mesh::pillar_obj() (src/scene/mesh.rs); a test checks\n\
         # that this file is what it returns. A bridge pier on y = 0, 1 m tall, 0.5 m long along\n\
         # x (wedge nose towards -x), 0.2 m wide along z.\n",
    );
    s.push_str(&format!(
        "# {} vertices, {} triangles\no pillar\n",
        n * (bands + 1) + 2,
        2 * n * bands + 2 * n
    ));
    let fmt = |x: f64| {
        // No "-0.000000".
        let t = format!("{x:.6}");
        if t.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            t.trim_start_matches('-').to_string()
        } else {
            t
        }
    };
    for b in 0..=bands {
        let y = height * b as f64 / bands as f64;
        for &(x, z) in &outline {
            s.push_str(&format!("v {} {} {}\n", fmt(x), fmt(y), fmt(z)));
        }
    }
    // The fans' centres: bottom, then top.
    s.push_str(&format!("v 0 0 0\nv 0 {} 0\n", fmt(height)));
    let v = |b: usize, i: usize| 1 + b * n + i % n;
    let (bottom, top) = (1 + n * (bands + 1), 2 + n * (bands + 1));
    // The outline runs counter-clockwise seen from +y: a side quad (i, i+1) between bands
    // b and b+1 faces outwards as (b,i), (b,i+1), (b+1,i+1), (b+1,i).
    for b in 0..bands {
        for i in 0..n {
            let (a, c) = (v(b, i), v(b + 1, i + 1));
            s.push_str(&format!(
                "f {a} {} {c}\nf {a} {c} {}\n",
                v(b, i + 1),
                v(b + 1, i)
            ));
        }
    }
    for i in 0..n {
        s.push_str(&format!("f {bottom} {} {}\n", v(0, i + 1), v(0, i)));
        s.push_str(&format!("f {top} {} {}\n", v(bands, i), v(bands, i + 1)));
    }
    s
}

/// The pier's plan: 96 points (x, z), counter-clockwise seen from +y. Built in a frame
/// (u, v) = (x, -z), where counter-clockwise is the usual sense: the tail's half-disc
/// (centre (0.15, 0), radius 0.1) from -v round +u, the straight side at v = +0.1, the upper
/// side of the wedge, the tip's arc (radius 0.02, touching u = -0.25) round -u, the lower
/// side, the straight side at v = -0.1. Each piece starts where the last one ended and
/// leaves out its own end point.
fn pillar_outline() -> Vec<(f64, f64)> {
    use std::f64::consts::PI;
    let (w, tail_u, tip_u, r) = (0.1, 0.15, -0.25, 0.02);
    let alpha = 35f64.to_radians();
    let c = tip_u + r;
    // The upper side leaves the tip circle where its outward normal (-sin a, cos a) points,
    // running along (cos a, sin a) until v = w.
    let (tu, tv) = (c - r * alpha.sin(), r * alpha.cos());
    let side_u = tu + (w - tv) / alpha.tan();
    let mut uv: Vec<(f64, f64)> = Vec::new();
    let line = |uv: &mut Vec<(f64, f64)>, a: (f64, f64), b: (f64, f64), n: usize| {
        for i in 0..n {
            let t = i as f64 / n as f64;
            uv.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
        }
    };
    for i in 0..40 {
        let a = -PI / 2.0 + PI * i as f64 / 40.0;
        uv.push((tail_u + w * a.cos(), w * a.sin()));
    }
    line(&mut uv, (tail_u, w), (side_u, w), 8);
    line(&mut uv, (side_u, w), (tu, tv), 10);
    let (a0, a1) = (PI / 2.0 + alpha, 1.5 * PI - alpha);
    for i in 0..20 {
        let a = a0 + (a1 - a0) * i as f64 / 20.0;
        uv.push((c + r * a.cos(), r * a.sin()));
    }
    line(&mut uv, (tu, -tv), (side_u, -w), 10);
    line(&mut uv, (side_u, -w), (tail_u, -w), 8);
    uv.into_iter().map(|(u, v)| (u, -v)).collect()
}

#[cfg(test)]
mod tests {
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
                (bvh.winding_number_with(p, BETA) - bvh.winding_number_with(p, f64::INFINITY))
                    .abs(),
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
}
