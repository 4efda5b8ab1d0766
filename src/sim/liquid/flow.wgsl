//!include sim/core/prelude.wgsl
// Inflow and outflow, at the end of a substep's advection (src/sim/liquid/flow.rs).
//
// mark:    each particle is kept unless it lies in an active drain or in the outermost cell
//          layer of an open side; a kept particle inside an active emitter takes the
//          emitter's velocity, and marks its sub-cell of a kept-full emitter as occupied. The
//          particle is stashed in `scratch`, and each workgroup ranks its kept particles.
// plan:    one workgroup: the workgroups' kept counts become offsets (an exclusive scan);
//          then each empty sub-cell of an active kept-full emitter gets a rank; the new count
//          is at most the capacity, and the counters say what came and went.
// scatter: kept particles move to their offset + rank, in their old order (deterministic).
// fill:    each ranked sub-cell gets a particle, jittered in it like the initial seeding,
//          from a hash of (seed, substep, sub-cell): no order of threads shows in the result.
// inflow:  the flux emitters' particles, placed by the host, follow.

struct FlowShape {
    kind: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
    a: vec4<f32>,
    b: vec4<f32>,
    vel: vec4<f32>,
}

struct FlowParams {
    num_emitters: u32,
    num_drains: u32,
    // Bit e: emitter e (drain e) is on this substep.
    emit_active: u32,
    drain_active: u32,
    // Bit e: emitter e keeps its shape full (no flux).
    fill_emitters: u32,
    // Bits of the open sides (x_min, x_max, y_min, y_max, z_min, z_max).
    open_mask: u32,
    // Particles before this stage, and the buffers' capacity.
    count: u32,
    capacity: u32,
    // Sub-cells of the kept-full emitters' cells (cells x particles_per_cell).
    num_slots: u32,
    num_emit_cells: u32,
    // Particles the host placed in `incoming`.
    incoming: u32,
    per_axis: u32,
    seed: u32,
    substep: u32,
    num_blocks: u32,
    apic: u32,
    // Where `work` keeps each workgroup's count/offset, each particle's rank and each
    // sub-cell's rank (the first 4 words are the state: kept, filled, count).
    blocks_at: u32,
    rank_at: u32,
    slots_at: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> flow: FlowParams;
@group(0) @binding(2) var<storage, read> cell_type: array<u32>;
@group(0) @binding(3) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> flip_delta: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> affine: array<vec4<f32>>;
// pos, vel, flip_delta (capacity each), then the affine rows (3 x capacity) under APIC.
@group(0) @binding(7) var<storage, read_write> scratch: array<vec4<f32>>;
// The state (kept, filled, count); per workgroup of particles its kept count, then (after
// plan) its offset; per particle its rank among its workgroup's kept particles or
// FLOW_NONE; per emitter sub-cell its rank or FLOW_NONE.
@group(0) @binding(8) var<storage, read_write> work: array<u32>;
// Per emitter sub-cell: occupied.
@group(0) @binding(9) var<storage, read_write> occupancy: array<atomic<u32>>;
// Per cell: its index among the kept-full emitters' cells, or FLOW_NONE; then per emitter
// cell its cell index, then its emitter.
@group(0) @binding(10) var<storage, read> cell_map: array<u32>;
@group(0) @binding(11) var<storage, read> incoming: array<vec4<f32>>;
// Emitters in [0, MAX_EMITTERS), drains in [MAX_EMITTERS, MAX_EMITTERS + MAX_DRAINS).
@group(0) @binding(12) var<storage, read> shapes: array<FlowShape>;
@group(0) @binding(13) var<storage, read_write> counters: array<atomic<u32>>;

var<workgroup> scan: array<u32, WORKGROUP>;

fn inside(s: FlowShape, x: vec3<f32>) -> bool {
    if (s.kind == FLOW_BOX) {
        return all(x >= s.a.xyz) && all(x <= s.b.xyz);
    }
    if (s.kind == FLOW_SPHERE) {
        let d = x - s.a.xyz;
        return dot(d, d) <= s.a.w * s.a.w;
    }
    let d = x - s.a.xyz;
    let along = dot(d, s.b.xyz);
    let r2 = dot(d, d) - along * along;
    return abs(along) <= s.b.w && r2 <= s.a.w * s.a.w;
}

fn on(mask: u32, i: u32) -> bool {
    return ((mask >> i) & 1u) != 0u;
}

// Whether a particle at `x` stays: finite, in no active drain, not in an open side's
// outermost cell layer.
fn kept(x: vec3<f32>) -> bool {
    // By the exponent bits: a compiler may assume floats are never NaN and fold x != x.
    let e = bitcast<vec3<u32>>(x) & vec3<u32>(0x7f800000u);
    if (any(e == vec3<u32>(0x7f800000u))) {
        return false;
    }
    let c = vec3<i32>(floor(x * params.inv_h));
    let last = vec3<i32>(params.n) - vec3<i32>(1);
    for (var a = 0u; a < 3u; a++) {
        if (on(flow.open_mask, 2u * a) && c[a] <= 0) {
            return false;
        }
        if (on(flow.open_mask, 2u * a + 1u) && c[a] >= last[a]) {
            return false;
        }
    }
    for (var d = 0u; d < flow.num_drains; d++) {
        if (on(flow.drain_active, d) && inside(shapes[MAX_EMITTERS + d], x)) {
            return false;
        }
    }
    return true;
}

fn sub_cell(x: vec3<f32>, c: vec3<i32>) -> u32 {
    let pa = flow.per_axis;
    let f = clamp(vec3<u32>((x * params.inv_h - vec3<f32>(c)) * f32(pa)), vec3<u32>(0u),
        vec3<u32>(pa - 1u));
    return f.x + pa * (f.y + pa * f.z);
}

// Inclusive scan of `v` over the workgroup (Hillis-Steele); every thread must call it.
fn workgroup_scan(li: u32, v: u32) -> u32 {
    scan[li] = v;
    workgroupBarrier();
    for (var off = 1u; off < WORKGROUP; off *= 2u) {
        var s = scan[li];
        if (li >= off) {
            s += scan[li - off];
        }
        workgroupBarrier();
        scan[li] = s;
        workgroupBarrier();
    }
    return scan[li];
}

@compute @workgroup_size(WORKGROUP)
fn mark(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    let cap = flow.capacity;
    var keep = 0u;
    if (id < flow.count) {
        let x = pos[id].xyz;
        var v = vel[id];
        var in_emitter = false;
        if (kept(x)) {
            keep = 1u;
            let c = cell_containing(x, params);
            let slot = cell_map[cell_index(c, params.n)];
            if (slot != FLOW_NONE) {
                let ppc = flow.per_axis * flow.per_axis * flow.per_axis;
                atomicOr(&occupancy[slot * ppc + sub_cell(x, c)], 1u);
            }
            for (var e = 0u; e < flow.num_emitters; e++) {
                if (on(flow.emit_active, e) && inside(shapes[e], x)) {
                    v = vec4<f32>(shapes[e].vel.xyz, 0.0);
                    in_emitter = true;
                    break;
                }
            }
        }
        scratch[id] = pos[id];
        scratch[cap + id] = v;
        if (id < arrayLength(&flip_delta)) { scratch[2u * cap + id] = flip_delta[id]; }
        if (flow.apic != 0u) {
            for (var r = 0u; r < 3u; r++) {
                // An emitter's particle moves with the emitter: no affine part.
                scratch[3u * cap + 3u * id + r] = select(affine[3u * id + r], vec4<f32>(0.0), in_emitter);
            }
        }
    }
    let incl = workgroup_scan(li, keep);
    if (id < flow.count) {
        work[flow.rank_at + id] = select(FLOW_NONE, incl - keep, keep == 1u);
    }
    let block = id / WORKGROUP;
    if (li == WORKGROUP - 1u && block < flow.num_blocks) {
        work[flow.blocks_at + block] = incl;
    }
}

fn emitter_of_slot(s: u32) -> u32 {
    let ppc = flow.per_axis * flow.per_axis * flow.per_axis;
    return cell_map[params.num_cells + flow.num_emit_cells + s / ppc];
}

fn cell_of_slot(s: u32) -> u32 {
    let ppc = flow.per_axis * flow.per_axis * flow.per_axis;
    return cell_map[params.num_cells + s / ppc];
}

// One workgroup.
@compute @workgroup_size(WORKGROUP)
fn plan(@builtin(local_invocation_index) li: u32) {
    var run = 0u;
    for (var base = 0u; base < flow.num_blocks; base += WORKGROUP) {
        let i = base + li;
        var v = 0u;
        if (i < flow.num_blocks) {
            v = work[flow.blocks_at + i];
        }
        let incl = workgroup_scan(li, v);
        if (i < flow.num_blocks) {
            work[flow.blocks_at + i] = run + incl - v;
        }
        run += scan[WORKGROUP - 1u];
        workgroupBarrier();
    }
    let kept_count = run;
    run = 0u;
    for (var base = 0u; base < flow.num_slots; base += WORKGROUP) {
        let s = base + li;
        var need = 0u;
        if (s < flow.num_slots) {
            let e = emitter_of_slot(s);
            if (on(flow.emit_active, e) && atomicLoad(&occupancy[s]) == 0u
                && cell_type[cell_of_slot(s)] != SOLID) {
                need = 1u;
            }
        }
        let incl = workgroup_scan(li, need);
        if (s < flow.num_slots) {
            work[flow.slots_at + s] = select(FLOW_NONE, run + incl - need, need == 1u);
        }
        run += scan[WORKGROUP - 1u];
        workgroupBarrier();
    }
    if (li == 0u) {
        let want = kept_count + run + flow.incoming;
        let count = min(want, flow.capacity);
        work[0] = kept_count;
        work[1] = run;
        work[2] = count;
        atomicStore(&counters[COUNTER_PARTICLES], count);
        atomicStore(&counters[COUNTER_EMITTED], count - kept_count);
        atomicStore(&counters[COUNTER_REMOVED], flow.count - kept_count);
        atomicStore(&counters[COUNTER_NOT_EMITTED], want - count);
    }
}

@compute @workgroup_size(WORKGROUP)
fn scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) li: u32) {
    let id = linear_id(wg, nwg, li);
    if (id >= flow.count) {
        return;
    }
    let r = work[flow.rank_at + id];
    if (r == FLOW_NONE) {
        return;
    }
    let cap = flow.capacity;
    let dst = work[flow.blocks_at + id / WORKGROUP] + r;
    pos[dst] = scratch[id];
    vel[dst] = scratch[cap + id];
    if (dst < arrayLength(&flip_delta)) { flip_delta[dst] = scratch[2u * cap + id]; }
    if (flow.apic != 0u) {
        for (var r = 0u; r < 3u; r++) {
            affine[3u * dst + r] = scratch[3u * cap + 3u * id + r];
        }
    }
}

fn hash(x: u32) -> u32 {
    let s = x * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

// Uniform in [0, 1) from (seed, substep, slot, axis); src/reference/flow.rs has its twin.
fn jitter(slot: u32, axis: u32) -> f32 {
    let h = hash(flow.seed ^ hash(flow.substep ^ hash(3u * slot + axis)));
    return f32(h >> 8u) / 16777216.0;
}

fn new_particle(i: u32, x: vec3<f32>, e: u32) {
    pos[i] = vec4<f32>(x, 0.0);
    vel[i] = vec4<f32>(shapes[e].vel.xyz, 0.0);
    if (i < arrayLength(&flip_delta)) { flip_delta[i] = vec4<f32>(0.0); }
    if (flow.apic != 0u) {
        for (var r = 0u; r < 3u; r++) {
            affine[3u * i + r] = vec4<f32>(0.0);
        }
    }
}

@compute @workgroup_size(WORKGROUP)
fn fill(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let s = linear_id(wg, nwg, li);
    if (s >= flow.num_slots) {
        return;
    }
    // Ready for the next substep's marks.
    atomicStore(&occupancy[s], 0u);
    let r = work[flow.slots_at + s];
    let i = work[0] + r;
    if (r == FLOW_NONE || i >= flow.capacity) {
        return;
    }
    let pa = flow.per_axis;
    let ppc = pa * pa * pa;
    let sub = s % ppc;
    let sc = vec3<u32>(sub % pa, (sub / pa) % pa, sub / (pa * pa));
    let c = vec3<f32>(cell_coord(cell_of_slot(s), params.n));
    var x = vec3<f32>(0.0);
    for (var a = 0u; a < 3u; a++) {
        x[a] = (c[a] + (f32(sc[a]) + 0.1 + 0.8 * jitter(s, a)) / f32(pa)) * params.h;
    }
    new_particle(i, x, emitter_of_slot(s));
}

@compute @workgroup_size(WORKGROUP)
fn inflow(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let j = linear_id(wg, nwg, li);
    let i = work[0] + work[1] + j;
    if (j >= flow.incoming || i >= flow.capacity) {
        return;
    }
    let p = incoming[j];
    new_particle(i, p.xyz, bitcast<u32>(p.w));
}
