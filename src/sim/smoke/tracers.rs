//! Tracer particles: moved by the liquid's particle advection (RK2 through the grid, kept
//! in the domain and out of SOLID cells, moving bodies' included), then recorded into trail
//! ring buffers (tracers.wgsl). The bodies' coupling pushes tracers out of a
//! body that moved over them.

use super::SmokeFields;
use crate::gpu::Kernel;
use crate::sim::{
    core::fields::{GridFields, Particles},
    liquid::advect::Advect,
};

crate::kernel_entries!(
    /// The entry points of tracers.wgsl.
    SmokeTracersEntries { record }
);

pub struct SmokeTracers {
    advect: Advect,
    kernel: Kernel,
    e: SmokeTracersEntries,
    group: wgpu::BindGroup,
}

impl SmokeTracers {
    pub fn new(device: &wgpu::Device, f: &GridFields, s: &SmokeFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("tracers.wgsl"), "SmokeTracers");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("smoke", &s.params_buffer),
                ("pos", &p.pos),
                ("trail", &s.trail),
            ],
        );
        Self {
            e: SmokeTracersEntries::of(&kernel),
            advect: Advect::new(device, f, p),
            kernel,
            group,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, p: &Particles) {
        self.advect.record(pass, p);
        self.kernel
            .dispatch(pass, self.e.record, &self.group, p.count);
    }
}
