//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
//!include sim/core/open.wgsl
// Cell classification and the liquid's density. Per cell, the relative density is the mean
// P2G weight of its six faces over the rest weight, where a face against a solid or the
// domain wall counts twice (particles fill only the fluid side of its stencil, so at rest
// it collects half the weight of an interior face). SOLID where the scene's solids are;
// FLUID where a particle lies and the density reaches params.fluid_weight (one half: the
// cell centre is inside the liquid, see FLUID_DENSITY_FRACTION in src/gpu/constants.rs); AIR
// elsewhere. Also counts FLUID cells and their density error for the stats.
// A cell the static solids only cut (solid SOLID_PARTIAL, src/scene/fractions.rs) is AIR
// here with density 0: the particles never enter it. `cut_cells` then makes it FLUID when a
// FLUID cell lies across one of its open faces, so the solve reaches the solid's surface
// through it instead of meeting a free surface there; it is not counted as liquid.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> solid: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// P2G's fixed-point (momentum, weight) sums per face (GridFields::acc), as P2G left them.
@group(0) @binding(5) var<storage, read> acc: array<i32>;
@group(0) @binding(6) var<storage, read_write> density: array<f32>;
@group(0) @binding(7) var<storage, read_write> surface: array<f32>;
@group(0) @binding(8) var<storage, read> open: array<f32>;

fn walled(x: vec3<i32>) -> bool {
    return !in_grid(x, params.n) || solid[cell_index(x, params.n)] != 0u;
}

// A face's P2G weight, as `normalize` in p2g.wgsl computes it.
fn weight(f: u32) -> f32 {
    return f32(acc[2u * f + 1u]) / WEIGHT_SCALE;
}

fn relative_density(c: u32) -> f32 {
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        let e = unit(comp);
        s += weight(off + face_index(x, d)) * select(1.0, 2.0, walled(x - e));
        s += weight(off + face_index(x + e, d)) * select(1.0, 2.0, walled(x + e));
    }
    return s / (6.0 * params.rest_weight);
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var t = AIR;
    var rho = 0.0;
    if (solid[c] == SOLID_PARTIAL) {
        t = AIR;
    } else if (solid[c] != 0u) {
        t = SOLID;
    } else {
        rho = relative_density(c);
        if (count[c] > 0u && rho >= params.fluid_weight) {
            t = FLUID;
            let err = abs(rho - 1.0);
            atomicAdd(&counters[COUNTER_FLUID_CELLS], 1u);
            atomicMax(&counters[COUNTER_DENSITY_ERROR_MAX], bitcast<u32>(err));
            // In 1/DENSITY_ERROR_SCALE; the clamp bounds the sum (src/gpu/constants.rs).
            atomicAdd(&counters[COUNTER_DENSITY_ERROR_SUM],
                      u32(round(min(err, DENSITY_ERROR_CLAMP) * DENSITY_ERROR_SCALE)));
        }
    }
    cell_type[c] = t;
    density[c] = rho;
}

// `filter_density`: the density the free surface is read from (free_surface.wgsl): `density` filtered with
// weights (1 2 1)/4 along each axis over the non-SOLID cells of the 3x3x3 block. The filter
// keeps a planar surface where it is (it is symmetric and exact for linear profiles) and
// cuts the particles' sampling noise, which would otherwise shift the surface by a few
// hundredths of a cell from column to column. Runs after `main`.
@compute @workgroup_size(WORKGROUP)
fn filter_density(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (solid[c] != 0u) {
        surface[c] = 0.0;
        return;
    }
    let x = cell_coord(c, params.n);
    var sum = 0.0;
    var wsum = 0.0;
    for (var o = 0u; o < 27u; o++) {
        let d = vec3<i32>(i32(o % 3u), i32((o / 3u) % 3u), i32(o / 9u)) - vec3<i32>(1);
        let y = x + d;
        if (walled(y)) { continue; }
        let w = f32((2 - abs(d.x)) * (2 - abs(d.y)) * (2 - abs(d.z)));
        sum += w * density[cell_index(y, params.n)];
        wsum += w;
    }
    surface[c] = sum / wsum;
}

// Cut cells next to the liquid through an open face become FLUID. Only cells the particles
// mark (solid 0) are read, so the result does not depend on the order cells run in. Runs
// after `main`, only in scenes with cut faces.
@compute @workgroup_size(WORKGROUP)
fn cut_cells(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells || solid[c] != SOLID_PARTIAL) { return; }
    let x = cell_coord(c, params.n);
    var wet = false;
    for (var comp = 0u; comp < 3u; comp++) {
        for (var up = 0u; up < 2u; up++) {
            let nb = select(x - unit(comp), x + unit(comp), up == 1u);
            if (!in_grid(nb, params.n)) { continue; }
            let nc = cell_index(nb, params.n);
            let g = cell_face(x, comp, up == 1u);
            if (solid[nc] == 0u && cell_type[nc] == FLUID && face_open(g) > 0.0) { wet = true; }
        }
    }
    if (wet) { cell_type[c] = FLUID; }
}
