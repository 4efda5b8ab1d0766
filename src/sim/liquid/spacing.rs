//! Particle spacing (spacing.wgsl): particles inside the liquid closer than a
//! minimum distance push each other apart, position only, with a fixed-point sum so the
//! result does not depend on the order of the GPU's atomics. Particles in cells next to AIR
//! do not move (the shader says why).

use crate::gpu::{storage_buffer, uniform_buffer, Kernel, Region};
use crate::sim::core::fields::{GridFields, Particles};
use bytemuck::{Pod, Zeroable};

/// Each particle of a pair closer than the minimum distance moves this fraction of the
/// overlap away from the other (together they close it).
pub const STRENGTH: f32 = 0.5;

/// Mirror of `SpacingParams` in spacing.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SpacingParams {
    /// Minimum distance between particle centres (m).
    pub radius: f32,
    pub strength: f32,
    pub _pad: [f32; 2],
}
const _: () = assert!(std::mem::size_of::<SpacingParams>() == 16);
crate::wgsl_mirror!(spacing_params_layout: SpacingParams = "spacing.wgsl" SpacingParams {
    radius: radius,
    strength: strength,
    _pad0: _pad[0],
    _pad1: _pad[1],
});

/// The minimum distance (m) of `fraction` of the rest spacing h / ppc^(1/3).
pub fn min_distance(h: f64, particles_per_cell: u32, fraction: f64) -> f64 {
    fraction * h / (particles_per_cell as f64).cbrt()
}

/// Bytes the stage allocates: its parameters. Its lists (a head per cell, a next link per
/// particle) live in P2G's accumulator buffer (`GridFields::acc`, [`lists_bytes`]), idle
/// from the extrapolation until the next P2G; the summed moves wait in the particles'
/// unused fourth words (spacing.wgsl).
pub const BYTES: u64 = 16;

/// Bytes of the lists of `particles` particles on `cells` cells: the heads, then the next
/// links from the next region boundary.
pub fn lists_bytes(cells: u64, particles: u64) -> u64 {
    Region::packed_bytes(1, cells * 4) + particles * 4
}

crate::kernel_entries!(
    /// The entry points of spacing.wgsl.
    SpacingEntries { clear, bin, push, apply }
);

pub struct Spacing {
    kernel: Kernel,
    e: SpacingEntries,
    group: wgpu::BindGroup,
    params: wgpu::Buffer,
    /// The next links: in `acc` after the heads, or a buffer of their own where `acc` has
    /// no room for them (a spacing turned on while running in a scene that started
    /// without one).
    _next: Region,
}

impl Spacing {
    pub fn new(device: &wgpu::Device, f: &GridFields, p: &Particles) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("spacing.wgsl"), "Spacing");
        let params = uniform_buffer(
            device,
            "Spacing::params",
            bytemuck::bytes_of(&SpacingParams::default()),
        );
        let particles = p.capacity.max(1) as u64;
        let cells = f.num_cells() as u64;
        let head = Region {
            buffer: f.acc.clone(),
            offset: 0,
            size: cells * 4,
        };
        let next = if f.acc.size() >= lists_bytes(cells, particles) {
            Region {
                buffer: f.acc.clone(),
                offset: Region::packed_bytes(1, cells * 4),
                size: particles * 4,
            }
        } else {
            Region::whole(storage_buffer(device, "Spacing::next", particles * 4))
        };
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("spacing", &params),
                ("solid", &f.solid),
                ("pos", &p.pos),
                // The lists in P2G's accumulators, idle from the extrapolation until the
                // next P2G (no buffer of their own).
                ("head", &head),
                ("next", &next),
                // The pushes' sums wait in pos.w and vel.w (zero outside the stage).
                ("vel", &p.vel),
                ("cell_type", &f.cell_type),
            ],
        );
        Self {
            e: SpacingEntries::of(&kernel),
            kernel,
            group,
            params,
            _next: next,
        }
    }

    /// Sets the minimum distance (m).
    pub fn write_params(&self, queue: &wgpu::Queue, radius: f64) {
        let p = SpacingParams {
            radius: radius as f32,
            strength: STRENGTH,
            _pad: [0.0; 2],
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields, p: &Particles) {
        let k = &self.kernel;
        k.dispatch(pass, self.e.clear, &self.group, f.num_cells());
        k.dispatch(pass, self.e.bin, &self.group, p.count);
        k.dispatch(pass, self.e.push, &self.group, p.count);
        k.dispatch(pass, self.e.apply, &self.group, p.count);
    }
}
