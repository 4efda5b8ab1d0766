//! What a mode's stages are to the runner ([`StageList`], [`SharedStage`]) and what they
//! record into ([`Recorder`]): one labelled, timed compute pass per stage.

use crate::gpu::{GpuContext, PassTimer};
use std::fmt::Debug;

/// A stage the runner records itself, the same in every mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedStage {
    /// Solid velocities on the faces of SOLID cells.
    Boundary,
    /// Divergence, matrix, preconditioner set-up and the PCG iterations.
    Pressure,
    /// Pressure gradient subtracted, then the divergence left behind measured.
    Project,
}

/// The stages of a mode's substep, in order. The viewer can stop a substep after any one.
pub trait StageList: Copy + Ord + Debug + Send + Sync + 'static {
    /// Every stage, in the order a substep runs them.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    /// The shared stage this one is, if any.
    fn shared(self) -> Option<SharedStage>;
    /// The last stage: a substep that runs it is a full one.
    fn last() -> Self {
        Self::ALL[Self::ALL.len() - 1]
    }
}

/// Records a substep's commands: each stage into its own labelled, timed pass.
pub struct Recorder<'a> {
    ctx: &'a GpuContext,
    timer: &'a PassTimer,
    enc: wgpu::CommandEncoder,
    /// Set by a stage that assembled this substep's pressure matrix and preconditioner
    /// (the liquid's volume correction): the pressure stage then only starts the solve.
    pub matrix_ready: bool,
}

impl<'a> Recorder<'a> {
    pub(in crate::sim) fn new(
        ctx: &'a GpuContext,
        timer: &'a PassTimer,
        label: &'static str,
    ) -> Self {
        Self {
            ctx,
            timer,
            enc: new_encoder(ctx, label),
            matrix_ready: false,
        }
    }

    /// A compute pass for `stage`, labelled with its name and timed. The pressure pass's
    /// end is timed by the solve that follows it.
    pub fn pass<S: StageList>(&mut self, stage: S) -> wgpu::ComputePass<'_> {
        // The pressure stage's iterations are timed in a part of their own
        // (`PressureSolver::iterate`), so this pass times its set-up alone.
        self.enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(stage.name()),
            timestamp_writes: self.timer.writes(stage.name(), true, true),
        })
    }

    /// A pass of `stage` that writes its begin or end timestamp only (a stage recorded as
    /// two passes with a copy between them).
    pub fn pass_part<S: StageList>(
        &mut self,
        stage: S,
        begin: bool,
        end: bool,
    ) -> wgpu::ComputePass<'_> {
        self.enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(stage.name()),
            timestamp_writes: self.timer.writes(stage.name(), begin, end),
        })
    }

    /// The encoder, for copies and clears between passes.
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.enc
    }

    /// Submits what is recorded so far and goes on in a new encoder (for work that must
    /// reach the GPU before the host writes a buffer the rest of the substep reads).
    pub fn submit(&mut self, next: &'static str) -> wgpu::SubmissionIndex {
        let enc = std::mem::replace(&mut self.enc, new_encoder(self.ctx, next));
        self.ctx.submit(enc.finish())
    }

    pub(in crate::sim) fn finish(self) -> wgpu::SubmissionIndex {
        self.ctx.submit(self.enc.finish())
    }
}

pub(in crate::sim) fn new_encoder(ctx: &GpuContext, label: &'static str) -> wgpu::CommandEncoder {
    ctx.device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
}
