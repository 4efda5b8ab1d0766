//!include sim/core/prelude.wgsl
// Particle spacing: particles closer than a minimum distance push each other apart, so the
// liquid neither bunches nor leaves holes below the grid's scale (the volume correction
// handles the cell scale). Each cell keeps a linked list of its particles (a head per cell,
// a next per particle, built with one atomic exchange per particle: 4 bytes per cell and per
// particle, and no cap on a cell's count); each particle sums, over the particles of the
// cells within the minimum distance (at most half a cell, so at most 2 x 2 x 2 cells), half
// of the overlap along the line between them. The lists' order depends on the GPU's
// atomics, the sums do not: they are fixed point, so the stage is deterministic.
// Velocities are not touched. The summed move waits between the push and the apply in the
// particles' unused fourth words (pos.w and vel.w, zero outside this stage): three 21-bit
// fixed-point sums and a flag in 64 bits, so the stage needs no copy of the positions. A
// sum is clamped to 21 bits, a move of just under one cell per axis and pass.
// Only particles inside the liquid move: in a FLUID cell whose six neighbours are not AIR.
// Next to the surface a push sends the outer particle of a pair out across the level set's
// half-density line, which swells the liquid and roughens the surface (the first sloshing
// mode then loses more of its amplitude per period); bunching there is the volume
// correction's excess density. Particles near the surface still push interior ones.

struct SpacingParams {
    // Minimum distance between particle centres (m).
    radius: f32,
    // Fraction of the overlap each particle of a pair moves away (0.5: together they close it).
    strength: f32,
    _pad0: f32,
    _pad1: f32,
};


@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> spacing: SpacingParams;
@group(0) @binding(2) var<storage, read> solid: array<u32>;
// Positions (xyz, f32 bits) and velocities, read as words: the push keeps its sums in their
// w, bit for bit.
@group(0) @binding(3) var<storage, read_write> pos: array<vec4<u32>>;
// Per cell and per particle: both in P2G's accumulator buffer, idle from the extrapolation
// until the next P2G.
@group(0) @binding(4) var<storage, read_write> head: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> next: array<u32>;
@group(0) @binding(6) var<storage, read_write> vel: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read> cell_type: array<u32>;
//!include sim/core/cells.wgsl

// Bit 31 of the second word: the particle is inside the liquid and its sums apply.
const MOVES: u32 = 0x80000000u;
// The largest sum a 21-bit two's-complement field holds.
const SUM_MAX: i32 = 1048575;

fn position(id: u32) -> vec3<f32> {
    return bitcast<vec3<f32>>(pos[id].xyz);
}

// The sums (each clamped to 21 bits) and the flag, into pos.w and vel.w.
fn store_sums(id: u32, sum: vec3<i32>, moves: bool) {
    let s = bitcast<vec3<u32>>(clamp(sum, vec3<i32>(-SUM_MAX - 1), vec3<i32>(SUM_MAX)));
    pos[id].w = insertBits(s.x, s.y, 21u, 11u);
    vel[id].w = insertBits(s.y >> 11u, s.z, 10u, 21u) | select(0u, MOVES, moves);
}

// Whether a particle at x is inside the liquid: its cell FLUID and none of the six around
// it AIR (walls and solids count as liquid's neighbours).
fn interior(x: vec3<f32>) -> bool {
    let c = cell_containing(x, params);
    if (type_at(c) != FLUID) { return false; }
    for (var a = 0u; a < 3u; a++) {
        if (type_at(c - unit(a)) == AIR || type_at(c + unit(a)) == AIR) { return false; }
    }
    return true;
}

@compute @workgroup_size(WORKGROUP)
fn clear(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_cells) { return; }
    atomicStore(&head[id], SPACING_LIST_END);
}

@compute @workgroup_size(WORKGROUP)
fn bin(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let c = cell_index(cell_containing(position(id), params), params.n);
    next[id] = atomicExchange(&head[c], id);
}

@compute @workgroup_size(WORKGROUP)
fn push(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x0 = position(id);
    if (!interior(x0)) {
        store_sums(id, vec3<i32>(0), false);
        return;
    }
    let r = spacing.radius;
    // Particles within r (at most half a cell) lie in the cells the box x0 +- r touches: at
    // most two per axis.
    let lo = cell_containing(x0 - vec3<f32>(r), params);
    let hi = cell_containing(x0 + vec3<f32>(r), params);
    var sum = vec3<i32>(0);
    for (var k = 0u; k < 8u; k++) {
        let c = lo + vec3<i32>(i32(k & 1u), i32((k >> 1u) & 1u), i32(k >> 2u));
        if (any(c > hi)) { continue; }
        var j = atomicLoad(&head[cell_index(c, params.n)]);
        for (; j != SPACING_LIST_END; j = next[j]) {
            if (j == id) { continue; }
            let d = x0 - position(j);
            let dist = length(d);
            // Coincident particles have no direction to separate along; they part once
            // either moves.
            if (dist >= r || dist < 1e-6 * params.h) { continue; }
            let move_by = spacing.strength * (r - dist) / dist * d;
            sum += vec3<i32>(round(move_by * (params.inv_h * SPACING_SHIFT_SCALE)));
        }
    }
    store_sums(id, sum, true);
}

@compute @workgroup_size(WORKGROUP)
fn apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let w0 = pos[id].w;
    let w1 = vel[id].w;
    pos[id].w = 0u;
    vel[id].w = 0u;
    if ((w1 & MOVES) == 0u) { return; }
    let sum = vec3<i32>(
        extractBits(bitcast<i32>(w0), 0u, 21u),
        extractBits(bitcast<i32>((w0 >> 21u) | ((w1 & 0x3ffu) << 11u)), 0u, 21u),
        extractBits(bitcast<i32>(w1), 10u, 21u));
    let x0 = position(id);
    let m = 0.01 * params.h;
    let x = clamp(x0 + vec3<f32>(sum) * (params.h / SPACING_SHIFT_SCALE), vec3<f32>(m),
                  vec3<f32>(params.n) * params.h - vec3<f32>(m));
    let into_solid = solid[cell_index(cell_containing(x, params), params.n)] != 0u;
    pos[id] = vec4<u32>(bitcast<vec3<u32>>(select(x, x0, into_solid)), 0u);
}
