//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Solid boundary condition u.n = u_solid.n: a face next to a SOLID cell (or the domain
// wall, a solid at rest) takes the solid's velocity component along the face normal, and so
// does a face the static solids close whole between two cells that are not SOLID (cut cells,
// open.wgsl). A face they cut only in part keeps the fluid's velocity: the divergence takes
// its covered part at the solid's (covered.wgsl).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<storage, read> solid_vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grid_vel: array<f32>;
@group(0) @binding(4) var<storage, read> open: array<f32>;
@group(0) @binding(5) var<storage, read> solid: array<u32>;
//!include sim/core/open.wgsl
//!include sim/core/covered.wgsl

fn solid_component(c: vec3<i32>, comp: u32) -> f32 {
    if (!in_grid(c, params.n)) { return 0.0; }
    return solid_vel[cell_index(c, params.n)][comp];
}

fn solid_vel_w(c: vec3<i32>) -> f32 {
    if (!in_grid(c, params.n)) { return 0.0; }
    return solid_vel[cell_index(c, params.n)].w;
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
    let sa = type_at(cells[0]) == SOLID;
    let sb = type_at(cells[1]) == SOLID;
    if (sa && sb) {
        grid_vel[g] = 0.5 * (solid_component(cells[0], comp) + solid_component(cells[1], comp));
    } else if (sa || sb) {
        // The SOLID cell's velocity; where the other cell carries the same rigid body's
        // (a body that cuts faces), their mean: the body's velocity at the face's centre.
        let s = select(1u, 0u, sa);
        let o = 1u - s;
        let ws = solid_vel_w(cells[s]);
        if (ws != 0.0 && solid_vel_w(cells[o]) == ws) {
            grid_vel[g] = 0.5 * (solid_component(cells[0], comp) + solid_component(cells[1], comp));
        } else {
            grid_vel[g] = solid_component(cells[s], comp);
        }
    } else if (face_open(g) == 0.0) {
        grid_vel[g] = covered_velocity(comp, f);
    }
}
