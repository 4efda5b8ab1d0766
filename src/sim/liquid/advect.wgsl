//!include sim/core/prelude.wgsl
// Particle advection through the grid velocity (RK2, midpoint), then the particle is kept
// inside the domain and out of SOLID cells: a move into a solid is undone axis by axis and
// the particle stops at the face it would cross, losing the velocity component into it.
// A rigid body's cut cell (SOLID_PARTIAL with the body's index in solid_vel's w) is no
// obstacle here: the liquid fills its open part, and the body's own push-out keeps the
// particles out of the body itself (src/sim/bodies/coupling.wgsl).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> solid: array<u32>;
@group(0) @binding(2) var<storage, read> grid_vel: array<f32>;
@group(0) @binding(3) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> solid_vel: array<vec4<f32>>;

fn sample_velocity(x: vec3<f32>) -> vec3<f32> {
    var u = vec3<f32>(0.0);
    for (var comp = 0u; comp < 3u; comp++) {
        let s = stencil(comp, x, params);
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        for (var c = 0u; c < 8u; c++) {
            u[comp] += stencil_weight(s, c) * grid_vel[off + face_index(stencil_node(s, c), d)];
        }
    }
    return u;
}

fn cell_of(x: vec3<f32>) -> vec3<i32> {
    return cell_containing(x, params);
}

fn is_solid(x: vec3<f32>) -> bool {
    let c = cell_index(cell_of(x), params.n);
    let s = solid[c];
    return s != 0u && !(s == SOLID_PARTIAL && solid_vel[c].w != 0.0);
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x0 = pos[id].xyz;
    var v = vel[id].xyz;
    let mid = x0 + 0.5 * params.dt * sample_velocity(x0);
    var x = x0 + params.dt * sample_velocity(mid);

    let m = 0.01 * params.h;
    let hi = vec3<f32>(params.n) * params.h - vec3<f32>(m);
    for (var a = 0u; a < 3u; a++) {
        if (x[a] < m || x[a] > hi[a]) {
            x[a] = clamp(x[a], m, hi[a]);
            v[a] = 0.0;
        }
    }
    if (is_solid(x) && !is_solid(x0)) {
        var p = x0;
        for (var a = 0u; a < 3u; a++) {
            var cand = p;
            cand[a] = x[a];
            if (is_solid(cand)) {
                let lo = f32(cell_of(p)[a]) * params.h;
                cand[a] = clamp(x[a], lo + m, lo + params.h - m);
                v[a] = 0.0;
            }
            p = cand;
        }
        x = p;
    }
    pos[id] = vec4<f32>(x, 0.0);
    vel[id] = vec4<f32>(v, 0.0);
}
