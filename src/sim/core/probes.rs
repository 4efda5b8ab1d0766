//! The scene's probes on the GPU (probes.wgsl): every column sampled after each full
//! substep into a row of a buffer the host reads once per frame, so probes add no read to
//! a substep. What each probe reads is in src/scene/probes.rs; the f64 reference of every
//! column is src/reference/probes.rs, built from the same [`ProbeItem`]s.

use super::fields::GridFields;
use super::pressure::PcgVectors;
use crate::gpu::{read_buffer_range, storage_buffer, uniform_buffer, GpuContext, Kernel};
use crate::scene::probes::{Column, ColumnKind, ProbeEvery, ProbePlan};
use crate::scene::Scene;
use crate::sim::SimError;
use bytemuck::{Pod, Zeroable};

crate::kernel_entries!(
    /// The entry points of probes.wgsl.
    ProbeEntries { sample }
);

/// What a column samples (`ProbeItem::kind`).
pub const PROBE_PRESSURE: u32 = 0;
pub const PROBE_VELOCITY: u32 = 1;
pub const PROBE_DENSITY: u32 = 2;
pub const PROBE_LEVEL: u32 = 3;
pub const PROBE_TEMPERATURE: u32 = 4;
pub const PROBE_DYE: u32 = 5;
pub const PROBE_GAUGE: u32 = 6;
pub const PROBE_SENSOR: u32 = 7;
pub const PROBE_FORCE: u32 = 8;
/// A column the host fills after the substep (a rigid body's force and moment).
pub const PROBE_HOST: u32 = 9;

/// Mirror of `ProbeParams` in probes.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ProbeParams {
    pub items: u32,
    pub stride: u32,
    pub capacity: u32,
    pub smoke: u32,
    pub rho: f32,
    pub face_area: f32,
    pub _pad: [u32; 2],
}
crate::wgsl_mirror!(probe_params_layout: ProbeParams = "probes.wgsl" ProbeParams {
    items: items,
    stride: stride,
    capacity: capacity,
    smoke: smoke,
    rho: rho,
    face_area: face_area,
    _pad0: _pad[0],
    _pad1: _pad[1],
});

/// Mirror of `ProbeItem` in probes.wgsl: one column.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ProbeItem {
    pub kind: u32,
    pub axis: u32,
    pub first: u32,
    pub count: u32,
    pub pos: [f32; 4],
    pub aux: [f32; 4],
}
crate::wgsl_mirror!(probe_item_layout: ProbeItem = "probes.wgsl" ProbeItem {
    kind: kind,
    axis: axis,
    first: first,
    count: count,
    pos: pos,
    aux: aux,
});

/// The GPU's item for a column of the plan.
pub fn item(c: &Column) -> ProbeItem {
    let p = c.at.map(|v| v as f32);
    let mut it = ProbeItem {
        pos: [p[0], p[1], p[2], 0.0],
        ..Default::default()
    };
    match c.kind {
        ColumnKind::Pressure => it.kind = PROBE_PRESSURE,
        ColumnKind::Velocity(a) => (it.kind, it.axis) = (PROBE_VELOCITY, a as u32),
        ColumnKind::Density => it.kind = PROBE_DENSITY,
        ColumnKind::Level => it.kind = PROBE_LEVEL,
        ColumnKind::Temperature => it.kind = PROBE_TEMPERATURE,
        ColumnKind::Dye => it.kind = PROBE_DYE,
        ColumnKind::Gauge => it.kind = PROBE_GAUGE,
        ColumnKind::Sensor {
            axis,
            plane,
            sign,
            radius,
        } => {
            (it.kind, it.axis, it.first) = (PROBE_SENSOR, axis as u32, plane);
            it.pos[3] = radius as f32;
            it.aux[0] = sign as f32;
        }
        ColumnKind::Force {
            column,
            first,
            count,
            centre,
        } => {
            (it.kind, it.axis, it.first, it.count) = (PROBE_FORCE, column as u32, first, count);
            let c = centre.map(|v| v as f32);
            it.aux = [c[0], c[1], c[2], 0.0];
        }
        ColumnKind::Body { .. } => it.kind = PROBE_HOST,
    }
    it
}

/// One row of probes.csv: the time (s) and every column.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRow {
    pub time: f64,
    pub values: Vec<f64>,
}

/// The probes' kernel and buffers.
pub struct Probes {
    kernel: Kernel,
    e: ProbeEntries,
    group: wgpu::BindGroup,
    rows: wgpu::Buffer,
    count: wgpu::Buffer,
    stride: u32,
    capacity: u32,
    every: ProbeEvery,
    /// The parameters, items and faces the bind group reads.
    _inputs: [wgpu::Buffer; 3],
    pub plan: ProbePlan,
    /// The columns the host fills: (column, body, component 0-5).
    pub host: Vec<(usize, usize, usize)>,
    /// The host's columns of this frame's substeps so far (one entry per substep).
    pub host_rows: Vec<Vec<f64>>,
}

impl Probes {
    /// The probes of `scene` on its grid, or None without any. `dye`: the smoke's dye and
    /// temperature buffer (None in a liquid).
    pub fn new(
        ctx: &GpuContext,
        scene: &Scene,
        f: &GridFields,
        v: &PcgVectors,
        dye: Option<&wgpu::Buffer>,
    ) -> Option<Probes> {
        if scene.probes.is_empty() {
            return None;
        }
        let device = &ctx.device;
        let plan = ProbePlan::of(scene);
        let items: Vec<ProbeItem> = plan.columns.iter().map(item).collect();
        let host = plan
            .columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c.kind {
                ColumnKind::Body { body, column } => Some((i, body, column)),
                _ => None,
            })
            .collect();
        let stride = 1 + items.len() as u32;
        let capacity = scene.max_substeps.max(1);
        let params = ProbeParams {
            items: items.len() as u32,
            stride,
            capacity,
            smoke: dye.is_some() as u32,
            rho: plan.rho as f32,
            face_area: plan.face_area as f32,
            _pad: [0; 2],
        };
        let kernel = Kernel::new(device, crate::wgsl!("probes.wgsl"), "Probes");
        let params_buf = uniform_buffer(device, "probes.params", bytemuck::bytes_of(&params));
        let item_bytes: Vec<u8> = bytemuck::cast_slice(&items).to_vec();
        let items = storage_buffer(device, "probes.items", item_bytes.len() as u64);
        let faces = storage_buffer(device, "probes.faces", 8 * plan.faces.len() as u64);
        let rows = storage_buffer(device, "probes.rows", 4 * (stride * capacity) as u64);
        let count = storage_buffer(device, "probes.count", 16);
        let placeholder = storage_buffer(device, "probes.no_dye", 16);
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("probe", &params_buf),
                ("items", &items),
                ("faces", &faces),
                ("cell_type", &f.cell_type),
                ("p", &v.p),
                ("grid_vel", &f.vel),
                ("surface", &f.surface),
                ("dye", dye.unwrap_or(&placeholder)),
                ("rows", &rows),
                ("row_count", &count),
            ],
        );
        let probes = Probes {
            e: ProbeEntries::of(&kernel),
            kernel,
            group,
            rows,
            count,
            stride,
            capacity,
            every: scene.probe_every,
            _inputs: [params_buf, items, faces],
            plan,
            host,
            host_rows: Vec::new(),
        };
        let [_, items, faces] = &probes._inputs;
        if !item_bytes.is_empty() {
            ctx.queue.write_buffer(items, 0, &item_bytes);
        }
        if !probes.plan.faces.is_empty() {
            ctx.queue
                .write_buffer(faces, 0, bytemuck::cast_slice(&probes.plan.faces));
        }
        Some(probes)
    }

    /// Starts a frame: its rows begin again at the first.
    pub fn begin_frame(&mut self, ctx: &GpuContext) {
        ctx.queue.write_buffer(&self.count, 0, &[0; 4]);
        self.host_rows.clear();
    }

    /// Samples every column into the next row (after a full substep).
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("probes"),
            timestamp_writes: None,
        });
        self.kernel
            .dispatch_groups(&mut pass, self.e.sample, &self.group, &[], 1);
    }

    /// Whether the host fills columns after each substep.
    pub fn has_host_columns(&self) -> bool {
        !self.host.is_empty()
    }

    /// The frame's rows: its `substeps` substeps' (or with `probe_every: frame` the last
    /// one's, the only row read back), timed from `t0`, the frame's start, to `t1`, its
    /// end.
    pub fn read_frame(
        &self,
        ctx: &GpuContext,
        substeps: u32,
        t0: f64,
        t1: f64,
    ) -> Result<Vec<ProbeRow>, SimError> {
        let n = substeps.min(self.capacity) as usize;
        if n == 0 {
            return Ok(vec![]);
        }
        let first = if self.every.is_substep() { 0 } else { n - 1 };
        let row_bytes = 4 * self.stride as u64;
        let words: Vec<f32> = read_buffer_range(
            ctx,
            &self.rows,
            row_bytes * first as u64,
            row_bytes * (n - first) as u64,
        )?;
        let mut out = Vec::with_capacity(n - first);
        let mut t = t0;
        for (k, row) in words.chunks(self.stride as usize).enumerate() {
            let i = first + k;
            t += row[0] as f64;
            let mut values: Vec<f64> = row[1..].iter().map(|v| *v as f64).collect();
            if let Some(host) = self.host_rows.get(i) {
                for (c, &(col, _, _)) in self.host.iter().enumerate() {
                    values[col] = host[c];
                }
            }
            // The last row ends the frame exactly (the rows' lengths are the GPU's f32).
            let time = if i + 1 == n { t1 } else { t };
            out.push(ProbeRow { time, values });
        }
        Ok(out)
    }
}
