//! The push-out's reaction on the bodies, on the GPU (push.wgsl): the momentum the
//! push-out gave the liquid's particles after the bodies moved, taken off each dynamic
//! body's velocity and spin at the start of the next substep, before its solve. The host
//! takes the same sums off its own state once the substep's readback brings them
//! ([`super::coupling::Bodies::keep_push`]), so a substep reads nothing back for it.

use super::BodySet;
use crate::gpu::constants::MAX_BODIES;
use crate::gpu::{storage_buffer, uniform_buffer, Kernel};
use bytemuck::{Pod, Zeroable};

crate::kernel_entries!(
    /// The entry points of push.wgsl.
    PushEntries { apply_push }
);

/// Mirror of `PushParams` in push.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct PushParams {
    pub bodies: u32,
    pub _pad: [u32; 3],
}
crate::wgsl_mirror!(push_params_layout: PushParams = "push.wgsl" PushParams {
    bodies: bodies,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// Bytes per body of the inverse masses and inertias: four vec4.
const INVERSE_BYTES: u64 = 64;

pub struct PushReaction {
    kernel: Kernel,
    e: PushEntries,
    group: wgpu::BindGroup,
    params: wgpu::Buffer,
    inverse: wgpu::Buffer,
    bodies: u32,
}

impl PushReaction {
    /// Binds the push-out's sums and the two bodies buffers it corrects (coupling.wgsl's
    /// `Body` and strong.wgsl's `CoupleBody`).
    pub fn new(
        device: &wgpu::Device,
        push_sums: &wgpu::Buffer,
        bodies: &wgpu::Buffer,
        couple: &wgpu::Buffer,
    ) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("push.wgsl"), "PushReaction");
        let params = uniform_buffer(
            device,
            "PushReaction::params",
            bytemuck::bytes_of(&PushParams::default()),
        );
        let inverse = storage_buffer(
            device,
            "PushReaction::inverse",
            MAX_BODIES as u64 * INVERSE_BYTES,
        );
        let group = kernel.bind(
            device,
            &[
                ("pp", &params),
                ("push_sums", push_sums),
                ("inverse", &inverse),
                ("body_words", bodies),
                ("couple_words", couple),
            ],
        );
        Self {
            e: PushEntries::of(&kernel),
            kernel,
            group,
            params,
            inverse,
            bodies: 0,
        }
    }

    /// Each body's inverse mass and world inverse inertia (`set`, as the substep starts;
    /// zero for a body the push does not move, and a slice's bodies keep to its plane).
    pub fn upload(&mut self, queue: &wgpu::Queue, set: &BodySet) {
        let mut words: Vec<[f32; 4]> = Vec::with_capacity(4 * set.bodies.len());
        for b in &set.bodies {
            let (mut m, mut i) = if b.is_dynamic() {
                (glam::DVec3::splat(b.inverse_mass()), b.inverse_inertia())
            } else {
                (glam::DVec3::ZERO, glam::DMat3::ZERO)
            };
            if set.slice {
                m.z = 0.0;
                let zz = i.z_axis.z;
                i = glam::DMat3::ZERO;
                i.z_axis.z = zz;
            }
            let f = |v: glam::DVec3| [v.x as f32, v.y as f32, v.z as f32, 0.0];
            words.extend([f(m), f(i.x_axis), f(i.y_axis), f(i.z_axis)]);
        }
        self.bodies = set.bodies.len() as u32;
        let p = PushParams {
            bodies: self.bodies,
            _pad: [0; 3],
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        if !words.is_empty() {
            queue.write_buffer(&self.inverse, 0, bytemuck::cast_slice(&words));
        }
    }

    /// Records the reaction in a pass of its own (before anything reads the bodies'
    /// velocities).
    pub fn record(&self, enc: &mut wgpu::CommandEncoder) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bodies_push_reaction"),
            timestamp_writes: None,
        });
        self.kernel.dispatch_groups(
            &mut pass,
            self.e.apply_push,
            &self.group,
            &[],
            self.bodies.div_ceil(64).max(1),
        );
    }
}
