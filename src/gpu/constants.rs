//! Values that Rust and WGSL must agree on, each defined once here.
//!
//! The include step (`gpu::wgsl`) offers these as the generated file `gpu/constants.wgsl`:
//! one WGSL `const` per Rust constant, same name, same value (f64 values as the nearest
//! f32, what the GPU computes with). prelude.wgsl and the render shaders include it, so a
//! shader never spells one of these numbers itself.
//!
//! This module imports nothing, so the CPU reference (which depends only on plain data) can
//! use it as well.

/// A constant's WGSL type and literal.
trait WgslLiteral {
    fn wgsl(&self) -> String;
}

impl WgslLiteral for u32 {
    fn wgsl(&self) -> String {
        format!("u32 = {self}u")
    }
}

impl WgslLiteral for usize {
    fn wgsl(&self) -> String {
        let v = u32::try_from(*self).expect("a shared usize constant fits a WGSL u32");
        v.wgsl()
    }
}

impl WgslLiteral for i32 {
    fn wgsl(&self) -> String {
        format!("i32 = {self}i")
    }
}

impl WgslLiteral for f32 {
    fn wgsl(&self) -> String {
        assert!(self.is_finite(), "a shared f32 constant is finite");
        // `{:?}` is the shortest text that reads back as exactly this f32; the `f` suffix
        // makes naga read it as an f32 (not through f64).
        format!("f32 = {self:?}f")
    }
}

impl WgslLiteral for f64 {
    fn wgsl(&self) -> String {
        (*self as f32).wgsl()
    }
}

macro_rules! shared_constants {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*

        /// `const NAME: type = value;` of every constant above, in order.
        fn declarations() -> Vec<String> {
            vec![$(format!("const {}: {};", stringify!($name), WgslLiteral::wgsl(&$name)),)*]
        }
    };
}

shared_constants! {
    // --- cell types ---
    /// Cell type: no liquid (or smoke cell that is not an obstacle).
    AIR: u32 = 0;
    /// Cell type: liquid (in the smoke mode every non-solid cell).
    FLUID: u32 = 1;
    /// Cell type: a scene solid or obstacle; cells outside the grid count as SOLID at rest.
    SOLID: u32 = 2;

    // --- `GridFields::solid` flags (per cell) ---
    /// A cell the particles never enter whose faces are all closed: SOLID in the solve.
    SOLID_CLOSED: u32 = 1;
    /// A cell whose centre lies inside a static solid while some of its faces are partly open
    /// (`GridFields::open`): the particles stay out of it, yet the pressure solve gives it
    /// an unknown (FLUID next to liquid), so the solid's true surface, not the cell's
    /// staircase, bounds the flow (src/scene/fractions.rs).
    SOLID_PARTIAL: u32 = 2;
    /// Open face fractions below this are closed (0): a sliver of a face would put a tiny
    /// weight into the pressure matrix and only raise its condition number.
    OPEN_FRACTION_MIN: f32 = 0.02;

    // --- physical constants ---
    /// Liquid density used for pressure and kinetic energy, kg/m^3.
    DENSITY: f64 = 1000.0;
    /// Air density (the smoke's fluid) for pressure and kinetic energy, kg/m^3.
    AIR_DENSITY: f64 = 1.2;
    /// A cell is FLUID when it holds a particle and its relative density (the wall-corrected
    /// mean P2G weight of its six faces over the rest weight, see src/sim/liquid/mark_cells.wgsl)
    /// reaches this value. With a smoothing kernel symmetric about the surface, a cell is at
    /// least half full exactly when its centre lies inside the liquid, so this is the liquid
    /// level set `0.5 - density` read at the cell centre: the FLUID cells count the liquid
    /// volume without bias (marking every cell that holds one particle overcounts a settled
    /// pool by half a layer and a splash by 20% and more), and the free-surface boundary
    /// (free_surface.wgsl) places p = 0 where the same level set crosses zero.
    FLUID_DENSITY_FRACTION: f32 = 0.5;
    // --- workgroups ---
    /// Threads per workgroup of the element-wise kernels (one item per thread).
    WORKGROUP: u32 = 64;
    /// Threads per workgroup of PCG's reductions and of the kernels that re-sum their
    /// partials.
    REDUCE_WG: u32 = 256;
    /// Upper bound on reduction workgroups; the finishing workgroup sums this many partials.
    MAX_REDUCE_GROUPS: u32 = 512;

    // --- particle-to-grid fixed point (see src/sim/p2g.rs for the overflow argument) ---
    /// Momentum w*v per m/s: 2^15.
    MOMENTUM_SCALE: f32 = 32768.0;
    /// Trilinear weight: 2^20.
    WEIGHT_SCALE: f32 = 1048576.0;

    // --- `SimParams::transfer` ---
    TRANSFER_FLIP: u32 = 0;
    TRANSFER_APIC: u32 = 1;

    // --- slots of `GridFields::counters` (atomics the stages write, read back per substep) ---
    /// FLUID cells (mark_cells.wgsl, smoke_mark.wgsl).
    COUNTER_FLUID_CELLS: usize = 0;
    /// Largest particle or cell-centre speed, f32 bits (stats.wgsl, smoke_stats.wgsl).
    COUNTER_MAX_SPEED: usize = 1;
    /// Largest particle x, or largest x holding dye, f32 bits (stats.wgsl, smoke_stats.wgsl).
    COUNTER_FRONT_X: usize = 2;
    /// Largest |div u| over FLUID cells after projection, f32 bits (divergence.wgsl).
    COUNTER_MAX_DIVERGENCE: usize = 3;
    /// Largest |density - 1| over FLUID cells, f32 bits (mark_cells.wgsl).
    COUNTER_DENSITY_ERROR_MAX: usize = 4;
    /// Sum of |density - 1| over FLUID cells in 1/DENSITY_ERROR_SCALE (mark_cells.wgsl).
    COUNTER_DENSITY_ERROR_SUM: usize = 5;
    /// Signed sum of theta - 1/2 over free-surface faces in 1/SURFACE_VOLUME_SCALE, i32 bits
    /// (build_matrix.wgsl).
    COUNTER_SURFACE_VOLUME: usize = 6;
    /// The volume correction's max|b|, max|r| (f32 bits) and iterations: three slots in a row,
    /// copied from its solve's `PcgStateHeader` by the host.
    COUNTER_CORRECTION_BB: usize = 8;
    COUNTER_CORRECTION_RR: usize = 9;
    COUNTER_CORRECTION_ITERATIONS: usize = 10;
    /// Particles after the inflow/outflow stage, its particles emitted and removed, and the
    /// particles it could not emit for want of room (flow.wgsl).
    COUNTER_PARTICLES: usize = 12;
    COUNTER_EMITTED: usize = 13;
    COUNTER_REMOVED: usize = 14;
    COUNTER_NOT_EMITTED: usize = 15;
    /// Slots in the counters buffer.
    COUNTERS: usize = 16;

    // --- words of the GPU clock (src/sim/core/clock.wgsl) ---
    /// The substep's length, f32 bits.
    CLOCK_DT: usize = 0;
    /// The CFL step before the frame's end cut it, f32 bits.
    CLOCK_CFL: usize = 1;
    /// 1 when the substep ends its frame.
    CLOCK_LAST: usize = 2;
    /// 1 when the substep runs; 0 when its frame had already ended (a gated substep,
    /// recorded ahead of knowing the frame's substep count: its dispatches are empty).
    CLOCK_RUN: usize = 3;
    /// What is left of the frame, in units of 2^-CLOCK_REST_SHIFT s: low and high words of
    /// a u64 (exact for any sum of f32 substeps above 2^-36 s in frames up to 32 s).
    CLOCK_REST_LO: usize = 4;
    CLOCK_REST_HI: usize = 5;
    /// The frame's substeps begun so far, this one included once it runs.
    CLOCK_STARTED: usize = 6;
    /// 1 once a substep has ended the frame.
    CLOCK_DONE: usize = 7;
    /// Words of the clock buffer.
    CLOCK_WORDS: usize = 8;
    /// The fixed-point scale of CLOCK_REST_LO/HI: one unit is 2^-59 s.
    CLOCK_REST_SHIFT: u32 = 59;
    /// Indirect dispatch sizes a gated substep may use (src/gpu/gate.rs).
    GATE_CAPACITY: usize = 1024;
    /// Fixed-point scale of COUNTER_DENSITY_ERROR_SUM: each cell adds at most
    /// DENSITY_ERROR_CLAMP * DENSITY_ERROR_SCALE = 256, so 2^24 FLUID cells fit in a u32.
    DENSITY_ERROR_SCALE: f32 = 64.0;
    /// Largest density error a cell adds to COUNTER_DENSITY_ERROR_SUM.
    DENSITY_ERROR_CLAMP: f32 = 4.0;
    /// Fixed-point scale of COUNTER_SURFACE_VOLUME; |theta - 1/2| <= 1/2 per face, so 2^21
    /// faces fit.
    SURFACE_VOLUME_SCALE: f32 = 1024.0;

    // --- PCG (src/sim/core/pressure/pcg.wgsl) ---
    /// `PcgStateHeader::status` while iterating.
    PCG_RUNNING: u32 = 0;
    /// `PcgStateHeader::status`: max|r| / max|b| reached the tolerance.
    PCG_CONVERGED: u32 = 1;
    /// `PcgStateHeader::status`: stopped at the iteration limit.
    PCG_ITERATION_LIMIT: u32 = 2;
    /// `PcgStateHeader::status`: d.q or r.z not positive.
    PCG_BREAKDOWN: u32 = 3;
    /// `PcgStateHeader::status`: still running when the iterations queued ahead of it ran
    /// out (a pipelined solve, which the host does not read before the projection).
    PCG_STOPPED: u32 = 4;
    /// Word of `PcgStateHeader::done` in the PCG state buffer: the preconditioners bind that
    /// buffer as plain words and test this one (checked against the struct in pcg.rs).
    PCG_DONE_WORD: usize = 6;

    // --- preconditioners (src/sim/core/pressure/precond.wgsl, src/sim/core/pressure/multigrid.wgsl) ---
    /// Modified incomplete Cholesky: fraction of the dropped fill moved to the diagonal.
    MIC_TAU: f64 = 0.97;
    /// MIC(0) safety: a pivot below this fraction of A's diagonal falls back to the diagonal.
    MIC_SIGMA: f64 = 0.25;
    /// Tiled MIC(0): fraction of the couplings dropped between tiles taken off the diagonal.
    MIC_TILE_THETA: f64 = 0.5;
    /// Tiled MIC(0): tiles are MIC_TILE_3D cells along each axis in 3D...
    MIC_TILE_3D: u32 = 8;
    /// ... and MIC_TILE_SLICE x MIC_TILE_SLICE on a one-cell-deep slice.
    MIC_TILE_SLICE: u32 = 16;
    /// Tiled MIC(0): cells of the largest tile, held in one workgroup's memory.
    MIC_TILE_MAX: u32 = if MIC_TILE_3D.pow(3) > MIC_TILE_SLICE.pow(2) {
        MIC_TILE_3D.pow(3)
    } else {
        MIC_TILE_SLICE.pow(2)
    };
    /// The coarsest multigrid level has at most this many cells along its longest axis.
    MG_COARSEST: u32 = 8;
    /// Cells of the coarsest level at most: its solve holds them in one workgroup's memory.
    MG_COARSE_MAX: u32 = MG_COARSEST * MG_COARSEST * MG_COARSEST;
    /// Symmetric red-black pairs on the coarsest level. A constant on the GPU: lavapipe 22.3
    /// (Mesa's software Vulkan driver) leaked ~1 MB of host memory per dispatch of that kernel
    /// while the count came from a uniform.
    MG_COARSE_SWEEPS: u32 = 24;
    /// Threads of the coarsest level's single workgroup ...
    MG_COARSE_WG: u32 = 256;
    /// ... each of which owns this many of its cells (li, li + MG_COARSE_WG, ...).
    MG_COARSE_PER_THREAD: u32 = MG_COARSE_MAX.div_ceil(MG_COARSE_WG);
    /// Multigrid levels of at most this many cells run, down to the coarsest, in one
    /// workgroup and one dispatch per V-cycle (sim/core/pressure/mg_tail.wgsl) instead of a
    /// dispatch per step. Measured on an H100 (benchmarks/history.md): levels of up to ~400 cells
    /// are cheaper in one workgroup (the plume 1.24-1.31x, the double dam break
    /// 1.19-1.27x substeps/s), levels of 2048-4096 cells dearer (a 16^3 level added ~1 ms
    /// per V-cycle at 256^3).
    MG_TAIL_CELLS: u32 = 1024;
    /// Levels that one-workgroup tail holds at most (its uniform array's length).
    MG_TAIL_LEVELS: u32 = 16;
    /// Red-black Gauss-Seidel sweeps over all cells of a level before (and, mirrored, after)
    /// the coarse correction ...
    MG_SWEEPS: u32 = 2;
    /// ... followed by this many over the boundary cells alone.
    MG_BOUNDARY_SWEEPS: u32 = 1;
    /// Threads of a tiled MIC(0) workgroup (one workgroup per tile).
    MIC_TILE_WG: u32 = 256;

    // --- the liquid's free surface and volume correction (src/sim/core/free_surface.wgsl,
    // src/sim/liquid/volume_correction.wgsl; the reasons are written there) ---
    /// Smallest surface fraction theta.
    THETA_MIN: f64 = 0.05;
    /// Correction of the linear interpolation for the filtered density's step profile.
    SURFACE_CURVE: f64 = 0.021;
    /// The least |grad phi| (per cell) at which the curvature is taken
    /// (src/sim/core/tension.wgsl): the filtered density is flat far from the surface,
    /// where its level sets mean nothing and the curvature is left 0.
    TENSION_MIN_GRADIENT: f64 = 0.01;
    /// The height function's columns reach this many cells to each side of the cell
    /// (src/sim/core/tension.wgsl): seven cells, the filtered density's step (two to three
    /// cells wide, wider along a column the surface crosses at a slant) whole inside.
    TENSION_REACH: u32 = 3;
    /// A column holds the whole surface when its liquid end is at least this full and its
    /// air end at most 1 - this: the step is inside it, not a slope running through it.
    TENSION_FULL: f64 = 0.75;
    /// The filtered density spreads the surface sideways: each particle's P2G weight is a
    /// tent one cell wide each way (variance 1/6 cell^2 along each axis across a column)
    /// and a cell's density averages its six faces (two of them half a cell to each side:
    /// 1/12 more), so the columns' heights are the surface's heights blurred by a kernel of
    /// variance s^2 = 1/4 cell^2 per axis. The height function undoes it to second order,
    /// H = H_blurred - (s^2 / 2) lap H_blurred: this is s^2 / 2.
    TENSION_SPREAD: f64 = 0.125;
    /// Largest excess density corrected per substep.
    MAX_EXCESS: f64 = 0.5;
    /// Density errors left alone around the rest density.
    TOLERATED: f64 = 0.2;
    /// Largest particle move per axis per substep, in cells.
    MAX_SHIFT: f64 = 0.5;

    // --- particle spacing (src/sim/liquid/spacing.wgsl) ---
    /// The end of a cell's list of particles.
    SPACING_LIST_END: u32 = 4294967295;
    /// Fixed point of the summed push: 2^20 units per cell size.
    SPACING_SHIFT_SCALE: f32 = 1048576.0;

    // --- rigid bodies (src/sim/bodies/coupling.wgsl) ---
    /// Most rigid bodies in a scene (the GPU keeps this many body slots).
    MAX_BODIES: usize = 64;
    /// The least fraction of the distance between two faces' centres at which the viscosity
    /// step puts a dynamic body's surface (src/sim/bodies/viscous.wgsl): a weight of at
    /// most ten times a whole link's.
    WALL_THETA_MIN: f64 = 0.1;
    /// `Body::centre.w`: the body is a box.
    BODY_SHAPE_BOX: f32 = 1.0;
    /// `Body::centre.w`: the body is a sphere.
    BODY_SHAPE_SPHERE: f32 = 2.0;
    /// Separate regions of a closed smoke box whose pressure right-hand sides are made
    /// compatible one by one; smaller regions beyond these become solid at rest.
    MAX_REGIONS: usize = 64;
    /// `region` of a cell that is solid, or of a region that becomes solid at rest.
    NO_REGION: u32 = 4294967295;

    // --- smoke (src/sim/smoke/common.wgsl) ---
    /// Dye density (mean of r, g, b) below which a cell does not count as the smoke's front.
    FRONT_DYE: f32 = 1e-3;
    /// `SmokeParams::scheme`: semi-Lagrangian advection.
    SCHEME_SL: u32 = 0;
    /// `SmokeParams::scheme`: MacCormack advection.
    SCHEME_MACCORMACK: u32 = 1;
    /// `Emitter::kind`: box [lo, hi]; dye and temperature raised to the emitter's values.
    EMIT_BOX: u32 = 0;
    /// `Emitter::kind`: disc (centre lo.xyz, radius lo.w), raised like a box.
    EMIT_DISC: u32 = 1;
    /// `Emitter::kind`: gaussian splat (centre lo.xyz, radius lo.w), dye and velocity added.
    EMIT_SPLAT: u32 = 2;

    // --- liquid inflow and outflow (src/sim/liquid/flow.wgsl) ---
    /// Most emitters, and most drains, of a scene.
    MAX_EMITTERS: u32 = 16;
    MAX_DRAINS: u32 = 16;
    /// `FlowShape::kind`: box [lo, hi].
    FLOW_BOX: u32 = 0;
    /// `FlowShape::kind`: sphere (centre a.xyz, radius a.w).
    FLOW_SPHERE: u32 = 1;
    /// `FlowShape::kind`: cylinder (centre a.xyz, radius a.w, unit axis b.xyz, half length b.w).
    FLOW_CYLINDER: u32 = 2;
    /// `FlowParams::slot_rank` of a sub-cell that gets no particle.
    FLOW_NONE: u32 = 4294967295;

    // --- rendering ---
    /// `View::mode` of render_particles.wgsl: colour by speed.
    PARTICLE_COLOR_SPEED: u32 = 0;
    /// `View::mode` of render_particles.wgsl: colour by the FLIP velocity change.
    PARTICLE_COLOR_FLIP_DELTA: u32 = 1;
    /// `View::cut` of render_particles.wgsl: particles in front of the slice are drawn...
    SLICE_CUT_DRAW: u32 = 0;
    /// ... faded (screen-door, one pixel in four) ...
    SLICE_CUT_FADE: u32 = 1;
    /// ... or hidden.
    SLICE_CUT_HIDE: u32 = 2;
    /// The screen-space liquid's depth, thickness and smoothing passes run at 1/LIQUID_SCALE
    /// of the target's resolution in each direction.
    LIQUID_SCALE: i32 = 2;
    /// Taps on each side of a pixel of the surface's depth filter.
    SURFACE_TAPS: i32 = 16;
    /// Widest radius of the surface's depth filter, pixels.
    SURFACE_MAX_RADIUS_PX: f64 = 16.0;
}

/// Path under which the include step offers [`wgsl`] to `//!include`.
pub const WGSL_FILE: &str = "gpu/constants.wgsl";

/// The WGSL declarations of every constant of this module.
pub fn wgsl() -> String {
    let mut s = String::from("// Generated from src/gpu/constants.rs: change the values there.\n");
    for d in declarations() {
        s.push_str(&d);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_as_the_same_f32() {
        for v in [0.05f64, 0.021, 0.97, 1e-7, 1e20, 16.0] {
            let w = v.wgsl();
            let lit = w.trim_start_matches("f32 = ").trim_end_matches('f');
            assert_eq!(
                lit.parse::<f32>().unwrap().to_bits(),
                (v as f32).to_bits(),
                "{w}"
            );
        }
        assert_eq!(7u32.wgsl(), "u32 = 7u");
        assert_eq!((-3i32).wgsl(), "i32 = -3i");
    }

    #[test]
    fn counter_slots_are_distinct_and_inside_the_buffer() {
        let slots = [
            COUNTER_FLUID_CELLS,
            COUNTER_MAX_SPEED,
            COUNTER_FRONT_X,
            COUNTER_MAX_DIVERGENCE,
            COUNTER_DENSITY_ERROR_MAX,
            COUNTER_DENSITY_ERROR_SUM,
            COUNTER_SURFACE_VOLUME,
            COUNTER_CORRECTION_BB,
            COUNTER_CORRECTION_RR,
            COUNTER_CORRECTION_ITERATIONS,
            COUNTER_PARTICLES,
            COUNTER_EMITTED,
            COUNTER_REMOVED,
            COUNTER_NOT_EMITTED,
        ];
        for (i, a) in slots.iter().enumerate() {
            assert!(*a < COUNTERS);
            assert!(slots[i + 1..].iter().all(|b| b != a), "slot {a} used twice");
        }
        assert_eq!(COUNTER_CORRECTION_RR, COUNTER_CORRECTION_BB + 1);
        assert_eq!(COUNTER_CORRECTION_ITERATIONS, COUNTER_CORRECTION_BB + 2);
    }
}
