//! Surface meshes of the liquid for offline rendering: an implicit surface from the
//! particles (`field`), marching cubes over it on the CPU in parallel (`marching_cubes`),
//! binary PLY files (`ply`).
//!
//! The mesh is closed everywhere: where the liquid meets a domain wall it is capped by a
//! flat face lying in the wall plane, so every mesh bounds a volume (what a renderer needs
//! for refraction and absorption) and every edge is shared by exactly two triangles.
//! Triangles are counter-clockwise seen from outside the liquid, and vertex normals point
//! out of it.

pub mod field;
pub mod marching_cubes;
pub mod ply;

use crate::scene::{Scene, SceneKind};
use std::path::Path;
use thiserror::Error;

pub use field::{density_lattice, DensityParams};
pub use marching_cubes::{extract, Border, Lattice};

/// The finest lattice, relative to the simulation grid, `--mesh-resolution` accepts.
pub const MAX_MESH_RESOLUTION: u32 = 8;

/// Lattice nodes a mesh may sample (about 1 GiB of working memory at 16 bytes a node).
pub const MAX_LATTICE_NODES: u64 = 1 << 26;

/// A triangle mesh with per-vertex normals.
#[derive(Clone, Debug, Default)]
pub struct SurfaceMesh {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    /// Vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

#[derive(Debug, Error)]
pub enum MeshError {
    #[error("--dump-mesh meshes the liquid's particles; smoke scenes have none")]
    NotLiquid,
    #[error("--mesh-resolution must be between 1 and {MAX_MESH_RESOLUTION}, got {0}")]
    Resolution(u32),
    #[error(
        "--mesh-resolution {resolution} samples a {dims:?} lattice ({nodes} nodes), above the \
         limit of {MAX_LATTICE_NODES}: use a lower resolution"
    )]
    TooLarge {
        resolution: u32,
        dims: [usize; 3],
        nodes: u64,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// The field parameters for a scene at `resolution` times its grid, after checking that
/// the scene is a liquid and the lattice fits in memory.
pub fn params_for(scene: &Scene, resolution: u32) -> Result<DensityParams, MeshError> {
    if scene.kind != SceneKind::Liquid {
        return Err(MeshError::NotLiquid);
    }
    if !(1..=MAX_MESH_RESOLUTION).contains(&resolution) {
        return Err(MeshError::Resolution(resolution));
    }
    let params = DensityParams::for_grid(
        scene.domain_size(),
        scene.h(),
        scene.particles_per_cell,
        resolution,
    );
    let dims = params.lattice_dims();
    let nodes = dims.iter().map(|&n| n as u64).product::<u64>();
    if nodes > MAX_LATTICE_NODES {
        return Err(MeshError::TooLarge {
            resolution,
            dims,
            nodes,
        });
    }
    Ok(params)
}

/// The liquid surface of particles at `positions` (xyz, w unused) in `scene`, sampled
/// `resolution` times finer than its grid.
pub fn liquid_surface(
    scene: &Scene,
    positions: &[[f32; 4]],
    resolution: u32,
) -> Result<SurfaceMesh, MeshError> {
    let params = params_for(scene, resolution)?;
    let lattice = density_lattice(positions, &params);
    Ok(extract(&lattice, Border::WallPadding))
}

/// What writing one frame's mesh took.
#[derive(Clone, Copy, Debug)]
pub struct MeshTiming {
    pub vertices: usize,
    pub triangles: usize,
    /// Field plus marching cubes.
    pub mesh_s: f64,
    /// Writing the PLY file.
    pub write_s: f64,
}

/// Meshes the liquid and writes it to `path` as binary PLY (atomically).
pub fn write_liquid_surface(
    path: &Path,
    scene: &Scene,
    positions: &[[f32; 4]],
    resolution: u32,
    comment: &str,
) -> Result<MeshTiming, MeshError> {
    let t0 = std::time::Instant::now();
    let mesh = liquid_surface(scene, positions, resolution)?;
    let t1 = std::time::Instant::now();
    ply::write_mesh_ply(path, &mesh, comment).map_err(|source| MeshError::Write {
        path: path.display().to_string(),
        source,
    })?;
    Ok(MeshTiming {
        vertices: mesh.positions.len(),
        triangles: mesh.triangles.len(),
        mesh_s: (t1 - t0).as_secs_f64(),
        write_s: t1.elapsed().as_secs_f64(),
    })
}
