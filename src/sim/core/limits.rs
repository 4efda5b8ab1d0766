//! What the adapter can hold: a scene's memory estimate is refused before anything is
//! allocated when its largest buffer is past the adapter's binding limit.

use crate::gpu::GpuContext;
use crate::sim::SimError;

/// Bytes of GPU memory a scene needs, and its largest single buffer.
#[derive(Clone, Copy, Debug)]
pub struct MemoryEstimate {
    pub total: u64,
    pub largest_buffer: u64,
    pub largest_name: &'static str,
    /// What to reduce when the largest buffer does not fit.
    pub largest_hint: &'static str,
}

/// The largest buffer any binding may hold on this adapter.
pub fn buffer_limit(ctx: &GpuContext) -> u64 {
    ctx.limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size)
}

/// Refuses an estimate whose largest buffer the adapter cannot hold.
pub fn check_estimate(ctx: &GpuContext, est: MemoryEstimate) -> Result<MemoryEstimate, SimError> {
    check_buffer(ctx, est.largest_buffer, est.largest_name, est.largest_hint)?;
    Ok(est)
}

/// Refuses a buffer of `bytes` the adapter cannot bind, naming it (`what`) and what to
/// change (`hint`).
pub fn check_buffer(
    ctx: &GpuContext,
    bytes: u64,
    what: &'static str,
    hint: &'static str,
) -> Result<(), SimError> {
    let limit = buffer_limit(ctx);
    if bytes > limit {
        return Err(SimError::TooLarge {
            what,
            bytes,
            limit,
            adapter: ctx.info.name.clone(),
            hint,
        });
    }
    Ok(())
}
