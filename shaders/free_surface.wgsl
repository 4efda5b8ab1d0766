// The liquid's free surface for the pressure solve (ghost fluid, Gibou et al. 2002).
// Include after cells.wgsl and after declaring `density: array<f32>` (written by
// mark_cells.wgsl). The liquid level set is phi = 0.5 - density at cell centres (negative
// inside; FLUID cells have phi <= 0 by their marking). Between a FLUID cell a and an AIR
// cell b the surface lies at the fraction theta = phi_a / (phi_a - phi_b) of the way from
// a's centre to b's, where p = 0 is imposed: the ghost pressure in b is p_a (1 - 1/theta),
// so the matrix diagonal gets 1/theta for that neighbour instead of 1 and the gradient
// across the face is -p_a / (theta h). theta = 1 (p = 0 at the AIR cell centre) when the
// level set does not cross between the two centres, e.g. on grids without a density
// (the smoke slice, synthetic benchmark problems).

// Smallest theta: keeps 1/theta, and the matrix's condition number, bounded when the
// surface passes right by a FLUID cell's centre.
const THETA_MIN: f32 = 0.05;

fn surface_theta(fluid: vec3<i32>, air: vec3<i32>) -> f32 {
    let pa = 0.5 - density[cell_index(fluid, params.n)];
    let pb = 0.5 - density[cell_index(air, params.n)];
    if (!(pb > pa) || pa > 0.0) { return 1.0; }
    return clamp(pa / (pa - pb), THETA_MIN, 1.0);
}
