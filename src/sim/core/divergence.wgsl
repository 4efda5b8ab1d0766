//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Velocity divergence of FLUID cells and the pressure right-hand side.
// We solve A phi = b for phi = p*dt/rho (m^2/s) with A in "neighbour count" form, so
// b = -h^2 div(u). `after` measures what is left once the pressure gradient is subtracted.
// A face the static solids cut carries the fluid's velocity on its open part and the solid's
// on the rest (covered.wgsl): the divergence of the cut cell's fluid part.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> grid_vel: array<f32>;
// The views' copies of the divergence before and after (GridFields::divergence, div_after):
// placeholders, left alone past their length, unless a reader keeps them.
@group(0) @binding(3) var<storage, read_write> divergence: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;   // PcgVectors::b
@group(0) @binding(5) var<storage, read_write> div_after: array<f32>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> open: array<f32>;
@group(0) @binding(8) var<storage, read> solid: array<u32>;
@group(0) @binding(9) var<storage, read> solid_vel: array<vec4<f32>>;
//!include sim/core/open.wgsl
//!include sim/core/covered.wgsl

fn cell_divergence(c: u32) -> f32 {
    let x = cell_coord(c, params.n);
    var flux = 0.0;
    var open_sum = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let up = x + unit(comp);
        let hi = cell_face(x, comp, true);
        let lo = cell_face(x, comp, false);
        let w_hi = face_weight(comp, up, hi);
        let w_lo = face_weight(comp, x, lo);
        flux += flux_velocity(comp, up, w_hi, grid_vel[hi]) - flux_velocity(comp, x, w_lo, grid_vel[lo]);
        open_sum += w_hi + w_lo;
    }
    // A FLUID cell no face opens onto has no row in A (nothing can change its divergence).
    if (open_sum == 0.0) { return 0.0; }
    return flux * params.inv_h;
}

@compute @workgroup_size(WORKGROUP)
fn before(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var div = 0.0;
    if (cell_type[c] == FLUID) { div = cell_divergence(c); }
    if (c < arrayLength(&divergence)) { divergence[c] = div; }
    b[c] = -params.h * params.h * div;
}

// Max |div| over FLUID cells goes to counters[COUNTER_MAX_DIVERGENCE] as f32 bits (non-negative floats order
// like their bit patterns, so an integer max is exact and order-independent).
@compute @workgroup_size(WORKGROUP)
fn after(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var div = 0.0;
    if (cell_type[c] == FLUID) { div = cell_divergence(c); }
    if (c < arrayLength(&div_after)) { div_after[c] = div; }
    atomicMax(&counters[COUNTER_MAX_DIVERGENCE], bitcast<u32>(abs(div)));
}
