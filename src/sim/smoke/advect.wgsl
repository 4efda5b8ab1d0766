//!include sim/core/prelude.wgsl
// Smoke advection of face velocities and cell quantities (dye rgb + temperature in w)
// through the projected velocity `vel_old`, with RK2 back-traces.
//
// Semi-Lagrangian: q_hat(x) = q(x - dt u). MacCormack (Selle et al. 2008): the error of
// q_hat is estimated by tracing it forward again, q_tilde(x) = q_hat(x + dt u), and
// q = q_hat + (q - q_tilde) / 2, clamped to the range of the q values that q_hat
// interpolated so the correction never creates new extrema. `finish` computes q_tilde on
// the fly from q_hat, so no third buffer is needed. Dissipation factors apply at the end.
// Cell samples skip SOLID cells and renormalise the weights, so solids never bleed
// (zero) dye into the smoke next to them.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read> vel_old: array<f32>;
@group(0) @binding(4) var<storage, read_write> vel_hat: array<f32>;
@group(0) @binding(5) var<storage, read_write> vel: array<f32>;
@group(0) @binding(6) var<storage, read> dye_old: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dye_hat: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> dye: array<vec4<f32>>;

//!include sim/smoke/common.wgsl

const FROM_OLD: u32 = 0u;
const FROM_HAT: u32 = 1u;

struct FaceSample {
    value: f32,
    lo: f32,
    hi: f32,
};

fn face_sample(which: u32, comp: u32, x: vec3<f32>) -> FaceSample {
    let s = stencil(comp, x, params);
    let d = face_dims(comp, params.n);
    let off = face_offset(comp, params);
    var out = FaceSample(0.0, 3.0e38, -3.0e38);
    for (var c = 0u; c < 8u; c++) {
        let idx = off + face_index(stencil_node(s, c), d);
        var q = vel_old[idx];
        if (which == FROM_HAT) { q = vel_hat[idx]; }
        out.value += stencil_weight(s, c) * q;
        out.lo = min(out.lo, q);
        out.hi = max(out.hi, q);
    }
    return out;
}

fn trace_velocity(x: vec3<f32>) -> vec3<f32> {
    var u = vec3<f32>(0.0);
    for (var comp = 0u; comp < 3u; comp++) {
        u[comp] = face_sample(FROM_OLD, comp, x).value;
    }
    return u;
}

// RK2 trace from x over time `t` (negative: back-trace).
fn trace(x: vec3<f32>, t: f32) -> vec3<f32> {
    let mid = x + 0.5 * t * trace_velocity(x);
    return x + t * trace_velocity(mid);
}

struct CellSample {
    value: vec4<f32>,
    lo: vec4<f32>,
    hi: vec4<f32>,
};

fn cell_sample(which: u32, x: vec3<f32>) -> CellSample {
    let n = vec3<i32>(params.n);
    let g = clamp(x * params.inv_h - vec3<f32>(0.5), vec3<f32>(0.0), vec3<f32>(n - vec3<i32>(1)));
    let base = min(vec3<i32>(floor(g)), n - vec3<i32>(1));
    let next = min(base + vec3<i32>(1), n - vec3<i32>(1));
    let f = g - vec3<f32>(base);
    var out = CellSample(vec4<f32>(0.0), vec4<f32>(3.0e38), vec4<f32>(-3.0e38));
    var wsum = 0.0;
    for (var c = 0u; c < 8u; c++) {
        let hi = vec3<bool>((c & 1u) != 0u, (c & 2u) != 0u, (c & 4u) != 0u);
        let node = select(base, next, hi);
        let idx = cell_index(node, params.n);
        if (cell_type[idx] == SOLID) { continue; }
        let wv = select(vec3<f32>(1.0) - f, f, hi);
        let w = wv.x * wv.y * wv.z;
        var q = dye_old[idx];
        if (which == FROM_HAT) { q = dye_hat[idx]; }
        out.value += w * q;
        wsum += w;
        out.lo = min(out.lo, q);
        out.hi = max(out.hi, q);
    }
    if (wsum <= 0.0) {
        return CellSample(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    }
    out.value = out.value / wsum;
    return out;
}

@compute @workgroup_size(WORKGROUP)
fn faces_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let x = face_position(face.comp, face.f);
    vel_hat[g] = face_sample(FROM_OLD, face.comp, trace(x, -params.dt)).value;
}

@compute @workgroup_size(WORKGROUP)
fn faces_finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    var q = vel_hat[g];
    if (smoke.scheme == SCHEME_MACCORMACK) {
        let face = face_of(g, params);
        let x = face_position(face.comp, face.f);
        let back = face_sample(FROM_OLD, face.comp, trace(x, -params.dt));
        let tilde = face_sample(FROM_HAT, face.comp, trace(x, params.dt)).value;
        q = clamp(q + 0.5 * (vel_old[g] - tilde), back.lo, back.hi);
    }
    // The substep's own dt: the GPU's clock may have set it (src/sim/core/clock.rs).
    vel[g] = q * exp(-smoke.velocity_dissipation * params.dt);
}

@compute @workgroup_size(WORKGROUP)
fn cells_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (cell_type[c] == SOLID) {
        dye_hat[c] = vec4<f32>(0.0);
        return;
    }
    let x = cell_centre(cell_coord(c, params.n));
    dye_hat[c] = cell_sample(FROM_OLD, trace(x, -params.dt)).value;
}

@compute @workgroup_size(WORKGROUP)
fn cells_finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (cell_type[c] == SOLID) {
        dye[c] = vec4<f32>(0.0);
        return;
    }
    var q = dye_hat[c];
    if (smoke.scheme == SCHEME_MACCORMACK) {
        let x = cell_centre(cell_coord(c, params.n));
        let back = cell_sample(FROM_OLD, trace(x, -params.dt));
        let tilde = cell_sample(FROM_HAT, trace(x, params.dt)).value;
        q = clamp(q + 0.5 * (dye_old[c] - tilde), back.lo, back.hi);
    }
    dye[c] = q * exp(-smoke.dissipation * params.dt);
}
