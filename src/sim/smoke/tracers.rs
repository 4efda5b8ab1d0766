//! Tracer particles: moved by the liquid's particle advection (RK2 through the grid, kept
//! in the domain and out of solids), pushed out of the moving obstacle when it ran over
//! them, then recorded into trail ring buffers
//! (shaders/smoke_tracers.wgsl).

use super::SmokeFields;
use crate::gpu::{Binding::*, Kernel};
use crate::sim::advect::Advect;
use crate::sim::fields::{GridFields, Particles};

pub struct SmokeTracers {
    advect: Advect,
    kernel: Kernel,
    group: wgpu::BindGroup,
}

impl SmokeTracers {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields, p: &Particles) -> Self {
        let kernel = Kernel::new(
            device,
            "smoke_tracers.wgsl",
            "SmokeTracers",
            &["record"],
            &[Uniform, Uniform, Storage, Storage],
        );
        let group = kernel.bind(
            device,
            &[&f.params_buffer, &s.params_buffer, &p.pos, &s.trail],
        );
        Self {
            advect: Advect::new(device, f, p),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.advect.record(pass, p);
        self.kernel.dispatch(pass, "record", &self.group, p.count);
    }
}
