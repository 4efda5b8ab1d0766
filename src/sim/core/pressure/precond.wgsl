//!include sim/core/prelude.wgsl
// Preconditioners z = M^-1 r on the packed matrix (diag, +x, +y, +z). z = 0 off FLUID cells.
//
// ip:   Incomplete Poisson, M^-1 = K K^T with K = I - L D^-1 (L strictly lower part of A in
//       cell-index order). Note the transpose: K K^T is symmetric positive definite, the
//       product (I - L D^-1)(I - D^-1 L) printed in some write-ups is not, and CG needs SPD.
//       z = K (K^T r) in two fully parallel passes.
// mic0: modified incomplete Cholesky (tau 0.97, sigma 0.25) in exact lexicographic order.
//       Cell (i,j,k) depends only on (i-1,j,k), (i,j-1,k), (i,j,k-1), so all cells of a plane
//       i+j+k = s can run together: one dispatch per plane, nx+ny+nz-2 planes per sweep.
// mic0_tiled: the same MIC(0) on the block-diagonal part of A whose blocks are 8x8x8 tiles
//       (16x16 on a one-cell-deep slice): couplings between tiles are dropped, so every
//       tile is factored and solved by its own workgroup, its wavefront planes separated
//       by barriers and the forward solution kept in workgroup memory. One dispatch for
//       the factorisation per solve, one per application (block Jacobi with MIC(0) blocks,
//       SPD since every block is). Half of the dropped couplings is taken off the diagonal
//       (MIC_TILE_THETA, see in src/reference/multigrid.rs for why).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
// b, r, z, d, q and t are regions of one buffer (PcgVectors), and wgpu refuses a buffer bound
// both read-only and read-write in one dispatch: all of them are bound read_write.
@group(0) @binding(2) var<storage, read_write> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<f32>;
@group(0) @binding(4) var<storage, read_write> t: array<f32>;
@group(0) @binding(5) var<storage, read_write> precon: array<f32>;
@group(0) @binding(6) var<uniform> plane: Plane;
@group(0) @binding(7) var<storage, read> done: array<u32>;

// Mirrored by `PlaneSlot` in src/sim/core/pressure/precond.rs (tests/integration/shaders.rs checks the layout).
struct Plane {
    s: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

// `done` aliases PcgState; its word PCG_DONE_WORD is the done flag (see pcg.wgsl).
fn solve_done() -> bool { return done[PCG_DONE_WORD] != 0u; }

fn nb(x: vec3<i32>, comp: u32, s: i32) -> i32 {
    // Neighbour cell index along `comp` (s = +-1), or -1 outside the grid.
    var y = x;
    y[comp] += s;
    if (y[comp] < 0 || y[comp] >= i32(params.n[comp])) { return -1; }
    return i32(cell_index(y, params.n));
}

@compute @workgroup_size(WORKGROUP)
fn identity(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    z[c] = select(0.0, r[c], a[c].x != 0.0);
}

@compute @workgroup_size(WORKGROUP)
fn jacobi(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let dg = a[c].x;
    z[c] = select(0.0, r[c] / dg, dg != 0.0);
}

// t = K^T r: t_c = r_c - (A_c,+x r_+x + A_c,+y r_+y + A_c,+z r_+z) / d_c
@compute @workgroup_size(WORKGROUP)
fn ip_upper(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let row = a[c];
    if (row.x == 0.0) { t[c] = 0.0; return; }
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let n = nb(x, comp, 1);
        if (n >= 0) { s += row[comp + 1u] * r[n]; }
    }
    t[c] = r[c] - s / row.x;
}

// z = K t: z_c = t_c - sum over lower neighbours m of A_m,c t_m / d_m
@compute @workgroup_size(WORKGROUP)
fn ip_lower(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (a[c].x == 0.0) { z[c] = 0.0; return; }
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let m = nb(x, comp, -1);
        if (m >= 0) {
            let rm = a[m];
            if (rm.x != 0.0) { s += rm[comp + 1u] * t[m] / rm.x; }
        }
    }
    z[c] = t[c] - s;
}

// Cell of plane `plane.s` handled by this invocation: invocations run over (j, k).
fn plane_cell(id: u32) -> i32 {
    let ny = params.n.y;
    if (id >= ny * params.n.z) { return -1; }
    let j = i32(id % ny);
    let k = i32(id / ny);
    let i = i32(plane.s) - j - k;
    if (i < 0 || i >= i32(params.n.x)) { return -1; }
    return i32(cell_index(vec3<i32>(i, j, k), params.n));
}

@compute @workgroup_size(WORKGROUP)
fn mic_factor(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let ci = plane_cell(linear_id(wg, nwg, li));
    if (ci < 0) { return; }
    let c = u32(ci);
    let row = a[c];
    if (row.x == 0.0) { precon[c] = 0.0; return; }
    let x = cell_coord(c, params.n);
    var e = row.x;
    for (var comp = 0u; comp < 3u; comp++) {
        let m = nb(x, comp, -1);
        if (m < 0) { continue; }
        let rm = a[m];
        let pm = precon[m];
        let off = rm[comp + 1u] * pm;
        // The other two "plus" entries of the lower neighbour (modified-IC fill-in).
        let others = rm.y + rm.z + rm.w - rm[comp + 1u];
        e -= off * off + MIC_TAU * rm[comp + 1u] * others * pm * pm;
    }
    if (e < MIC_SIGMA * row.x) { e = row.x; }
    precon[c] = inverseSqrt(e);
}

// Forward substitution L q = r (q kept in t).
@compute @workgroup_size(WORKGROUP)
fn mic_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = plane_cell(linear_id(wg, nwg, li));
    if (ci < 0) { return; }
    let c = u32(ci);
    let pc = precon[c];
    if (pc == 0.0) { t[c] = 0.0; return; }
    let x = cell_coord(c, params.n);
    var s = r[c];
    for (var comp = 0u; comp < 3u; comp++) {
        let m = nb(x, comp, -1);
        if (m >= 0) { s -= a[m][comp + 1u] * precon[m] * t[m]; }
    }
    t[c] = s * pc;
}

// Backward substitution L^T z = q, planes in decreasing order.
@compute @workgroup_size(WORKGROUP)
fn mic_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let ci = plane_cell(linear_id(wg, nwg, li));
    if (ci < 0) { return; }
    let c = u32(ci);
    let pc = precon[c];
    if (pc == 0.0) { z[c] = 0.0; return; }
    let x = cell_coord(c, params.n);
    let row = a[c];
    var s = t[c];
    for (var comp = 0u; comp < 3u; comp++) {
        let n = nb(x, comp, 1);
        if (n >= 0) { s -= row[comp + 1u] * pc * z[n]; }
    }
    z[c] = s * pc;
}

// --- tiled MIC(0) ---

var<workgroup> tile_a: array<f32, MIC_TILE_MAX>;   // precon (factor), then the forward solution
var<workgroup> tile_b: array<f32, MIC_TILE_MAX>;   // the backward solution
var<workgroup> tile_done: u32;

// The tile of `mic_tile` in src/sim/core/pressure/precond.rs (and the reference).
fn tile_dims() -> vec3<u32> {
    return select(vec3<u32>(MIC_TILE_3D), vec3<u32>(MIC_TILE_SLICE, MIC_TILE_SLICE, 1u),
                  params.n.z == 1u);
}

// Origin (in cells) of the tile of workgroup `w`, or x = -1 past the last tile.
fn tile_origin(w: u32) -> vec3<i32> {
    let td = tile_dims();
    let tc = (params.n + td - vec3<u32>(1u)) / td;
    if (w >= tc.x * tc.y * tc.z) { return vec3<i32>(-1); }
    let t = vec3<u32>(w % tc.x, (w / tc.x) % tc.y, w / (tc.x * tc.y));
    return vec3<i32>(t * td);
}

fn local_coord(l: u32) -> vec3<i32> { return cell_coord(l, tile_dims()); }
fn local_index(p: vec3<i32>) -> u32 { return cell_index(p, tile_dims()); }

@compute @workgroup_size(MIC_TILE_WG)
fn mict_factor(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let origin = tile_origin(wg.y * nwg.x + wg.x);
    if (origin.x < 0) { return; }
    let td = tile_dims();
    let count = td.x * td.y * td.z;
    let planes = td.x + td.y + td.z - 2u;
    for (var s = 0u; s < planes; s++) {
        for (var l = li; l < count; l += MIC_TILE_WG) {
            let lp = local_coord(l);
            if (u32(lp.x + lp.y + lp.z) != s) { continue; }
            let g = origin + lp;
            if (!in_grid(g, params.n)) { continue; }
            let c = cell_index(g, params.n);
            let row = a[c];
            if (row.x == 0.0) { tile_a[l] = 0.0; continue; }
            var dropped = 0.0;
            for (var comp = 0u; comp < 3u; comp++) {
                if (lp[comp] == 0 && g[comp] > 0) {
                    dropped -= a[cell_index(g - unit(comp), params.n)][comp + 1u];
                }
                if (u32(lp[comp]) + 1u == td[comp]) { dropped -= row[comp + 1u]; }
            }
            var e = row.x - MIC_TILE_THETA * dropped;
            for (var comp = 0u; comp < 3u; comp++) {
                if (lp[comp] == 0) { continue; }
                let lm = lp - unit(comp);
                let rm = a[cell_index(g - unit(comp), params.n)];
                let pm = tile_a[local_index(lm)];
                let off = rm[comp + 1u] * pm;
                // Fill-in of the lower neighbour's other upper couplings inside the tile.
                var others = 0.0;
                for (var k = 0u; k < 3u; k++) {
                    if (k != comp && u32(lm[k]) + 1u < td[k]) { others += rm[k + 1u]; }
                }
                e -= off * off + MIC_TAU * rm[comp + 1u] * others * pm * pm;
            }
            if (e < MIC_SIGMA * row.x) { e = row.x; }
            tile_a[l] = inverseSqrt(e);
        }
        workgroupBarrier();
    }
    for (var l = li; l < count; l += MIC_TILE_WG) {
        let g = origin + local_coord(l);
        if (in_grid(g, params.n)) { precon[cell_index(g, params.n)] = tile_a[l]; }
    }
}

@compute @workgroup_size(MIC_TILE_WG)
fn mict_apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    if (li == 0u) { tile_done = done[PCG_DONE_WORD]; }
    if (workgroupUniformLoad(&tile_done) != 0u) { return; }
    let origin = tile_origin(wg.y * nwg.x + wg.x);
    if (origin.x < 0) { return; }
    let td = tile_dims();
    let count = td.x * td.y * td.z;
    let planes = td.x + td.y + td.z - 2u;
    // Forward substitution L q = r into tile_a.
    for (var s = 0u; s < planes; s++) {
        for (var l = li; l < count; l += MIC_TILE_WG) {
            let lp = local_coord(l);
            if (u32(lp.x + lp.y + lp.z) != s) { continue; }
            let g = origin + lp;
            if (!in_grid(g, params.n)) { continue; }
            let c = cell_index(g, params.n);
            let pc = precon[c];
            if (pc == 0.0) { tile_a[l] = 0.0; continue; }
            var acc = r[c];
            for (var comp = 0u; comp < 3u; comp++) {
                if (lp[comp] == 0) { continue; }
                let m = cell_index(g - unit(comp), params.n);
                acc -= a[m][comp + 1u] * precon[m] * tile_a[local_index(lp - unit(comp))];
            }
            tile_a[l] = acc * pc;
        }
        workgroupBarrier();
    }
    // Backward substitution L^T z = q into tile_b, planes in decreasing order.
    for (var si = 0u; si < planes; si++) {
        let s = planes - 1u - si;
        for (var l = li; l < count; l += MIC_TILE_WG) {
            let lp = local_coord(l);
            if (u32(lp.x + lp.y + lp.z) != s) { continue; }
            let g = origin + lp;
            if (!in_grid(g, params.n)) { continue; }
            let c = cell_index(g, params.n);
            let pc = precon[c];
            if (pc == 0.0) { tile_b[l] = 0.0; continue; }
            let row = a[c];
            var acc = tile_a[l];
            for (var comp = 0u; comp < 3u; comp++) {
                if (u32(lp[comp]) + 1u >= td[comp] || g[comp] + 1 >= i32(params.n[comp])) { continue; }
                acc -= row[comp + 1u] * pc * tile_b[local_index(lp + unit(comp))];
            }
            tile_b[l] = acc * pc;
        }
        workgroupBarrier();
    }
    for (var l = li; l < count; l += MIC_TILE_WG) {
        let g = origin + local_coord(l);
        if (in_grid(g, params.n)) { z[cell_index(g, params.n)] = tile_b[l]; }
    }
}
