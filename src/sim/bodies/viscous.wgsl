//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
//!include sim/core/face_kinds.wgsl
//!include sim/bodies/shape.wgsl
// The dynamic bodies in the viscosity solve (src/sim/bodies/viscous.rs; the f64 reference is
// src/reference/diffusion.rs, `diffuse_velocity_coupled`).
//
// The viscosity step (src/sim/core/diffusion.wgsl) solves A u = u* + (the fixed faces'
// values), a face next to a SOLID cell or covered by a body (at least half of it,
// sim/core/face_kinds.wgsl) taking the solid's velocity u_g with weight c a,
// a = nu dt / h^2 (c = 2 across a tangential wall halfway, else 1). Where that solid is a
// dynamic body, its velocity q = (v, w h) is an unknown too, and u_g = J_g q with
// J_g = (e, (r_g / h) x e) at the face's centre r_g (from the body's centre, e the face's
// component). Backward Euler on the fluid's faces and the body together minimises
//   1/2 |u - u*|^2 + 1/2 (q - q*)^T M (q - q*) + 1/2 sum over links c a (u_f - J_g q)^2,
// M the body's mass and inertia over the mass of a face's control volume (rho h A_face,
// the inertia over h^2 more). Its optimum solves
//   [ A     -B ] [u]   [r0  ]      B = sum over links c a e_f J_g  (a face's row of B: the
//   [ -B^T   D ] [q] = [M q*]      sum over its links to the body), D = M + sum c a J^T J,
// symmetric positive definite. With q eliminated, q = D^-1 (M q* + B^T u):
//   (A - B D^-1 B^T) u = r0 + B D^-1 M q*,
// still symmetric positive definite (a Schur complement of one), so the PCG runs on it as
// on the pressure's strong coupling: the term K = -B D^-1 B^T is of rank 6 per body and is
// applied matrix-free (`sum_d`: t = B^T d per body over its box, then D^-1 t; `add_q`:
// q -= B (D^-1 t) over the rows of the boxes). The body's velocity after the step is
// q = D^-1 (M q* + B^T u), its change what the liquid's stress gave it: the viscous
// force and torque, equal and opposite to what the liquid took, whatever the density
// ratio (no explicit step for a light body to blow up on).
//
// Where the body's surface is: a link from face f to a face n of the body takes the
// surface where the body's signed distance, interpolated linearly from f's centre to n's,
// crosses zero, at theta h from f (theta >= WALL_THETA_MIN), and the ghost value there: weight
// a / theta and J at that point (the ghost-fluid Dirichlet condition; Batty & Bridson 2008
// weigh the stress by volume fractions instead). The stair-stepped surface (theta = 1 at a
// face the body covers, 1/2 for the wall halfway across a tangential face) put the no-slip
// wall up to a cell off and slowed settling spheres by 11-19%. `rhs` moves the assembly's
// diagonal and right-hand side from its weight to this one. Kinematic and fixed bodies keep
// the assembly's.
//
// The angular unknown is w h (lever arms in cells) so the six unknowns are of one scale
// and D inverts in f32. In a slice (nz = 1) a body moves in x-y and turns about z only:
// its other three unknowns are left out (identity rows of D, no change).

// Mirrored by `ViscousParams` in src/sim/bodies/viscous.rs.
struct ViscousParams {
    sys_n: vec3<u32>,      // the diffusion system's grid (diffusion.wgsl)
    sys_cells: u32,
    block: vec3<u32>,      // one component's block of it
    bodies: u32,
    k: f32,                // nu / h^2, 1/s: diffusion.wgsl's coefficient (times params.dt)
    slice: u32,
    out_at: u32,           // where each body's change of velocity goes in `dv_out`
    covered: u32,          // 1 when `cover` holds the bodies' faces (diffusion.wgsl's)
};

// Mirrored by `ViscousBody` in src/sim/bodies/viscous.rs.
struct ViscousBody {
    mass: vec4<f32>,       // x: m / m_face; y: 1 when the body is coupled (dynamic)
    inertia_x: vec4<f32>,  // columns of I (world axes) / (m_face h^2)
    inertia_y: vec4<f32>,
    inertia_z: vec4<f32>,
    // What the forces before the solve (gravity, a spring; `BodySet::predict`) added to
    // the velocity and the angular velocity times h this substep.
    forced_v: vec4<f32>,
    forced_w: vec4<f32>,
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> vp: ViscousParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read_write> solid_vel: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> vel: array<f32>;
@group(0) @binding(5) var<storage, read> vb: array<ViscousBody>;
// Per body VS_STRIDE f32: D^-1 (36, row-major), y = D^-1 M q* (6), z = D^-1 B^T x (6).
@group(0) @binding(6) var<storage, read_write> vs: array<f32>;
// read_write: `rhs` moves the diagonal to the links' weights.
@group(0) @binding(7) var<storage, read_write> a: array<vec4<f32>>;
// b, r, z, d and q are regions of one buffer (PcgVectors): all bound read_write.
@group(0) @binding(8) var<storage, read_write> b: array<f32>;
@group(0) @binding(9) var<storage, read_write> p: array<f32>;
@group(0) @binding(10) var<storage, read_write> d: array<f32>;
@group(0) @binding(11) var<storage, read_write> q: array<f32>;
@group(0) @binding(12) var<storage, read_write> r: array<f32>;
@group(0) @binding(13) var<storage, read_write> z: array<f32>;
// The PCG's state; word PCG_DONE_WORD is its done flag (see pcg.wgsl).
@group(0) @binding(14) var<storage, read> done: array<u32>;
// The strong coupling's bodies (strong.wgsl's CoupleBody, COUPLE_VEC4S vec4 each: centre,
// velocity, angular velocity, ...): the velocities the step starts from and leaves.
@group(0) @binding(15) var<storage, read_write> cb: array<vec4<f32>>;
// The strong coupling's sums, which the substep reads back: from vp.out_at, six numbers per
// body, its change of velocity and angular velocity in the step.
@group(0) @binding(16) var<storage, read_write> dv_out: array<f32>;
// Per face, the body that covers it and its share (src/sim/bodies/coupling.wgsl).
@group(0) @binding(17) var<storage, read> cover: array<u32>;
// The bodies' shapes and poses (coupling.wgsl's).
@group(0) @binding(18) var<storage, read> bodies: array<Body>;

fn covers_on() -> bool {
    return vp.covered != 0u;
}

fn body_slice() -> bool {
    return vp.slice != 0u;
}


const VS_STRIDE: u32 = 48u;
const VS_Y: u32 = 36u;
const VS_Z: u32 = 42u;
const COUPLE_VEC4S: u32 = 9u;
const VWG: u32 = 64u;

var<workgroup> red: array<array<f32, 21>, VWG>;
var<workgroup> wg_done: u32;

// A face's link to a body: the body's index + 1 (0: none), its weight a / theta and the
// assembly's c a, J's two parts, and the face's index in `vel`.
struct Link {
    k: u32,
    w: f32,
    w0: f32,
    lin: vec3<f32>,
    ang: vec3<f32>,
    g: u32,
};

// The index + 1 of the coupled body whose SOLID cell `c` is, or 0.
fn owner(c: vec3<i32>) -> u32 {
    if (!in_grid(c, params.n)) { return 0u; }
    let i = cell_index(c, params.n);
    if (cell_type[i] != SOLID) { return 0u; }
    let id = u32(max(solid_vel[i].w, 0.0));
    if (id == 0u || id > vp.bodies) { return 0u; }
    if (vb[id - 1u].mass.y == 0.0) { return 0u; }
    return id;
}

fn centre_of(k: u32) -> vec3<f32> {
    return cb[k * COUPLE_VEC4S].xyz;
}

// The start velocity q* of body k: (v, w h) before this substep's forces, as the liquid's
// faces are (its gravity comes after the viscosity: liquid/mod.rs, Stage::Viscosity).
// Diffusing the body's g dt against a liquid still without its own would drag the liquid
// down with a body that is only falling with it.
fn start_of(k: u32) -> array<f32, 6> {
    let v = cb[k * COUPLE_VEC4S + 1u].xyz - vb[k].forced_v.xyz;
    let w = cb[k * COUPLE_VEC4S + 2u].xyz * params.h - vb[k].forced_w.xyz;
    return array<f32, 6>(v.x, v.y, v.z, w.x, w.y, w.z);
}

// The link of the unknown face f of component `comp` to its neighbour f + side e_ax.
fn link(comp: u32, f: vec3<i32>, ax: u32, side: i32) -> Link {
    var l: Link;
    l.k = 0u;
    let dims = face_dims(comp, params.n);
    let n = f + side * unit(ax);
    if (!in_grid(n, dims)) { return l; }
    let kind = face_kind(comp, n);
    if (kind != FIXED && kind != FULLY_SOLID) { return l; }
    let ka = owner(n - unit(comp));
    let kb = owner(n);
    let kc = covering(comp, n);
    var k = 0u;
    if (kind == FIXED && kc != 0u) {
        // A face a body covers (of a coupled body, or a velocity boundary).
        if (kc <= vp.bodies && vb[kc - 1u].mass.y != 0.0) { k = kc; }
    } else if (kind == FIXED) {
        k = max(ka, kb);
    } else if (ka == kb) {
        k = ka;
    }
    if (k == 0u) { return l; }
    l.k = k;
    let a_dt = vp.k * params.dt;
    l.w0 = select(1.0, 2.0, kind == FULLY_SOLID && ax != comp) * a_dt;
    l.w = l.w0;
    let e = vec3<f32>(unit(comp));
    var x = (vec3<f32>(n) + vec3<f32>(0.5) - 0.5 * e) * params.h;
    // The surface between the two faces' centres, where the body's distance changes sign.
    let xf = (vec3<f32>(f) + vec3<f32>(0.5) - 0.5 * e) * params.h;
    let da = body_distance(bodies[k - 1u], xf);
    let db = body_distance(bodies[k - 1u], x);
    if (db <= 0.0) {
        // A face whose centre the body already holds (it covers under half of it) has the
        // surface at its centre: theta's least, continuous with one just outside.
        let dp = max(da, 0.0);
        var theta = f32(WALL_THETA_MIN);
        if (dp - db > 0.0) { theta = max(dp / (dp - db), theta); }
        l.w = a_dt / theta;
        x = xf + theta * (x - xf);
    }
    var rr = (x - centre_of(k - 1u)) / params.h;
    if (vp.slice != 0u) { rr.z = 0.0; }
    l.lin = e;
    l.ang = cross(rr, e);
    l.g = face_offset(comp, params) + face_index(n, dims);
    return l;
}

fn axes() -> u32 {
    return select(3u, 2u, vp.slice != 0u);
}

// Row s of the system: its component and face, or comp 3 where s is not an unknown.
struct Row {
    comp: u32,
    f: vec3<i32>,
};

fn row_of(s: u32) -> Row {
    var out_row: Row;
    out_row.comp = 3u;
    if (s >= vp.sys_cells || a[s].x == 0.0) { return out_row; }
    let sc = cell_coord(s, vp.sys_n);
    out_row.comp = u32(sc.z) / vp.block.z;
    out_row.f = vec3<i32>(sc.x, sc.y, sc.z - i32(out_row.comp * vp.block.z));
    return out_row;
}

fn j_dot(l: Link, v: array<f32, 6>) -> f32 {
    return dot(l.lin, vec3<f32>(v[0], v[1], v[2])) + dot(l.ang, vec3<f32>(v[3], v[4], v[5]));
}

fn stored(k: u32, at: u32) -> array<f32, 6> {
    let o = k * VS_STRIDE + at;
    return array<f32, 6>(vs[o], vs[o + 1u], vs[o + 2u], vs[o + 3u], vs[o + 4u], vs[o + 5u]);
}

// sum over row s's links of w J . (the stored vector at `at` of the link's body).
fn row_term(s: u32, at: u32) -> f32 {
    let rw = row_of(s);
    if (rw.comp >= 3u) { return 0.0; }
    var acc = 0.0;
    for (var ax = 0u; ax < axes(); ax++) {
        for (var side = -1; side <= 1; side += 2) {
            let l = link(rw.comp, rw.f, ax, side);
            if (l.k != 0u) { acc += l.w * j_dot(l, stored(l.k - 1u, at)); }
        }
    }
    return acc;
}

// ---- Per body, over the faces of its box ----

// The faces of component `comp` next to body k's box of cells (lo - 1 ..= hi, within the
// face grid): (lo, extent).
fn face_box(k: u32, comp: u32) -> array<vec3<i32>, 2> {
    let dims = vec3<i32>(face_dims(comp, params.n));
    let lo_i = bitcast<vec4<i32>>(cb[k * COUPLE_VEC4S + 7u]).xyz;
    let hi_i = bitcast<vec4<i32>>(cb[k * COUPLE_VEC4S + 8u]).xyz;
    let l = clamp(lo_i - vec3<i32>(1), vec3<i32>(0), dims);
    let h = clamp(hi_i + vec3<i32>(2), vec3<i32>(0), dims);
    return array<vec3<i32>, 2>(l, max(h - l, vec3<i32>(0)));
}

fn box_count(bx: array<vec3<i32>, 2>) -> u32 {
    return u32(bx[1].x) * u32(bx[1].y) * u32(bx[1].z);
}

// Body k's sums over its links, to every thread: what 0: the upper triangle of
// sum w J J^T (21); 1: sum w J d (6); 2: sum w J p (6). Call from uniform control flow.
fn body_sums(k: u32, li: u32, what: u32) -> array<f32, 21> {
    var acc: array<f32, 21>;
    for (var i = 0u; i < 21u; i++) { acc[i] = 0.0; }
    for (var comp = 0u; comp < axes(); comp++) {
        let bx = face_box(k, comp);
        let count = box_count(bx);
        let ex = u32(bx[1].x);
        let ey = u32(bx[1].y);
        for (var t = li; t < count; t += VWG) {
            let f = bx[0] + vec3<i32>(i32(t % ex), i32((t / ex) % ey), i32(t / (ex * ey)));
            let s = u32(f.x) + vp.sys_n.x * (u32(f.y) + vp.sys_n.y * (u32(f.z) + comp * vp.block.z));
            if (a[s].x == 0.0) { continue; }
            let x = select(d[s], p[s], what == 2u);
            for (var ax = 0u; ax < axes(); ax++) {
                for (var side = -1; side <= 1; side += 2) {
                    let l = link(comp, f, ax, side);
                    if (l.k != k + 1u) { continue; }
                    let j = array<f32, 6>(l.lin.x, l.lin.y, l.lin.z, l.ang.x, l.ang.y, l.ang.z);
                    if (what == 0u) {
                        var m = 0u;
                        for (var r0 = 0u; r0 < 6u; r0++) {
                            for (var c0 = r0; c0 < 6u; c0++) {
                                acc[m] += l.w * j[r0] * j[c0];
                                m++;
                            }
                        }
                    } else {
                        for (var i = 0u; i < 6u; i++) { acc[i] += l.w * j[i] * x; }
                    }
                }
            }
        }
    }
    workgroupBarrier();
    red[li] = acc;
    for (var stride = VWG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) {
            for (var i = 0u; i < 21u; i++) { red[li][i] += red[li + stride][i]; }
        }
    }
    workgroupBarrier();
    let total = red[0];
    workgroupBarrier();
    return total;
}

// Whether unknown i of a body is left out (a slice's z, and turns about x and y).
fn frozen(i: u32) -> bool {
    return vp.slice != 0u && i >= 2u && i <= 4u;
}

// Once per solve, one workgroup per body: D = M + sum w J^T J, D^-1 and y = D^-1 M q*.
@compute @workgroup_size(VWG)
fn setup(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let k = wg.x;
    if (k >= vp.bodies) { return; }
    let kk = body_sums(k, li, 0u);
    if (li != 0u) { return; }
    let body = vb[k];
    var m: array<array<f32, 6>, 6>;
    var inv: array<array<f32, 6>, 6>;
    var idx = 0u;
    for (var r0 = 0u; r0 < 6u; r0++) {
        for (var c0 = r0; c0 < 6u; c0++) {
            m[r0][c0] = kk[idx];
            m[c0][r0] = kk[idx];
            idx++;
        }
    }
    let ii = array<vec4<f32>, 3>(body.inertia_x, body.inertia_y, body.inertia_z);
    var mq: array<f32, 6>;
    let q0 = start_of(k);
    for (var r0 = 0u; r0 < 6u; r0++) {
        mq[r0] = 0.0;
        for (var c0 = 0u; c0 < 6u; c0++) {
            var mass = 0.0;
            if (r0 < 3u && c0 == r0) { mass = body.mass.x; }
            if (r0 >= 3u && c0 >= 3u) { mass = ii[c0 - 3u][r0 - 3u]; }
            m[r0][c0] += mass;
            mq[r0] += mass * q0[c0];
            inv[r0][c0] = select(0.0, 1.0, r0 == c0);
            if (frozen(r0) || frozen(c0)) { m[r0][c0] = select(0.0, 1.0, r0 == c0); }
        }
        if (frozen(r0)) { mq[r0] = q0[r0]; }
    }
    // Gauss-Jordan: D is symmetric positive definite, every pivot positive.
    for (var c0 = 0u; c0 < 6u; c0++) {
        let piv = 1.0 / m[c0][c0];
        for (var j = 0u; j < 6u; j++) {
            m[c0][j] *= piv;
            inv[c0][j] *= piv;
        }
        for (var r0 = 0u; r0 < 6u; r0++) {
            if (r0 == c0) { continue; }
            let f = m[r0][c0];
            for (var j = 0u; j < 6u; j++) {
                m[r0][j] -= f * m[c0][j];
                inv[r0][j] -= f * inv[c0][j];
            }
        }
    }
    let o = k * VS_STRIDE;
    for (var r0 = 0u; r0 < 6u; r0++) {
        var y = 0.0;
        for (var c0 = 0u; c0 < 6u; c0++) {
            vs[o + 6u * r0 + c0] = inv[r0][c0];
            y += inv[r0][c0] * mq[c0];
        }
        vs[o + VS_Y + r0] = y;
        vs[o + VS_Z + r0] = 0.0;
    }
}

// Once per solve, per row: the right-hand side takes the body's part, B D^-1 M q*, in
// place of the fixed value diffusion.wgsl gave the link (w u_g).
@compute @workgroup_size(WORKGROUP)
fn rhs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    let rw = row_of(s);
    if (rw.comp >= 3u) { return; }
    var add = 0.0;
    var diag = 0.0;
    for (var ax = 0u; ax < axes(); ax++) {
        for (var side = -1; side <= 1; side += 2) {
            let l = link(rw.comp, rw.f, ax, side);
            if (l.k != 0u) {
                add += l.w * j_dot(l, stored(l.k - 1u, VS_Y)) - l.w0 * vel[l.g];
                diag += l.w - l.w0;
            }
        }
    }
    b[s] += add;
    a[s].x += diag;
}

// z_k = D^-1 t of the sums t in `total` (thread 0 only).
fn store_z(k: u32, total: array<f32, 21>) {
    let o = k * VS_STRIDE;
    for (var r0 = 0u; r0 < 6u; r0++) {
        var zr = 0.0;
        for (var c0 = 0u; c0 < 6u; c0++) { zr += vs[o + 6u * r0 + c0] * total[c0]; }
        vs[o + VS_Z + r0] = zr;
    }
}

fn is_done_uniform(li: u32) -> bool {
    if (li == 0u) { wg_done = done[PCG_DONE_WORD]; }
    return workgroupUniformLoad(&wg_done) != 0u;
}

// In each iteration, one workgroup per body: z_k = D^-1 B^T d (skipped once the solve is done).
@compute @workgroup_size(VWG)
fn sum_d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    let k = wg.x;
    if (k >= vp.bodies) { return; }
    let t = body_sums(k, li, 1u);
    if (li == 0u) { store_z(k, t); }
}

// The same of p (the start, or the solution).
@compute @workgroup_size(VWG)
fn sum_p(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let k = wg.x;
    if (k >= vp.bodies) { return; }
    let t = body_sums(k, li, 2u);
    if (li == 0u) { store_z(k, t); }
}

// Whether face f of component `comp` lies in the face box of a body before body k: the
// first body whose box holds a row writes it (`add_q`).
fn owned_by_earlier(k: u32, comp: u32, f: vec3<i32>) -> bool {
    for (var j = 0u; j < k; j++) {
        let bx = face_box(j, comp);
        if (all(f >= bx[0]) && all(f < bx[0] + bx[1])) { return true; }
    }
    return false;
}

// q += K d = -B z (skipped once the solve is done), one workgroup per body over its face
// box: K d is zero on a row with no link, and a row linked to body k lies in k's box. A row
// several boxes hold is written once, by the first, with every body's links.
@compute @workgroup_size(VWG)
fn add_q(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    let k = wg.x;
    if (k >= vp.bodies) { return; }
    for (var comp = 0u; comp < axes(); comp++) {
        let bx = face_box(k, comp);
        let count = box_count(bx);
        let ex = u32(bx[1].x);
        let ey = u32(bx[1].y);
        for (var t = li; t < count; t += VWG) {
            let f = bx[0] + vec3<i32>(i32(t % ex), i32((t / ex) % ey), i32(t / (ex * ey)));
            let s = u32(f.x) + vp.sys_n.x * (u32(f.y) + vp.sys_n.y * (u32(f.z) + comp * vp.block.z));
            if (a[s].x == 0.0 || owned_by_earlier(k, comp, f)) { continue; }
            q[s] -= row_term(s, VS_Z);
        }
    }
}

// r -= K p = r + B z.
@compute @workgroup_size(WORKGROUP)
fn sub_r(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= vp.sys_cells) { return; }
    r[s] += row_term(s, VS_Z);
}

// z = K p, for the true residual (pcg.wgsl's `true_row`).
@compute @workgroup_size(WORKGROUP)
fn into_z(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= vp.sys_cells) { return; }
    z[s] = -row_term(s, VS_Z);
}

// After the solve (and `sum_p` of the solution): each coupled body's velocity
// q = y + D^-1 B^T u goes to the strong coupling's bodies, and its change to `dv_out`.
@compute @workgroup_size(VWG)
fn finish(@builtin(local_invocation_index) li: u32) {
    for (var k = li; k < vp.bodies; k += VWG) {
        var dq = array<f32, 6>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        if (vb[k].mass.y != 0.0) {
            let q0 = start_of(k);
            let y = stored(k, VS_Y);
            let zz = stored(k, VS_Z);
            for (var i = 0u; i < 6u; i++) {
                if (!frozen(i)) { dq[i] = y[i] + zz[i] - q0[i]; }
            }
            let dv = vec3<f32>(dq[0], dq[1], dq[2]);
            let dw = vec3<f32>(dq[3], dq[4], dq[5]) / params.h;
            cb[k * COUPLE_VEC4S + 1u] += vec4<f32>(dv, 0.0);
            cb[k * COUPLE_VEC4S + 2u] += vec4<f32>(dw, 0.0);
            dq[3] = dw.x;
            dq[4] = dw.y;
            dq[5] = dw.z;
        }
        for (var i = 0u; i < 6u; i++) { dv_out[vp.out_at + 6u * k + i] = dq[i]; }
    }
}

// Then per cell: the coupled bodies' cells (and the cells their covered faces lean on,
// coupling.wgsl's `stamp`) take the new velocity, which the boundary stage gives the faces.
@compute @workgroup_size(WORKGROUP)
fn restamp(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let sv = solid_vel[c];
    let id = u32(max(sv.w, 0.0));
    if (id == 0u || id > vp.bodies || vb[id - 1u].mass.y == 0.0) { return; }
    let k = id - 1u;
    let x = (vec3<f32>(cell_coord(c, params.n)) + vec3<f32>(0.5)) * params.h;
    var rr = x - centre_of(k);
    if (vp.slice != 0u) { rr.z = 0.0; }
    let v = cb[k * COUPLE_VEC4S + 1u].xyz + cross(cb[k * COUPLE_VEC4S + 2u].xyz, rr);
    solid_vel[c] = vec4<f32>(v, sv.w);
}
