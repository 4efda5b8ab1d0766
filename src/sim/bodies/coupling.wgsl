//!include sim/core/prelude.wgsl
// Rigid bodies in the grid (src/sim/bodies/coupling.rs).
// `cover_faces` (bodies that cut faces) or `cover_cells` (whole cells): what each body covers
//   of each face, for the strong coupling's J (strong.wgsl); see each below. In the smoke
//   `cover_faces` also gives the part of a face a body uncovered its velocity (`uncover`).
// `stamp`: every cell whose centre lies inside a body becomes SOLID with the body's velocity
//   v + w x r at the cell centre, so the boundary stage sets u.n = u_body.n on its faces
//   (where bodies cut faces, a body's cell with a face still open is a cut cell instead,
//   and cells next to a covered face carry the body's velocity too); the body's index + 1
//   goes to `body_id` (and to the w of `solid_vel`). In the liquid, cells no body covers get the
//   scene's static solids back (`restore`); in the smoke, the mark stage has already
//   written them and `stamp` also makes the body's closed cells SOLID in `cell_type`.
// `pocket_mark`, `pocket_fill`: a fluid cell with solids or walls on all in-plane sides but
//   one (a dead end between bodies, walls and static solids, or an enclosed pocket) becomes
//   SOLID at rest. A small enclosed pocket is a separate region whose moving walls need not
//   conserve its volume (the smoke makes each region's right-hand side compatible, see
//   `rhs_compatible`, but a one- or two-cell pocket squeezed by a body is better taken out
//   than solved); dead ends are where a body's corner closes in. Two mark/fill rounds close pockets and crevices two cells
//   deep. Marking first and filling after keeps the result independent of thread order;
//   `isolated_fill` then takes the cells the last round closed in on every side.
// `rhs_sum`, `rhs_compatible` (the smoke): a closed box of smoke is a pure Neumann problem,
//   solvable only when the right-hand side sums to zero. A body's faces carry its velocity,
//   and a body pressed against a wall or another solid loses the faces it shares with it,
//   so the fluxes through its remaining faces no longer cancel; the mean of rhs over FLUID
//   cells is removed (the least-squares solve), which is exact whenever the fluxes were
//   compatible (the sum is in 64-bit fixed point, two u32 atomics with a carry, so it is
//   the same whatever order the threads add in). Bodies can also wall off pockets: every separate region is its own pure
//   Neumann problem, so the mean is removed per region (`regions`, labelled on the host by
//   src/sim/bodies/regions.rs); `region_freeze` makes the regions beyond MAX_REGIONS solid
//   at rest.
// `push_out`: particles inside a body move to its surface along the nearest face's normal
//   (boxes) or radially (spheres), and lose the velocity that points into it.
// `gather_scale_faces` (the liquid, bodies that cut faces): the factor on each face's
//   velocity change that G2P hands the particles near a body, so they take up the momentum
//   the solve moved (see below).

// Mirrored by `BodyParams` in src/sim/bodies/coupling.rs (layout checked by tests/integration/shaders.rs).
struct BodyParams {
    restore: u32,         // 1: cells outside bodies get base_solid / base_vel back
    set_cell_type: u32,   // 1: body cells become SOLID in cell_type (the smoke)
    slice: u32,           // 1: one-slice grid, bodies are prisms across z
    fractions: u32,       // 1: bodies cut faces (`cover_faces`); 0: whole cells (`cover_cells`)
    margin: f32,          // m a pushed particle ends outside the body's surface
    b_unit: f32,          // fixed-point units per unit of the pressure right-hand side
    particle_mass: f32,   // kg of liquid a particle carries (0: massless tracers, the smoke)
    uncover: u32,         // 1: a face's part a body uncovers joins the fluid at its velocity
};

// `body_id` of a cell `pocket_mark` found nearly enclosed (see `pocket_fill`).
const POCKET: u32 = 0xffffffffu;
const TWO_32: f32 = 4294967296.0;

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> bp: BodyParams;
@group(0) @binding(2) var<storage, read> bodies: array<Body>;
@group(0) @binding(3) var<storage, read> base_solid: array<u32>;
@group(0) @binding(4) var<storage, read> base_vel: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> solid: array<u32>;
@group(0) @binding(6) var<storage, read_write> solid_vel: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(8) var<storage, read_write> body_id: array<u32>;
@group(0) @binding(9) var<storage, read_write> counters: array<atomic<u32>>;
// Per region, the sum of rhs over its FLUID cells as a (low, high) u32 pair; then, from
// COUNT_SLOT, per region the number of those cells.
@group(0) @binding(10) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read_write> vel: array<vec4<f32>>;
// The pressure right-hand side b = -h^2 div u.
@group(0) @binding(13) var<storage, read_write> rhs: array<f32>;
// Per cell its region (NO_REGION: solid, or frozen).
@group(0) @binding(14) var<storage, read_write> regions: array<u32>;
// Per face, what the bodies cover of it: the covering body's index + 1 in the top 8 bits
// (0: none) and its share of the face, a fraction in unorm24, below (strong.wgsl's J).
@group(0) @binding(15) var<storage, read_write> cover: array<u32>;
// The faces' open fractions for the solve (GridFields::open): with `fractions`, the static
// solids' (`base_open`) less what the bodies cover.
@group(0) @binding(16) var<storage, read_write> open: array<f32>;
@group(0) @binding(17) var<storage, read> base_open: array<f32>;
// Per body, the momentum `push_out` gave the particles it pushed (linear, then angular about
// the body's centre), each a 64-bit fixed-point sum (low, high u32) in PUSH_UNIT per N s.
@group(0) @binding(18) var<storage, read_write> push_sums: array<atomic<u32>>;
// The grid's face velocities (`uncover`: the smoke's, which carry over from one substep to
// the next).
@group(0) @binding(19) var<storage, read_write> face_vel: array<f32>;
// P2G's (momentum, weight) sums per face, fixed point (GridFields::acc; read only here,
// bound read_write because `rhs` lives in the same buffer in the liquid).
@group(0) @binding(20) var<storage, read_write> acc: array<i32>;
// Per face, the factor on the FLIP velocity change G2P gathers there.
@group(0) @binding(21) var<storage, read_write> gather_scale: array<f32>;
//!include sim/core/cells.wgsl
//!include sim/core/open.wgsl
//!include sim/bodies/shape.wgsl

fn body_slice() -> bool {
    return bp.slice != 0u;
}

const PUSH_UNIT: f32 = 16777216.0;

// The region sums start at slot 0, their cell counts at word COUNT_SLOT.
const RHS_SLOT: u32 = 0u;
const COUNT_SLOT: u32 = 2u * MAX_REGIONS;

fn body_velocity(b: Body, x: vec3<f32>) -> vec3<f32> {
    return b.vel.xyz + cross(b.omega.xyz, x - b.centre.xyz);
}

fn cell_centre_of(c: vec3<i32>) -> vec3<f32> {
    return (vec3<f32>(c) + vec3<f32>(0.5)) * params.h;
}


const NO_FACE: u32 = 0xffffffffu;

// Global index of face i (0..6: -x, +x, -y, +y, -z, +z) of cell `x`, or NO_FACE where it
// leads out of the grid (or, on a slice, out of its plane).
fn inner_face(x: vec3<i32>, i: u32) -> u32 {
    let a = i / 2u;
    let up = (i & 1u) == 1u;
    let e = unit(a);
    if ((a == 2u && bp.slice != 0u) || !in_grid(select(x - e, x + e, up), params.n)) {
        return NO_FACE;
    }
    return cell_face(x, a, up);
}

// Whether a fluid can still pass one of the faces of cell `x` between it and another cell.
fn has_open_face(x: vec3<i32>) -> bool {
    for (var i = 0u; i < 6u; i++) {
        let g = inner_face(x, i);
        if (g != NO_FACE && face_open(g) > 0.0) { return true; }
    }
    return false;
}

// The body (index + 1, 0: none) covering the first face of cell `x` that a body covers.
fn covering_body(x: vec3<i32>) -> u32 {
    for (var i = 0u; i < 6u; i++) {
        let g = inner_face(x, i);
        if (g != NO_FACE && (cover[g] >> 24u) != 0u) { return cover[g] >> 24u; }
    }
    return 0u;
}

// A face's open fraction below this closes it, and a body's share below it is none: a
// sliver of a face would only give the solve a tiny coupling (as the static solids' cuts,
// src/scene/fractions.rs OPEN_FRACTION_MIN).
const SHARE_MIN: f32 = 0.02;
const UNORM24: f32 = 16777215.0;

// `fractions`: what the bodies cover of each face. A face's control volume (the cell-sized
// box around its centre, where its velocity sample stands for the fluid) lies inside body b
// by about clamp(1/2 - d_b / h) at the distance d_b from the face's centre to b's surface:
// exact for a surface parallel to a side of the box, and it changes smoothly as the body
// moves, so the body's force (the pressure gradient summed over what it covers, strong.wgsl)
// has no jump as it crosses a cell. The body closest to covering the face owns it; the faces
// on the domain's walls (and a slice's z faces) are walls whatever covers them.
//
// `uncover` (the smoke, whose face velocities carry over between substeps): where a face's
// open fraction grows from o to o', the part o' - o that the body's last cover left is fluid
// that moved with the body, so the face's velocity becomes the mean (o u + (o' - o) u_b) / o'
// with u_b the body's velocity at the face's centre. Without it the uncovered part would
// join at the velocity the fluid beside it had, which the projection then weighs with the
// new, larger fraction: the air would gain energy no force gave it.
@compute @workgroup_size(WORKGROUP)
fn cover_faces(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let a = face.comp;
    var base = 1.0;
    if (arrayLength(&base_open) >= num_faces(params)) { base = base_open[g]; }
    let at = face.f[a];
    let wall = at == 0 || at == i32(params.n[a]) || (bp.slice != 0u && a == 2u);
    let x = (vec3<f32>(face.f) + vec3<f32>(0.5) - 0.5 * vec3<f32>(unit(a))) * params.h;
    var best = 0.0;
    var owner = 0u;
    // The distance to the nearest body in cells, for `gather_scale_faces` (walls: none).
    var nearest = 1e30;
    if (!wall) {
        for (var k = 0u; k < MAX_BODIES; k++) {
            let b = bodies[k];
            if (b.centre.w == 0.0) { break; }
            let d = body_distance(b, x) * params.inv_h;
            nearest = min(nearest, d);
            let c = clamp(0.5 - d, 0.0, 1.0);
            if (c > best) {
                best = c;
                owner = k + 1u;
            }
        }
    }
    if (arrayLength(&gather_scale) >= num_faces(params)) { gather_scale[g] = nearest; }
    var o = base * (1.0 - best);
    if (o < SHARE_MIN) { o = 0.0; }
    var share = base - o;
    if (share < SHARE_MIN) {
        share = 0.0;
        o = base;
    }
    let last_owner = cover[g] >> 24u;
    if (bp.uncover != 0u && last_owner != 0u && last_owner <= MAX_BODIES) {
        let was = open[g];
        if (o > was) {
            let ub = body_velocity(bodies[last_owner - 1u], x)[a];
            face_vel[g] = (was * face_vel[g] + (o - was) * ub) / o;
        }
    }
    let q = u32(round(share * UNORM24));
    cover[g] = select(0u, (owner << 24u) | q, q != 0u);
    open[g] = o;
}

// Whole cells (no `fractions`, after `stamp` and the pockets' fills): a face of a body's
// cell is the body's whole (the lower cell's body where two meet).
@compute @workgroup_size(WORKGROUP)
fn cover_cells(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let cells = face_cells(face.comp, face.f);
    var owner = 0u;
    for (var i = 0u; i < 2u; i++) {
        let c = cells[1u - i];
        if (in_grid(c, params.n)) {
            let id = body_id[cell_index(c, params.n)];
            if (id != 0u && id <= MAX_BODIES) { owner = id; }
        }
    }
    cover[g] = select(0u, (owner << 24u) | u32(UNORM24), owner != 0u);
}

@compute @workgroup_size(WORKGROUP)
fn stamp(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let x = cell_centre_of(cell_coord(c, params.n));
    var id = 0u;
    // A constant bound, left at the first empty slot (shape 0; `GpuBody::from_set` packs
    // the bodies first): the software adapter mishandles loops bounded by a uniform.
    for (var i = 0u; i < MAX_BODIES; i++) {
        let b = bodies[i];
        if (b.centre.w == 0.0) { break; }
        if (inside(b, x)) {
            id = i + 1u;
            break;
        }
    }
    body_id[c] = id;
    let xc = cell_coord(c, params.n);
    if (id != 0u) {
        // With `fractions` a body's cell with a face still open is a cut cell: FLUID for the
        // solve where the fluid reaches it (mark_cells.wgsl `cut_cells`; the smoke's always).
        let cut = bp.fractions != 0u && has_open_face(xc);
        solid[c] = select(SOLID_CLOSED, SOLID_PARTIAL, cut);
        // w: the body's index + 1, which the strong coupling's `restamp` reads.
        solid_vel[c] = vec4<f32>(body_velocity(bodies[id - 1u], x), f32(id));
        if (bp.set_cell_type != 0u && !cut) {
            if (cell_type[c] == FLUID) { atomicSub(&counters[0], 1u); }
            cell_type[c] = SOLID;
        }
        return;
    }
    if (bp.restore != 0u) {
        solid[c] = base_solid[c];
        solid_vel[c] = base_vel[c];
    }
    // A cell outside the bodies with a face one covers carries that body's velocity, so a
    // covered face's velocity (sim/core/covered.wgsl, the mean over its two cells) is the
    // body's at the face's centre.
    if (bp.fractions != 0u && solid[c] == 0u) {
        let k = covering_body(xc);
        if (k != 0u) { solid_vel[c] = vec4<f32>(body_velocity(bodies[k - 1u], x), f32(k)); }
    }
}

// `v` (fixed-point units, |v| < 2^62) as a two's complement 64-bit (low, high) pair.
fn fixed_words(v: f32) -> vec2<u32> {
    let m = abs(v);
    let hi_f = floor(m / TWO_32);
    var hi = u32(min(hi_f, 2147483647.0));
    // Exact: m and hi_f * 2^32 lie on the same grid of f32 steps.
    var lo = u32(min(m - hi_f * TWO_32, 4294967295.0));
    if (v < 0.0) {
        lo = ~lo + 1u;
        hi = ~hi + select(0u, 1u, lo == 0u);
    }
    return vec2<u32>(lo, hi);
}

// Adds `v` (fixed-point units, |v| < 2^62) to the 64-bit sum at `slot`.
fn add_fixed(slot: u32, v: f32) {
    let w = fixed_words(v);
    let old = atomicAdd(&sums[2u * slot], w.x);
    let carry = select(0u, 1u, old + w.x < old);
    atomicAdd(&sums[2u * slot + 1u], w.y + carry);
}

// The same into the push-out's momentum sums.
fn add_push(slot: u32, v: f32) {
    let w = fixed_words(v * PUSH_UNIT);
    let old = atomicAdd(&push_sums[2u * slot], w.x);
    let carry = select(0u, 1u, old + w.x < old);
    atomicAdd(&push_sums[2u * slot + 1u], w.y + carry);
}

fn in_domain(x: vec3<f32>) -> bool {
    let hi = vec3<f32>(params.n) * params.h;
    let inside = x > vec3<f32>(0.0) & x < hi;
    return inside.x && inside.y && (bp.slice != 0u || inside.z);
}

fn clamp_domain(x: vec3<f32>) -> vec3<f32> {
    let hi = vec3<f32>(params.n) * params.h;
    let c = clamp(x, vec3<f32>(bp.margin), hi - vec3<f32>(bp.margin));
    return select(c, vec3<f32>(c.xy, x.z), vec3<bool>(false, false, bp.slice != 0u));
}

// Where push_sums counts, per body, the particles inside it (`push_count`), after the
// momentum sums (6 values of two words per body).
const PUSH_COUNT_BASE: u32 = MAX_BODIES * 12u;

// The particles inside each body, before `push_out` moves them (its exchange weighs them
// against the body's mass). Massless tracers (the smoke) need no count.
@compute @workgroup_size(WORKGROUP)
fn push_count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= params.num_particles) { return; }
    let x = pos[i].xyz;
    for (var k = 0u; k < MAX_BODIES; k++) {
        let b = bodies[k];
        if (b.centre.w == 0.0) { break; }
        if (inside(b, x)) { atomicAdd(&push_sums[PUSH_COUNT_BASE + k], 1u); }
    }
}

// The share of a particle's approach along n at x a body of finite mass takes up: the
// particles inside it (mass m_in) and the body meet inelastically along their normals,
// s = 1 / (1 + m_in w) with w = 1/m + (r x n) . I^-1 (r x n) the body's inverse mass seen
// at x along n. A body that cannot move (w = 0) or a massless tracer stops the approach
// whole; a body far lighter than the liquid it pushes moves with the liquid instead of
// throwing it (and itself) off: with every particle stopped whole, a 0.01x box floating
// on a 16^3 pool took 0.77 N s from 0.25 kg of liquid in one push, 32 m/s.
fn push_share(b: Body, x: vec3<f32>, n: vec3<f32>, k: u32) -> f32 {
    let m_in = f32(atomicLoad(&push_sums[PUSH_COUNT_BASE + k])) * bp.particle_mass;
    let rn = cross(x - b.centre.xyz, n);
    let rl = vec3<f32>(dot(rn, b.axis_x.xyz), dot(rn, b.axis_y.xyz), dot(rn, b.axis_z.xyz));
    let w = b.inverse.x + dot(rl * rl, b.inverse.yzw);
    return 1.0 / (1.0 + m_in * w);
}

@compute @workgroup_size(WORKGROUP)
fn push_out(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= params.num_particles) { return; }
    var x = pos[i].xyz;
    var v = vel[i].xyz;
    for (var k = 0u; k < MAX_BODIES; k++) {
        let b = bodies[k];
        if (b.centre.w == 0.0) { break; }
        if (!inside(b, x)) { continue; }
        let v0 = v;
        let l = to_local(b, x);
        var n: vec3<f32>;
        if (b.centre.w == BODY_SHAPE_SPHERE) {
            let len = length(l);
            var dir = vec3<f32>(0.0, 1.0, 0.0);
            if (len > 1e-12) { dir = l / len; }
            let out = dir * (b.half.x + bp.margin);
            n = dir.x * b.axis_x.xyz + dir.y * b.axis_y.xyz + dir.z * b.axis_z.xyz;
            let world = b.centre.xyz + out.x * b.axis_x.xyz + out.y * b.axis_y.xyz
                + out.z * b.axis_z.xyz;
            x = vec3<f32>(world.xy, select(world.z, x.z, bp.slice != 0u));
            x = clamp_domain(x);
        } else {
            // Out through the nearest face that leads back into the domain (a body resting
            // on a wall must not push particles through it).
            var best = 1e30;
            var out = x;
            for (var f = 0u; f < 6u; f++) {
                let a = f / 2u;
                if (a == 2u && bp.slice != 0u) { continue; }
                let s = select(-1.0, 1.0, (f & 1u) == 1u);
                let pen = b.half[a] - s * l[a];
                var axis = b.axis_x.xyz;
                if (a == 1u) { axis = b.axis_y.xyz; }
                if (a == 2u) { axis = b.axis_z.xyz; }
                let cand = x + s * axis * (pen + bp.margin);
                if (pen < best && in_domain(cand)) {
                    best = pen;
                    out = cand;
                    n = s * axis;
                }
            }
            x = out;
        }
        let vb = body_velocity(b, x);
        let vn = dot(v - vb, n);
        if (vn < 0.0) {
            var share = 1.0;
            if (bp.particle_mass > 0.0) { share = push_share(b, x, n, k); }
            v = v - share * vn * n;
        }
        // What the particle gained, the body gives (the host takes it off the body).
        let dp = bp.particle_mass * (v - v0);
        if (any(dp != vec3<f32>(0.0))) {
            let dl = cross(x - b.centre.xyz, dp);
            for (var a = 0u; a < 3u; a++) {
                add_push(6u * k + a, dp[a]);
                add_push(6u * k + 3u + a, dl[a]);
            }
        }
    }
    pos[i] = vec4<f32>(x, pos[i].w);
    vel[i] = vec4<f32>(v, vel[i].w);
}

@compute @workgroup_size(WORKGROUP)
fn region_freeze(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || (solid[c] != 0u && solid[c] != SOLID_PARTIAL) || regions[c] != NO_REGION) { return; }
    solid[c] = 1u;
    solid_vel[c] = vec4<f32>(0.0);
    if (cell_type[c] == FLUID) { atomicSub(&counters[0], 1u); }
    cell_type[c] = SOLID;
}

@compute @workgroup_size(WORKGROUP)
fn rhs_sum(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || cell_type[c] != FLUID || regions[c] == NO_REGION) { return; }
    add_fixed(RHS_SLOT + regions[c], rhs[c] * bp.b_unit);
    atomicAdd(&sums[COUNT_SLOT + regions[c]], 1u);
}

@compute @workgroup_size(WORKGROUP)
fn rhs_compatible(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || cell_type[c] != FLUID || regions[c] == NO_REGION) { return; }
    let slot = RHS_SLOT + regions[c];
    let lo = atomicLoad(&sums[2u * slot]);
    let hi = bitcast<i32>(atomicLoad(&sums[2u * slot + 1u]));
    let total = (f32(hi) * TWO_32 + f32(lo)) / bp.b_unit;
    let cells = max(f32(atomicLoad(&sums[COUNT_SLOT + regions[c]])), 1.0);
    rhs[c] = rhs[c] - total / cells;
}

// `pack_regions` (the smoke, before the host labels its regions, src/sim/bodies/regions.rs):
// what the labelling needs, 4 bits per cell and 8 cells to a word, into the head of
// `regions`, which the host reads back and then overwrites with the labels. Bit 0: the
// cell walls the regions off (a SOLID flag that is not a cut cell's); bits 1-3: some of its
// lower x, y, z face is open. At 128 x 192 that is 12 kB to read instead of the flags and
// the open fractions (500 kB).
@compute @workgroup_size(WORKGROUP)
fn pack_regions(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let w = linear_id(wg, nwg, li);
    if (w >= (params.num_cells + 7u) / 8u) { return; }
    var bits = 0u;
    for (var k = 0u; k < 8u; k++) {
        let c = 8u * w + k;
        if (c >= params.num_cells) { break; }
        let s = solid[c];
        var b = select(0u, 1u, s != 0u && s != SOLID_PARTIAL);
        let x = cell_coord(c, params.n);
        for (var a = 0u; a < 3u; a++) {
            if (x[a] > 0 && face_open(cell_face(x, a, false)) > 0.0) { b = b | (2u << a); }
        }
        bits = bits | (b << (4u * k));
    }
    regions[w] = bits;
}

// A cut cell (SOLID_PARTIAL) is open: the fluid passes into it.
fn walled_or_solid(c: vec3<i32>) -> bool {
    if (!in_grid(c, params.n)) { return true; }
    let s = solid[cell_index(c, params.n)];
    return s != 0u && s != SOLID_PARTIAL;
}

// Sides of cell `x` (in-plane only on a slice) with neither a wall nor a solid beyond.
fn open_sides(x: vec3<i32>) -> u32 {
    let axes = select(3u, 2u, bp.slice != 0u);
    var open = 0u;
    for (var a = 0u; a < axes; a++) {
        let e = unit(a);
        open += select(1u, 0u, walled_or_solid(x - e)) + select(1u, 0u, walled_or_solid(x + e));
    }
    return open;
}

@compute @workgroup_size(WORKGROUP)
fn pocket_mark(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || solid[c] != 0u) { return; }
    if (open_sides(cell_coord(c, params.n)) <= 1u) { body_id[c] = POCKET; }
}

// After the last round: a fluid cell with no fluid neighbour left (closed in by that round's
// fills) has no row in A at all (zero diagonal), and the preconditioners divide by it; it
// becomes SOLID at rest too. Its neighbours are all solid, so filling it changes no other
// thread's count: one pass, no marking.
@compute @workgroup_size(WORKGROUP)
fn isolated_fill(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || solid[c] != 0u) { return; }
    if (open_sides(cell_coord(c, params.n)) == 0u) { body_id[c] = POCKET; }
}

@compute @workgroup_size(WORKGROUP)
fn pocket_fill(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || body_id[c] != POCKET) { return; }
    body_id[c] = 0u;
    solid[c] = 1u;
    solid_vel[c] = vec4<f32>(0.0);
    if (bp.set_cell_type != 0u) {
        if (cell_type[c] == FLUID) { atomicSub(&counters[0], 1u); }
        cell_type[c] = SOLID;
    }
}

// `gather_scale_faces` (the liquid, once the cells are marked): the projection changes a
// face's velocity by du over the liquid the solve weighs it with, rho h^3 open, but G2P
// hands the particles around the face sum_p m_p w_p du: their own mass on it. Far from the
// bodies the two agree (in expectation; FLIP's own balance). Within sqrt(3) cells of a body
// the particles' kernels reach into it, where there are none, so a face between two FLUID
// cells carries less particle mass than the solve gave it, and the difference is momentum
// the body lost that the liquid never got (measured: up to 10% of a body's loss, a body
// thrown through a free blob, tests/integration/bodies.rs). There each face's change is
// scaled by open over the particles' share, rest_weight open / w (at most
// GATHER_SCALE_MAX), so the particles take up what the solve moved.
// - A face against a SOLID cell: 0. It carries the solid's velocity, imposed over what P2G
//   gave it, and the solve gives it no liquid.
// - A face on the domain's walls: 1, FLIP's own no-penetration update, as everywhere else.
// - A face against AIR, or between cells by the free surface: only ever scaled down, by the
//   same share / w where the particles outweigh the face's open share, else 1. The cells
//   there are only partly full and the solve's weight overstates their liquid: scaled up,
//   a 0.01x box floating in a 16^3 pool took the surface faces' doubled changes and bobbed
//   at 0.36 m/s, spinning at 3.5 rad/s, two seconds after it surfaced. But particles crowd
//   faces a body mostly covers (by its wake, in the AIR pockets of its cut cells), and at 1
//   they took far more than the solve moved there (at 32^3, in one substep, 0.0078 kg m/s
//   by a thrown box's wake where the box lost 0.0014): the blob's sphere lost 0.6% of the
//   momentum at once (1.1% over 15 frames).
const GATHER_REACH: f32 = 1.8;
const GATHER_SCALE_MAX: f32 = 2.0;

// Whether cell `x` has an AIR neighbour across a face that no solid cuts (the free surface;
// a body's cut cell left AIR is not air).
fn by_the_air(x: vec3<i32>) -> bool {
    for (var i = 0u; i < 6u; i++) {
        let y = x + select(-1, 1, (i & 1u) == 1u) * unit(i / 2u);
        if (in_grid(y, params.n)) {
            let c = cell_index(y, params.n);
            if (cell_type[c] == AIR && solid[c] == 0u) { return true; }
        }
    }
    return false;
}

@compute @workgroup_size(WORKGROUP)
fn gather_scale_faces(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params) || arrayLength(&gather_scale) < num_faces(params)) { return; }
    let face = face_of(g, params);
    let a = face.comp;
    // `cover_faces` left the distance to the nearest body here (in cells).
    let d = gather_scale[g];
    var s = 1.0;
    if (d < GATHER_REACH) {
        let cells = face_cells(a, face.f);
        let t0 = type_at(cells[0]);
        let t1 = type_at(cells[1]);
        if (t0 == SOLID || t1 == SOLID) {
            s = 0.0;
        } else {
            let w = f32(acc[2u * g + 1u]) / WEIGHT_SCALE;
            let share = face_open(g) * params.rest_weight;
            if (t0 == FLUID && t1 == FLUID && !by_the_air(cells[0]) && !by_the_air(cells[1])) {
                s = select(0.0, min(share / w, GATHER_SCALE_MAX), w > 0.0);
            } else if (w > share) {
                s = share / w;
            }
        }
    }
    gather_scale[g] = s;
}
