//!include prelude.wgsl
// Preconditioners z = M^-1 r on the packed matrix (diag, +x, +y, +z). z = 0 off FLUID cells.
//
// ip:   Incomplete Poisson, M^-1 = K K^T with K = I - L D^-1 (L strictly lower part of A in
//       cell-index order). Note the transpose: K K^T is symmetric positive definite, the
//       product (I - L D^-1)(I - D^-1 L) printed in some write-ups is not, and CG needs SPD.
//       z = K (K^T r) in two fully parallel passes.
// mic0: modified incomplete Cholesky (tau 0.97, sigma 0.25) in exact lexicographic order.
//       Cell (i,j,k) depends only on (i-1,j,k), (i,j-1,k), (i,j,k-1), so all cells of a plane
//       i+j+k = s can run together: one dispatch per plane, nx+ny+nz-2 planes per sweep.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<f32>;
@group(0) @binding(4) var<storage, read_write> t: array<f32>;
@group(0) @binding(5) var<storage, read_write> precon: array<f32>;
@group(0) @binding(6) var<uniform> plane: Plane;
@group(0) @binding(7) var<storage, read> done: array<u32>;

// Keep in sync with `PlaneSlot` in src/sim/pressure/precond.rs.
struct Plane {
    s: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

const TAU: f32 = 0.97;
const SIGMA: f32 = 0.25;

// `done` aliases PcgState; its word 6 is the done flag (see pcg.wgsl).
fn solve_done() -> bool { return done[6] != 0u; }

fn nb(x: vec3<i32>, comp: u32, s: i32) -> i32 {
    // Neighbour cell index along `comp` (s = +-1), or -1 outside the grid.
    var y = x;
    y[comp] += s;
    if (y[comp] < 0 || y[comp] >= i32(params.n[comp])) { return -1; }
    return i32(cell_index(y, params.n));
}

@compute @workgroup_size(64)
fn identity(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    z[c] = select(0.0, r[c], a[c].x != 0.0);
}

@compute @workgroup_size(64)
fn jacobi(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    if (solve_done()) { return; }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let dg = a[c].x;
    z[c] = select(0.0, r[c] / dg, dg != 0.0);
}

// t = K^T r: t_c = r_c - (A_c,+x r_+x + A_c,+y r_+y + A_c,+z r_+z) / d_c
@compute @workgroup_size(64)
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
@compute @workgroup_size(64)
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

@compute @workgroup_size(64)
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
        e -= off * off + TAU * rm[comp + 1u] * others * pm * pm;
    }
    if (e < SIGMA * row.x) { e = row.x; }
    precon[c] = inverseSqrt(e);
}

// Forward substitution L q = r (q kept in t).
@compute @workgroup_size(64)
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
@compute @workgroup_size(64)
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
