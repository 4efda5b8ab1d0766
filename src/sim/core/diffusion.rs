//! Implicit diffusion (diffusion.wgsl): viscosity on the face velocities of the
//! liquid and the smoke, heat and dye on the smoke's cells. One backward-Euler step
//! (I - k dt L) x = x_old per substep, stable for any dt, solved by eddy's own PCG and
//! preconditioners (src/sim/core/pressure/) warm-started from x_old. The boundary rules are
//! written out with the f64 reference, src/reference/diffusion.rs.
//!
//! The PCG runs on a cell-centred grid read from its params uniform, so each system gets a
//! grid of its own: the three face grids stacked along z (padded to (nx+1, ny+1, nz+1)),
//! or the cells stacked four times (dye r, g, b, temperature). One solve then covers all
//! components or channels. The systems are allocated on first use: a scene without
//! viscosity or diffusion never pays their memory, and the stage is skipped entirely.
//!
//! Preconditioners: (I - k dt L) is strictly diagonally dominant, so Jacobi (the default)
//! converges in a handful of iterations at the usual k dt / h^2; `ip`, `mic0` and
//! `mic0_tiled` work on these matrices too. Multigrid does not: its coarse levels are the
//! pressure's Poisson matrix built from cell types.

use super::{
    fields::GridFields,
    params::SimParams,
    pressure::{AddedTerm, PcgVectors, PressureSolver, Scratch, SolveReport},
};
use crate::gpu::{
    storage_buffer, uniform_buffer, BufferReader, Entry, GpuContext, Kernel, PassTimer,
};
use crate::scene::{DiffusionSettings, Scene, SceneKind, Wall, WallValues, MAX_WALL_SPOTS};
use crate::sim::SimError;
use bytemuck::{Pod, Zeroable};

/// Mirror of `Spot` in diffusion.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct WallSpot {
    pub wall: u32,
    /// 1: the temperature channel; 0: the dye channels.
    pub temperature: u32,
    pub lo: f32,
    pub hi: f32,
    pub value: f32,
    pub _pad: [f32; 3],
}
const _: () = assert!(std::mem::size_of::<WallSpot>() == 32);
crate::wgsl_mirror!(spot_layout: WallSpot = "diffusion.wgsl" Spot {
    wall: wall,
    temperature: temperature,
    lo: lo,
    hi: hi,
    value: value,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// Spot slots on the GPU: the temperature's and the dye's.
pub const SPOT_SLOTS: usize = 16;
const _: () = assert!(2 * MAX_WALL_SPOTS <= SPOT_SLOTS);

/// Mirror of `DiffusionParams` in diffusion.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct DiffusionParams {
    pub sys_n: [u32; 3],
    pub sys_cells: u32,
    pub block: [u32; 3],
    pub num_spots: u32,
    /// k / h^2 per block, 1/s (the kernels multiply by the substep's `SimParams::dt`, which
    /// the GPU's clock may have set).
    pub coef: [f32; 4],
    pub wall_value: [[f32; 4]; 4],
    pub wall_fixed: [[f32; 4]; 4],
    pub spots: [WallSpot; SPOT_SLOTS],
    /// Tangential velocity of the walls: left, right (along y), bottom, top (along x), m/s.
    pub wall_slide: [f32; 4],
    /// x: 1 when the bound `cover` holds the bodies' faces ([`Diffusion::set_cover`]).
    pub covered: [u32; 4],
}
const _: () = assert!(std::mem::size_of::<DiffusionParams>() == 720);
crate::wgsl_mirror!(diffusion_params_layout: DiffusionParams = "diffusion.wgsl" DiffusionParams {
    sys_n: sys_n,
    sys_cells: sys_cells,
    block: block,
    num_spots: num_spots,
    coef: coef,
    wall_value: wall_value,
    wall_fixed: wall_fixed,
    spots: spots,
    wall_slide: wall_slide,
    covered: covered,
});

crate::kernel_entries!(
    /// The entry points of diffusion.wgsl.
    DiffusionEntries { velocity_system, velocity_store, scalar_system, scalar_store }
);

impl DiffusionParams {
    fn new(sys_n: [u32; 3], block: [u32; 3]) -> Self {
        Self {
            sys_n,
            sys_cells: sys_n.iter().product(),
            block,
            num_spots: 0,
            coef: [0.0; 4],
            wall_value: [[0.0; 4]; 4],
            wall_fixed: [[0.0; 4]; 4],
            spots: [WallSpot::default(); SPOT_SLOTS],
            wall_slide: [0.0; 4],
            covered: [0; 4],
        }
    }

    /// Wall values of the scalar channels: `dye` on r, g, b and `temperature` on w.
    fn set_walls(&mut self, temperature: &WallValues, dye: &WallValues) {
        for w in Wall::ALL {
            let i = w.index();
            for (ch, src) in [(0, dye), (1, dye), (2, dye), (3, temperature)] {
                let v = src.wall(w);
                self.wall_value[i][ch] = v.unwrap_or(0.0) as f32;
                self.wall_fixed[i][ch] = v.is_some() as u32 as f32;
            }
        }
        let spots = temperature
            .spots
            .iter()
            .map(|s| (s, 1))
            .chain(dye.spots.iter().map(|s| (s, 0)));
        self.num_spots = 0;
        for (slot, (s, t)) in self.spots.iter_mut().zip(spots) {
            *slot = WallSpot {
                wall: s.wall.index() as u32,
                temperature: t,
                lo: s.from as f32,
                hi: s.to as f32,
                value: s.value as f32,
                _pad: [0.0; 3],
            };
            self.num_spots += 1;
        }
    }
}

/// The systems a scene allocates at its start (none when its coefficients are 0; a
/// coefficient raised later in the viewer allocates its system then).
fn scene_systems(scene: &Scene) -> Vec<[u32; 3]> {
    let n = scene.dims();
    let mut out = Vec::new();
    if scene.viscosity > 0.0 {
        out.push(Diffusion::velocity_dims(n).0);
    }
    let s = &scene.smoke;
    if scene.kind == SceneKind::Smoke && (s.temperature_diffusion > 0.0 || s.dye_diffusion > 0.0) {
        out.push(Diffusion::scalar_dims(n).0);
    }
    out
}

const PLACEHOLDER_BYTES: u64 = 256;

/// GPU bytes of a scene's diffusion systems and of their largest buffer (the matrix).
pub fn memory(scene: &Scene) -> (u64, u64) {
    let max_iterations = scene.diffusion.max_iterations as u64;
    let systems = scene_systems(scene);
    let cells = |d: &[u32; 3]| d.iter().map(|&v| v as u64).product::<u64>();
    let total: u64 = systems
        .iter()
        .map(|d| {
            PcgVectors::bytes(*d, max_iterations, true)
                + PcgVectors::scratch_bytes(cells(d))
                + cells(d) * 4
                + 14 * PLACEHOLDER_BYTES
                + super::fields::COUNTERS as u64 * 4
        })
        .sum();
    let largest = systems.iter().map(|d| cells(d) * 16).max().unwrap_or(0);
    // The viscosity's incremental pressure correction keeps the last pressure.
    let split = if scene.viscosity > 0.0 {
        let n = scene.dims();
        let faces = cells(&[n[0] + 1, n[1], n[2]])
            + cells(&[n[0], n[1] + 1, n[2]])
            + cells(&[n[0], n[1], n[2] + 1]);
        let liquid = scene.kind == SceneKind::Liquid;
        super::split::ViscousSplit::bytes(liquid, cells(&n), faces)
    } else {
        0
    };
    (total + split, largest)
}

/// The diffusion matrix as a candidate for the largest buffer of a memory estimate.
pub fn memory_candidate(scene: &Scene) -> (u64, &'static str, &'static str) {
    (
        memory(scene).1,
        "diffusion matrix (16 bytes per face, or per cell and channel)",
        "reduce the resolution, or set viscosity and diffusion to 0",
    )
}

/// What couples other unknowns into the viscosity solve: the dynamic rigid bodies
/// (src/sim/bodies/viscous.rs). Its term is added to the operator inside the PCG; its
/// set-up runs after the assembly (it may change the right-hand side) and its finish after
/// the solve, before the store.
pub trait VelocityCoupling {
    fn term(&self) -> &dyn AddedTerm;
    fn record_setup(&self, pass: &mut wgpu::ComputePass<'_>);
    fn record_finish(&self, pass: &mut wgpu::ComputePass<'_>);
}

/// The velocity system as a coupling binds to it ([`Diffusion::ensure_velocity`]): its
/// vectors, its grid and block, and a number that changes when the system is made anew.
pub struct VelocityView<'a> {
    pub vectors: &'a PcgVectors,
    pub sys_n: [u32; 3],
    pub block: [u32; 3],
    pub generation: u64,
}

/// The velocity system's coefficient nu / h^2 (1/s) as the GPU reads it.
pub fn velocity_coef(nu: f64, h: f32) -> f32 {
    (nu / (h as f64).powi(2)) as f32
}

/// Where a solve's GPU time goes: the stage's timer slot, and whether this solve opens or
/// closes it.
#[derive(Clone, Copy)]
pub struct Timing<'a> {
    pub timer: &'a PassTimer,
    pub stage: &'static str,
    pub begin: bool,
    pub end: bool,
}

/// One stacked system: its grid (for the PCG), vectors, solver and assembly bindings.
struct System {
    grid: GridFields,
    vectors: PcgVectors,
    solver: PressureSolver,
    params: DiffusionParams,
    params_buffer: wgpu::Buffer,
    group: wgpu::BindGroup,
    /// Where a pipelined frame's substeps copy this system's final state, one reader per
    /// substep slot ([`Diffusion::queue_velocity`]; made as the slots are first used).
    slots: Vec<BufferReader>,
    /// Which system this is of those the stage has made ([`VelocityView::generation`]).
    generation: u64,
}

/// Solves that must have iterated before a system's solves are queued ahead.
const SETTLED_SOLVES: usize = 4;

impl System {
    /// The guess of a queued solve: the largest count of the solver's recent solves (a
    /// frame's long first substep and short last one need unlike counts, and a pipelined
    /// frame queues all its substeps before it reads any).
    fn queue_guess(&self) -> u32 {
        self.solver.recent().hardest().unwrap_or(0)
    }

    /// Whether the last [`SETTLED_SOLVES`] solves all iterated: a flow at rest or starting
    /// up (counts of 0, then growing) reads its solves until then.
    fn settled(&self) -> bool {
        self.solver.recent().all_iterated(SETTLED_SOLVES)
    }
}

/// Iterations a queued diffusion solve gets past its guess (the largest recent count,
/// [`RECENT_SOLVES`]): a quarter more, and two. A diffusion's count grows while a flow starts up and
/// with the substep's length; iterations after convergence return at once, so the margin
/// costs dispatches that do nothing rather than a solve that stops short.
fn queue_margin(guess: u32) -> u32 {
    guess / 4 + 2
}

/// A diffusion solve queued ahead in a pipelined substep ([`Diffusion::queue_velocity`],
/// [`Diffusion::queue_scalars`]): its state comes back in slot `slot`'s reader with the
/// substep's counters, and [`Diffusion::report_queued`] makes its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub iterations: u32,
    pub slot: usize,
}

/// The diffusion solves a pipelined substep queued, by system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueuedSolves {
    pub velocity: Option<Queued>,
    pub scalars: Option<Queued>,
}

/// Whether `slot` has no system yet, or one whose residual history is too short for
/// `settings.max_iterations`.
fn needs_system(slot: &Option<System>, settings: &DiffusionSettings) -> bool {
    slot.as_ref()
        .is_none_or(|s| s.vectors.history_len < settings.max_iterations + 1)
}

/// The PCG reads only `params`, `params_buffer` and (binding the unused multigrid)
/// `cell_type` of its grid; the other fields of a system's grid are placeholders.
fn solver_grid(device: &wgpu::Device, n: [u32; 3]) -> GridFields {
    let params = SimParams::new(n, 1.0, 0);
    let f = |label: &str, bytes: u64| storage_buffer(device, label, bytes);
    let small = |label: &str| f(label, PLACEHOLDER_BYTES);
    GridFields {
        params,
        params_buffer: uniform_buffer(device, "Diffusion::params", bytemuck::bytes_of(&params)),
        vel: small("Diffusion::unused_vel"),
        vel_old: small("Diffusion::unused_vel_old"),
        weight: small("Diffusion::unused_weight"),
        weighted: small("Diffusion::unused_weighted"),
        acc: small("Diffusion::unused_acc"),
        count: small("Diffusion::unused_count"),
        density: small("Diffusion::unused_density"),
        surface: small("Diffusion::unused_surface"),
        cell_type: f("Diffusion::cell_type", params.num_cells as u64 * 4),
        solid: small("Diffusion::unused_solid"),
        solid_vel: small("Diffusion::unused_solid_vel"),
        open: f("Diffusion::unused_open", 4),
        open_static: None,
        gather_scale: small("Diffusion::unused_gather_scale"),
        divergence: small("Diffusion::unused_divergence"),
        curvature: small("Diffusion::unused_curvature"),
        div_after: small("Diffusion::unused_div_after"),
        counters: f(
            "Diffusion::unused_counters",
            super::fields::COUNTERS as u64 * 4,
        ),
    }
}

/// Records one compute pass with `record` and submits it; with `timing`, the pass opens
/// (`begin`) or closes the stage's timer slot.
fn submit_pass(
    ctx: &GpuContext,
    label: &'static str,
    timing: Option<Timing<'_>>,
    begin: bool,
    record: impl FnOnce(&mut wgpu::ComputePass<'_>),
) {
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: timing.and_then(|t| t.timer.writes(t.stage, begin, !begin)),
        });
        record(&mut pass);
    }
    ctx.submit(enc.finish());
}

/// The diffusion stage. Owns the kernels and, once used, the two systems.
pub struct Diffusion {
    kernel: Kernel,
    e: DiffusionEntries,
    velocity: Option<System>,
    scalars: Option<System>,
    /// Bound as the dye in the velocity system's group (the liquid has no dye).
    no_dye: wgpu::Buffer,
    /// Tangential velocity of the domain walls in the viscosity solve (left, right along y;
    /// bottom, top along x), m/s: the smoke's sliding lid.
    pub wall_slide: [f32; 4],
    /// Systems made so far.
    made: u64,
    /// The bodies' shares of the faces ([`Self::set_cover`]), or None.
    cover: Option<wgpu::Buffer>,
    /// Bound as `cover` without bodies.
    no_cover: wgpu::Buffer,
}

/// Iterations of the velocity (viscosity) and scalar (heat, dye) solves of a substep.
#[derive(Clone, Debug, Default)]
pub struct DiffusionReport {
    pub velocity: Option<SolveReport>,
    pub scalars: Option<SolveReport>,
}

/// What a substep's diffusion stage leaves for its report ([`crate::sim::runner::Mode::Host`]):
/// the reports of the solves it read, or the solves it queued ahead in a pipelined substep,
/// whose reports come with the substep's readback ([`Diffusion::report_queued`]).
#[derive(Clone, Debug, Default)]
pub struct DiffusionHost {
    pub report: DiffusionReport,
    pub queued: QueuedSolves,
}

impl DiffusionReport {
    pub fn viscosity_iterations(&self) -> u32 {
        self.velocity.as_ref().map_or(0, |r| r.iterations)
    }

    /// Its solves that stopped above `tolerance` (at max_iterations, at the end of their
    /// queue, or on a breakdown).
    pub fn unconverged(&self, tolerance: f64) -> u32 {
        [&self.velocity, &self.scalars]
            .into_iter()
            .flatten()
            .filter(|r| unconverged(r, tolerance))
            .count() as u32
    }
}

/// Whether a solve stopped above `tolerance`: at max_iterations, at the end of its queue,
/// or on a breakdown (which happens only far below the tolerance, so rarely counts).
pub fn unconverged(r: &SolveReport, tolerance: f64) -> bool {
    r.status != super::pressure::SolveStatus::Converged && r.residual > tolerance
}

impl Diffusion {
    pub fn new(device: &wgpu::Device) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("diffusion.wgsl"), "Diffusion");
        Self {
            e: DiffusionEntries::of(&kernel),
            kernel,
            velocity: None,
            scalars: None,
            no_dye: storage_buffer(device, "Diffusion::no_dye", 16),
            wall_slide: [0.0; 4],
            made: 0,
            cover: None,
            no_cover: storage_buffer(device, "Diffusion::no_cover", 16),
        }
    }

    /// Makes the viscosity treat the faces the scene's bodies cover (at least half of one,
    /// `cover` as src/sim/bodies/coupling.wgsl writes it) as the bodies' (fixed, or coupled
    /// where a [`VelocityCoupling`] says so): the liquid's bodies cut cells that stay FLUID.
    pub fn set_cover(&mut self, cover: &wgpu::Buffer) {
        self.cover = Some(cover.clone());
        // Systems made before bind the placeholder: made anew on their next use.
        self.velocity = None;
        self.scalars = None;
    }

    /// The velocity system's grid and block for a grid of `n` cells.
    pub fn velocity_dims(n: [u32; 3]) -> ([u32; 3], [u32; 3]) {
        let block = [n[0] + 1, n[1] + 1, n[2] + 1];
        // A slice has no w unknowns (both w faces are walls): two blocks.
        let blocks = if n[2] == 1 { 2 } else { 3 };
        ([block[0], block[1], blocks * block[2]], block)
    }

    /// The scalar system's grid and block (four channel blocks of the cells).
    pub fn scalar_dims(n: [u32; 3]) -> ([u32; 3], [u32; 3]) {
        ([n[0], n[1], 4 * n[2]], n)
    }

    fn make_system(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: &wgpu::Buffer,
        dims: ([u32; 3], [u32; 3]),
        max_iterations: u32,
    ) -> Result<System, SimError> {
        let (sys_n, block) = dims;
        let cells: u64 = sys_n.iter().map(|&v| v as u64).product();
        let limit = crate::sim::buffer_limit(ctx);
        if cells * 16 > limit || cells > u32::MAX as u64 / 2 {
            return Err(SimError::TooLarge {
                what: "diffusion matrix (16 bytes per face, or per cell and channel)",
                bytes: cells * 16,
                limit,
                adapter: ctx.info.name.clone(),
                hint: "reduce the resolution, or set viscosity and diffusion to 0",
            });
        }
        let device = &ctx.device;
        let grid = solver_grid(device, sys_n);
        let vectors = PcgVectors::new(device, grid.num_cells(), max_iterations, true, Scratch::Own);
        let solver = PressureSolver::new(ctx, &grid, &vectors);
        let mut params = DiffusionParams::new(sys_n, block);
        params.covered[0] = self.cover.is_some() as u32;
        let cover = self.cover.as_ref().unwrap_or(&self.no_cover).clone();
        let params_buffer =
            uniform_buffer(device, "Diffusion::system", bytemuck::bytes_of(&params));
        let group = self.kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("dp", &params_buffer),
                ("cell_type", &f.cell_type),
                ("vel", &f.vel),
                ("dye", dye),
                ("a", &vectors.a),
                ("b", &vectors.b),
                ("x", &vectors.p),
                ("cover", &cover),
            ],
        );
        self.made += 1;
        Ok(System {
            grid,
            vectors,
            solver,
            params,
            params_buffer,
            group,
            slots: Vec::new(),
            generation: self.made,
        })
    }

    /// Writes one system's settings and submits its assembly, its preconditioner's set-up
    /// and the start of its solve (`entry`: its assembly kernel).
    fn setup(
        &self,
        ctx: &GpuContext,
        sys: &System,
        settings: &DiffusionSettings,
        entry: Entry,
        timing: Option<Timing<'_>>,
        coupling: Option<&dyn VelocityCoupling>,
    ) {
        let pcg = settings.pcg();
        self.write_system(ctx, sys, &pcg, coupling.is_some());
        submit_pass(
            ctx,
            "diffusion::setup",
            timing.filter(|t| t.begin),
            true,
            |pass| self.record_setup(pass, sys, entry, pcg.preconditioner, coupling),
        );
    }

    /// Writes one system's settings and its solver's config (applied at the next submit).
    fn write_system(
        &self,
        ctx: &GpuContext,
        sys: &System,
        pcg: &crate::scene::PressureSettings,
        coupled: bool,
    ) {
        ctx.queue
            .write_buffer(&sys.params_buffer, 0, bytemuck::bytes_of(&sys.params));
        sys.solver.write_config(ctx, &sys.vectors, pcg, coupled);
    }

    /// Records one system's assembly (`entry`), its preconditioner's set-up and the start
    /// of its solve.
    fn record_setup(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        sys: &System,
        entry: Entry,
        kind: crate::scene::PreconditionerKind,
        coupling: Option<&dyn VelocityCoupling>,
    ) {
        self.kernel
            .dispatch(pass, entry, &sys.group, sys.params.sys_cells);
        if let Some(c) = coupling {
            c.record_setup(pass);
        }
        sys.solver.precond.record_setup(pass, kind);
        sys.solver
            .record_start(pass, &sys.grid, kind, coupling.map(|c| c.term()));
    }

    /// Warns about a solve that stopped short and submits its system's store (`entry`, on
    /// `threads` threads).
    fn store(
        &self,
        ctx: &GpuContext,
        sys: &System,
        report: &SolveReport,
        (entry, threads): (Entry, u32),
        timing: Option<Timing<'_>>,
        coupling: Option<&dyn VelocityCoupling>,
    ) {
        if report.status != super::pressure::SolveStatus::Converged {
            log::warn!(
                "diffusion solve ({}) stopped at {} iterations, residual {:.1e} ({:?}); \
                 raise diffusion.max_iterations or use a stronger preconditioner",
                self.kernel.entry_name(entry),
                report.iterations,
                report.residual,
                report.status
            );
        }
        submit_pass(
            ctx,
            "diffusion::store",
            timing.filter(|t| t.end),
            false,
            |pass| {
                if let Some(c) = coupling {
                    c.record_finish(pass);
                }
                self.kernel.dispatch(pass, entry, &sys.group, threads)
            },
        );
    }

    /// Assembles, solves and stores one system; `entries` are its assembly and store
    /// kernels and `store_threads` the store's thread count.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        ctx: &GpuContext,
        sys: &mut System,
        settings: &DiffusionSettings,
        entries: [Entry; 2],
        store_threads: u32,
        timing: Option<Timing<'_>>,
        coupling: Option<&dyn VelocityCoupling>,
    ) -> Result<SolveReport, SimError> {
        self.setup(ctx, sys, settings, entries[0], timing, coupling);
        let pcg = settings.pcg();
        let term = coupling.map(|c| c.term());
        let report = sys
            .solver
            .iterate(ctx, &sys.grid, &sys.vectors, &pcg, None, term)?;
        let store = (entries[1], store_threads);
        self.store(ctx, sys, &report, store, timing, coupling);
        Ok(report)
    }

    /// The velocity system of `f`'s grid with viscosity `nu` (allocated on first use).
    fn velocity_system(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: Option<&wgpu::Buffer>,
        nu: f64,
        settings: &DiffusionSettings,
    ) -> Result<System, SimError> {
        self.ensure_velocity(ctx, f, dye, settings)?;
        let mut sys = self.velocity.take().expect("allocated above");
        let k = velocity_coef(nu, f.params.h);
        sys.params.coef = [k, k, k, 0.0];
        sys.params.wall_slide = self.wall_slide;
        Ok(sys)
    }

    /// Makes the velocity system of `f`'s grid where it is missing or its residual history
    /// is too short, and returns it for a coupling to bind to.
    pub fn ensure_velocity(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: Option<&wgpu::Buffer>,
        settings: &DiffusionSettings,
    ) -> Result<VelocityView<'_>, SimError> {
        if needs_system(&self.velocity, settings) {
            let dims = Self::velocity_dims(f.params.n);
            let no_dye = self.no_dye.clone();
            let dye = dye.unwrap_or(&no_dye);
            let sys = self.make_system(ctx, f, dye, dims, settings.max_iterations)?;
            self.velocity = Some(sys);
        }
        let sys = self.velocity.as_ref().expect("allocated above");
        Ok(VelocityView {
            vectors: &sys.vectors,
            sys_n: sys.params.sys_n,
            block: sys.params.block,
            generation: sys.generation,
        })
    }

    /// The scalar system of `f`'s grid with diffusivities `k` and the given wall values
    /// (allocated on first use).
    fn scalar_system(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: &wgpu::Buffer,
        k: [f64; 4],
        (temperature, wall_dye): (&WallValues, &WallValues),
        settings: &DiffusionSettings,
    ) -> Result<System, SimError> {
        if needs_system(&self.scalars, settings) {
            let dims = Self::scalar_dims(f.params.n);
            let sys = self.make_system(ctx, f, dye, dims, settings.max_iterations)?;
            self.scalars = Some(sys);
        }
        let mut sys = self.scalars.take().expect("allocated above");
        let h2 = (f.params.h as f64).powi(2);
        sys.params.coef = k.map(|k| (k / h2) as f32);
        sys.params.set_walls(temperature, wall_dye);
        Ok(sys)
    }

    /// One implicit viscosity step of `nu` (m^2/s) over the substep's dt on `f.vel` (after
    /// the boundary conditions, before the projection). `dye` is the smoke's dye buffer, or
    /// None for the liquid; `coupling` the bodies that move with the step, bound to this
    /// system ([`Self::ensure_velocity`]).
    #[allow(clippy::too_many_arguments)]
    pub fn velocity(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: Option<&wgpu::Buffer>,
        nu: f64,
        settings: &DiffusionSettings,
        timing: Option<Timing<'_>>,
        coupling: Option<&dyn VelocityCoupling>,
    ) -> Result<SolveReport, SimError> {
        let mut sys = self.velocity_system(ctx, f, dye, nu, settings)?;
        let faces = sys.params.sys_cells;
        let entries = [self.e.velocity_system, self.e.velocity_store];
        let out = self.run(ctx, &mut sys, settings, entries, faces, timing, coupling);
        self.velocity = Some(sys);
        out
    }

    /// One implicit step of the scalars in `dye` (rgb dye, w temperature) with
    /// diffusivities `k` (m^2/s; 0 leaves a channel alone) and the given wall values.
    #[allow(clippy::too_many_arguments)]
    pub fn scalars(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: &wgpu::Buffer,
        k: [f64; 4],
        temperature: &WallValues,
        wall_dye: &WallValues,
        settings: &DiffusionSettings,
        timing: Option<Timing<'_>>,
    ) -> Result<SolveReport, SimError> {
        let walls = (temperature, wall_dye);
        let mut sys = self.scalar_system(ctx, f, dye, k, walls, settings)?;
        let entries = [self.e.scalar_system, self.e.scalar_store];
        let out = self.run(
            ctx,
            &mut sys,
            settings,
            entries,
            f.num_cells(),
            timing,
            None,
        );
        self.scalars = Some(sys);
        out
    }

    /// Whether the systems a substep needs (`velocity`, `scalars`) exist and their last
    /// solves all iterated ([`System::settled`]; a flow at rest or starting up reads its
    /// solves), so their solves can be queued ahead with the largest recent count as the
    /// guess.
    pub fn can_queue(&self, velocity: bool, scalars: bool) -> bool {
        let ready = |sys: &Option<System>| sys.as_ref().is_some_and(System::settled);
        (!velocity || ready(&self.velocity)) && (!scalars || ready(&self.scalars))
    }

    /// Records (into `enc`; nothing submitted or read) one system's assembly, set-up, its
    /// solve queued ahead ([`PressureSolver::queue_ahead`]: the last count plus a margin,
    /// its final state copied into the slot's reader) and its store.
    fn queue(
        &self,
        ctx: &GpuContext,
        sys: &mut System,
        settings: &DiffusionSettings,
        (entries, store_threads): ([Entry; 2], u32),
        (enc, slot): (&mut wgpu::CommandEncoder, usize),
        coupling: Option<&dyn VelocityCoupling>,
    ) -> Queued {
        let mut pcg = settings.pcg();
        // The solver queues for that guess itself (`PressureSolver::queue_ahead`).
        let guess = sys.queue_guess();
        pcg.margin = queue_margin(guess);
        self.write_system(ctx, sys, &pcg, coupling.is_some());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("diffusion::setup"),
                timestamp_writes: None,
            });
            self.record_setup(&mut pass, sys, entries[0], pcg.preconditioner, coupling);
        }
        while sys.slots.len() <= slot {
            let size = sys.vectors.state.size();
            sys.slots
                .push(BufferReader::new(&ctx.device, size, "Diffusion::slot"));
        }
        let iterations = sys.solver.queue_ahead(
            enc,
            &sys.grid,
            &sys.vectors,
            &pcg,
            None,
            coupling.map(|c| c.term()),
            &mut sys.slots[slot],
        );
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("diffusion::store"),
                timestamp_writes: None,
            });
            if let Some(c) = coupling {
                c.record_finish(&mut pass);
            }
            self.kernel
                .dispatch(&mut pass, entries[1], &sys.group, store_threads);
        }
        Queued { iterations, slot }
    }

    /// [`Self::velocity`] queued ahead into `enc` for a pipelined substep's `slot`
    /// (after [`Self::can_queue`]): the same result once the solve converges within its
    /// queue; its report comes from [`Self::report_queued`].
    #[allow(clippy::too_many_arguments)]
    pub fn queue_velocity(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        f: &GridFields,
        dye: Option<&wgpu::Buffer>,
        nu: f64,
        settings: &DiffusionSettings,
        slot: usize,
        coupling: Option<&dyn VelocityCoupling>,
    ) -> Result<Queued, SimError> {
        let mut sys = self.velocity_system(ctx, f, dye, nu, settings)?;
        let entries = [self.e.velocity_system, self.e.velocity_store];
        let threads = sys.params.sys_cells;
        let at = (enc, slot);
        let q = self.queue(ctx, &mut sys, settings, (entries, threads), at, coupling);
        self.velocity = Some(sys);
        Ok(q)
    }

    /// [`Self::scalars`] queued ahead, as [`Self::queue_velocity`].
    #[allow(clippy::too_many_arguments)]
    pub fn queue_scalars(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        f: &GridFields,
        dye: &wgpu::Buffer,
        k: [f64; 4],
        (temperature, wall_dye): (&WallValues, &WallValues),
        settings: &DiffusionSettings,
        slot: usize,
    ) -> Result<Queued, SimError> {
        let walls = (temperature, wall_dye);
        let mut sys = self.scalar_system(ctx, f, dye, k, walls, settings)?;
        let entries = [self.e.scalar_system, self.e.scalar_store];
        let at = (enc, slot);
        let q = self.queue(ctx, &mut sys, settings, (entries, f.num_cells()), at, None);
        self.scalars = Some(sys);
        Ok(q)
    }

    /// The readers a pipelined substep's `slot` brings the solves `queued` back in (the
    /// velocity system's, then the scalars').
    pub fn slot_readers(&self, queued: QueuedSolves) -> Vec<&BufferReader> {
        [
            (&self.velocity, queued.velocity),
            (&self.scalars, queued.scalars),
        ]
        .into_iter()
        .filter_map(|(s, q)| s.as_ref().zip(q).and_then(|(s, q)| s.slots.get(q.slot)))
        .collect()
    }

    /// Fills `host`'s report from the words of the solves it queued, if any (the modes'
    /// `Mode::finish_host`).
    pub fn finish(
        &mut self,
        host: &mut DiffusionHost,
        words: &[Vec<u32>],
        settings: &DiffusionSettings,
    ) {
        if host.queued != QueuedSolves::default() {
            host.report = self.report_queued(host.queued, words, settings);
        }
    }

    /// The reports of the solves `queued` recorded, from the words of
    /// [`Self::slot_readers`] (read in that order), warning about a solve that stopped at
    /// its queue (the next ones queue more).
    pub fn report_queued(
        &mut self,
        queued: QueuedSolves,
        words: &[Vec<u32>],
        settings: &DiffusionSettings,
    ) -> DiffusionReport {
        let pcg = settings.pcg();
        let mut next = words.iter();
        let mut report = DiffusionReport::default();
        // In the order of `slot_readers`: a system's words where it has a reader there.
        let has = |sys: &Option<System>, q: Option<Queued>| {
            q.is_some_and(|q| sys.as_ref().is_some_and(|s| s.slots.len() > q.slot))
        };
        let velocity_words = if has(&self.velocity, queued.velocity) {
            next.next()
        } else {
            None
        };
        let scalar_words = if has(&self.scalars, queued.scalars) {
            next.next()
        } else {
            None
        };
        for (q, sys, w, out, name) in [
            (
                queued.velocity,
                &mut self.velocity,
                velocity_words,
                &mut report.velocity,
                "viscosity",
            ),
            (
                queued.scalars,
                &mut self.scalars,
                scalar_words,
                &mut report.scalars,
                "heat and dye",
            ),
        ] {
            let (Some(q), Some(sys), Some(w)) = (q, sys.as_mut(), w) else {
                continue;
            };
            let r = sys
                .solver
                .report_from(w, pcg.preconditioner, None, pcg.tolerance);
            if r.status != super::pressure::SolveStatus::Converged {
                log::warn!(
                    "diffusion solve ({name}) queued ahead stopped at {} of its {} \
                     iterations, residual {:.1e} ({:?}); the next solves queue more",
                    r.iterations,
                    q.iterations,
                    r.residual,
                    r.status
                );
            }
            *out = Some(r);
        }
        report
    }

    /// The viscosity step and the scalars' step together: they touch different fields
    /// (the face velocities, the dye), so both solves are queued before one read brings
    /// both back (`PressureSolver::iterate_pair`); a solve whose guess fell short goes on
    /// alone. The same results as [`Self::velocity`] then [`Self::scalars`].
    #[allow(clippy::too_many_arguments)]
    pub fn both(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dye: &wgpu::Buffer,
        nu: f64,
        k: [f64; 4],
        walls: (&WallValues, &WallValues),
        settings: &DiffusionSettings,
        timing: Option<Timing<'_>>,
    ) -> Result<(SolveReport, SolveReport), SimError> {
        let mut vel = self.velocity_system(ctx, f, Some(dye), nu, settings)?;
        let mut scal = match self.scalar_system(ctx, f, dye, k, walls, settings) {
            Ok(s) => s,
            Err(e) => {
                self.velocity = Some(vel);
                return Err(e);
            }
        };
        let first = timing.map(|t| Timing { end: false, ..t });
        let last = timing.map(|t| Timing { begin: false, ..t });
        self.setup(ctx, &vel, settings, self.e.velocity_system, first, None);
        self.setup(ctx, &scal, settings, self.e.scalar_system, None, None);
        let pcg = settings.pcg();
        let out = PressureSolver::iterate_pair(
            (&mut vel.solver, &vel.vectors, &vel.grid),
            (&mut scal.solver, &scal.vectors, &scal.grid),
            ctx,
            (&pcg, &pcg),
        );
        if let Ok((rv, rs)) = &out {
            let faces = vel.params.sys_cells;
            self.store(ctx, &vel, rv, (self.e.velocity_store, faces), None, None);
            let cells = f.num_cells();
            self.store(ctx, &scal, rs, (self.e.scalar_store, cells), last, None);
        }
        self.velocity = Some(vel);
        self.scalars = Some(scal);
        Ok(out?)
    }
}
