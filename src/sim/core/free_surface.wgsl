// The liquid's free surface for the pressure solve (ghost fluid, Gibou et al. 2002).
// Include after cells.wgsl and after declaring `surface: array<f32>` (the filtered density
// written by mark_cells.wgsl). The liquid level set is phi = 0.5 - surface at cell centres
// (negative inside). Between a FLUID cell a and an AIR
// cell b the surface lies at the fraction theta = phi_a / (phi_a - phi_b) of the way from
// a's centre to b's, where p = 0 is imposed: the ghost pressure in b is p_a (1 - 1/theta),
// so the matrix diagonal gets 1/theta for that neighbour instead of 1 and the gradient
// across the face is -p_a / (theta h). theta = 1 (p = 0 at the AIR cell centre) when the
// level set does not cross between the two centres (or the FLUID cell's filtered density
// is below one half), e.g. on grids without a density
// (the smoke slice, synthetic benchmark problems).

// THETA_MIN, the smallest theta, keeps 1/theta, and the matrix's condition number, bounded
// when the surface passes right by a FLUID cell's centre.
// Across a planar surface the filtered density is a smooth step, not a ramp: linear
// interpolation between two cell centres misplaces the crossing by up to 0.022 cells
// (none when the surface is on a face or a centre). t - SURFACE_CURVE sin(2 pi t) removes
// most of it (fitted to the profile of the P2G kernel and the (1 2 1) filter; the rest is
// below 0.004 cells). (The values are in src/gpu/constants.rs.)
const TWO_PI: f32 = 6.2831853;

fn surface_theta(fluid: vec3<i32>, air: vec3<i32>) -> f32 {
    let pa = 0.5 - surface[cell_index(fluid, params.n)];
    let pb = 0.5 - surface[cell_index(air, params.n)];
    if (!(pb > pa) || pa > 0.0) { return 1.0; }
    let t = pa / (pa - pb);
    return clamp(t - SURFACE_CURVE * sin(TWO_PI * t), THETA_MIN, 1.0);
}
