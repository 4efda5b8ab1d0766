//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
//!include sim/core/face_kinds.wgsl
// Implicit diffusion, one backward-Euler step (I - k dt L) x = x_old, assembled here and
// solved by eddy's PCG (pcg.wgsl, precond.wgsl) on a grid of its own. The rules (no-slip,
// free surface, fixed and insulated walls) are written out with the f64 reference in
// src/reference/diffusion.rs; this file assembles exactly those rows.
//
// Every system is a stack of blocks along z on one cell-centred "system grid", so one PCG
// solves all components (or channels) at once with the same packed (diag, +x, +y, +z)
// matrix: velocity blocks are the face grids of u, v, w padded to (nx+1, ny+1, nz+1);
// scalar blocks are the cells, one block per channel (dye r, g, b, temperature). Padding
// and non-unknowns have a zero row (PCG leaves them out), and no coupling crosses from one
// block to the next, since a neighbour past a component's face grid is never an unknown.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> dp: DiffusionParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read_write> vel: array<f32>;
@group(0) @binding(4) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> b: array<f32>;
@group(0) @binding(7) var<storage, read_write> x: array<f32>;
// Per face, the body that covers it and its share (src/sim/bodies/coupling.wgsl), where
// `dp.covered.x` says the scene has bodies (a placeholder otherwise).
@group(0) @binding(8) var<storage, read> cover: array<u32>;

fn covers_on() -> bool {
    return dp.covered.x != 0u;
}

// Keep in sync with `WallSpot` in src/sim/core/diffusion.rs.
struct Spot {
    wall: u32,             // 0 left, 1 right, 2 bottom, 3 top
    temperature: u32,      // 1: the temperature channel, 0: the three dye channels
    lo: f32,               // range along the wall, m
    hi: f32,
    value: f32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
};

// Keep in sync with `DiffusionParams` in src/sim/core/diffusion.rs.
struct DiffusionParams {
    sys_n: vec3<u32>,      // the system grid
    sys_cells: u32,
    block: vec3<u32>,      // one block of it
    num_spots: u32,
    coef: vec4<f32>,       // k / h^2 per block (1/s); times the substep's dt below
    wall_value: array<vec4<f32>, 4>,  // per wall, per channel
    wall_fixed: array<vec4<f32>, 4>,  // 1 where the wall holds the channel fixed
    spots: array<Spot, 16>,
    // Tangential velocity of the walls (left, right along y; bottom, top along x), m/s.
    wall_slide: vec4<f32>,
    // x: 1 when `cover` holds the bodies' faces, which are then fixed faces like a solid's.
    covered: vec4<u32>,
};

fn clear_row(s: u32) {
    a[s] = vec4<f32>(0.0);
    b[s] = 0.0;
    x[s] = 0.0;
}

@compute @workgroup_size(WORKGROUP)
fn velocity_system(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= dp.sys_cells) { return; }
    let sc = cell_coord(s, dp.sys_n);
    let comp = u32(sc.z) / dp.block.z;
    let f = vec3<i32>(sc.x, sc.y, sc.z - i32(comp * dp.block.z));
    if (comp >= 3u) { clear_row(s); return; }
    let d = face_dims(comp, params.n);
    if (!in_grid(f, d) || face_kind(comp, f) != UNKNOWN) { clear_row(s); return; }
    let k = dp.coef[comp] * params.dt;
    let off = face_offset(comp, params);
    let g = off + face_index(f, d);
    // The face's liquid mass (1 but where a body covers part of it): m (u - u*) = k dt L u.
    let mass = face_mass(comp, f);
    var diag = mass;
    var rhs = mass * vel[g];
    var up = vec3<f32>(0.0);
    // A slice (nz = 1) is a 2D flow: no shear against its front and back.
    for (var ax = 0u; ax < 3u; ax++) {
        if (ax == 2u && params.n.z == 1u) { continue; }
        for (var side = 0; side < 2; side++) {
            let n = f + (2 * side - 1) * unit(ax);
            if (!in_grid(n, d)) {
                // Across a domain wall, halfway: no-slip ghost 2 u_w - u (u_w = 0 but for
                // a sliding wall, along the other in-plane axis).
                diag += 2.0 * k;
                if (ax < 2u && comp < 2u && comp != ax) {
                    rhs += 2.0 * k * dp.wall_slide[2u * ax + u32(side)];
                }
                continue;
            }
            let kind = face_kind(comp, n);
            let un = vel[off + face_index(n, d)];
            if (kind == UNKNOWN) {
                diag += k;
                if (side == 1) { up[ax] = -k; }
            } else if (kind == FULLY_SOLID && ax != comp) {
                diag += 2.0 * k;
                rhs += 2.0 * k * un;
            } else if (kind != AIR_FACE) {
                diag += k;
                rhs += k * un;
            }
            // AIR_FACE: zero normal derivative at the free surface, no term.
        }
    }
    a[s] = vec4<f32>(diag, up);
    b[s] = rhs;
    x[s] = vel[g];
}

@compute @workgroup_size(WORKGROUP)
fn velocity_store(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= dp.sys_cells || a[s].x == 0.0) { return; }
    let sc = cell_coord(s, dp.sys_n);
    let comp = u32(sc.z) / dp.block.z;
    let f = vec3<i32>(sc.x, sc.y, sc.z - i32(comp * dp.block.z));
    vel[face_offset(comp, params) + face_index(f, face_dims(comp, params.n))] = x[s];
}

// The wall of the face of cell `c` toward `side` along `ax` (0 left, 1 right, 2 bottom,
// 3 top; 4 for the front and back of a slice) and the face centre's coordinate along it.
fn wall_of(c: vec3<i32>, ax: u32, side: i32) -> vec2<f32> {
    let centre = (vec3<f32>(c) + vec3<f32>(0.5)) * params.h;
    if (ax == 0u) { return vec2<f32>(f32(side), centre.y); }
    if (ax == 1u) { return vec2<f32>(f32(2 + side), centre.x); }
    return vec2<f32>(4.0, 0.0);
}

// Fixed value of channel `ch` on wall `w` at coordinate `along`: (value, 1), or (0, 0)
// where the wall is insulated. The first matching spot wins over the wall's own value.
fn wall_value(w: u32, along: f32, ch: u32) -> vec2<f32> {
    if (w >= 4u) { return vec2<f32>(0.0); }
    let temperature = u32(ch == 3u);
    for (var i = 0u; i < 16u; i++) {
        let p = dp.spots[i];
        if (i < dp.num_spots && p.wall == w && p.temperature == temperature
            && p.lo <= along && along <= p.hi) {
            return vec2<f32>(p.value, 1.0);
        }
    }
    return vec2<f32>(dp.wall_value[w][ch], dp.wall_fixed[w][ch]);
}

@compute @workgroup_size(WORKGROUP)
fn scalar_system(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= dp.sys_cells) { return; }
    let sc = cell_coord(s, dp.sys_n);
    let ch = u32(sc.z) / dp.block.z;
    let c = vec3<i32>(sc.x, sc.y, sc.z - i32(ch * dp.block.z));
    if (ch >= 4u || dp.coef[ch] == 0.0 || type_at(c) != FLUID) { clear_row(s); return; }
    let k = dp.coef[ch] * params.dt;
    let old = dye[cell_index(c, params.n)][ch];
    var diag = 1.0;
    var rhs = old;
    var up = vec3<f32>(0.0);
    for (var ax = 0u; ax < 3u; ax++) {
        for (var side = 0; side < 2; side++) {
            let n = c + (2 * side - 1) * unit(ax);
            if (in_grid(n, params.n)) {
                if (cell_type[cell_index(n, params.n)] == FLUID) {
                    diag += k;
                    if (side == 1) { up[ax] = -k; }
                }
                // SOLID or AIR neighbour: insulated, no term.
                continue;
            }
            let w = wall_of(c, ax, side);
            let v = wall_value(u32(w.x), w.y, ch);
            if (v.y != 0.0) {
                // Dirichlet wall halfway to the ghost cell: ghost 2 s_w - s.
                diag += 2.0 * k;
                rhs += 2.0 * k * v.x;
            }
        }
    }
    a[s] = vec4<f32>(diag, up);
    b[s] = rhs;
    x[s] = old;
}

// One thread per cell writes all four channels (no two threads share a vec4).
@compute @workgroup_size(WORKGROUP)
fn scalar_store(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var q = dye[c];
    for (var ch = 0u; ch < 4u; ch++) {
        let s = c + ch * params.num_cells;
        if (a[s].x != 0.0) { q[ch] = x[s]; }
    }
    dye[c] = q;
}
