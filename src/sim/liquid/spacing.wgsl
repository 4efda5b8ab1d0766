//!include sim/core/prelude.wgsl
// Particle spacing: particles closer than a minimum distance push each other apart, so the
// liquid neither bunches nor leaves holes below the grid's scale (the volume correction
// handles the cell scale). Each cell keeps a linked list of its particles (a head per cell,
// a next per particle, built with one atomic exchange per particle: 4 bytes per cell and per
// particle, and no cap on a cell's count); each particle sums, over the particles of the
// cells within the minimum distance (at most half a cell, so at most 2 x 2 x 2 cells), half
// of the overlap along the line between them. The lists' order depends on the GPU's
// atomics, the sums do not: they are fixed point, so the stage is deterministic.
// Velocities are not touched.
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
@group(0) @binding(3) var<storage, read_write> pos: array<vec4<f32>>;
// Per cell (the head of P2G's accumulator buffer, idle from the extrapolation on).
@group(0) @binding(4) var<storage, read_write> head: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> next: array<u32>;           // particles
@group(0) @binding(6) var<storage, read_write> shifted: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> cell_type: array<u32>;
//!include sim/core/cells.wgsl

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
    let c = cell_index(cell_containing(pos[id].xyz, params), params.n);
    next[id] = atomicExchange(&head[c], id);
}

@compute @workgroup_size(WORKGROUP)
fn push(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    let x0 = pos[id].xyz;
    if (!interior(x0)) {
        shifted[id] = pos[id];
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
            let d = x0 - pos[j].xyz;
            let dist = length(d);
            // Coincident particles have no direction to separate along; they part once
            // either moves.
            if (dist >= r || dist < 1e-6 * params.h) { continue; }
            let move_by = spacing.strength * (r - dist) / dist * d;
            sum += vec3<i32>(round(move_by * (params.inv_h * SPACING_SHIFT_SCALE)));
        }
    }
    let m = 0.01 * params.h;
    let x = clamp(x0 + vec3<f32>(sum) * (params.h / SPACING_SHIFT_SCALE), vec3<f32>(m),
                  vec3<f32>(params.n) * params.h - vec3<f32>(m));
    let into_solid = solid[cell_index(cell_containing(x, params), params.n)] != 0u;
    shifted[id] = vec4<f32>(select(x, x0, into_solid), pos[id].w);
}

@compute @workgroup_size(WORKGROUP)
fn apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= params.num_particles) { return; }
    pos[id] = shifted[id];
}
