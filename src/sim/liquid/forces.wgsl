//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Body forces: gravity on every face that touches a FLUID cell or received P2G weight
// (particles in cells below the FLUID density threshold fall ballistically).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read_write> grid_vel: array<f32>;
// A bit per face: whether P2G gave it weight (GridFields::weighted).
@group(0) @binding(3) var<storage, read> weighted: array<u32>;

fn has_weight(g: u32) -> bool {
    return ((weighted[g / 32u] >> (g % 32u)) & 1u) != 0u;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let comp = face.comp;
    let f = face.f;
    let cells = face_cells(comp, f);
    if (type_at(cells[0]) == FLUID || type_at(cells[1]) == FLUID || has_weight(g)) {
        grid_vel[g] = grid_vel[g] + params.gravity[comp] * params.dt;
    }
}
