//! Copies recorded as dispatches (copy.wgsl), for the copies a substep recorded ahead must
//! not make when it does not run: a queue copy is not gated ([`super::gate`]), a dispatch
//! is.

use super::{Bindable, Kernel, Region};

crate::kernel_entries!(
    /// The entry points of copy.wgsl.
    CopyEntries { main }
);

/// Copies a fixed list of regions, each to a region of the same size.
pub struct KernelCopy {
    kernel: Kernel,
    e: CopyEntries,
    /// A bind group and the words it copies, per pair.
    pairs: Vec<(wgpu::BindGroup, u32)>,
}

impl KernelCopy {
    /// Copies each `(from, to)` pair; sizes are multiples of 4 and equal within a pair.
    pub fn new(device: &wgpu::Device, pairs: &[(Region, Region)]) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("copy.wgsl"), "KernelCopy");
        let pairs = pairs
            .iter()
            .map(|(from, to)| {
                assert_eq!(
                    from.size, to.size,
                    "a copy between regions of different sizes"
                );
                let group = kernel.bind(
                    device,
                    &[("src", from as &dyn Bindable), ("dst", to as &dyn Bindable)],
                );
                (group, (to.size / 4) as u32)
            })
            .collect();
        Self {
            e: CopyEntries::of(&kernel),
            kernel,
            pairs,
        }
    }

    /// Records the copies into `pass`.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        for (group, words) in &self.pairs {
            self.kernel.dispatch(pass, self.e.main, group, *words);
        }
    }
}
