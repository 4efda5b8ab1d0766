//! Pushing the liquid with the mouse: a velocity kick to the particles near the picking
//! ray (push.wgsl). It writes the simulation's particle velocities between
//! steps, the way an external force would.

use crate::gpu::Kernel;
use crate::sim::Simulation;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

crate::kernel_entries!(
    /// The entry points of push.wgsl.
    PusherEntries { main }
);

/// Mirror of `Push` in push.wgsl (layout checked by tests/integration/shaders.rs).
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
crate::wgsl_mirror!(push_params_layout: PushParams = "push.wgsl" Push {
    origin: origin,
    radius: radius,
    dir: dir,
    count: count,
    delta_v: delta_v,
    _pad: _pad,
});

pub struct Pusher {
    kernel: Kernel,
    e: PusherEntries,
    params: wgpu::Buffer,
}

impl Pusher {
    pub fn new(device: &wgpu::Device) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("push.wgsl"), "Pusher");
        Self {
            e: PusherEntries::of(&kernel),
            kernel,
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
            count: sim.mode.particles.count,
            delta_v: delta_v.into(),
            _pad: 0,
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        let group = self.kernel.bind(
            &ctx.device,
            &[
                ("push", &self.params),
                ("pos", &sim.mode.particles.pos),
                ("vel", &sim.mode.particles.vel),
            ],
        );
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.kernel
                .dispatch(&mut pass, self.e.main, &group, sim.mode.particles.count);
        }
        ctx.submit(enc.finish());
    }
}
