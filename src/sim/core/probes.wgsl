//!include sim/core/prelude.wgsl
//!include sim/core/cells.wgsl
// The scene's probes, sampled after a full substep (src/sim/core/probes.rs): one column per
// item, written into row `row_count[0]` of `rows` (the substep's length first), which then
// moves on. A substep recorded ahead that did not run writes no row, so the frame's rows are
// its substeps that ran. The f64 reference is src/reference/probes.rs.

struct ProbeParams {
    items: u32,
    stride: u32,     // floats per row: the substep's length, then one per item
    capacity: u32,   // rows
    smoke: u32,      // 1: `dye` holds the smoke's dye (rgb) and temperature (w)
    rho: f32,        // the fluid's density, kg/m^3: p = phi rho / dt
    face_area: f32,  // m^2 of a cell face on a solid (h^2, or h times a slice's depth)
    _pad0: u32,
    _pad1: u32,
};

struct ProbeItem {
    kind: u32,
    axis: u32,       // a velocity's component, a sensor's normal, a force's column (0-5)
    first: u32,      // a sensor's wall plane (face index along `axis`); a force's first face
    count: u32,      // a force's faces
    pos: vec4<f32>,  // the point (m) and, for a sensor, the disc's radius
    aux: vec4<f32>,  // a sensor's normal sign (x); a force's moment centre (xyz)
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> probe: ProbeParams;
@group(0) @binding(2) var<storage, read> items: array<ProbeItem>;
// A force's faces: (the fluid cell next to the solid, its axis | 4 when the fluid lies on
// the face's + side).
@group(0) @binding(3) var<storage, read> faces: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> cell_type: array<u32>;
@group(0) @binding(5) var<storage, read> p: array<f32>;          // PcgVectors::p (phi)
@group(0) @binding(6) var<storage, read> grid_vel: array<f32>;
@group(0) @binding(7) var<storage, read> surface: array<f32>;    // the filtered density
@group(0) @binding(8) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> rows: array<f32>;
@group(0) @binding(10) var<storage, read_write> row_count: array<u32>;

const PROBE_PRESSURE: u32 = 0u;
const PROBE_VELOCITY: u32 = 1u;
const PROBE_DENSITY: u32 = 2u;
const PROBE_LEVEL: u32 = 3u;
const PROBE_TEMPERATURE: u32 = 4u;
const PROBE_DYE: u32 = 5u;
const PROBE_GAUGE: u32 = 6u;
const PROBE_SENSOR: u32 = 7u;
const PROBE_FORCE: u32 = 8u;
const TWO_PI: f32 = 6.2831853;

// The pressure (Pa) of cell `i`: the solve's phi times rho / dt in FLUID cells, 0 in AIR
// (the free surface's p = 0).
fn cell_pressure(i: u32) -> f32 {
    if (cell_type[i] != FLUID) { return 0.0; }
    return p[i] * probe.rho / max(params.dt, 1e-12);
}

fn cell_value(i: u32, kind: u32) -> f32 {
    switch kind {
        case PROBE_PRESSURE: { return cell_pressure(i); }
        case PROBE_DENSITY: { return surface[i]; }
        case PROBE_LEVEL: { return 0.5 - surface[i]; }
        case PROBE_TEMPERATURE: { return dye[i].w; }
        default: { let d = dye[i]; return d.x + d.y + d.z; }
    }
}

// Trilinear interpolation of a cell-centred quantity at `x` over the cells that are not
// SOLID (their weights renormalised); 0 when all eight are SOLID.
fn cell_sample(x: vec3<f32>, kind: u32) -> f32 {
    let g = x * params.inv_h - vec3<f32>(0.5);
    let base = vec3<i32>(floor(g));
    let f = g - floor(g);
    let hi = vec3<i32>(params.n) - vec3<i32>(1);
    var sum = 0.0;
    var wsum = 0.0;
    for (var corner = 0u; corner < 8u; corner++) {
        let up = vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u);
        let c = clamp(base + select(vec3<i32>(0), vec3<i32>(1), up), vec3<i32>(0), hi);
        let w3 = select(vec3<f32>(1.0) - f, f, up);
        let w = w3.x * w3.y * w3.z;
        let i = cell_index(c, params.n);
        if (cell_type[i] == SOLID || w == 0.0) { continue; }
        sum += w * cell_value(i, kind);
        wsum += w;
    }
    if (wsum == 0.0) { return 0.0; }
    return sum / wsum;
}

// A face velocity component at `x`: the same trilinear stencil as G2P.
fn velocity_sample(x: vec3<f32>, comp: u32) -> f32 {
    let s = stencil(comp, x, params);
    let d = face_dims(comp, params.n);
    let off = face_offset(comp, params);
    var sum = 0.0;
    for (var corner = 0u; corner < 8u; corner++) {
        sum += stencil_weight(s, corner) * grid_vel[off + face_index(stencil_node(s, corner), d)];
    }
    return sum;
}

// The relative density of row `j` at (x, z), bilinear over the row's cells that are not
// SOLID; -1 when all four are.
fn row_density(x: f32, z: f32, j: i32) -> f32 {
    let gx = x * params.inv_h - 0.5;
    let gz = z * params.inv_h - 0.5;
    let bx = i32(floor(gx));
    let bz = i32(floor(gz));
    let fx = gx - floor(gx);
    let fz = gz - floor(gz);
    var sum = 0.0;
    var wsum = 0.0;
    for (var corner = 0u; corner < 4u; corner++) {
        let ux = (corner & 1u) != 0u;
        let uz = (corner & 2u) != 0u;
        let cx = clamp(bx + select(0, 1, ux), 0, i32(params.n.x) - 1);
        let cz = clamp(bz + select(0, 1, uz), 0, i32(params.n.z) - 1);
        let w = select(1.0 - fx, fx, ux) * select(1.0 - fz, fz, uz);
        let i = cell_index(vec3<i32>(cx, j, cz), params.n);
        if (cell_type[i] == SOLID || w == 0.0) { continue; }
        sum += w * surface[i];
        wsum += w;
    }
    if (wsum == 0.0) { return -1.0; }
    return sum / wsum;
}

// A wave gauge: where the level set 0.5 - density first crosses zero going up from the
// lowest row that is not SOLID, with free_surface.wgsl's correction of the crossing.
fn gauge(x: f32, z: f32) -> f32 {
    let ny = i32(params.n.y);
    var j = 0;
    while (j < ny && row_density(x, z, j) < 0.0) { j++; }
    if (j >= ny) { return 0.0; }
    var below = row_density(x, z, j);
    if (below < 0.5) { return f32(j) * params.h; }
    for (var k = j + 1; k < ny; k++) {
        let d = row_density(x, z, k);
        if (d < 0.5) {
            // d < 0 (a SOLID row above the liquid) counts as empty.
            let above = max(d, 0.0);
            let t = (below - 0.5) / (below - above);
            let tc = t - SURFACE_CURVE * sin(TWO_PI * t);
            return (f32(k) - 0.5 + tc) * params.h;
        }
        below = d;
    }
    return f32(ny) * params.h;
}

// The wall pressure at `x` on the fluid layer `layer` next to a wall of normal `axis`
// (sign `s` into the fluid): the layer's cell pressures interpolated along the wall, each
// moved from its centre to the wall by the hydrostatic step rho g . (x_wall - x_centre).
fn wall_pressure(x: vec3<f32>, axis: u32, layer: i32, s: f32) -> f32 {
    let g = x * params.inv_h - vec3<f32>(0.5);
    let base = vec3<i32>(floor(g));
    let f = g - floor(g);
    let hi = vec3<i32>(params.n) - vec3<i32>(1);
    let step = probe.rho * params.gravity[axis] * (-s * 0.5 * params.h);
    var sum = 0.0;
    var wsum = 0.0;
    for (var corner = 0u; corner < 8u; corner++) {
        let up = vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u);
        if (up[axis]) { continue; }
        var c = clamp(base + select(vec3<i32>(0), vec3<i32>(1), up), vec3<i32>(0), hi);
        c[axis] = layer;
        var w3 = select(vec3<f32>(1.0) - f, f, up);
        w3[axis] = 1.0;
        let w = w3.x * w3.y * w3.z;
        let i = cell_index(c, params.n);
        if (cell_type[i] == SOLID || w == 0.0) { continue; }
        var value = 0.0;
        if (cell_type[i] == FLUID) { value = cell_pressure(i) + step; }
        sum += w * value;
        wsum += w;
    }
    if (wsum == 0.0) { return 0.0; }
    return sum / wsum;
}

// A sensor: the wall pressure averaged over the points of a 5 x 5 lattice on the disc's
// square that lie in the disc (21 points; the centre alone for radius 0). A slice's disc
// is a segment along its wall.
fn sensor(it: ProbeItem) -> f32 {
    let axis = it.axis;
    let s = it.aux.x;
    let layer = select(i32(it.first) - 1, i32(it.first), s > 0.0);
    let r = it.pos.w;
    let slice = params.n.z == 1u;
    var t1 = (axis + 1u) % 3u;
    var t2 = (axis + 2u) % 3u;
    if (slice) { t1 = 1u - axis; t2 = 2u; }
    var sum = 0.0;
    var n = 0.0;
    for (var a = -2; a <= 2; a++) {
        for (var b = -2; b <= 2; b++) {
            if (slice && b != 0) { continue; }
            if (a * a + b * b > 5) { continue; }
            var x = it.pos.xyz;
            x[t1] += 0.5 * r * f32(a);
            if (!slice) { x[t2] += 0.5 * r * f32(b); }
            sum += wall_pressure(x, axis, layer, s);
            n += 1.0;
            if (r == 0.0) { return sum; }
        }
    }
    return sum / n;
}

// Column `col` (0-2 force, 3-5 moment) of the pressure load on a solid's faces.
fn force(it: ProbeItem) -> f32 {
    var total = 0.0;
    for (var k = 0u; k < it.count; k++) {
        let fc = faces[it.first + k];
        let axis = fc.y & 3u;
        let s = select(-1.0, 1.0, (fc.y & 4u) != 0u);
        let c = cell_coord(fc.x, params.n);
        var x = (vec3<f32>(c) + vec3<f32>(0.5)) * params.h;
        x[axis] -= s * 0.5 * params.h;
        var pf = 0.0;
        if (cell_type[fc.x] == FLUID) {
            pf = cell_pressure(fc.x) + probe.rho * params.gravity[axis] * (-s * 0.5 * params.h);
        }
        // The fluid pushes the solid away from itself: along -s e_axis.
        var fv = vec3<f32>(0.0);
        fv[axis] = -s * pf * probe.face_area;
        if (it.axis < 3u) {
            total += fv[it.axis];
        } else {
            total += cross(x - it.aux.xyz, fv)[it.axis - 3u];
        }
    }
    return total;
}

fn item_value(it: ProbeItem) -> f32 {
    switch it.kind {
        case PROBE_VELOCITY: { return velocity_sample(it.pos.xyz, it.axis); }
        case PROBE_GAUGE: { return gauge(it.pos.x, it.pos.z); }
        case PROBE_SENSOR: { return sensor(it); }
        case PROBE_FORCE: { return force(it); }
        case PROBE_PRESSURE, PROBE_DENSITY, PROBE_LEVEL, PROBE_TEMPERATURE, PROBE_DYE: {
            return cell_sample(it.pos.xyz, it.kind);
        }
        // A column the host fills (a body's force).
        default: { return 0.0; }
    }
}

@compute @workgroup_size(WORKGROUP)
fn sample(@builtin(local_invocation_index) li: u32) {
    let row = min(row_count[0], probe.capacity - 1u);
    let base = row * probe.stride;
    if (li == 0u) { rows[base] = params.dt; }
    for (var i = li; i < probe.items; i += WORKGROUP) {
        rows[base + 1u + i] = item_value(items[i]);
    }
    storageBarrier();
    workgroupBarrier();
    if (li == 0u) { row_count[0] = min(row + 1u, probe.capacity); }
}
