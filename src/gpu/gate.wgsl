//!include gpu/constants.wgsl
// The gate of a substep recorded ahead (src/gpu/gate.rs): before each of its command
// buffers, every indirect dispatch size the host registered is set to its workgroup counts
// when the GPU's clock let the substep run, and to zero when its frame had already ended.

// The clock's words (CLOCK_RUN: 1 when the substep runs).
@group(0) @binding(0) var<storage, read> clock: array<u32>;
// table[0]: the sizes registered; then three words (x, y, z workgroups) per size.
@group(0) @binding(1) var<storage, read> table: array<u32>;
// The indirect arguments the gated dispatches read: three words per size.
@group(0) @binding(2) var<storage, read_write> live: array<u32>;

@compute @workgroup_size(64)
fn apply(@builtin(local_invocation_index) li: u32) {
    let words = min(table[0], GATE_CAPACITY) * 3u;
    let run = clock[CLOCK_RUN] != 0u;
    for (var i = li; i < words; i += 64u) {
        live[i] = select(0u, table[1u + i], run);
    }
}
