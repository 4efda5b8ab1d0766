//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Surface tension (src/sim/core/tension.rs). `curvature`: the mean curvature of the level
// set the pressure solve sees, phi = 0.5 - surface (negative in the liquid), at every cell
// centre: from the height function of the density's columns along the gradient's largest
// axis where they hold the whole step, unblurred by TENSION_SPREAD; elsewhere
// div(grad phi / |grad phi|) from second-order central differences over the 3x3x3
// neighbourhood. Outside the grid the density is mirrored across the wall, so the surface
// meets a wall square on. Clamped to 1/h, the largest the grid resolves; a sphere
// of radius R reads 2/R, a disc in the slice 1/R. `jump`: the right-hand side's
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

// x mirrored into the grid across its walls (-1 reads 0, -2 reads 1, n reads n - 1): the
// level set and the heights meet a wall square on, as a free-slip wall's contact at 90
// degrees holds them, and a wave's crest at the wall stays smooth.
fn mirrored(x: vec3<i32>) -> vec3<i32> {
    let n = vec3<i32>(params.n);
    let m = select(x, -vec3<i32>(1) - x, x < vec3<i32>(0));
    return clamp(select(m, 2 * n - vec3<i32>(1) - m, m >= n), vec3<i32>(0), n - vec3<i32>(1));
}

fn level(x: vec3<i32>) -> f32 {
    let c = mirrored(x);
    return 0.5 - surface[cell_index(c, params.n)];
}

// The liquid's share of a cell for the height function: the filtered density clamped to
// [0, 1], mirrored outside the grid.
fn filled(x: vec3<i32>) -> f32 {
    let c = mirrored(x);
    return clamp(surface[cell_index(c, params.n)], 0.0, 1.0);
}

// The liquid in the column of 2 TENSION_REACH + 1 cells along `e` centred on x, in cells;
// -1 when the column does not hold the whole surface (its end toward -up less than
// TENSION_FULL full, or its end toward +up more than 1 - TENSION_FULL).
fn column(x: vec3<i32>, e: vec3<i32>, up: i32) -> f32 {
    let reach = i32(TENSION_REACH);
    let liquid_end = filled(x - (reach * up) * e);
    let air_end = filled(x + (reach * up) * e);
    if (liquid_end < TENSION_FULL || air_end > 1.0 - TENSION_FULL) { return -1.0; }
    var sum = 0.0;
    for (var k = -reach; k <= reach; k++) {
        sum += filled(x + k * e);
    }
    return sum;
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
    // First differences, in units of the cell.
    let px = 0.5 * (level(x + ex) - level(x - ex));
    let py = 0.5 * (level(x + ey) - level(x - ey));
    let pz = 0.5 * (level(x + ez) - level(x - ez));
    let g2 = px * px + py * py + pz * pz;
    if (g2 <= TENSION_MIN_GRADIENT * TENSION_MIN_GRADIENT) {
        curvature[c] = 0.0;
        return;
    }
    // The height function: columns along the axis the level set's gradient leans on most,
    // 5x5 of them around x less the corners; the surface is the graph x_a = H(x_b, x_c) of
    // their liquid heights, unblurred (TENSION_SPREAD) on the 3x3 around x, and
    // kappa = -div(grad H / sqrt(1 + |grad H|^2)), whichever side the liquid is.
    let g = vec3<f32>(px, py, pz);
    var a = 0u;
    if (abs(g.y) > abs(g[a])) { a = 1u; }
    if (abs(g.z) > abs(g[a])) { a = 2u; }
    let ea = unit(a);
    let eb = unit((a + 1u) % 3u);
    let ec = unit((a + 2u) % 3u);
    let up = select(-1, 1, g[a] > 0.0);
    // The cell's own column first: the heights belong to this cell only when it holds the
    // whole step and puts the surface within a cell of the centre (further out the columns
    // cut the step's tails). Then the others, stopping at the first that is not whole.
    var blurred: array<f32, 25>;
    blurred[12] = column(x, ea, up);
    var whole = blurred[12] >= 0.0 && abs(blurred[12] - f32(TENSION_REACH) - 0.5) <= 1.0;
    for (var k = 0; k < 25 && whole; k++) {
        let i = k % 5 - 2;
        let j = k / 5 - 2;
        if (k == 12 || (abs(i) == 2 && abs(j) == 2)) { continue; }
        blurred[k] = column(x + i * eb + j * ec, ea, up);
        whole = blurred[k] >= 0.0;
    }
    if (whole) {
        var hs: array<f32, 9>;
        for (var j = -1; j <= 1; j++) {
            for (var i = -1; i <= 1; i++) {
                let k = 5 * (j + 2) + i + 2;
                let lap = blurred[k - 1] + blurred[k + 1] + blurred[k - 5] + blurred[k + 5]
                    - 4.0 * blurred[k];
                hs[3 * (j + 1) + i + 1] = blurred[k] - TENSION_SPREAD * lap;
            }
        }
        let hb = 0.5 * (hs[5] - hs[3]);
        let hc = 0.5 * (hs[7] - hs[1]);
        let hbb = hs[5] - 2.0 * hs[4] + hs[3];
        let hcc = hs[7] - 2.0 * hs[4] + hs[1];
        let hbc = 0.25 * (hs[8] - hs[6] - hs[2] + hs[0]);
        let q = 1.0 + hb * hb + hc * hc;
        let kappa = -(hbb * (1.0 + hc * hc) + hcc * (1.0 + hb * hb) - 2.0 * hbc * hb * hc)
            / (q * sqrt(q));
        curvature[c] = clamp(kappa, -1.0, 1.0) * params.inv_h;
    } else {
        // No whole columns (a thin sheet, a corner, a cell far from the surface):
        // div(grad phi / |grad phi|) from second differences.
        let pxx = level(x + ex) - 2.0 * p0 + level(x - ex);
        let pyy = level(x + ey) - 2.0 * p0 + level(x - ey);
        let pzz = level(x + ez) - 2.0 * p0 + level(x - ez);
        let pxy = 0.25 * (level(x + ex + ey) - level(x + ex - ey) - level(x - ex + ey) + level(x - ex - ey));
        let pxz = 0.25 * (level(x + ex + ez) - level(x + ex - ez) - level(x - ex + ez) + level(x - ex - ez));
        let pyz = 0.25 * (level(x + ey + ez) - level(x + ey - ez) - level(x - ey + ez) + level(x - ey - ez));
        let num = pxx * (py * py + pz * pz) + pyy * (px * px + pz * pz) + pzz * (px * px + py * py)
            - 2.0 * (px * py * pxy + px * pz * pxz + py * pz * pyz);
        curvature[c] = clamp(num / (g2 * sqrt(g2)), -1.0, 1.0) * params.inv_h;
    }
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
