//! OpenVDB volumes (`.vdb`) that Blender, Houdini and the OpenVDB tools open: the subset of
//! the format eddy needs, written from the format's definition (file format 224, the one
//! OpenVDB 7 to 12 write).
//!
//! What is written: float and vec3s grids on the standard `5_4_3` tree (a root over
//! 4096-voxel internal nodes over 128-voxel internal nodes over 8^3 leaves), uncompressed
//! except for the active-mask compression every reader understands (a node stores only its
//! active values and says what its inactive ones are: the background, its negative, one
//! or two other values, or all values written out). No zlib or Blosc, no half floats, no
//! instancing, no points. Each grid carries its own transform: a uniform scale and a
//! translation, so voxel (i, j, k)'s centre is at `origin + h (i, j, k)`.
//!
//! A grid is handed in dense, as the voxels of a box with a value and an active flag each;
//! the sparse tree is built here: an 8^3 block with an active voxel, or with inactive
//! voxels of different values (a level set's inside and outside), becomes a leaf, any
//! other block a tile of its one value, and the same one level up. So a file holds the
//! active voxels (and the level set's inside/outside) and nothing else.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The file format version written (OpenVDB's `OPENVDB_FILE_VERSION`, "multipass I/O").
pub const FILE_VERSION: u32 = 224;
/// "VDB " and four zero bytes, as a little-endian int64.
const MAGIC: i64 = 0x5644_4220;
/// Per-grid compression flags: active-mask compression only (`COMPRESS_ACTIVE_MASK`).
const COMPRESS_ACTIVE_MASK: u32 = 0x2;

// How a node's inactive values are stored (OpenVDB's `io::` node metadata codes).
const NO_MASK_OR_INACTIVE_VALS: u8 = 0;
const NO_MASK_AND_MINUS_BG: u8 = 1;
const NO_MASK_AND_ONE_INACTIVE_VAL: u8 = 2;
const MASK_AND_TWO_INACTIVE_VALS: u8 = 5;
const NO_MASK_AND_ALL_VALS: u8 = 6;

/// Log2 of the child span of each level: leaf 8, lower internal 16 leaves (128 voxels),
/// upper internal 32 lower nodes (4096 voxels).
const LEAF_LOG2: u32 = 3;
const LOWER_LOG2: u32 = 4;
const UPPER_LOG2: u32 = 5;
const LEAF_SPAN: i64 = 1 << LEAF_LOG2;
const LOWER_SPAN: i64 = LEAF_SPAN << LOWER_LOG2;
const UPPER_SPAN: i64 = LOWER_SPAN << UPPER_LOG2;

/// A voxel value type a grid can hold.
pub trait VdbValue: Copy + std::fmt::Debug {
    /// The tree's type name in the file (`Tree_float_5_4_3`, ...).
    const TREE: &'static str;
    fn put(&self, out: &mut Vec<u8>);
    /// Bit-for-bit equality (how the format's reader tells inactive values apart).
    fn same(&self, other: &Self) -> bool;
    fn negated(&self) -> Self;
    fn zero() -> Self;
}

impl VdbValue for f32 {
    const TREE: &'static str = "Tree_float_5_4_3";
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn same(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
    fn negated(&self) -> Self {
        -self
    }
    fn zero() -> Self {
        0.0
    }
}

impl VdbValue for [f32; 3] {
    const TREE: &'static str = "Tree_vec3s_5_4_3";
    fn put(&self, out: &mut Vec<u8>) {
        for v in self {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn same(&self, other: &Self) -> bool {
        (0..3).all(|a| self[a].to_bits() == other[a].to_bits())
    }
    fn negated(&self) -> Self {
        self.map(|v| -v)
    }
    fn zero() -> Self {
        [0.0; 3]
    }
}

/// What a grid holds, as OpenVDB's `class` metadata names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridClass {
    /// A narrow-band signed distance in world units, negative inside; the background is
    /// the band's half-width and inactive voxels hold plus or minus it.
    LevelSet,
    /// A density in [0, 1], zero outside (background 0).
    FogVolume,
    /// Anything else (velocity, temperature).
    Unknown,
}

impl GridClass {
    fn name(self) -> &'static str {
        match self {
            GridClass::LevelSet => "level set",
            GridClass::FogVolume => "fog volume",
            GridClass::Unknown => "unknown",
        }
    }
}

/// One grid, dense: the voxels of a box `dims` long from index (0, 0, 0), x fastest.
#[derive(Clone, Debug)]
pub struct DenseGrid<T> {
    pub name: String,
    pub class: GridClass,
    pub dims: [usize; 3],
    /// Voxel size, m.
    pub h: f64,
    /// World position of voxel (0, 0, 0), m.
    pub origin: [f64; 3],
    /// The value of every voxel outside the box (and of the tree's empty space).
    pub background: T,
    pub values: Vec<T>,
    pub active: Vec<bool>,
}

impl<T: VdbValue> DenseGrid<T> {
    fn check(&self) -> std::io::Result<()> {
        let n = self.dims.iter().product::<usize>();
        let bad = |what: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what));
        if self.values.len() != n || self.active.len() != n {
            return bad(format!(
                "grid {}: {} values and {} flags for {n} voxels",
                self.name,
                self.values.len(),
                self.active.len()
            ));
        }
        if self
            .dims
            .iter()
            .any(|&d| d as i64 > i32::MAX as i64 - UPPER_SPAN)
        {
            return bad(format!(
                "grid {}: {:?} voxels is too large",
                self.name, self.dims
            ));
        }
        if !(self.h > 0.0 && self.h.is_finite()) || self.origin.iter().any(|v| !v.is_finite()) {
            return bad(format!("grid {}: bad transform (h {})", self.name, self.h));
        }
        if self.name.is_empty() || self.name.contains('\u{1e}') {
            return bad(format!("grid name {:?} is not allowed", self.name));
        }
        Ok(())
    }

    /// The voxel at index `p` (background and inactive outside the box).
    fn at(&self, p: [i64; 3]) -> (T, bool) {
        if (0..3).any(|a| p[a] < 0 || p[a] >= self.dims[a] as i64) {
            return (self.background, false);
        }
        let n = p[0] as usize + self.dims[0] * (p[1] as usize + self.dims[1] * p[2] as usize);
        (self.values[n], self.active[n])
    }

    fn active_count(&self) -> u64 {
        self.active.iter().filter(|&&a| a).count() as u64
    }

    /// The active voxels' index bounding box (min, max inclusive), if any.
    fn active_bbox(&self) -> Option<([i32; 3], [i32; 3])> {
        let mut lo = [i32::MAX; 3];
        let mut hi = [i32::MIN; 3];
        let [nx, ny, _] = self.dims;
        for (n, _) in self.active.iter().enumerate().filter(|(_, &a)| a) {
            let p = [n % nx, (n / nx) % ny, n / (nx * ny)].map(|v| v as i32);
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        (lo[0] <= hi[0]).then_some((lo, hi))
    }
}

/// A grid of either value type, for a file holding several.
#[derive(Clone, Debug)]
pub enum Grid {
    Float(DenseGrid<f32>),
    Vec3(DenseGrid<[f32; 3]>),
}

impl Grid {
    pub fn name(&self) -> &str {
        match self {
            Grid::Float(g) => &g.name,
            Grid::Vec3(g) => &g.name,
        }
    }

    pub fn active_count(&self) -> u64 {
        match self {
            Grid::Float(g) => g.active_count(),
            Grid::Vec3(g) => g.active_count(),
        }
    }
}

/// A node of the sparse tree: a child below, or a tile of one inactive value.
enum Slot<T, C> {
    Tile(T),
    Child(C),
}

struct Leaf<T> {
    mask: [u64; 8],
    values: Vec<T>,
}

/// Lower internal node: 16^3 slots, each a leaf or a tile.
struct Lower<T> {
    slots: Vec<Slot<T, Leaf<T>>>,
}

/// Upper internal node: 32^3 slots, each a lower node or a tile.
struct Upper<T> {
    origin: [i64; 3],
    slots: Vec<Slot<T, Lower<T>>>,
}

/// Slot index of a child at offset `c` (in child spans) within a node of `log2` children
/// per axis: x slowest, z fastest (the format's order).
fn slot_index(c: [i64; 3], log2: u32) -> usize {
    ((c[0] << (2 * log2)) | (c[1] << log2) | c[2]) as usize
}

fn build_leaf<T: VdbValue>(g: &DenseGrid<T>, origin: [i64; 3]) -> Slot<T, Leaf<T>> {
    let mut values = Vec::with_capacity(512);
    let mut mask = [0u64; 8];
    for x in 0..LEAF_SPAN {
        for y in 0..LEAF_SPAN {
            for z in 0..LEAF_SPAN {
                let (v, on) = g.at([origin[0] + x, origin[1] + y, origin[2] + z]);
                if on {
                    let n = slot_index([x, y, z], LEAF_LOG2);
                    mask[n >> 6] |= 1 << (n & 63);
                }
                values.push(v);
            }
        }
    }
    if mask.iter().all(|&w| w == 0) && values.iter().all(|v| v.same(&values[0])) {
        Slot::Tile(values[0])
    } else {
        Slot::Child(Leaf { mask, values })
    }
}

/// Whether every slot is a tile of one value, and that value.
fn uniform<T: VdbValue, C>(slots: &[Slot<T, C>]) -> Option<T> {
    let first = match slots.first()? {
        Slot::Tile(v) => *v,
        Slot::Child(_) => return None,
    };
    slots
        .iter()
        .all(|s| matches!(s, Slot::Tile(v) if v.same(&first)))
        .then_some(first)
}

/// The slots of an internal node at `origin` with `1 << log2` children per axis, each
/// `span` voxels wide: `child(origin)` for a child block that meets the box, a background
/// tile (not sampled) for one wholly outside it.
fn build_slots<T: VdbValue, C>(
    g: &DenseGrid<T>,
    origin: [i64; 3],
    log2: u32,
    span: i64,
    child: impl Fn([i64; 3]) -> Slot<T, C>,
) -> Vec<Slot<T, C>> {
    let outside = |o: [i64; 3]| (0..3).any(|a| o[a] + span <= 0 || o[a] >= g.dims[a] as i64);
    let n = 1i64 << log2;
    let mut slots = Vec::with_capacity(1 << (3 * log2));
    for x in 0..n {
        for y in 0..n {
            for z in 0..n {
                let o = [
                    origin[0] + x * span,
                    origin[1] + y * span,
                    origin[2] + z * span,
                ];
                slots.push(if outside(o) {
                    Slot::Tile(g.background)
                } else {
                    child(o)
                });
            }
        }
    }
    slots
}

fn build_lower<T: VdbValue>(g: &DenseGrid<T>, origin: [i64; 3]) -> Slot<T, Lower<T>> {
    let slots = build_slots(g, origin, LOWER_LOG2, LEAF_SPAN, |o| build_leaf(g, o));
    match uniform(&slots) {
        Some(v) => Slot::Tile(v),
        None => Slot::Child(Lower { slots }),
    }
}

fn build_upper<T: VdbValue>(g: &DenseGrid<T>, origin: [i64; 3]) -> Upper<T> {
    let slots = build_slots(g, origin, UPPER_LOG2, LOWER_SPAN, |o| build_lower(g, o));
    Upper { origin, slots }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn put_mask(out: &mut Vec<u8>, words: &[u64]) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// A node's values, active-mask compressed: `values` over every slot, `active` the value
/// mask, `child` the slots holding children (their values are ignored).
fn put_values<T: VdbValue>(
    out: &mut Vec<u8>,
    values: &[T],
    active: &[u64],
    child: Option<&[u64]>,
    background: T,
) {
    let on = |m: &[u64], n: usize| m[n >> 6] >> (n & 63) & 1 == 1;
    // The distinct inactive values (up to three: three means "too many").
    let mut distinct: Vec<T> = vec![];
    for (n, v) in values.iter().enumerate() {
        if on(active, n) || child.is_some_and(|c| on(c, n)) {
            continue;
        }
        if !distinct.iter().any(|d| d.same(v)) {
            distinct.push(*v);
            if distinct.len() > 2 {
                break;
            }
        }
    }
    let meta = match distinct.as_slice() {
        [] => NO_MASK_OR_INACTIVE_VALS,
        [v] if v.same(&background) => NO_MASK_OR_INACTIVE_VALS,
        [v] if v.same(&background.negated()) => NO_MASK_AND_MINUS_BG,
        [_] => NO_MASK_AND_ONE_INACTIVE_VAL,
        [_, _] => MASK_AND_TWO_INACTIVE_VALS,
        _ => NO_MASK_AND_ALL_VALS,
    };
    out.push(meta);
    match meta {
        NO_MASK_AND_ONE_INACTIVE_VAL => distinct[0].put(out),
        MASK_AND_TWO_INACTIVE_VALS => {
            distinct[0].put(out);
            distinct[1].put(out);
            // The selection mask: on where an inactive value is the second one.
            let mut select = vec![0u64; active.len()];
            for (n, v) in values.iter().enumerate() {
                let skip = on(active, n) || child.is_some_and(|c| on(c, n));
                if !skip && v.same(&distinct[1]) {
                    select[n >> 6] |= 1 << (n & 63);
                }
            }
            put_mask(out, &select);
        }
        _ => {}
    }
    if meta == NO_MASK_AND_ALL_VALS {
        for v in values {
            v.put(out);
        }
    } else {
        for (n, v) in values.iter().enumerate() {
            if on(active, n) {
                v.put(out);
            }
        }
    }
}

/// Value mask (tiles are never active here) and child mask of an internal node's slots.
fn masks<T, C>(slots: &[Slot<T, C>]) -> (Vec<u64>, Vec<u64>) {
    let words = slots.len() / 64;
    let mut child = vec![0u64; words];
    for (n, s) in slots.iter().enumerate() {
        if matches!(s, Slot::Child(_)) {
            child[n >> 6] |= 1 << (n & 63);
        }
    }
    (vec![0u64; words], child)
}

fn tile_values<T: VdbValue, C>(slots: &[Slot<T, C>]) -> Vec<T> {
    slots
        .iter()
        .map(|s| match s {
            Slot::Tile(v) => *v,
            Slot::Child(_) => T::zero(),
        })
        .collect()
}

fn put_topology<T: VdbValue>(out: &mut Vec<u8>, g: &DenseGrid<T>, uppers: &[Upper<T>]) {
    // One buffer per leaf.
    put_i32(out, 1);
    g.background.put(out);
    put_u32(out, 0); // root tiles
    put_u32(out, uppers.len() as u32);
    for u in uppers {
        for c in u.origin {
            put_i32(out, c as i32);
        }
        let (value_mask, child_mask) = masks(&u.slots);
        put_mask(out, &child_mask);
        put_mask(out, &value_mask);
        put_values(
            out,
            &tile_values(&u.slots),
            &value_mask,
            Some(&child_mask),
            g.background,
        );
        for s in &u.slots {
            let Slot::Child(lower) = s else { continue };
            let (value_mask, child_mask) = masks(&lower.slots);
            put_mask(out, &child_mask);
            put_mask(out, &value_mask);
            put_values(
                out,
                &tile_values(&lower.slots),
                &value_mask,
                Some(&child_mask),
                g.background,
            );
            for s in &lower.slots {
                if let Slot::Child(leaf) = s {
                    put_mask(out, &leaf.mask);
                }
            }
        }
    }
}

fn put_buffers<T: VdbValue>(out: &mut Vec<u8>, g: &DenseGrid<T>, uppers: &[Upper<T>]) {
    for u in uppers {
        for s in &u.slots {
            let Slot::Child(lower) = s else { continue };
            for s in &lower.slots {
                if let Slot::Child(leaf) = s {
                    put_mask(out, &leaf.mask);
                    put_values(out, &leaf.values, &leaf.mask, None, g.background);
                }
            }
        }
    }
}

/// A metadata value: its type name and bytes.
enum Meta {
    Str(String),
    Bool(bool),
    Vec3i([i32; 3]),
    Int64(i64),
}

fn put_meta(out: &mut Vec<u8>, meta: &BTreeMap<&str, Meta>) {
    put_u32(out, meta.len() as u32);
    for (name, value) in meta {
        put_str(out, name);
        let (ty, bytes): (&str, Vec<u8>) = match value {
            Meta::Str(s) => ("string", s.as_bytes().to_vec()),
            Meta::Bool(b) => ("bool", vec![*b as u8]),
            Meta::Vec3i(v) => ("vec3i", v.iter().flat_map(|c| c.to_le_bytes()).collect()),
            Meta::Int64(v) => ("int64", v.to_le_bytes().to_vec()),
        };
        put_str(out, ty);
        put_u32(out, bytes.len() as u32);
        out.extend_from_slice(&bytes);
    }
}

fn put_grid<T: VdbValue>(out: &mut Vec<u8>, g: &DenseGrid<T>, is_vector: bool) {
    put_str(out, &g.name);
    put_str(out, T::TREE);
    put_str(out, ""); // no instance parent
                      // Grid, block and end positions, filled in below.
    let offsets = out.len();
    out.extend_from_slice(&[0u8; 24]);
    let grid_pos = out.len() as i64;
    put_u32(out, COMPRESS_ACTIVE_MASK);
    let mut meta = BTreeMap::new();
    meta.insert("class", Meta::Str(g.class.name().into()));
    meta.insert("name", Meta::Str(g.name.clone()));
    meta.insert("is_local_space", Meta::Bool(false));
    meta.insert("is_saved_as_half_float", Meta::Bool(false));
    meta.insert("file_voxel_count", Meta::Int64(g.active_count() as i64));
    if let Some((lo, hi)) = g.active_bbox() {
        meta.insert("file_bbox_min", Meta::Vec3i(lo));
        meta.insert("file_bbox_max", Meta::Vec3i(hi));
    }
    if is_vector {
        meta.insert("vector_type", Meta::Str("invariant".into()));
    }
    put_meta(out, &meta);
    // The transform: index to world by a uniform scale h and a translation.
    put_str(out, "UniformScaleTranslateMap");
    let h = g.h;
    for v in [
        g.origin,
        [h; 3],
        [h; 3],
        [1.0 / h; 3],
        [1.0 / (h * h); 3],
        [0.5 / h; 3],
    ] {
        for c in v {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    // The upper nodes covering the box (the box starts at index 0).
    let mut uppers = vec![];
    let count = g
        .dims
        .map(|d| (d as u64).div_ceil(UPPER_SPAN as u64).max(1) as i64);
    for x in 0..count[0] {
        for y in 0..count[1] {
            for z in 0..count[2] {
                uppers.push(build_upper(g, [x, y, z].map(|c| c * UPPER_SPAN)));
            }
        }
    }
    put_topology(out, g, &uppers);
    let block_pos = out.len() as i64;
    put_buffers(out, g, &uppers);
    let end_pos = out.len() as i64;
    for (n, v) in [grid_pos, block_pos, end_pos].iter().enumerate() {
        out[offsets + 8 * n..offsets + 8 * n + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// The bytes of a `.vdb` file holding `grids` (in that order) and file metadata `creator`.
pub fn encode(grids: &[Grid], creator: &str) -> std::io::Result<Vec<u8>> {
    let mut names = std::collections::HashSet::new();
    for g in grids {
        match g {
            Grid::Float(g) => g.check()?,
            Grid::Vec3(g) => g.check()?,
        }
        if !names.insert(g.name()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("two grids are named {:?}", g.name()),
            ));
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    put_u32(&mut out, FILE_VERSION);
    // The library version the format corresponds to (OpenVDB 10.0).
    put_u32(&mut out, 10);
    put_u32(&mut out, 0);
    out.push(1); // the grid descriptors carry offsets
    let uuid_at = out.len();
    out.extend_from_slice(&[b'0'; 36]);
    let mut file_meta = BTreeMap::new();
    file_meta.insert("creator", Meta::Str(creator.into()));
    put_meta(&mut out, &file_meta);
    put_i32(&mut out, grids.len() as i32);
    for g in grids {
        match g {
            Grid::Float(g) => put_grid(&mut out, g, false),
            Grid::Vec3(g) => put_grid(&mut out, g, true),
        }
    }
    // A UUID in the usual 8-4-4-4-12 form from a hash of the contents, so the same frame
    // writes the same bytes.
    let hash = |seed: u64| {
        out.iter().fold(0xcbf2_9ce4_8422_2325u64 ^ seed, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let digits = format!("{:016x}{:016x}", hash(1), hash(2));
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &digits[0..8],
        &digits[8..12],
        &digits[12..16],
        &digits[16..20],
        &digits[20..32]
    );
    out[uuid_at..uuid_at + 36].copy_from_slice(uuid.as_bytes());
    Ok(out)
}

/// Writes `grids` to `path` (atomically); returns the file's size in bytes.
pub fn write_vdb(path: &Path, grids: &[Grid], creator: &str) -> std::io::Result<u64> {
    let bytes = encode(grids, creator)?;
    super::write_atomically(path, |w| w.write_all(&bytes))?;
    Ok(bytes.len() as u64)
}

/// The field-cache fields [`liquid_grids`] and [`smoke_grids`] read from a frame.
pub const LIQUID_INPUTS: [&str; 2] = ["cell_type", "velocity"];
pub const SMOKE_INPUTS: [&str; 4] = ["cell_type", "velocity", "dye", "temperature"];

/// The grids `eddy run --dump-vdb` writes for a liquid: `surface`, a narrow-band level set
/// of the particles' surface (the one `--dump-mesh` meshes, 3 voxels each side, in metres,
/// negative inside); `density`, the same field as a fog volume (the particles' smoothed
/// density over the rest density, clamped to [0, 1]); both on the nodes of a lattice of
/// the grid's spacing whose node 0 lies one cell outside the walls. And `velocity`, the
/// cell-centred velocity (the mean of each component's two faces) on the FLUID cells.
pub fn liquid_grids(
    scene: &crate::scene::Scene,
    positions: &[[f32; 4]],
    frame: &super::vtk::FieldFrame,
) -> Result<Vec<Grid>, crate::mesh::MeshError> {
    let params = crate::mesh::params_for(scene, 1)?;
    let lattice = crate::mesh::density_lattice(positions, &params);
    let mesh = crate::mesh::extract(&lattice, crate::mesh::Border::WallPadding);
    let h = lattice.spacing;
    let band = 3.0 * h;
    let (sdf, near) = crate::mesh::distance::narrow_band(&lattice, &mesh, band);
    let mut grids = vec![
        Grid::Float(DenseGrid {
            name: "surface".into(),
            class: GridClass::LevelSet,
            dims: lattice.dims,
            h,
            origin: lattice.origin,
            background: band as f32,
            values: sdf,
            active: near,
        }),
        Grid::Float(DenseGrid {
            name: "density".into(),
            class: GridClass::FogVolume,
            dims: lattice.dims,
            h,
            origin: lattice.origin,
            background: 0.0,
            values: lattice
                .values
                .iter()
                .map(|&f| (f + 0.5).clamp(0.0, 1.0))
                .collect(),
            active: lattice.values.iter().map(|&f| f + 0.5 > 0.0).collect(),
        }),
    ];
    let types = frame.cells.iter().find(|a| a.name == "cell_type");
    let velocity = frame.cells.iter().find(|a| a.name == "velocity");
    if let (Some(types), Some(velocity)) = (types, velocity) {
        let fluid = crate::scene::FLUID as f32;
        grids.push(Grid::Vec3(DenseGrid {
            name: "velocity".into(),
            class: GridClass::Unknown,
            dims: frame.dims.map(|d| d as usize),
            h: frame.h,
            origin: [0.5 * frame.h; 3],
            background: [0.0; 3],
            values: velocity
                .values
                .chunks_exact(3)
                .zip(&types.values)
                .map(|(v, &t)| {
                    if t == fluid {
                        [v[0], v[1], v[2]]
                    } else {
                        [0.0; 3]
                    }
                })
                .collect(),
            active: types.values.iter().map(|&t| t == fluid).collect(),
        }));
    }
    Ok(grids)
}

/// The grids `eddy run --dump-vdb` writes for a smoke slice (one voxel thick, at the cells'
/// centres): `density`, the dye's largest channel clamped to [0, 1]; `dye` (rgb);
/// `temperature` (in the scene's units, as its sources and walls set it); and `velocity`
/// (z zero); each active on the cells that are not SOLID.
pub fn smoke_grids(frame: &super::vtk::FieldFrame) -> Vec<Grid> {
    let dims = frame.dims.map(|d| d as usize);
    let origin = [0.5 * frame.h, 0.5 * frame.h, 0.5 * frame.h];
    let open: Vec<bool> = match frame.cells.iter().find(|a| a.name == "cell_type") {
        Some(t) => t
            .values
            .iter()
            .map(|&v| v != crate::scene::SOLID as f32)
            .collect(),
        None => vec![true; dims.iter().product()],
    };
    let find = |name: &str| frame.cells.iter().find(|a| a.name == name);
    let mut grids = vec![];
    if let Some(dye) = find("dye") {
        let rgb: Vec<[f32; 3]> = dye
            .values
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        grids.push(Grid::Float(DenseGrid {
            name: "density".into(),
            class: GridClass::FogVolume,
            dims,
            h: frame.h,
            origin,
            background: 0.0,
            values: rgb
                .iter()
                .map(|c| c[0].max(c[1]).max(c[2]).clamp(0.0, 1.0))
                .collect(),
            active: open.clone(),
        }));
        grids.push(Grid::Vec3(DenseGrid {
            name: "dye".into(),
            class: GridClass::Unknown,
            dims,
            h: frame.h,
            origin,
            background: [0.0; 3],
            values: rgb,
            active: open.clone(),
        }));
    }
    if let Some(t) = find("temperature") {
        grids.push(Grid::Float(DenseGrid {
            name: "temperature".into(),
            class: GridClass::Unknown,
            dims,
            h: frame.h,
            origin,
            background: 0.0,
            values: t.values.clone(),
            active: open.clone(),
        }));
    }
    if let Some(v) = find("velocity") {
        grids.push(Grid::Vec3(DenseGrid {
            name: "velocity".into(),
            class: GridClass::Unknown,
            dims,
            h: frame.h,
            origin,
            background: [0.0; 3],
            values: v
                .values
                .chunks_exact(3)
                .map(|c| [c[0], c[1], c[2]])
                .collect(),
            active: open,
        }));
    }
    grids
}
