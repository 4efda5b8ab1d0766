//! One substep: its stages recorded in order, the pressure solve, its readback completed
//! and checked; and what the views and the solver lab keep of it.

use super::*;

impl<M: Mode> Runner<M> {
    /// One substep of `dt` seconds, running the stages up to and including `last` (the
    /// viewer stops early to inspect intermediate fields; a full substep runs them all).
    pub fn substep(
        &mut self,
        dt: f64,
        last: M::Stage,
    ) -> Result<SubstepReport<M::Substep>, SimError> {
        self.pending = None;
        self.pipe.clear();
        let ran = self.run_substep(Some(dt), last, false, dt, false)?;
        ran.this
            .ok_or_else(|| SimError::Unsupported("a substep left its counters unread".into()))
    }

    /// One substep: of `dt` seconds, or (None) of the length the GPU's clock takes from the
    /// last substep's counters, with `remaining` seconds of the frame left. The counters of
    /// a substep left pending come back with this one's solve (`earlier`); with `defer`, a
    /// full substep that does not end its frame leaves its own pending too (`this` None).
    /// With `pipe` (a full substep of a pipelined frame) nothing is read: the solve is
    /// queued ahead ([`PressureSolver::queue_ahead`]) and the readbacks go to the substep's
    /// slot. On the clock such a substep is recorded ahead: its tick joins its slot, and
    /// everything after the clock is gated on it ([`crate::gpu::gate`]), so it runs only if
    /// its frame has not ended.
    pub(super) fn run_substep(
        &mut self,
        dt: Option<f64>,
        last: M::Stage,
        defer: bool,
        remaining: f64,
        pipe: bool,
    ) -> Result<Ran<M::Substep>, SimError> {
        let on_clock = dt.is_none();
        let slot = pipe.then_some(self.pipe.len());
        let ahead = on_clock && pipe;
        let dt = self.prepare_substep(dt, slot)?;
        let plan = SolvePlan {
            slot,
            on_clock,
            defer,
            remaining,
            layout: self.core.readback_layout(),
        };
        let (ctx, timer) = (self.core.ctx.clone(), self.core.timer.clone());
        let mut rec = Recorder::new(&ctx, &timer, "Runner::substep");
        let mut gate = None;
        if on_clock {
            // The clock reads the counters the last substep left, so it runs first.
            self.core.clock.record(rec.encoder(), &self.core.fields);
            if ahead {
                // The gate's prologue reads the tick: it goes to the GPU first, ungated.
                rec.submit("Runner::substep");
                gate = Some(self.core.clock.gate.enter());
            } else {
                self.core.counters_reader.copy_at(
                    rec.encoder(),
                    &self.core.clock.out,
                    plan.layout.clock_at,
                    CLOCK_BYTES,
                );
            }
        }
        rec.encoder()
            .clear_buffer(&self.core.fields.counters, 0, None);
        if let Some(b) = &self.core.bodies {
            b.record_push_reaction(rec.encoder());
        }
        let mut g = Gathered {
            dt,
            queued: None,
            solve: None,
            body_forces: false,
            earlier_words: None,
            tick: None,
        };
        let mut counting = None;
        for &stage in M::Stage::ALL.iter().filter(|&&s| s <= last) {
            count_dispatches(&mut self.core.dispatches_by_stage, counting.take());
            counting = Some((stage.name(), Traffic::now().dispatches));
            // The liquid's stages after the projection (and before the next solve) reuse
            // the room of b, r, z, d, q and t.
            self.core.solver_vectors_live = !self.core.pcg.shared()
                || matches!(
                    stage.shared(),
                    Some(SharedStage::Pressure | SharedStage::Project)
                );
            match stage.shared() {
                None => self.mode.record(stage, &mut rec, &self.core)?,
                Some(SharedStage::Boundary) => {
                    let mut pass = rec.pass(stage);
                    self.core.boundary.record(&mut pass, &self.core.fields);
                }
                Some(SharedStage::Pressure) => {
                    self.record_pressure(&mut rec, stage, &plan, &mut g)?;
                }
                Some(SharedStage::Project) => {
                    self.record_project(&mut rec, stage);
                    g.body_forces = true;
                }
            }
        }
        count_dispatches(&mut self.core.dispatches_by_stage, counting.take());
        if let Some(s) = self.core.split.as_mut() {
            s.end_substep();
        }
        // Only a full substep is left pending, and only by `step_frame`, whose next substep
        // is full too: its solve brought the pending counters back.
        debug_assert!(self.pending.is_none() || g.earlier_words.is_some());
        self.mode.record_end(&mut rec, &self.core);
        let full = last == M::Stage::last();
        if let (true, Some(p)) = (full, &self.core.probes) {
            p.record(rec.encoder());
        }
        self.core.timer.resolve(rec.encoder());
        let (timed, extra_bytes) = self.copy_readbacks(&mut rec, &plan, full, g.body_forces, ahead);
        rec.finish();
        drop(gate);
        if full {
            self.mode.end_full_substep();
        }
        let host = self.mode.take_host();
        let earlier = match (self.pending.take(), g.earlier_words) {
            (Some((p, h)), Some(words)) => Some(self.complete(p, M::Stage::last(), &words, h)?),
            _ => None,
        };
        let now = Pending {
            dt: g.dt,
            solve: g.solve,
            queued: g.queued,
            timed,
            body_forces: g.body_forces,
            extra_bytes,
            ticked: ahead,
        };
        let this = if pipe {
            self.pipe.push((now, host));
            None
        } else if defer && full && !self.core.frame_end {
            self.pending = Some((now, host));
            None
        } else {
            let mut now = now;
            let solve = now.queued.map(|_| &self.core.solve_reader);
            let (words, solve_words) =
                self.core.counters_reader.read_with(&self.core.ctx, solve)?;
            if let (Some(queued), Some(w)) = (now.queued, solve_words) {
                let substep = self.core.substeps_in_frame + 1;
                now.solve = Some(self.core.unread_solve(queued, &w, substep));
            }
            Some(self.complete(now, last, &words, host)?)
        };
        Ok(Ran {
            earlier,
            this,
            dt: g.dt,
            tick: g.tick,
        })
    }

    /// Gets a substep ready to record: its slot (in a pipelined frame), its length in the
    /// parameters (on the GPU clock the last one, which the clock overwrites on the GPU
    /// before anything reads it), the mode's and the bodies' host work. Returns the length.
    pub(super) fn prepare_substep(
        &mut self,
        dt: Option<f64>,
        slot: Option<usize>,
    ) -> Result<f64, SimError> {
        if let Some(i) = slot {
            self.core.ensure_slots(i + 1);
        }
        self.core.queue_slot = slot;
        let dt = dt.unwrap_or(self.core.fields.params.dt as f64);
        self.core.fields.params.dt = dt as f32;
        self.mode.begin_substep(&mut self.core, dt);
        if let Some(b) = self.core.bodies.as_mut() {
            b.begin_substep(&self.core.ctx, &self.core.fields, dt)?;
        }
        self.core.ctx.queue.write_buffer(
            &self.core.fields.params_buffer,
            0,
            bytemuck::bytes_of(&self.core.fields.params),
        );
        Ok(dt)
    }

    /// The pressure stage: the bodies' regions, the kept initial guess, the divergence and
    /// the solve's setup, then the solve itself: queued ahead into the substep's slot (or
    /// the solve reader when earlier solves are unread), or iterated here, its read
    /// bringing back what the last substep left pending and, on the clock, this
    /// substep's tick.
    pub(super) fn record_pressure(
        &mut self,
        rec: &mut Recorder<'_>,
        stage: M::Stage,
        plan: &SolvePlan,
        g: &mut Gathered,
    ) -> Result<(), SimError> {
        let f = &self.core.fields;
        if let Some(b) = self.core.bodies.as_mut() {
            b.coupling
                .separate_regions(&self.core.ctx, rec, f, &b.set)?;
            b.coupling.clear_sums(rec.encoder());
        }
        if let Some(copy) = &self.core.guess_copy {
            if self.core.scene.pressure.warm_start {
                let mut pass = rec
                    .encoder()
                    .begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("keep_initial_guess"),
                        timestamp_writes: None,
                    });
                copy.record(&mut pass);
            }
        }
        {
            let kind = self.core.scene.pressure.preconditioner;
            let ready = rec.matrix_ready;
            let mut pass = rec.pass(stage);
            self.core.record_rhs(&mut pass);
            if let Some(b) = &self.core.bodies {
                b.coupling.record_compatible(&mut pass, f);
            }
            let term = self.core.added_term();
            if ready {
                self.core.pressure.record_start(&mut pass, f, kind, term);
            } else {
                self.core.pressure.record_setup(&mut pass, f, kind, term);
            }
        }
        rec.submit("Runner::substep_end");
        let unread = !plan.defer && !plan.on_clock && self.core.solves_unread();
        if plan.slot.is_some() || unread {
            let into = match plan.slot {
                Some(i) => &mut self.core.slots[i].solve,
                None => &mut self.core.solve_reader,
            };
            let timer =
                (self.core.timer.enabled()).then_some((&*self.core.timer, PRESSURE_ITERATIONS));
            let term = self.core.bodies.as_ref().and_then(|b| b.added_term());
            g.queued = Some(self.core.pressure.queue_ahead(
                rec.encoder(),
                &self.core.fields,
                &self.core.pcg,
                &self.core.scene.pressure,
                timer,
                term,
                into,
            ));
            return Ok(());
        }
        // The solve's read brings back what the last substep left pending and this
        // substep's tick.
        let with = (self.pending.is_some() || plan.on_clock).then_some(&self.core.counters_reader);
        let (mut report, words) = iterate(
            &mut self.core.pressure,
            &self.core.ctx,
            &self.core.fields,
            &self.core.pcg,
            &self.core.scene,
            &self.core.timer,
            self.core.bodies.as_ref(),
            with,
        )?;
        if let (true, Some(w)) = (plan.on_clock, &words) {
            let at = plan.layout.clock_at as usize / 4;
            let t = Tick::from_words(&w[at..]);
            // The frame's last substep ends exactly on the frame.
            g.dt = if t.last { plan.remaining } else { t.dt as f64 };
            self.core.fields.params.dt = t.dt;
            self.core.frame_end = t.last;
            g.tick = Some(t);
        }
        g.earlier_words = words.filter(|_| self.pending.is_some());
        self.core.refined = false;
        let target = self.core.scene.pressure.refine;
        if target > 0.0 && self.core.bodies.is_none() {
            let r = Core::refine(
                (
                    &mut self.core.pressure,
                    &mut self.core.project,
                    &mut self.core.p_lo,
                ),
                &self.core.ctx,
                &self.core.fields,
                &self.core.pcg,
                &self.core.scene.pressure,
            )?;
            report.true_residual = Some(r.true_residual);
            self.core.last_refine = Some(r);
            self.core.refined = true;
        }
        g.solve = Some(report);
        Ok(())
    }

    /// The projection stage: the solve's vectors kept (where asked) before the stages
    /// after it reuse their room, the bodies' forces, the projection and the divergence
    /// after it.
    pub(super) fn record_project(&mut self, rec: &mut Recorder<'_>, stage: M::Stage) {
        let f = &self.core.fields;
        self.core.record_keep_vectors(rec.encoder());
        let mut pass = rec.pass(stage);
        // The pressure's force and torque on the bodies; with the strong coupling their
        // cells take the velocities the solve found, and the faces next to them follow.
        if let Some(b) = &self.core.bodies {
            b.strong.record_forces(&mut pass);
        }
        self.core.project.record(&mut pass, f);
        if self.core.refined {
            self.core.project.record_lo(&mut pass, f);
        }
        if let Some(s) = &self.core.split {
            s.record_after_projection(&mut pass, f);
        }
        if self.core.added_term().is_some() {
            self.core.boundary.record(&mut pass, f);
        }
        self.core.divergence.record_after(&mut pass, f);
        drop(pass);
        if let Some(s) = self.core.split.as_mut() {
            s.kept = true;
        }
    }

    /// Copies the end-of-substep readback into the substep's slot (or the counters'
    /// reader): the counters, the stage timestamps of a full substep, the bodies' force
    /// and push-out sums, the mode's own buffer and, ahead on the clock, the tick.
    /// Returns whether the timestamps were copied and the mode's bytes.
    pub(super) fn copy_readbacks(
        &mut self,
        rec: &mut Recorder<'_>,
        plan: &SolvePlan,
        full: bool,
        body_forces: bool,
        ahead: bool,
    ) -> (bool, Option<u64>) {
        let layout = plan.layout;
        let timed = self
            .core
            .timer
            .resolved()
            .filter(|_| full)
            .map(|(b, n)| (b.clone(), n));
        let extra_buf = self.mode.readback(&self.core);
        let extra_bytes = extra_buf.map(|b| b.size());
        let reader = match plan.slot {
            Some(i) => &mut self.core.slots[i].counters,
            None => &mut self.core.counters_reader,
        };
        reader.copy_from(rec.encoder(), &self.core.fields.counters);
        if let Some((buf, n)) = &timed {
            reader.copy_at(rec.encoder(), buf, COUNTERS_BYTES, *n);
        }
        if let Some(b) = self.core.bodies.as_ref().filter(|_| body_forces) {
            reader.copy_at(
                rec.encoder(),
                &b.strong.sums,
                layout.sums_at,
                StrongCoupling::SUMS_BYTES,
            );
            if let Some(push) = b.coupling.push_sums() {
                reader.copy_at(rec.encoder(), push, layout.push_at, PUSH_BYTES);
            }
        }
        if let Some(buf) = extra_buf {
            reader.copy_at(rec.encoder(), buf, layout.extra_at, buf.size());
        }
        if ahead {
            // The tick, still the clock's until the next substep's.
            let out = &self.core.clock.out;
            reader.copy_at(rec.encoder(), out, layout.clock_at, CLOCK_BYTES);
        }
        (timed.is_some(), extra_bytes)
    }

    /// A substep's report from the words of its readback (`layout` of
    /// [`Core::readback_layout`]); after a full substep the clock moves on and the bodies
    /// move.
    pub(super) fn complete(
        &mut self,
        p: Pending,
        last: M::Stage,
        words: &[u32],
        host: M::Host,
    ) -> Result<SubstepReport<M::Substep>, SimError> {
        let layout = self.core.readback_layout();
        if let Some(b) = self.core.bodies.as_mut().filter(|_| p.body_forces) {
            let at = layout.sums_at as usize / 4;
            let n = StrongCoupling::SUMS_BYTES as usize / 4;
            b.strong.keep_sums(bytemuck::cast_slice(&words[at..at + n]));
            if b.coupling.push_sums().is_some() {
                let at = layout.push_at as usize / 4;
                b.keep_push(&words[at..at + PUSH_BYTES as usize / 4]);
            }
        }
        let c = &words[..COUNTERS];
        let mut timing = StageTiming::default();
        if p.timed {
            let t = &words[COUNTERS_BYTES as usize / 4..];
            self.core.timer.add_words(t, &mut timing);
        }
        let extra_words = p.extra_bytes.map_or(&[][..], |n| {
            let at = layout.extra_at as usize / 4;
            &words[at..at + n as usize / 4]
        });
        let extra = self
            .mode
            .read_substep(&self.core, c, extra_words, last, host)?;
        let report = SubstepReport {
            dt: p.dt,
            fluid_cells: c[COUNTER_FLUID_CELLS],
            max_speed: f32::from_bits(c[COUNTER_MAX_SPEED]),
            front_x: f32::from_bits(c[COUNTER_FRONT_X]),
            max_divergence: f32::from_bits(c[COUNTER_MAX_DIVERGENCE]),
            solve: p.solve,
            extra,
            timing,
            substep: self.core.substeps_in_frame + 1,
        };
        self.core.last_substep_timing = report.timing.clone();
        if last == M::Stage::last() {
            self.core.max_speed = report.max_speed;
            self.core.time += p.dt;
            // The bodies move over the substep once the fluid has pushed them.
            self.core.substeps_in_frame += 1;
            let at = (self.core.frame + 1, self.core.substeps_in_frame);
            let max_move = MAX_MOVE_CFL * self.core.scene.cfl.max(1.0) * self.core.scene.h();
            if let Some(b) = self.core.bodies.as_mut() {
                b.finish_substep(&self.core.ctx, p.dt, max_move, at)?;
            }
            self.probe_host_columns();
        }
        if report.solve.is_some() {
            self.core.last_solve = report.solve.clone();
        }
        Ok(report)
    }

    /// Solves the pressure system again on the current grid state, without touching the
    /// velocities (benchmarks time this; the step itself uses `substep`). Expects a
    /// substep to have run at least up to the boundary stage.
    pub fn solve_pressure_again(&mut self) -> Result<SolveReport, SimError> {
        let core = &mut self.core;
        let kind = core.scene.pressure.preconditioner;
        core.write_solver_config();
        let stage = M::Stage::ALL
            .iter()
            .copied()
            .find(|s| s.shared() == Some(SharedStage::Pressure))
            .expect("every mode has a pressure stage");
        let mut rec = Recorder::new(&core.ctx, &core.timer, "Runner::solve_pressure_again");
        if let (Some(x0), true) = (&core.initial_guess, core.scene.pressure.warm_start) {
            let n = core.fields.num_cells() as u64 * 4;
            rec.encoder()
                .copy_buffer_to_buffer(&core.pcg.p, 0, x0, 0, n);
        }
        {
            let mut pass = rec.pass(stage);
            core.record_rhs(&mut pass);
            let term = core.added_term();
            core.pressure
                .record_setup(&mut pass, &core.fields, kind, term);
        }
        rec.finish();
        let (report, _) = iterate(
            &mut core.pressure,
            &core.ctx,
            &core.fields,
            &core.pcg,
            &core.scene,
            &core.timer,
            core.bodies.as_ref(),
            None,
        )?;
        core.last_solve = Some(report.clone());
        core.solver_vectors_live = true;
        Ok(report)
    }

    /// Keeps a copy of the PCG's b, r, z, d, q and t after each solve (24 bytes per cell and
    /// one GPU copy per solve), so that their views and the system's export still read the
    /// last solve (the pressure's, or the volume correction's in a substep stopped there)
    /// after later stages: they share P2G's accumulators otherwise
    /// (`PcgVectors`), and those reads are refused. The viewer and `eddy run
    /// --export-system` ask for this; results do not change.
    pub fn keep_solver_vectors(&mut self) {
        let core = &mut self.core;
        if core.pcg.shared() && core.kept_vectors.is_none() {
            let kept = crate::gpu::storage_buffer(
                &core.ctx.device,
                "Core::kept_vectors",
                core.pcg.scratch_len(),
            );
            let v = &core.pcg;
            let pairs: Vec<(Region, Region)> = [&v.b, &v.r, &v.z, &v.d, &v.q, &v.t]
                .into_iter()
                .map(|r| {
                    let to = Region {
                        buffer: kept.clone(),
                        ..r.clone()
                    };
                    (r.clone(), to)
                })
                .collect();
            core.keep_copy = Some(crate::gpu::KernelCopy::new(&core.ctx.device, &pairs));
            core.kept_vectors = Some(kept);
        }
    }

    /// Keeps the fields only the views read (P2G's weights, the divergence before and after
    /// projection: `GridFields::keep_views`) from the next substep on; a headless run
    /// saves their 8 bytes per cell and 4 per face.
    pub fn keep_grid_views(&mut self) {
        let core = &mut self.core;
        if core.fields.keep_views(&core.ctx.device) {
            // The bind groups that hold the placeholders.
            core.divergence =
                divergence::Divergence::new(&core.ctx.device, &core.fields, &core.pcg);
            self.mode.rebind_views(&self.core);
        }
    }

    /// Whether the PCG's vectors outlast a substep (their own room, or a kept copy).
    pub fn keeps_solver_vectors(&self) -> bool {
        !self.core.pcg.shared() || self.core.kept_vectors.is_some()
    }

    /// The viscosity's incremental pressure correction alone on the face velocities as
    /// they are (`into`: the shift before the solve, else the one after it), for tests
    /// against the f64 reference; false when the scene has none or no pressure is kept.
    pub fn shift_for_viscosity(&mut self, into: bool) -> Result<bool, SimError> {
        let Some(s) = self.core.split.as_ref().filter(|s| s.kept) else {
            return Ok(false);
        };
        let f = &self.core.fields;
        let mut enc =
            (self.core.ctx.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("split"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("split"),
                timestamp_writes: None,
            });
            if into {
                s.record_in(&mut pass, f);
            } else {
                s.record_out(&mut pass, f);
            }
        }
        self.core.ctx.queue.submit([enc.finish()]);
        Ok(true)
    }

    /// What the viscosity's incremental correction keeps, once it holds a whole substep's:
    /// the liquid's last pressure over the density (m^2/s^2, per cell), the smoke's last
    /// change of each face by its forces and pressure (m/s).
    pub fn viscous_split_kept(&self) -> Option<&wgpu::Buffer> {
        self.core
            .split
            .as_ref()
            .filter(|s| s.kept)
            .map(|s| s.carried().1)
    }

    /// Keeps (or stops keeping) a copy of each warm-started solve's initial guess, so that
    /// [`Self::freeze_system`] can freeze warm-started systems (one copy of p per solve,
    /// and only in scenes with `pressure.warm_start`).
    pub fn keep_initial_guess(&mut self, keep: bool) {
        let core = &mut self.core;
        if !keep {
            core.initial_guess = None;
            core.guess_copy = None;
        } else if core.initial_guess.is_none() {
            let n = core.fields.num_cells() as u64 * 4;
            let x0 = crate::gpu::storage_buffer(&core.ctx.device, "Core::initial_guess", n);
            let region = |buffer: &wgpu::Buffer| Region {
                buffer: buffer.clone(),
                offset: 0,
                size: n,
            };
            let pair = (region(&core.pcg.p), region(&x0));
            core.guess_copy = Some(crate::gpu::KernelCopy::new(&core.ctx.device, &[pair]));
            core.initial_guess = Some(x0);
        }
    }

    /// The last pressure solve's system (A, b, and the solution phi) for the Matrix Market
    /// export.
    pub fn export_system(&self) -> Result<crate::sim::frames::ExportedSystem, SimError> {
        let core = &self.core;
        Ok(crate::sim::frames::ExportedSystem {
            dims: core.fields.params.n,
            a: crate::gpu::read_buffer(&core.ctx, &core.pcg.a)?,
            b: core.solver_vector(&core.pcg.b)?.read(&core.ctx)?,
            p: crate::gpu::read_buffer(&core.ctx, &core.pcg.p)?,
        })
    }

    /// The pressure system the last solve solved, frozen for the solver lab
    /// (`sim::lab`): call after a substep that ran the pressure stage. With rigid
    /// bodies in the strong coupling it keeps their added term; a warm-started solve is
    /// refused unless [`Self::keep_initial_guess`] was on before the solve.
    pub fn freeze_system(&self) -> Result<crate::sim::lab::FrozenSystem, SimError> {
        let core = &self.core;
        let solved = core.solved_vectors()?;
        let origin = format!(
            "{}, frame {}, t = {:.6} s, grid {:?}",
            core.scene.name, core.frame, core.time, core.fields.params.n
        );
        crate::sim::lab::capture(
            &core.ctx,
            &core.fields,
            &solved,
            core.bodies
                .as_ref()
                .filter(|_| core.added_term().is_some())
                .map(|b| (&b.strong, &b.coupling.body_id, &b.coupling.cover)),
            crate::sim::lab::SolveRecord {
                settings: &core.scene.pressure,
                initial_guess: core.initial_guess.as_ref(),
                last: core.last_solve.as_ref(),
                origin,
            },
        )
    }

    /// GPU time of the last `solve_pressure_again` (or substep) pressure stage, ms, when the
    /// adapter has timestamps.
    pub fn read_stage_timing(&self) -> Result<Option<StageTiming>, SimError> {
        let core = &self.core;
        if !core.timer.enabled() {
            return Ok(None);
        }
        let mut enc = new_encoder(&core.ctx, "Runner::read_stage_timing");
        core.timer.resolve(&mut enc);
        core.ctx.submit(enc.finish());
        let mut t = StageTiming::default();
        core.timer.read_into(&core.ctx, &mut t)?;
        Ok(Some(t))
    }

    /// The probes' columns the host fills after a full substep: each body force probe's
    /// pressure and viscous force and moment on its body.
    pub(super) fn probe_host_columns(&mut self) {
        let (Some(p), Some(b)) = (self.core.probes.as_mut(), self.core.bodies.as_ref()) else {
            return;
        };
        if !p.has_host_columns() {
            return;
        }
        let row = p
            .host
            .iter()
            .map(|&(_, body, c)| {
                let r = &b.set.bodies[body];
                let f = r.fluid_force + r.viscous_force;
                let t = r.fluid_torque + r.viscous_torque;
                [f.x, f.y, f.z, t.x, t.y, t.z][c]
            })
            .collect();
        p.host_rows.push(row);
    }
}
