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

mod bvh;
mod pillar;
mod read;
#[cfg(test)]
mod tests;
mod voxel;

pub use bvh::Bvh;
pub use pillar::pillar_obj;
pub use read::{load_mesh, parse_mesh, read_limited, MeshFormat};
pub(crate) use voxel::parallel_cells;
use voxel::MaskKey;
pub use voxel::{voxelise, CellMask};

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
