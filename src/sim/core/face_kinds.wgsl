// What a face is to the viscosity solve (src/reference/diffusion.rs, `FaceKind`). Include
// after sim/core/cells.wgsl (it reads `type_at`), in a shader that binds `cover` (the
// bodies' shares of the faces, src/sim/bodies/coupling.wgsl) and says whether it holds
// them (`covers_on`).
const UNKNOWN: u32 = 0u;
const FULLY_SOLID: u32 = 1u;
const FIXED: u32 = 2u;
const AIR_FACE: u32 = 3u;

// The body (index + 1) that covers at least half of face f of component `comp`, or 0.
// Where bodies cut cells (the liquid's open fractions) their cells stay FLUID for the
// pressure, and these faces are where the body is for the viscosity.
fn covering(comp: u32, f: vec3<i32>) -> u32 {
    if (!covers_on()) { return 0u; }
    let w = cover[face_offset(comp, params) + face_index(f, face_dims(comp, params.n))];
    if (2u * (w & 0xffffffu) < 0xffffffu) { return 0u; }
    return w >> 24u;
}

// The liquid's share of face f's control volume, its mass in the viscosity step: 1 less
// the share a body covers (what the pressure solve and G2P count there: a body's exchange
// with the liquid then moves the same momentum both ways), 1 without bodies.
fn face_mass(comp: u32, f: vec3<i32>) -> f32 {
    if (!covers_on()) { return 1.0; }
    let w = cover[face_offset(comp, params) + face_index(f, face_dims(comp, params.n))];
    if ((w >> 24u) == 0u) { return 1.0; }
    return 1.0 - f32(w & 0xffffffu) / 16777215.0;
}

fn face_kind(comp: u32, f: vec3<i32>) -> u32 {
    let ta = type_at(f - unit(comp));
    let tb = type_at(f);
    let sa = ta == SOLID;
    let sb = tb == SOLID;
    if (sa && sb) { return FULLY_SOLID; }
    if (sa || sb || covering(comp, f) != 0u) { return FIXED; }
    if (ta == FLUID || tb == FLUID) { return UNKNOWN; }
    return AIR_FACE;
}

