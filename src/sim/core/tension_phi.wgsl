// The pressure unknown phi = p dt / rho at the free surface with surface tension: the
// jump sigma kappa there, kappa interpolated between the FLUID cell's curvature and the AIR
// cell's at the fraction theta of the way where the level set crosses (Enright, Nguyen,
// Fedkiw & Osher 2003; Hong & Kim 2005). Include after declaring `curvature: array<f32>`
// (written by tension.wgsl); 0 where the scene has no surface tension.
// No branch on the uniform: lavapipe 22.3 grows host memory by about 0.2 MB a substep
// for one in the projection. A scene without surface tension binds a one-word placeholder
// holding 0: the index is clamped to it, and sigma = 0 times 0 is +0, which the ghost
// gradient's -(pa - s) turns into -pa bit for bit.
fn tension_curvature(c: vec3<i32>) -> f32 {
    return curvature[min(cell_index(c, params.n), arrayLength(&curvature) - 1u)];
}
fn surface_phi(fluid: vec3<i32>, air: vec3<i32>, theta: f32) -> f32 {
    let k = mix(tension_curvature(fluid), tension_curvature(air), theta);
    return params.surface_tension * params.dt * k;
}
