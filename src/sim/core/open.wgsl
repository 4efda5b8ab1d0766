// Cut faces: the open fraction of every face that the scene's static solids leave to the
// fluid (src/scene/fractions.rs), and each face's weight in the pressure solve. Include after
// cells.wgsl and after declaring `open: array<f32>` (GridFields::open) and, for
// `covered_velocity`, `solid: array<u32>` and `solid_vel: array<vec4<f32>>`.
// A scene whose solids are their own staircase binds a one-word placeholder: every face is
// then open.

fn face_open(g: u32) -> f32 {
    if (arrayLength(&open) < num_faces(params)) { return 1.0; }
    return open[g];
}

// Global index (over u, v, w) of face `f` of component `comp`.
fn face_slot(comp: u32, f: vec3<i32>) -> u32 {
    return face_offset(comp, params) + face_index(f, face_dims(comp, params.n));
}

// Global index of the face of cell `x` along `comp`, its lower (`up` false) or upper one.
fn cell_face(x: vec3<i32>, comp: u32, up: bool) -> u32 {
    return face_slot(comp, select(x, x + unit(comp), up));
}

// The weight of face `g` (component `comp`, face coordinates `f`) in the pressure solve:
// 0 next to a SOLID cell (the face carries the solid's velocity), else its open fraction.
fn face_weight(comp: u32, f: vec3<i32>, g: u32) -> f32 {
    let cells = face_cells(comp, f);
    if (type_at(cells[0]) == SOLID || type_at(cells[1]) == SOLID) { return 0.0; }
    return face_open(g);
}
