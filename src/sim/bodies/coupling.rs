//! The bodies' two-way coupling with the grid (coupling.wgsl): stamping bodies into
//! the cells as moving solids and pushing particles out of bodies; the bodies' part of the
//! pressure solve and their forces are in [`super::strong`]. The liquid and the smoke run
//! the same kernels; the [`CouplingMode`] says how each treats the cells around them.

use super::regions::Regions;
use super::strong::{FluidForce, ForceScales, StrongCoupling};
use super::{BodySet, Solid, MAX_BODIES};
use crate::gpu::constants::MAX_REGIONS;
use crate::gpu::{storage_buffer, uniform_buffer, BufferReader, GpuContext, Kernel};
use crate::scene::{CouplingScheme, Scene, SceneKind};
use crate::sim::{
    core::fields::{GridFields, Particles},
    core::pressure::PcgVectors,
    core::recorder::Recorder,
    SimError,
};
use bytemuck::{Pod, Zeroable};
use glam::DVec3;

crate::kernel_entries!(
    /// The entry points of coupling.wgsl.
    BodiesEntries {
        stamp, push_count, push_out, region_freeze, rhs_sum, rhs_compatible, pocket_mark, pocket_fill,
        isolated_fill, cover_faces, cover_cells, pack_regions, gather_scale_faces
    }
);

/// One body as the kernels read it. Mirror of `Body` in coupling.wgsl (layout
/// checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBody {
    /// xyz centre (m), w shape: 0 none, 1 box, 2 sphere.
    pub centre: [f32; 4],
    pub axis_x: [f32; 4],
    pub axis_y: [f32; 4],
    pub axis_z: [f32; 4],
    /// Box half extents, or the sphere's radius in x (m).
    pub half: [f32; 4],
    pub vel: [f32; 4],
    pub omega: [f32; 4],
    /// 1/m, then 1/I about the body's own x, y, z axes: 0 where the body keeps its motion
    /// (not dynamic; a slice's about x and y).
    pub inverse: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<GpuBody>() == 128);
crate::wgsl_mirror!(gpu_body_layout: GpuBody = "coupling.wgsl" Body {
    centre: centre,
    axis_x: axis_x,
    axis_y: axis_y,
    axis_z: axis_z,
    half: half,
    vel: vel,
    omega: omega,
    inverse: inverse,
});

/// Mirror of `BodyParams` in coupling.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BodyParams {
    pub restore: u32,
    pub set_cell_type: u32,
    pub slice: u32,
    /// 1: the bodies cut faces (`Scene::bodies_cut_faces`); 0: they are whole cells.
    pub fractions: u32,
    pub margin: f32,
    /// Fixed-point units per unit of the pressure right-hand side (m^2/s).
    pub b_unit: f32,
    /// Liquid per particle, kg (0 for the smoke's massless tracers).
    pub particle_mass: f32,
    /// 1: a face's part a body uncovers joins the fluid at the body's velocity (the smoke,
    /// whose face velocities carry over from one substep to the next).
    pub uncover: u32,
}
const _: () = assert!(std::mem::size_of::<BodyParams>() == 32);
crate::wgsl_mirror!(body_params_layout: BodyParams = "coupling.wgsl" BodyParams {
    restore: restore,
    set_cell_type: set_cell_type,
    slice: slice,
    fractions: fractions,
    margin: margin,
    b_unit: b_unit,
    particle_mass: particle_mass,
    uncover: uncover,
});

pub use crate::gpu::constants::{BODY_SHAPE_BOX as SHAPE_BOX, BODY_SHAPE_SPHERE as SHAPE_SPHERE};

/// Bytes of the sums: the right-hand side's i64 sum per region, then its FLUID cells.
const SUMS_BYTES: u64 = (MAX_REGIONS * 12) as u64;

/// u32 words of the push-out's momentum sums of one body: 6 values of two words.
const PUSH_WORDS_PER_BODY: u64 = 12;
/// u32 words of the push-out's momentum sums of every body.
pub const PUSH_WORDS: u64 = MAX_BODIES as u64 * PUSH_WORDS_PER_BODY;
/// u32 words of `push_sums`: the momentum sums, then the particles inside each body
/// (coupling.wgsl's PUSH_COUNT_BASE).
const PUSH_BUFFER_WORDS: u64 = PUSH_WORDS + MAX_BODIES as u64;
/// Fixed-point units per N s of those sums (coupling.wgsl's PUSH_UNIT).
const PUSH_UNIT: f64 = 16777216.0;

/// Rounds of closing fluid pockets and dead ends (coupling.wgsl, `pocket_mark`).
const POCKET_ROUNDS: usize = 2;

/// How a mode's cells take the bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CouplingMode {
    /// The liquid: bodies are stamped before the cells are classified (mark_cells reads
    /// `solid`); cells no body covers get the scene's static solids back.
    Liquid,
    /// The smoke: bodies are stamped after its mark stage, and their cells turn SOLID in
    /// `cell_type` as well.
    Smoke,
}

/// GPU bytes the coupling of `scene`'s bodies takes (0 without bodies): the body slots, the
/// per-cell body index, the per-face cover (counted with the open fractions where bodies
/// cut faces, `GridFields::open_bytes`), the region sums, the push-out's momentum sums, the
/// strong coupling's bodies and face sums, and the liquid's own copy of its static solids
/// or the smoke's regions and the staging copy of what labelling them needs (4 bits per
/// cell).
pub fn memory(scene: &Scene) -> u64 {
    if scene.bodies.is_empty()
        && !(scene.kind == SceneKind::Smoke && scene.smoke.obstacle.is_some())
    {
        return 0;
    }
    let cells = scene.dims().iter().map(|&v| v as u64).product::<u64>();
    let faces = crate::scene::fractions::face_counts(scene.dims().map(|v| v as usize))
        .iter()
        .sum::<usize>() as u64;
    // The cover (4 bytes per face) is counted here without fractions, with the open
    // fractions otherwise (GridFields::open_bytes).
    let cover = if scene.bodies_cut_faces() {
        0
    } else {
        faces * 4
    };
    let common = (MAX_BODIES * std::mem::size_of::<GpuBody>()) as u64
        + cover
        + PUSH_BUFFER_WORDS * 4
        + cells * 4
        + SUMS_BYTES
        + super::strong::BYTES;
    common
        + match scene.kind {
            SceneKind::Smoke => cells * 4 + cells.div_ceil(8) * 4,
            SceneKind::Liquid => cells * (4 + 16) + MAX_REGIONS as u64 * 4,
        }
        + deflation_memory(scene)
}

/// At most what the deflation's spaces take (strong.wgsl, `deflate_z`), and half again for
/// the buffer's room to grow.
fn deflation_memory(scene: &Scene) -> u64 {
    let spaces = deflation_buffer(scene).saturating_sub(super::strong::DEFL_BLOCK_BYTES);
    spaces.saturating_mul(3) / 2
}

/// The most bytes the deflation's buffer needs (the blocks, then 48 bytes per cell of each
/// body's box grown by its spare cells: about 2 r / h + 9 cells a side for a body of
/// circumradius r, within the grid), 0 without deflation. At run time the buffer's room to
/// grow stops at the adapter's binding limit, so this is what must fit in one binding.
pub fn deflation_buffer(scene: &Scene) -> u64 {
    let deflates = scene.kind == SceneKind::Liquid
        && scene.body_coupling.is_strong()
        && scene.body_deflation == Some(true);
    if !deflates {
        return 0;
    }
    let h = scene.h();
    let dims = scene.dims();
    let cells: u64 = scene
        .bodies
        .iter()
        .map(|b| {
            let r = match b.shape {
                crate::scene::BodyShape::Sphere { radius } => radius,
                crate::scene::BodyShape::Box {
                    half_extents: (x, y, z),
                } => (x * x + y * y + z * z).sqrt(),
            };
            let side = (2.0 * r / h).ceil().min(u32::MAX as f64) as u64 + 9;
            dims.iter().map(|&n| side.min(n as u64)).product::<u64>()
        })
        .fold(0u64, u64::saturating_add);
    super::strong::DEFL_BLOCK_BYTES.saturating_add(cells.saturating_mul(super::strong::ZROW_BYTES))
}

/// The deflation's buffer as a candidate for a memory estimate's largest buffer.
pub fn deflation_candidate(scene: &Scene) -> (u64, &'static str, &'static str) {
    (
        deflation_buffer(scene),
        super::strong::DEFLATION_BUFFER,
        super::strong::DEFLATION_HINT,
    )
}

impl GpuBody {
    pub fn from_set(set: &BodySet) -> Vec<GpuBody> {
        let mut out = vec![GpuBody::default(); MAX_BODIES];
        for (g, b) in out.iter_mut().zip(&set.bodies) {
            let r = b.rotation();
            let p = b.position;
            let v = b.velocity();
            let w = b.omega();
            let (shape, half) = match b.solid {
                Solid::Box { half } => (SHAPE_BOX, [half.x, half.y, half.z]),
                Solid::Sphere { radius } => (SHAPE_SPHERE, [radius, radius, radius]),
            };
            let col = |c: glam::DVec3| [c.x as f32, c.y as f32, c.z as f32, 0.0];
            *g = GpuBody {
                centre: [p.x as f32, p.y as f32, p.z as f32, shape],
                axis_x: col(r.x_axis),
                axis_y: col(r.y_axis),
                axis_z: col(r.z_axis),
                half: [half[0] as f32, half[1] as f32, half[2] as f32, 0.0],
                vel: col(v),
                omega: col(w),
                inverse: if b.is_dynamic() {
                    let i = 1.0 / b.inertia;
                    let (ix, iy) = if set.slice { (0.0, 0.0) } else { (i.x, i.y) };
                    [b.inverse_mass() as f32, ix as f32, iy as f32, i.z as f32]
                } else {
                    [0.0; 4]
                },
            };
        }
        out
    }
}

/// The coupling stage: its kernels, the bodies' buffers and the force readback.
pub struct BodyCoupling {
    kernel: Kernel,
    mode: CouplingMode,
    e: BodiesEntries,
    group: wgpu::BindGroup,
    /// The bodies as the GPU sees them (`MAX_BODIES` slots).
    pub bodies: wgpu::Buffer,
    pub params_buffer: wgpu::Buffer,
    pub params: BodyParams,
    /// Body index + 1 per cell, 0 where no body is.
    pub body_id: wgpu::Buffer,
    /// Per face, the body covering it and its share (coupling.wgsl, `cover_faces`).
    pub cover: wgpu::Buffer,
    /// The right-hand side's fixed-point sum per region (the smoke).
    pub sums: wgpu::Buffer,
    /// The smoke's regions (see [`Regions::gpu_words`]).
    pub regions: wgpu::Buffer,
    /// The liquid's static solids (the smoke binds its own).
    _base: Option<(wgpu::Buffer, wgpu::Buffer)>,
    /// The smoke's readback of what labelling its regions needs (`pack_regions`, 4 bits
    /// per cell).
    solid_reader: Option<BufferReader>,
    /// The momentum the push-out gives the particles, per body (coupling.wgsl
    /// `push_sums`), and its readback (the liquid, whose particles carry mass).
    push_sums: wgpu::Buffer,
    /// Whether the push-out's sums carry momentum (the liquid's particles have mass).
    pushes_momentum: bool,
    num_particles: u32,
    /// The smoke's regions of its static solids alone ([`Self::set_static_regions`]);
    /// None until the smoke gives its solids.
    static_regions: Option<StaticRegions>,
    /// Whether the GPU holds `static_regions`' labels (nothing to upload again).
    labels_static: bool,
    /// Label the regions from the stamped flags every substep, never from the static
    /// solids' labels (tests compare the two).
    pub always_label: bool,
}

/// The regions of the smoke's static solids alone, and which cells those solids touch.
struct StaticRegions {
    regions: Regions,
    solid: Vec<bool>,
    n: [usize; 3],
}

/// What the coupling binds from its mode.
pub struct CouplingInputs<'a> {
    pub fields: &'a GridFields,
    /// The pressure solve's vectors (phi, the right-hand side, the PCG's).
    pub pcg: &'a PcgVectors,
    pub particles: &'a Particles,
    pub mode: CouplingMode,
    /// The smoke's static solids and their velocities; None in the liquid, which passes
    /// its scene solids in `static_cells` instead.
    pub base: Option<(&'a wgpu::Buffer, &'a wgpu::Buffer)>,
    pub static_cells: Option<(&'a [u32], &'a [[f32; 4]])>,
    /// Area of a cell face, m^2 (h^2, or h times a slice's depth).
    pub face_area: f64,
    /// Liquid per particle, kg (0: the smoke's tracers carry none).
    pub particle_mass: f64,
    /// Whether a strong solve with `mg` deflates the bodies' modes (the scene's
    /// `body_deflation`; the smoke's projected term never does: src/sim/bodies/strong.wgsl).
    pub deflate: bool,
}

impl BodyCoupling {
    pub fn new(ctx: &GpuContext, inp: CouplingInputs<'_>) -> Result<Self, SimError> {
        let device = &ctx.device;
        let f = inp.fields;
        let kernel = Kernel::new(device, crate::wgsl!("coupling.wgsl"), "Bodies");
        let bodies = storage_buffer(
            device,
            "Bodies::bodies",
            (MAX_BODIES * std::mem::size_of::<GpuBody>()) as u64,
        );
        let h = f.params.h as f64;
        let params = BodyParams {
            restore: (inp.mode == CouplingMode::Liquid) as u32,
            set_cell_type: (inp.mode == CouplingMode::Smoke) as u32,
            slice: (f.params.n[2] == 1 && inp.mode == CouplingMode::Smoke) as u32,
            fractions: f.open_static.is_some() as u32,
            particle_mass: inp.particle_mass as f32,
            uncover: (inp.mode == CouplingMode::Smoke && f.open_static.is_some()) as u32,
            margin: (1e-3 * h) as f32,
            // |rhs| <= h (cells crossed per second) stays below 2^27 h for any speed a scene
            // allows, so 2^30 cells of it fit the i64 sum.
            b_unit: 2f64.powi(32 - (h.log2().round() as i32)) as f32,
        };
        let params_buffer = uniform_buffer(device, "Bodies::params", bytemuck::bytes_of(&params));
        let cells = f.num_cells() as u64;
        let body_id = storage_buffer(device, "Bodies::body_id", cells * 4);
        let cover = storage_buffer(device, "Bodies::cover", f.num_faces() as u64 * 4);
        // Without fractions `open` is not the coupling's to write: a placeholder is bound.
        let placeholders = [
            storage_buffer(device, "Bodies::open_placeholder", 4),
            storage_buffer(device, "Bodies::base_open_placeholder", 4),
        ];
        let (open, base_open) = match &f.open_static {
            Some(s) => (&f.open, s),
            None => (&placeholders[0], &placeholders[1]),
        };
        let sums = storage_buffer(device, "Bodies::sums", SUMS_BYTES);
        // Only the smoke labels its regions.
        let region_words = match inp.mode {
            CouplingMode::Smoke => cells,
            CouplingMode::Liquid => MAX_REGIONS as u64,
        };
        let regions = storage_buffer(device, "Bodies::regions", region_words * 4);
        let push_sums = storage_buffer(device, "Bodies::push_sums", PUSH_BUFFER_WORDS * 4);
        let own = match (inp.base, inp.static_cells) {
            (Some(_), _) => None,
            (None, Some((solid, vel))) => {
                let s = storage_buffer(device, "Bodies::base_solid", cells * 4);
                let v = storage_buffer(device, "Bodies::base_vel", cells * 16);
                ctx.queue.write_buffer(&s, 0, bytemuck::cast_slice(solid));
                ctx.queue.write_buffer(&v, 0, bytemuck::cast_slice(vel));
                Some((s, v))
            }
            (None, None) => {
                return Err(SimError::Unsupported(
                    "BodyCoupling::new: the liquid's static solids are missing".into(),
                ))
            }
        };
        let (base_solid, base_vel) = match (&inp.base, &own) {
            (Some((s, v)), _) => (*s, *v),
            (None, Some((s, v))) => (s, v),
            (None, None) => unreachable!("checked above"),
        };
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("bp", &params_buffer),
                ("bodies", &bodies),
                ("base_solid", base_solid),
                ("base_vel", base_vel),
                ("solid", &f.solid),
                ("solid_vel", &f.solid_vel),
                ("cell_type", &f.cell_type),
                ("body_id", &body_id),
                ("counters", &f.counters),
                ("sums", &sums),
                ("pos", &inp.particles.pos),
                ("vel", &inp.particles.vel),
                ("rhs", &inp.pcg.b),
                ("regions", &regions),
                ("cover", &cover),
                ("open", open),
                ("base_open", base_open),
                ("push_sums", &push_sums),
                ("face_vel", &f.vel),
                ("acc", &f.acc),
                ("gather_scale", &f.gather_scale),
            ],
        );
        Ok(Self {
            e: BodiesEntries::of(&kernel),
            mode: inp.mode,
            kernel,
            group,
            bodies,
            params_buffer,
            params,
            body_id,
            cover,
            sums,
            regions,
            _base: own,
            solid_reader: (inp.mode == CouplingMode::Smoke)
                .then(|| BufferReader::new(device, cells.div_ceil(8) * 4, "Bodies::solid")),
            num_particles: inp.particles.count,
            pushes_momentum: inp.particle_mass > 0.0,
            push_sums,
            static_regions: None,
            labels_static: false,
            always_label: false,
        })
    }

    /// The smoke's static solids (their flags and, where they cut faces, the faces' open
    /// fractions): their regions serve every substep in which no body can seal one.
    pub fn set_static_regions(&mut self, solid: &[u32], open: Option<&[f32]>, n: [u32; 3]) {
        self.static_regions = Some(StaticRegions {
            regions: Regions::find_through(solid, open, n),
            solid: solid.iter().map(|&s| s != 0).collect(),
            n: n.map(|v| v as usize),
        });
        self.labels_static = false;
    }

    /// Whether no body of `set` can wall off a region: each one's bounds, two cells
    /// wider on every side, lie inside the domain, clear of every static solid's cell and
    /// of every other body's widened bounds. A convex body alone leaves the cells around
    /// it connected, so the static solids' regions stand (the cells it closes are SOLID,
    /// which the region sums skip).
    fn bodies_free(&self, set: &BodySet, h: f64) -> bool {
        let Some(st) = &self.static_regions else {
            return false;
        };
        let dims = st.n;
        let [nx, ny, nz] = dims;
        let margin = 2.0 * h;
        let boxes: Vec<([f64; 3], [f64; 3])> = set
            .bodies
            .iter()
            .map(|b| {
                let (c, r) = (b.position, b.aabb_half());
                let lo = [c.x - r.x - margin, c.y - r.y - margin, c.z - r.z - margin];
                let hi = [c.x + r.x + margin, c.y + r.y + margin, c.z + r.z + margin];
                (lo, hi)
            })
            .collect();
        // A slice's bodies span its one cell of depth: z is not checked.
        let axes = if nz == 1 { 2 } else { 3 };
        for (i, (lo, hi)) in boxes.iter().enumerate() {
            for a in 0..axes {
                if lo[a] < 0.0 || hi[a] > dims[a] as f64 * h || !lo[a].is_finite() {
                    return false;
                }
            }
            for (lo2, hi2) in &boxes[i + 1..] {
                if (0..axes).all(|a| lo[a] < hi2[a] && lo2[a] < hi[a]) {
                    return false;
                }
            }
            // The cells the widened bounds reach.
            let cell = |x: f64, a: usize| ((x / h).floor().max(0.0) as usize).min(dims[a] - 1);
            let (i0, i1) = (cell(lo[0], 0), cell(hi[0], 0));
            let (j0, j1) = (cell(lo[1], 1), cell(hi[1], 1));
            let (k0, k1) = if axes == 2 {
                (0, nz - 1)
            } else {
                (cell(lo[2], 2), cell(hi[2], 2))
            };
            for k in k0..=k1 {
                for j in j0..=j1 {
                    for i in i0..=i1 {
                        if st.solid[i + nx * (j + ny * k)] {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// Particles the push-out runs over (the liquid's count changes with its inflow and
    /// outflow).
    pub fn set_particles(&mut self, count: u32) {
        self.num_particles = count;
    }

    /// Uploads the bodies' state.
    pub fn upload(&mut self, ctx: &GpuContext, set: &BodySet) {
        ctx.queue.write_buffer(
            &self.bodies,
            0,
            bytemuck::cast_slice(&GpuBody::from_set(set)),
        );
    }

    /// Bodies into the cells (see [`CouplingMode`] for where each mode records it).
    pub fn record_stamp(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        let fractions = self.params.fractions != 0;
        if fractions {
            self.kernel
                .dispatch(pass, self.e.cover_faces, &self.group, f.num_faces());
        }
        self.kernel
            .dispatch(pass, self.e.stamp, &self.group, f.num_cells());
        for _ in 0..POCKET_ROUNDS {
            self.kernel
                .dispatch(pass, self.e.pocket_mark, &self.group, f.num_cells());
            self.kernel
                .dispatch(pass, self.e.pocket_fill, &self.group, f.num_cells());
        }
        // A cell the last round closed in on every side has no row in A: filled too.
        self.kernel
            .dispatch(pass, self.e.isolated_fill, &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, self.e.pocket_fill, &self.group, f.num_cells());
        if !fractions {
            self.kernel
                .dispatch(pass, self.e.cover_cells, &self.group, f.num_faces());
        }
    }

    /// The factors on the velocity change G2P gathers near the bodies (`gather_scale_faces`):
    /// record after the cells are marked, while P2G's weights are still in `acc`.
    pub fn record_gather_scale(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if f.has_gather_scale() {
            self.kernel
                .dispatch(pass, self.e.gather_scale_faces, &self.group, f.num_faces());
        }
    }

    /// Clears the region sums; record before the pass that runs
    /// [`Self::record_compatible`].
    pub fn clear_sums(&self, enc: &mut wgpu::CommandEncoder) {
        enc.clear_buffer(&self.sums, 0, None);
    }

    /// In the smoke, finds the separate regions of the closed box once the bodies are
    /// stamped (copies the SOLID flags out with what `rec` holds, submits, reads them back)
    /// and uploads them for [`Self::record_compatible`]. The liquid has AIR cells and needs
    /// nothing.
    pub fn separate_regions(
        &mut self,
        ctx: &GpuContext,
        rec: &mut Recorder<'_>,
        f: &GridFields,
        set: &BodySet,
    ) -> Result<(), SimError> {
        if self.solid_reader.is_none() {
            return Ok(());
        }
        // No body near a wall, a static solid or another body: the static solids' regions
        // stand, without a read.
        if !self.always_label && self.bodies_free(set, f.params.h as f64) {
            if !self.labels_static {
                if let Some(st) = &self.static_regions {
                    let words = st.regions.gpu_words();
                    ctx.queue
                        .write_buffer(&self.regions, 0, bytemuck::cast_slice(&words));
                    self.labels_static = true;
                }
            }
            return Ok(());
        }
        self.labels_static = false;
        let Some(reader) = self.solid_reader.as_mut() else {
            return Ok(());
        };
        // What the labelling needs, packed on the GPU into the head of `regions` (which
        // the labels then overwrite): 4 bits per cell.
        let words = f.num_cells().div_ceil(8);
        {
            let mut pass = rec
                .encoder()
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bodies_regions"),
                    timestamp_writes: None,
                });
            self.kernel
                .dispatch(&mut pass, self.e.pack_regions, &self.group, words);
        }
        reader.copy_range(rec.encoder(), &self.regions, 0, words as u64 * 4);
        rec.submit("Bodies::regions");
        let words: Vec<u32> = reader.read(ctx)?;
        let regions = Regions::find_packed(&words, f.params.n);
        ctx.queue
            .write_buffer(&self.regions, 0, bytemuck::cast_slice(&regions.gpu_words()));
        Ok(())
    }

    /// In the smoke, removes the mean of the pressure right-hand side over each region's
    /// FLUID cells: bodies against the walls of its closed box, or walling off a pocket,
    /// would otherwise leave a pure-Neumann system without a solution (see
    /// coupling.wgsl); regions past the kept ones become solid at rest. The liquid
    /// has AIR cells and needs nothing. Record after the divergence, in a pass after
    /// [`Self::clear_forces`] and [`Self::separate_regions`].
    pub fn record_compatible(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        if self.mode != CouplingMode::Smoke {
            return;
        }
        self.kernel
            .dispatch(pass, self.e.region_freeze, &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, self.e.rhs_sum, &self.group, f.num_cells());
        self.kernel
            .dispatch(pass, self.e.rhs_compatible, &self.group, f.num_cells());
    }

    /// Particles out of the bodies: the liquid's counted inside each body first, for the
    /// exchange to weigh them against the body's mass (coupling.wgsl, `push_share`).
    pub fn record_push(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.pushes_momentum {
            self.kernel
                .dispatch(pass, self.e.push_count, &self.group, self.num_particles);
        }
        self.kernel
            .dispatch(pass, self.e.push_out, &self.group, self.num_particles);
    }

    /// Uploads the bodies and pushes particles out of them in a submission of its own. The
    /// momentum the push gives the liquid's particles, per body (linear, and angular about
    /// its centre), stays in `push_sums`: the next substep takes it off the bodies on the
    /// GPU ([`super::push::PushReaction`]) and brings it back with its counters
    /// ([`Bodies::keep_push`]).
    pub fn push_queue(&mut self, ctx: &GpuContext, set: &BodySet) {
        self.upload(ctx, set);
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Bodies::push_out"),
            });
        enc.clear_buffer(&self.push_sums, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bodies_push"),
                timestamp_writes: None,
            });
            self.record_push(&mut pass);
        }
        ctx.submit(enc.finish());
    }

    /// The push-out's sums, per body of `set`'s `count` (words of `push_sums`).
    pub fn decode_push(words: &[u32], count: usize) -> Vec<(DVec3, DVec3)> {
        let value = |i: usize| {
            let v = ((words[2 * i + 1] as u64) << 32 | words[2 * i] as u64) as i64;
            v as f64 / PUSH_UNIT
        };
        (0..count)
            .map(|k| {
                let v = |a: usize| {
                    DVec3::new(value(6 * k + a), value(6 * k + a + 1), value(6 * k + a + 2))
                };
                (v(0), v(3))
            })
            .collect()
    }

    /// The push-out's sums (the liquid's; the smoke's tracers carry no momentum).
    pub fn push_sums(&self) -> Option<&wgpu::Buffer> {
        self.pushes_momentum.then_some(&self.push_sums)
    }
}

/// A scene's bodies with their coupling: what a simulation holds when its scene has bodies.
pub struct Bodies {
    pub set: BodySet,
    pub coupling: BodyCoupling,
    /// Their part of the pressure solve and their forces.
    pub strong: StrongCoupling,
    /// The bodies with this substep's velocities before the pressure (the strong scheme's
    /// v*), as uploaded by [`Self::begin_substep`]; they replace `set` when the substep
    /// ends.
    predicted: Option<BodySet>,
    /// The push-out's reaction on the GPU (the liquid's).
    push: Option<super::push::PushReaction>,
    /// What the push-out before this substep gave the particles, per body, once the
    /// substep's readback brought it ([`Self::keep_push`]).
    pushed: Vec<(DVec3, DVec3)>,
    /// The dynamic bodies in the viscosity solve (made on first use).
    viscous: std::cell::OnceCell<super::viscous::ViscousCoupling>,
}

impl Bodies {
    /// The bodies of `set`'s scene coupled through `inputs` (with `set.scheme`); particles
    /// that start inside a body are pushed out at once.
    pub fn new(
        ctx: &GpuContext,
        set: BodySet,
        inputs: CouplingInputs<'_>,
    ) -> Result<Self, SimError> {
        set.check_start(super::START_OVERLAP_CELLS * inputs.fields.params.h as f64)?;
        // Whole cells read the pressure half a cell off the body's faces, which the
        // hydrostatic correction takes back; covered shares sum the pressure's gradient over
        // the body's volume and need none.
        let scales = ForceScales {
            density: set.fluid_density,
            face_area: inputs.face_area,
            h: inputs.fields.params.h as f64,
            hydrostatic: inputs.mode == CouplingMode::Liquid && inputs.fields.open_static.is_none(),
            closed: inputs.mode == CouplingMode::Smoke,
        };
        let (f, pcg, deflate) = (inputs.fields, inputs.pcg, inputs.deflate);
        let mut coupling = BodyCoupling::new(ctx, inputs)?;
        let mut strong = StrongCoupling::new(
            ctx,
            f,
            pcg,
            (&coupling.body_id, &coupling.cover),
            scales,
            set.scheme == CouplingScheme::Strong,
        );
        strong.deflate &= deflate;
        // Particles are seeded outside the bodies: the first substep takes off what little
        // the push gives them.
        coupling.push_queue(ctx, &set);
        let push = coupling.push_sums().map(|sums| {
            super::push::PushReaction::new(&ctx.device, sums, &coupling.bodies, &strong.couple)
        });
        Ok(Self {
            set,
            coupling,
            strong,
            predicted: None,
            push,
            pushed: Vec::new(),
            viscous: std::cell::OnceCell::new(),
        })
    }

    /// The added term of the pressure solve (the strong scheme), None in the weak one.
    pub fn added_term(&self) -> Option<&dyn crate::sim::core::pressure::AddedTerm> {
        self.strong
            .strong
            .then_some(&self.strong as &dyn crate::sim::core::pressure::AddedTerm)
    }

    /// Starts a substep of `dt`: in the strong scheme the bodies take the forces other than
    /// the pressure's (gravity, the user's spring, the air's buoyancy, the face pressure's
    /// hydrostatic part of the last substep) first, and the GPU gets those velocities.
    pub fn begin_substep(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        dt: f64,
    ) -> Result<(), SimError> {
        let mut p = self.set.clone();
        if self.strong.strong {
            p.predict(dt);
        }
        self.coupling.upload(ctx, &p);
        self.strong.upload(ctx, &p, f)?;
        // No viscosity step has changed the bodies yet this substep: its changes are cleared
        // (the step writes them when it runs), once a step has ever written them.
        if self.viscous.get().is_some() {
            let zeros = [0u8; MAX_BODIES * 6 * 4];
            let at = (super::strong::VISCOUS_AT * 4) as u64;
            ctx.queue.write_buffer(&self.strong.sums, at, &zeros);
        }
        if let Some(r) = self.push.as_mut() {
            r.upload(&ctx.queue, &p);
        }
        self.predicted = Some(p);
        Ok(())
    }

    /// The coupling of the dynamic bodies into a viscosity step of `nu` on `sys`, prepared
    /// with this substep's bodies (`shift`: the incremental pressure correction's dt, see
    /// [`super::viscous::viscous_bodies`]); None without a dynamic body.
    pub fn viscous(
        &self,
        ctx: &GpuContext,
        f: &GridFields,
        sys: &crate::sim::core::diffusion::VelocityView<'_>,
        nu: f64,
        shift: Option<f64>,
    ) -> Option<&super::viscous::ViscousCoupling> {
        if !self.set.bodies.iter().any(|b| b.is_dynamic()) {
            return None;
        }
        let c = self
            .viscous
            .get_or_init(|| super::viscous::ViscousCoupling::new(&ctx.device));
        let forced = self.predicted.as_ref().unwrap_or(&self.set);
        let sets = (&self.set, forced);
        let bound = (&self.coupling.cover, &self.coupling.bodies);
        c.prepare(ctx, f, sys, (&self.strong, sets, bound), nu, shift);
        Some(c)
    }

    /// Records the push-out's reaction (the liquid's): the bodies lose, on the GPU, what the
    /// push-out after the last substep gave the particles. Record before anything reads
    /// the bodies' velocities.
    pub fn record_push_reaction(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(r) = &self.push {
            r.record(enc);
        }
    }

    /// Keeps the push-out's sums the substep's readback brought (`words` of `push_sums`),
    /// for [`Self::finish_substep`] to take off the bodies on the host too.
    pub fn keep_push(&mut self, words: &[u32]) {
        self.pushed = BodyCoupling::decode_push(words, self.set.bodies.len());
    }

    /// Takes the last push-out's momentum off the bodies now instead of in the next
    /// substep (after a frame's last substep): the state a frame leaves, what is written
    /// out, saved and shown, then holds the liquid's and the bodies' momentum together.
    /// Without it each frame ends with the particles holding what the push gave them and
    /// the bodies still holding it too: 1-2% of a thrown body's momentum counted twice in
    /// a frame after it enters the liquid. One small read a frame (12 words a body); the
    /// GPU's sums are cleared, so the next substep takes nothing more off. A lone substep
    /// (`Runner::substep`, the viewer's stepping) leaves it to the next, as every substep
    /// inside a frame does: no read beyond the substep's own.
    pub fn settle_push(&mut self, ctx: &GpuContext) -> Result<(), SimError> {
        let Some(sums) = self.coupling.push_sums() else {
            return Ok(());
        };
        let n = self.set.bodies.len();
        let bytes = n as u64 * PUSH_WORDS_PER_BODY * 4;
        let words: Vec<u32> = crate::gpu::read_buffer_range(ctx, sums, 0, bytes)?;
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Bodies::settle_push"),
            });
        enc.clear_buffer(sums, 0, None);
        ctx.submit(enc.finish());
        self.take_off(BodyCoupling::decode_push(&words, n));
        Ok(())
    }

    /// Takes what a push-out gave the liquid (linear and angular momentum, per body) off
    /// the dynamic bodies.
    fn take_off(&mut self, pushed: Vec<(DVec3, DVec3)>) {
        for (b, (p, l)) in self.set.bodies.iter_mut().zip(pushed) {
            if b.is_dynamic() {
                b.momentum -= p;
                b.angular_momentum -= l;
            }
        }
    }

    /// The fluid's force on each body over a substep of `dt`, from the sums the substep
    /// read back with its counters.
    pub fn read_forces(&self, dt: f64) -> Result<Vec<FluidForce>, SimError> {
        let sums = self.strong.read_sums(self.set.bodies.len())?;
        Ok(sums
            .iter()
            .map(|s| self.strong.scales.force(s, dt))
            .collect())
    }

    /// Ends a full substep of `dt`: reads the fluid's force and torque (the copy was
    /// submitted with the substep), moves the bodies, and pushes particles out of them at
    /// their new places.
    ///
    /// Stops (nothing uploaded) when a body is lost: not finite, its centre outside the
    /// domain, or moved more than `max_move` m in the substep; `frame` and `substep` name
    /// where, for the error.
    pub fn finish_substep(
        &mut self,
        ctx: &GpuContext,
        dt: f64,
        max_move: f64,
        (frame, substep): (u64, u32),
    ) -> Result<(), SimError> {
        let forces = self.read_forces(dt)?;
        if let Some(p) = self.predicted.take() {
            self.set = p;
        }
        // What the viscosity step gave the bodies (the GPU started the pressure solve from
        // it): the same change here, seen by the grid as the pressure solve saw it.
        for (b, f) in self.set.bodies.iter_mut().zip(&forces) {
            if b.is_dynamic() {
                let (dv, dw) = f.viscous_change;
                b.momentum += b.mass * dv;
                b.angular_momentum += b.world_inertia() * dw;
                b.seen_velocity += dv;
                b.seen_omega += dw;
                b.viscous_force = b.mass * dv / dt.max(1e-300);
                b.viscous_torque = b.world_inertia() * dw / dt.max(1e-300);
            }
        }
        // What the push-out before this substep gave the liquid, the bodies lose (the GPU
        // took it off the velocities this substep started from): momentum stays with the
        // two.
        let pushed = std::mem::take(&mut self.pushed);
        self.take_off(pushed);
        self.set.set_fluid_forces(&forces);
        self.set.step(dt);
        self.set
            .check(dt, max_move)
            .map_err(|(body, what)| SimError::BodyLost {
                frame,
                substep,
                body,
                what,
            })?;
        // Particles out of the bodies at their new places; what that gives the liquid, the
        // bodies lose in the next substep (on the GPU as it starts, here as it ends).
        self.coupling.push_queue(ctx, &self.set);
        Ok(())
    }
}
