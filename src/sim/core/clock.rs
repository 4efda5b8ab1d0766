//! The substep's clock on the GPU (clock.wgsl): the next substep's length, computed from the
//! largest speed the last substep measured, before the counters are cleared. With it a
//! frame's later substeps need no read between them. A frame's first substep keeps the
//! host's clock; [`Clock::start_frame`] then hands the GPU what is left of the frame, and
//! the clock keeps it, exactly, as a fixed-point count ([`to_fixed`]). Once a substep has
//! ended the frame, the substeps recorded after it do not run: the clock's `CLOCK_RUN`
//! word gates their dispatches ([`crate::gpu::gate`]), so the host may record a frame's
//! substeps without knowing how many it needs ([`super::runner::Runner::step_frame`]).

use super::fields::GridFields;
use super::params::SimParams;
use crate::gpu::constants::{
    CLOCK_CFL, CLOCK_DONE, CLOCK_DT, CLOCK_LAST, CLOCK_REST_HI, CLOCK_REST_LO, CLOCK_REST_SHIFT,
    CLOCK_RUN, CLOCK_STARTED, CLOCK_WORDS,
};
use crate::gpu::{storage_buffer, uniform_buffer, Gate, Kernel};
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;

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
    pub max_substeps: u32,
    /// The longest substep whatever the speed (surface tension's capillary limit), s; 0
    /// for none.
    pub cap: f32,
}
crate::wgsl_mirror!(clock_params_layout: ClockParams = "clock.wgsl" ClockParams {
    cfl_h: cfl_h,
    accel: accel,
    max_substeps: max_substeps,
    cap: cap,
});

/// The CFL rule of a mode whose substep depends on nothing but the largest speed:
/// dt = cfl_h / max(speed + accel, 1e-9), at most `cap`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CflTerms {
    /// The CFL number times the cell size, m.
    pub cfl_h: f64,
    /// The speed the mode adds to the largest measured (the liquid's sqrt(h |g|)), m/s.
    pub accel: f64,
    /// The longest substep whatever the speed (the capillary limit,
    /// [`crate::sim::core::tension::capillary_dt`]), s; None for none.
    pub cap: Option<f64>,
}

impl CflTerms {
    /// The CFL step at `speed` (m/s), s.
    pub fn dt(&self, speed: f64) -> f64 {
        let dt = self.cfl_h / (speed + self.accel).max(1e-9);
        self.cap.map_or(dt, |c| dt.min(c))
    }
}

/// The host's rule for a substep's length (clock.wgsl takes it in f32): what is left of the
/// frame, `remaining`, split evenly into as few substeps as keep each within the CFL step
/// `cfl` (a tenth over it is allowed, so a sliver does not cost a substep of its own):
/// n = ceil(remaining / cfl - 0.1), dt = remaining / n. With `force_rest` (the frame's
/// max_substeps reached) the substep takes the rest.
///
/// Even substeps, not CFL steps and a short remainder: the pressure reads as the
/// momentum a substep removes over its length, and what the last substep's transfer and
/// advection left to correct is corrected over the next. A 2 ms remainder after an 8 ms
/// step read a dam break's pressure on a box 5-8 times higher than the steps around it.
pub fn substep_length(cfl: f64, remaining: f64, force_rest: bool) -> f64 {
    let n = (remaining / cfl - 0.1).ceil();
    if force_rest || n <= 1.0 {
        remaining
    } else {
        remaining / n
    }
}

/// `seconds` (at most 32 s) in the clock's fixed-point units of 2^-59 s, to the nearest;
/// exact for every f32 of 2^-36 s or more, and for an f64 whose last bit is 2^-59 s or more
/// (from about 0.008 s up).
pub fn to_fixed(seconds: f64) -> u64 {
    (seconds * (CLOCK_REST_SHIFT as f64).exp2()).round() as u64
}

/// The nearest f32 (ties to even) to `units` of the clock's fixed point, s.
pub fn from_fixed(units: u64) -> f32 {
    // u64 to f32 rounds to nearest, ties to even; the power of two scales exactly.
    units as f32 * (-(CLOCK_REST_SHIFT as f32)).exp2()
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
    /// Whether the substep ran: false when its frame had ended before it (recorded ahead,
    /// its dispatches were empty).
    pub ran: bool,
    /// What is left of the frame after it, in [`to_fixed`] units (0 once it ends).
    pub rest: u64,
    /// The frame's substeps begun, this one included when it ran.
    pub started: u32,
}

impl Tick {
    /// The tick in the clock buffer's words.
    pub fn from_words(w: &[u32]) -> Self {
        Self {
            dt: f32::from_bits(w[CLOCK_DT]),
            cfl: f32::from_bits(w[CLOCK_CFL]),
            last: w[CLOCK_LAST] != 0,
            ran: w[CLOCK_RUN] != 0,
            rest: w[CLOCK_REST_LO] as u64 | (w[CLOCK_REST_HI] as u64) << 32,
            started: w[CLOCK_STARTED],
        }
    }
}

/// The clock's state words at the start of a frame's clocked substeps: `remaining` seconds
/// left after `started` substeps.
pub fn start_words(remaining: f64, started: u32) -> [u32; CLOCK_WORDS] {
    let rest = to_fixed(remaining);
    let mut w = [0u32; CLOCK_WORDS];
    w[CLOCK_RUN] = 1;
    w[CLOCK_REST_LO] = rest as u32;
    w[CLOCK_REST_HI] = (rest >> 32) as u32;
    w[CLOCK_STARTED] = started;
    w[CLOCK_DONE] = 0;
    w
}

/// The host's mirror of clock.wgsl, in the same f32 operations: the tick that follows
/// `state` (the clock's words) when the last substep measured `speed`.
pub fn next_tick(state: &[u32], p: &ClockParams, speed: f32) -> Tick {
    let t = Tick::from_words(state);
    if state[CLOCK_DONE] != 0 {
        return Tick {
            ran: false,
            last: false,
            ..t
        };
    }
    let mut cfl = p.cfl_h / (speed + p.accel).max(1e-9);
    if p.cap > 0.0 {
        cfl = cfl.min(p.cap);
    }
    let rest = from_fixed(t.rest);
    let started = t.started + 1;
    let n = (rest / cfl - 0.1).ceil();
    let (dt, last) = if started >= p.max_substeps || n <= 1.0 {
        (rest, true)
    } else {
        (rest / n, false)
    };
    let left = if last {
        0
    } else {
        t.rest - to_fixed(dt as f64)
    };
    Tick {
        dt,
        cfl,
        last,
        ran: true,
        rest: left,
        started,
    }
}

/// Bytes of the clock buffer.
pub const CLOCK_BYTES: u64 = CLOCK_WORDS as u64 * 4;

pub struct Clock {
    kernel: Kernel,
    e: ClockEntries,
    group: wgpu::BindGroup,
    params: wgpu::Buffer,
    /// The tick's and the state's words (`CLOCK_*` of `crate::gpu::constants`).
    pub out: wgpu::Buffer,
    /// Gates the substeps recorded ahead on the clock's `CLOCK_RUN`.
    pub gate: Arc<Gate>,
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
        let gate = Gate::new(device, &out);
        Self {
            e: ClockEntries::of(&kernel),
            kernel,
            group,
            params,
            out,
            gate,
        }
    }

    /// Hands the GPU the frame's rest: `remaining` seconds after its first `started`
    /// substeps, with the CFL rule `terms` and the frame's `max_substeps`. Written before
    /// the next [`Self::record`] runs (a queue write lands before the next submission).
    pub fn start_frame(
        &self,
        queue: &wgpu::Queue,
        terms: CflTerms,
        remaining: f64,
        started: u32,
        max_substeps: u32,
    ) {
        let p = ClockParams {
            cfl_h: terms.cfl_h as f32,
            accel: terms.accel as f32,
            max_substeps,
            cap: terms.cap.map_or(0.0, |c| c as f32),
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        let w = start_words(remaining, started);
        queue.write_buffer(&self.out, 0, bytemuck::cast_slice(&w));
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

#[cfg(test)]
mod tests {
    use super::substep_length;

    #[test]
    fn a_frame_splits_into_even_substeps_within_the_cfl_step() {
        // (cfl, frame): the substeps, each at most 1.1 cfl, and as few as that allows.
        for (cfl, frame) in [
            (0.0077, 0.01),
            (0.003, 0.01),
            (0.01, 0.0105),
            (0.004, 0.0165),
        ] {
            let (mut rest, mut lengths) = (frame, Vec::new());
            while rest > frame * 1e-9 {
                let dt = substep_length(cfl, rest, false);
                lengths.push(dt);
                rest -= dt;
            }
            let n = lengths.len();
            assert_eq!(n as f64, (frame / cfl - 0.1).ceil().max(1.0), "{lengths:?}");
            for dt in &lengths {
                assert!(*dt <= 1.1 * cfl + 1e-15, "{lengths:?}");
                assert!((dt - frame / n as f64).abs() < 1e-12 * frame, "{lengths:?}");
            }
        }
        // The frame's last allowed substep takes the rest.
        assert_eq!(substep_length(0.001, 0.01, true), 0.01);
    }
}
