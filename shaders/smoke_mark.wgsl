//!include prelude.wgsl
// Smoke cell types: every cell is FLUID (smoke fills the box) except the static solids
// (scene solids and painted cells) and the moving obstacle, which are SOLID with the
// solid's velocity. Dye and temperature inside solids are cleared: smoke never enters them.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> static_solid: array<u32>;
@group(0) @binding(3) var<storage, read> static_vel: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> cell_type: array<u32>;
@group(0) @binding(5) var<storage, read_write> solid: array<u32>;
@group(0) @binding(6) var<storage, read_write> solid_vel: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>>;

//!include smoke_common.wgsl

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    let x = cell_centre(cell_coord(c, params.n));
    if (in_obstacle(x)) {
        cell_type[c] = SOLID;
        solid[c] = 1u;
        solid_vel[c] = vec4<f32>(smoke.obstacle_vel.xyz, 0.0);
        dye[c] = vec4<f32>(0.0);
    } else if (static_solid[c] != 0u) {
        cell_type[c] = SOLID;
        solid[c] = 1u;
        solid_vel[c] = static_vel[c];
        dye[c] = vec4<f32>(0.0);
    } else {
        cell_type[c] = FLUID;
        solid[c] = 0u;
        solid_vel[c] = vec4<f32>(0.0);
        atomicAdd(&counters[COUNTER_FLUID_CELLS], 1u);
    }
}
