//!include sim/core/prelude.wgsl
// Particle-to-grid: each particle adds w*v and w to the 8 stencil nodes of each velocity
// component with fixed-point integer atomics, so the sums do not depend on thread order
// (bitwise reproducible). `normalize` turns the sums into face velocities. With APIC the
// particle's velocity at a face is its affine field v + c . (x_face - x), c the row of its
// affine matrix for that component (Jiang et al. 2015).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> vel: array<vec4<f32>>;
// Two i32 per face (momentum, weight), faces of u, v, w back to back.
@group(0) @binding(3) var<storage, read_write> acc: array<atomic<i32>>;
@group(0) @binding(4) var<storage, read_write> count: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> grid_vel: array<f32>;
// The grid velocity after P2G, before forces (GridFields::vel_old): FLIP subtracts it.
@group(0) @binding(6) var<storage, read_write> vel_old: array<f32>;
// The weight sums for the views (GridFields::weight): a placeholder, left alone past its
// length, unless a reader keeps them.
@group(0) @binding(7) var<storage, read_write> weight: array<f32>;
// APIC affine matrix, rows c_u, c_v, c_w per particle (xyz; 1/s). Read only with APIC.
@group(0) @binding(8) var<storage, read> affine: array<vec4<f32>>;
// A bit per face: whether it got weight (GridFields::weighted, cleared with `acc`).
@group(0) @binding(9) var<storage, read_write> weighted: array<atomic<u32>>;

// Position (m) of face node `node` of component `comp`: on the cell wall along `comp`,
// at the cell centre along the other axes.
fn face_node_position(comp: u32, node: vec3<i32>) -> vec3<f32> {
    var x = vec3<f32>(node) + vec3<f32>(0.5);
    x[comp] = f32(node[comp]);
    return x * params.h;
}

@compute @workgroup_size(WORKGROUP)
fn scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x = pos[id].xyz;
    let vmax = params.max_particle_speed;
    let v = clamp(vel[id].xyz, vec3<f32>(-vmax), vec3<f32>(vmax));
    // No branch on the transfer inside the loops (lavapipe 22.3 leaks host memory on every
    // dispatch of a kernel with one there, tests/host_memory.rs): under FLIP the affine
    // part is zero, read from the placeholder at a clamped index and masked.
    let apic = params.transfer == TRANSFER_APIC;
    let last_row = arrayLength(&affine) - 1u;
    let cell = cell_containing(x, params);
    atomicAdd(&count[cell_index(cell, params.n)], 1u);
    for (var comp = 0u; comp < 3u; comp++) {
        let s = stencil(comp, x, params);
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        let a = select(vec3<f32>(0.0), affine[min(3u * id + comp, last_row)].xyz, apic);
        for (var c = 0u; c < 8u; c++) {
            let w = stencil_weight(s, c);
            if (w <= 0.0) { continue; }
            let node = stencil_node(s, c);
            let f = off + face_index(node, d);
            // The same clamp as v: the overflow bound holds for every contribution.
            let ua = clamp(v[comp] + dot(a, face_node_position(comp, node) - x), -vmax, vmax);
            let u = select(v[comp], ua, apic);
            atomicAdd(&acc[2u * f], i32(round(w * u * MOMENTUM_SCALE)));
            atomicAdd(&acc[2u * f + 1u], i32(round(w * WEIGHT_SCALE)));
        }
    }
}

// Face velocity = momentum / weight (0 where no particle reached the face); also keeps the
// copy of the transferred grid that the FLIP update subtracts and the face's weight bit.
// The sums stay in `acc` for the cell marking, which reads the weights from there.
@compute @workgroup_size(WORKGROUP)
fn normalize(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) li: u32) {
    let f = linear_id(wg, nwg, li);
    if (f >= num_faces(params)) { return; }
    let m = f32(atomicLoad(&acc[2u * f])) / MOMENTUM_SCALE;
    let w = f32(atomicLoad(&acc[2u * f + 1u])) / WEIGHT_SCALE;
    var u = 0.0;
    if (w > 0.0) {
        u = m / w;
        atomicOr(&weighted[f / 32u], 1u << (f % 32u));
    }
    grid_vel[f] = u;
    vel_old[f] = u;
    if (f < arrayLength(&weight)) { weight[f] = w; }
}
