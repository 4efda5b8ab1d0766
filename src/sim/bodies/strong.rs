//! The bodies in the pressure solve (strong.wgsl): the sums J_k x over each body's faces
//! that give the fluid's force and torque on it (both coupling schemes), and the strong
//! coupling's added term s J^T M^-1 J, applied matrix-free inside the PCG
//! ([`crate::sim::core::pressure::AddedTerm`]). strong.wgsl derives the system.

use super::{BodySet, MAX_BODIES};
use crate::gpu::{storage_buffer, uniform_buffer, Bindable, GpuContext, Kernel};
use crate::sim::core::fields::GridFields;
use crate::sim::core::limits::{buffer_limit, check_buffer};
use crate::sim::core::pressure::{pcg, AddedTerm, PcgVectors, TermOp};
use crate::sim::SimError;
use bytemuck::{Pod, Zeroable};
use glam::DVec3;

crate::kernel_entries!(
    /// The entry points of strong.wgsl.
    StrongEntries {
        sum_d, sum_p, reduce_d, reduce_p, finish_p, reduce_one, add_q, add_q_boxes, sub_r, into_z, restamp, deflate_j, deflate_z, deflate_setup, setup_finish, deflate_sums,
        deflate_add, deflate_start, start_finish, deflate_p, sub_r_boxes,
    }
);

/// One body as strong.wgsl reads it. Mirror of `CoupleBody` in strong.wgsl (layout checked
/// by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CoupleBody {
    pub centre: [f32; 4],
    pub vel: [f32; 4],
    pub omega: [f32; 4],
    /// s / m per axis (0 where the body does not move with the fluid).
    pub inv_mass: [f32; 4],
    /// Columns of s I^-1, world axes.
    pub inv_inertia_x: [f32; 4],
    pub inv_inertia_y: [f32; 4],
    pub inv_inertia_z: [f32; 4],
    /// The cells the body may cover, lo <= x < hi. With the deflation, lo[3] is where the
    /// body's deflation space starts and hi[3] (as u32 bits) the bodies whose space's box
    /// meets its own ([`place_spaces`]).
    pub lo: [i32; 4],
    pub hi: [i32; 4],
}
const _: () = assert!(std::mem::size_of::<CoupleBody>() == 144);
crate::wgsl_mirror!(couple_body_layout: CoupleBody = "strong.wgsl" CoupleBody {
    centre: centre,
    vel: vel,
    omega: omega,
    inv_mass: inv_mass,
    inv_inertia_x: inv_inertia_x,
    inv_inertia_y: inv_inertia_y,
    inv_inertia_z: inv_inertia_z,
    lo: lo,
    hi: hi,
});

/// Mirror of `StrongParams` in strong.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct StrongParams {
    pub bodies: u32,
    pub slice: u32,
    /// 1: the term is P K P, P the projection off the constant over the FLUID cells (the
    /// smoke's closed box, see strong.wgsl).
    pub project: u32,
    /// Workgroups of the FLUID-cell sums.
    pub groups: u32,
    /// Workgroups per body of the box loops ([`box_chunks`]).
    pub chunks: u32,
    pub pad0: u32,
    pub pad1: u32,
    pub pad2: u32,
}
crate::wgsl_mirror!(strong_params_layout: StrongParams = "strong.wgsl" StrongParams {
    bodies: bodies,
    slice: slice,
    project: project,
    groups: groups,
    chunks: chunks,
    pad0: pad0,
    pad1: pad1,
    pad2: pad2,
});

/// The box of a body's deflation space (strong.wgsl's `z_box`: the box of the cells it may
/// cover grown by two, within the grid), lo <= x < hi.
fn space_box(b: &CoupleBody, n: [u32; 3]) -> ([i32; 3], [i32; 3]) {
    let lo = std::array::from_fn(|a| (b.lo[a] - 2).max(0));
    let hi = std::array::from_fn(|a| (b.hi[a] + 2).min(n[a] as i32).max(lo[a]));
    (lo, hi)
}

/// hi.w of a body whose space's box meets a body's of index 32 or more: every body is
/// tested (strong.wgsl's `add_z_y`).
pub const MEETS_ANY: u32 = u32::MAX;

/// Places the bodies' deflation spaces one after another (lo.w: the first cell of each,
/// strong.wgsl's `z_at`) and marks in hi.w (as u32 bits) the bodies whose space's box meets
/// each one's: bit j for body j < 32, or [`MEETS_ANY`] where one of them is 32 or more
/// (`deflate_add` then sums those bodies' rows at the cells they share, and tests only
/// them). Returns the cells of all the boxes.
pub fn place_spaces(bodies: &mut [CoupleBody], n: [u32; 3]) -> u64 {
    let boxes: Vec<_> = bodies.iter().map(|b| space_box(b, n)).collect();
    let mut at = 0u64;
    for (k, b) in bodies.iter_mut().enumerate() {
        let (lo, hi) = boxes[k];
        b.lo[3] = at as i32;
        at += (0..3).map(|a| (hi[a] - lo[a]) as u64).product::<u64>();
        let mask = boxes
            .iter()
            .enumerate()
            .filter(|&(j, &(lo2, hi2))| j != k && (0..3).all(|a| lo[a] < hi2[a] && lo2[a] < hi[a]))
            .fold(
                0u32,
                |m, (j, _)| if j < 32 { m | 1 << j } else { MEETS_ANY },
            );
        b.hi[3] = mask as i32;
    }
    at
}

/// Floats per (body, part) of the box loops' partial sums (strong.wgsl's PART_STRIDE).
pub const PART_STRIDE: usize = 48;
/// Most parts a body's box is split into.
pub const MAX_CHUNKS: u32 = 32;

/// The box loops' workgroups per body (strong.wgsl, "The box loops"): enough for about two
/// cells per thread of the largest box (each box with a cell to spare, within the grid), at
/// most `max`.
pub fn box_chunks(bodies: &[CoupleBody], n: [u32; 3], max: u32) -> u32 {
    let cells = bodies
        .iter()
        .map(|b| {
            (0..3)
                .map(|a| {
                    let lo = (b.lo[a] - 1).max(0);
                    let hi = (b.hi[a] + 1).min(n[a] as i32);
                    (hi - lo).max(0) as u64
                })
                .product::<u64>()
        })
        .max()
        .unwrap_or(0);
    (cells.div_ceil(2 * pcg::REDUCE_WG as u64) as u32).clamp(1, max.max(1))
}

/// f32 per body in the sums (strong.wgsl's SUM_STRIDE).
pub const SUM_STRIDE: usize = 24;

/// Where each body's change of velocity in the viscosity step starts in the sums
/// (src/sim/bodies/viscous.wgsl writes six f32 per body there, the substep reads them back
/// with the pressure's).
pub const VISCOUS_AT: usize = MAX_BODIES * SUM_STRIDE + 8;

/// f32 of the sums: per body, then the FLUID cells' sum and count (and padding), then the
/// viscosity step's changes of velocity.
const SUM_FLOATS: usize = VISCOUS_AT + MAX_BODIES * 6;

/// f32 per body of the deflation's blocks (strong.wgsl's DEFL_STRIDE): E_k^-1, G_k C_k, y_k.
pub const DEFL_STRIDE: usize = 80;
/// Bytes of the deflation's blocks at the head of its buffer; the bodies' deflation spaces
/// follow (strong.wgsl's ZROWS_BASE).
pub const DEFL_BLOCK_BYTES: u64 = (MAX_BODIES * DEFL_STRIDE * 4) as u64;
/// Bytes per cell of a body's deflation space: its rows of Z_k and of J_k^T (strong.wgsl's
/// ZROW).
pub const ZROW_BYTES: u64 = 12 * 4;
/// The deflation's buffer, as a size check names it.
pub const DEFLATION_BUFFER: &str =
    "bodies' deflation spaces (48 bytes per cell of each body's box)";
/// What to change when the deflation's buffer does not fit.
pub const DEFLATION_HINT: &str =
    "turn body_deflation off, or use fewer or smaller bodies, or a coarser resolution";

/// Bytes of the partial sums: the FLUID-cell sums' two per workgroup, then the box loops'
/// PART_STRIDE per (body, part).
const PARTIALS_BYTES: u64 = (2 * pcg::MAX_REDUCE_GROUPS as usize
    + MAX_BODIES * MAX_CHUNKS as usize * PART_STRIDE) as u64
    * 4;

/// GPU bytes of the strong coupling's buffers: the bodies, the sums and their room in the
/// substep's readback, the deflation's blocks, the partial sums, the parameters.
pub const BYTES: u64 = (MAX_BODIES * std::mem::size_of::<CoupleBody>()
    + 2 * SUM_FLOATS * 4
    + MAX_BODIES * DEFL_STRIDE * 4
    + PARTIALS_BYTES as usize
    + std::mem::size_of::<StrongParams>()) as u64;

/// What the sums of one body hold after [`StrongCoupling::record_forces`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FaceSums {
    /// J phi: sum over the FLUID cells' faces the body covers of c (n, r x n) times phi of
    /// the cell, c the body's share of the face (strong.wgsl).
    pub j_phi: [f64; 6],
    /// J (g . n): the same with g . n, for the hydrostatic part of the face pressure.
    pub j_g: [f64; 6],
    /// The change of velocity (m/s) and angular velocity (1/s) the viscosity step gave the
    /// body (zero where it did not run, or the body is not dynamic).
    pub viscous_dq: [f64; 6],
}

/// The fluid's force and torque on a body from its face sums, split as the two schemes use
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FluidForce {
    /// Of the pressure at the FLUID cells' centres: -(rho / dt) A_face J phi.
    pub pressure: (DVec3, DVec3),
    /// The hydrostatic half cell from those centres to the faces, rho A_face h/2 J (g . n)
    /// (the liquid's whole cells; zero where bodies cut faces, whose J sums the pressure's
    /// gradient over the body, and in the smoke, whose pressure leaves out the hydrostatic
    /// part).
    pub surface: (DVec3, DVec3),
    /// The change of velocity and angular velocity of the viscosity step (the viscous
    /// stress's impulse over the body's mass and inertia).
    pub viscous_change: (DVec3, DVec3),
}

impl FluidForce {
    pub fn total(&self) -> (DVec3, DVec3) {
        (
            self.pressure.0 + self.surface.0,
            self.pressure.1 + self.surface.1,
        )
    }
}

/// How the sums turn into forces: fluid density (kg/m^3), face area (m^2), cell size (m),
/// whether the face pressure carries the hydrostatic half cell (the liquid's whole cells),
/// and whether the fluid fills a closed box (the smoke: the term is then P K P).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceScales {
    pub density: f64,
    pub face_area: f64,
    pub h: f64,
    pub hydrostatic: bool,
    pub closed: bool,
}

impl ForceScales {
    /// The force and torque of `sums` over a substep of `dt`.
    pub fn force(&self, sums: &FaceSums, dt: f64) -> FluidForce {
        let v = |s: &[f64; 6], k: f64| {
            (
                DVec3::new(s[0], s[1], s[2]) * k,
                DVec3::new(s[3], s[4], s[5]) * k,
            )
        };
        let surface = if self.hydrostatic {
            0.5 * self.density * self.face_area * self.h
        } else {
            0.0
        };
        FluidForce {
            pressure: v(&sums.j_phi, -self.density * self.face_area / dt.max(1e-300)),
            surface: v(&sums.j_g, surface),
            viscous_change: v(&sums.viscous_dq, 1.0),
        }
    }

    /// s = h rho A_face: the scale of the added term s J^T M^-1 J.
    pub fn s(&self) -> f64 {
        self.h * self.density * self.face_area
    }
}

/// The strong coupling's kernels and buffers.
pub struct StrongCoupling {
    kernel: Kernel,
    e: StrongEntries,
    group: wgpu::BindGroup,
    pub params: StrongParams,
    params_buffer: wgpu::Buffer,
    /// The bodies as strong.wgsl reads them (`MAX_BODIES` slots).
    pub couple: wgpu::Buffer,
    /// Per body: J x, J (g . n), w, J 1 (see strong.wgsl).
    pub sums: wgpu::Buffer,
    _partials: wgpu::Buffer,
    /// The sums the last substep read back ([`Self::keep_sums`]).
    kept: Option<Vec<f32>>,
    pub scales: ForceScales,
    /// Whether the solve takes the added term (the strong scheme), or only the forces are
    /// summed (the weak one).
    pub strong: bool,
    /// Whether the solve deflates the bodies' modes (strong.wgsl, `deflate_*`): the strong
    /// scheme in the liquid, where the scene turns it on (`body_deflation`).
    pub deflate: bool,
    /// The deflation's blocks, then the bodies' deflation spaces (grown as the boxes need).
    defl: wgpu::Buffer,
    /// The buffers of `group` but `defl`, to bind a grown `defl` with.
    bound: Vec<(&'static str, Box<dyn Bindable>)>,
    cells: u32,
    /// The grid's cells per axis (the boxes' bounds).
    n: [u32; 3],
    /// The most parts a body's box loops are split into: [`MAX_CHUNKS`] on a GPU, 1 on a
    /// CPU adapter, whose few cores gain nothing from more workgroups (llvmpipe on two
    /// cores ran the split loops 1.4x slower; benchmarks/history.md). Public so tests can run
    /// both.
    pub max_chunks: u32,
}

impl StrongCoupling {
    pub fn new(
        ctx: &GpuContext,
        f: &GridFields,
        pcg: &PcgVectors,
        (body_id, cover): (&wgpu::Buffer, &wgpu::Buffer),
        scales: ForceScales,
        strong: bool,
    ) -> Self {
        let device = &ctx.device;
        let kernel = Kernel::new(device, crate::wgsl!("strong.wgsl"), "Strong");
        let slice = f.params.n[2] == 1;
        let params = StrongParams {
            bodies: 0,
            slice: slice as u32,
            // The smoke is a closed box: no AIR cell ever fixes the pressure's level.
            project: (strong && scales.closed) as u32,
            groups: pcg::reduce_groups(f.num_cells()),
            chunks: 1,
            ..Default::default()
        };
        let params_buffer = uniform_buffer(device, "Strong::params", bytemuck::bytes_of(&params));
        let couple = storage_buffer(
            device,
            "Strong::couple",
            (MAX_BODIES * std::mem::size_of::<CoupleBody>()) as u64,
        );
        let sums = storage_buffer(device, "Strong::sums", Self::SUMS_BYTES);
        let defl = storage_buffer(device, "Strong::defl", DEFL_BLOCK_BYTES);
        let partials = storage_buffer(device, "Strong::partials", PARTIALS_BYTES);
        let bound: Vec<(&'static str, Box<dyn Bindable>)> = vec![
            ("params", Box::new(f.params_buffer.clone())),
            ("sp", Box::new(params_buffer.clone())),
            ("cb", Box::new(couple.clone())),
            ("body_id", Box::new(body_id.clone())),
            ("cell_type", Box::new(f.cell_type.clone())),
            ("sums", Box::new(sums.clone())),
            ("p", Box::new(pcg.p.clone())),
            ("d", Box::new(pcg.d.clone())),
            ("q", Box::new(pcg.q.clone())),
            ("r", Box::new(pcg.r.clone())),
            ("z", Box::new(pcg.z.clone())),
            ("done", Box::new(pcg.state.clone())),
            ("solid_vel", Box::new(f.solid_vel.clone())),
            ("partials", Box::new(partials.clone())),
            ("cover", Box::new(cover.clone())),
            ("a", Box::new(pcg.a.clone())),
        ];
        let group = Self::bind(&kernel, device, &bound, &defl);
        Self {
            e: StrongEntries::of(&kernel),
            kernel,
            group,
            params,
            params_buffer,
            couple,
            sums,
            _partials: partials,
            kept: None,
            scales,
            strong,
            deflate: strong && !scales.closed,
            defl,
            bound,
            cells: f.num_cells(),
            n: f.params.n,
            max_chunks: if ctx.info.device_type == wgpu::DeviceType::Cpu {
                1
            } else {
                MAX_CHUNKS
            },
        }
    }

    fn bind(
        kernel: &Kernel,
        device: &wgpu::Device,
        bound: &[(&'static str, Box<dyn Bindable>)],
        defl: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let mut all: Vec<(&str, &dyn Bindable)> =
            bound.iter().map(|(n, b)| (*n, b.as_ref())).collect();
        all.push(("defl", defl));
        kernel.bind(device, &all)
    }

    /// The bodies of `set` as strong.wgsl reads them, on a grid of `n` cells of `h`. Only
    /// dynamic bodies of the strong scheme have an inverse mass: the others are velocity
    /// boundaries the solve cannot move.
    pub fn couple_bodies(&self, set: &BodySet, n: [u32; 3], h: f64) -> Vec<CoupleBody> {
        let s = self.scales.s();
        set.bodies
            .iter()
            .map(|b| {
                let moves = self.strong && b.is_dynamic();
                let k = if moves { s } else { 0.0 };
                let mut inv_mass = DVec3::splat(b.inverse_mass() * k);
                // The solve gives a sphere no spin (`Body::pressure_turns`).
                let mut inv_i = if b.pressure_turns() {
                    b.inverse_inertia() * k
                } else {
                    glam::DMat3::ZERO
                };
                if set.slice {
                    inv_mass.z = 0.0;
                    let zz = inv_i.z_axis.z;
                    inv_i = glam::DMat3::ZERO;
                    inv_i.z_axis.z = zz;
                }
                let c = b.position;
                let half = b.aabb_half();
                // Cells whose centre may lie inside, with a cell to spare for f32 rounding.
                let range = |a: usize| {
                    let cells = n[a] as f64;
                    let lo = ((c[a] - half[a]) / h - 0.5).floor() - 1.0;
                    let hi = ((c[a] + half[a]) / h - 0.5).ceil() + 2.0;
                    (lo.clamp(0.0, cells) as i32, hi.clamp(0.0, cells) as i32)
                };
                let (x, y, z) = (range(0), range(1), range(2));
                let (z0, z1) = if set.slice { (0, 1) } else { z };
                let f = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32, 0.0];
                CoupleBody {
                    centre: f(c),
                    vel: f(b.velocity()),
                    omega: f(b.omega()),
                    inv_mass: f(inv_mass),
                    inv_inertia_x: f(inv_i.x_axis),
                    inv_inertia_y: f(inv_i.y_axis),
                    inv_inertia_z: f(inv_i.z_axis),
                    lo: [x.0, y.0, z0, 0],
                    hi: [x.1, y.1, z1, 0],
                }
            })
            .collect()
    }

    /// Uploads `set`'s bodies (their velocities those the solve starts from).
    pub fn upload(
        &mut self,
        ctx: &GpuContext,
        set: &BodySet,
        f: &GridFields,
    ) -> Result<(), SimError> {
        let bodies = self.couple_bodies(set, f.params.n, f.params.h as f64);
        self.upload_bodies(ctx, &bodies)
    }

    /// Uploads bodies already in strong.wgsl's form (a frozen system's, for the solver lab).
    /// Fails when the deflation's spaces need a buffer past the adapter's binding limit
    /// (`eddy check` refuses such a scene before it runs: `coupling::deflation_buffer`).
    pub fn upload_bodies(
        &mut self,
        ctx: &GpuContext,
        bodies: &[CoupleBody],
    ) -> Result<(), SimError> {
        self.params.bodies = bodies.len() as u32;
        // The projected term's broadcast runs over every cell and needs the finished sums;
        // its slice's boxes are small, so one part per body finishes in place.
        self.params.chunks = if self.params.project != 0 {
            1
        } else {
            box_chunks(bodies, self.n, self.max_chunks)
        };
        let mut bodies = bodies.to_vec();
        if self.deflate {
            // Each body's deflation space after the ones before it (lo.w, in cells), in a
            // `defl` grown by half again when it no longer holds them.
            let at = place_spaces(&mut bodies, self.n);
            let need = DEFL_BLOCK_BYTES + at * ZROW_BYTES;
            check_buffer(ctx, need, DEFLATION_BUFFER, DEFLATION_HINT)?;
            if need > self.defl.size() {
                // Room to grow, within what a binding may hold (`need` fits and is a
                // multiple of 4).
                let size = (need + need / 2)
                    .next_multiple_of(256)
                    .min(buffer_limit(ctx) & !3);
                self.defl = storage_buffer(&ctx.device, "Strong::defl", size);
                self.group = Self::bind(&self.kernel, &ctx.device, &self.bound, &self.defl);
            }
        }
        ctx.queue
            .write_buffer(&self.params_buffer, 0, bytemuck::bytes_of(&self.params));
        ctx.queue
            .write_buffer(&self.couple, 0, bytemuck::cast_slice(&bodies));
        Ok(())
    }

    fn per_body(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        self.kernel
            .dispatch_groups(pass, entry, &self.group, &[], self.params.bodies.max(1));
    }

    /// A box loop: `params.chunks` workgroups per body (strong.wgsl, "The box loops").
    fn per_part(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        let groups = self.params.bodies.max(1) * self.params.chunks.max(1);
        self.kernel
            .dispatch_groups(pass, entry, &self.group, &[], groups);
    }

    /// A box loop's parts, then their sums per body (which the parts finish themselves
    /// where each body has one).
    fn reduce(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        part: crate::gpu::Entry,
        finish: crate::gpu::Entry,
    ) {
        self.per_part(pass, part);
        if self.params.chunks > 1 {
            self.per_body(pass, finish);
        }
    }

    fn per_cell(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        self.kernel.dispatch(pass, entry, &self.group, self.cells);
    }

    /// With the projection: the sum of x over the FLUID cells, before a reduction.
    fn fluid_sum(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        if self.params.project != 0 {
            self.kernel
                .dispatch_groups(pass, entry, &self.group, &[], self.params.groups);
        }
    }

    /// After the solve: the face sums of phi (the forces), and in the strong scheme each
    /// coupled body's cells given its velocity after the solve; record before the
    /// projection, which leaves the faces next to solids alone (the boundary stage then
    /// sets them from the new velocities).
    pub fn record_forces(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.fluid_sum(pass, self.e.sum_p);
        self.reduce(pass, self.e.reduce_p, self.e.finish_p);
        if self.strong {
            self.per_cell(pass, self.e.restamp);
        }
    }

    /// Bytes of the sums: what the substep's readback copies after its counters
    /// (src/sim/runner/substep.rs), so the forces come back in the substep's one read.
    pub const SUMS_BYTES: u64 = (SUM_FLOATS * 4) as u64;

    /// Keeps the sums the substep's readback brought back (`SUMS_BYTES` of f32).
    pub fn keep_sums(&mut self, words: &[f32]) {
        self.kept = Some(words.to_vec());
    }

    /// The face sums of the first `n` bodies, as the last substep that ran the projection
    /// brought them back.
    pub fn read_sums(&self, n: usize) -> Result<Vec<FaceSums>, SimError> {
        let raw = self.kept.as_ref().ok_or_else(|| {
            SimError::Unsupported("no substep has summed the bodies' forces yet".into())
        })?;
        Ok(raw
            .chunks(SUM_STRIDE)
            .take(n)
            .enumerate()
            .map(|(i, s)| FaceSums {
                j_phi: std::array::from_fn(|k| s[k] as f64),
                j_g: std::array::from_fn(|k| s[6 + k] as f64),
                viscous_dq: std::array::from_fn(|k| {
                    raw.get(VISCOUS_AT + 6 * i + k).map_or(0.0, |v| *v as f64)
                }),
            })
            .collect())
    }
}

impl AddedTerm for StrongCoupling {
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, op: TermOp) {
        match op {
            TermOp::AddToQ => {
                self.fluid_sum(pass, self.e.sum_d);
                self.per_part(pass, self.e.reduce_d);
                if self.params.project != 0 {
                    // P K P touches every FLUID cell; its one part per body (`upload_bodies`)
                    // finished the sums in place.
                    self.per_cell(pass, self.e.add_q);
                } else {
                    // add_q_boxes finishes the parts itself.
                    self.per_part(pass, self.e.add_q_boxes);
                }
            }
            TermOp::SubtractFromR => {
                // The bodies' open faces (J 1) for the projection, once per solve.
                if self.params.project != 0 {
                    // One part per body: it finishes in place.
                    self.per_part(pass, self.e.reduce_one);
                }
                self.fluid_sum(pass, self.e.sum_p);
                self.reduce(pass, self.e.reduce_p, self.e.finish_p);
                if self.params.project != 0 {
                    self.per_cell(pass, self.e.sub_r);
                } else {
                    // K p is zero outside the boxes.
                    self.per_part(pass, self.e.sub_r_boxes);
                }
            }
            TermOp::PrepareDeflation => {
                if self.deflate {
                    self.per_part(pass, self.e.deflate_j);
                    self.per_part(pass, self.e.deflate_z);
                    self.reduce(pass, self.e.deflate_setup, self.e.setup_finish);
                }
            }
            TermOp::DeflateStart => {
                if self.deflate {
                    self.reduce(pass, self.e.deflate_start, self.e.start_finish);
                    // Z y is zero outside the boxes of Z.
                    self.per_part(pass, self.e.deflate_p);
                }
            }
            TermOp::Deflate => {
                if self.deflate {
                    // deflate_add finishes the parts itself.
                    self.per_part(pass, self.e.deflate_sums);
                    self.per_part(pass, self.e.deflate_add);
                }
            }
            TermOp::IntoZ => {
                self.fluid_sum(pass, self.e.sum_p);
                self.reduce(pass, self.e.reduce_p, self.e.finish_p);
                self.per_cell(pass, self.e.into_z);
            }
        }
    }

    fn dispatches(&self) -> u32 {
        // reduce_d and add_q_boxes; with `project` sum_d, reduce_d (one part per body, which
        // finishes itself) and add_q.
        2 + self.params.project
    }

    fn deflates(&self) -> bool {
        self.deflate
    }

    fn deflation_dispatches(&self) -> u32 {
        2 * self.deflate as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(lo: [i32; 3], hi: [i32; 3]) -> CoupleBody {
        CoupleBody {
            lo: [lo[0], lo[1], lo[2], 0],
            hi: [hi[0], hi[1], hi[2], 0],
            ..Default::default()
        }
    }

    #[test]
    fn box_loops_take_about_two_cells_per_thread_of_the_largest_box() {
        let n = [64, 64, 64];
        // 8^3 cells, 10^3 with the spare cell: 1000 / 512 -> 2 parts.
        assert_eq!(
            box_chunks(&[boxed([10, 10, 10], [18, 18, 18])], n, MAX_CHUNKS),
            2
        );
        // The largest box decides; one at the grid's edge is clipped (17 x 18 x 18 = 5508).
        let both = [
            boxed([10, 10, 10], [18, 18, 18]),
            boxed([0, 20, 20], [16, 36, 36]),
        ];
        assert_eq!(box_chunks(&both, n, MAX_CHUNKS), 11);
        // A CPU adapter's limit of one.
        assert_eq!(box_chunks(&both, n, 1), 1);
        // At least one part, at most MAX_CHUNKS.
        assert_eq!(box_chunks(&[], n, MAX_CHUNKS), 1);
        assert_eq!(
            box_chunks(&[boxed([0, 0, 0], [64, 64, 64])], n, MAX_CHUNKS),
            MAX_CHUNKS
        );
    }

    #[test]
    fn deflation_spaces_lie_one_after_another_and_know_whom_they_meet() {
        let n = [32, 32, 32];
        let mut bodies = [
            // 8^3 grown by two each way: 12^3.
            boxed([10, 10, 10], [18, 18, 18]),
            // At the grid's corner: 0..6 (clipped below) on each axis.
            boxed([0, 0, 0], [4, 4, 4]),
            // 10 x 12 x 12, from x = 20: just clear of the first's (x < 20).
            boxed([22, 10, 10], [28, 18, 18]),
            // 7 x 8 x 8 from (17, 18, 10): meets the first's and the third's.
            boxed([19, 20, 12], [22, 24, 16]),
        ];
        let total = place_spaces(&mut bodies, n);
        let offsets: Vec<i32> = bodies.iter().map(|b| b.lo[3]).collect();
        assert_eq!(offsets, [0, 1728, 1728 + 216, 1728 + 216 + 1440]);
        assert_eq!(total, 1728 + 216 + 1440 + 7 * 8 * 8);
        let meets: Vec<u32> = bodies.iter().map(|b| b.hi[3] as u32).collect();
        assert_eq!(meets, [0b1000, 0, 0b1000, 0b0101]);
        // A row of one-cell boxes (spaces five wide: each meets the four either side), and two
        // of index 32 and 33 apart from the row, meeting each other: every body is tested.
        let mut many: Vec<CoupleBody> = (0..34).map(|i| boxed([i, 0, 0], [i + 1, 1, 1])).collect();
        many[32] = boxed([0, 12, 12], [1, 13, 13]);
        many[33] = boxed([0, 10, 10], [1, 11, 11]);
        place_spaces(&mut many, [64, 64, 64]);
        assert_eq!(many[0].hi[3] as u32, 0b11110);
        assert_eq!(many[31].hi[3] as u32, 0b1111 << 27);
        assert_eq!(many[32].hi[3] as u32, MEETS_ANY);
        assert_eq!(many[33].hi[3] as u32, MEETS_ANY);
        // The bounds the box loops read are kept.
        assert_eq!(&bodies[0].lo[..3], &[10, 10, 10]);
        assert_eq!(&bodies[0].hi[..3], &[18, 18, 18]);
    }
}
