//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// Velocity extrapolation into AIR, one layer per dispatch. A face is valid when it touches
// a FLUID cell or received P2G weight (it carries a transferred velocity); each layer gives every invalid face with valid neighbours (same component,
// +-1 along each axis) their average. Only invalid faces are written and only valid ones
// are read, so velocities update in place; the flags ping-pong between the two words of each
// face in `flags`, which is P2G's accumulator buffer (two words per face, idle until the next
// P2G clears it): `ping.x` is the word read, `ping.y` the word written.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> cell_type: array<u32>;
@group(0) @binding(2) var<uniform> ping: vec4<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;
@group(0) @binding(4) var<storage, read_write> grid_vel: array<f32>;
// A bit per face: whether P2G gave it weight (GridFields::weighted).
@group(0) @binding(5) var<storage, read> weighted: array<u32>;

fn has_weight(g: u32) -> bool {
    return ((weighted[g / 32u] >> (g % 32u)) & 1u) != 0u;
}

fn valid_in(g: u32) -> u32 {
    return flags[2u * g + ping.x];
}

fn set_valid(g: u32, v: u32) {
    flags[2u * g + ping.y] = v;
}

@compute @workgroup_size(WORKGROUP)
fn init(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    let fc = face_of(g, params);
    let cells = face_cells(fc.comp, fc.f);
    let fluid = type_at(cells[0]) == FLUID || type_at(cells[1]) == FLUID;
    set_valid(g, select(0u, 1u, fluid || has_weight(g)));
}

@compute @workgroup_size(WORKGROUP)
fn layer(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    if (valid_in(g) != 0u) {
        set_valid(g, 1u);
        return;
    }
    let fc = face_of(g, params);
    var sum = 0.0;
    var n = 0u;
    for (var axis = 0u; axis < 3u; axis++) {
        for (var s = -1; s <= 1; s += 2) {
            let nb = fc.f + s * unit(axis);
            if (any(nb < vec3<i32>(0)) || any(nb >= vec3<i32>(fc.d))) { continue; }
            let ng = fc.off + face_index(nb, fc.d);
            if (valid_in(ng) != 0u) {
                sum += grid_vel[ng];
                n += 1u;
            }
        }
    }
    if (n > 0u) {
        grid_vel[g] = sum / f32(n);
        set_valid(g, 1u);
    } else {
        set_valid(g, 0u);
    }
}

// Faces no layer reached carry no information: zero them rather than keep stale values.
@compute @workgroup_size(WORKGROUP)
fn finish(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let g = linear_id(wg, nwg, li);
    if (g >= num_faces(params)) { return; }
    if (valid_in(g) == 0u) { grid_vel[g] = 0.0; }
}
