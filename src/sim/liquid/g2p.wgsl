//!include sim/core/prelude.wgsl
// Grid-to-particle with the PIC/FLIP blend: v = r*interp(u_new) + (1-r)*(v + interp(u_new - u_old)),
// using the same stencil as particle-to-grid. With APIC: v = interp(u_new) and each row of
// the affine matrix is the gradient of that interpolant, c_a = sum_i u_a,i grad w_i(x)
// (Jiang et al. 2015, with the trilinear weights of the MAC stencil).
// Where bodies cut faces, each face's change u_new - u_old is weighed by its factor in
// `gather_scale` (src/sim/bodies/coupling.wgsl, `gather_scale_faces`: 1 away from the
// bodies), so the particles take up the momentum the solve moved; the PIC and APIC
// velocities are then interp(u_old) plus that change, which is interp(u_new) where every
// factor is 1.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> grid_vel: array<f32>;
// u_old: the grid velocity after P2G, before forces (GridFields::vel_old).
@group(0) @binding(4) var<storage, read> vel_old: array<f32>;
// Per particle: FLIP velocity change |interp(u_new - u_old)| in .w, for the viewer.
@group(0) @binding(5) var<storage, read_write> flip_delta: array<vec4<f32>>;
// APIC affine matrix, rows c_u, c_v, c_w per particle (xyz; 1/s). Written only with APIC.
@group(0) @binding(6) var<storage, read_write> affine: array<vec4<f32>>;
// Per face, the factor on the velocity change gathered there (GridFields::gather_scale);
// a placeholder where bodies cut no faces.
@group(0) @binding(7) var<storage, read> gather_scale: array<f32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x = pos[id].xyz;
    var v = vel[id].xyz;
    var delta = vec3<f32>(0.0);
    // No branch on the transfer inside the loops: lavapipe 22.3 leaked host memory on every
    // dispatch of this kernel while one stood there (tests/host_memory.rs). The gradient is
    // summed either way and the affine rows are written where the buffer holds them (APIC;
    // under FLIP a one-particle placeholder that nothing reads).
    let apic = params.transfer == TRANSFER_APIC;
    let rows = arrayLength(&affine);
    let scaled = arrayLength(&gather_scale) >= num_faces(params);
    for (var comp = 0u; comp < 3u; comp++) {
        let s = stencil(comp, x, params);
        let d = face_dims(comp, params.n);
        let off = face_offset(comp, params);
        var u_new = 0.0;
        var u_old = 0.0;
        var du_s = 0.0;
        var grad = vec3<f32>(0.0);
        for (var c = 0u; c < 8u; c++) {
            let w = stencil_weight(s, c);
            let f = off + face_index(stencil_node(s, c), d);
            let g = grid_vel[f];
            u_new += w * g;
            let o = vel_old[f];
            u_old += w * o;
            du_s += w * gather_scale[min(f, arrayLength(&gather_scale) - 1u)] * (g - o);
            grad += stencil_weight_grad(s, c) * g;
        }
        let du = select(u_new - u_old, du_s, scaled);
        delta[comp] = du;
        let flip = v[comp] + du;
        let u_tr = select(u_new, u_old + du, scaled);
        v[comp] = select(params.pic_ratio * u_tr + (1.0 - params.pic_ratio) * flip, u_tr, apic);
        if (3u * id + comp < rows) {
            affine[3u * id + comp] = vec4<f32>(grad, 0.0);
        }
    }
    vel[id] = vec4<f32>(v, 0.0);
    // Without the viewer's buffer (a one-particle placeholder) nothing past it is written.
    if (id < arrayLength(&flip_delta)) {
        flip_delta[id] = vec4<f32>(delta, length(delta));
    }
}
