//!include sim/core/prelude.wgsl
// Preconditioned conjugate gradients on the packed matrix, with every scalar kept on the
// GPU: reductions write per-workgroup partials (at most 512), and the kernels that need a
// scalar re-sum those partials themselves, every workgroup in the same order, so they all
// get the same alpha or beta without a separate one-workgroup dispatch. An iteration is
//   apply_a (q = A d; workgroup 0 commits rho = r.z of the previous iteration),
//   dot_dq, update_pr (alpha = rho / d.q; p += alpha d, r -= alpha q),
//   test_converged (max|r| <= tol max|b|: the solve stops before the preconditioner),
//   the preconditioner (z = M^-1 r), dot_rz,
//   update_d (beta = r.z / rho, the iteration limit; d = z + beta d).
// rho is committed one dispatch later than it is known because update_d's workgroups all
// still read the old one. Once `state.done` is set every kernel returns at once, so the
// host can enqueue iterations ahead and check convergence only now and then.
//
// Convergence is measured in the max norm, max|r| / max|b|: r = -h^2 div(u) after the
// projection, so the tolerance bounds the divergence left in every single cell relative
// to the largest one before (Bridson's criterion). Max reductions are exact.
//
// Accuracy of the dot products: each thread sums a strided slice with Kahan compensation,
// the workgroup adds the 256 thread sums as a pairwise tree, and the finishing workgroup
// repeats both over the partials. The error then grows like log2(N) ulps instead of N ulps,
// which keeps the f32 solve within the f64 reference's tolerance (tests/integration/pressure.rs).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> cfg: PcgConfig;
@group(0) @binding(2) var<storage, read> a: array<vec4<f32>>;
// b, r, z, d, q and t are regions of one buffer (PcgVectors), and wgpu refuses a buffer bound
// both read-only and read-write in one dispatch: all of them are bound read_write.
@group(0) @binding(3) var<storage, read_write> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> p: array<f32>;
@group(0) @binding(5) var<storage, read_write> r: array<f32>;
@group(0) @binding(6) var<storage, read_write> z: array<f32>;
@group(0) @binding(7) var<storage, read_write> d: array<f32>;
@group(0) @binding(8) var<storage, read_write> q: array<f32>;
@group(0) @binding(9) var<storage, read_write> partials: array<f32>;
@group(0) @binding(10) var<storage, read_write> state: PcgState;

// Mirrored by `PcgConfig` in src/sim/core/pressure/pcg.rs (tests/integration/shaders.rs checks the layout).
struct PcgConfig {
    tol: f32,              // tolerance on max|r| / max|b|
    max_iterations: u32,
    groups: u32,           // workgroups of the reduction kernels
    warm_start: u32,
    coupled: u32,          // 1: z holds K p of an added term (the bodies), for the true residual
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

// Mirrored by `PcgStateHeader` in src/sim/core/pressure/pcg.rs (tests/integration/shaders.rs checks the
// layout); `done` is word PCG_DONE_WORD, which the preconditioners read.
struct PcgState {
    rho: f32,
    alpha: f32,
    beta: f32,
    bb: f32,               // max |b|
    rr: f32,               // max |r|
    iterations: u32,
    done: u32,
    status: u32,           // PCG_RUNNING, PCG_CONVERGED, PCG_ITERATION_LIMIT, PCG_BREAKDOWN or PCG_STOPPED
    true_rr: f32,          // max |b - A p| of the stored solution (after true_residual)
    floor_rr: f32,         // what f32 can reach: max over cells of eps * sum |a_ij p_j|, |b|
    history: array<f32>,   // max|r|/max|b| before the first and after each iteration
};

var<workgroup> red_a: array<f32, REDUCE_WG>;
var<workgroup> red_b: array<f32, REDUCE_WG>;
var<workgroup> wg_done: u32;

fn is_done_uniform(li: u32) -> bool {
    if (li == 0u) { wg_done = state.done; }
    return workgroupUniformLoad(&wg_done) != 0u;
}

// (A v)_c for the 7-point stencil stored as (diag, +x, +y, +z) per cell.
fn apply_row(c: u32, use_p: bool) -> f32 {
    let row = a[c];
    if (row.x == 0.0) { return 0.0; }
    let x = cell_coord(c, params.n);
    var s = row.x * select(d[c], p[c], use_p);
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (x[comp] + 1 < i32(params.n[comp])) {
            let nc = cell_index(x + e, params.n);
            s += row[comp + 1u] * select(d[nc], p[nc], use_p);
        }
        if (x[comp] > 0) {
            let nc = cell_index(x - e, params.n);
            s += a[nc][comp + 1u] * select(d[nc], p[nc], use_p);
        }
    }
    return s;
}

fn tree_sum(li: u32) {
    tree_sum_n(li, REDUCE_WG);
}

// Pairwise tree over the first `n` (a power of two, uniform) entries of red_a / red_b.
fn tree_sum_n(li: u32, n: u32) {
    for (var stride = n / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) {
            red_a[li] += red_a[li + stride];
            red_b[li] = max(red_b[li], red_b[li + stride]);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WORKGROUP)
fn init_mask(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (cfg.warm_start == 0u || a[c].x == 0.0) { p[c] = 0.0; }
}

@compute @workgroup_size(WORKGROUP)
fn init_residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    r[c] = b[c] - apply_row(c, true);
    q[c] = 0.0;
}

// Per workgroup: a sum (d.q or r.z) and a max (|r| or |b|) over a strided slice per thread.
fn reduce_pairs(which: u32, wg: vec3<u32>, li: u32) {
    var s0 = 0.0; var c0 = 0.0;
    var s1 = 0.0;
    let stride = cfg.groups * REDUCE_WG;
    for (var i = wg.x * REDUCE_WG + li; i < params.num_cells; i += stride) {
        var t0 = 0.0;
        if (which == 0u) { t0 = d[i] * q[i]; }
        else if (which == 1u) { t0 = r[i] * z[i]; s1 = max(s1, abs(r[i])); }
        else { s1 = max(s1, abs(b[i])); }
        // Kahan compensated accumulation.
        let y0 = t0 - c0; let n0 = s0 + y0; c0 = (n0 - s0) - y0; s0 = n0;
    }
    red_a[li] = s0;
    red_b[li] = s1;
    tree_sum(li);
    if (li == 0u) {
        partials[2u * wg.x] = red_a[0];
        partials[2u * wg.x + 1u] = red_b[0];
    }
}

// Combines the partials of all reduction workgroups: sum into red_a[0], max into red_b[0].
fn finish_sums(li: u32) {
    finish_sums_n(li, REDUCE_WG);
}

// The same with `n` threads (every thread of the workgroup must call it).
fn finish_sums_n(li: u32, n: u32) {
    var s0 = 0.0; var c0 = 0.0;
    var s1 = 0.0;
    for (var i = li; i < cfg.groups; i += n) {
        let y0 = partials[2u * i] - c0; let n0 = s0 + y0; c0 = (n0 - s0) - y0; s0 = n0;
        s1 = max(s1, partials[2u * i + 1u]);
    }
    red_a[li] = s0;
    red_b[li] = s1;
    tree_sum_n(li, n);
}

@compute @workgroup_size(REDUCE_WG)
fn dot_bb(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    reduce_pairs(2u, wg, li);
}

@compute @workgroup_size(REDUCE_WG)
fn finish_bb(@builtin(local_invocation_index) li: u32) {
    finish_sums(li);
    if (li == 0u) {
        state.bb = red_b[0];
        state.iterations = 0u;
        state.done = 0u;
        state.status = PCG_RUNNING;
        state.alpha = 0.0;
        state.beta = 0.0;
    }
}

@compute @workgroup_size(REDUCE_WG)
fn dot_rz(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    reduce_pairs(1u, wg, li);
}

// After the initial residual and preconditioner: rho = r.z, stop at once if r is already small.
@compute @workgroup_size(REDUCE_WG)
fn finish_init(@builtin(local_invocation_index) li: u32) {
    finish_sums(li);
    if (li == 0u) {
        let rz = red_a[0];
        let rr = red_b[0];
        state.rho = rz;
        state.rr = rr;
        if (state.bb <= 0.0) {
            state.history[0] = 0.0;
            state.done = 1u;
            state.status = PCG_CONVERGED;
        } else {
            state.history[0] = rr / state.bb;
            if (rr <= cfg.tol * state.bb) {
                state.done = 1u;
                state.status = PCG_CONVERGED;
            }
        }
    }
}

@compute @workgroup_size(WORKGROUP)
fn copy_d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    d[c] = z[c];
}

@compute @workgroup_size(WORKGROUP)
fn apply_a(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    if (wg.x == 0u && wg.y == 0u) {
        // The partials still hold the last r.z (dot_dq overwrites them next).
        finish_sums_n(li, WORKGROUP);
        if (li == 0u) { state.rho = red_a[0]; }
    }
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    q[c] = apply_row(c, false);
}

@compute @workgroup_size(REDUCE_WG)
fn dot_dq(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    reduce_pairs(0u, wg, li);
}

// alpha = rho / d.q from dot_dq's partials (every workgroup computes it), then
// p += alpha d, r -= alpha q. d.q <= 0 means breakdown (A is positive definite here).
// Runs as `cfg.groups` workgroups striding over the cells like the reductions, so the
// partials are re-read a fixed number of times whatever the grid size.
@compute @workgroup_size(REDUCE_WG)
fn update_pr(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    finish_sums(li);
    let dq = red_a[0];
    let broke = !(dq > 0.0) || dq > 3.0e38;
    let alpha = select(state.rho / dq, 0.0, broke);
    if (li == 0u && wg.x == 0u) {
        state.alpha = alpha;
        if (broke) {
            state.done = 1u;
            state.status = PCG_BREAKDOWN;
        }
    }
    if (broke) { return; }
    let stride = cfg.groups * REDUCE_WG;
    var rmax = 0.0;
    for (var c = wg.x * REDUCE_WG + li; c < params.num_cells; c += stride) {
        p[c] = p[c] + alpha * d[c];
        let rn = r[c] - alpha * q[c];
        r[c] = rn;
        rmax = max(rmax, abs(rn));
    }
    // This workgroup's max|r| for test_converged (after every thread read red_a above).
    workgroupBarrier();
    red_a[li] = rmax;
    red_b[li] = rmax;
    tree_max(li);
    if (li == 0u) { partials[RR_PARTIALS + wg.x] = red_b[0]; }
}

// Where update_pr leaves its per-workgroup max|r| (after the pairs of the reductions).
const RR_PARTIALS: u32 = 2u * MAX_REDUCE_GROUPS;

// The convergence test on the r update_pr just made, before the preconditioner: a solve
// that has converged stops here, so its last iteration does not apply the preconditioner
// (one V-cycle saved per `mg` solve); update_d's own test would find the same max (a max
// is exact), so the iterations, p and r are those of testing after it. r.z and beta of
// that last iteration are then not computed (beta reads 0). One workgroup.
@compute @workgroup_size(REDUCE_WG)
fn test_converged(@builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    var m = 0.0;
    for (var i = li; i < cfg.groups; i += REDUCE_WG) {
        m = max(m, partials[RR_PARTIALS + i]);
    }
    red_a[li] = m;
    red_b[li] = m;
    tree_max(li);
    if (li == 0u) {
        let rr = red_b[0];
        if (rr <= cfg.tol * state.bb) {
            let it = state.iterations + 1u;
            state.iterations = it;
            state.rr = rr;
            state.history[it] = rr / state.bb;
            state.beta = 0.0;
            state.done = 1u;
            state.status = PCG_CONVERGED;
        }
    }
}

// beta = r.z / rho and the convergence test from dot_rz's partials (every workgroup
// computes them; workgroup 0 records them), then d = z + beta d unless the solve stops.
// rho itself is committed by the next apply_a: the other workgroups here still read it.
// Strided over the cells by `cfg.groups` workgroups, like update_pr.
@compute @workgroup_size(REDUCE_WG)
fn update_d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (is_done_uniform(li)) { return; }
    finish_sums(li);
    let rz = red_a[0];
    let rr = red_b[0];
    let it = state.iterations + 1u;
    let converged = rr <= cfg.tol * state.bb;
    let broke = !(rz > 0.0);
    let beta = rz / state.rho;
    if (li == 0u && wg.x == 0u) {
        state.iterations = it;
        state.rr = rr;
        state.history[it] = rr / state.bb;
        if (converged) {
            state.done = 1u;
            state.status = PCG_CONVERGED;
        } else if (it >= cfg.max_iterations) {
            state.done = 1u;
            state.status = PCG_ITERATION_LIMIT;
        } else if (broke) {
            state.done = 1u;
            state.status = PCG_BREAKDOWN;
        }
        state.beta = beta;
    }
    // (The last iteration before the limit may still update d: nothing reads it after.)
    if (converged || broke) { return; }
    let stride = cfg.groups * REDUCE_WG;
    for (var c = wg.x * REDUCE_WG + li; c < params.num_cells; c += stride) {
        d[c] = z[c] + beta * d[c];
    }
}

// --- the true residual, after a solve ---
//
// The recursive r drifts from b - A p in f32 (measured: 6.5e-7 reported, 4.0e-6 true on a
// dam-break system). This recomputes b - A p for the stored p with error-free products and
// a compensated sum. Where the driver keeps that arithmetic as written the result is the
// residual of the f32 solution to about an ulp of itself; llvmpipe rewrites part of it,
// and the value is then good to about the f32 floor (8% high at four times the floor on a
// dam break, half the error of a plain f32 evaluation). Beside it, each cell's f32 floor:
// an ulp (2^-24) of its largest term, below which no f32 p can push the residual.

struct Acc { s: f32, e: f32, big: f32 };

// coef * v = hi + lo exactly (Dekker: each factor split into 12-bit halves, whose
// products are exact in f32; unlike fma, which Vulkan does not require to be fused).
fn two_prod(x: f32, y: f32) -> vec2<f32> {
    let p = x * y;
    let cx = 4097.0 * x;
    let xh = cx - (cx - x);
    let xl = x - xh;
    let cy = 4097.0 * y;
    let yh = cy - (cy - y);
    let yl = y - yh;
    return vec2<f32>(p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl);
}

fn acc_add(acc: ptr<function, Acc>, coef: f32, v: f32) {
    let tp = two_prod(coef, v);
    let prod = tp.x;
    let perr = tp.y;
    let sum = (*acc).s + prod;
    let bv = sum - (*acc).s;
    let serr = ((*acc).s - (sum - bv)) + (prod - bv);
    (*acc).s = sum;
    (*acc).e += serr + perr;
    (*acc).big = max((*acc).big, abs(prod));
}

// (b - A p)_c and the cell's f32 floor.
fn true_row(c: u32) -> vec2<f32> {
    let row = a[c];
    if (row.x == 0.0) { return vec2<f32>(0.0); }
    let x = cell_coord(c, params.n);
    var acc = Acc(b[c], 0.0, abs(b[c]));
    acc_add(&acc, -row.x, p[c]);
    // The operator is A + K with an added term (the strong coupling of rigid bodies,
    // src/sim/bodies/strong.wgsl): `into_z` left (K p)_c in z.
    if (cfg.coupled != 0u) { acc_add(&acc, -1.0, z[c]); }
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        if (x[comp] + 1 < i32(params.n[comp])) {
            acc_add(&acc, -row[comp + 1u], p[cell_index(x + e, params.n)]);
        }
        if (x[comp] > 0) {
            let nc = cell_index(x - e, params.n);
            acc_add(&acc, -a[nc][comp + 1u], p[nc]);
        }
    }
    return vec2<f32>(acc.s + acc.e, acc.big * 5.9604645e-8);
}

// Pairwise max tree over red_a and red_b.
fn tree_max(li: u32) {
    for (var stride = REDUCE_WG / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (li < stride) {
            red_a[li] = max(red_a[li], red_a[li + stride]);
            red_b[li] = max(red_b[li], red_b[li + stride]);
        }
    }
    workgroupBarrier();
}

// Whether the solve has ended (converged, stopped or out of iterations): the true residual
// runs only then, because the host queues it right behind a guessed number of iterations
// and it shares `partials` with the iterations' reductions, which a running solve still
// needs (apply_a commits rho from them).
var<workgroup> wg_ended: u32;
fn has_ended_uniform(li: u32) -> bool {
    if (li == 0u) {
        wg_ended = select(0u, 1u, state.done != 0u || state.iterations >= cfg.max_iterations);
    }
    return workgroupUniformLoad(&wg_ended) != 0u;
}

// Per workgroup (strided over the cells like the reductions): max |b - A p| and max floor.
@compute @workgroup_size(REDUCE_WG)
fn true_residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (!has_ended_uniform(li)) { return; }
    var m0 = 0.0;
    var m1 = 0.0;
    let stride = cfg.groups * REDUCE_WG;
    for (var c = wg.x * REDUCE_WG + li; c < params.num_cells; c += stride) {
        let t = true_row(c);
        m0 = max(m0, abs(t.x));
        m1 = max(m1, t.y);
    }
    red_a[li] = m0;
    red_b[li] = m1;
    tree_max(li);
    if (li == 0u) {
        partials[2u * wg.x] = red_a[0];
        partials[2u * wg.x + 1u] = red_b[0];
    }
}

@compute @workgroup_size(REDUCE_WG)
fn finish_true(@builtin(local_invocation_index) li: u32) {
    if (!has_ended_uniform(li)) { return; }
    var m0 = 0.0;
    var m1 = 0.0;
    for (var i = li; i < cfg.groups; i += REDUCE_WG) {
        m0 = max(m0, partials[2u * i]);
        m1 = max(m1, partials[2u * i + 1u]);
    }
    red_a[li] = m0;
    red_b[li] = m1;
    tree_max(li);
    if (li == 0u) {
        state.true_rr = red_a[0];
        state.floor_rr = red_b[0];
    }
}

// A pipelined solve's end: one still running when its queued iterations ran out stops
// here, so the true residual behind it runs on the solution as it stands.
@compute @workgroup_size(1)
fn stop_queued() {
    if (state.done == 0u) {
        state.done = 1u;
        state.status = PCG_STOPPED;
    }
}
