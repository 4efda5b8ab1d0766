//!include sim/core/prelude.wgsl
// Velocity divergence of FLUID cells and the pressure right-hand side.
// We solve A phi = b for phi = p*dt/rho (m^2/s) with A in "neighbour count" form, so
// b = -h^2 div(u). `after` measures what is left once the pressure gradient is subtracted.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> grid_vel: array<f32>;
@group(0) @binding(3) var<storage, read_write> divergence: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;   // PcgVectors::b
@group(0) @binding(5) var<storage, read_write> div_after: array<f32>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;

fn cell_divergence(c: u32) -> f32 {
    let x = cell_coord(c, params.n);
    var flux = 0.0;
    for (var comp = 0u; comp < 3u; comp++) {
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        flux += grid_vel[off + face_index(x + unit(comp), d)] - grid_vel[off + face_index(x, d)];
    }
    return flux * params.inv_h;
}

@compute @workgroup_size(WORKGROUP)
fn before(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var div = 0.0;
    if (cell_type[c] == FLUID) { div = cell_divergence(c); }
    divergence[c] = div;
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
    div_after[c] = div;
    atomicMax(&counters[COUNTER_MAX_DIVERGENCE], bitcast<u32>(abs(div)));
}
