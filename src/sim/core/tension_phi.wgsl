// The pressure unknown phi = p dt / rho at the free surface with surface tension: the
// jump sigma kappa there, kappa interpolated between the FLUID cell's curvature and the AIR
// cell's at the fraction theta of the way where the level set crosses (Enright, Nguyen,
// Fedkiw & Osher 2003; Hong & Kim 2005). Include after declaring `curvature: array<f32>`
// (written by tension.wgsl); 0 where the scene has no surface tension.
fn surface_phi(fluid: vec3<i32>, air: vec3<i32>, theta: f32) -> f32 {
    if (params.surface_tension == 0.0) { return 0.0; }
    let ka = curvature[cell_index(fluid, params.n)];
    let kb = curvature[cell_index(air, params.n)];
    return params.surface_tension * params.dt * mix(ka, kb, theta);
}
