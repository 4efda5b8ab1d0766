//! Multigrid V-cycle preconditioner on the GPU. The algorithm and its reasons are
//! documented with the f64 reference in src/reference/multigrid.rs.
//!
//! The large levels run a dispatch per step (multigrid.wgsl), each over all of the level's
//! cells. The small levels at the bottom of the cycle, from the first of at most
//! [`TAIL_CELLS`] cells down to the coarsest, run in one workgroup and one dispatch per
//! cycle (mg_tail.wgsl): the same steps in the same order, with barriers between them. On a
//! GPU a small level's step is all launch latency (~6 us on an H100 whatever its size), so
//! the tail takes the 14 dispatches per small level down to one for all of them; but one
//! workgroup works through a step's cells slowly, so only levels of a few hundred cells
//! gain (the threshold's measurements are with [`TAIL_CELLS`]). Both kernels run the
//! per-cell code of mg_common.wgsl, so the numbers do not change.

use super::PcgVectors;
use crate::gpu::{
    read_buffer_range, storage_buffer, uniform_buffer, Bindable, Entry, GpuContext, GpuError,
    Kernel,
};
use crate::sim::core::fields::GridFields;
use bytemuck::{Pod, Zeroable};

/// Extra red-black sweeps over the boundary cells.
pub use crate::gpu::constants::MG_BOUNDARY_SWEEPS as BOUNDARY_SWEEPS;
/// The coarsest level has at most this many cells along its longest axis (its cells fit
/// the coarse solve's workgroup memory, `MG_COARSE_MAX`).
pub use crate::gpu::constants::MG_COARSEST as COARSEST;
/// Symmetric red-black pairs on the coarsest level (a WGSL constant too).
pub use crate::gpu::constants::MG_COARSE_SWEEPS as COARSE_SWEEPS;
/// Red-black sweeps before and after the coarse correction.
pub use crate::gpu::constants::MG_SWEEPS as SWEEPS;
/// Levels of at most this many cells run in the one-workgroup tail.
pub use crate::gpu::constants::MG_TAIL_CELLS as TAIL_CELLS;
use crate::gpu::constants::MG_TAIL_LEVELS as TAIL_LEVELS;

crate::kernel_entries!(
    /// The entry points of multigrid.wgsl.
    MultigridEntries { coarsen, build_coarse, weights, smooth_first, smooth_red, smooth_black, boundary_red, boundary_black, residual, restrict_residual, prolong }
);

crate::kernel_entries!(
    /// The entry points of mg_tail.wgsl.
    TailEntries { tail_setup, tail_cycle }
);

/// Mirror of `MgLevel` in mg_common.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct MgLevelParams {
    pub n: [u32; 3],
    pub cells: u32,
    pub nc: [u32; 3],
    pub coarse_cells: u32,
    pub ratio: [u32; 3],
    pub scale: f32,
    /// First element of this level in its arrays (its place in the tail's packed buffers;
    /// 0 for a level with buffers of its own).
    pub off: u32,
    /// First element of the next coarser level in its arrays.
    pub coff: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<MgLevelParams>() == 64);
crate::wgsl_mirror!(mg_level_layout: MgLevelParams = "mg_common.wgsl" MgLevel {
    n: n,
    cells: cells,
    nc: nc,
    coarse_cells: coarse_cells,
    ratio: ratio,
    scale: scale,
    off: off,
    coff: coff,
    _pad1: _pad[0],
    _pad2: _pad[1],
});

/// The cells of the tail's levels start at multiples of this many elements in the packed
/// buffers (whole buffers are bound and indexed from a level's offset; the alignment keeps
/// each level's first cell at the start of a 256-byte line).
const PACK_ALIGN: u32 = 64;

/// The tail's threshold on an adapter: [`TAIL_CELLS`] on a GPU; 0 (the coarsest level
/// alone) on a CPU adapter, which runs a workgroup on one thread and so gains nothing from
/// fewer launches (lavapipe took 1.4x longer per substep of the default scene with a
/// 2048-cell level in the tail, and its 22.3 release leaks host memory on the tail's
/// uniform-bounded loops); the environment's `EDDY_MG_TAIL_CELLS` over both, for
/// benchmarks that compare thresholds on one adapter. The numbers are the same whichever
/// it is.
pub fn tail_cells(info: &wgpu::AdapterInfo) -> u32 {
    let env = std::env::var("EDDY_MG_TAIL_CELLS").ok();
    let given = env.as_deref().and_then(|v| match v.trim().parse() {
        Ok(cells) => Some(cells),
        Err(_) => {
            log::warn!(
                "EDDY_MG_TAIL_CELLS={v:?} is not a cell count; the adapter's default applies"
            );
            None
        }
    });
    match given {
        Some(cells) => cells,
        None if info.device_type == wgpu::DeviceType::Cpu => 0,
        None => TAIL_CELLS,
    }
}

/// The levels of a grid: dimensions by 2x coarsening of every axis longer than one cell,
/// until the longest axis has at most [`COARSEST`] cells, and where the one-workgroup tail
/// starts. One plan sizes every buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct MgPlan {
    pub dims: Vec<[u32; 3]>,
    /// The tail's first level: the first coarse level of at most the threshold's cells (the
    /// coarsest when none is), or level 0 when it is the only one. At most
    /// [`TAIL_LEVELS`] levels long.
    pub tail: usize,
}

impl MgPlan {
    /// The plan with a GPU's tail ([`TAIL_CELLS`]).
    pub fn new(n: [u32; 3]) -> Self {
        Self::with_tail_cells(n, TAIL_CELLS)
    }

    pub fn with_tail_cells(n: [u32; 3], tail_cells: u32) -> Self {
        let mut dims = vec![n];
        loop {
            let d = *dims.last().unwrap_or(&n);
            if d.iter().copied().max().unwrap_or(1) <= COARSEST {
                break;
            }
            dims.push(d.map(|x| if x > 1 { x.div_ceil(2) } else { 1 }));
        }
        let last = dims.len() - 1;
        let cells = |d: &[u32; 3]| d.iter().product::<u32>();
        let first_small = (1..last)
            .find(|&l| cells(&dims[l]) <= tail_cells)
            .unwrap_or(last);
        let tail = first_small.max(last + 1 - (TAIL_LEVELS as usize).min(last + 1));
        Self { dims, tail }
    }

    pub fn levels(&self) -> usize {
        self.dims.len()
    }

    pub fn cells(&self, l: usize) -> u32 {
        self.dims[l].iter().product()
    }

    /// Whether level `l` lives in the tail's packed buffers (a tail that starts at level 0
    /// uses PCG's vectors instead).
    fn packed(&self, l: usize) -> bool {
        l >= self.tail && self.tail > 0
    }

    /// First element of level `l` in its arrays.
    pub fn offset(&self, l: usize) -> u32 {
        if !self.packed(l) {
            return 0;
        }
        (self.tail..l)
            .map(|k| self.cells(k).next_multiple_of(PACK_ALIGN))
            .sum()
    }

    /// Elements of the tail's packed arrays.
    fn packed_len(&self) -> u64 {
        if self.tail == 0 {
            return 0;
        }
        self.offset(self.levels() - 1) as u64 + self.cells(self.levels() - 1) as u64
    }

    /// Bytes of the levels' own buffers (level 0 uses PCG's vectors): matrix (16 B),
    /// types, solution, right-hand side and residual (4 B each) per coarse cell, the weight
    /// sums with the boundary flags in their top bit (4 B per cell of every level but the
    /// coarsest, and of the coarsest too where it is packed), and the uniforms and
    /// placeholders.
    pub fn bytes(&self) -> u64 {
        let n = self.levels();
        let own: u64 = (1..self.tail.max(1))
            .map(|l| self.cells(l) as u64 * 32)
            .sum();
        let per_cell: u64 = (0..self.tail.min(n - 1))
            .map(|l| self.cells(l) as u64 * 4)
            .sum();
        own + per_cell + self.packed_len() * 36 + (n as u64 + 1) * 256 + 5 * 16
    }

    fn params(&self, l: usize) -> MgLevelParams {
        let n = self.dims[l];
        let (nc, ratio) = match self.dims.get(l + 1) {
            Some(c) => (*c, [0, 1, 2].map(|a| if c[a] < n[a] { 2 } else { 1 })),
            None => ([0; 3], [1; 3]),
        };
        let k = ratio.iter().filter(|&&r| r == 2).count() as i32;
        MgLevelParams {
            n,
            cells: n.iter().product(),
            nc,
            coarse_cells: nc.iter().product(),
            ratio,
            scale: 4.0 / 2f32.powi(k),
            off: self.offset(l),
            coff: if l + 1 < self.levels() {
                self.offset(l + 1)
            } else {
                0
            },
            _pad: [0; 2],
        }
    }
}

/// Buffers of one coarse level: buffers of its own (offset 0), or the tail's packed
/// buffers, where its cells start at element `offset`.
pub struct MgLevelBuffers {
    pub a: wgpu::Buffer,
    pub types: wgpu::Buffer,
    /// The level's solution (its correction to the finer level).
    pub x: wgpu::Buffer,
    /// Right-hand side: the restricted residual of the finer level.
    pub b: wgpu::Buffer,
    /// Residual after pre-smoothing.
    pub res: wgpu::Buffer,
    pub offset: u64,
    pub cells: u64,
}

impl MgLevelBuffers {
    /// This level's words of `buffer` (one of its 4-byte arrays: types, x, b or res).
    pub fn read<T: Pod>(
        &self,
        ctx: &GpuContext,
        buffer: &wgpu::Buffer,
    ) -> Result<Vec<T>, GpuError> {
        read_buffer_range(ctx, buffer, self.offset * 4, self.cells * 4)
    }
}

pub struct Multigrid {
    pub plan: MgPlan,
    kernel: Kernel,
    e: MultigridEntries,
    tail_kernel: Kernel,
    t: TailEntries,
    /// Coarse levels 1.. (level 0 is PCG's z, r, t and the grid's cell types).
    pub coarse: Vec<MgLevelBuffers>,
    /// Bind groups of the levels before the tail.
    groups: Vec<wgpu::BindGroup>,
    tail_group: wgpu::BindGroup,
    /// The tail's count of levels and of boundary sweeps (mg_tail.wgsl's `tail`).
    tail_uniform: wgpu::Buffer,
    /// Red-black sweeps over the boundary cells per level: [`BOUNDARY_SWEEPS`], or 0 where
    /// the systems have no AIR cell ([`Self::set_air`]).
    boundary_sweeps: u32,
    _buffers: Vec<wgpu::Buffer>,
}

impl Multigrid {
    /// The V-cycle with the tail that suits the adapter ([`tail_cells`]).
    pub fn new(
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        f: &GridFields,
        v: &PcgVectors,
    ) -> Self {
        let plan = MgPlan::with_tail_cells(f.params.n, tail_cells(info));
        Self::with_plan(device, f, v, plan)
    }

    /// The V-cycle of `plan` (its levels must be those of the grid's dimensions).
    pub fn with_plan(device: &wgpu::Device, f: &GridFields, v: &PcgVectors, plan: MgPlan) -> Self {
        assert_eq!(plan.dims[0], f.params.n, "a plan for this grid");
        assert!(plan.cells(plan.levels() - 1) <= COARSEST.pow(3));
        let kernel = Kernel::new(device, crate::wgsl!("multigrid.wgsl"), "Multigrid");
        let tail_kernel = Kernel::new(device, crate::wgsl!("mg_tail.wgsl"), "Multigrid::tail");
        let last = plan.levels() - 1;
        let packed = plan.packed_len().max(1);
        let buf =
            |what: &str, bytes: u64| storage_buffer(device, &format!("Multigrid::{what}"), bytes);
        let tail_a = buf("tail_a", packed * 16);
        let tail_types = buf("tail_types", packed * 4);
        let tail_x = buf("tail_x", packed * 4);
        let tail_b = buf("tail_b", packed * 4);
        let tail_res = buf("tail_res", packed * 4);
        let tail_winv = buf("tail_winv", packed * 4);
        let coarse: Vec<MgLevelBuffers> = (1..plan.levels())
            .map(|l| {
                let cells = plan.cells(l) as u64;
                if plan.packed(l) {
                    MgLevelBuffers {
                        a: tail_a.clone(),
                        types: tail_types.clone(),
                        x: tail_x.clone(),
                        b: tail_b.clone(),
                        res: tail_res.clone(),
                        offset: plan.offset(l) as u64,
                        cells,
                    }
                } else {
                    let name = |what: &str| format!("level{l}_{what}");
                    MgLevelBuffers {
                        a: buf(&name("a"), cells * 16),
                        types: buf(&name("types"), cells * 4),
                        x: buf(&name("x"), cells * 4),
                        b: buf(&name("b"), cells * 4),
                        res: buf(&name("res"), cells * 4),
                        offset: 0,
                        cells,
                    }
                }
            })
            .collect();
        // Per cell of every level before the tail: one over its interpolation weight sum,
        // and in its top bit whether the boundary sweeps relax it.
        let winv: Vec<wgpu::Buffer> = (0..plan.tail)
            .map(|l| buf(&format!("level{l}_winv"), plan.cells(l) as u64 * 4))
            .collect();
        let params: Vec<wgpu::Buffer> = (0..plan.tail)
            .map(|l| {
                uniform_buffer(
                    device,
                    &format!("Multigrid::level{l}_params"),
                    bytemuck::bytes_of(&plan.params(l)),
                )
            })
            .collect();
        // The levels before the tail: their own buffers (PCG's on level 0), and the next
        // level's as the coarse ones (the tail's packed buffers after the last).
        let groups = (0..plan.tail)
            .map(|l| {
                let (a, types, x, b, res): (_, _, &dyn Bindable, &dyn Bindable, &dyn Bindable) =
                    if l == 0 {
                        (&v.a, &f.cell_type, &v.z, &v.r, &v.t)
                    } else {
                        let c = &coarse[l - 1];
                        (&c.a, &c.types, &c.x, &c.b, &c.res)
                    };
                let c = &coarse[l];
                kernel.bind(
                    device,
                    &[
                        ("lvl", &params[l]),
                        ("a", a),
                        ("types", types),
                        ("x", x),
                        ("b", b),
                        ("res", res),
                        ("ca", &c.a),
                        ("ctypes", &c.types),
                        ("cx", &c.x),
                        ("cb", &c.b),
                        ("done", &v.state),
                        ("winv", &winv[l]),
                    ],
                )
            })
            .collect();
        // The tail: its levels' parameters in order, and its packed buffers bound as both
        // a level's and its coarser level's (PCG's vectors where the tail is level 0 alone).
        let tail_levels = plan.levels() - plan.tail;
        assert!(tail_levels <= TAIL_LEVELS as usize);
        let mut table = vec![MgLevelParams::zeroed(); TAIL_LEVELS as usize];
        for (t, l) in (plan.tail..=last).enumerate() {
            table[t] = plan.params(l);
        }
        let table = uniform_buffer(
            device,
            "Multigrid::tail_levels",
            bytemuck::cast_slice(&table),
        );
        let count = uniform_buffer(
            device,
            "Multigrid::tail",
            bytemuck::cast_slice(&[tail_levels as u32, BOUNDARY_SWEEPS, 0, 0]),
        );
        let (a, types, x, b, res): (_, _, &dyn Bindable, &dyn Bindable, &dyn Bindable) =
            if plan.tail == 0 {
                (&v.a, &f.cell_type, &v.z, &v.r, &v.t)
            } else {
                (&tail_a, &tail_types, &tail_x, &tail_b, &tail_res)
            };
        let tail_group = tail_kernel.bind(
            device,
            &[
                ("levels", &table),
                ("a", a),
                ("types", types),
                ("x", x),
                ("b", b),
                ("res", res),
                ("ca", a),
                ("ctypes", types),
                ("cx", x),
                ("cb", b),
                ("done", &v.state),
                ("winv", &tail_winv),
                ("tail", &count),
            ],
        );
        let mut buffers = winv;
        buffers.extend(params);
        buffers.extend([table, tail_winv]);
        Self {
            e: MultigridEntries::of(&kernel),
            t: TailEntries::of(&tail_kernel),
            plan,
            kernel,
            tail_kernel,
            coarse,
            groups,
            tail_group,
            tail_uniform: count,
            boundary_sweeps: BOUNDARY_SWEEPS,
            _buffers: buffers,
        }
    }

    /// Whether the systems this cycle preconditions can have AIR cells (the liquid's; the
    /// smoke's never do). A boundary cell is a FLUID cell next to AIR or whose coarse
    /// parent is not FLUID, and without AIR every FLUID cell's parent is FLUID: no cell is
    /// one, the boundary sweeps would relax nothing, and they are not run (4 dispatches per
    /// level and V-cycle saved; the same numbers).
    pub fn set_air(&mut self, queue: &wgpu::Queue, air: bool) {
        self.boundary_sweeps = if air { BOUNDARY_SWEEPS } else { 0 };
        let words = [
            (self.plan.levels() - self.plan.tail) as u32,
            self.boundary_sweeps,
            0,
            0,
        ];
        queue.write_buffer(&self.tail_uniform, 0, bytemuck::cast_slice(&words));
    }

    fn cells(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, l: usize, threads: u32) {
        self.kernel.dispatch(pass, entry, &self.groups[l], threads);
    }

    fn colour(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, l: usize) {
        let [nx, ny, nz] = self.plan.dims[l];
        self.cells(pass, entry, l, nx.div_ceil(2) * ny * nz);
    }

    fn tail(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry) {
        self.tail_kernel
            .dispatch_groups(pass, entry, &self.tail_group, &[], 1);
    }

    /// Per-solve set-up: coarse types and matrices, finest to coarsest, and each level's
    /// interpolation weight sums and boundary flags.
    pub fn record_setup(&self, pass: &mut wgpu::ComputePass<'_>) {
        for l in 0..self.plan.tail {
            let c = self.plan.cells(l + 1);
            self.cells(pass, self.e.coarsen, l, c);
            self.cells(pass, self.e.build_coarse, l, c);
            self.cells(pass, self.e.weights, l, self.plan.cells(l));
        }
        if self.plan.tail + 1 < self.plan.levels() {
            self.tail(pass, self.t.tail_setup);
        }
    }

    /// z = M^-1 r: one V-cycle.
    pub fn record_apply(&self, pass: &mut wgpu::ComputePass<'_>) {
        let tail = self.plan.tail;
        for l in 0..tail {
            self.cells(pass, self.e.smooth_first, l, self.plan.cells(l));
            for _ in 1..SWEEPS {
                self.colour(pass, self.e.smooth_red, l);
                self.colour(pass, self.e.smooth_black, l);
            }
            for _ in 0..self.boundary_sweeps {
                self.colour(pass, self.e.boundary_red, l);
                self.colour(pass, self.e.boundary_black, l);
            }
            self.cells(pass, self.e.residual, l, self.plan.cells(l));
            self.cells(pass, self.e.restrict_residual, l, self.plan.cells(l + 1));
        }
        self.tail(pass, self.t.tail_cycle);
        for l in (0..tail).rev() {
            self.cells(pass, self.e.prolong, l, self.plan.cells(l));
            for _ in 0..self.boundary_sweeps {
                self.colour(pass, self.e.boundary_black, l);
                self.colour(pass, self.e.boundary_red, l);
            }
            for _ in 0..SWEEPS {
                self.colour(pass, self.e.smooth_black, l);
                self.colour(pass, self.e.smooth_red, l);
            }
        }
    }

    /// Dispatches per V-cycle (the first red-black pair is one dispatch; the tail one).
    pub fn dispatches(&self) -> u32 {
        self.plan.tail as u32 * (4 * SWEEPS - 1 + 4 * self.boundary_sweeps + 3) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_starts_at_the_first_small_coarse_level_and_packs_aligned() {
        // 64^3: 64, 32, 16 (4096 cells), 8 (512): 1024 keeps the coarsest alone, 4096
        // takes 16^3 too, and 0 the coarsest alone.
        let n = [64, 64, 64];
        assert_eq!(MgPlan::with_tail_cells(n, 1024).tail, 3);
        assert_eq!(MgPlan::with_tail_cells(n, 4096).tail, 2);
        assert_eq!(MgPlan::with_tail_cells(n, 0).tail, 3);
        // Level 0 never joins a tail, but is the tail when it is the coarsest level.
        assert_eq!(MgPlan::with_tail_cells([40, 24, 20], 1 << 30).tail, 1);
        let one = MgPlan::with_tail_cells([8, 5, 3], 1024);
        assert_eq!((one.levels(), one.tail), (1, 0));
        assert_eq!(one.offset(0), 0, "a tail at level 0 uses PCG's vectors");
        // A thin slice with many levels: at most TAIL_LEVELS in the tail.
        let thin = MgPlan::with_tail_cells([1 << 20, 1, 1], u32::MAX);
        assert_eq!(thin.levels() - thin.tail, TAIL_LEVELS as usize);
        // Packed levels start at multiples of PACK_ALIGN elements, in order, and do not
        // overlap; the coarser level's offset is the next level's own.
        let p = MgPlan::with_tail_cells([37, 29, 1], 1 << 20);
        for l in p.tail..p.levels() {
            assert_eq!(p.offset(l) % PACK_ALIGN, 0);
            if l + 1 < p.levels() {
                assert!(p.offset(l + 1) >= p.offset(l) + p.cells(l));
                assert_eq!(p.params(l).coff, p.offset(l + 1));
            }
        }
        assert_eq!(
            p.params(p.tail - 1).coff,
            0,
            "the tail's first level opens the buffers"
        );
    }

    #[test]
    fn plan_matches_the_reference_levels() {
        for n in [
            [32, 32, 16],
            [8, 8, 8],
            [37, 9, 3],
            [64, 40, 1],
            [256, 256, 256],
            [5, 300, 2],
        ] {
            let gpu = MgPlan::new(n).dims;
            let cpu = crate::reference::mg_level_dims(n.map(|x| x as usize));
            assert_eq!(gpu.len(), cpu.len());
            for (g, c) in gpu.iter().zip(&cpu) {
                assert_eq!(g.map(|x| x as usize), *c);
            }
            let wgsl = crate::wgsl!("multigrid.wgsl").expand();
            assert!(wgsl.contains(&format!("const MG_COARSE_SWEEPS: u32 = {COARSE_SWEEPS}u;")));
        }
    }
}
