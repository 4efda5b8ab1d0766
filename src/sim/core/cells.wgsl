// Cell-type lookups. Include after declaring `params: SimParams` and `cell_type: array<u32>`.
// Cells outside the grid are SOLID: the domain is a closed box.
fn type_at(c: vec3<i32>) -> u32 {
    if (!in_grid(c, params.n)) { return SOLID; }
    return cell_type[cell_index(c, params.n)];
}
