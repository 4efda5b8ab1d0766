//! The frame pipe: a frame's CFL substeps, recorded ahead on the GPU clock where the mode
//! allows it, their readbacks drained, checked and summed into the frame's stats.

use super::*;

impl<M: Mode> Runner<M> {
    /// The checks a substep's CFL step `cfl` (s, from the host's clock or the GPU's tick)
    /// passes before it counts ([`checked_cfl_dt`]), and its count toward the frame's
    /// capillary-limited substeps ([`Core::count_capillary`]).
    fn checked_cfl(&mut self, frame: u64, substep: u32, cfl: f64) -> Result<f64, SimError> {
        let cfl = checked_cfl_dt(
            frame,
            substep,
            cfl,
            self.core.max_speed,
            self.core.scene.frame_dt,
        )?;
        self.core.count_capillary(cfl);
        Ok(cfl)
    }

    /// The CFL substep, s.
    pub fn cfl_dt(&self) -> f64 {
        self.mode.cfl_dt(&self.core)
    }

    pub fn dims(&self) -> [u32; 3] {
        self.core.fields.params.n
    }

    /// Starts a frame of `dt` seconds: a body held by the user moves with the mouse's
    /// displacement since the last frame began. [`Self::step_frame`] calls it; a caller
    /// stepping substep by substep calls it before each.
    pub fn begin_frame(&mut self, dt: f64) {
        if let Some(b) = self.core.bodies.as_mut() {
            b.set.begin_frame(dt);
        }
    }

    /// Advances one frame (`frame_dt`) in CFL substeps.
    /// Stops with an error naming the frame and the quantity as soon as a substep's
    /// measurements turn NaN or infinite, or the CFL substep collapses below its floor.
    ///
    /// Where the mode's CFL step depends on the largest speed alone ([`Mode::gpu_clock`];
    /// no bodies, inflow, moving meshes or refinement), a frame's later substeps
    /// take their length on the GPU ([`super::clock`]) and leave their counters to come
    /// back with the next substep's solve. A pipelined frame ([`Self::pipelines`]) goes
    /// further: the host records as many substeps as it expects the frame to need
    /// ([`Self::substeps_ahead`]) without reading anything, and the GPU's clock gates those
    /// past the frame's end
    /// ([`crate::gpu::gate`]); the frame's slots then come back in one read, and a frame
    /// that needed more records more. A substep's checks then run as its slot returns;
    /// they stop the run all the same, naming the substep that broke.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let frame_dt = self.core.scene.frame_dt;
        let frame = self.core.frame + 1;
        let mut remaining = frame_dt;
        let mut acc = FrameAccount::default();
        self.core.last_timing = StageTiming::default();
        self.core.substeps_in_frame = 0;
        self.core.capillary_in_frame = 0;
        self.pending = None;
        self.pipe.clear();
        self.begin_frame(frame_dt);
        let t0 = self.core.time;
        if let Some(p) = self.core.probes.as_mut() {
            p.begin_frame(&self.core.ctx);
        }
        let clock = self.gpu_clock();
        let pipe = clock.is_some() && self.pipelines();
        let max_substeps = self.core.scene.max_substeps;
        let mut started = 0u32;
        // A pipelined frame on the GPU clock records its substeps ahead up to `until`.
        let mut until = 0u32;
        let mut short = false;
        let skipped_before = self.core.skipped_substeps;
        // Relative to the frame, so a frame of any valid length ends after whole substeps.
        while remaining > frame_dt * 1e-9 {
            let force_rest = started + 1 >= max_substeps;
            let host_dt = match clock {
                Some(terms) if started > 0 => {
                    if started == 1 {
                        // What is left of the frame is the GPU's from here on.
                        self.core.clock.start_frame(
                            &self.core.ctx.queue,
                            terms,
                            remaining,
                            started,
                            max_substeps,
                        );
                    }
                    None
                }
                _ => {
                    let cfl = self.checked_cfl(frame, started + 1, self.cfl_dt())?;
                    let dt = clock::substep_length(cfl, remaining, force_rest);
                    if force_rest {
                        warn_max_substeps(frame, max_substeps, remaining, cfl);
                    }
                    // The frame's last substep (the loop's own test, after `remaining -= dt`).
                    self.core.frame_end = remaining - dt <= frame_dt * 1e-9;
                    Some(dt)
                }
            };
            let defer = clock.is_some();
            let run = self.run_substep(host_dt, M::Stage::last(), defer, remaining, pipe);
            self.core.frame_end = false;
            let ran = run?;
            started += 1;
            if pipe && host_dt.is_none() {
                // Recorded ahead: its tick comes back with the frame's slots.
                if until == 0 {
                    until = self.substeps_ahead(remaining, ran.dt, started);
                }
                if started < until.min(max_substeps) {
                    continue;
                }
                self.record_frame_end_readback();
                let (reports, ended) = self.drain_pipe(frame, &mut remaining)?;
                for report in reports {
                    self.account(frame, report, &mut acc)?;
                }
                if !ended {
                    // The frame needs more substeps than were recorded ahead.
                    short = true;
                    let dt = (self.core.fields.params.dt as f64).max(1e-12);
                    let more = (remaining / dt).ceil().clamp(1.0, max_substeps as f64);
                    until = started.saturating_add(more as u32);
                }
                continue;
            }
            for report in ran.earlier.into_iter().chain(ran.this) {
                self.account(frame, report, &mut acc)?;
            }
            match ran.tick {
                // The GPU's clock: the checks the host makes before a substep of its own.
                Some(tick) => {
                    self.checked_cfl(frame, started, tick.cfl as f64)?;
                    if force_rest {
                        warn_max_substeps(frame, max_substeps, remaining, tick.cfl as f64);
                    }
                    remaining = if tick.last { 0.0 } else { remaining - ran.dt };
                }
                None => remaining -= ran.dt,
            }
        }
        let (reports, _) = self.drain_pipe(frame, &mut remaining)?;
        for report in reports {
            self.account(frame, report, &mut acc)?;
        }
        if let Some(b) = self.core.bodies.as_mut() {
            b.settle_push(&self.core.ctx)?;
        }
        self.core.frame += 1;
        let substeps = self.core.substeps_in_frame;
        if until > 0 {
            // A frame that needed more than was recorded widens the next one's margin; one
            // that recorded substeps for nothing narrows it.
            let margin = self.core.ahead.1;
            let margin = if short {
                (margin + 1).min(2)
            } else if self.core.skipped_substeps > skipped_before {
                margin.saturating_sub(1)
            } else {
                margin
            };
            self.core.ahead = (substeps, margin);
        }
        let mut stats = self.frame_stats(frame, substeps, acc)?;
        if let Some(p) = &self.core.probes {
            stats.probes = p.read_frame(&self.core.ctx, substeps, t0, self.core.time)?;
        }
        Ok(stats)
    }

    /// The frame's stats.csv row from its last substep's report and its sums; the mode adds
    /// its columns, and a kinetic energy that is not finite stops the run.
    pub(super) fn frame_stats(
        &mut self,
        frame: u64,
        substeps: u32,
        acc: FrameAccount<M::Substep>,
    ) -> Result<FrameStats, SimError> {
        let last = acc.last;
        let (kinetic_energy, volume, columns) = self
            .mode
            .frame_columns(&self.core, &last, &acc.all, substeps)?;
        ensure_finite(frame, substeps, "the kinetic energy", kinetic_energy)?;
        let (pcg_iterations, pcg_residual, pcg_true_residual) =
            last.solve.as_ref().map_or((0, 0.0, 0.0), |s| {
                (
                    s.iterations,
                    s.residual,
                    s.true_residual.unwrap_or(s.residual),
                )
            });
        Ok(FrameStats {
            frame: self.core.frame,
            time_s: self.core.time,
            substeps,
            particles: self.mode.particles(),
            fluid_cells: last.fluid_cells,
            pcg_iterations,
            pcg_residual,
            pcg_true_residual,
            max_divergence: last.max_divergence as f64,
            kinetic_energy,
            max_speed: last.max_speed as f64,
            volume,
            front_x: last.front_x as f64,
            pcg_iterations_total: acc.iterations,
            pcg_max_residual: acc.worst_residual,
            unconverged_solves: acc.unconverged,
            columns,
            capillary_substeps: self
                .core
                .capillary_limit()
                .map(|_| self.core.capillary_in_frame),
            probes: Vec::new(),
        })
    }

    /// Whether this frame's substeps may be pipelined (on the GPU clock): the scene asks
    /// for it, a solve has run (its count is the guess) and no stage reads while the host
    /// records it.
    pub(super) fn pipelines(&self) -> bool {
        self.core.solves_unread() && !self.mode.reads_while_recording(&self.core)
    }

    /// Makes the next pipelined frame on the GPU clock record at least `n` substeps before
    /// it reads its slots (tests: substeps recorded past a frame's end must change nothing).
    pub fn record_ahead_at_least(&mut self, n: u32) {
        self.core.ahead.0 = self.core.ahead.0.max(n);
    }

    /// How many substeps (`started` so far, the last recorded ahead) a pipelined frame on
    /// the GPU clock records before it reads its slots: the last such frame's count plus a
    /// margin (wider after a frame that needed more, narrower after one that recorded
    /// substeps for nothing), and at least what the frame's first substep length `dt`
    /// suggests for the `remaining` seconds.
    pub(super) fn substeps_ahead(&self, remaining: f64, dt: f64, started: u32) -> u32 {
        let (last, margin) = self.core.ahead;
        let more = (remaining / dt.max(1e-12)).ceil().min(1e6) as u32;
        let from_dt = (started - 1).saturating_add(more);
        last.saturating_add(margin).max(from_dt).max(started)
    }

    /// Before a read of the slots of substeps recorded ahead: the mode's per-frame sums
    /// ([`Mode::readback`]) join the last recorded slot. The substeps after the frame's
    /// last did not run, so the sums are the last one's ([`Self::drain_pipe`] moves them).
    pub(super) fn record_frame_end_readback(&mut self) {
        self.core.frame_end = true;
        let layout = self.core.readback_layout();
        let i = self.pipe.len() - 1;
        if let Some(buf) = self.mode.readback(&self.core) {
            let mut enc = new_encoder(&self.core.ctx, "Runner::frame_end");
            self.core.slots[i]
                .counters
                .copy_at(&mut enc, buf, layout.extra_at, buf.size());
            self.core.ctx.submit(enc.finish());
            self.pipe[i].0.extra_bytes = Some(buf.size());
        }
        self.core.frame_end = false;
    }

    /// Reads a pipelined frame's slots in one wait and completes its substeps in order
    /// (nothing without a pipelined frame). A substep recorded ahead takes its length from
    /// its tick, with the host's checks, and `remaining` goes down by it; one that did not
    /// run is dropped. Also says whether the frame has ended: a tick said so, or no
    /// substep was recorded ahead.
    pub(super) fn drain_pipe(
        &mut self,
        frame: u64,
        remaining: &mut f64,
    ) -> Result<Drained<M::Substep>, SimError> {
        if self.pipe.is_empty() {
            return Ok((Vec::new(), true));
        }
        let entries = std::mem::take(&mut self.pipe);
        // Each slot's counters and solve, then what the mode's host work queued in it.
        let mut readers: Vec<&BufferReader> = Vec::new();
        let mut starts = Vec::with_capacity(entries.len() + 1);
        for (slot, (_, host)) in self.core.slots.iter().zip(&entries) {
            starts.push(readers.len());
            readers.extend([&slot.counters, &slot.solve]);
            readers.extend(self.mode.host_readers(host));
        }
        starts.push(readers.len());
        let mut words = BufferReader::read_all(&self.core.ctx, &readers)?;
        let layout = self.core.readback_layout();
        let max_substeps = self.core.scene.max_substeps;
        let extra_of_last = entries.last().and_then(|(p, _)| p.extra_bytes);
        let mut ended = !entries.iter().any(|(p, _)| p.ticked);
        let mut skipped = 0u32;
        let mut reports = Vec::with_capacity(entries.len());
        let n = entries.len();
        for (i, (mut p, mut host)) in entries.into_iter().enumerate() {
            let at = starts[i];
            if p.ticked {
                let t = Tick::from_words(&words[at][layout.clock_at as usize / 4..]);
                if !t.ran {
                    skipped += 1;
                    continue;
                }
                // The checks the host makes before a substep of its own.
                self.checked_cfl(frame, t.started, t.cfl as f64)?;
                if t.started >= max_substeps {
                    warn_max_substeps(frame, max_substeps, *remaining, t.cfl as f64);
                }
                // The frame's last substep ends exactly on the frame.
                p.dt = if t.last { *remaining } else { t.dt as f64 };
                *remaining = if t.last { 0.0 } else { *remaining - p.dt };
                self.core.fields.params.dt = t.dt;
                if t.last && i + 1 < n {
                    if let Some(bytes) = extra_of_last {
                        let r =
                            layout.extra_at as usize / 4..(layout.extra_at + bytes) as usize / 4;
                        let last = words[starts[n - 1]][r.clone()].to_vec();
                        words[at][r].copy_from_slice(&last);
                        p.extra_bytes = Some(bytes);
                    }
                }
                ended |= t.last;
            }
            if let Some(queued) = p.queued {
                let substep = self.core.substeps_in_frame + 1;
                p.solve = Some(self.core.unread_solve(queued, &words[at + 1], substep));
            }
            self.mode
                .finish_host(&self.core, &mut host, &words[at + 2..starts[i + 1]]);
            reports.push(self.complete(p, M::Stage::last(), &words[at], host)?);
        }
        if skipped > 0 {
            self.core.skipped_substeps += skipped as u64;
            self.mode.skipped_substeps(skipped);
        }
        let hardest = reports
            .iter()
            .filter_map(|r| r.solve.as_ref())
            .map(|s| s.iterations);
        if let Some(n) = hardest.max() {
            self.core.pressure.guess_at_least(n);
        }
        Ok((reports, ended))
    }

    /// The GPU clock's rule when this run may use it ([`Self::step_frame`]).
    pub(super) fn gpu_clock(&self) -> Option<CflTerms> {
        let core = &self.core;
        let host_work =
            !core.gpu_clock_enabled || core.bodies.is_some() || core.scene.pressure.refine > 0.0;
        if host_work {
            return None;
        }
        self.mode.gpu_clock(core)
    }

    /// A full substep's checks and its share of the frame's stats.
    pub(super) fn account(
        &mut self,
        frame: u64,
        report: SubstepReport<M::Substep>,
        acc: &mut FrameAccount<M::Substep>,
    ) -> Result<(), SimError> {
        self.core.last_timing.merge(&report.timing);
        let substep = report.substep;
        let mut finite =
            |quantity: &'static str, value: f64| ensure_finite(frame, substep, quantity, value);
        finite(M::SPEED, report.max_speed as f64)?;
        finite(
            "the largest divergence after projection",
            report.max_divergence as f64,
        )?;
        self.mode.check_finite(&report.extra, &mut finite)?;
        if let Some(solve) = &report.solve {
            finite("the pressure residual", solve.residual)?;
            let tolerance = self.core.scene.pressure.tolerance;
            if let Some(floor) = solve.f32_floor.filter(|f| *f > tolerance) {
                if !self.core.warned_f32_floor {
                    self.core.warned_f32_floor = true;
                    log::warn!(
                        "frame {frame}: the pressure tolerance {tolerance:e} lies below what \
                         f32 can reach on this system (about {floor:.1e} of max|b|): the \
                         true residual stops near that floor whatever the iterations \
                         (stats.csv: pcg_true_residual)"
                    );
                }
            }
            acc.iterations += solve.iterations;
            acc.worst_residual = acc.worst_residual.max(solve.residual);
            if solve.status != pressure::SolveStatus::Converged
                && solve.residual > self.core.scene.pressure.tolerance
            {
                acc.unconverged += 1;
            }
        }
        acc.all.push(report.extra.clone());
        acc.last = report;
        Ok(())
    }
}

/// Warns when the frame's last allowed substep takes the rest of the frame, longer than its
/// CFL step `cfl` allows.
fn warn_max_substeps(frame: u64, max_substeps: u32, remaining: f64, cfl: f64) {
    if clock::substep_length(cfl, remaining, false) >= remaining {
        return;
    }
    log::warn!(
        "frame {frame}: max_substeps {max_substeps} reached; last substep {remaining:.3e} s \
         exceeds the CFL limit {cfl:.3e} s"
    );
}
