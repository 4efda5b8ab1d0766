//! A simulation's state between two frames: everything that determines the rest of a run
//! and is not in its scene. Captured after a frame and restored into a simulation freshly
//! made from the same scene, it continues the run bit for bit on the same adapter (the
//! checkpoints of `eddy run --checkpoint-every`, the viewer's saved states;
//! src/output/checkpoint.rs is the file format).
//!
//! What carries over: the clock, the frame counter and the largest speed (it sets the next
//! CFL substep); the face velocities and the pressure, which warm-starts the next solve
//! (every other grid field a substep rebuilds before reading it); each body's
//! motion; the liquid's particles (with their APIC matrices) or the smoke's dye and
//! temperature, tracers and trails, and its painted solids. No random numbers are drawn
//! after seeding, so there is no generator state to keep.

use super::Core;
use crate::gpu::{read_buffer, GpuContext};
use crate::scene::SceneKind;
use crate::sim::SimError;

/// Bytes of the push-out's momentum sums a state saves (the head of `push_sums`).
const PUSH_BYTES: u64 = crate::sim::bodies::coupling::PUSH_WORDS * 4;

/// One named part of a state: a GPU buffer's bytes, or host values in little-endian words.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The state of a simulation after frame `frame`.
#[derive(Clone, Debug, PartialEq)]
pub struct SimState {
    pub kind: SceneKind,
    pub frame: u64,
    /// Simulated time, s.
    pub time: f64,
    pub sections: Vec<Section>,
}

impl SimState {
    /// The bytes of section `name`, or an error naming it.
    pub fn get(&self, name: &str) -> Result<&[u8], SimError> {
        self.sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.bytes.as_slice())
            .ok_or_else(|| SimError::Unsupported(format!("the saved state has no {name:?}")))
    }

    /// Total bytes of the sections.
    pub fn bytes(&self) -> usize {
        self.sections.iter().map(|s| s.bytes.len()).sum()
    }

    pub(crate) fn push(&mut self, name: &str, bytes: Vec<u8>) {
        self.sections.push(Section {
            name: name.into(),
            bytes,
        });
    }

    /// Adds the bytes of GPU buffer `buf` as section `name`.
    pub(crate) fn push_buffer(
        &mut self,
        ctx: &GpuContext,
        name: &str,
        buf: &wgpu::Buffer,
    ) -> Result<(), SimError> {
        let words: Vec<u32> = read_buffer(ctx, buf)?;
        self.push(name, bytemuck::cast_slice(&words).to_vec());
        Ok(())
    }

    /// Adds the first `bytes` bytes of GPU buffer `buf` as section `name`.
    pub(crate) fn push_buffer_prefix(
        &mut self,
        ctx: &GpuContext,
        name: &str,
        buf: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<(), SimError> {
        let words: Vec<u32> = read_buffer(ctx, buf)?;
        let all: &[u8] = bytemuck::cast_slice(&words);
        self.push(name, all[..(bytes as usize).min(all.len())].to_vec());
        Ok(())
    }

    /// Writes section `name` back into the start of `buf`, which must hold `bytes` bytes
    /// and the section exactly that many.
    pub(crate) fn restore_buffer_prefix(
        &self,
        ctx: &GpuContext,
        name: &str,
        buf: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<(), SimError> {
        let saved = self.get(name)?;
        if saved.len() as u64 != bytes || bytes > buf.size() {
            return Err(SimError::Unsupported(format!(
                "the saved {name:?} holds {} bytes, {bytes} expected",
                saved.len()
            )));
        }
        ctx.queue.write_buffer(buf, 0, saved);
        Ok(())
    }

    /// Writes section `name` back into `buf`, which must have its size.
    pub(crate) fn restore_buffer(
        &self,
        ctx: &GpuContext,
        name: &str,
        buf: &wgpu::Buffer,
    ) -> Result<(), SimError> {
        let bytes = self.get(name)?;
        if bytes.len() as u64 != buf.size() {
            return Err(SimError::Unsupported(format!(
                "the saved {name:?} holds {} bytes, this simulation's {} (another scene or \
                 resolution?)",
                bytes.len(),
                buf.size()
            )));
        }
        ctx.queue.write_buffer(buf, 0, bytes);
        Ok(())
    }

    /// Section `name` as f64 words.
    pub(crate) fn words(&self, name: &str) -> Result<Vec<f64>, SimError> {
        let bytes = self.get(name)?;
        if !bytes.len().is_multiple_of(8) {
            return Err(SimError::Unsupported(format!(
                "the saved {name:?} is not a list of numbers"
            )));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }

    /// Refuses section `name` when one of its f32 values is not finite: a state that
    /// passed its checksum can still hold one (written so, or by a damaged run), and the
    /// GPU would not say so (a NaN position is clamped into a corner and the run goes on).
    pub(crate) fn check_finite_f32(&self, name: &str) -> Result<(), SimError> {
        let bytes = self.get(name)?;
        let bad = bytes
            .chunks_exact(4)
            .position(|c| !f32::from_le_bytes(c.try_into().unwrap()).is_finite());
        match bad {
            Some(i) => Err(SimError::Unsupported(format!(
                "the saved {name:?} holds a value that is not finite (entry {i}): the state is \
                 damaged"
            ))),
            None => Ok(()),
        }
    }

    /// Refuses section `name` of `vec4<f32>` positions (x, y, z, unused) when one is not
    /// finite or lies outside `[0, size]` on the first `axes` axes, as the scene's own start
    /// and `--check-invariants` require.
    pub(crate) fn check_positions(
        &self,
        name: &str,
        size: [f64; 3],
        axes: usize,
    ) -> Result<(), SimError> {
        let bytes = self.get(name)?;
        for (i, p) in bytes.chunks_exact(16).enumerate() {
            let x: [f32; 4] = bytemuck::pod_read_unaligned(p);
            let inside = |a: usize| x[a].is_finite() && x[a] >= 0.0 && x[a] as f64 <= size[a];
            if !(0..axes).all(inside) || !x[..3].iter().all(|v| v.is_finite()) {
                return Err(SimError::Unsupported(format!(
                    "the saved {name:?} puts entry {i} at {:?}, not finite or outside the \
                     domain [0, {size:?}]: the state is damaged",
                    &x[..3]
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn push_words(&mut self, name: &str, words: &[f64]) {
        self.push(name, words.iter().flat_map(|w| w.to_le_bytes()).collect());
    }
}

impl Core {
    /// The state both modes share: clock, frame, speed, grid fields, pressure, bodies.
    pub(crate) fn capture_core(&self, kind: SceneKind) -> Result<SimState, SimError> {
        let mut s = SimState {
            kind,
            frame: self.frame,
            time: self.time,
            sections: vec![],
        };
        // The clock and the frame are the state's own fields.
        s.push_words(
            "core",
            &[self.max_speed as f64, self.warned_f32_floor as u8 as f64],
        );
        for (name, buf) in self.carried_buffers() {
            s.push_buffer(&self.ctx, name, buf)?;
        }
        // The viscosity's incremental correction reads the last pressure (once it has one).
        if let Some(split) = self.split.as_ref().filter(|s| s.kept) {
            let (name, buf) = split.carried();
            s.push_buffer(&self.ctx, name, buf)?;
        }
        if let Some(b) = &self.bodies {
            s.push_words("bodies", &b.set.state_words());
            // The push-out after the last substep, which the next one takes off the bodies.
            // Its momentum sums only: the counts after them are the push's own scratch.
            if let Some(push) = b.coupling.push_sums() {
                s.push_buffer_prefix(&self.ctx, "bodies.push", push, PUSH_BYTES)?;
            }
        }
        Ok(s)
    }

    /// The grid buffers a substep reads before it writes them: the face velocities (the
    /// smoke's carry over; the liquid's P2G rebuilds them) and the pressure, which
    /// warm-starts the next solve. Every other grid field is rebuilt from these, the
    /// particles, the dye and the bodies (measured: of the grid buffers, only these two
    /// change a resumed run of tests/integration/checkpoint.rs when left out).
    fn carried_buffers(&self) -> [(&'static str, &wgpu::Buffer); 2] {
        [("fields.vel", &self.fields.vel), ("pcg.p", &self.pcg.p)]
    }

    /// Restores what [`Self::capture_core`] saved.
    pub(crate) fn restore_core(&mut self, s: &SimState, kind: SceneKind) -> Result<(), SimError> {
        if s.kind != kind {
            return Err(SimError::Unsupported(format!(
                "the saved state is of a {:?} simulation, this one is {:?}",
                s.kind, kind
            )));
        }
        let core = s.words("core")?;
        if core.len() != 2 || !core[0].is_finite() || core[0] < 0.0 {
            return Err(SimError::Unsupported(
                "the saved core state is malformed".into(),
            ));
        }
        for (name, _) in self.carried_buffers() {
            s.check_finite_f32(name)?;
        }
        if let Ok(words) = s.words("bodies") {
            check_saved_bodies(&words, &self.scene)?;
        }
        for (name, buf) in self.carried_buffers() {
            s.restore_buffer(&self.ctx, name, buf)?;
        }
        // A checkpoint without the last pressure (written before the viscosity's
        // incremental correction, or before its first projection) starts it unshifted.
        if let Some(split) = self.split.as_mut() {
            let name = split.carried().0;
            split.kept = s.get(name).is_ok();
            if split.kept {
                s.check_finite_f32(name)?;
                s.restore_buffer(&self.ctx, name, split.carried().1)?;
            }
        }
        match (&mut self.bodies, s.get("bodies")) {
            (Some(b), Ok(_)) => {
                b.set.restore_words(&s.words("bodies")?)?;
                if let Some(push) = b.coupling.push_sums() {
                    if s.get("bodies.push").is_ok() {
                        s.restore_buffer_prefix(&self.ctx, "bodies.push", push, PUSH_BYTES)?;
                    } else {
                        // A checkpoint from before the push's reaction moved to the GPU
                        // took it off the bodies already.
                        let zeros = vec![0u8; push.size() as usize];
                        self.ctx.queue.write_buffer(push, 0, &zeros);
                    }
                }
            }
            (None, Err(_)) => {}
            (Some(_), Err(e)) => return Err(e),
            (None, Ok(_)) => {
                return Err(SimError::Unsupported(
                    "the saved state has bodies, this simulation none".into(),
                ))
            }
        }
        self.time = s.time;
        self.frame = s.frame;
        self.max_speed = core[0] as f32;
        self.warned_f32_floor = core[1] != 0.0;
        self.substeps_in_frame = 0;
        Ok(())
    }
}

/// Refuses saved body words that are not finite, or a body whose centre is outside the
/// domain by more than a cell (`--check-invariants`' bound); the counts are checked by
/// `BodySet::restore_words`.
fn check_saved_bodies(words: &[f64], scene: &crate::scene::Scene) -> Result<(), SimError> {
    if let Some(i) = words.iter().position(|w| !w.is_finite()) {
        return Err(SimError::Unsupported(format!(
            "the saved bodies hold a value that is not finite (word {i}): the state is damaged"
        )));
    }
    let (d, h) = (scene.domain_size(), scene.h());
    let per = crate::sim::bodies::BODY_WORDS;
    for (k, b) in words.get(1..).unwrap_or(&[]).chunks_exact(per).enumerate() {
        if (0..3).any(|a| b[a] < -h || b[a] > d[a] + h) {
            return Err(SimError::Unsupported(format!(
                "the saved body {k} has its centre at {:?} m, outside the domain [0, {d:?}]: \
                 the state is damaged",
                &b[..3]
            )));
        }
    }
    Ok(())
}
