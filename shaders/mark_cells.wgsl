//!include prelude.wgsl
// Cell classification and the liquid's density. Per cell, the relative density is the mean
// P2G weight of its six faces over the rest weight, where a face against a solid or the
// domain wall counts twice (particles fill only the fluid side of its stencil, so at rest
// it collects half the weight of an interior face). SOLID where the scene's solids are;
// FLUID where a particle lies and the density reaches params.fluid_weight (one half: the
// cell centre is inside the liquid, see FLUID_DENSITY_FRACTION in src/sim/params.rs); AIR
// elsewhere. Also counts FLUID cells and their density error for the stats.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> solid: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> weight: array<f32>;
@group(0) @binding(6) var<storage, read_write> density: array<f32>;

// Fixed-point scale of the summed |density - 1| (counters[5]); each cell adds at most
// DENSITY_ERROR_CLAMP * DENSITY_ERROR_SCALE = 256, so 2^24 FLUID cells fit in a u32.
const DENSITY_ERROR_SCALE: f32 = 64.0;
const DENSITY_ERROR_CLAMP: f32 = 4.0;

fn walled(x: vec3<i32>) -> bool {
    return !in_grid(x, params.n) || solid[cell_index(x, params.n)] != 0u;
}

fn relative_density(c: u32) -> f32 {
    let x = cell_coord(c, params.n);
    var s = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        let e = unit(comp);
        s += weight[off + face_index(x, d)] * select(1.0, 2.0, walled(x - e));
        s += weight[off + face_index(x + e, d)] * select(1.0, 2.0, walled(x + e));
    }
    return s / (6.0 * params.rest_weight);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var t = AIR;
    var rho = 0.0;
    if (solid[c] != 0u) {
        t = SOLID;
    } else {
        rho = relative_density(c);
        if (count[c] > 0u && rho >= params.fluid_weight) {
            t = FLUID;
            let err = abs(rho - 1.0);
            atomicAdd(&counters[0], 1u);
            atomicMax(&counters[4], bitcast<u32>(err));
            atomicAdd(&counters[5], u32(round(min(err, DENSITY_ERROR_CLAMP) * DENSITY_ERROR_SCALE)));
        }
    }
    cell_type[c] = t;
    density[c] = rho;
}
