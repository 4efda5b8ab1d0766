//! Inflow and outflow (flow.wgsl), recorded at the end of the advection stage: particles
//! in drains and in the outermost cell layer of open sides are removed, kept-full emitters
//! refill their empty sub-cells, flux emitters add their volume per second at random
//! points of their shape. The particles are compacted in their old order and the new ones
//! placed from hashes, so two runs give the same bytes. The GPU writes the new count to
//! the counters; the host reads it with the substep's other counters and dispatches the
//! next substep over it. The scene side is src/scene/flow.rs.

use crate::gpu::constants::{
    FLOW_BOX, FLOW_CYLINDER, FLOW_NONE, FLOW_SPHERE, MAX_DRAINS, MAX_EMITTERS, WORKGROUP,
};
use crate::gpu::{storage_buffer, uniform_buffer, GpuContext, Kernel};
use crate::scene::{Scene, Shape, SplitMix64};
use crate::sim::core::fields::{GridFields, Particles};
use bytemuck::{Pod, Zeroable};

/// Mirror of `FlowShape` in flow.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FlowShape {
    /// [`FLOW_BOX`], [`FLOW_SPHERE`] or [`FLOW_CYLINDER`].
    pub kind: u32,
    pub _pad: [u32; 3],
    pub a: [f32; 4],
    pub b: [f32; 4],
    pub vel: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<FlowShape>() == 64);
crate::wgsl_mirror!(flow_shape_layout: FlowShape = "flow.wgsl" FlowShape {
    kind: kind,
    _p0: _pad[0],
    _p1: _pad[1],
    _p2: _pad[2],
    a: a,
    b: b,
    vel: vel,
});

/// Mirror of `FlowParams` in flow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FlowParams {
    pub num_emitters: u32,
    pub num_drains: u32,
    pub emit_active: u32,
    pub drain_active: u32,
    pub fill_emitters: u32,
    pub open_mask: u32,
    pub count: u32,
    pub capacity: u32,
    pub num_slots: u32,
    pub num_emit_cells: u32,
    pub incoming: u32,
    pub per_axis: u32,
    pub seed: u32,
    pub substep: u32,
    pub num_blocks: u32,
    pub apic: u32,
    pub blocks_at: u32,
    pub rank_at: u32,
    pub slots_at: u32,
    pub _pad: u32,
}
const _: () = assert!(std::mem::size_of::<FlowParams>() == 80);
crate::wgsl_mirror!(flow_params_layout: FlowParams = "flow.wgsl" FlowParams {
    num_emitters: num_emitters,
    num_drains: num_drains,
    emit_active: emit_active,
    drain_active: drain_active,
    fill_emitters: fill_emitters,
    open_mask: open_mask,
    count: count,
    capacity: capacity,
    num_slots: num_slots,
    num_emit_cells: num_emit_cells,
    incoming: incoming,
    per_axis: per_axis,
    seed: seed,
    substep: substep,
    num_blocks: num_blocks,
    apic: apic,
    blocks_at: blocks_at,
    rank_at: rank_at,
    slots_at: slots_at,
    _pad: _pad,
});

impl FlowShape {
    /// The GPU form of an emitter's or drain's shape (validation admits only these three).
    pub fn of(shape: &Shape) -> Self {
        let f = |v: (f64, f64, f64), w: f64| [v.0 as f32, v.1 as f32, v.2 as f32, w as f32];
        let v = shape.velocity();
        let mut s = FlowShape {
            vel: [v[0] as f32, v[1] as f32, v[2] as f32, 0.0],
            ..Default::default()
        };
        match shape {
            Shape::Sphere { center, radius, .. } => {
                s.kind = FLOW_SPHERE;
                s.a = f(*center, *radius);
            }
            Shape::Cylinder {
                center,
                axis,
                radius,
                length,
                ..
            } => {
                let a = crate::scene::unit(*axis);
                s.kind = FLOW_CYLINDER;
                s.a = f(*center, *radius);
                s.b = f((a[0], a[1], a[2]), 0.5 * length);
            }
            other => {
                let (lo, hi) = other.bounds();
                s.kind = FLOW_BOX;
                s.a = f((lo[0], lo[1], lo[2]), 0.0);
                s.b = f((hi[0], hi[1], hi[2]), 0.0);
            }
        }
        s
    }
}

/// The cells the kept-full emitters fill: each free cell whose centre an emitter without a
/// flux holds, in index order, with the first such emitter; and per grid cell its index
/// in that list or [`FLOW_NONE`]. `cell_map` as flow.wgsl reads it.
pub fn emitter_cells(scene: &Scene) -> (Vec<u32>, Vec<u32>) {
    let n = scene.cell_count() as usize;
    let mut owner = vec![FLOW_NONE; n];
    for (e, em) in scene.emitters.iter().enumerate() {
        if em.flux.is_some() {
            continue;
        }
        scene.for_each_shape_cell(&em.shape, |c| {
            if owner[c as usize] == FLOW_NONE {
                owner[c as usize] = e as u32;
            }
        });
    }
    let mut cells = Vec::new();
    let mut owners = Vec::new();
    let mut map = vec![FLOW_NONE; n];
    for (c, &o) in owner.iter().enumerate() {
        if o != FLOW_NONE {
            map[c] = cells.len() as u32;
            cells.push(c as u32);
            owners.push(o);
        }
    }
    let mut out = map;
    out.extend_from_slice(&cells);
    out.extend_from_slice(&owners);
    (out, cells)
}

/// The seed of the fill's hashes: differs between scenes' seeds, and from the seeding's
/// draws.
pub fn fill_seed(scene: &Scene) -> u32 {
    (scene.seed ^ (scene.seed >> 32)) as u32 ^ 0x5EED_F10E
}

/// Bytes the stage allocates for `capacity` particles (APIC or not) and the scene's
/// emitter cells.
pub fn bytes(scene: &Scene, capacity: u64, apic: bool, emit_cells: u64) -> u64 {
    let ppc = scene.particles_per_cell as u64;
    let blocks = capacity.div_ceil(WORKGROUP as u64);
    let scratch = capacity * 16 * if apic { 6 } else { 3 };
    let work = 4 * (4 + blocks + capacity + emit_cells * ppc);
    scratch + work + emit_cells * ppc * 4 + (scene.cell_count() + 2 * emit_cells) * 4
}

/// What the flow stage did over a run (the host's sums of the counters).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowTotals {
    pub emitted: u64,
    pub removed: u64,
    /// Particles the emitters could not add because the buffers were full.
    pub not_emitted: u64,
}

crate::kernel_entries!(
    /// The entry points of flow.wgsl.
    FlowEntries { mark, plan, scatter, fill, inflow }
);

/// The inflow/outflow stage.
pub struct Flow {
    kernel: Kernel,
    e: FlowEntries,
    group: wgpu::BindGroup,
    params_buffer: wgpu::Buffer,
    params: FlowParams,
    shapes: wgpu::Buffer,
    scratch: wgpu::Buffer,
    work: wgpu::Buffer,
    occupancy: wgpu::Buffer,
    cell_map: wgpu::Buffer,
    incoming: wgpu::Buffer,
    /// Flux particles queued for this substep (xyz, w = emitter index bits).
    queued: Vec<[f32; 4]>,
    /// Static SOLID cells: flux particles are not placed in them.
    solid: Vec<u32>,
    /// Per emitter, the particles' worth of volume not yet emitted (flux emitters).
    pub(crate) carry: Vec<f64>,
    /// Draws the flux emitters' points.
    pub(crate) rng: SplitMix64,
    /// Substeps this stage ran (the fill's hash input).
    pub(crate) substeps: u32,
    pub totals: FlowTotals,
    /// Whether the run has warned that `max_particles` was reached.
    pub(crate) warned_full: bool,
}

impl Flow {
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        f: &GridFields,
        p: &Particles,
        static_solid: &[u32],
    ) -> Self {
        let device = &ctx.device;
        let kernel = Kernel::new(device, crate::wgsl!("flow.wgsl"), "Flow");
        let (map, cells) = emitter_cells(scene);
        let ppc = scene.particles_per_cell;
        let cap = p.capacity as u64;
        let blocks = cap.div_ceil(WORKGROUP as u64);
        let slots = cells.len() as u64 * ppc as u64;
        let mut shapes = vec![FlowShape::default(); (MAX_EMITTERS + MAX_DRAINS) as usize];
        for (i, e) in scene.emitters.iter().enumerate() {
            shapes[i] = FlowShape::of(&e.shape);
        }
        for (i, d) in scene.drains.iter().enumerate() {
            shapes[MAX_EMITTERS as usize + i] = FlowShape::of(&d.shape);
        }
        let params = FlowParams {
            num_emitters: scene.emitters.len() as u32,
            num_drains: scene.drains.len() as u32,
            fill_emitters: scene
                .emitters
                .iter()
                .enumerate()
                .filter(|(_, e)| e.flux.is_none())
                .fold(0, |m, (i, _)| m | 1 << i),
            open_mask: scene.open_mask(),
            capacity: p.capacity,
            num_slots: slots as u32,
            num_emit_cells: cells.len() as u32,
            per_axis: (ppc as f64).cbrt().round() as u32,
            seed: fill_seed(scene),
            blocks_at: 4,
            rank_at: 4 + blocks as u32,
            slots_at: 4 + (blocks + cap) as u32,
            ..Default::default()
        };
        let params_buffer = uniform_buffer(device, "Flow::params", bytemuck::bytes_of(&params));
        let shapes_buffer = storage_buffer(device, "Flow::shapes", 64 * shapes.len() as u64);
        ctx.queue
            .write_buffer(&shapes_buffer, 0, bytemuck::cast_slice(&shapes));
        let scratch = storage_buffer(device, "Flow::scratch", Self::scratch_bytes(p));
        let work = storage_buffer(device, "Flow::work", 4 * (4 + blocks + cap + slots));
        let occupancy = storage_buffer(device, "Flow::occupancy", 4 * slots);
        let cell_map = storage_buffer(device, "Flow::cell_map", 4 * map.len() as u64);
        ctx.queue
            .write_buffer(&cell_map, 0, bytemuck::cast_slice(&map));
        let incoming = storage_buffer(device, "Flow::incoming", 16);
        let group = Self::bind(
            &kernel,
            device,
            f,
            p,
            [
                &params_buffer,
                &shapes_buffer,
                &scratch,
                &work,
                &occupancy,
                &cell_map,
                &incoming,
            ],
        );
        let mut flow = Self {
            group,
            e: FlowEntries::of(&kernel),
            kernel,
            params_buffer,
            params,
            shapes: shapes_buffer,
            scratch,
            work,
            occupancy,
            cell_map,
            incoming,
            queued: Vec::new(),
            solid: static_solid.to_vec(),
            carry: vec![0.0; scene.emitters.len()],
            rng: SplitMix64(scene.seed ^ 0xF10E_F10E_F10E_F10E),
            substeps: 0,
            totals: FlowTotals::default(),
            warned_full: false,
        };
        flow.params.apic = p.has_affine() as u32;
        flow
    }

    fn bind(
        kernel: &Kernel,
        device: &wgpu::Device,
        f: &GridFields,
        p: &Particles,
        own: [&wgpu::Buffer; 7],
    ) -> wgpu::BindGroup {
        let [params, shapes, scratch, work, occupancy, cell_map, incoming] = own;
        kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("flow", params),
                ("cell_type", &f.cell_type),
                ("pos", &p.pos),
                ("vel", &p.vel),
                ("flip_delta", &p.flip_delta),
                ("affine", &p.affine),
                ("scratch", scratch),
                ("work", work),
                ("occupancy", occupancy),
                ("cell_map", cell_map),
                ("incoming", incoming),
                ("shapes", shapes),
                ("counters", &f.counters),
            ],
        )
    }

    fn scratch_bytes(p: &Particles) -> u64 {
        let rows = if p.has_affine() { 6 } else { 3 };
        p.capacity as u64 * 16 * rows
    }

    /// Binds the particle buffers again (after the APIC matrices were allocated, or the
    /// flux particles outgrew their buffer).
    pub fn rebind(&mut self, device: &wgpu::Device, f: &GridFields, p: &Particles) {
        if self.scratch.size() < Self::scratch_bytes(p) {
            self.scratch = storage_buffer(device, "Flow::scratch", Self::scratch_bytes(p));
        }
        self.params.apic = p.has_affine() as u32;
        self.group = Self::bind(
            &self.kernel,
            device,
            f,
            p,
            [
                &self.params_buffer,
                &self.shapes,
                &self.scratch,
                &self.work,
                &self.occupancy,
                &self.cell_map,
                &self.incoming,
            ],
        );
    }

    /// Host work before a substep of `dt` starting at time `t` with `count` particles:
    /// which emitters and drains are on, and the flux emitters' new particles.
    pub fn begin(
        &mut self,
        ctx: &GpuContext,
        scene: &Scene,
        (f, p): (&GridFields, &Particles),
        t: f64,
        dt: f64,
    ) {
        let bits = |on: &mut dyn Iterator<Item = bool>| {
            on.enumerate().fold(0u32, |m, (i, a)| m | (a as u32) << i)
        };
        self.params.emit_active = bits(&mut scene.emitters.iter().map(|e| e.active(t)));
        self.params.drain_active = bits(&mut scene.drains.iter().map(|d| d.active(t)));
        self.queued.clear();
        let room = (p.capacity as usize).saturating_sub(p.count as usize);
        let vp = scene.particle_volume();
        for (e, em) in scene.emitters.iter().enumerate() {
            let Some(q) = em.flux.filter(|_| em.active(t)) else {
                continue;
            };
            self.carry[e] += q * dt / vp;
            let whole = self.carry[e].floor();
            self.carry[e] -= whole;
            // Past the room left they are not emitted (not owed either: a full buffer stops
            // the inflow, it does not store it up). One past the room still goes to the
            // GPU, whose count of what it could not place raises the warning.
            let want = whole as usize;
            let n = want.min(room.saturating_sub(self.queued.len()) + 1);
            self.totals.not_emitted += (want - n) as u64;
            let placed = self.place(scene, &em.shape, e as u32, n);
            // Points the shape could not give (it lies almost all in solids or outside)
            // stay owed, not lost.
            self.carry[e] += (n - placed) as f64;
        }
        let need = 16 * self.queued.len().max(1) as u64;
        if self.incoming.size() < need {
            self.incoming = storage_buffer(&ctx.device, "Flow::incoming", need.next_power_of_two());
            self.rebind(&ctx.device, f, p);
        }
        if !self.queued.is_empty() {
            ctx.queue
                .write_buffer(&self.incoming, 0, bytemuck::cast_slice(&self.queued));
        }
        self.params.incoming = self.queued.len() as u32;
        self.params.count = p.count;
        self.params.num_blocks = p.count.div_ceil(WORKGROUP);
        self.params.substep = self.substeps;
        ctx.queue
            .write_buffer(&self.params_buffer, 0, bytemuck::bytes_of(&self.params));
    }

    /// Queues up to `n` points drawn uniformly in `shape`, inside the domain and outside
    /// the static solids; returns how many it placed.
    fn place(&mut self, scene: &Scene, shape: &Shape, emitter: u32, n: usize) -> usize {
        let (lo, hi) = shape.bounds();
        let d = scene.domain_size();
        let dims = scene.dims();
        let h = scene.h();
        let margin = 1e-3 * h;
        let mut placed = 0;
        let mut tries = 0;
        while placed < n && tries < 64 * n + 64 {
            tries += 1;
            let mut x = [0.0; 3];
            for a in 0..3 {
                x[a] = lo[a] + self.rng.next_f64() * (hi[a] - lo[a]);
            }
            if !shape.contains(x) || !(0..3).all(|a| x[a] > margin && x[a] < d[a] - margin) {
                continue;
            }
            let c: Vec<u32> = (0..3)
                .map(|a| ((x[a] / (d[a] / dims[a] as f64)) as u32).min(dims[a] - 1))
                .collect();
            let cell = c[0] + dims[0] * (c[1] + dims[1] * c[2]);
            if self.solid.get(cell as usize).is_some_and(|&s| s != 0) {
                continue;
            }
            self.queued.push([
                x[0] as f32,
                x[1] as f32,
                x[2] as f32,
                f32::from_bits(emitter),
            ]);
            placed += 1;
        }
        placed
    }

    /// The flux emitters' particles [`Self::begin`] placed (xyz, w = the emitter's index
    /// bits), and the substep counter the fill hashes.
    pub fn queued(&self) -> (&[[f32; 4]], u32) {
        (&self.queued, self.params.substep)
    }

    /// Records the stage for the particles of [`Self::begin`].
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        let k = &self.kernel;
        let p = &self.params;
        k.dispatch(pass, self.e.mark, &self.group, p.count);
        k.dispatch_groups(pass, self.e.plan, &self.group, &[], 1);
        k.dispatch(pass, self.e.scatter, &self.group, p.count);
        k.dispatch(pass, self.e.fill, &self.group, p.num_slots);
        k.dispatch(pass, self.e.inflow, &self.group, p.incoming);
    }

    /// The substep's counters: the new particle count, and the sums.
    pub fn finish(&mut self, c: &[u32]) -> u32 {
        use crate::gpu::constants::{
            COUNTER_EMITTED, COUNTER_NOT_EMITTED, COUNTER_PARTICLES, COUNTER_REMOVED,
        };
        self.substeps = self.substeps.wrapping_add(1);
        self.totals.emitted += c[COUNTER_EMITTED] as u64;
        self.totals.removed += c[COUNTER_REMOVED] as u64;
        self.totals.not_emitted += c[COUNTER_NOT_EMITTED] as u64;
        c[COUNTER_PARTICLES]
    }

    /// The host state a checkpoint keeps: substeps, the generator, the totals, the carries.
    pub fn state_words(&self) -> Vec<f64> {
        let mut w = vec![
            self.substeps as f64,
            (self.rng.0 >> 32) as f64,
            (self.rng.0 & 0xFFFF_FFFF) as f64,
            self.totals.emitted as f64,
            self.totals.removed as f64,
            self.totals.not_emitted as f64,
            self.warned_full as u32 as f64,
        ];
        w.extend_from_slice(&self.carry);
        w
    }

    pub fn restore_words(&mut self, w: &[f64]) -> Result<(), String> {
        if w.len() != 7 + self.carry.len() {
            return Err(format!(
                "the saved inflow/outflow state has {} numbers, this scene's {}",
                w.len(),
                7 + self.carry.len()
            ));
        }
        self.substeps = w[0] as u32;
        self.rng = SplitMix64(((w[1] as u64) << 32) | w[2] as u64);
        self.totals = FlowTotals {
            emitted: w[3] as u64,
            removed: w[4] as u64,
            not_emitted: w[5] as u64,
        };
        self.warned_full = w[6] != 0.0;
        self.carry.copy_from_slice(&w[7..]);
        Ok(())
    }
}
