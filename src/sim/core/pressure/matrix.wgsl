//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Packed pressure matrix: per cell (diag, +x, +y, +z). Each face of a FLUID cell that is not
// SOLID on its far side adds its weight w (open.wgsl: 1, or the open fraction of a face the
// static solids cut) to the diagonal, an AIR neighbour with w/theta (ghost-fluid free surface,
// free_surface.wgsl); an off-diagonal is -w when the neighbour is FLUID. Rows of non-FLUID
// cells are zero.
// Also sums w (theta - 1/2) over FLUID-AIR faces (COUNTER_SURFACE_VOLUME, signed, in
// 1/SURFACE_VOLUME_SCALE of a cell): how
// far the liquid reaches past the FLUID cells' faces, so FLUID cells plus this sum is the
// volume inside the free surface the solve sees. A cut cell (SOLID_PARTIAL) holds no
// particles and is not counted as liquid, so its faces are not either.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> surface: array<f32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> open: array<f32>;
@group(0) @binding(6) var<storage, read> solid: array<u32>;

//!include sim/core/free_surface.wgsl
//!include sim/core/open.wgsl

// The diagonal's share of the face between FLUID cell x and its neighbour nb, of weight w.
fn neighbour_diag(x: vec3<i32>, nb: vec3<i32>, w: f32, counted: bool) -> f32 {
    let t = type_at(nb);
    if (t == SOLID || w == 0.0) { return 0.0; }
    if (t == AIR) {
        let theta = surface_theta(x, nb);
        if (counted) {
            // Two's complement: adding the bits of a negative i32 subtracts.
            atomicAdd(&counters[COUNTER_SURFACE_VOLUME], bitcast<u32>(i32(round(w * (theta - 0.5) * SURFACE_VOLUME_SCALE))));
        }
        return w / theta;
    }
    return w;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    var row = vec4<f32>(0.0);
    if (cell_type[c] == FLUID) {
        let x = cell_coord(c, params.n);
        let counted = solid[c] != SOLID_PARTIAL;
        for (var comp = 0u; comp < 3u; comp++) {
            let e = unit(comp);
            let lo = face_weight(comp, x, cell_face(x, comp, false));
            let hi = face_weight(comp, x + e, cell_face(x, comp, true));
            row.x += neighbour_diag(x, x - e, lo, counted) + neighbour_diag(x, x + e, hi, counted);
            if (type_at(x + e) == FLUID) { row[comp + 1u] = -hi; }
        }
    }
    a[c] = row;
}
