//! Velocity extrapolation into AIR, layer by layer (extrapolate.wgsl).

use crate::gpu::Kernel;
use crate::sim::core::fields::GridFields;

crate::kernel_entries!(
    /// The entry points of extrapolate.wgsl.
    ExtrapolateEntries { init, layer, finish }
);

pub struct Extrapolate {
    kernel: Kernel,
    e: ExtrapolateEntries,
    /// The validity flags are the two words per face of P2G's accumulators (`GridFields::acc`,
    /// idle after P2G): groups[0] reads word 1 and writes word 0; groups[1] the other way
    /// round.
    groups: [wgpu::BindGroup; 2],
    _ping: [wgpu::Buffer; 2],
}

impl Extrapolate {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("extrapolate.wgsl"), "Extrapolate");
        let ping = |src: u32, dst: u32| {
            crate::gpu::uniform_buffer(
                device,
                "Extrapolate::ping",
                bytemuck::cast_slice(&[src, dst, 0u32, 0]),
            )
        };
        let pings = [ping(1, 0), ping(0, 1)];
        let make = |p: &wgpu::Buffer| {
            kernel.bind(
                device,
                &[
                    ("params", &f.params_buffer),
                    ("cell_type", &f.cell_type),
                    ("ping", p),
                    ("flags", &f.acc),
                    ("grid_vel", &f.vel),
                    ("weighted", &f.weighted),
                ],
            )
        };
        let groups = [make(&pings[0]), make(&pings[1])];
        Self {
            e: ExtrapolateEntries::of(&kernel),
            kernel,
            groups,
            _ping: pings,
        }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, layers: u32) {
        let n = f.num_faces();
        // init writes word 0; layer l reads the word written last and writes the other.
        self.kernel.dispatch(pass, self.e.init, &self.groups[0], n);
        let mut latest = 0;
        for _ in 0..layers {
            let g = if latest == 0 { 1 } else { 0 };
            self.kernel.dispatch(pass, self.e.layer, &self.groups[g], n);
            latest = g;
        }
        // finish reads word `latest`: the input of the group writing the other one.
        let g = if latest == 0 { 1 } else { 0 };
        self.kernel
            .dispatch(pass, self.e.finish, &self.groups[g], n);
    }
}
