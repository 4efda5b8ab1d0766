//! Preconditioned conjugate gradients with all scalars on the GPU (pcg.wgsl).

use super::PcgVectors;
use crate::gpu::{Entry, Kernel};
use crate::sim::core::fields::GridFields;
use bytemuck::{Pod, Zeroable};

pub use crate::gpu::constants::MAX_REDUCE_GROUPS;
/// Threads per reduction workgroup.
pub use crate::gpu::constants::REDUCE_WG;

crate::kernel_entries!(
    /// The entry points of pcg.wgsl.
    PcgEntries { init_mask, init_residual, dot_bb, finish_bb, dot_rz, finish_init, copy_d, apply_a, dot_dq, update_pr, test_converged, update_d, true_residual, finish_true, stop_queued }
);

/// Mirror of `PcgConfig` in pcg.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct PcgConfig {
    /// Tolerance on max|r| / max|b|.
    pub tol: f32,
    pub max_iterations: u32,
    pub groups: u32,
    pub warm_start: u32,
    /// 1 when the solve adds a term K to A ([`super::AddedTerm`]): the true residual then
    /// reads K p from z.
    pub coupled: u32,
    pub _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<PcgConfig>() == 32);
crate::wgsl_mirror!(pcg_config_layout: PcgConfig = "pcg.wgsl" PcgConfig {
    tol: tol,
    max_iterations: max_iterations,
    groups: groups,
    warm_start: warm_start,
    coupled: coupled,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// Mirror of the fixed part of `PcgState` in pcg.wgsl (layout checked by
/// tests/integration/shaders.rs). `status` holds one of the `PCG_*` codes of `crate::gpu::constants`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct PcgStateHeader {
    pub rho: f32,
    pub alpha: f32,
    pub beta: f32,
    pub bb: f32,
    pub rr: f32,
    pub iterations: u32,
    pub done: u32,
    pub status: u32,
    /// max |b - A p| of the stored solution, once `Pcg::record_true_residual` has run.
    pub true_rr: f32,
    /// The f32 floor of that residual: max over cells of 2^-24 times the largest term.
    pub floor_rr: f32,
}
/// Bytes of the state buffer before its residual history.
pub const STATE_HEADER_BYTES: u64 = std::mem::size_of::<PcgStateHeader>() as u64;
const _: () = assert!(STATE_HEADER_BYTES == 40);
/// Bytes per reduction workgroup of the partials buffer: a sum and a max (or two sums).
pub const PARTIAL_BYTES: u64 = 2 * 4;
/// Bytes of the partials buffer: the pairs, then one max|r| per workgroup of update_pr
/// (pcg.wgsl, `test_converged`).
pub const PARTIALS_BUFFER_BYTES: u64 = (PARTIAL_BYTES + 4) * MAX_REDUCE_GROUPS as u64;
// The preconditioners read the done flag as a plain word of the state buffer.
const _: () =
    assert!(std::mem::offset_of!(PcgStateHeader, done) == 4 * crate::gpu::constants::PCG_DONE_WORD);
crate::wgsl_mirror!(pcg_state_layout: PcgStateHeader = "pcg.wgsl" PcgState {
    rho: rho,
    alpha: alpha,
    beta: beta,
    bb: bb,
    rr: rr,
    iterations: iterations,
    done: done,
    status: status,
    true_rr: true_rr,
    floor_rr: floor_rr,
    ..
});

pub fn reduce_groups(cells: u32) -> u32 {
    cells.div_ceil(REDUCE_WG).clamp(1, MAX_REDUCE_GROUPS)
}

pub struct Pcg {
    kernel: Kernel,
    e: PcgEntries,
    group: wgpu::BindGroup,
    groups: u32,
}

impl Pcg {
    pub fn new(device: &wgpu::Device, f: &GridFields, v: &PcgVectors) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("pcg.wgsl"), "Pcg");
        let group = kernel.bind(
            device,
            &[
                ("params", &f.params_buffer),
                ("cfg", &v.config),
                ("a", &v.a),
                ("b", &v.b),
                ("p", &v.p),
                ("r", &v.r),
                ("z", &v.z),
                ("d", &v.d),
                ("q", &v.q),
                ("partials", &v.partials),
                ("state", &v.state),
            ],
        );
        Self {
            e: PcgEntries::of(&kernel),
            kernel,
            group,
            groups: reduce_groups(f.num_cells()),
        }
    }

    pub fn groups(&self) -> u32 {
        self.groups
    }

    fn cells(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry, f: &GridFields) {
        self.kernel
            .dispatch(pass, entry, &self.group, f.num_cells());
    }

    fn reduce(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry) {
        self.kernel
            .dispatch_groups(pass, entry, &self.group, &[], self.groups);
    }

    fn single(&self, pass: &mut wgpu::ComputePass<'_>, entry: Entry) {
        self.kernel
            .dispatch_groups(pass, entry, &self.group, &[], 1);
    }

    /// r = b - A p0 and ||b||^2; resets the iteration state.
    pub fn record_init_residual(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.cells(pass, self.e.init_mask, f);
        self.cells(pass, self.e.init_residual, f);
        self.reduce(pass, self.e.dot_bb);
        self.single(pass, self.e.finish_bb);
    }

    /// r = b - A p again (after a start that changed p; q is cleared with it).
    pub fn record_residual(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.cells(pass, self.e.init_residual, f);
    }

    /// After z = M^-1 r: rho = r.z, d = z, and the initial convergence test.
    pub fn record_init_direction(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.reduce(pass, self.e.dot_rz);
        self.single(pass, self.e.finish_init);
        self.cells(pass, self.e.copy_d, f);
    }

    /// First half of an iteration: q = A d (plus an added term's K d between the two
    /// halves), then alpha, p and r updates, then the convergence test on the new r, so a
    /// converged solve skips the preconditioner it no longer needs (4 dispatches; alpha is
    /// computed inside update_pr, see pcg.wgsl).
    pub fn record_step(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: &GridFields,
        term: Option<&dyn super::AddedTerm>,
    ) {
        self.cells(pass, self.e.apply_a, f);
        if let Some(t) = term {
            t.record(pass, super::TermOp::AddToQ);
        }
        self.reduce(pass, self.e.dot_dq);
        self.reduce(pass, self.e.update_pr);
        self.single(pass, self.e.test_converged);
    }

    /// Second half, after z = M^-1 r: beta, the iteration limit and breakdown tests, new
    /// direction (2 dispatches; computed inside update_d).
    pub fn record_direction(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.reduce(pass, self.e.dot_rz);
        self.reduce(pass, self.e.update_d);
    }

    /// After a solve: the true residual b - A p of the stored solution and its f32 floor
    /// into the state (2 dispatches; they return at once while the solve is still running,
    /// so they may be queued behind a guessed number of iterations).
    pub fn record_true_residual(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.reduce(pass, self.e.true_residual);
        self.single(pass, self.e.finish_true);
    }

    /// Ends a solve still running where its queued iterations end (status
    /// `PCG_STOPPED`), so the true residual behind it runs and the host learns how far it
    /// got (1 dispatch; a pipelined solve's end).
    pub fn record_stop(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.single(pass, self.e.stop_queued);
    }

    /// Dispatches per iteration outside the preconditioner.
    pub const DISPATCHES: u32 = 6;
}
