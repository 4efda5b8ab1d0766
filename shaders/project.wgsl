//!include prelude.wgsl
//!include cells.wgsl
// Subtract the pressure gradient: u -= (phi_b - phi_a) / h on faces between two non-SOLID
// cells with at least one FLUID (phi is 0 in AIR). Faces next to solids keep u_solid.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> phi: array<f32>;
@group(0) @binding(3) var<storage, read_write> grid_vel: array<f32>;

fn phi_at(c: vec3<i32>) -> f32 {
    if (type_at(c) != FLUID) { return 0.0; }
    return phi[cell_index(c, params.n)];
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= params.num_u + params.num_v + params.num_w) { return; }
    let cl = split_face(g, params);
    let comp = cl.x;
    let f = cell_coord_in(cl.y, face_dims(comp, params.n));
    let cells = face_cells(comp, f);
    let ta = type_at(cells[0]);
    let tb = type_at(cells[1]);
    if (ta == SOLID || tb == SOLID) { return; }
    if (ta != FLUID && tb != FLUID) { return; }
    grid_vel[g] = grid_vel[g] - (phi_at(cells[1]) - phi_at(cells[0])) * params.inv_h;
}
