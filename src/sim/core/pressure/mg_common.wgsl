// The multigrid V-cycle's per-cell steps, shared by the kernels that run one level per
// dispatch (multigrid.wgsl) and the one that runs the small levels in one workgroup
// (mg_tail.wgsl). The f64 reference and the reasons for every choice (coarsening rule,
// scaling, smoother order) are in src/reference/multigrid.rs; these steps follow it step
// for step.
//
// The including file declares `lvl` (the level a step works on), this level's arrays `a`,
// `types`, `x`, `b`, `res` and `winv`, the next coarser level's `ca`, `ctypes`, `cx` and
// `cb`, and `done`. A level's cells start at element `lvl.off` of its arrays and the coarser
// level's at `lvl.coff` of theirs: both 0 where each level has buffers of its own, the
// level's place in the packed buffers of the tail. `winv` holds, per cell of this level,
// one over the sum of its interpolation weights (an f32's bits, never negative) and, in the
// sign bit, whether the boundary sweeps relax the cell (both set up once per solve from the
// cell types).

const BOUNDARY_BIT: u32 = 0x80000000u;

// Mirrored by `MgLevelParams` in src/sim/core/pressure/multigrid.rs (tests/integration/shaders.rs
// checks the layout).
struct MgLevel {
    n: vec3<u32>,          // cells of this level
    cells: u32,
    nc: vec3<u32>,         // cells of the next coarser level (zero on the coarsest)
    coarse_cells: u32,
    ratio: vec3<u32>,      // 2 along coarsened axes, 1 along the others
    scale: f32,            // restriction scale 4 / 2^k
    off: u32,              // first element of this level in its arrays
    coff: u32,             // first element of the coarser level in its arrays
    _pad1: u32,
    _pad2: u32,
};

// One over cell c's interpolation weight sum (non-negative: the sign bit is the flag).
fn weight_inv(c: u32) -> f32 { return bitcast<f32>(winv[lvl.off + c] & ~BOUNDARY_BIT); }

// Whether the boundary sweeps relax cell c.
fn boundary_cell(c: u32) -> bool { return (winv[lvl.off + c] & BOUNDARY_BIT) != 0u; }

// `done` aliases PcgState; its word PCG_DONE_WORD is the done flag (see pcg.wgsl).
fn solve_done() -> bool { return done[PCG_DONE_WORD] != 0u; }

// Cell of colour `col` ((i+j+k) mod 2) handled by invocation `t`; -1 if none. Invocations
// run over half rows: ceil(nx/2) per (j, k).
fn colour_threads() -> u32 { return (lvl.n.x + 1u) / 2u * lvl.n.y * lvl.n.z; }

fn colour_cell(t: u32, col: u32) -> i32 {
    let hx = (lvl.n.x + 1u) / 2u;
    let row = t / hx;
    if (row >= lvl.n.y * lvl.n.z) { return -1; }
    let j = row % lvl.n.y;
    let k = row / lvl.n.y;
    let i = 2u * (t % hx) + ((j + k + col) & 1u);
    if (i >= lvl.n.x) { return -1; }
    return i32(i + lvl.n.x * row);
}

// b_c - sum of the off-diagonal terms times x: the Gauss-Seidel numerator.
fn relax_sum(c: u32, row: vec4<f32>) -> f32 {
    let o = lvl.off;
    let p = cell_coord(c, lvl.n);
    var s = b[o + c];
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp])) {
            s -= row[comp + 1u] * x[o + cell_index(p + e, lvl.n)];
        }
        if (p[comp] > 0) {
            let m = o + cell_index(p - e, lvl.n);
            s -= a[m][comp + 1u] * x[m];
        }
    }
    return s;
}

fn relax(c: u32) {
    let row = a[lvl.off + c];
    if (row.x == 0.0) { x[lvl.off + c] = 0.0; return; }
    x[lvl.off + c] = relax_sum(c, row) / row.x;
}

// Relaxes the cell of colour `col` that invocation `t` handles; `boundary`: only a
// boundary cell.
fn relax_colour(t: u32, col: u32, boundary: bool) {
    let ci = colour_cell(t, col);
    if (ci >= 0 && (!boundary || boundary_cell(u32(ci)))) { relax(u32(ci)); }
}

// Parent of a cell on the next coarser level.
fn parent(p: vec3<i32>) -> u32 {
    return cell_index(p / vec3<i32>(lvl.ratio), lvl.nc);
}

// FLUID cells next to AIR or whose coarse parent is not FLUID get the boundary sweeps.
fn is_boundary(c: u32) -> bool {
    let o = lvl.off;
    if (types[o + c] != FLUID) { return false; }
    let p = cell_coord(c, lvl.n);
    if (ctypes[lvl.coff + parent(p)] != FLUID) { return true; }
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp]) && types[o + cell_index(p + e, lvl.n)] == AIR) { return true; }
        if (p[comp] > 0 && types[o + cell_index(p - e, lvl.n)] == AIR) { return true; }
    }
    return false;
}

// --- set-up (once per solve) ---

// Rank of a child's type in the coarsening rule: AIR 2 > FLUID 1 > SOLID 0.
fn type_rank(q: vec3<i32>, d: vec3<i32>) -> u32 {
    // Clamped into this coarse cell's own children (an uncoarsened axis or the end of an
    // odd one repeats a child, which cannot change the maximum).
    let first = q * vec3<i32>(lvl.ratio);
    let last = min(first + vec3<i32>(lvl.ratio) - vec3<i32>(1), vec3<i32>(lvl.n) - vec3<i32>(1));
    let t = types[lvl.off + cell_index(min(first + d, last), lvl.n)];
    return select(select(0u, 1u, t == FLUID), 2u, t == AIR);
}

// Coarse types: AIR if any child is AIR, else FLUID if any child is FLUID, else SOLID.
fn coarsen_at(c: u32) {
    let q = cell_coord(c, lvl.nc);
    // The 8 children written out, without a loop or branches: lavapipe 22.3 leaked host
    // memory on every dispatch of this kernel while they were visited in a loop.
    let rank = max(max(max(type_rank(q, vec3<i32>(0, 0, 0)), type_rank(q, vec3<i32>(1, 0, 0))),
                       max(type_rank(q, vec3<i32>(0, 1, 0)), type_rank(q, vec3<i32>(1, 1, 0)))),
                   max(max(type_rank(q, vec3<i32>(0, 0, 1)), type_rank(q, vec3<i32>(1, 0, 1))),
                       max(type_rank(q, vec3<i32>(0, 1, 1)), type_rank(q, vec3<i32>(1, 1, 1)))));
    let air = rank == 2u;
    let fluid = rank == 1u;
    ctypes[lvl.coff + c] = select(select(SOLID, FLUID, fluid), AIR, air);
}

fn coarse_type_at(p: vec3<i32>) -> u32 {
    if (!in_grid(p, lvl.nc)) { return SOLID; }
    return ctypes[lvl.coff + cell_index(p, lvl.nc)];
}

// Coarse matrix from the coarse types, with the fine level's stencil (build_matrix.wgsl).
fn build_coarse_at(c: u32) {
    var row = vec4<f32>(0.0);
    if (ctypes[lvl.coff + c] == FLUID) {
        let p = cell_coord(c, lvl.nc);
        for (var comp = 0u; comp < 3u; comp++) {
            let e = unit(comp);
            let lo = coarse_type_at(p - e);
            let hi = coarse_type_at(p + e);
            if (lo != SOLID) { row.x += 1.0; }
            if (hi != SOLID) { row.x += 1.0; }
            if (hi == FLUID) { row[comp + 1u] = -1.0; }
        }
    }
    ca[lvl.coff + c] = row;
}

// --- smoothing ---

// The first red-black pair from x = 0 in one step: a red cell's update sees only zero
// neighbours, so it is b/d, and a black cell's red neighbours are known from b and the
// matrix alone. The same numbers as a red sweep followed by a black one.
fn first_red(m: u32) -> f32 {
    let d = a[m].x;
    return select(0.0, b[m] / d, d != 0.0);
}

fn smooth_first_at(c: u32) {
    let o = lvl.off;
    let row = a[o + c];
    let p = cell_coord(c, lvl.n);
    if (row.x == 0.0) { x[o + c] = 0.0; return; }
    if ((u32(p.x + p.y + p.z) & 1u) == 0u) { x[o + c] = b[o + c] / row.x; return; }
    var s = b[o + c];
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp])) {
            s -= row[comp + 1u] * first_red(o + cell_index(p + e, lvl.n));
        }
        if (p[comp] > 0) {
            let m = o + cell_index(p - e, lvl.n);
            s -= a[m][comp + 1u] * first_red(m);
        }
    }
    x[o + c] = s / row.x;
}

// --- transfers ---

fn residual_at(c: u32) {
    let row = a[lvl.off + c];
    res[lvl.off + c] = select(0.0, relax_sum(c, row) - row.x * x[lvl.off + c], row.x != 0.0);
}
// Trilinear taps of fine index `i` along one axis: (parent, 3/4) and (neighbour, 1/4), the
// neighbour on the side of the fine cell's centre; absent (-1) outside the coarse grid.
fn prolong_taps(i: i32, ratio: u32, len: u32) -> vec4<f32> {
    if (ratio == 1u) { return vec4<f32>(f32(i), 1.0, -1.0, 0.0); }
    let p = i / 2;
    let o = select(p - 1, p + 1, (i & 1) == 1);
    let ok = o >= 0 && o < i32(len);
    return vec4<f32>(f32(p), 0.75, select(-1.0, f32(o), ok), select(0.0, 0.25, ok));
}

fn fine_taps(p: vec3<i32>) -> array<vec4<f32>, 3> {
    return array<vec4<f32>, 3>(prolong_taps(p.x, lvl.ratio.x, lvl.nc.x),
                               prolong_taps(p.y, lvl.ratio.y, lvl.nc.y),
                               prolong_taps(p.z, lvl.ratio.z, lvl.nc.z));
}

// Coarse node `k` (bits x, y, z: parent or neighbour per axis) of a fine cell's taps and its
// trilinear weight; x = -1 when the node does not exist.
fn tap_node(t: array<vec4<f32>, 3>, k: u32) -> vec4<f32> {
    var node = vec3<f32>(0.0);
    var w = 1.0;
    for (var ax = 0u; ax < 3u; ax++) {
        let hi = ((k >> ax) & 1u) == 1u;
        let idx = select(t[ax].x, t[ax].z, hi);
        if (idx < 0.0) { return vec4<f32>(-1.0, 0.0, 0.0, 0.0); }
        node[ax] = idx;
        w *= select(t[ax].y, t[ax].w, hi);
    }
    return vec4<f32>(node, w);
}

// Interpolation nodes are the coarse cells that are not SOLID: AIR nodes carry the value 0
// (Dirichlet), SOLID ones are dropped and the weights renormalised (Neumann), as in the
// reference's `prolong_stencil`. The renormalisation depends only on the cell types, so
// `weights_at` computes it once per solve; the transfers then read it and need no types
// (the coarse solution is 0 on every non-FLUID cell).
fn node_ok(nd: vec3<i32>) -> bool {
    return in_grid(nd, lvl.nc) && ctypes[lvl.coff + cell_index(nd, lvl.nc)] != SOLID;
}

fn weights_at(c: u32) {
    let flag = select(0u, BOUNDARY_BIT, is_boundary(c));
    if (a[lvl.off + c].x == 0.0) { winv[lvl.off + c] = flag; return; }
    let t = fine_taps(cell_coord(c, lvl.n));
    var wsum = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let nd = tap_node(t, k);
        if (nd.w != 0.0 && node_ok(vec3<i32>(nd.xyz))) { wsum += nd.w; }
    }
    winv[lvl.off + c] = bitcast<u32>(select(0.0, 1.0 / wsum, wsum > 0.0)) | flag;
}

// x += P x_coarse on the active cells.
fn prolong_at(c: u32) {
    let wi = weight_inv(c);
    if (wi == 0.0) { return; }
    let t = fine_taps(cell_coord(c, lvl.n));
    var s = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let nd = tap_node(t, k);
        if (nd.w != 0.0) { s += nd.w * cx[lvl.coff + cell_index(vec3<i32>(nd.xyz), lvl.nc)]; }
    }
    x[lvl.off + c] += wi * s;
}

// Trilinear weight along one axis of fine index f for coarse index q (0 if f does not read q).
fn axis_weight(f: i32, q: i32, ratio: u32) -> f32 {
    if (ratio == 1u) { return select(0.0, 1.0, f == q); }
    let d = f - 2 * q;
    if (d == 0 || d == 1) { return 0.75; }
    if (d == -1 || d == 2) { return 0.25; }
    return 0.0;
}

// b_coarse = 4 / 2^k P^T res: the exact transpose of `prolong_at`, gathered per coarse cell
// from the fine cells whose interpolation reads it (2q-1 .. 2q+2 along a coarsened axis).
fn restrict_at(c: u32) {
    if (ca[lvl.coff + c].x == 0.0) { cb[lvl.coff + c] = 0.0; return; }
    let q = cell_coord(c, lvl.nc);
    let two = lvl.ratio == vec3<u32>(2u);
    let lo = max(q * vec3<i32>(lvl.ratio) - vec3<i32>(select(vec3<u32>(0u), vec3<u32>(1u), two)), vec3<i32>(0));
    let hi = min(q * vec3<i32>(lvl.ratio) + select(vec3<i32>(0), vec3<i32>(2), two), vec3<i32>(lvl.n) - vec3<i32>(1));
    var s = 0.0;
    for (var z = lo.z; z <= hi.z; z++) {
        let wz = axis_weight(z, q.z, lvl.ratio.z);
        for (var y = lo.y; y <= hi.y; y++) {
            let wy = wz * axis_weight(y, q.y, lvl.ratio.y);
            for (var x0 = lo.x; x0 <= hi.x; x0++) {
                let f = cell_index(vec3<i32>(x0, y, z), lvl.n);
                s += wy * axis_weight(x0, q.x, lvl.ratio.x) * weight_inv(f) * res[lvl.off + f];
            }
        }
    }
    cb[lvl.coff + c] = lvl.scale * s;
}

// --- coarsest level: one workgroup, everything in workgroup memory ---

// The sweep count MG_COARSE_SWEEPS is a constant, not a uniform (src/gpu/constants.rs says
// why). The workgroup has MG_COARSE_WG threads, each owning MG_COARSE_PER_THREAD cells.
var<workgroup> sa: array<vec4<f32>, MG_COARSE_MAX>;   // the matrix, read ~100 times per V-cycle
var<workgroup> sx: array<f32, MG_COARSE_MAX>;
var<workgroup> sb: array<f32, MG_COARSE_MAX>;
var<workgroup> red_s: array<f32, MG_COARSE_WG>;
var<workgroup> wg_flag: u32;

fn coarse_relax(c: u32) {
    let row = sa[c];
    if (row.x == 0.0) { sx[c] = 0.0; return; }
    let p = cell_coord(c, lvl.n);
    let sy = lvl.n.x;
    let sz = lvl.n.x * lvl.n.y;
    var s = sb[c];
    // The six neighbours written out (no loop over axes, no dynamic vector indexing).
    if (p.x + 1 < i32(lvl.n.x)) { s -= row.y * sx[c + 1u]; }
    if (p.y + 1 < i32(lvl.n.y)) { s -= row.z * sx[c + sy]; }
    if (p.z + 1 < i32(lvl.n.z)) { s -= row.w * sx[c + sz]; }
    if (p.x > 0) { s -= sa[c - 1u].y * sx[c - 1u]; }
    if (p.y > 0) { s -= sa[c - sy].z * sx[c - sy]; }
    if (p.z > 0) { s -= sa[c - sz].w * sx[c - sz]; }
    sx[c] = s / row.x;
}

// Sum over the workgroup of one value per invocation (every invocation gets it): the
// pairwise tree of tree_sum_n (pcg.wgsl), over this workgroup's own array.
fn coarse_sum(li: u32, v: f32) -> f32 {
    red_s[li] = v;
    for (var stride = MG_COARSE_WG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) { red_s[li] += red_s[li + stride]; }
    }
    workgroupBarrier();
    let total = red_s[0];
    workgroupBarrier();
    return total;
}

// Relaxes this invocation's cells (li and li + 256) of colour `col`.
fn coarse_relax_mine(li: u32, col: u32) {
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells) {
            let p = cell_coord(c, lvl.n);
            if ((u32(p.x + p.y + p.z) & 1u) == col) { coarse_relax(c); }
        }
    }
}

// Whether the solve is done, read once for the whole workgroup (a uniform value, so a
// kernel with barriers may return on it).
fn workgroup_done(li: u32) -> bool {
    if (li == 0u) { wg_flag = done[PCG_DONE_WORD]; }
    return workgroupUniformLoad(&wg_flag) != 0u;
}

// Solves the coarsest level `lvl` (its cells held in workgroup memory), every invocation
// of the workgroup calling.
fn coarse_solve_wg(li: u32) {
    let o = lvl.off;
    var air = 0.0;
    var live = 0.0;
    var bsum = 0.0;
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells) {
            sa[c] = a[o + c];
            sx[c] = 0.0;
            sb[c] = b[o + c];
            if (types[o + c] == AIR) { air += 1.0; }
            if (sa[c].x != 0.0) { live += 1.0; bsum += sb[c]; }
        }
    }
    // No AIR: pure Neumann, singular; project out the constant (see the reference).
    let singular = coarse_sum(li, air) == 0.0;
    let n_active = max(coarse_sum(li, live), 1.0);
    let bmean = select(0.0, coarse_sum(li, bsum) / n_active, singular);
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells && sa[c].x != 0.0) { sb[c] -= bmean; }
    }
    workgroupBarrier();
    // Symmetric red-black sweeps: red, black, black, red per pair.
    for (var st = 0u; st < 4u * MG_COARSE_SWEEPS; st++) {
        let phase = st & 3u;
        coarse_relax_mine(li, select(0u, 1u, phase == 1u || phase == 2u));
        workgroupBarrier();
    }
    var xsum = 0.0;
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells && sa[c].x != 0.0) { xsum += sx[c]; }
    }
    let xmean = select(0.0, coarse_sum(li, xsum) / n_active, singular);
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells) { x[o + c] = select(0.0, sx[c] - xmean, sa[c].x != 0.0); }
    }
}
