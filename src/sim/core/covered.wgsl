// The solid's velocity on the covered part of a cut face. Include after open.wgsl and after
// declaring `solid: array<u32>` and `solid_vel: array<vec4<f32>>`.

// Whether cell `c` carries a solid's velocity: a solid's cell, or (the w of `solid_vel`, a
// rigid body's index + 1, src/sim/bodies/coupling.wgsl) a cell next to a face a body covers.
fn carries_solid(c: vec3<i32>) -> bool {
    if (!in_grid(c, params.n)) { return false; }
    let i = cell_index(c, params.n);
    return solid[i] != 0u || solid_vel[i].w != 0.0;
}

// Component `comp` of the velocity of the solid that covers part of face `f`: the mean over
// the face's cells that carry one (0 when neither does: a static solid thinner than a cell,
// which is at rest). A rigid body's velocity is affine in x, so where both cells carry it
// the mean is the body's velocity at the face's centre.
fn covered_velocity(comp: u32, f: vec3<i32>) -> f32 {
    var cells = face_cells(comp, f);
    var s = 0.0;
    var n = 0.0;
    for (var i = 0u; i < 2u; i++) {
        let c = cells[i];
        if (carries_solid(c)) {
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
