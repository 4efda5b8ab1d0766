//! Multigrid V-cycle preconditioner on the GPU (multigrid.wgsl). The algorithm and
//! its reasons are documented with the f64 reference in src/reference/multigrid.rs.

use super::PcgVectors;
use crate::gpu::{storage_buffer, uniform_buffer, Entry, Kernel};
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

crate::kernel_entries!(
    /// The entry points of multigrid.wgsl.
    MultigridEntries { coarsen, build_coarse, weights, smooth_first, smooth_red, smooth_black, boundary_red, boundary_black, residual, restrict_residual, prolong, coarse_solve }
);

/// Mirror of `MgLevel` in multigrid.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct MgLevelParams {
    pub n: [u32; 3],
    pub cells: u32,
    pub nc: [u32; 3],
    pub coarse_cells: u32,
    pub ratio: [u32; 3],
    pub scale: f32,
    pub _pad: [u32; 4],
}
const _: () = assert!(std::mem::size_of::<MgLevelParams>() == 64);
crate::wgsl_mirror!(mg_level_layout: MgLevelParams = "multigrid.wgsl" MgLevel {
    n: n,
    cells: cells,
    nc: nc,
    coarse_cells: coarse_cells,
    ratio: ratio,
    scale: scale,
    _pad3: _pad[0],
    _pad0: _pad[1],
    _pad1: _pad[2],
    _pad2: _pad[3],
});

/// The levels of a grid: dimensions by 2x coarsening of every axis longer than one cell,
/// until the longest axis has at most [`COARSEST`] cells. One plan sizes every buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct MgPlan {
    pub dims: Vec<[u32; 3]>,
}

impl MgPlan {
    pub fn new(n: [u32; 3]) -> Self {
        let mut dims = vec![n];
        loop {
            let d = *dims.last().unwrap_or(&n);
            if d.iter().copied().max().unwrap_or(1) <= COARSEST {
                return Self { dims };
            }
            dims.push(d.map(|x| if x > 1 { x.div_ceil(2) } else { 1 }));
        }
    }

    pub fn levels(&self) -> usize {
        self.dims.len()
    }

    pub fn cells(&self, l: usize) -> u32 {
        self.dims[l].iter().product()
    }

    /// Bytes of the levels' own buffers (level 0 uses PCG's vectors): matrix (16 B),
    /// types, solution, right-hand side and residual (4 B each) per coarse cell, the weight
    /// sums with the boundary flags in their top bit (4 B per cell of every level but the
    /// coarsest), and the uniforms and placeholders.
    pub fn bytes(&self) -> u64 {
        let n = self.levels();
        let coarse: u64 = (1..n).map(|l| self.cells(l) as u64).sum();
        let per_cell: u64 = (0..n - 1).map(|l| self.cells(l) as u64).sum();
        coarse * 32 + per_cell * 4 + n as u64 * 256 + 5 * 16
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
            _pad: [0; 4],
        }
    }
}

/// Buffers of one coarse level.
pub struct MgLevelBuffers {
    pub a: wgpu::Buffer,
    pub types: wgpu::Buffer,
    /// The level's solution (its correction to the finer level).
    pub x: wgpu::Buffer,
    /// Right-hand side: the restricted residual of the finer level.
    pub b: wgpu::Buffer,
    /// Residual after pre-smoothing.
    pub res: wgpu::Buffer,
}

pub struct Multigrid {
    pub plan: MgPlan,
    kernel: Kernel,
    e: MultigridEntries,
    /// Coarse levels 1.. (level 0 is PCG's z, r, t and the grid's cell types).
    pub coarse: Vec<MgLevelBuffers>,
    groups: Vec<wgpu::BindGroup>,
    _per_cell: Vec<wgpu::Buffer>,
    _params: Vec<wgpu::Buffer>,
    _placeholders: Vec<wgpu::Buffer>,
}

impl Multigrid {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let plan = MgPlan::new(f.params.n);
        assert!(plan.cells(plan.levels() - 1) <= COARSEST.pow(3));
        let kernel = Kernel::new(device, crate::wgsl!("multigrid.wgsl"), "Multigrid");
        let coarse: Vec<MgLevelBuffers> = (1..plan.levels())
            .map(|l| {
                let c = plan.cells(l) as u64;
                let name = |what: &str| format!("Multigrid::level{l}_{what}");
                MgLevelBuffers {
                    a: storage_buffer(device, &name("a"), c * 16),
                    types: storage_buffer(device, &name("types"), c * 4),
                    x: storage_buffer(device, &name("x"), c * 4),
                    b: storage_buffer(device, &name("b"), c * 4),
                    res: storage_buffer(device, &name("res"), c * 4),
                }
            })
            .collect();
        // Per cell of every level but the coarsest: one over its interpolation weight sum,
        // and in its top bit whether the boundary sweeps relax it.
        let per_cell = |what: &str| -> Vec<wgpu::Buffer> {
            (0..plan.levels() - 1)
                .map(|l| {
                    let label = format!("Multigrid::level{l}_{what}");
                    storage_buffer(device, &label, plan.cells(l) as u64 * 4)
                })
                .collect()
        };
        let winv = per_cell("winv");
        let placeholders: Vec<wgpu::Buffer> = ["a", "types", "x", "b", "winv"]
            .iter()
            .map(|w| storage_buffer(device, &format!("Multigrid::none_{w}"), 16))
            .collect();
        let params: Vec<wgpu::Buffer> = (0..plan.levels())
            .map(|l| {
                uniform_buffer(
                    device,
                    &format!("Multigrid::level{l}_params"),
                    bytemuck::bytes_of(&plan.params(l)),
                )
            })
            .collect();
        let groups = (0..plan.levels())
            .map(|l| {
                let (a, types, x, b, res) = if l == 0 {
                    (&v.a, &f.cell_type, &v.z, &v.r, &v.t)
                } else {
                    let c = &coarse[l - 1];
                    (&c.a, &c.types, &c.x, &c.b, &c.res)
                };
                let (ca, ct, cx, cb) = match coarse.get(l) {
                    Some(c) => (&c.a, &c.types, &c.x, &c.b),
                    None => (
                        &placeholders[0],
                        &placeholders[1],
                        &placeholders[2],
                        &placeholders[3],
                    ),
                };
                let w = winv.get(l).unwrap_or(&placeholders[4]);
                kernel.bind(
                    device,
                    &[
                        ("lvl", &params[l]),
                        ("a", a),
                        ("types", types),
                        ("x", x),
                        ("b", b),
                        ("res", res),
                        ("ca", ca),
                        ("ctypes", ct),
                        ("cx", cx),
                        ("cb", cb),
                        ("done", &v.state),
                        ("winv", w),
                    ],
                )
            })
            .collect();
        Self {
            e: MultigridEntries::of(&kernel),
            plan,
            kernel,
            coarse,
            groups,
            _per_cell: winv,
            _params: params,
            _placeholders: placeholders,
        }
    }

    fn cells(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, l: usize, threads: u32) {
        self.kernel.dispatch(pass, entry, &self.groups[l], threads);
    }

    fn colour(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, l: usize) {
        let [nx, ny, nz] = self.plan.dims[l];
        self.cells(pass, entry, l, nx.div_ceil(2) * ny * nz);
    }

    /// Per-solve set-up: coarse types and matrices, finest to coarsest, and each level's
    /// interpolation weight sums and boundary flags.
    pub fn record_setup(&self, pass: &mut wgpu::ComputePass<'_>) {
        for l in 0..self.plan.levels() - 1 {
            let c = self.plan.cells(l + 1);
            self.cells(pass, self.e.coarsen, l, c);
            self.cells(pass, self.e.build_coarse, l, c);
            self.cells(pass, self.e.weights, l, self.plan.cells(l));
        }
    }

    /// z = M^-1 r: one V-cycle.
    pub fn record_apply(&self, pass: &mut wgpu::ComputePass<'_>) {
        let last = self.plan.levels() - 1;
        for l in 0..last {
            self.cells(pass, self.e.smooth_first, l, self.plan.cells(l));
            for _ in 1..SWEEPS {
                self.colour(pass, self.e.smooth_red, l);
                self.colour(pass, self.e.smooth_black, l);
            }
            for _ in 0..BOUNDARY_SWEEPS {
                self.colour(pass, self.e.boundary_red, l);
                self.colour(pass, self.e.boundary_black, l);
            }
            self.cells(pass, self.e.residual, l, self.plan.cells(l));
            self.cells(pass, self.e.restrict_residual, l, self.plan.cells(l + 1));
        }
        self.kernel
            .dispatch_groups(pass, self.e.coarse_solve, &self.groups[last], &[], 1);
        for l in (0..last).rev() {
            self.cells(pass, self.e.prolong, l, self.plan.cells(l));
            for _ in 0..BOUNDARY_SWEEPS {
                self.colour(pass, self.e.boundary_black, l);
                self.colour(pass, self.e.boundary_red, l);
            }
            for _ in 0..SWEEPS {
                self.colour(pass, self.e.smooth_black, l);
                self.colour(pass, self.e.smooth_red, l);
            }
        }
    }

    /// Dispatches per V-cycle (the first red-black pair is one dispatch).
    pub fn dispatches(&self) -> u32 {
        let fine = self.plan.levels() as u32 - 1;
        fine * (4 * SWEEPS - 1 + 4 * BOUNDARY_SWEEPS + 3) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
