//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Volume correction by a density projection (after Kugelstadt et al. 2019): a displacement
// d = grad(psi) with div d = e, e the density error rho - 1, moves particles from over-full
// cells into under-full ones; psi solves A psi = -h^2 e with the pressure matrix (psi = 0 on
// the free surface). Cells next to AIR are partly filled by nature, so there only excess
// density counts (e >= 0); inside the liquid both signs count, otherwise noise would only
// ever be corrected upward and the liquid would swell. Particles move; their velocities do
// not change.
// `rhs` writes b; the pressure solver solves for psi (in the `phi` buffer); `gradient`
// writes psi's gradient across every face once, and `displace` moves the particles by its
// trilinear interpolation (each particle reads 24 faces; computing the ghost-fluid
// gradient there instead cost 24 of them per particle).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> density: array<f32>;
@group(0) @binding(3) var<storage, read_write> b: array<f32>;   // PcgVectors::b
@group(0) @binding(4) var<storage, read> phi: array<f32>;
@group(0) @binding(5) var<storage, read> solid: array<u32>;
@group(0) @binding(6) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> surface: array<f32>;
// Faces, u v w back to back: the first half of P2G's accumulator buffer, idle between the
// end of P2G and the extrapolation (src/sim/core/fields.rs, `acc`).
@group(0) @binding(8) var<storage, read_write> grad: array<f32>;
@group(0) @binding(9) var<storage, read> open: array<f32>;
//!include sim/core/free_surface.wgsl
//!include sim/core/open.wgsl
// The surface holds this field at 0 (no surface tension's jump: ghost_gradient.wgsl).
fn surface_phi(fluid: vec3<i32>, air: vec3<i32>, theta: f32) -> f32 { return 0.0; }
//!include sim/core/ghost_gradient.wgsl

// MAX_EXCESS, the largest excess density corrected in one substep, and MAX_SHIFT, the largest
// move per axis (cells): a badly compacted layer relaxes over a few substeps instead of
// jumping. Density errors within TOLERATED of the rest density are left alone: they are the
// particles' sampling noise and the small compression of moving liquid, and correcting them
// every substep damps waves (the first sloshing mode keeps 72% of its amplitude per period
// with no band, 89% with 0.1, 95% with 0.2); the compaction that loses volume runs to 2-4x.
// (The values are in src/gpu/constants.rs.)

@compute @workgroup_size(WORKGROUP)
fn rhs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var bc = 0.0;
    // A cut cell (SOLID_PARTIAL) is FLUID for the solve but holds no particles: it has no
    // density to correct.
    if (cell_type[c] == FLUID && solid[c] != SOLID_PARTIAL) {
        let x = cell_coord(c, params.n);
        var lowest = -MAX_EXCESS;
        for (var comp = 0u; comp < 3u; comp++) {
            if (type_at(x - unit(comp)) == AIR || type_at(x + unit(comp)) == AIR) { lowest = 0.0; }
        }
        let e = density[c] - 1.0;
        let beyond = sign(e) * max(abs(e) - TOLERATED, 0.0);
        bc = -params.h * params.h * clamp(beyond, lowest, MAX_EXCESS);
    }
    b[c] = bc;
}

fn solid_at(x: vec3<f32>) -> bool {
    return solid[cell_index(cell_containing(x, params), params.n)] != 0u;
}

@compute @workgroup_size(WORKGROUP)
fn gradient(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    grad[g] = face_gradient(face.comp, face.f).y;
}

@compute @workgroup_size(WORKGROUP)
fn displace(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x0 = pos[id].xyz;
    var shift = vec3<f32>(0.0);
    for (var comp = 0u; comp < 3u; comp++) {
        let s = stencil(comp, x0, params);
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        for (var c = 0u; c < 8u; c++) {
            shift[comp] += stencil_weight(s, c) * grad[off + face_index(stencil_node(s, c), d)];
        }
    }
    let lim = MAX_SHIFT * params.h;
    shift = clamp(shift, vec3<f32>(-lim), vec3<f32>(lim));
    let m = 0.01 * params.h;
    let x = clamp(x0 + shift, vec3<f32>(m), vec3<f32>(params.n) * params.h - vec3<f32>(m));
    if (!solid_at(x)) {
        pos[id] = vec4<f32>(x, pos[id].w);
    }
}
