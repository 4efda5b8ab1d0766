//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Packed pressure matrix: per cell (diag, +x, +y, +z). diag counts non-SOLID neighbours,
// an AIR neighbour with 1/theta (ghost-fluid free surface, free_surface.wgsl); an
// off-diagonal is -1 when the neighbour is FLUID. Rows of non-FLUID cells are zero.
// Also sums theta - 1/2 over FLUID-AIR faces (COUNTER_SURFACE_VOLUME, signed, in
// 1/SURFACE_VOLUME_SCALE of a cell): how
// far the liquid reaches past the FLUID cells' faces, so FLUID cells plus this sum is the
// volume inside the free surface the solve sees.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> surface: array<f32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;

//!include sim/core/free_surface.wgsl

fn neighbour_diag(x: vec3<i32>, nb: vec3<i32>) -> f32 {
    let t = type_at(nb);
    if (t == SOLID) { return 0.0; }
    if (t == AIR) {
        let theta = surface_theta(x, nb);
        // Two's complement: adding the bits of a negative i32 subtracts.
        atomicAdd(&counters[COUNTER_SURFACE_VOLUME], bitcast<u32>(i32(round((theta - 0.5) * SURFACE_VOLUME_SCALE))));
        return 1.0 / theta;
    }
    return 1.0;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var row = vec4<f32>(0.0);
    if (cell_type[c] == FLUID) {
        let x = cell_coord(c, params.n);
        for (var comp = 0u; comp < 3u; comp++) {
            let e = unit(comp);
            row.x += neighbour_diag(x, x - e) + neighbour_diag(x, x + e);
            if (type_at(x + e) == FLUID) { row[comp + 1u] = -1.0; }
        }
    }
    a[c] = row;
}
