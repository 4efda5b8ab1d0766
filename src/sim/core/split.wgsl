//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// The viscosity step's incremental pressure correction (src/sim/core/split.rs says why; the
// f64 reference is src/reference/diffusion.rs, `pressure_shift`).
//
// The liquid (sp.delta 0): `keep`, after the projection: last = phi / dt = p / rho in FLUID
// cells, 0 elsewhere. `shift_in`, before the viscosity solve: on every face the solve takes
// as an unknown and the projection would move, u += dt (g - grad last), the body force and
// the last pressure's acceleration over this substep; `shift_out`, after it, takes the same
// amount off, so the projection that follows subtracts the whole new pressure gradient.
// The smoke (sp.delta 1): `mark` before the forces (delta = -u) and `close` after the
// projection (delta = (delta + u) / dt) keep the acceleration the forces (buoyancy,
// vorticity confinement) and the pressure gave each face in the last substep, and the
// shift is dt times it (substeps change length: a change kept as it was would be off by
// their ratio, and the frames' alternating substeps stirred a settling disc).

struct SplitParams {
    gravity: f32,          // 1: the mode's forces stage adds g on these faces (the liquid)
    covered: u32,          // 1 when `cover` holds the bodies' faces (diffusion.wgsl's)
    delta: u32,            // 1: the shift is `delta` (the smoke)
    pad: u32,
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> sp: SplitParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
// The last pressure over the density, m^2/s^2 (named phi for ghost_gradient.wgsl).
@group(0) @binding(3) var<storage, read_write> phi: array<f32>;
// The pressure solve's solution, phi = p dt / rho (m^2/s).
@group(0) @binding(4) var<storage, read> solved: array<f32>;
@group(0) @binding(5) var<storage, read_write> grid_vel: array<f32>;
@group(0) @binding(6) var<storage, read> surface: array<f32>;
@group(0) @binding(7) var<storage, read> open: array<f32>;
@group(0) @binding(8) var<storage, read> cover: array<u32>;
// The smoke's last acceleration of each face by the forces and the pressure, m/s^2.
@group(0) @binding(9) var<storage, read_write> delta: array<f32>;
// The level set's curvature (tension.wgsl), of the last pressure solve as `phi` is.
@group(0) @binding(10) var<storage, read> curvature: array<f32>;
//!include sim/core/free_surface.wgsl
//!include sim/core/open.wgsl
// The last pressure over the density on the surface: surface tension's jump sigma kappa /
// rho (ghost_gradient.wgsl), or 0. Without it the shift across the surface would be the
// jump's gradient over a fraction of a cell, and the viscosity would smear that into the
// liquid (a droplet at rest then stirred itself at 0.3 m/s and lost half its volume).
// (Branch-free, as tension_phi.wgsl says why.)
fn surface_phi(fluid: vec3<i32>, air: vec3<i32>, theta: f32) -> f32 {
    let n = arrayLength(&curvature) - 1u;
    let ka = curvature[min(cell_index(fluid, params.n), n)];
    let kb = curvature[min(cell_index(air, params.n), n)];
    return params.surface_tension * mix(ka, kb, theta);
}
//!include sim/core/ghost_gradient.wgsl

fn covers_on() -> bool {
    return sp.covered != 0u;
}
//!include sim/core/face_kinds.wgsl

@compute @workgroup_size(WORKGROUP)
fn keep(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = linear_id(wg, nwg, li);
    if (i >= params.num_cells) { return; }
    phi[i] = select(0.0, solved[i] / params.dt, cell_type[i] == FLUID);
}

// dt (g - grad last) on face g when the viscosity solves for it and the projection moves
// it, else 0.
fn shift(g: u32) -> f32 {
    let face = face_of(g, params);
    if (face_kind(face.comp, face.f) != UNKNOWN) { return 0.0; }
    if (sp.delta != 0u) { return params.dt * delta[g]; }
    let grad = face_gradient(face.comp, face.f);
    if (grad.x == 0.0) { return 0.0; }
    return params.dt * (sp.gravity * params.gravity[face.comp] - grad.y);
}

@compute @workgroup_size(WORKGROUP)
fn shift_in(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    grid_vel[g] = grid_vel[g] + shift(g);
}

@compute @workgroup_size(WORKGROUP)
fn shift_out(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    grid_vel[g] = grid_vel[g] - shift(g);
}

@compute @workgroup_size(WORKGROUP)
fn mark(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    delta[g] = -grid_vel[g];
}

@compute @workgroup_size(WORKGROUP)
fn close(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    delta[g] = (delta[g] + grid_vel[g]) / params.dt;
}
