//!include prelude.wgsl
//!include cells.wgsl
// Packed pressure matrix: per cell (diag, +x, +y, +z). diag counts non-SOLID neighbours
// (AIR neighbours are Dirichlet p = 0 and keep their diagonal contribution); an off-diagonal
// is -1 when the neighbour is FLUID. Rows of non-FLUID cells are zero.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read_write> a: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var row = vec4<f32>(0.0);
    if (cell_type[c] == FLUID) {
        let x = cell_coord(c, params.n);
        for (var comp = 0u; comp < 3u; comp++) {
            let e = unit(comp);
            let lo = type_at(x - e);
            let hi = type_at(x + e);
            if (lo != SOLID) { row.x += 1.0; }
            if (hi != SOLID) { row.x += 1.0; }
            if (hi == FLUID) { row[comp + 1u] = -1.0; }
        }
    }
    a[c] = row;
}
