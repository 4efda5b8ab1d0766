//! Pushing the liquid with the mouse: a velocity kick to the particles near the picking
//! ray (shaders/render_push.wgsl). It writes the simulation's particle velocities between
//! steps, the way an external force would.

use crate::gpu::{Binding, Kernel};
use crate::sim::Simulation;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// Mirror of `Push` in shaders/render_push.wgsl (layout checked by tests/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct PushParams {
    origin: [f32; 3],
    radius: f32,
    dir: [f32; 3],
    count: u32,
    delta_v: [f32; 3],
    _pad: u32,
}
const _: () = assert!(std::mem::size_of::<PushParams>() == 48);
crate::wgsl_mirror!(push_params_layout: PushParams = "render_push.wgsl" Push {
    origin: origin,
    radius: radius,
    dir: dir,
    count: count,
    delta_v: delta_v,
    _pad: _pad,
});

pub struct Pusher {
    kernel: Kernel,
    params: wgpu::Buffer,
}

impl Pusher {
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            kernel: Kernel::new(
                device,
                "render_push.wgsl",
                "Pusher",
                &["main"],
                &[Binding::Uniform, Binding::StorageRead, Binding::Storage],
            ),
            params: crate::gpu::uniform_buffer(device, "Pusher::params", &[0u8; 48]),
        }
    }

    /// Adds `delta_v` (m/s) to particles within `radius` of the ray, fading with distance.
    pub fn push(&self, sim: &Simulation, origin: Vec3, dir: Vec3, radius: f32, delta_v: Vec3) {
        let ctx = &sim.ctx;
        let p = PushParams {
            origin: origin.into(),
            radius,
            dir: dir.normalize_or_zero().into(),
            count: sim.particles.count,
            delta_v: delta_v.into(),
            _pad: 0,
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        let group = self.kernel.bind(
            &ctx.device,
            &[&self.params, &sim.particles.pos, &sim.particles.vel],
        );
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.kernel
                .dispatch(&mut pass, "main", &group, sim.particles.count);
        }
        ctx.queue.submit([enc.finish()]);
    }
}
