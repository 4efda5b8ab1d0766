//! The buffers of the simulation, grouped by what they hold. Stages borrow them; only
//! [`crate::sim::Simulation`] owns them.

use super::params::SimParams;
use crate::gpu::{storage_buffer, uniform_buffer, WORKGROUP};

/// MAC-grid and cell fields. Face arrays hold u, v and w back to back
/// (see `face_offset` in prelude.wgsl); cell arrays are i-fastest.
pub struct GridFields {
    pub params: SimParams,
    pub params_buffer: wgpu::Buffer,
    /// Face velocities (m/s): after P2G, then forces, boundary, projection, extrapolation.
    pub vel: wgpu::Buffer,
    /// Face velocities after P2G, before forces: FLIP's old velocity, which G2P subtracts.
    /// (The smoke mode keeps the velocity at the start of its advection here.)
    pub vel_old: wgpu::Buffer,
    /// Sum of P2G weights per face, for the views only: a 16-byte placeholder, which P2G
    /// leaves alone past its length, until a reader asks for it ([`GridFields::keep_views`]).
    /// The cell marking reads the sums where P2G left them, in `acc`.
    pub weight: wgpu::Buffer,
    /// One bit per face (32 faces per word, u v w back to back): whether P2G gave the face
    /// weight. The forces and the extrapolation read it after `acc` has been reused. A
    /// placeholder where no particles meet the grid ([`FieldRoom::particles`]).
    pub weighted: wgpu::Buffer,
    /// Fixed-point P2G accumulators, (momentum, weight) i32 pairs per face; after P2G, the
    /// volume correction's gradient per face (its first half,
    /// sim/liquid/volume_correction.wgsl), then the extrapolation's two validity flags per
    /// face (sim/liquid/extrapolate.wgsl), then the particle spacing's lists, a head per
    /// cell and a next link per particle (sim/liquid/spacing.wgsl). The pressure solves' b, r, z, d, q and t live here too,
    /// between P2G and the volume correction's gradient (`PcgVectors`), so the buffer holds
    /// at least their 24 bytes per cell (the smoke's only use of it).
    pub acc: wgpu::Buffer,
    /// Particles per cell (a placeholder as `weighted` is).
    pub count: wgpu::Buffer,
    /// Relative particle density per cell, rho / rho0 (src/sim/liquid/mark_cells.wgsl; a
    /// placeholder as `weighted` is).
    pub density: wgpu::Buffer,
    /// The density filtered for the free surface: 0.5 - surface is the liquid level set.
    pub surface: wgpu::Buffer,
    pub cell_type: wgpu::Buffer,
    /// 1 where the scene has a solid. In a scene none of whose cells can be solid
    /// ([`crate::scene::Scene::has_solid_cells`]: a liquid without solids or bodies, whose
    /// only solids are the domain's walls, outside the grid) a zeroed 16-byte placeholder:
    /// the kernels read it without a bound check of their own, and WGSL gives a read past a
    /// buffer's end a value from inside it or zero, here 0 either way (no solid). Nothing
    /// writes it there.
    pub solid: wgpu::Buffer,
    /// Solid velocity per cell (vec4: xyz the velocity, w a rigid body's index + 1 next to
    /// a face it covers). A zeroed placeholder where `solid` is one: only the cells of
    /// solids (and those next to a body's faces) are read.
    pub solid_vel: wgpu::Buffer,
    /// The open fraction of every face the static solids cut (src/scene/fractions.rs,
    /// sim/core/open.wgsl), u v w back to back; a one-word placeholder (every face open)
    /// in a scene whose solids are their own staircase.
    pub open: wgpu::Buffer,
    /// Where rigid bodies cut faces too (`Scene::bodies_cut_faces`): the static solids'
    /// fractions, from which the bodies' coupling rewrites `open` each substep
    /// (src/sim/bodies/coupling.wgsl, `cover_faces`). None otherwise: `open` holds them.
    pub open_static: Option<wgpu::Buffer>,
    /// Per face, the factor on the FLIP velocity change the particles gather there (where
    /// bodies cut faces in the liquid: src/sim/bodies/coupling.wgsl, `gather_scale`); a
    /// placeholder otherwise (every factor 1).
    pub gather_scale: wgpu::Buffer,
    /// Divergence before projection (1/s), for the views only: a placeholder as `weight`
    /// is until [`GridFields::keep_views`].
    pub divergence: wgpu::Buffer,
    /// The level set's mean curvature per cell (1/m, src/sim/core/tension.wgsl): a
    /// one-word placeholder unless the scene has surface tension
    /// ([`GridFields::keep_curvature`]).
    pub curvature: wgpu::Buffer,
    /// Divergence after projection (1/s), the same way (its largest value reaches the stats
    /// through `counters` either way).
    pub div_after: wgpu::Buffer,
    /// Atomic counters the stages write and the host reads back per substep; the slots are
    /// the `COUNTER_*` constants of `crate::gpu::constants`.
    pub counters: wgpu::Buffer,
}

pub use crate::gpu::constants::COUNTERS;

/// Bytes of a view-only field nobody asked for ([`GridFields::keep_views`]).
const VIEW_PLACEHOLDER: u64 = 16;

/// What a grid's fields must hold room for ([`GridFields::new`]).
#[derive(Clone, Copy, Debug)]
pub struct FieldRoom {
    /// Whether any cell can be solid: else `solid` and `solid_vel` are placeholders (20
    /// bytes per cell).
    pub solid_cells: bool,
    /// Whether particles meet the grid (the liquid): else P2G's `weighted`, `count` and
    /// `density` are placeholders (a bit per face and 8 bytes per cell).
    pub particles: bool,
    /// Bytes a mode keeps in `acc` while P2G does not need it (the liquid's spacing lists,
    /// `sim/liquid/spacing.rs`), 0 for none: the mode says how much, so the grid needs
    /// nothing of the modes.
    pub scratch: u64,
}

impl FieldRoom {
    /// A grid for a solve alone: solid cells, no particles.
    pub const SOLVE: FieldRoom = FieldRoom {
        solid_cells: true,
        particles: false,
        scratch: 0,
    };
}

impl GridFields {
    /// The fields of a grid, with room for what `room` says it holds.
    pub fn new(device: &wgpu::Device, params: SimParams, room: FieldRoom) -> Self {
        let cells = params.num_cells as u64;
        let per_solid_cell = if room.solid_cells { cells } else { 0 };
        let per_particle_cell = if room.particles { cells } else { 0 };
        let faces = params.num_faces() as u64;
        let per_particle_face = if room.particles { faces } else { 0 };
        let f = |label: &str, bytes: u64| storage_buffer(device, label, bytes);
        Self {
            params,
            params_buffer: uniform_buffer(
                device,
                "GridFields::params",
                bytemuck::bytes_of(&params),
            ),
            vel: f("GridFields::vel", faces * 4),
            vel_old: f("GridFields::vel_old", faces * 4),
            weight: f("GridFields::weight", VIEW_PLACEHOLDER),
            weighted: f(
                "GridFields::weighted",
                Self::weighted_bytes(per_particle_face),
            ),
            acc: f(
                "GridFields::acc",
                Self::acc_bytes(cells, faces, room.scratch),
            ),
            count: f("GridFields::count", per_particle_cell * 4),
            density: f("GridFields::density", per_particle_cell * 4),
            surface: f("GridFields::surface", cells * 4),
            cell_type: f("GridFields::cell_type", cells * 4),
            solid: f("GridFields::solid", (per_solid_cell * 4).max(16)),
            solid_vel: f("GridFields::solid_vel", (per_solid_cell * 16).max(16)),
            open: f("GridFields::open_placeholder", 4),
            open_static: None,
            gather_scale: f("GridFields::gather_scale_placeholder", 16),
            divergence: f("GridFields::divergence", VIEW_PLACEHOLDER),
            curvature: f("GridFields::curvature_placeholder", 4),
            div_after: f("GridFields::div_after", VIEW_PLACEHOLDER),
            counters: f("GridFields::counters", COUNTERS as u64 * 4),
        }
    }

    pub fn num_cells(&self) -> u32 {
        self.params.num_cells
    }

    /// Bytes of `weighted` for `faces` faces (a word per 32; buffers take 16 at least).
    pub fn weighted_bytes(faces: u64) -> u64 {
        (faces.div_ceil(32) * 4).max(16)
    }

    /// Whether particles meet this grid (P2G's fields hold a value per face and cell).
    pub fn has_particles(&self) -> bool {
        self.count.size() >= self.num_cells() as u64 * 4
    }

    /// Bytes the views' own fields add once kept ([`Self::keep_views`]): P2G's weights
    /// (where particles meet the grid) and the divergence before and after projection.
    pub fn views_bytes(cells: u64, faces: u64, particles: bool) -> u64 {
        cells * 8 + if particles { faces * 4 } else { 0 }
    }

    /// Whether the views' own fields hold a value per face and cell ([`Self::keep_views`]).
    pub fn has_views(&self) -> bool {
        self.divergence.size() >= self.num_cells() as u64 * 4
    }

    /// Gives the views' own fields their room: P2G's weight per face (where particles meet
    /// the grid) and the divergence before and after projection, which the stages then
    /// write from the next substep on. A headless run skips them (8 bytes per cell and 4
    /// per face). Returns whether buffers were made: the bind groups of P2G and the
    /// divergence, which hold the placeholders, must then be rebuilt.
    pub fn keep_views(&mut self, device: &wgpu::Device) -> bool {
        if self.has_views() {
            return false;
        }
        let cells = self.num_cells() as u64;
        let f = |label: &str, bytes: u64| storage_buffer(device, label, bytes);
        self.divergence = f("GridFields::divergence", cells * 4);
        self.div_after = f("GridFields::div_after", cells * 4);
        if self.has_particles() {
            self.weight = f("GridFields::weight", self.num_faces() as u64 * 4);
        }
        true
    }

    /// Gives the curvature a value per cell (surface tension). Call before any stage binds
    /// the fields.
    pub fn keep_curvature(&mut self, device: &wgpu::Device) {
        if !self.has_curvature() {
            let bytes = self.num_cells() as u64 * 4;
            self.curvature = storage_buffer(device, "GridFields::curvature", bytes);
        }
    }

    /// Whether `curvature` holds a value per cell ([`Self::keep_curvature`]).
    pub fn has_curvature(&self) -> bool {
        self.curvature.size() >= self.num_cells() as u64 * 4
    }

    /// Whether `gather_scale` holds a factor per face (bodies cut faces in the liquid).
    pub fn has_gather_scale(&self) -> bool {
        self.gather_scale.size() >= self.num_faces() as u64 * 4
    }

    /// Whether `solid` and `solid_vel` hold a value per cell (see [`Self::new`]).
    pub fn has_solid_cells(&self) -> bool {
        self.solid.size() >= self.num_cells() as u64 * 4
    }

    /// Gives the faces the static solids' open fractions (one per face). Call before any
    /// stage binds the fields.
    pub fn set_open(&mut self, ctx: &crate::gpu::GpuContext, open: &[f32]) {
        assert_eq!(
            open.len(),
            self.num_faces() as usize,
            "one fraction per face"
        );
        self.open = storage_buffer(&ctx.device, "GridFields::open", open.len() as u64 * 4);
        ctx.queue
            .write_buffer(&self.open, 0, bytemuck::cast_slice(open));
    }

    /// Gives the faces room for the bodies' cuts: `open` then holds a fraction per face
    /// (every face open where the static solids cut none) and `open_static` the static
    /// solids' own. Call after [`Self::set_open`], before any stage binds the fields.
    pub fn set_bodies_cut(&mut self, ctx: &crate::gpu::GpuContext, open: Option<&[f32]>) {
        let ones;
        let open = match open {
            Some(o) => o,
            None => {
                ones = vec![1.0f32; self.num_faces() as usize];
                &ones
            }
        };
        self.set_open(ctx, open);
        let s = storage_buffer(
            &ctx.device,
            "GridFields::open_static",
            open.len() as u64 * 4,
        );
        ctx.queue.write_buffer(&s, 0, bytemuck::cast_slice(open));
        self.open_static = Some(s);
        if self.has_particles() {
            self.gather_scale = storage_buffer(
                &ctx.device,
                "GridFields::gather_scale",
                open.len() as u64 * 4,
            );
        }
    }

    /// The buffer that holds the static solids' fractions (what a moving mesh or the
    /// smoke's erasing rewrites).
    pub fn static_open(&self) -> &wgpu::Buffer {
        self.open_static.as_ref().unwrap_or(&self.open)
    }

    /// Bytes of `GridFields::open` at most: a fraction per face where the scene has static
    /// solids that may cut faces.
    pub fn open_bytes(scene: &crate::scene::Scene, faces: u64) -> u64 {
        if scene.bodies_cut_faces() {
            // `open`, `open_static` and the bodies' `cover`.
            faces * 12
        } else if scene.solids.is_empty() || !scene.cut_faces {
            0
        } else {
            faces * 4
        }
    }

    /// Whether some face is cut (`open` holds a fraction per face).
    pub fn has_cut_faces(&self) -> bool {
        self.open.size() >= self.num_faces() as u64 * 4
    }

    pub fn num_faces(&self) -> u32 {
        self.params.num_faces()
    }

    /// Bytes of GPU memory these fields take for a grid of `cells` cells and `faces` faces
    /// (`room` as in [`Self::new`]), the PCG's scratch vectors and the spacing's lists in
    /// `acc` included.
    pub fn bytes(cells: u64, faces: u64, room: FieldRoom) -> u64 {
        let solid = if room.solid_cells {
            cells * (4 + 16)
        } else {
            32
        };
        // P2G's weight bit per face, count and density per cell.
        let particles = if room.particles {
            Self::weighted_bytes(faces) + cells * 8
        } else {
            16 + 32
        };
        // vel, vel_old per face; acc; surface, cell_type per cell; the views' placeholders
        // (weight, divergence, div_after).
        faces * (4 + 4)
            + Self::acc_bytes(cells, faces, room.scratch)
            + cells * (2 * 4)
            + 3 * VIEW_PLACEHOLDER
            + particles
            + solid
            + COUNTERS as u64 * 4
    }

    /// Bytes of `acc`: P2G's (momentum, weight) pair per face, the PCG's five scratch
    /// vectors or the mode's `scratch` ([`FieldRoom::scratch`]), whichever is largest.
    pub fn acc_bytes(cells: u64, faces: u64, scratch: u64) -> u64 {
        (faces * 8).max(pcg_scratch_bytes(cells)).max(scratch)
    }
}

/// The PCG's scratch vectors b, r, z, d, q and t, which share `acc` with P2G.
pub const PCG_SCRATCH_VECTORS: u64 = 6;

/// Bytes of those six vectors packed for a grid of `cells` cells (`PcgVectors` lays them
/// out so; the grid keeps their room).
pub fn pcg_scratch_bytes(cells: u64) -> u64 {
    crate::gpu::Region::packed_bytes(PCG_SCRATCH_VECTORS, (cells * 4).max(4))
}

/// Particle state: positions and velocities as vec4 (w unused), plus per-particle views.
pub struct Particles {
    /// Particles now (the first `count` of each buffer).
    pub count: u32,
    /// Particles the buffers hold: the count at creation, or more where the liquid's
    /// emitters add particles (`Scene::particle_capacity`).
    pub capacity: u32,
    pub pos: wgpu::Buffer,
    pub vel: wgpu::Buffer,
    /// FLIP velocity change of the last grid-to-particle (xyz, |.| in w), for the viewer's
    /// particle colours. Only a simulation that asks for it ([`Particles::ensure_flip_delta`],
    /// the viewer does) holds one per particle; otherwise a one-particle placeholder, which
    /// the kernels leave alone past its length (16 bytes per particle saved: a headless
    /// run's particles take 32).
    pub flip_delta: wgpu::Buffer,
    /// Kinetic-energy partial sums, one per 64-particle workgroup.
    pub energy: wgpu::Buffer,
    /// APIC affine matrix: rows c_u, c_v, c_w (vec4, w unused) per particle, 1/s. Only an
    /// APIC simulation allocates it ([`Particles::ensure_affine`]); until then it is a
    /// one-particle placeholder that the kernels bind but never touch. At 48 bytes per
    /// particle it would double FLIP's particle memory and be its largest buffer (a third of
    /// the particles under the same binding limit), for a matrix FLIP never reads.
    pub affine: wgpu::Buffer,
}

impl Particles {
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pos: &[[f32; 4]],
        vel: &[[f32; 4]],
    ) -> Self {
        Self::with_capacity(device, queue, pos, vel, pos.len() as u32)
    }

    /// Buffers for `capacity` particles, the first `pos.len()` of them given.
    pub fn with_capacity(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pos: &[[f32; 4]],
        vel: &[[f32; 4]],
        capacity: u32,
    ) -> Self {
        let count = pos.len() as u32;
        let n = capacity.max(count) as u64;
        let make = |label: &str| storage_buffer(device, label, n * 16);
        let p = Self {
            count,
            capacity: n as u32,
            pos: make("Particles::pos"),
            vel: make("Particles::vel"),
            flip_delta: storage_buffer(device, "Particles::flip_delta", 16),
            energy: storage_buffer(
                device,
                "Particles::energy",
                n.div_ceil(WORKGROUP as u64) * 4,
            ),
            affine: storage_buffer(device, "Particles::affine", AFFINE_BYTES),
        };
        if count > 0 {
            queue.write_buffer(&p.pos, 0, bytemuck::cast_slice(pos));
            queue.write_buffer(&p.vel, 0, bytemuck::cast_slice(vel));
        }
        p
    }

    /// Bytes of `n` particles: position and velocity (vec4 each) and the energy partials;
    /// the viewer's FLIP change adds [`Self::flip_delta_bytes`].
    pub fn bytes(n: u64) -> u64 {
        n * 32 + n.div_ceil(WORKGROUP as u64) * 4
    }

    /// Bytes of the FLIP changes of `n` particles.
    pub fn flip_delta_bytes(n: u64) -> u64 {
        n * 16
    }

    /// Whether [`Self::flip_delta`] holds a change for every particle.
    pub fn has_flip_delta(&self) -> bool {
        self.flip_delta.size() >= Self::flip_delta_bytes(self.capacity as u64).max(16)
    }

    /// Allocates the FLIP change of every particle (zero until the next G2P). Returns whether
    /// a new buffer was made: bind groups that hold the placeholder must then be rebuilt.
    pub fn ensure_flip_delta(&mut self, device: &wgpu::Device) -> bool {
        let bytes = Self::flip_delta_bytes(self.capacity as u64);
        ensure_size(&mut self.flip_delta, device, "Particles::flip_delta", bytes)
    }

    /// Bytes of the APIC affine matrices of `n` particles.
    pub fn affine_bytes(n: u64) -> u64 {
        n * AFFINE_BYTES
    }

    /// Whether [`Self::affine`] holds a matrix for every particle.
    pub fn has_affine(&self) -> bool {
        self.affine.size() >= Self::affine_bytes(self.capacity as u64).max(AFFINE_BYTES)
    }

    /// Allocates the affine matrices for every particle, zeroed (APIC then starts as PIC
    /// and G2P fills them). Returns whether a new buffer was made: bind groups that hold the
    /// placeholder must then be rebuilt.
    pub fn ensure_affine(&mut self, device: &wgpu::Device) -> bool {
        let bytes = Self::affine_bytes(self.capacity as u64);
        ensure_size(&mut self.affine, device, "Particles::affine", bytes)
    }
}

/// Replaces `buf` (a placeholder) by a zeroed buffer of `bytes` unless it holds that many
/// already; whether it did.
fn ensure_size(buf: &mut wgpu::Buffer, device: &wgpu::Device, label: &str, bytes: u64) -> bool {
    if buf.size() >= bytes {
        return false;
    }
    *buf = storage_buffer(device, label, bytes);
    true
}

/// One particle's affine matrix: three vec4 rows.
const AFFINE_BYTES: u64 = 48;
