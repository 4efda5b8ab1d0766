//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Subtract the pressure gradient: u -= (phi_b - phi_a) / h on faces between two non-SOLID
// cells with at least one FLUID, with the ghost-fluid value in AIR (free_surface.wgsl).
// Faces next to solids, and faces the static solids close whole, keep u_solid; a cut face
// takes the whole gradient on its open part (open.wgsl).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> phi: array<f32>;
@group(0) @binding(3) var<storage, read_write> grid_vel: array<f32>;
@group(0) @binding(4) var<storage, read> surface: array<f32>;
@group(0) @binding(5) var<storage, read> open: array<f32>;
@group(0) @binding(6) var<storage, read> curvature: array<f32>;
//!include sim/core/free_surface.wgsl
//!include sim/core/open.wgsl
//!include sim/core/tension_phi.wgsl
//!include sim/core/ghost_gradient.wgsl

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let grad = face_gradient(face.comp, face.f);
    if (grad.x != 0.0) {
        grid_vel[g] = grid_vel[g] - grad.y;
    }
}
