//!include sim/core/prelude.wgsl
// Smoke sources and mouse splats (see `Emitter` in smoke_common.wgsl). Sources raise dye
// and temperature to their value and may impose a jet velocity; splats add a gaussian.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> smoke: SmokeParams;
@group(0) @binding(2) var<storage, read> emitters: array<Emitter>;
@group(0) @binding(3) var<storage, read> cell_type: array<u32>;
@group(0) @binding(4) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> grid_vel: array<f32>;

//!include sim/smoke/common.wgsl
//!include sim/core/cells.wgsl

// Weight of emitter `e` at `x`: 1 inside a box or sphere, the gaussian for splats.
fn emitter_weight(e: Emitter, x: vec3<f32>) -> f32 {
    if (e.kind == EMIT_BOX) {
        return select(0.0, 1.0, all(x.xy >= e.lo.xy) && all(x.xy <= e.hi.xy));
    }
    let d = x.xy - e.lo.xy;
    let r2 = e.lo.w * e.lo.w;
    if (e.kind == EMIT_DISC) {
        return select(0.0, 1.0, dot(d, d) <= r2);
    }
    return exp(-dot(d, d) / r2);
}

@compute @workgroup_size(WORKGROUP)
fn cells(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let c = linear_id(wg, nwg, li);
    if (c >= params.num_cells) { return; }
    if (cell_type[c] == SOLID) { return; }
    let x = cell_centre(cell_coord(c, params.n));
    var d = dye[c];
    for (var i = 0u; i < smoke.num_emitters; i++) {
        let e = emitters[i];
        let w = emitter_weight(e, x);
        if (w <= 0.0) { continue; }
        if (e.kind == EMIT_SPLAT) {
            d += w * e.dye;
        } else {
            d = max(d, e.dye);
        }
    }
    dye[c] = d;
}

@compute @workgroup_size(WORKGROUP)
fn faces(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let face = face_of(g, params);
    let comp = face.comp;
    let f = face.f;
    let cs = face_cells(comp, f);
    // Faces on solids and walls belong to the boundary conditions.
    if (type_at(cs[0]) == SOLID || type_at(cs[1]) == SOLID) { return; }
    let x = face_position(comp, f);
    var u = grid_vel[g];
    for (var i = 0u; i < smoke.num_emitters; i++) {
        let e = emitters[i];
        let w = emitter_weight(e, x);
        if (w <= 0.0) { continue; }
        if (e.kind == EMIT_SPLAT) {
            u += w * e.vel[comp];
        } else if (e.set_velocity != 0u) {
            u = e.vel[comp];
        }
    }
    grid_vel[g] = u;
}
