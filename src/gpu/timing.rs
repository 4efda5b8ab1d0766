//! GPU time per stage from timestamp queries.
//!
//! Each stage owns two query slots (begin, end). A stage may span several passes and even
//! several submits (the PCG loop): its begin is written by its first pass and its end by
//! its last. When the adapter has no timestamp support the timer is inert and callers fall
//! back to wall-clock time.

use super::{read_buffer, GpuContext, GpuError};

pub struct PassTimer {
    query_set: Option<wgpu::QuerySet>,
    resolve: Option<wgpu::Buffer>,
    names: Vec<&'static str>,
    /// The stage each slot's time is reported under (its own name, or the stage a part
    /// belongs to: see [`PassTimer::with_parts`]).
    report_as: Vec<&'static str>,
    period_ns: f64,
}

/// Milliseconds per named stage, accumulated over the substeps of a frame or a benchmark.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageTiming {
    pub stages: Vec<(String, f64)>,
}

impl StageTiming {
    pub fn add(&mut self, name: &str, ms: f64) {
        match self.stages.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => *t += ms,
            None => self.stages.push((name.to_string(), ms)),
        }
    }

    pub fn get(&self, name: &str) -> f64 {
        self.stages
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .unwrap_or(0.0)
    }

    pub fn total(&self) -> f64 {
        self.stages.iter().map(|(_, t)| t).sum()
    }

    pub fn merge(&mut self, other: &StageTiming) {
        for (n, t) in &other.stages {
            self.add(n, *t);
        }
    }
}

impl PassTimer {
    pub fn new(ctx: &GpuContext, names: &[&'static str]) -> Self {
        Self::with_parts(ctx, names, &[])
    }

    /// A timer with extra slots `(slot, stage)` whose time adds to `stage`'s: a stage timed
    /// in parts leaves out the GPU's idle time between them.
    pub fn with_parts(
        ctx: &GpuContext,
        names: &[&'static str],
        parts: &[(&'static str, &'static str)],
    ) -> Self {
        let mut report_as = names.to_vec();
        report_as.extend(parts.iter().map(|p| p.1));
        let mut names = names.to_vec();
        names.extend(parts.iter().map(|p| p.0));
        let count = (names.len() * 2) as u32;
        let (query_set, resolve) = if ctx.timestamps {
            let qs = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("PassTimer::queries"),
                ty: wgpu::QueryType::Timestamp,
                count,
            });
            let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("PassTimer::resolve"),
                size: count as u64 * 8,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (Some(qs), Some(buf))
        } else {
            (None, None)
        };
        Self {
            query_set,
            resolve,
            names,
            report_as,
            period_ns: ctx.queue.get_timestamp_period() as f64,
        }
    }

    pub fn enabled(&self) -> bool {
        self.query_set.is_some()
    }

    fn slot(&self, stage: &str) -> u32 {
        self.names
            .iter()
            .position(|n| *n == stage)
            .unwrap_or_else(|| panic!("stage {stage} not registered with the timer")) as u32
    }

    /// Timestamp writes for a pass that begins and/or ends `stage`.
    pub fn writes(
        &self,
        stage: &str,
        begin: bool,
        end: bool,
    ) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let qs = self.query_set.as_ref()?;
        let s = self.slot(stage);
        Some(wgpu::ComputePassTimestampWrites {
            query_set: qs,
            beginning_of_pass_write_index: begin.then_some(2 * s),
            end_of_pass_write_index: end.then_some(2 * s + 1),
        })
    }

    /// Records the resolve of all slots; call once after the last timed pass.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if let (Some(qs), Some(buf)) = (&self.query_set, &self.resolve) {
            encoder.resolve_query_set(qs, 0..(self.names.len() * 2) as u32, buf, 0);
        }
    }

    /// The buffer the timestamps are resolved into and its size in bytes (None without
    /// timestamp support), for a caller that copies it into its own readback.
    pub fn resolved(&self) -> Option<(&wgpu::Buffer, u64)> {
        self.resolve.as_ref().map(|b| (b, b.size()))
    }

    /// Adds each stage's duration to `into` from resolved timestamps read back by the
    /// caller (the words of [`Self::resolved`], little-endian u32 pairs).
    pub fn add_words(&self, words: &[u32], into: &mut StageTiming) {
        let tick = |i: usize| words[2 * i] as u64 | (words[2 * i + 1] as u64) << 32;
        for (i, name) in self.report_as.iter().enumerate() {
            if 2 * (2 * i + 1) + 1 >= words.len() {
                break;
            }
            let (b, e) = (tick(2 * i), tick(2 * i + 1));
            if e > b {
                into.add(name, (e - b) as f64 * self.period_ns * 1e-6);
            }
        }
    }

    /// Reads the resolved timestamps and adds each stage's duration to `into`.
    pub fn read_into(&self, ctx: &GpuContext, into: &mut StageTiming) -> Result<(), GpuError> {
        let Some(buf) = &self.resolve else {
            return Ok(());
        };
        let words: Vec<u32> = read_buffer(ctx, buf)?;
        self.add_words(&words, into);
        Ok(())
    }
}
