//!include sim/core/prelude.wgsl
// The bodies in the pressure solve (src/sim/bodies/strong.rs).
//
// Body k covers a share c_f of face f (coupling.wgsl's `cover`: the part of the face's
// control volume inside the body, or 1 on the faces of the body's own cells where bodies are
// whole cells). For a FLUID cell c and its face f in direction e, the body's velocity
// (v, w) moves c_f of the face at v + w x r_f (r_f from the body's centre to the face's
// centre), which adds c_f (e, r_f x e) . (v, w) to c's outflow. With n = -e (the direction
// from the covered part back into c), j_f = c_f (n, r_f x n) maps the body's velocity to the
// flux into c, and J_k x = sum over c's faces of j_f x_c, over the FLUID cells c. The
// pressure's impulse on the body, -rho A_face J phi, is then the pressure gradient summed
// over what the body covers: its volume integral, which needs no pressure inside the body
// (a cell whose faces the body covers whole has sum j_f = 0, force and torque alike).
//
// The strong coupling (Batty, Bertails & Bridson 2007) solves the body's velocity with the
// pressure: the body's faces carry v* + M^-1 J^T-impulse, and with phi = p dt / rho the
// impulse of the pressure on the body is -rho A_face J phi. Putting that velocity into the
// divergence of each FLUID cell next to the body gives
//   (A + s J^T M^-1 J) phi = b,     s = h rho A_face,
// where b already holds the faces at v* (the body's velocity after gravity and the other
// forces, uploaded before the solve). The added term is symmetric positive semi-definite
// and of rank 6 per body, so the PCG keeps working on it matrix-free: per iteration
// `reduce_d` sums J_k d per body over the cells of its box (split over several workgroups
// per body, "The box loops" below; a fixed order: the same bits every run), and
// `add_q_boxes` takes w_k = s M_k^-1 J_k d from those sums and adds
// (s J^T M^-1 J d)_c = sum over c's covered faces of j_f . w_k to q = A d over the boxes'
// cells (2 dispatches; with `project`, each body's one part stores w_k itself and `add_q`
// runs over every cell). The preconditioner still preconditions A alone: each body adds at most 6 outlying
// eigenvalues.
//
// The smoke's closed box is a pure Neumann problem: A's null space holds the constant, which
// the preconditioner projects out (multigrid.wgsl's coarse solve), and the right-hand side is
// made compatible (coupling.wgsl). A body against a wall, a solid or another body has faces
// that do not close (c_k = J_k 1 is not zero), and its term would give the constant mode an
// eigenvalue the preconditioner cannot see: the PCG then breaks down. With `project` the term
// is P K P instead, P = I - 1 1^T / n_fluid: J_k P x = J_k x - c_k mean(x) (`sum_d`/`sum_p`
// sum x over the FLUID cells first), and P K x subtracts sum_k c_k . w_k / n_fluid from every
// FLUID cell (the sum of K x over the cells, exactly). A body then cannot change the volume
// of the closed box's fluid, which is the container's own constraint.
//
// Deflation (`deflate_j`, `deflate_z`, `deflate_setup`, `deflate_sums`, `deflate_add`; liquid only,
// `project` 0, and only where the scene asks for it: `body_deflation`, off by default): the
// preconditioner sees A alone, so each body's six modes stay outlying eigenvalues of the
// preconditioned (A + K) and cost `mg` about five more iterations with 16 bodies. Deflating
// them (A-DEF2 of Tang, Nabben, Vuik & Erlangga 2009) with a space Z of six columns per body:
//   z <- z + Z E^-1 (Z^T r - (S Z)^T z),   z = M^-1 r,   S = A + K,   E = Z^T S Z,
// a correction in the span of Z that makes the residual's part there exact. The outlying
// eigenvectors lie near A^-1 J^T, the pressure a unit push of the body makes: smooth, and
// spread beyond the layer of cells next to the body where J^T lives. Z = J^T itself (the
// first version) caught them on coarse grids but lost its grip as the grid refined (16
// bodies, f64: 12 iterations against A alone's 11 at 64^3, 14 against 13 at 128^3). Z_k =
// S_2 J_k^T, two damped Jacobi sweeps on A z = J_k^T from z = 0 (S_2 = 2 w D^-1 - w^2 D^-1 A
// D^-1, D = diag(A), w = 0.8), moves J^T one cell out and towards A^-1 J^T, and gives A
// alone's count back at 32^3, 64^3 and 128^3 (11 and 13 above; four sweeps gained nothing
// more, eight one iteration at 64^3; examples/deflation_study.rs). `deflate_j` and
// `deflate_z` store each body's rows of J_k^T and Z_k once per solve over its `z_box` (the
// box of `defl_box` grown by a cell), the host placing the boxes one after another (lo.w).
// A-DEF2 needs a start whose residual has no part in the space, Z^T r = 0: without it a
// body that barely touches the liquid (E_k's modes spread over more than five decades)
// made `mg` stall, in f64 as in f32. So the solve's start is deflated too (`deflate_start`,
// `deflate_p`): p += Z E^-1 Z^T r, and the PCG computes r = b - (A + K) p again before its
// first preconditioner. E and S Z are taken per body (the blocks of body k alone):
// Z_k^T A Z_k + G_k C_k G_k with G_k = J_k Z_k (symmetric, as S_2 is) and C_k = s M_k^-1,
// and (S Z)_k^T z = Z_k^T (A z) + G_k C_k J_k z, so an iteration sums Z_k^T (r - A z) and
// J_k z (12 numbers per body). Bodies whose boxes touch couple in the exact E; leaving that
// out costs no iteration on the 16-body pool (f64, 32^3 to 128^3). src/reference/bodies.rs
// (`deflation_space`, `deflation_blocks`, `deflate`) is the f64 reference.
//
// `reduce_p` does the same for the solution phi and also sums J_k (g . n_f), from which the
// host builds the fluid's force on the body (src/sim/bodies/strong.rs, `read_forces`);
// `sub_r` takes (K p)_c from the initial residual (a warm start), `into_z` writes K p for
// the true residual (pcg.wgsl, `true_row`), and `restamp` gives each coupled body's cells
// (and the cells next to the faces it covers) the body's velocity after the solve,
// v* - w_k / h, so the projected faces next to the body carry the velocity the solve made
// the fluid's divergence vanish with.

// Mirrored by `CoupleBody` in src/sim/bodies/strong.rs (layout checked by tests/integration/shaders.rs).
struct CoupleBody {
    centre: vec4<f32>,        // m
    vel: vec4<f32>,           // v* (m/s): the velocity the body's faces carry in b
    omega: vec4<f32>,         // w* (rad/s)
    inv_mass: vec4<f32>,      // s / m per axis; 0 where the body cannot move (kinematic, fixed,
                              // or off a slice's plane)
    inv_inertia_x: vec4<f32>, // columns of s I^-1 in world axes (only zz in a slice)
    inv_inertia_y: vec4<f32>,
    inv_inertia_z: vec4<f32>,
    lo: vec4<i32>,            // the cells the body may cover: lo <= x < hi; w: where its
                              // deflation space starts (`z_at`)
    hi: vec4<i32>,            // w (u32 bits): the bodies j < 32 whose space's box meets
                              // its own, or all bits where one is 32 or more (`add_z_y`)
};

// Mirrored by `StrongParams` in src/sim/bodies/strong.rs (layout checked by tests/integration/shaders.rs).
struct StrongParams {
    bodies: u32,     // body slots in use
    slice: u32,      // 1: one-slice grid, torque about z only
    project: u32,    // 1: the term is P K P (a closed box, see above)
    groups: u32,     // workgroups of `sum_d` / `sum_p`
    chunks: u32,     // workgroups per body of the box loops (see `box_part`)
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

// Per body: J x (6), J (g . n) (6, `reduce_p` only), w = s M^-1 J x (6), c = J 1 (6,
// `reduce_one`). After the bodies: the sum of x over the FLUID cells and their count.
const SUM_STRIDE: u32 = 24u;
const TOTALS: u32 = MAX_BODIES * SUM_STRIDE;

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> sp: StrongParams;
@group(0) @binding(2) var<storage, read> cb: array<CoupleBody>;
@group(0) @binding(3) var<storage, read> body_id: array<u32>;
@group(0) @binding(4) var<storage, read> cell_type: array<u32>;
@group(0) @binding(5) var<storage, read_write> sums: array<f32>;
// read_write: the deflated start (`deflate_p`) corrects it.
@group(0) @binding(6) var<storage, read_write> p: array<f32>;
// b, r, z, d, q and t are regions of one buffer (PcgVectors), and wgpu refuses a buffer bound
// both read-only and read-write in one dispatch: all of them are bound read_write.
@group(0) @binding(7) var<storage, read_write> d: array<f32>;
@group(0) @binding(8) var<storage, read_write> q: array<f32>;
@group(0) @binding(9) var<storage, read_write> r: array<f32>;
@group(0) @binding(10) var<storage, read_write> z: array<f32>;
// The PCG's state; word PCG_DONE_WORD is its done flag (see pcg.wgsl).
@group(0) @binding(11) var<storage, read> done: array<u32>;
@group(0) @binding(12) var<storage, read_write> solid_vel: array<vec4<f32>>;
// Per `sum_d`/`sum_p` workgroup: the sum of x over its FLUID cells and their count; after
// them (from PART_BASE), PART_STRIDE partial sums per (body, chunk) of the box loops.
@group(0) @binding(13) var<storage, read_write> partials: array<f32>;
// Per face: the covering body's index + 1 (top 8 bits) and its share, unorm24 (coupling.wgsl).
@group(0) @binding(14) var<storage, read> cover: array<u32>;
// The packed matrix A, (diag, +x, +y, +z) per cell (pcg.wgsl).
@group(0) @binding(15) var<storage, read> a: array<vec4<f32>>;
// Per body, DEFL_STRIDE f32: E_k^-1 (36, row-major), G_k C_k (36), y_k (6), padding.
@group(0) @binding(16) var<storage, read_write> defl: array<f32>;

const DEFL_STRIDE: u32 = 80u;
// After the bodies' blocks: per cell of each body's `z_box`, ZROW numbers, its row of the
// body's deflation space Z_k and its row of J_k^T, from word ZROW * lo.w (`z_at`; the host
// sets lo.w and sizes the buffer).
const ZROWS_BASE: u32 = MAX_BODIES * DEFL_STRIDE;
const ZROW: u32 = 12u;
// The weight of the two Jacobi sweeps that make Z (src/reference/bodies.rs,
// DEFLATION_OMEGA).
const DEFL_OMEGA: f32 = 0.8;
const PART_BASE: u32 = 2u * MAX_REDUCE_GROUPS;
const PART_STRIDE: u32 = 48u;

var<workgroup> red: array<array<f32, 12>, REDUCE_WG>;
var<workgroup> wg_done: u32;
var<workgroup> wg_corr: f32;
// Per body, the six numbers a broadcast spreads (w_k or y_k, see `wg_row`): summed by each
// workgroup from the parts (`gather_parts`) in the PCG's iterations, loaded from what a
// finished reduction stored otherwise (`load_vecs`).
var<workgroup> wg_vec: array<f32, 384>; // MAX_BODIES * 6
// The bodies' `z_box`es (`load_z_boxes`): lo and, in w, lo.w; the extent.
var<workgroup> wg_zlo: array<vec4<i32>, MAX_BODIES>;
var<workgroup> wg_zext: array<vec4<i32>, MAX_BODIES>;

fn is_done_uniform(li: u32) -> bool {
    if (li == 0u) { wg_done = done[PCG_DONE_WORD]; }
    return workgroupUniformLoad(&wg_done) != 0u;
}

// The direction of face k (0..5): -x, +x, -y, +y, -z, +z.
fn face_dir(k: u32) -> vec3<i32> {
    return unit(k / 2u) * select(-1, 1, (k & 1u) == 1u);
}

// r_f x n_f for the face of cell `cell` towards `e`, n_f = `n` (+-e), from the centre of `b`.
fn lever(b: CoupleBody, cell: vec3<i32>, e: vec3<i32>, n: vec3<f32>) -> vec3<f32> {
    let xf = (vec3<f32>(cell) + vec3<f32>(0.5) + 0.5 * vec3<f32>(e)) * params.h;
    var rr = xf - b.centre.xyz;
    if (sp.slice != 0u) { rr.z = 0.0; }
    return cross(rr, n);
}

fn is_fluid_cell(c: vec3<i32>) -> bool {
    return in_grid(c, params.n) && cell_type[cell_index(c, params.n)] == FLUID;
}

const UNORM24: f32 = 16777215.0;

// The share of the face of cell `x` towards `e` that a body covers, as
// (body index + 1, share); (0, 0) where none does, where the face leads out of the grid, or
// where a static solid's cell (SOLID, of no body) lies beyond it.
fn covered_face(x: vec3<i32>, e: vec3<i32>) -> vec2<f32> {
    let y = x + e;
    if (!in_grid(y, params.n)) { return vec2<f32>(0.0); }
    let a = u32(abs(e.y) + 2 * abs(e.z));
    let f = select(x, y, (e.x + e.y + e.z) > 0);
    let w = cover[face_offset(a, params) + face_index(f, face_dims(a, params.n))];
    let id = w >> 24u;
    if (id == 0u || id > sp.bodies) { return vec2<f32>(0.0); }
    let yi = cell_index(y, params.n);
    if (cell_type[yi] == SOLID && body_id[yi] != id) { return vec2<f32>(0.0); }
    return vec2<f32>(f32(id), f32(w & 0xffffffu) / UNORM24);
}

// The workgroup's sums of `s` and `n` (a fixed tree, the same bits every run), to every
// thread. Call from uniform control flow.
fn workgroup_sum2(li: u32, s: f32, n: f32) -> vec2<f32> {
    workgroupBarrier();
    red[li][0] = s;
    red[li][1] = n;
    for (var stride = REDUCE_WG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) {
            red[li][0] += red[li + stride][0];
            red[li][1] += red[li + stride][1];
        }
    }
    workgroupBarrier();
    let t = vec2<f32>(red[0][0], red[0][1]);
    workgroupBarrier();
    return t;
}

// Per workgroup, the sum of x (d or p) over FLUID cells and their count, strided like the
// PCG's reductions.
fn sum_fluid(wg: u32, li: u32, use_p: bool) {
    var s = 0.0;
    var n = 0.0;
    let stride = sp.groups * REDUCE_WG;
    for (var c = wg * REDUCE_WG + li; c < params.num_cells; c += stride) {
        if (cell_type[c] == FLUID) {
            s += select(d[c], p[c], use_p);
            n += 1.0;
        }
    }
    let t = workgroup_sum2(li, s, n);
    if (li == 0u) {
        partials[2u * wg] = t.x;
        partials[2u * wg + 1u] = t.y;
    }
}

@compute @workgroup_size(REDUCE_WG)
fn sum_d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    sum_fluid(wg.x, li, false);
}

@compute @workgroup_size(REDUCE_WG)
fn sum_p(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    sum_fluid(wg.x, li, true);
}

// The partials of the last `sum_d`/`sum_p`: (sum of x, FLUID cells), in a fixed order.
fn fluid_totals(li: u32) -> vec2<f32> {
    var s = 0.0;
    var n = 0.0;
    for (var i = li; i < sp.groups; i += REDUCE_WG) {
        s += partials[2u * i];
        n += partials[2u * i + 1u];
    }
    return workgroup_sum2(li, s, n);
}

// ---- The box loops, split over workgroups ----
//
// A body's reductions run over the cells of its box with a cell to spare (those next to
// what it may cover). One workgroup per body left most of a large GPU idle and walked a
// box of thousands of cells in a row; so each body's box is split into `sp.chunks` parts
// (the host picks enough for about two cells per thread of the largest box), workgroup
// wg.x taking part wg.x % chunks of body wg.x / chunks. Each part stores its workgroup's
// sums (`store_part`); a second dispatch of one workgroup per body adds the parts in a
// fixed order (`chunk_sums`) and finishes, the same bits every run (with one part per body,
// as in a slice's small boxes and always with `project`, the part's workgroup finishes
// itself and that dispatch is left out). In the PCG's
// iterations the broadcast that follows does that itself (`gather_parts`, `add_q_boxes`,
// `deflate_add`): every one of its workgroups adds every body's parts, which costs less
// on a GPU than a dispatch of its own.

// The cells of body k's box with a cell to spare (those next to what it may cover).
fn defl_box(k: u32) -> array<vec3<i32>, 2> {
    let b = cb[k];
    let lo = max(b.lo.xyz - vec3<i32>(1), vec3<i32>(0));
    let hi = min(b.hi.xyz + vec3<i32>(1), vec3<i32>(params.n));
    return array<vec3<i32>, 2>(lo, max(hi - lo, vec3<i32>(0)));
}

// The box of body k's deflation space Z_k (`deflate_z`): `defl_box` and one cell more.
fn z_box(k: u32) -> array<vec3<i32>, 2> {
    let b = cb[k];
    let lo = max(b.lo.xyz - vec3<i32>(2), vec3<i32>(0));
    let hi = min(b.hi.xyz + vec3<i32>(2), vec3<i32>(params.n));
    return array<vec3<i32>, 2>(lo, max(hi - lo, vec3<i32>(0)));
}

fn box_cell(lo: vec3<i32>, ext: vec3<i32>, i: u32) -> vec3<i32> {
    let ex = u32(ext.x);
    let ey = u32(ext.y);
    return lo + vec3<i32>(i32(i % ex), i32((i / ex) % ey), i32(i / (ex * ey)));
}

// Workgroup wg.x's body, part and box: its cells are i = first + li, first + li + step, ...
// below count (none for a slot past the bodies in use).
struct BoxPart {
    k: u32,
    chunk: u32,
    lo: vec3<i32>,
    ext: vec3<i32>,
    first: u32,
    step: u32,
    count: u32,
};

fn box_part(wgx: u32) -> BoxPart {
    return box_part_of(wgx, false);
}

// As `box_part`, over the box of body k's deflation space (`z_box`) where `grown`.
fn box_part_of(wgx: u32, grown: bool) -> BoxPart {
    let chunks = max(sp.chunks, 1u);
    var bp: BoxPart;
    bp.k = wgx / chunks;
    bp.chunk = wgx % chunks;
    bp.first = bp.chunk * REDUCE_WG;
    bp.step = chunks * REDUCE_WG;
    bp.count = 0u;
    if (bp.k < sp.bodies) {
        var bx = defl_box(bp.k);
        if (grown) { bx = z_box(bp.k); }
        bp.lo = bx[0];
        bp.ext = bx[1];
        bp.count = u32(bx[1].x) * u32(bx[1].y) * u32(bx[1].z);
    }
    return bp;
}

// Stores the 12 sums `s` of a part into round `round` (0..3) of its PART_STRIDE slots.
fn store_part(li: u32, bp: BoxPart, round: u32, s: array<f32, 12>) {
    if (li != 0u || bp.k >= sp.bodies) { return; }
    let base = PART_BASE + (bp.k * max(sp.chunks, 1u) + bp.chunk) * PART_STRIDE + 12u * round;
    for (var j = 0u; j < 12u; j++) { partials[base + j] = s[j]; }
}

// The first `slots` of body k's parts summed over its chunks in order, to every thread.
// Call from uniform control flow.
fn chunk_sums(k: u32, li: u32, slots: u32) -> array<f32, 48> {
    workgroupBarrier();
    if (li < slots) {
        var s = 0.0;
        if (k < sp.bodies) {
            let chunks = max(sp.chunks, 1u);
            let base = PART_BASE + k * chunks * PART_STRIDE + li;
            for (var c = 0u; c < chunks; c++) { s += partials[base + c * PART_STRIDE]; }
        }
        red[li / 12u][li % 12u] = s;
    }
    workgroupBarrier();
    var t: array<f32, 48>;
    for (var j = 0u; j < 48u; j++) { t[j] = select(0.0, red[j / 12u][j % 12u], j < slots); }
    workgroupBarrier();
    return t;
}

// Every body's first `slots` sums over its parts (as `chunk_sums` adds them, the same bits)
// into `red`, body k's slot j at k * slots + j (at most MAX_BODIES * 18 of red's 12 *
// REDUCE_WG). Lets a broadcast over the boxes finish the reduction itself instead of a
// dispatch of its own. Call from uniform control flow.
fn gather_parts(li: u32, slots: u32) {
    workgroupBarrier();
    let chunks = max(sp.chunks, 1u);
    for (var t = li; t < sp.bodies * slots; t += REDUCE_WG) {
        let k = t / slots;
        let base = PART_BASE + k * chunks * PART_STRIDE + t % slots;
        var s = 0.0;
        for (var c = 0u; c < chunks; c++) { s += partials[base + c * PART_STRIDE]; }
        red[t / 12u][t % 12u] = s;
    }
    workgroupBarrier();
}

fn red_at(t: u32) -> f32 {
    return red[t / 12u][t % 12u];
}

// (J^T v)_c with body k's v_k in wg_vec: over c's covered faces (0 outside the FLUID cells).
fn wg_row(c: u32) -> f32 {
    if (cell_type[c] != FLUID) { return 0.0; }
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var f = 0u; f < 6u; f++) {
        let e = face_dir(f);
        let cov = covered_face(x, e);
        if (cov.x == 0.0) { continue; }
        let k = u32(cov.x) - 1u;
        let n = -vec3<f32>(e);
        let t = lever(cb[k], x, e, n);
        let v_lin = vec3<f32>(wg_vec[6u * k], wg_vec[6u * k + 1u], wg_vec[6u * k + 2u]);
        let v_ang = vec3<f32>(wg_vec[6u * k + 3u], wg_vec[6u * k + 4u], wg_vec[6u * k + 5u]);
        s += cov.y * (dot(n, v_lin) + dot(t, v_ang));
    }
    return s;
}

// Whether body k writes box cell x in the broadcasts over the boxes: no body before it has
// x in its box (a cell two boxes share is written once, and its row sums every body's faces).
fn owns(k: u32, x: vec3<i32>) -> bool {
    for (var j = 0u; j < k; j++) {
        let bx = defl_box(j);
        if (all(x >= bx[0]) && all(x < bx[0] + bx[1])) { return false; }
    }
    return true;
}

// The index of cell i of part bp's box, or num_cells where a lower body's box holds it
// (`owns`).
fn owned_cell(bp: BoxPart, i: u32) -> u32 {
    let x = box_cell(bp.lo, bp.ext, i);
    if (!owns(bp.k, x)) { return params.num_cells; }
    return cell_index(x, params.n);
}

// J_k x over body k's faces, split over the box's parts (`box_part`): x is d (`what` 0),
// p (1, with J_k (g . n) beside it) or 1 (2, into the slots of c_k).
fn reduce_part(wgx: u32, li: u32, what: u32) {
    let use_p = what == 1u;
    let bp = box_part(wgx);
    var acc: array<f32, 12>;
    for (var i = 0u; i < 12u; i++) { acc[i] = 0.0; }
    if (bp.count > 0u) {
        let b = cb[bp.k];
        // The FLUID cells next to what the body may cover.
        for (var i = bp.first + li; i < bp.count; i += bp.step) {
            let cc = box_cell(bp.lo, bp.ext, i);
            let ci = cell_index(cc, params.n);
            if (cell_type[ci] != FLUID) { continue; }
            var x = select(d[ci], p[ci], use_p);
            if (what == 2u) { x = 1.0; }
            for (var f = 0u; f < 6u; f++) {
                let e = face_dir(f);
                let cov = covered_face(cc, e);
                if (u32(cov.x) != bp.k + 1u) { continue; }
                let n = -vec3<f32>(e);
                let t = lever(b, cc, e, n);
                let wx = cov.y * x;
                acc[0] += n.x * wx; acc[1] += n.y * wx; acc[2] += n.z * wx;
                acc[3] += t.x * wx; acc[4] += t.y * wx; acc[5] += t.z * wx;
                if (use_p) {
                    let gn = cov.y * dot(params.gravity, n);
                    acc[6] += n.x * gn; acc[7] += n.y * gn; acc[8] += n.z * gn;
                    acc[9] += t.x * gn; acc[10] += t.y * gn; acc[11] += t.z * gn;
                }
            }
        }
    }
    let tot = workgroup_sum12(li, acc);
    store_part(li, bp, 0u, tot);
    if (sp.chunks <= 1u) {
        // One part per body: this workgroup finishes (no `finish_*` dispatch).
        reduce_finish(bp.k, li, what, true, tot);
    }
}

// Body k's J_k x from its parts, and w_k = s M_k^-1 J_k P x (see `reduce_part`).
// `direct`: the workgroup's own sums `given` are the body's (one part per body), else the
// parts are added (`chunk_sums`); the same bits either way.
fn reduce_finish(k: u32, li: u32, what: u32, direct: bool, given: array<f32, 12>) {
    var mean = 0.0;
    if (sp.project != 0u && what != 2u) {
        let t = fluid_totals(li);
        mean = t.x / max(t.y, 1.0);
        if (k == 0u && li == 0u) {
            sums[TOTALS] = t.x;
            sums[TOTALS + 1u] = t.y;
        }
    }
    var all_sums: array<f32, 48>;
    if (direct) {
        for (var j = 0u; j < 12u; j++) { all_sums[j] = given[j]; }
    } else {
        all_sums = chunk_sums(k, li, 12u);
    }
    if (li != 0u || k >= sp.bodies) { return; }
    var s: array<f32, 12>;
    for (var j = 0u; j < 12u; j++) { s[j] = all_sums[j]; }
    let base = k * SUM_STRIDE;
    if (what == 2u) {
        for (var j = 0u; j < 6u; j++) { sums[base + 18u + j] = s[j]; }
        return;
    }
    // J P x = J x - c_k mean(x).
    for (var j = 0u; j < 6u; j++) { s[j] -= sums[base + 18u + j] * mean; }
    for (var j = 0u; j < 12u; j++) { sums[base + j] = s[j]; }
    let b = cb[k];
    let w_lin = b.inv_mass.xyz * vec3<f32>(s[0], s[1], s[2]);
    let ang = vec3<f32>(s[3], s[4], s[5]);
    let w_ang = b.inv_inertia_x.xyz * ang.x + b.inv_inertia_y.xyz * ang.y
        + b.inv_inertia_z.xyz * ang.z;
    sums[base + 12u] = w_lin.x; sums[base + 13u] = w_lin.y; sums[base + 14u] = w_lin.z;
    sums[base + 15u] = w_ang.x; sums[base + 16u] = w_ang.y; sums[base + 17u] = w_ang.z;
}

@compute @workgroup_size(REDUCE_WG)
fn reduce_d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    reduce_part(wg.x, li, 0u);
}

@compute @workgroup_size(REDUCE_WG)
fn reduce_p(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    reduce_part(wg.x, li, 1u);
}

@compute @workgroup_size(REDUCE_WG)
fn finish_p(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    reduce_finish(wg.x, li, 1u, false, array<f32, 12>());
}

@compute @workgroup_size(REDUCE_WG)
fn reduce_one(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    reduce_part(wg.x, li, 2u);
}

// With `project`: sum_k c_k . w_k / n_fluid, what P takes from every FLUID cell of K x
// (every thread of the workgroup calls it; bodies <= MAX_BODIES <= WORKGROUP).
fn projection(li: u32) -> f32 {
    if (sp.project == 0u) { return 0.0; }
    var t = 0.0;
    if (li < sp.bodies) {
        let base = li * SUM_STRIDE;
        for (var j = 0u; j < 6u; j++) { t += sums[base + 18u + j] * sums[base + 12u + j]; }
    }
    red[li][0] = t;
    for (var stride = WORKGROUP / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) { red[li][0] += red[li + stride][0]; }
    }
    workgroupBarrier();
    if (li == 0u) { wg_corr = red[0][0] / max(sums[TOTALS + 1u], 1.0); }
    return workgroupUniformLoad(&wg_corr);
}

// Every body's six numbers into wg_vec for `wg_row`: the w_k the last reduction stored
// (`which` 0) or the deflated start's y_k (1), by a workgroup of `threads`. Call from
// uniform control flow.
fn load_vecs(li: u32, which: u32, threads: u32) {
    for (var t = li; t < sp.bodies * 6u; t += threads) {
        let k = t / 6u;
        let j = t % 6u;
        wg_vec[t] = select(sums[k * SUM_STRIDE + 12u + j], defl[k * DEFL_STRIDE + 72u + j], which == 1u);
    }
    workgroupBarrier();
}

// (s J^T M^-1 J x)_c from the w in wg_vec (`load_vecs`), less `corr` (P's share, see
// `projection`) at the FLUID cells.
fn coupled_row(c: u32, corr: f32) -> f32 {
    if (cell_type[c] != FLUID) { return 0.0; }
    return wg_row(c) - corr;
}

@compute @workgroup_size(WORKGROUP)
fn add_q(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    let corr = projection(li);
    load_vecs(li, 0u, WORKGROUP);
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    q[c] = q[c] + coupled_row(c, corr);
}

// add_q over the bodies' boxes (without `project`, K d is zero outside them), right after
// `reduce_d`'s parts: each workgroup adds the parts and takes w_k = s M_k^-1 J_k d itself
// (as `reduce_finish` does), which saves a finishing dispatch in every iteration.
@compute @workgroup_size(REDUCE_WG)
fn add_q_boxes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    gather_parts(li, 6u);
    for (var t = li; t < sp.bodies * 6u; t += REDUCE_WG) {
        let k = t / 6u;
        let j = t % 6u;
        let b = cb[k];
        var w = 0.0;
        if (j < 3u) {
            w = b.inv_mass[j] * red_at(6u * k + j);
        } else {
            w = b.inv_inertia_x[j - 3u] * red_at(6u * k + 3u)
                + b.inv_inertia_y[j - 3u] * red_at(6u * k + 4u)
                + b.inv_inertia_z[j - 3u] * red_at(6u * k + 5u);
        }
        wg_vec[t] = w;
    }
    workgroupBarrier();
    let bp = box_part(wg.x);
    for (var i = bp.first + li; i < bp.count; i += bp.step) {
        let c = owned_cell(bp, i);
        if (c < params.num_cells) { q[c] = q[c] + wg_row(c); }
    }
}

@compute @workgroup_size(WORKGROUP)
fn sub_r(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let corr = projection(li);
    load_vecs(li, 0u, WORKGROUP);
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    r[c] = r[c] - coupled_row(c, corr);
}

// sub_r over the bodies' boxes (without `project`, K p is zero outside them), after a
// finished `reduce_p` (w_k in the sums).
@compute @workgroup_size(REDUCE_WG)
fn sub_r_boxes(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    load_vecs(li, 0u, REDUCE_WG);
    let bp = box_part(wg.x);
    for (var i = bp.first + li; i < bp.count; i += bp.step) {
        let c = owned_cell(bp, i);
        if (c < params.num_cells) { r[c] = r[c] - wg_row(c); }
    }
}

@compute @workgroup_size(WORKGROUP)
fn into_z(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let corr = projection(li);
    load_vecs(li, 0u, WORKGROUP);
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    z[c] = coupled_row(c, corr);
}

@compute @workgroup_size(WORKGROUP)
fn restamp(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    // The body's cells and the cells next to the faces it covers (coupling.wgsl's `stamp`
    // writes the body's index + 1 into their w).
    let id = u32(solid_vel[c].w);
    if (id == 0u || id > sp.bodies) { return; }
    let k = id - 1u;
    let b = cb[k];
    let base = k * SUM_STRIDE + 12u;
    let v = b.vel.xyz - vec3<f32>(sums[base], sums[base + 1u], sums[base + 2u]) * params.inv_h;
    let w = b.omega.xyz
        - vec3<f32>(sums[base + 3u], sums[base + 4u], sums[base + 5u]) * params.inv_h;
    let x = (vec3<f32>(cell_coord(c, params.n)) + vec3<f32>(0.5)) * params.h;
    var rr = x - b.centre.xyz;
    if (sp.slice != 0u) { rr.z = 0.0; }
    solid_vel[c] = vec4<f32>(v + cross(w, rr), f32(id));
}

// ---- Deflation of the bodies' modes (see the top of this file) ----

// The row of J_k^T at cell `x`: sum over x's faces that body k covers of j_f (zero outside
// the FLUID cells and the grid).
fn cell_row(k: u32, x: vec3<i32>) -> array<f32, 6> {
    var v: array<f32, 6>;
    for (var j = 0u; j < 6u; j++) { v[j] = 0.0; }
    if (!is_fluid_cell(x)) { return v; }
    let b = cb[k];
    for (var f = 0u; f < 6u; f++) {
        let e = face_dir(f);
        let cov = covered_face(x, e);
        if (u32(cov.x) != k + 1u) { continue; }
        let n = -vec3<f32>(e);
        let t = lever(b, x, e, n);
        v[0] += cov.y * n.x; v[1] += cov.y * n.y; v[2] += cov.y * n.z;
        v[3] += cov.y * t.x; v[4] += cov.y * t.y; v[5] += cov.y * t.z;
    }
    return v;
}

// Body k's stored row at x from `off` (`stored_row`), times D^-1 where `scaled`, D = diag(A)
// (zero where A has no row).
fn row_at(k: u32, x: vec3<i32>, off: u32, scaled: bool) -> array<f32, 6> {
    var v = stored_row(k, x, off);
    if (!scaled || !in_grid(x, params.n)) { return v; }
    let dg = a[cell_index(x, params.n)].x;
    for (var j = 0u; j < 6u; j++) { v[j] = select(0.0, v[j] / dg, dg > 0.0); }
    return v;
}

// A's row at x applied to body k's stored rows from `off` around it (`row_at`, `scaled`).
fn a_rows(k: u32, x: vec3<i32>, off: u32, scaled: bool) -> array<f32, 6> {
    var s: array<f32, 6>;
    for (var j = 0u; j < 6u; j++) { s[j] = 0.0; }
    let row = a[cell_index(x, params.n)];
    if (row.x == 0.0) { return s; }
    let v = row_at(k, x, off, scaled);
    for (var j = 0u; j < 6u; j++) { s[j] = row.x * v[j]; }
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (x[comp] + 1 < i32(params.n[comp])) {
            let w = row_at(k, x + e, off, scaled);
            for (var j = 0u; j < 6u; j++) { s[j] += row[comp + 1u] * w[j]; }
        }
        if (x[comp] > 0) {
            let w = row_at(k, x - e, off, scaled);
            let o = a[cell_index(x - e, params.n)][comp + 1u];
            for (var j = 0u; j < 6u; j++) { s[j] += o * w[j]; }
        }
    }
    return s;
}

// The row at x of body k's deflation space Z_k = S J_k^T (`deflate_z` stores it): two
// damped Jacobi sweeps on A z = J_k^T from z = 0, S = 2 w D^-1 - w^2 D^-1 A D^-1, from the
// stored rows of J_k^T (`deflate_j`).
fn space_row(k: u32, x: vec3<i32>) -> array<f32, 6> {
    var s: array<f32, 6>;
    for (var j = 0u; j < 6u; j++) { s[j] = 0.0; }
    let dg = a[cell_index(x, params.n)].x;
    if (!is_fluid_cell(x) || dg <= 0.0) { return s; }
    let u = row_at(k, x, 6u, true);
    let au = a_rows(k, x, 6u, true);
    for (var j = 0u; j < 6u; j++) {
        s[j] = 2.0 * DEFL_OMEGA * u[j] - DEFL_OMEGA * DEFL_OMEGA * au[j] / dg;
    }
    return s;
}

// The first word of cell i of body k's `z_box` in the stored rows (`deflate_z`).
fn z_at(k: u32, i: u32) -> u32 {
    return ZROWS_BASE + (u32(cb[k].lo.w) + i) * ZROW;
}

// Body k's stored row at x (zero outside its `z_box`): of Z_k from `off` 0, of J_k^T from 6.
fn stored_row(k: u32, x: vec3<i32>, off: u32) -> array<f32, 6> {
    var v: array<f32, 6>;
    for (var j = 0u; j < 6u; j++) { v[j] = 0.0; }
    let bx = z_box(k);
    let l = x - bx[0];
    if (any(l < vec3<i32>(0)) || any(l >= bx[1])) { return v; }
    let base = z_at(k, u32(l.x + bx[1].x * (l.y + bx[1].y * l.z))) + off;
    for (var j = 0u; j < 6u; j++) { v[j] = defl[base + j]; }
    return v;
}

// Every body's `z_box` into wg_zlo and wg_zext, by a workgroup of `threads`. Call from
// uniform control flow.
fn load_z_boxes(li: u32, threads: u32) {
    for (var k = li; k < sp.bodies; k += threads) {
        let bx = z_box(k);
        wg_zlo[k] = vec4<i32>(bx[0], cb[k].lo.w);
        wg_zext[k] = vec4<i32>(bx[1], 0);
    }
    workgroupBarrier();
}

// Where x lies in body k's `z_box` (`load_z_boxes`): its index there, or -1 outside.
fn in_z_box(k: u32, x: vec3<i32>) -> i32 {
    let l = x - wg_zlo[k].xyz;
    let ext = wg_zext[k].xyz;
    if (any(l < vec3<i32>(0)) || any(l >= ext)) { return -1; }
    return l.x + ext.x * (l.y + ext.y * l.z);
}

// (Z_k y_k)_x for box cell i of body k, y_k in wg_vec.
fn z_y_at(k: u32, i: u32) -> f32 {
    let base = ZROWS_BASE + (u32(wg_zlo[k].w) + i) * ZROW;
    var s = 0.0;
    for (var j = 0u; j < 6u; j++) { s += defl[base + j] * wg_vec[6u * k + j]; }
    return s;
}

// hi.w of a body whose space's box meets a body's of index 32 or more (strong.rs).
const MEETS_ANY: u32 = 0xffffffffu;

// The bodies whose `z_box` meets body k's, as hi.w marks them: the next after `after`
// (-1: the first) in increasing order, or sp.bodies past the last.
fn next_neighbour(k: u32, after: i32) -> u32 {
    let mask = bitcast<u32>(cb[k].hi.w);
    let start = u32(after + 1);
    if (mask == MEETS_ANY) { return min(start, sp.bodies); }
    if (start >= 32u) { return sp.bodies; }
    let rest = mask & ~((1u << start) - 1u);
    if (rest == 0u) { return sp.bodies; }
    return firstTrailingBit(rest);
}

// (Z y)_x over body k and the bodies whose `z_box` meets k's, where their box holds x
// (`load_z_boxes`, y in wg_vec).
fn z_times_y(k: u32, x: vec3<i32>) -> f32 {
    var s = 0.0;
    let own = in_z_box(k, x);
    if (own >= 0) { s += z_y_at(k, u32(own)); }
    for (var j = next_neighbour(k, -1); j < sp.bodies; j = next_neighbour(k, i32(j))) {
        if (j == k) { continue; }
        let i = in_z_box(j, x);
        if (i >= 0) { s += z_y_at(j, u32(i)); }
    }
    return s;
}

// J_k^T's rows over body k's `z_box`, split over the box's parts: once per solve, before
// `deflate_z`.
@compute @workgroup_size(REDUCE_WG)
fn deflate_j(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let bp = box_part_of(wg.x, true);
    for (var i = bp.first + li; i < bp.count; i += bp.step) {
        let jr = cell_row(bp.k, box_cell(bp.lo, bp.ext, i));
        let base = z_at(bp.k, i) + 6u;
        for (var j = 0u; j < 6u; j++) { defl[base + j] = jr[j]; }
    }
}

// Z_k's rows over its `z_box` from the stored rows of J_k^T, before `deflate_setup`.
@compute @workgroup_size(REDUCE_WG)
fn deflate_z(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let bp = box_part_of(wg.x, true);
    for (var i = bp.first + li; i < bp.count; i += bp.step) {
        let v = space_row(bp.k, box_cell(bp.lo, bp.ext, i));
        let base = z_at(bp.k, i);
        for (var j = 0u; j < 6u; j++) { defl[base + j] = v[j]; }
    }
}

// (A z)_c, pcg.wgsl's stencil on z.
fn a_z(c: u32) -> f32 {
    let row = a[c];
    if (row.x == 0.0) { return 0.0; }
    let x = cell_coord(c, params.n);
    var s = row.x * z[c];
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (x[comp] + 1 < i32(params.n[comp])) {
            s += row[comp + 1u] * z[cell_index(x + e, params.n)];
        }
        if (x[comp] > 0) {
            let nc = cell_index(x - e, params.n);
            s += a[nc][comp + 1u] * z[nc];
        }
    }
    return s;
}

// The workgroup's sums of 12 values per thread, to every thread, in a fixed order: the
// threads' values in SUM_ROWS rows of 16, each row summed by one thread per value, then the
// rows' sums. Two rounds (five barriers) instead of a tree's eight levels: a barrier costs
// a CPU adapter a switch through every invocation of the workgroup.
const SUM_ROWS: u32 = REDUCE_WG / 16u;
fn workgroup_sum12(li: u32, acc: array<f32, 12>) -> array<f32, 12> {
    workgroupBarrier();
    red[li] = acc;
    workgroupBarrier();
    let j = li % 12u;
    let row = li / 12u;
    var s = 0.0;
    if (row < SUM_ROWS) {
        for (var i = 0u; i < 16u; i++) { s += red[row * 16u + i][j]; }
    }
    workgroupBarrier();
    if (row < SUM_ROWS) { red[row][j] = s; }
    workgroupBarrier();
    if (li < 12u) {
        var t = 0.0;
        for (var i = 0u; i < SUM_ROWS; i++) { t += red[i][li]; }
        red[SUM_ROWS][li] = t;
    }
    workgroupBarrier();
    let t = red[SUM_ROWS];
    workgroupBarrier();
    return t;
}

// Entry (i, j) of C_k = s M_k^-1: the inverse mass on the diagonal of the linear block, the
// inverse inertia (its columns) in the angular one.
fn c_entry(b: CoupleBody, i: u32, j: u32) -> f32 {
    if (i < 3u && j < 3u) { return select(0.0, b.inv_mass[i], i == j); }
    if (i >= 3u && j >= 3u) {
        let col = select(select(b.inv_inertia_z, b.inv_inertia_y, j == 4u), b.inv_inertia_x, j == 3u);
        return col[i - 3u];
    }
    return 0.0;
}

// The pair (i, j), i <= j, of the 21 entries of a symmetric 6x6.
fn sym_pair(t: u32) -> vec2<u32> {
    var i = 0u;
    var rest = t;
    loop {
        if (rest < 6u - i) { break; }
        rest -= 6u - i;
        i += 1u;
    }
    return vec2<u32>(i, i + rest);
}

// E_k = Z_k^T A Z_k + G_k C_k G_k and G_k C_k with G_k = J_k Z_k (symmetric, as S is):
// Z_k^T A Z_k and G_k as 21 + 21 sums over the parts of Z_k's box, in four rounds of 12
// (the last holds 6); `setup_finish` adds the parts and takes E_k^-1 by Gauss-Jordan. E_k
// is symmetric positive semi-definite, and a mode whose pivot
// falls below 1e-5 of the largest diagonal entry (a slice's out-of-plane modes, a body
// no FLUID cell touches) is left out: its row and column of E_k^-1 are zero.
@compute @workgroup_size(REDUCE_WG)
fn deflate_setup(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let bp = box_part_of(wg.x, true);
    let k = bp.k;
    var e: array<f32, 42>;
    for (var j = 0u; j < 42u; j++) { e[j] = 0.0; }
    if (bp.count > 0u) {
        for (var i = bp.first + li; i < bp.count; i += bp.step) {
            let x = box_cell(bp.lo, bp.ext, i);
            let base = z_at(k, i);
            var v: array<f32, 6>;
            var jr: array<f32, 6>;
            var any = false;
            for (var j = 0u; j < 6u; j++) {
                v[j] = defl[base + j];
                jr[j] = defl[base + 6u + j];
                any = any || v[j] != 0.0;
            }
            if (!any) { continue; }
            let av = a_rows(k, x, 0u, false);
            for (var t = 0u; t < 21u; t++) {
                let ij = sym_pair(t);
                e[t] += v[ij.x] * av[ij.y];
                e[21u + t] += jr[ij.x] * v[ij.y];
            }
        }
    }
    for (var round = 0u; round < 4u; round++) {
        var acc: array<f32, 12>;
        for (var j = 0u; j < 12u; j++) {
            let t = round * 12u + j;
            acc[j] = select(0.0, e[min(t, 41u)], t < 42u);
        }
        store_part(li, bp, round, workgroup_sum12(li, acc));
    }
    if (sp.chunks <= 1u) {
        // One part per body: this workgroup finishes (no `setup_finish` dispatch).
        storageBarrier();
        finish_setup(bp.k, li);
    }
}

@compute @workgroup_size(REDUCE_WG)
fn setup_finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    finish_setup(wg.x, li);
}

// E_k^-1 from body k's parts (see `deflate_setup`).
fn finish_setup(k: u32, li: u32) {
    let tot = chunk_sums(k, li, 42u);
    if (li != 0u || k >= sp.bodies) { return; }
    let b = cb[k];
    var jaj: array<array<f32, 6>, 6>;
    var g: array<array<f32, 6>, 6>;
    for (var t = 0u; t < 21u; t++) {
        let ij = sym_pair(t);
        jaj[ij.x][ij.y] = tot[t]; jaj[ij.y][ij.x] = tot[t];
        g[ij.x][ij.y] = tot[21u + t]; g[ij.y][ij.x] = tot[21u + t];
    }
    // G C, then E = J A J^T + (G C) G.
    var gc: array<array<f32, 6>, 6>;
    for (var i = 0u; i < 6u; i++) {
        for (var j = 0u; j < 6u; j++) {
            var s = 0.0;
            for (var m = 0u; m < 6u; m++) { s += g[i][m] * c_entry(b, m, j); }
            gc[i][j] = s;
        }
    }
    var m: array<array<f32, 6>, 6>;
    var inv: array<array<f32, 6>, 6>;
    var dmax = 0.0;
    for (var i = 0u; i < 6u; i++) {
        for (var j = 0u; j < 6u; j++) {
            var s = jaj[i][j];
            for (var l = 0u; l < 6u; l++) { s += gc[i][l] * g[l][j]; }
            m[i][j] = s;
            inv[i][j] = select(0.0, 1.0, i == j);
        }
        dmax = max(dmax, m[i][i]);
    }
    var live: array<bool, 6>;
    for (var p = 0u; p < 6u; p++) {
        let piv = m[p][p];
        live[p] = piv > 1e-5 * dmax && dmax > 0.0;
        if (!live[p]) { continue; }
        for (var j = 0u; j < 6u; j++) { m[p][j] /= piv; inv[p][j] /= piv; }
        for (var i = 0u; i < 6u; i++) {
            if (i == p) { continue; }
            let f = m[i][p];
            for (var j = 0u; j < 6u; j++) { m[i][j] -= f * m[p][j]; inv[i][j] -= f * inv[p][j]; }
        }
    }
    let base = k * DEFL_STRIDE;
    for (var i = 0u; i < 6u; i++) {
        for (var j = 0u; j < 6u; j++) {
            defl[base + 6u * i + j] = select(0.0, inv[i][j], live[i] && live[j]);
            defl[base + 36u + 6u * i + j] = gc[i][j];
        }
    }
}

// Z_k^T (r - A z) and J_k z over the parts of Z_k's box; `deflate_add` adds them and takes
// y_k = E_k^-1 (Z_k^T (r - A z) - G_k C_k J_k z).
@compute @workgroup_size(REDUCE_WG)
fn deflate_sums(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    let bp = box_part_of(wg.x, true);
    let k = bp.k;
    var acc: array<f32, 12>;
    for (var j = 0u; j < 12u; j++) { acc[j] = 0.0; }
    if (bp.count > 0u) {
        for (var i = bp.first + li; i < bp.count; i += bp.step) {
            let base = z_at(k, i);
            var any = false;
            for (var j = 0u; j < 6u; j++) { any = any || defl[base + j] != 0.0; }
            if (!any) { continue; }
            let c = cell_index(box_cell(bp.lo, bp.ext, i), params.n);
            let u = r[c] - a_z(c);
            let zc = z[c];
            for (var j = 0u; j < 6u; j++) {
                acc[j] += defl[base + j] * u;
                acc[6u + j] += defl[base + 6u + j] * zc;
            }
        }
    }
    store_part(li, bp, 0u, workgroup_sum12(li, acc));
}


// The deflated start's Z_k^T r over the parts of Z_k's box; `start_finish` adds them and
// takes y_k = E_k^-1 Z_k^T r.
@compute @workgroup_size(REDUCE_WG)
fn deflate_start(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    let bp = box_part_of(wg.x, true);
    var acc: array<f32, 12>;
    for (var j = 0u; j < 12u; j++) { acc[j] = 0.0; }
    if (bp.count > 0u) {
        for (var i = bp.first + li; i < bp.count; i += bp.step) {
            let base = z_at(bp.k, i);
            let rc = r[cell_index(box_cell(bp.lo, bp.ext, i), params.n)];
            for (var j = 0u; j < 6u; j++) { acc[j] += defl[base + j] * rc; }
        }
    }
    store_part(li, bp, 0u, workgroup_sum12(li, acc));
    if (sp.chunks <= 1u) {
        storageBarrier();
        finish_start(bp.k, li);
    }
}

@compute @workgroup_size(REDUCE_WG)
fn start_finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    finish_start(wg.x, li);
}

// The start's y_k = E_k^-1 J_k r from body k's parts.
fn finish_start(k: u32, li: u32) {
    let s = chunk_sums(k, li, 6u);
    if (li != 0u || k >= sp.bodies) { return; }
    let base = k * DEFL_STRIDE;
    for (var i = 0u; i < 6u; i++) {
        var y = 0.0;
        for (var j = 0u; j < 6u; j++) { y += defl[base + 6u * i + j] * s[j]; }
        defl[base + 72u + i] = y;
    }
}


// z += Z y (after each z = M^-1 r), over the boxes of Z: Z y is zero outside them. Each
// workgroup adds `deflate_sums`' parts and takes every y_k itself, which saves a dispatch
// of one workgroup per body in every iteration.
@compute @workgroup_size(REDUCE_WG)
fn deflate_add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    gather_parts(li, 12u);
    // The right-hand sides after the sums in red (at most MAX_BODIES * 12 of them).
    let rhs_at = MAX_BODIES * 12u;
    for (var t = li; t < sp.bodies * 6u; t += REDUCE_WG) {
        let k = t / 6u;
        let i = t % 6u;
        let base = k * DEFL_STRIDE;
        var v = red_at(12u * k + i);
        for (var j = 0u; j < 6u; j++) {
            v -= defl[base + 36u + 6u * i + j] * red_at(12u * k + 6u + j);
        }
        red[(rhs_at + t) / 12u][(rhs_at + t) % 12u] = v;
    }
    workgroupBarrier();
    for (var t = li; t < sp.bodies * 6u; t += REDUCE_WG) {
        let k = t / 6u;
        let i = t % 6u;
        let base = k * DEFL_STRIDE;
        var y = 0.0;
        for (var j = 0u; j < 6u; j++) {
            y += defl[base + 6u * i + j] * red_at(rhs_at + 6u * k + j);
        }
        wg_vec[t] = y;
    }
    add_z_y(wg.x, li, false);
}

// z (or p, `into_p`) += Z y over the cells of part `wgx` of the boxes of Z, with every y_k
// in wg_vec: Z y is zero outside the boxes. Call from uniform control flow.
fn add_z_y(wgx: u32, li: u32, into_p: bool) {
    load_z_boxes(li, REDUCE_WG);
    let bp = box_part_of(wgx, true);
    // The first body whose box meets this one's (hi.w, `place_spaces` in strong.rs).
    var first = sp.bodies;
    if (bp.k < sp.bodies) { first = next_neighbour(bp.k, -1); }
    for (var i = bp.first + li; i < bp.count; i += bp.step) {
        let x = box_cell(bp.lo, bp.ext, i);
        // A cell two boxes share is written once, by the lower body, with every body's rows.
        var in_other = false;
        var owner = true;
        for (var j = first; j < sp.bodies; j = next_neighbour(bp.k, i32(j))) {
            if (j == bp.k || in_z_box(j, x) < 0) { continue; }
            in_other = true;
            if (j < bp.k) { owner = false; break; }
        }
        if (!owner) { continue; }
        let c = cell_index(x, params.n);
        var zy = 0.0;
        if (in_other) {
            zy = z_times_y(bp.k, x);
        } else {
            zy = z_y_at(bp.k, i);
        }
        if (into_p) {
            p[c] = p[c] + zy;
        } else {
            z[c] = z[c] + zy;
        }
    }
}

// p += Z y (the deflated start), over the boxes of Z as `deflate_add`.
@compute @workgroup_size(REDUCE_WG)
fn deflate_p(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    load_vecs(li, 1u, REDUCE_WG);
    add_z_y(wg.x, li, true);
}
