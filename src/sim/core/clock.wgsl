//!include gpu/constants.wgsl
// The substep's clock on the GPU: the next substep's length from the largest speed the last
// one measured, so a frame's substeps follow each other without the host reading that
// speed back first (src/sim/core/clock.rs). The host's rule, in f32:
//   cfl = cfl h / max(speed + accel, 1e-9); what is left of the frame split evenly into
//   n = ceil(rest / cfl - 0.1) substeps, dt = rest / n; once max_substeps substeps have
//   begun the substep takes the rest.
// What is left of the frame lives here, as an exact fixed-point u64 (CLOCK_REST_*), set by
// the host when the frame's first substep is recorded. Once a substep has ended the frame,
// the substeps recorded after it do not run (CLOCK_RUN 0: src/gpu/gate.rs).

// Mirrored by `ClockParams` in src/sim/core/clock.rs.
struct ClockParams {
    cfl_h: f32,         // the CFL number times the cell size (m)
    accel: f32,         // the speed the mode adds to the largest (m/s: sqrt(h |g|) in the liquid)
    max_substeps: u32,  // the frame's last substep takes the rest of it
    cap: f32,           // the longest substep whatever the speed (s; 0: none)
};

@group(0) @binding(0) var<uniform> clock_in: ClockParams;
@group(0) @binding(1) var<storage, read> counters: array<u32>;
// CLOCK_DT: the substep (f32 bits), CLOCK_CFL: the CFL step before the frame's end cut it
// (f32 bits), CLOCK_LAST: 1 when the substep ends the frame; the state CLOCK_RUN,
// CLOCK_REST_*, CLOCK_STARTED, CLOCK_DONE (src/gpu/constants.rs).
@group(0) @binding(2) var<storage, read_write> clock: array<u32>;

// u64 values as (low, high) words.

// m * 2^s for s in [0, 63].
fn shl64(m: u32, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return vec2<u32>(m, 0u);
    }
    if (s < 32u) {
        return vec2<u32>(m << s, m >> (32u - s));
    }
    return vec2<u32>(0u, m << (s - 32u));
}

// v >> s for s in [0, 63].
fn shr64(v: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return v;
    }
    if (s < 32u) {
        return vec2<u32>((v.x >> s) | (v.y << (32u - s)), v.y >> s);
    }
    return vec2<u32>(v.y >> (s - 32u), 0u);
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(a.x - b.x, a.y - b.y - borrow);
}

fn less64(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// A positive f32 in units of 2^-CLOCK_REST_SHIFT s (exact from 2^-36 s; rounded down below).
fn to_fixed(x: f32) -> vec2<u32> {
    let bits = bitcast<u32>(x);
    let e = (bits >> 23u) & 0xffu;
    if (e == 0u) {
        return vec2<u32>(0u, 0u);
    }
    let m = (bits & 0x7fffffu) | 0x800000u;
    // x = m 2^(e - 150) = m 2^(e - 150 + SHIFT) units.
    let s = i32(e) - 150 + i32(CLOCK_REST_SHIFT);
    if (s >= 0) {
        return shl64(m, min(u32(s), 40u));
    }
    return vec2<u32>(select(0u, m >> u32(-s), -s < 32), 0u);
}

// The nearest f32 (ties to even) to v units of 2^-CLOCK_REST_SHIFT s.
fn from_fixed(v: vec2<u32>) -> f32 {
    var bits = 32u - countLeadingZeros(v.x);
    if (v.y != 0u) {
        bits = 64u - countLeadingZeros(v.y);
    }
    if (bits <= 24u) {
        return ldexp(f32(v.x), -i32(CLOCK_REST_SHIFT));
    }
    let s = bits - 24u;
    var m = shr64(v, s).x;
    let kept = shl64(m, s);
    let rest = sub64(v, kept);
    let half = shl64(1u, s - 1u);
    if (less64(half, rest) || (all(rest == half) && (m & 1u) == 1u)) {
        m += 1u;
    }
    return ldexp(f32(m), i32(s) - i32(CLOCK_REST_SHIFT));
}

@compute @workgroup_size(1)
fn next_dt() {
    if (clock[CLOCK_DONE] != 0u) {
        // The frame has ended: this substep was recorded ahead and does not run. Its dt
        // stays the last one's, which SimParams::dt already holds.
        clock[CLOCK_RUN] = 0u;
        clock[CLOCK_LAST] = 0u;
        return;
    }
    let speed = bitcast<f32>(counters[COUNTER_MAX_SPEED]);
    var cfl = clock_in.cfl_h / max(speed + clock_in.accel, 1e-9);
    if (clock_in.cap > 0.0) {
        cfl = min(cfl, clock_in.cap);
    }
    let rest_fixed = vec2<u32>(clock[CLOCK_REST_LO], clock[CLOCK_REST_HI]);
    let rest = from_fixed(rest_fixed);
    let started = clock[CLOCK_STARTED] + 1u;
    let n = ceil(rest / cfl - 0.1);
    var dt = rest;
    var last = true;
    if (started < clock_in.max_substeps && n > 1.0) {
        dt = rest / n;
        last = false;
    }
    var left = vec2<u32>(0u, 0u);
    if (!last) {
        left = sub64(rest_fixed, to_fixed(dt));
    }
    clock[CLOCK_DT] = bitcast<u32>(dt);
    clock[CLOCK_CFL] = bitcast<u32>(cfl);
    clock[CLOCK_LAST] = select(0u, 1u, last);
    clock[CLOCK_RUN] = 1u;
    clock[CLOCK_REST_LO] = left.x;
    clock[CLOCK_REST_HI] = left.y;
    clock[CLOCK_STARTED] = started;
    clock[CLOCK_DONE] = select(0u, 1u, last);
}
