//! Preconditioners on the GPU: none, Jacobi, Incomplete Poisson, MIC(0) by wavefront
//! planes and tiled MIC(0) (precond.wgsl), and the multigrid V-cycle
//! (multigrid.rs, multigrid.wgsl).

use super::{multigrid::Multigrid, PcgVectors};
use crate::gpu::{Entry, Kernel};
use crate::scene::PreconditionerKind;
use crate::sim::core::fields::GridFields;
use bytemuck::{Pod, Zeroable};

crate::kernel_entries!(
    /// The entry points of precond.wgsl.
    PrecondEntries { identity, jacobi, ip_upper, ip_lower, mic_factor, mic_forward, mic_backward, mict_factor, mict_apply }
);

/// Mirror of `Plane` in precond.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct PlaneSlot {
    s: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<PlaneSlot>() == 16);
crate::wgsl_mirror!(plane_slot_layout: PlaneSlot = "precond.wgsl" Plane {
    s: s,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

pub struct Precond {
    kernel: Kernel,
    e: PrecondEntries,
    group: wgpu::BindGroup,
    /// One uniform slot per wavefront plane, `stride` bytes apart (dynamic offsets).
    _planes: wgpu::Buffer,
    stride: u32,
    num_planes: u32,
    plane_threads: u32,
    /// Workgroups of the tiled MIC(0): one per tile.
    tiles: u32,
    pub multigrid: Multigrid,
}

/// Tile of the tiled MIC(0) for a grid (`tile_dims` in precond.wgsl).
pub fn mic_tile(n: [u32; 3]) -> [u32; 3] {
    use crate::gpu::constants::{MIC_TILE_3D, MIC_TILE_SLICE};
    if n[2] == 1 {
        [MIC_TILE_SLICE, MIC_TILE_SLICE, 1]
    } else {
        [MIC_TILE_3D; 3]
    }
}

impl Precond {
    pub fn new(
        device: &wgpu::Device,
        limits: &wgpu::Limits,
        info: &wgpu::AdapterInfo,
        f: &GridFields,
        v: &PcgVectors,
    ) -> Self {
        let [nx, ny, nz] = f.params.n;
        let num_planes = nx + ny + nz - 2;
        let stride = limits.min_uniform_buffer_offset_alignment.max(16);
        let mut bytes = vec![0u8; (stride * num_planes) as usize];
        for s in 0..num_planes {
            let slot = PlaneSlot { s, _pad: [0; 3] };
            let at = (s * stride) as usize;
            bytes[at..at + 16].copy_from_slice(bytemuck::bytes_of(&slot));
        }
        let planes = crate::gpu::uniform_buffer(device, "Precond::planes", &bytes);
        let kernel = Kernel::with_dynamic(
            device,
            crate::wgsl!("precond.wgsl"),
            "Precond",
            &[("plane", 16)],
        );
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("a", &v.a),
                ("r", &v.r),
                ("z", &v.z),
                ("t", &v.t),
                ("precon", &v.precon),
                ("plane", &planes),
                ("done", &v.state),
            ],
        );
        let tile = mic_tile(f.params.n);
        let tiles = (0..3).map(|a| f.params.n[a].div_ceil(tile[a])).product();
        Self {
            e: PrecondEntries::of(&kernel),
            kernel,
            group,
            _planes: planes,
            stride,
            num_planes,
            plane_threads: ny * nz,
            tiles,
            multigrid: Multigrid::new(device, info, f, v),
        }
    }

    /// Dispatches per application of the preconditioner (the cost that grows with the grid
    /// width for MIC(0)).
    pub fn dispatches(&self, kind: PreconditionerKind) -> u32 {
        match kind {
            PreconditionerKind::None | PreconditionerKind::Jacobi => 1,
            PreconditionerKind::Ip => 2,
            PreconditionerKind::Mic0 => 2 * self.num_planes,
            PreconditionerKind::Mic0Tiled => 1,
            PreconditionerKind::Mg => self.multigrid.dispatches(),
        }
    }

    fn planes(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, reverse: bool) {
        let groups = self.plane_threads.div_ceil(crate::gpu::WORKGROUP);
        for i in 0..self.num_planes {
            let s = if reverse { self.num_planes - 1 - i } else { i };
            self.kernel
                .dispatch_groups(pass, entry, &self.group, &[s * self.stride], groups);
        }
    }

    /// Per-solve set-up: the factorisation or the coarse levels of the current matrix.
    pub fn record_setup(&self, pass: &mut wgpu::ComputePass<'_>, kind: PreconditionerKind) {
        match kind {
            PreconditionerKind::Mic0 => self.planes(pass, self.e.mic_factor, false),
            PreconditionerKind::Mic0Tiled => {
                self.kernel
                    .dispatch_groups(pass, self.e.mict_factor, &self.group, &[0], self.tiles)
            }
            PreconditionerKind::Mg => self.multigrid.record_setup(pass),
            _ => {}
        }
    }

    /// z = M^-1 r.
    pub fn record_apply(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: &GridFields,
        kind: PreconditionerKind,
    ) {
        let n = f.num_cells();
        let g = n.div_ceil(crate::gpu::WORKGROUP);
        let one = |pass: &mut wgpu::ComputePass<'_>, entry: Entry| {
            self.kernel
                .dispatch_groups(pass, entry, &self.group, &[0], g)
        };
        match kind {
            PreconditionerKind::None => one(pass, self.e.identity),
            PreconditionerKind::Jacobi => one(pass, self.e.jacobi),
            PreconditionerKind::Ip => {
                one(pass, self.e.ip_upper);
                one(pass, self.e.ip_lower);
            }
            PreconditionerKind::Mic0 => {
                self.planes(pass, self.e.mic_forward, false);
                self.planes(pass, self.e.mic_backward, true);
            }
            PreconditionerKind::Mic0Tiled => {
                self.kernel
                    .dispatch_groups(pass, self.e.mict_apply, &self.group, &[0], self.tiles)
            }
            PreconditionerKind::Mg => self.multigrid.record_apply(pass),
        }
    }
}
