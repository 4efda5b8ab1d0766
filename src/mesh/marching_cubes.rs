//! Marching cubes with a case table generated from the cube's six faces, so that the output
//! is watertight by construction rather than by trusting a hand-typed table.
//!
//! For every sign pattern of a cube's corners, each face gets its contour segments (0, 1 or
//! 2) from that face's four corners alone. A face seen from the two cubes that share it has
//! the same corners, so both cubes draw the same segments there, traversed in opposite
//! directions. Inside one cube each crossed edge lies on two faces and so ends one segment
//! and starts another: the segments form closed loops, and each loop is triangulated.
//! Every triangle edge is then either a face segment (shared with exactly one triangle of
//! the neighbour across the face) or an edge inside one cube (shared by two triangles of
//! that loop), which is the edge-manifold property.
//!
//! Ambiguous faces (two diagonal corners inside, two outside) are resolved with the
//! asymptotic decider: the inside corners are joined when the bilinear interpolant is
//! inside at the face's saddle, which is `in_a * in_c > out_b * out_d`. Both cubes compute
//! that from the same four numbers, so they agree. The table holds one entry per sign
//! pattern and per choice on each ambiguous face (built once, on first use).

use super::SurfaceMesh;
use std::sync::OnceLock;

/// Scalar samples on a regular lattice; a node is inside the surface when its value is
/// above zero.
#[derive(Clone, Debug)]
pub struct Lattice {
    /// Nodes along x, y, z.
    pub dims: [usize; 3],
    /// Position of node (0, 0, 0).
    pub origin: [f64; 3],
    /// Distance between neighbouring nodes (the same along every axis).
    pub spacing: f64,
    /// Node values, x fastest, then y, then z.
    pub values: Vec<f32>,
}

impl Lattice {
    /// A lattice of `dims` nodes, every value `fill`.
    pub fn new(dims: [usize; 3], origin: [f64; 3], spacing: f64, fill: f32) -> Self {
        Self {
            dims,
            origin,
            spacing,
            values: vec![fill; dims[0] * dims[1] * dims[2]],
        }
    }

    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    fn node(&self, n: usize) -> [usize; 3] {
        let [nx, ny, _] = self.dims;
        [n % nx, (n / nx) % ny, n / (nx * ny)]
    }

    fn position(&self, p: [usize; 3]) -> [f64; 3] {
        [0, 1, 2].map(|a| self.origin[a] + p[a] as f64 * self.spacing)
    }

    /// Central-difference gradient at a node (one-sided on the lattice's border).
    fn gradient(&self, p: [usize; 3]) -> [f64; 3] {
        let v = |q: [usize; 3]| self.values[self.index(q[0], q[1], q[2])] as f64;
        [0, 1, 2].map(|a| {
            let mut lo = p;
            let mut hi = p;
            if p[a] > 0 {
                lo[a] -= 1;
            }
            if p[a] + 1 < self.dims[a] {
                hi[a] += 1;
            }
            let steps = (hi[a] - lo[a]) as f64;
            if steps == 0.0 {
                0.0
            } else {
                (v(hi) - v(lo)) / (steps * self.spacing)
            }
        })
    }
}

/// How the lattice's outermost node layer is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    /// Border nodes are samples like any other.
    Samples,
    /// Border nodes are padding one spacing outside a wall, and the next node layer lies in
    /// the wall: a crossing towards padding is put on that wall node, with the wall's
    /// outward normal, so a surface cut by the wall is closed by a flat cap lying in it
    /// whose outline is the surface's own contour on the wall. (Where the liquid meets two
    /// walls, the two caps' vertices on the shared box edge coincide, joined by triangles
    /// of zero area.)
    WallPadding,
}

/// Corner `c` of a cube sits at offset `(c & 1, c >> 1 & 1, c >> 2 & 1)`.
fn corner_bit(c: usize, axis: usize) -> usize {
    (c >> axis) & 1
}

/// The two axes other than `axis`, in cyclic order (so `a1 x a2 = axis`).
fn other_axes(axis: usize) -> (usize, usize) {
    ((axis + 1) % 3, (axis + 2) % 3)
}

/// Edge `e = 4 * axis + m` runs along `axis`; `m`'s two bits give the corner's offsets
/// along the other two axes. Returns (lower corner, upper corner).
fn edge_corners(e: usize) -> (usize, usize) {
    let axis = e / 4;
    let (a1, a2) = other_axes(axis);
    let lo = ((e & 1) << a1) | (((e >> 1) & 1) << a2);
    (lo, lo | (1 << axis))
}

/// The edge joining two corners that differ in one bit.
fn edge_between(c0: usize, c1: usize) -> usize {
    let diff = c0 ^ c1;
    debug_assert!(diff.is_power_of_two() && diff < 8);
    let axis = diff.trailing_zeros() as usize;
    let (a1, a2) = other_axes(axis);
    let lo = c0 & c1;
    4 * axis + corner_bit(lo, a1) + 2 * corner_bit(lo, a2)
}

/// Face `f = 2 * axis + side`: its corners in counter-clockwise order seen from outside the
/// cube (around the outward normal).
fn face_corners(f: usize) -> [usize; 4] {
    let (axis, side) = (f / 2, f % 2);
    let (a1, a2) = other_axes(axis);
    let base = side << axis;
    // (0,0), (1,0), (1,1), (0,1) in (a1, a2) turns counter-clockwise around +axis.
    let ccw = [
        base,
        base | (1 << a1),
        base | (1 << a1) | (1 << a2),
        base | (1 << a2),
    ];
    if side == 1 {
        ccw
    } else {
        [ccw[0], ccw[3], ccw[2], ccw[1]]
    }
}

/// The two faces an edge lies on.
fn edge_faces(e: usize) -> [usize; 2] {
    let axis = e / 4;
    let (a1, a2) = other_axes(axis);
    [2 * a1 + (e & 1), 2 * a2 + ((e >> 1) & 1)]
}

fn share_face(e0: usize, e1: usize) -> bool {
    let (f0, f1) = (edge_faces(e0), edge_faces(e1));
    f0.iter().any(|f| f1.contains(f))
}

/// Faces whose corners alternate inside/outside for a sign pattern (bit f set).
fn ambiguous_faces(case: usize) -> u8 {
    let mut mask = 0;
    for f in 0..6 {
        let c = face_corners(f);
        let s = c.map(|c| (case >> c) & 1);
        if s[0] == s[2] && s[1] == s[3] && s[0] != s[1] {
            mask |= 1 << f;
        }
    }
    mask
}

/// Vertex references of a table entry: 0..12 are the cube's edges, `CENTRE + i` the centre
/// of the entry's i-th loop.
const CENTRE: u8 = 12;

/// The triangles of one cube configuration.
#[derive(Clone, Debug, Default)]
struct CaseEntry {
    triangles: Vec<[u8; 3]>,
    /// Edges averaged into each extra centre vertex.
    centres: Vec<Vec<u8>>,
}

/// Builds the entry for a sign pattern (`case` bit c set: corner c inside) and a choice on
/// each ambiguous face (`joined` bit f set: the face's inside corners are connected).
fn build_entry(case: usize, joined: u8) -> CaseEntry {
    // next[e]: the segment leaving the crossing on edge e. Every segment runs from an edge
    // where the face's counter-clockwise walk enters the inside to one where it leaves, which
    // orients the loops so that triangles face outward.
    let mut next = [u8::MAX; 12];
    let inside = |c: usize| (case >> c) & 1 == 1;
    for f in 0..6 {
        let cs = face_corners(f);
        let es: [usize; 4] = [0, 1, 2, 3].map(|i| edge_between(cs[i], cs[(i + 1) % 4]));
        let ins = cs.map(inside);
        let crossings = (0..4).filter(|&i| ins[i] != ins[(i + 1) % 4]).count();
        let mut link = |from: usize, to: usize| {
            debug_assert_eq!(next[from], u8::MAX);
            next[from] = to as u8;
        };
        match crossings {
            0 => {}
            2 => {
                let entry = (0..4).find(|&i| !ins[i] && ins[(i + 1) % 4]).unwrap_or(0);
                let exit = (0..4).find(|&i| ins[i] && !ins[(i + 1) % 4]).unwrap_or(0);
                link(es[entry], es[exit]);
            }
            _ => {
                let join = (joined >> f) & 1 == 1;
                for i in 0..4 {
                    let prev = es[(i + 3) % 4];
                    if join && !ins[i] {
                        // Cut off each outside corner.
                        link(es[i], prev);
                    } else if !join && ins[i] {
                        // Cut off each inside corner.
                        link(prev, es[i]);
                    }
                }
            }
        }
    }
    let mut entry = CaseEntry::default();
    let mut seen = [false; 12];
    for start in 0..12 {
        if next[start] == u8::MAX || seen[start] {
            continue;
        }
        let mut ring = Vec::new();
        let mut e = start;
        while !seen[e] {
            seen[e] = true;
            ring.push(e as u8);
            e = next[e] as usize;
        }
        triangulate(&ring, &mut entry);
    }
    entry
}

/// Triangulates one loop: a fan from a corner none of whose diagonals lies in a cube face
/// (such a diagonal could also be drawn by the neighbour across that face, giving an edge
/// of four triangles), else a fan around an extra centre vertex.
fn triangulate(ring: &[u8], entry: &mut CaseEntry) {
    let n = ring.len();
    let fan_from = (0..n)
        .find(|&s| (2..n - 1).all(|d| !share_face(ring[s] as usize, ring[(s + d) % n] as usize)));
    match fan_from {
        Some(s) => {
            for d in 1..n - 1 {
                entry
                    .triangles
                    .push([ring[s], ring[(s + d) % n], ring[(s + d + 1) % n]]);
            }
        }
        None => {
            let c = CENTRE + entry.centres.len() as u8;
            entry.centres.push(ring.to_vec());
            for i in 0..n {
                entry.triangles.push([c, ring[i], ring[(i + 1) % n]]);
            }
        }
    }
}

struct Table {
    entries: Vec<CaseEntry>,
    ambiguous: [u8; 256],
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut ambiguous = [0u8; 256];
        let mut entries = Vec::with_capacity(256 * 64);
        for (case, amb) in ambiguous.iter_mut().enumerate() {
            *amb = ambiguous_faces(case);
            for joined in 0..64u8 {
                // Lookups only set bits of ambiguous faces; other slots stay empty.
                entries.push(if joined & !*amb == 0 {
                    build_entry(case, joined)
                } else {
                    CaseEntry::default()
                });
            }
        }
        Table { entries, ambiguous }
    })
}

/// Triangles per sign pattern and decider choice, for tests and statistics.
pub fn case_triangle_count(case: u8, joined: u8) -> usize {
    let t = table();
    t.entries[case as usize * 64 + (joined & t.ambiguous[case as usize]) as usize]
        .triangles
        .len()
}

/// Work split for the parallel passes: contiguous ranges of z layers.
fn layer_chunks(layers: usize, threads: usize) -> Vec<std::ops::Range<usize>> {
    let parts = (threads * 4).clamp(1, layers.max(1));
    (0..parts)
        .map(|p| (p * layers / parts)..((p + 1) * layers / parts))
        .filter(|r| !r.is_empty())
        .collect()
}

pub(crate) fn thread_count() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Runs `work(index, chunk)` over `chunks` on up to `threads` threads, each taking the next
/// chunk as it finishes one; results come back in chunk order, so the output does not
/// depend on scheduling. A panic in `work` is passed on.
pub(crate) fn parallel_map<T: Send>(
    chunks: &[std::ops::Range<usize>],
    threads: usize,
    work: impl Fn(usize, std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(chunks.len()).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(r) = chunks.get(i) else { break out };
                        out.push((i, work(i, r.clone())));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// A vertex: on a crossed lattice edge, or at the centre of a loop.
struct Crossing {
    position: [f32; 3],
    normal: [f32; 3],
}

fn crossing(lat: &Lattice, border: Border, a: usize, axis: usize) -> Crossing {
    let pa = lat.node(a);
    let mut pb = pa;
    pb[axis] += 1;
    let va = lat.values[a] as f64;
    let vb = lat.values[lat.index(pb[0], pb[1], pb[2])] as f64;
    let toward_b_outside = va > 0.0;
    let (pad_a, pad_b) = (pa[axis] == 0, pb[axis] + 1 == lat.dims[axis]);
    let (t, normal) = if border == Border::WallPadding && (pad_a || pad_b) {
        // Outward points from the wall node to the padding node.
        let mut n = [0.0f64; 3];
        n[axis] = if pad_b { 1.0 } else { -1.0 };
        (if pad_b { 0.0 } else { 1.0 }, n)
    } else {
        // Kept off the nodes so no two vertices of a triangle coincide.
        let t = (va / (va - vb)).clamp(1e-3, 1.0 - 1e-3);
        let (ga, gb) = (lat.gradient(pa), lat.gradient(pb));
        let g: [f64; 3] = [0, 1, 2].map(|i| -(ga[i] + t * (gb[i] - ga[i])));
        let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let n = if len > 0.0 && len.is_finite() {
            g.map(|x| x / len)
        } else {
            let mut n = [0.0; 3];
            n[axis] = if toward_b_outside { 1.0 } else { -1.0 };
            n
        };
        (t, n)
    };
    let (xa, xb) = (lat.position(pa), lat.position(pb));
    Crossing {
        position: [0, 1, 2].map(|i| (xa[i] + t * (xb[i] - xa[i])) as f32),
        normal: normal.map(|x| x as f32),
    }
}

/// Extracts the surface `value = 0` of a lattice, in parallel over z layers. Vertices lie on
/// lattice edges (one per crossed edge, shared by every triangle that uses it) plus one at
/// the centre of each loop that needs one; normals are the negated, interpolated field
/// gradient (outward when inside is positive). Triangles are counter-clockwise seen from
/// outside. Deterministic: the same lattice gives the same mesh on any number of threads.
pub fn extract(lat: &Lattice, border: Border) -> SurfaceMesh {
    extract_on(lat, border, thread_count())
}

fn extract_on(lat: &Lattice, border: Border, threads: usize) -> SurfaceMesh {
    let [nx, ny, nz] = lat.dims;
    if nx < 2 || ny < 2 || nz < 2 {
        return SurfaceMesh::default();
    }
    let t = table();
    let (mut mesh, edges) = edge_vertices(lat, border, threads);
    // Pass 3: triangles per cube layer. Loop centres get ids after all edge vertices.
    let cube_chunks = layer_chunks(nz - 1, threads);
    let cubes = Cubes {
        lat,
        table: t,
        edges: &edges,
        mesh: &mesh,
    };
    let parts: Vec<Part> = parallel_map(&cube_chunks, threads, |_, r| {
        let mut part = Part {
            triangles: Vec::new(),
            centres: Vec::new(),
        };
        for k in r {
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    cubes.triangulate_cube(lat.index(i, j, k), &mut part);
                }
            }
        }
        part
    });
    for part in parts {
        let offset = mesh.positions.len() as u32;
        for c in &part.centres {
            mesh.positions.push(c.position);
            mesh.normals.push(c.normal);
        }
        mesh.triangles.extend(part.triangles.into_iter().map(|tri| {
            tri.map(|v| {
                if v >> 31 == 1 {
                    offset + (v & !(1 << 31))
                } else {
                    v
                }
            })
        }));
    }
    mesh
}

/// The crossed lattice edges: per node, which of its +x, +y, +z edges are crossed (bits 0,
/// 1, 2), and the id of the vertex on its first crossed edge (the others follow in order).
struct EdgeVertices {
    bits: Vec<u8>,
    first_id: Vec<u32>,
}

impl EdgeVertices {
    /// The id of the vertex on node `n`'s crossed edge along `axis`.
    fn vertex(&self, n: usize, axis: usize) -> u32 {
        let below = self.bits[n] & ((1u8 << axis) - 1);
        self.first_id[n] + below.count_ones()
    }
}

/// Passes 1 and 2 of [`extract_on`]: finds the crossed lattice edges, in parallel over z
/// layers, and gives the mesh one vertex on each, numbered node by node.
fn edge_vertices(lat: &Lattice, border: Border, threads: usize) -> (SurfaceMesh, EdgeVertices) {
    let [nx, ny, nz] = lat.dims;
    let inside = |n: usize| lat.values[n] > 0.0;
    let layer = nx * ny;
    // Per node, which of its +x, +y, +z edges are crossed (bits 0, 1, 2).
    let crossed_bits = |n: usize| -> u8 {
        let [i, j, k] = lat.node(n);
        let s = inside(n);
        let mut bits = 0u8;
        if i + 1 < nx && inside(n + 1) != s {
            bits |= 1;
        }
        if j + 1 < ny && inside(n + nx) != s {
            bits |= 2;
        }
        if k + 1 < nz && inside(n + layer) != s {
            bits |= 4;
        }
        bits
    };
    let chunks = layer_chunks(nz, threads);
    // Pass 1: crossing bits per node, and crossings per chunk.
    let bits_per_chunk: Vec<Vec<u8>> = parallel_map(&chunks, threads, |_, r| {
        (r.start * layer..r.end * layer).map(crossed_bits).collect()
    });
    let mut chunk_base = Vec::with_capacity(chunks.len());
    let mut total = 0u32;
    for b in &bits_per_chunk {
        chunk_base.push(total);
        total += b.iter().map(|x| x.count_ones()).sum::<u32>();
    }
    // Pass 2: first vertex id per node (a prefix sum), and the crossings' vertices.
    let per_chunk: Vec<(Vec<u32>, Vec<Crossing>)> = parallel_map(&chunks, threads, |ci, r| {
        let bits = &bits_per_chunk[ci];
        let mut id = chunk_base[ci];
        let mut first = Vec::with_capacity(bits.len());
        let mut verts = Vec::new();
        for (off, &b) in bits.iter().enumerate() {
            first.push(id);
            id += b.count_ones();
            for axis in 0..3 {
                if b & (1 << axis) != 0 {
                    verts.push(crossing(lat, border, r.start * layer + off, axis));
                }
            }
        }
        (first, verts)
    });
    let mut first_id = Vec::with_capacity(lat.values.len());
    let mut bits = Vec::with_capacity(lat.values.len());
    let mut mesh = SurfaceMesh::default();
    mesh.positions.reserve(total as usize);
    mesh.normals.reserve(total as usize);
    for ((first, verts), b) in per_chunk.into_iter().zip(bits_per_chunk) {
        first_id.extend(first);
        bits.extend(b);
        for v in verts {
            mesh.positions.push(v.position);
            mesh.normals.push(v.normal);
        }
    }
    (mesh, EdgeVertices { bits, first_id })
}

/// The triangles and loop centres of one chunk of cube layers.
struct Part {
    triangles: Vec<[u32; 3]>,
    centres: Vec<Crossing>,
}

/// What pass 3 of [`extract_on`] reads: the lattice, the case table, and the edge vertices
/// with the mesh that holds them.
struct Cubes<'a> {
    lat: &'a Lattice,
    table: &'a Table,
    edges: &'a EdgeVertices,
    mesh: &'a SurfaceMesh,
}

impl Cubes<'_> {
    /// Adds to `part` the triangles of the cube whose lowest node is `base`, and the centres
    /// of its loops that need one.
    fn triangulate_cube(&self, base: usize, part: &mut Part) {
        let (lat, t, mesh) = (self.lat, self.table, self.mesh);
        let [nx, ny, _] = lat.dims;
        let layer = nx * ny;
        let inside = |n: usize| lat.values[n] > 0.0;
        let edge_vertex = |n: usize, axis: usize| self.edges.vertex(n, axis);
        let corner_node = |c: usize| base + (c & 1) + ((c >> 1) & 1) * nx + ((c >> 2) & 1) * layer;
        let mut case = 0usize;
        for c in 0..8 {
            if inside(corner_node(c)) {
                case |= 1 << c;
            }
        }
        if case == 0 || case == 255 {
            return;
        }
        let amb = t.ambiguous[case];
        let mut joined = 0u8;
        if amb != 0 {
            for f in 0..6 {
                if amb & (1 << f) == 0 {
                    continue;
                }
                let cs = face_corners(f);
                let v = cs.map(|c| lat.values[corner_node(c)]);
                // Diagonal products: corners 0, 2 share a sign, as do 1, 3.
                let (p02, p13) = (v[0] * v[2], v[1] * v[3]);
                let (pin, pout) = if v[0] > 0.0 { (p02, p13) } else { (p13, p02) };
                if pin > pout {
                    joined |= 1 << f;
                }
            }
        }
        let entry = &t.entries[case * 64 + joined as usize];
        let vertex_of_edge = |e: usize| {
            let (c0, _) = edge_corners(e);
            edge_vertex(corner_node(c0), e / 4)
        };
        let first_centre = part.centres.len() as u32;
        for ring in &entry.centres {
            let mut p = [0.0f32; 3];
            let mut nrm = [0.0f32; 3];
            for &e in ring {
                let v = vertex_of_edge(e as usize) as usize;
                for a in 0..3 {
                    p[a] += mesh.positions[v][a] / ring.len() as f32;
                    nrm[a] += mesh.normals[v][a];
                }
            }
            let len = (nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]).sqrt();
            if len > 0.0 {
                nrm = nrm.map(|x| x / len);
            }
            part.centres.push(Crossing {
                position: p,
                normal: nrm,
            });
        }
        for tri in &entry.triangles {
            part.triangles.push(tri.map(|r| {
                if r < CENTRE {
                    vertex_of_edge(r as usize)
                } else {
                    // Marked with the top bit until the centres are numbered.
                    (1 << 31) | (first_centre + (r - CENTRE) as u32)
                }
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mesh_does_not_depend_on_the_thread_count() {
        // Chunk boundaries move with the thread count; vertex numbering across them must not.
        let dims = [9, 7, 23];
        let mut lat = Lattice::new(dims, [0.0; 3], 0.5, -1.0);
        let mut x = 12345u32;
        for k in 1..dims[2] - 1 {
            for j in 1..dims[1] - 1 {
                for i in 1..dims[0] - 1 {
                    x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let n = lat.index(i, j, k);
                    lat.values[n] = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
                }
            }
        }
        let one = extract_on(&lat, Border::WallPadding, 1);
        assert!(one.triangles.len() > 500);
        for threads in [2, 3, 8] {
            let m = extract_on(&lat, Border::WallPadding, threads);
            assert_eq!(m.positions, one.positions, "{threads} threads");
            assert_eq!(m.normals, one.normals, "{threads} threads");
            assert_eq!(m.triangles, one.triangles, "{threads} threads");
        }
    }

    #[test]
    fn edges_and_faces_are_consistent() {
        for e in 0..12 {
            let (a, b) = edge_corners(e);
            assert_eq!(edge_between(a, b), e);
            for f in edge_faces(e) {
                let cs = face_corners(f);
                assert!(cs.contains(&a) && cs.contains(&b), "edge {e} face {f}");
            }
        }
        // Each face's corner cycle, seen from outside, turns counter-clockwise.
        for f in 0..6 {
            let p = face_corners(f).map(|c| [0, 1, 2].map(|a| corner_bit(c, a) as i32));
            let d1 = [0, 1, 2].map(|a| p[1][a] - p[0][a]);
            let d2 = [0, 1, 2].map(|a| p[2][a] - p[1][a]);
            let cross = [
                d1[1] * d2[2] - d1[2] * d2[1],
                d1[2] * d2[0] - d1[0] * d2[2],
                d1[0] * d2[1] - d1[1] * d2[0],
            ];
            let mut outward = [0; 3];
            outward[f / 2] = if f % 2 == 1 { 1 } else { -1 };
            assert_eq!(cross, outward, "face {f}");
        }
    }

    #[test]
    fn every_crossed_edge_is_used_and_single_corners_give_one_triangle() {
        for case in 0..256usize {
            for joined in 0..64u8 {
                let e = build_entry(case, joined & ambiguous_faces(case));
                let mut used = [0; 12];
                for t in &e.triangles {
                    for &r in t {
                        if r < CENTRE {
                            used[r as usize] += 1;
                        }
                    }
                }
                for (edge, &n) in used.iter().enumerate() {
                    let (a, b) = edge_corners(edge);
                    let crossed = ((case >> a) & 1) != ((case >> b) & 1);
                    assert_eq!(crossed, n > 0, "case {case:08b} edge {edge}");
                }
            }
        }
        for c in 0..8 {
            assert_eq!(case_triangle_count(1 << c, 0), 1);
            assert_eq!(case_triangle_count(!(1u8 << c), 0), 1);
        }
    }
}
