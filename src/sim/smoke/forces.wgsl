//!include sim/core/prelude.wgsl
// Smoke body forces: Boussinesq buoyancy and vorticity confinement (Fedkiw et al. 2001),
// computed at cell centres and averaged onto the faces between two non-SOLID cells.
//   omega = curl u (central differences of cell-centred velocities),
//   N = grad|omega| / |grad|omega||,  f_conf = epsilon h (N x omega),
//   f_buoy = up (buoyancy (T - ambient) - dye_weight * mean(dye rgb)).
// Differences use the neighbours inside the grid (one-sided at the walls); along an axis
// with a single cell (the smoke slice's z) every derivative is zero.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read_write> vel: array<f32>;
@group(0) @binding(4) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> curl: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> force: array<vec4<f32>>;

//!include sim/smoke/common.wgsl
//!include sim/core/cells.wgsl

fn centre_velocity(c: vec3<i32>) -> vec3<f32> {
    var u = vec3<f32>(0.0);
    for (var comp = 0u; comp < 3u; comp++) {
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        u[comp] = 0.5 * (vel[off + face_index(c, d)] + vel[off + face_index(c + unit(comp), d)]);
    }
    return u;
}

// Neighbours of c along `axis`, clamped into the grid.
fn neighbours(c: vec3<i32>, axis: u32) -> array<vec3<i32>, 2> {
    var lo = c;
    var hi = c;
    lo[axis] = max(c[axis] - 1, 0);
    hi[axis] = min(c[axis] + 1, i32(params.n[axis]) - 1);
    return array<vec3<i32>, 2>(lo, hi);
}

fn span(nb: array<vec3<i32>, 2>, axis: u32) -> f32 {
    return f32(nb[1][axis] - nb[0][axis]) * params.h;
}

// d u_comp / d x_axis at cell c.
fn dvel(c: vec3<i32>, comp: u32, axis: u32) -> f32 {
    let nb = neighbours(c, axis);
    let s = span(nb, axis);
    if (s <= 0.0) { return 0.0; }
    return (centre_velocity(nb[1])[comp] - centre_velocity(nb[0])[comp]) / s;
}

@compute @workgroup_size(WORKGROUP)
fn vorticity(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= params.num_cells) { return; }
    if (cell_type[i] == SOLID) {
        curl[i] = vec4<f32>(0.0);
        return;
    }
    let c = cell_coord(i, params.n);
    let w = vec3<f32>(
        dvel(c, 2u, 1u) - dvel(c, 1u, 2u),
        dvel(c, 0u, 2u) - dvel(c, 2u, 0u),
        dvel(c, 1u, 0u) - dvel(c, 0u, 1u));
    curl[i] = vec4<f32>(w, length(w));
}

@compute @workgroup_size(WORKGROUP)
fn cell_forces(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= params.num_cells) { return; }
    if (cell_type[i] == SOLID) {
        force[i] = vec4<f32>(0.0);
        return;
    }
    let c = cell_coord(i, params.n);
    var eta = vec3<f32>(0.0);
    for (var a = 0u; a < 3u; a++) {
        let nb = neighbours(c, a);
        let s = span(nb, a);
        if (s > 0.0) {
            eta[a] = (curl[cell_index(nb[1], params.n)].w - curl[cell_index(nb[0], params.n)].w) / s;
        }
    }
    var f = vec3<f32>(0.0);
    let len = length(eta);
    // Below this gradient (1/s per cell) the direction N is noise; leave the flow alone.
    if (smoke.vorticity > 0.0 && len * params.h > 1e-6) {
        f = smoke.vorticity * params.h * cross(eta / len, curl[i].xyz);
    }
    let q = dye[i];
    let b = smoke.buoyancy * (q.w - smoke.ambient) - smoke.dye_weight * (q.x + q.y + q.z) / 3.0;
    f += b * smoke.up.xyz;
    force[i] = vec4<f32>(f, 0.0);
}

@compute @workgroup_size(WORKGROUP)
fn apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let comp = face.comp;
    let f = face.f;
    let cs = face_cells(comp, f);
    if (type_at(cs[0]) == SOLID || type_at(cs[1]) == SOLID) { return; }
    let fa = force[cell_index(cs[0], params.n)][comp];
    let fb = force[cell_index(cs[1], params.n)][comp];
    vel[g] = vel[g] + params.dt * 0.5 * (fa + fb);
}
