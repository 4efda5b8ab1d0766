// Shared definitions for every eddy kernel: simulation parameters, grid indexing, cell
// types and the trilinear stencil used by both particle-to-grid and grid-to-particle.
// Conventions are spelled out in src/reference/mod.rs (the CPU reference follows them too).
// The constants shared with Rust (cell types, workgroup sizes, scales, counter slots, codes)
// are generated from src/gpu/constants.rs.
//!include gpu/constants.wgsl

// Mirrored by `SimParams` in src/sim/core/params.rs (tests/integration/shaders.rs checks the layout).
struct SimParams {
    n: vec3<u32>,          // cells along x, y, z
    num_cells: u32,
    h: f32,                // cell size (m)
    inv_h: f32,
    dt: f32,               // substep (s)
    pic_ratio: f32,        // PIC fraction of the PIC/FLIP blend
    gravity: vec3<f32>,
    num_particles: u32,
    num_u: u32,            // (nx+1)*ny*nz
    num_v: u32,            // nx*(ny+1)*nz
    num_w: u32,            // nx*ny*(nz+1)
    max_particle_speed: f32, // clamp that guards the fixed-point accumulators
    fluid_weight: f32,     // relative density (see mark_cells.wgsl) above which a cell is FLUID
    transfer: u32,         // TRANSFER_FLIP or TRANSFER_APIC
    _pad1: u32,
    _pad2: u32,
    rest_weight: f32,      // mean P2G face weight of liquid at rest (particles per cell)
    surface_tension: f32,  // sigma / rho (m^3/s^2), 0 without
    _pad4: u32,
    _pad5: u32,
};

// Linear invocation index for dispatches that spill workgroups into y (see Kernel::dispatch).
fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lidx: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WORKGROUP + lidx;
}

fn cell_index(c: vec3<i32>, n: vec3<u32>) -> u32 {
    return u32(c.x) + n.x * (u32(c.y) + n.y * u32(c.z));
}

fn cell_coord(idx: u32, n: vec3<u32>) -> vec3<i32> {
    return vec3<i32>(i32(idx % n.x), i32((idx / n.x) % n.y), i32(idx / (n.x * n.y)));
}

// Cell containing point `x` (metres), clamped into the grid.
fn cell_containing(x: vec3<f32>, p: SimParams) -> vec3<i32> {
    return clamp(vec3<i32>(floor(x * p.inv_h)), vec3<i32>(0), vec3<i32>(p.n) - vec3<i32>(1));
}

fn in_grid(c: vec3<i32>, n: vec3<u32>) -> bool {
    return all(c >= vec3<i32>(0)) && all(c < vec3<i32>(n));
}

// Dimensions of the face grid of component `comp` (0 = u, 1 = v, 2 = w).
fn face_dims(comp: u32, n: vec3<u32>) -> vec3<u32> {
    var d = n;
    d[comp] = d[comp] + 1u;
    return d;
}

fn face_index(c: vec3<i32>, d: vec3<u32>) -> u32 {
    return u32(c.x) + d.x * (u32(c.y) + d.y * u32(c.z));
}

fn unit(comp: u32) -> vec3<i32> {
    var e = vec3<i32>(0);
    e[comp] = 1;
    return e;
}

// Faces of all three components: the length of the buffers that hold u, v and w back to back.
fn num_faces(p: SimParams) -> u32 {
    return p.num_u + p.num_v + p.num_w;
}

// Splits a global face index over u, v, w into (component, local index).
fn split_face(g: u32, p: SimParams) -> vec2<u32> {
    if (g < p.num_u) { return vec2<u32>(0u, g); }
    if (g < p.num_u + p.num_v) { return vec2<u32>(1u, g - p.num_u); }
    return vec2<u32>(2u, g - p.num_u - p.num_v);
}

// A face decoded from its global index g over u, v, w (g < num_faces).
struct Face {
    comp: u32,        // 0 = u, 1 = v, 2 = w
    f: vec3<i32>,     // coordinates in the face grid of `comp`
    d: vec3<u32>,     // dimensions of that face grid
    off: u32,         // where component `comp` starts in the u, v, w buffers
};

fn face_of(g: u32, p: SimParams) -> Face {
    let cl = split_face(g, p);
    var r: Face;
    r.comp = cl.x;
    r.d = face_dims(cl.x, p.n);
    r.f = cell_coord_in(cl.y, r.d);
    r.off = face_offset(cl.x, p);
    return r;
}

// Trilinear stencil of component `comp` at position `x` (metres): the base node, the
// clamped next node and the fractions. Shared by P2G and G2P so both transfers use the
// exact same weights.
struct Stencil {
    base: vec3<i32>,
    next: vec3<i32>,
    f: vec3<f32>,
    // d(fraction)/dx per axis: 1/h, or 0 where x lies outside the nodes and the stencil
    // clamps it (the interpolant is constant there). Only APIC's gradients use it.
    slope: vec3<f32>,
};

fn stencil(comp: u32, x: vec3<f32>, p: SimParams) -> Stencil {
    var g = x * p.inv_h - vec3<f32>(0.5);
    g[comp] = x[comp] * p.inv_h;
    let d = vec3<i32>(face_dims(comp, p.n));
    let c = clamp(g, vec3<f32>(0.0), vec3<f32>(d - vec3<i32>(1)));
    let base = min(vec3<i32>(floor(c)), d - vec3<i32>(1));
    var s: Stencil;
    s.base = base;
    s.next = min(base + vec3<i32>(1), d - vec3<i32>(1));
    s.f = c - vec3<f32>(base);
    let inside = (g >= vec3<f32>(0.0)) & (g <= vec3<f32>(d - vec3<i32>(1)));
    s.slope = select(vec3<f32>(0.0), vec3<f32>(p.inv_h), inside);
    return s;
}

// Node `corner` (bits x, y, z) of a stencil and its weight.
fn stencil_node(s: Stencil, corner: u32) -> vec3<i32> {
    return select(s.base, s.next, vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u));
}

fn stencil_weight(s: Stencil, corner: u32) -> f32 {
    let hi = vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u);
    let w = select(vec3<f32>(1.0) - s.f, s.f, hi);
    return w.x * w.y * w.z;
}

// Gradient (1/m) of the weight of node `corner`: APIC's affine velocity is the sum of the
// face velocities times these, the gradient of exactly the field G2P interpolates.
fn stencil_weight_grad(s: Stencil, corner: u32) -> vec3<f32> {
    let hi = vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u);
    let w = select(vec3<f32>(1.0) - s.f, s.f, hi);
    let dw = select(-s.slope, s.slope, hi);
    return vec3<f32>(dw.x * w.y * w.z, w.x * dw.y * w.z, w.x * w.y * dw.z);
}

// Offset of component `comp` in the buffers that hold u, v and w back to back.
fn face_offset(comp: u32, p: SimParams) -> u32 {
    if (comp == 0u) { return 0u; }
    if (comp == 1u) { return p.num_u; }
    return p.num_u + p.num_v;
}

// The two cells on either side of face `f` of component `comp`: f - e_comp and f.
fn face_cells(comp: u32, f: vec3<i32>) -> array<vec3<i32>, 2> {
    return array<vec3<i32>, 2>(f - unit(comp), f);
}

// Coordinates of linear index `idx` in a grid of dimensions `d` (cells or faces).
fn cell_coord_in(idx: u32, d: vec3<u32>) -> vec3<i32> {
    return vec3<i32>(i32(idx % d.x), i32((idx / d.x) % d.y), i32(idx / (d.x * d.y)));
}
