//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Surface tension (src/sim/core/tension.rs). `curvature`: the mean curvature of the level
// set the pressure solve sees, phi = 0.5 - surface (negative in the liquid), at every cell
// centre: kappa = div(grad phi / |grad phi|), from second-order central differences of phi
// over the 3x3x3 neighbourhood (outside the grid phi is extended by its nearest cell, so
// the level set meets a wall square on), clamped to 1/h, the largest the grid resolves;
// a sphere of radius R reads 2/R, a disc in the slice 1/R. `jump`: the right-hand side's
// share of the surface's Dirichlet value, w phi_s / theta over each FLUID cell's faces to
// AIR (the matrix took w / theta for them, matrix.wgsl), phi_s = sigma kappa dt / rho
// (tension_phi.wgsl). Run after the divergence wrote b.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> surface: array<f32>;
@group(0) @binding(3) var<storage, read_write> curvature: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;
@group(0) @binding(5) var<storage, read> open: array<f32>;
//!include sim/core/free_surface.wgsl
//!include sim/core/open.wgsl
//!include sim/core/tension_phi.wgsl

fn level(x: vec3<i32>) -> f32 {
    let c = clamp(x, vec3<i32>(0), vec3<i32>(params.n) - vec3<i32>(1));
    return 0.5 - surface[cell_index(c, params.n)];
}

@compute @workgroup_size(WORKGROUP)
fn mean_curvature(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let x = cell_coord(c, params.n);
    let ex = vec3<i32>(1, 0, 0);
    let ey = vec3<i32>(0, 1, 0);
    let ez = vec3<i32>(0, 0, 1);
    let p0 = level(x);
    // First and second differences, in units of the cell.
    let px = 0.5 * (level(x + ex) - level(x - ex));
    let py = 0.5 * (level(x + ey) - level(x - ey));
    let pz = 0.5 * (level(x + ez) - level(x - ez));
    let pxx = level(x + ex) - 2.0 * p0 + level(x - ex);
    let pyy = level(x + ey) - 2.0 * p0 + level(x - ey);
    let pzz = level(x + ez) - 2.0 * p0 + level(x - ez);
    let pxy = 0.25 * (level(x + ex + ey) - level(x + ex - ey) - level(x - ex + ey) + level(x - ex - ey));
    let pxz = 0.25 * (level(x + ex + ez) - level(x + ex - ez) - level(x - ex + ez) + level(x - ex - ez));
    let pyz = 0.25 * (level(x + ey + ez) - level(x + ey - ez) - level(x - ey + ez) + level(x - ey - ez));
    let g2 = px * px + py * py + pz * pz;
    var kappa = 0.0;
    if (g2 > TENSION_MIN_GRADIENT * TENSION_MIN_GRADIENT) {
        let num = pxx * (py * py + pz * pz) + pyy * (px * px + pz * pz) + pzz * (px * px + py * py)
            - 2.0 * (px * py * pxy + px * pz * pxz + py * pz * pyz);
        kappa = clamp(num / (g2 * sqrt(g2)), -1.0, 1.0) * params.inv_h;
    }
    curvature[c] = kappa;
}

// The share of one face of FLUID cell x, toward neighbour nb with weight w.
fn face_jump(x: vec3<i32>, nb: vec3<i32>, w: f32) -> f32 {
    if (w == 0.0 || type_at(nb) != AIR) { return 0.0; }
    let theta = surface_theta(x, nb);
    return w * surface_phi(x, nb, theta) / theta;
}

@compute @workgroup_size(WORKGROUP)
fn jump(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || cell_type[c] != FLUID) { return; }
    let x = cell_coord(c, params.n);
    var sum = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let e = unit(comp);
        let lo = face_weight(comp, x, cell_face(x, comp, false));
        let hi = face_weight(comp, x + e, cell_face(x, comp, true));
        sum += face_jump(x, x - e, lo) + face_jump(x, x + e, hi);
    }
    b[c] = b[c] + sum;
}
