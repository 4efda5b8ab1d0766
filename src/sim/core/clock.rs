//! The substep's clock on the GPU (clock.wgsl): the next substep's length, computed from the
//! largest speed the last substep measured, before the counters are cleared. With it a
//! frame's later substeps need no read between them: the host learns each one's length with
//! that substep's solve, and the last substep's counters with the next one's
//! ([`super::runner::Runner::step_frame`]). A frame's first substep keeps the host's clock.

use super::fields::GridFields;
use super::params::SimParams;
use crate::gpu::constants::{CLOCK_CFL, CLOCK_DT, CLOCK_LAST, CLOCK_WORDS};
use crate::gpu::{storage_buffer, uniform_buffer, Kernel};
use bytemuck::{Pod, Zeroable};

crate::kernel_entries!(
    /// The entry points of clock.wgsl.
    ClockEntries { next_dt }
);

/// Mirror of `ClockParams` in clock.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ClockParams {
    pub cfl_h: f32,
    pub accel: f32,
    pub remaining: f32,
    pub force_rest: u32,
}
crate::wgsl_mirror!(clock_params_layout: ClockParams = "clock.wgsl" ClockParams {
    cfl_h: cfl_h,
    accel: accel,
    remaining: remaining,
    force_rest: force_rest,
});

/// The CFL rule of a mode whose substep depends on nothing but the largest speed:
/// dt = cfl_h / max(speed + accel, 1e-9).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CflTerms {
    /// The CFL number times the cell size, m.
    pub cfl_h: f64,
    /// The speed the mode adds to the largest measured (the liquid's sqrt(h |g|)), m/s.
    pub accel: f64,
}

impl CflTerms {
    /// The CFL step at `speed` (m/s), s.
    pub fn dt(&self, speed: f64) -> f64 {
        self.cfl_h / (speed + self.accel).max(1e-9)
    }
}

/// The host's rule for a substep's length (clock.wgsl takes it in f32): the CFL step `cfl`,
/// at most the `remaining` seconds of the frame; a sliver of less than a tenth of the step
/// left over joins it (stretching it by 10% keeps the CFL near its target), and with
/// `force_rest` (the frame's max_substeps reached) the substep takes the rest.
pub fn substep_length(cfl: f64, remaining: f64, force_rest: bool) -> f64 {
    let dt = cfl.min(remaining);
    if remaining - dt < 0.1 * dt || force_rest {
        remaining
    } else {
        dt
    }
}

/// What the GPU's clock chose for a substep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// The substep's length, s.
    pub dt: f32,
    /// The CFL step before the frame's end cut it, s.
    pub cfl: f32,
    /// Whether the substep ends its frame.
    pub last: bool,
}

impl Tick {
    /// The tick in the clock buffer's words.
    pub fn from_words(w: &[u32]) -> Self {
        Self {
            dt: f32::from_bits(w[CLOCK_DT]),
            cfl: f32::from_bits(w[CLOCK_CFL]),
            last: w[CLOCK_LAST] != 0,
        }
    }
}

/// Bytes of the clock buffer.
pub const CLOCK_BYTES: u64 = CLOCK_WORDS as u64 * 4;

pub struct Clock {
    kernel: Kernel,
    e: ClockEntries,
    group: wgpu::BindGroup,
    params: wgpu::Buffer,
    /// The tick's words (`CLOCK_*` of `crate::gpu::constants`).
    pub out: wgpu::Buffer,
}

impl Clock {
    pub fn new(device: &wgpu::Device, f: &GridFields) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("clock.wgsl"), "Clock");
        let params = uniform_buffer(
            device,
            "Clock::params",
            bytemuck::bytes_of(&ClockParams::default()),
        );
        let out = storage_buffer(device, "Clock::out", CLOCK_BYTES);
        let group = kernel.bind(
            device,
            &[
                ("clock_in", &params),
                ("counters", &f.counters),
                ("clock", &out),
            ],
        );
        Self {
            e: ClockEntries::of(&kernel),
            kernel,
            group,
            params,
            out,
        }
    }

    /// Sets the rule for the next [`Self::record`]: `remaining` seconds of the frame are
    /// left, and with `force_rest` the substep takes them all (max_substeps reached).
    pub fn write(&self, queue: &wgpu::Queue, terms: CflTerms, remaining: f64, force_rest: bool) {
        let p = ClockParams {
            cfl_h: terms.cfl_h as f32,
            accel: terms.accel as f32,
            remaining: remaining as f32,
            force_rest: force_rest as u32,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    /// Records the tick from the counters the last substep left (before anything clears
    /// them) and its copy into `SimParams::dt`, which every kernel after it reads.
    pub fn record(&self, enc: &mut wgpu::CommandEncoder, f: &GridFields) {
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("clock"),
                timestamp_writes: None,
            });
            self.kernel
                .dispatch_groups(&mut pass, self.e.next_dt, &self.group, &[], 1);
        }
        let at = std::mem::offset_of!(SimParams, dt) as u64;
        enc.copy_buffer_to_buffer(&self.out, CLOCK_DT as u64 * 4, &f.params_buffer, at, 4);
    }
}
