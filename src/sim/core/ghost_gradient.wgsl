// Pressure gradients across faces with the ghost-fluid free surface. Include after
// free_surface.wgsl and open.wgsl, after declaring `phi: array<f32>`, and after defining
// `surface_phi(fluid, air, theta) -> f32`, phi's value on the surface between a FLUID and
// an AIR cell: the projection's is surface tension's jump (tension_phi.wgsl), the other
// fields solved with the same matrix take 0 there.

// Gradient of `phi` (the pressure unknown or any field solved with the same matrix) across
// face `f` of component `comp`, (phi_b - phi_a) / h, with ghost values in AIR. x = 1 when
// the face carries a gradient (both sides non-SOLID, at least one FLUID, and the static
// solids leave some of it open), else 0.
fn face_gradient(comp: u32, f: vec3<i32>) -> vec2<f32> {
    let cells = face_cells(comp, f);
    let ta = type_at(cells[0]);
    let tb = type_at(cells[1]);
    if (ta == SOLID || tb == SOLID || (ta != FLUID && tb != FLUID)) { return vec2<f32>(0.0); }
    if (face_open(face_slot(comp, f)) == 0.0) {
        return vec2<f32>(0.0);
    }
    if (ta == FLUID && tb == FLUID) {
        let pa = phi[cell_index(cells[0], params.n)];
        let pb = phi[cell_index(cells[1], params.n)];
        return vec2<f32>(1.0, (pb - pa) * params.inv_h);
    }
    if (ta == FLUID) {
        let pa = phi[cell_index(cells[0], params.n)];
        let theta = surface_theta(cells[0], cells[1]);
        // -(pa - s), not s - pa: the same bits as -pa where s is 0 (the sign of a zero kept).
        return vec2<f32>(1.0, -(pa - surface_phi(cells[0], cells[1], theta)) / theta * params.inv_h);
    }
    let pb = phi[cell_index(cells[1], params.n)];
    let theta = surface_theta(cells[1], cells[0]);
    return vec2<f32>(1.0, (pb - surface_phi(cells[1], cells[0], theta)) / theta * params.inv_h);
}
