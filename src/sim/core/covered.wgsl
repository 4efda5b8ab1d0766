// The solid's velocity on the covered part of a cut face. Include after open.wgsl and after
// declaring `solid: array<u32>` and `solid_vel: array<vec4<f32>>`.

// Component `comp` of the velocity of the static solid that covers part of face `f`: the
// mean over the face's cells that a solid holds (0 when neither does: a solid thinner than a
// cell, which is at rest).
fn covered_velocity(comp: u32, f: vec3<i32>) -> f32 {
    var cells = face_cells(comp, f);
    var s = 0.0;
    var n = 0.0;
    for (var i = 0u; i < 2u; i++) {
        let c = cells[i];
        if (in_grid(c, params.n) && solid[cell_index(c, params.n)] != 0u) {
            s += solid_vel[cell_index(c, params.n)][comp];
            n += 1.0;
        }
    }
    return select(0.0, s / n, n > 0.0);
}

// The flux velocity of a face of weight `w` (open.wgsl's `face_weight`): the fluid's
// velocity `u` on its open part and the solid's on the rest. A face of weight 0 (next to a
// SOLID cell, or closed whole) carries the solid's velocity in `u` already (boundary.wgsl).
fn flux_velocity(comp: u32, f: vec3<i32>, w: f32, u: f32) -> f32 {
    if (w == 0.0 || w == 1.0) { return u; }
    return w * u + (1.0 - w) * covered_velocity(comp, f);
}
