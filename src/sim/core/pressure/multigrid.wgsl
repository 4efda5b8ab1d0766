//!include sim/core/prelude.wgsl
// Multigrid V-cycle preconditioner z = M^-1 r (`mg`). The f64 reference and the reasons
// for every choice (coarsening rule, scaling, smoother order) are in
// src/reference/multigrid.rs; this file follows it step for step.
//
// One bind group per level: this level's matrix, types, solution x, right-hand side b and
// residual, and the next coarser level's matrix, types, solution and right-hand side. On
// level 0, x is PCG's z, b is PCG's r and the residual is PCG's scratch t. The coarsest
// level binds small placeholders in the coarse slots. `winv` holds, per cell of this level,
// one over the sum of its interpolation weights (an f32's bits, never negative) and, in the
// sign bit, whether the boundary sweeps relax the cell (both set up once per solve from the
// cell types).

@group(0) @binding(0) var<uniform> lvl: MgLevel;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> types: array<u32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read> b: array<f32>;
@group(0) @binding(5) var<storage, read_write> res: array<f32>;
@group(0) @binding(6) var<storage, read_write> ca: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> ctypes: array<u32>;
@group(0) @binding(8) var<storage, read> cx: array<f32>;
@group(0) @binding(9) var<storage, read_write> cb: array<f32>;
@group(0) @binding(10) var<storage, read> done: array<u32>;
@group(0) @binding(11) var<storage, read_write> winv: array<u32>;

const BOUNDARY_BIT: u32 = 0x80000000u;

// One over cell c's interpolation weight sum (non-negative: the sign bit is the flag).
fn weight_inv(c: u32) -> f32 { return bitcast<f32>(winv[c] & ~BOUNDARY_BIT); }

// Whether the boundary sweeps relax cell c.
fn boundary_cell(c: u32) -> bool { return (winv[c] & BOUNDARY_BIT) != 0u; }

// Mirrored by `MgLevelParams` in src/sim/core/pressure/multigrid.rs (tests/integration/shaders.rs checks the
// layout).
struct MgLevel {
    n: vec3<u32>,          // cells of this level
    cells: u32,
    nc: vec3<u32>,         // cells of the next coarser level (zero on the coarsest)
    coarse_cells: u32,
    ratio: vec3<u32>,      // 2 along coarsened axes, 1 along the others
    scale: f32,            // restriction scale 4 / 2^k
    _pad3: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

// `done` aliases PcgState; its word PCG_DONE_WORD is the done flag (see pcg.wgsl).
fn solve_done() -> bool { return done[PCG_DONE_WORD] != 0u; }

// Cell of colour `col` ((i+j+k) mod 2) handled by invocation `t`; -1 if none. Invocations
// run over half rows: ceil(nx/2) per (j, k).
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
    let p = cell_coord(c, lvl.n);
    var s = b[c];
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp])) {
            s -= row[comp + 1u] * x[cell_index(p + e, lvl.n)];
        }
        if (p[comp] > 0) {
            let m = cell_index(p - e, lvl.n);
            s -= a[m][comp + 1u] * x[m];
        }
    }
    return s;
}

fn relax(c: u32) {
    let row = a[c];
    if (row.x == 0.0) { x[c] = 0.0; return; }
    x[c] = relax_sum(c, row) / row.x;
}

// Parent of a cell on the next coarser level.
fn parent(p: vec3<i32>) -> u32 {
    return cell_index(p / vec3<i32>(lvl.ratio), lvl.nc);
}

// FLUID cells next to AIR or whose coarse parent is not FLUID get the boundary sweeps.
fn is_boundary(c: u32) -> bool {
    if (types[c] != FLUID) { return false; }
    let p = cell_coord(c, lvl.n);
    if (ctypes[parent(p)] != FLUID) { return true; }
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp]) && types[cell_index(p + e, lvl.n)] == AIR) { return true; }
        if (p[comp] > 0 && types[cell_index(p - e, lvl.n)] == AIR) { return true; }
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
    let t = types[cell_index(min(first + d, last), lvl.n)];
    return select(select(0u, 1u, t == FLUID), 2u, t == AIR);
}

// Coarse types: AIR if any child is AIR, else FLUID if any child is FLUID, else SOLID.
@compute @workgroup_size(WORKGROUP)
fn coarsen(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.coarse_cells) { return; }
    let q = cell_coord(c, lvl.nc);
    // The 8 children written out, without a loop or branches: lavapipe 22.3 leaked host
    // memory on every dispatch of this kernel while they were visited in a loop.
    let rank = max(max(max(type_rank(q, vec3<i32>(0, 0, 0)), type_rank(q, vec3<i32>(1, 0, 0))),
                       max(type_rank(q, vec3<i32>(0, 1, 0)), type_rank(q, vec3<i32>(1, 1, 0)))),
                   max(max(type_rank(q, vec3<i32>(0, 0, 1)), type_rank(q, vec3<i32>(1, 0, 1))),
                       max(type_rank(q, vec3<i32>(0, 1, 1)), type_rank(q, vec3<i32>(1, 1, 1)))));
    let air = rank == 2u;
    let fluid = rank == 1u;
    ctypes[c] = select(select(SOLID, FLUID, fluid), AIR, air);
}

fn coarse_type_at(p: vec3<i32>) -> u32 {
    if (!in_grid(p, lvl.nc)) { return SOLID; }
    return ctypes[cell_index(p, lvl.nc)];
}

// Coarse matrix from the coarse types, with the fine level's stencil (build_matrix.wgsl).
@compute @workgroup_size(WORKGROUP)
fn build_coarse(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.coarse_cells) { return; }
    var row = vec4<f32>(0.0);
    if (ctypes[c] == FLUID) {
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
    ca[c] = row;
}

// --- smoothing ---

// The first red-black pair from x = 0 in one dispatch: a red cell's update sees only zero
// neighbours, so it is b/d, and a black cell's red neighbours are known from b and the
// matrix alone. The same numbers as a red sweep followed by a black one.
fn first_red(m: u32) -> f32 {
    let d = a[m].x;
    return select(0.0, b[m] / d, d != 0.0);
}

@compute @workgroup_size(WORKGROUP)
fn smooth_first(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.cells) { return; }
    let row = a[c];
    let p = cell_coord(c, lvl.n);
    if (row.x == 0.0) { x[c] = 0.0; return; }
    if ((u32(p.x + p.y + p.z) & 1u) == 0u) { x[c] = b[c] / row.x; return; }
    var s = b[c];
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (p[comp] + 1 < i32(lvl.n[comp])) {
            s -= row[comp + 1u] * first_red(cell_index(p + e, lvl.n));
        }
        if (p[comp] > 0) {
            let m = cell_index(p - e, lvl.n);
            s -= a[m][comp + 1u] * first_red(m);
        }
    }
    x[c] = s / row.x;
}

@compute @workgroup_size(WORKGROUP)
fn smooth_red(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = colour_cell(linear_id(wg, nwg, li), 0u);
    if (ci >= 0) { relax(u32(ci)); }
}

@compute @workgroup_size(WORKGROUP)
fn smooth_black(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = colour_cell(linear_id(wg, nwg, li), 1u);
    if (ci >= 0) { relax(u32(ci)); }
}

@compute @workgroup_size(WORKGROUP)
fn boundary_red(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = colour_cell(linear_id(wg, nwg, li), 0u);
    if (ci >= 0 && boundary_cell(u32(ci))) { relax(u32(ci)); }
}

@compute @workgroup_size(WORKGROUP)
fn boundary_black(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = colour_cell(linear_id(wg, nwg, li), 1u);
    if (ci >= 0 && boundary_cell(u32(ci))) { relax(u32(ci)); }
}

// --- transfers ---

@compute @workgroup_size(WORKGROUP)
fn residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.cells) { return; }
    let row = a[c];
    res[c] = select(0.0, relax_sum(c, row) - row.x * x[c], row.x != 0.0);
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
// `weights` computes it once per solve; the transfers then read it and need no types (the
// coarse solution is 0 on every non-FLUID cell).
fn node_ok(nd: vec3<i32>) -> bool {
    return in_grid(nd, lvl.nc) && ctypes[cell_index(nd, lvl.nc)] != SOLID;
}

@compute @workgroup_size(WORKGROUP)
fn weights(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.cells) { return; }
    let flag = select(0u, BOUNDARY_BIT, is_boundary(c));
    if (a[c].x == 0.0) { winv[c] = flag; return; }
    let t = fine_taps(cell_coord(c, lvl.n));
    var wsum = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let nd = tap_node(t, k);
        if (nd.w != 0.0 && node_ok(vec3<i32>(nd.xyz))) { wsum += nd.w; }
    }
    winv[c] = bitcast<u32>(select(0.0, 1.0 / wsum, wsum > 0.0)) | flag;
}

// x += P x_coarse on the active cells.
@compute @workgroup_size(WORKGROUP)
fn prolong(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.cells) { return; }
    let wi = weight_inv(c);
    if (wi == 0.0) { return; }
    let t = fine_taps(cell_coord(c, lvl.n));
    var s = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let nd = tap_node(t, k);
        if (nd.w != 0.0) { s += nd.w * cx[cell_index(vec3<i32>(nd.xyz), lvl.nc)]; }
    }
    x[c] += wi * s;
}

// Trilinear weight along one axis of fine index f for coarse index q (0 if f does not read q).
fn axis_weight(f: i32, q: i32, ratio: u32) -> f32 {
    if (ratio == 1u) { return select(0.0, 1.0, f == q); }
    let d = f - 2 * q;
    if (d == 0 || d == 1) { return 0.75; }
    if (d == -1 || d == 2) { return 0.25; }
    return 0.0;
}

// b_coarse = 4 / 2^k P^T res: the exact transpose of `prolong`, gathered per coarse cell
// from the fine cells whose interpolation reads it (2q-1 .. 2q+2 along a coarsened axis).
@compute @workgroup_size(WORKGROUP)
fn restrict_residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= lvl.coarse_cells) { return; }
    if (ca[c].x == 0.0) { cb[c] = 0.0; return; }
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
                s += wy * axis_weight(x0, q.x, lvl.ratio.x) * weight_inv(f) * res[f];
            }
        }
    }
    cb[c] = lvl.scale * s;
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

@compute @workgroup_size(MG_COARSE_WG)
fn coarse_solve(@builtin(local_invocation_index) li: u32) {
    if (li == 0u) { wg_flag = done[PCG_DONE_WORD]; }
    if (workgroupUniformLoad(&wg_flag) != 0u) { return; }
    var air = 0.0;
    var live = 0.0;
    var bsum = 0.0;
    for (var k = 0u; k < MG_COARSE_PER_THREAD; k++) {
        let c = li + k * MG_COARSE_WG;
        if (c < lvl.cells) {
            sa[c] = a[c];
            sx[c] = 0.0;
            sb[c] = b[c];
            if (types[c] == AIR) { air += 1.0; }
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
        if (c < lvl.cells) { x[c] = select(0.0, sx[c] - xmean, sa[c].x != 0.0); }
    }
}
