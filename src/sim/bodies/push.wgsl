// The push-out's reaction on the bodies (src/sim/bodies/push.rs). The push-out
// (coupling.wgsl, `push_out`) moves the liquid's particles out of each body after the
// bodies moved, and sums per body the momentum it gave them; each dynamic body loses it
// here, on the GPU, at the start of the next substep, before anything reads the bodies'
// velocities: in the coupling's bodies (the stamped cells' velocities) and in the strong
// coupling's (the solve's v*). The host takes the same sums off its own state when the
// substep's readback brings them.

// Mirrored by `PushParams` in src/sim/bodies/push.rs.
struct PushParams {
    bodies: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
};

@group(0) @binding(0) var<uniform> pp: PushParams;
// Per body 6 values (linear, then angular momentum about its centre), each a 64-bit
// fixed-point sum (low, high u32) in 1/PUSH_UNIT N s.
@group(0) @binding(1) var<storage, read> push_sums: array<u32>;
// Per body 4 vec4: 1/m per axis (0 where the body keeps its momentum: not dynamic, or a
// slice's z), then the columns of its world inverse inertia (a slice's: z about z alone).
@group(0) @binding(2) var<storage, read> inverse: array<vec4<f32>>;
// coupling.wgsl's `Body`, 8 vec4 each: the velocity at 5, the spin at 6.
@group(0) @binding(3) var<storage, read_write> body_words: array<vec4<f32>>;
// strong.wgsl's `CoupleBody`, 9 vec4 each: the velocity at 1, the spin at 2.
@group(0) @binding(4) var<storage, read_write> couple_words: array<vec4<f32>>;

const PUSH_UNIT: f32 = 16777216.0;
const TWO_32: f32 = 4294967296.0;

// The fixed-point sum in `slot`, N s; exact in f32's precision while it fits an i32.
fn sum_at(slot: u32) -> f32 {
    let lo = push_sums[2u * slot];
    let hi = bitcast<i32>(push_sums[2u * slot + 1u]);
    let small = bitcast<i32>(lo);
    if ((hi == 0 && small >= 0) || (hi == -1 && small < 0)) {
        return f32(small) / PUSH_UNIT;
    }
    return (f32(hi) * TWO_32 + f32(lo)) / PUSH_UNIT;
}

@compute @workgroup_size(64)
fn apply_push(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= pp.bodies) { return; }
    let p = vec3<f32>(sum_at(6u * b), sum_at(6u * b + 1u), sum_at(6u * b + 2u));
    let l = vec3<f32>(sum_at(6u * b + 3u), sum_at(6u * b + 4u), sum_at(6u * b + 5u));
    let dv = inverse[4u * b].xyz * p;
    let dw = inverse[4u * b + 1u].xyz * l.x + inverse[4u * b + 2u].xyz * l.y
        + inverse[4u * b + 3u].xyz * l.z;
    body_words[8u * b + 5u] = body_words[8u * b + 5u] - vec4<f32>(dv, 0.0);
    body_words[8u * b + 6u] = body_words[8u * b + 6u] - vec4<f32>(dw, 0.0);
    couple_words[9u * b + 1u] = couple_words[9u * b + 1u] - vec4<f32>(dv, 0.0);
    couple_words[9u * b + 2u] = couple_words[9u * b + 2u] - vec4<f32>(dw, 0.0);
}
