// Shared definitions of the smoke stages (include after prelude.wgsl). The smoke mode runs
// on an nx x ny x 1 grid through the 3D kernels; nothing here assumes nz = 1.

// Mirrored by `SmokeParams` in src/sim/smoke/params.rs (tests/integration/shaders.rs checks the layout).
struct SmokeParams {
    up: vec4<f32>,            // unit vector opposite to gravity
    dissipation: vec4<f32>,   // rates (1/s): dye r, g, b, temperature; a substep keeps exp(-rate dt)
    buoyancy: f32,            // m/s^2 per unit temperature
    dye_weight: f32,          // m/s^2 per unit dye
    ambient: f32,             // ambient temperature
    vorticity: f32,           // confinement epsilon
    velocity_dissipation: f32, // rate (1/s); a substep keeps exp(-rate dt) of the velocity
    scheme: u32,              // SCHEME_SL or SCHEME_MACCORMACK
    num_emitters: u32,
    trail_slot: u32,          // ring-buffer slot the tracers' positions go to this substep
    num_tracers: u32,
    trail_len: u32,
    _pad0: u32,
    _pad1: u32,
};

// Mirrored by `Emitter` in src/sim/smoke/params.rs (tests/integration/shaders.rs checks the layout).
// kind: EMIT_BOX [lo, hi], EMIT_DISC (centre lo.xyz, radius lo.w): dye and temperature are
// raised to at least `dye`, velocity set when set_velocity != 0 (scene sources);
// EMIT_SPLAT (centre lo.xyz, radius lo.w): dye and velocity added with weight
// exp(-|x - c|^2 / r^2) (mouse splats).
struct Emitter {
    lo: vec4<f32>,
    hi: vec4<f32>,
    dye: vec4<f32>,
    vel: vec4<f32>,
    kind: u32,
    set_velocity: u32,
    _pad0: u32,
    _pad1: u32,
};

fn cell_centre(c: vec3<i32>) -> vec3<f32> {
    return (vec3<f32>(c) + vec3<f32>(0.5)) * params.h;
}

fn face_position(comp: u32, f: vec3<i32>) -> vec3<f32> {
    var x = (vec3<f32>(f) + vec3<f32>(0.5)) * params.h;
    x[comp] = f32(f[comp]) * params.h;
    return x;
}
