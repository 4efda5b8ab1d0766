//! Binary little-endian PLY for triangle meshes: positions, vertex normals and faces, the
//! layout Blender's and ParaView's PLY readers import directly.

use super::SurfaceMesh;
use crate::output::write_atomically;
use std::io::Write;
use std::path::Path;

/// Writes `mesh` to `path` under a temporary name and renames it into place, so an
/// interrupted run never leaves a truncated mesh. `comment` goes into the header.
pub fn write_mesh_ply(path: &Path, mesh: &SurfaceMesh, comment: &str) -> std::io::Result<()> {
    let comment = comment.replace(['\n', '\r'], " ");
    write_atomically(path, |w| {
        write!(
            w,
            "ply\nformat binary_little_endian 1.0\ncomment {comment}\n\
             element vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
             property float nx\nproperty float ny\nproperty float nz\n\
             element face {}\nproperty list uchar uint vertex_indices\nend_header\n",
            mesh.positions.len(),
            mesh.triangles.len()
        )?;
        let mut buf = Vec::with_capacity(24 * mesh.positions.len() + 13 * mesh.triangles.len());
        for (p, n) in mesh.positions.iter().zip(&mesh.normals) {
            for x in p.iter().chain(n) {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        for t in &mesh.triangles {
            buf.push(3u8);
            for v in t {
                buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        w.write_all(&buf)
    })
}
