//! The pressure solve: packed matrix, PCG, preconditioners, and the host loop that checks
//! convergence every few iterations without making the GPU wait.

pub mod matrix;
pub mod multigrid;
pub mod pcg;
pub mod precond;
pub mod refine;

use crate::gpu::constants::{PCG_BREAKDOWN, PCG_CONVERGED, PCG_ITERATION_LIMIT, PCG_STOPPED};
use crate::gpu::{storage_buffer, uniform_buffer, BufferReader, GpuContext, GpuError, Region};
use crate::scene::{PreconditionerKind, PressureSettings};
use crate::sim::core::fields::GridFields;
use matrix::BuildMatrix;
use pcg::{Pcg, PcgConfig, PcgStateHeader};
use precond::Precond;

/// PCG vectors and scalars. `p` holds phi = p*dt/rho (m^2/s) for FLUID cells.
///
/// The six vectors that only live within a solve (b, r, z, d, q, t) are [`Region`]s of one
/// scratch buffer. A simulation's is P2G's accumulator buffer (`GridFields::acc`), whose
/// contents die with each P2G's normalisation and whose later tenants (the volume
/// correction's gradient after its solve, the extrapolation's flags, the spacing's lists)
/// all come after the solves: 24 bytes per cell saved. After a substep they hold those
/// tenants, not the last solve's system; the viewer, and a run that exports its system,
/// keep a copy of them (`Runner::keep_solver_vectors`).
#[derive(Clone)]
pub struct PcgVectors {
    /// Packed matrix, vec4 (diag, +x, +y, +z) per cell.
    pub a: wgpu::Buffer,
    /// Right-hand side b = -h^2 div u.
    pub b: Region,
    pub p: wgpu::Buffer,
    /// Residual.
    pub r: Region,
    /// Preconditioned residual.
    pub z: Region,
    /// Search direction.
    pub d: Region,
    /// A times the search direction.
    pub q: Region,
    /// Preconditioner scratch (K^T r for ip, the forward solve for mic0, the finest
    /// residual for mg).
    pub t: Region,
    /// MIC(0) inverse diagonal (exact or tiled); a one-word placeholder until a MIC(0)
    /// preconditioner is asked for ([`PcgVectors::ensure_mic`]).
    pub precon: wgpu::Buffer,
    pub partials: wgpu::Buffer,
    /// `PcgStateHeader` followed by the residual history.
    pub state: wgpu::Buffer,
    pub config: wgpu::Buffer,
    pub history_len: u32,
    /// Whether b, r, z, d, q and t share a buffer with other stages.
    shared: bool,
}

impl PcgVectors {
    /// The vectors of a grid of `cells` cells; `mic`: with room for MIC(0)'s diagonal;
    /// `scratch`: where b, r, z, d, q and t live.
    pub fn new(
        device: &wgpu::Device,
        cells: u32,
        max_iterations: u32,
        mic: bool,
        scratch: Scratch<'_>,
    ) -> Self {
        let n = cells as u64 * 4;
        let f = |l: &str, b: u64| storage_buffer(device, l, b);
        let own;
        let (scratch, shared) = match scratch {
            Scratch::In { buffer, shared } => (buffer, shared),
            Scratch::Own => {
                own = f("PcgVectors::scratch", Self::scratch_bytes(cells as u64));
                (&own, false)
            }
        };
        let [b, r, z, d, q, t] = Region::packed(scratch, n.max(4));
        let history_len = max_iterations + 1;
        Self {
            a: f("PcgVectors::a", n * 4),
            b,
            p: f("PcgVectors::p", n),
            r,
            z,
            d,
            q,
            t,
            precon: f("PcgVectors::precon", if mic { n } else { 4 }),
            partials: f("PcgVectors::partials", pcg::PARTIALS_BUFFER_BYTES),
            state: f(
                "PcgVectors::state",
                pcg::STATE_HEADER_BYTES + 4 * history_len as u64,
            ),
            config: uniform_buffer(
                device,
                "PcgVectors::config",
                &[0u8; std::mem::size_of::<pcg::PcgConfig>()],
            ),
            history_len,
            shared,
        }
    }

    /// Bytes of the scratch buffer b, r, z, d, q and t share, for a grid of `cells` cells.
    pub fn scratch_bytes(cells: u64) -> u64 {
        super::fields::pcg_scratch_bytes(cells)
    }

    /// Whether b, r, z, d, q and t share their buffer with other stages, which reuse it
    /// after the projection.
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// The whole stretch b, r, z, d, q and t take in their buffer (from its start).
    pub fn scratch_len(&self) -> u64 {
        Region::packed_bytes(SCRATCH_VECTORS, self.r.size)
    }

    /// Whether MIC(0)'s diagonal has its room (see [`PcgVectors::new`]).
    pub fn has_mic(&self) -> bool {
        self.precon.size() >= self.b.size
    }

    /// Gives MIC(0)'s diagonal its room (a preconditioner switched to `mic0` or `mic0_tiled`
    /// while running). Returns whether a buffer was made: the solver's bind groups that
    /// hold the placeholder must then be rebuilt.
    pub fn ensure_mic(&mut self, device: &wgpu::Device) -> bool {
        if self.has_mic() {
            return false;
        }
        self.precon = storage_buffer(device, "PcgVectors::precon", self.b.size);
        true
    }

    /// Bytes of the PCG vectors and of the multigrid levels for a grid of `n` cells
    /// (`mic`: with MIC(0)'s diagonal), without the scratch vectors
    /// ([`PcgVectors::scratch_bytes`]: a simulation's live in `GridFields::acc`).
    pub fn bytes(n: [u32; 3], max_iterations: u64, mic: bool) -> u64 {
        let cells: u64 = n.iter().map(|&x| x as u64).product();
        cells * 4 * if mic { 6 } else { 5 }
            + pcg::STATE_HEADER_BYTES
            + 4 * (max_iterations + 1)
            + pcg::PARTIALS_BUFFER_BYTES
            + multigrid::MgPlan::new(n).bytes()
    }
}

/// b, r, z, d, q and t.
const SCRATCH_VECTORS: u64 = super::fields::PCG_SCRATCH_VECTORS;

/// Where [`PcgVectors`]' b, r, z, d, q and t live.
#[derive(Clone, Copy)]
pub enum Scratch<'a> {
    /// A buffer of their own.
    Own,
    /// In `buffer` (at least [`PcgVectors::scratch_bytes`]); `shared`: other stages use
    /// it too, so the vectors do not outlast a substep.
    In {
        buffer: &'a wgpu::Buffer,
        shared: bool,
    },
}

/// A symmetric positive semi-definite term K added to the pressure matrix for a solve: the
/// PCG then solves (A + K) phi = b, and the preconditioner still preconditions A. The
/// strong coupling of rigid bodies is one (src/sim/bodies/strong.rs): a low-rank K that
/// needs a reduction and a broadcast per product, so it is applied matrix-free.
pub trait AddedTerm {
    /// Records `op` (reads and writes the PCG vectors the term was bound to).
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, op: TermOp);
    /// Dispatches one [`TermOp::AddToQ`] records.
    fn dispatches(&self) -> u32;
    /// Whether [`TermOp::Deflate`] records anything.
    fn deflates(&self) -> bool;
    /// Dispatches one [`TermOp::Deflate`] records (0: the term does not deflate).
    fn deflation_dispatches(&self) -> u32;
}

/// Whether a solve preconditioned with `kind` deflates its added term's modes
/// ([`TermOp::Deflate`]): with `mg` only. `mg` preconditions A so well that the term's few
/// outlying modes are what is left (16 bodies: 12-13 iterations against 6-7 without the
/// term, 7-8 deflated). `ip` and `mic0` leave many slow modes of A itself; deflating the
/// bodies' modes gave them nothing in f64 (126 against 142 `ip` iterations on the
/// 16-body pool at 32^3, 32 against 31 with `mic0`), and the correction, which is not
/// exactly symmetric (E and S Z are taken per body), made `ip`'s f32 solve stall there
/// (709 iterations against 113).
pub fn deflates(kind: PreconditionerKind) -> bool {
    kind == PreconditionerKind::Mg
}

/// What an [`AddedTerm`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermOp {
    /// q += K d, inside each iteration (skipped once the solve is done).
    AddToQ,
    /// r -= K p, after the initial residual r = b - A p (a warm start's p).
    SubtractFromR,
    /// z = K p of the solution, for the true residual (pcg.wgsl reads it). Harmless to a
    /// solve still running: z is an iteration's scratch, written by its preconditioner
    /// before anything reads it.
    IntoZ,
    /// Once per solve, before the first [`TermOp::Deflate`]: what the deflation of the
    /// term's modes needs from A and the term (nothing for a term that does not deflate).
    /// Recorded with `mg` only ([`deflates`]).
    PrepareDeflation,
    /// After it: p += the start's correction in the span of the term's modes, so that the
    /// residual the solve then computes again has no part there (A-DEF2 needs that start).
    DeflateStart,
    /// z += the correction that deflates the term's modes, after each z = M^-1 r (skipped
    /// once the solve is done; nothing for a term that does not deflate). With `mg` only.
    Deflate,
}

/// What a solve runs on: the context, the grid, the vectors, the settings, the stage
/// timer's slot and an added term.
#[derive(Clone, Copy)]
struct SolveOn<'a> {
    ctx: &'a GpuContext,
    f: &'a GridFields,
    v: &'a PcgVectors,
    s: &'a PressureSettings,
    timer: Option<(&'a crate::gpu::PassTimer, &'a str)>,
    term: Option<&'a dyn AddedTerm>,
}

/// The iterations at which a residual `history` (max|r| / max|b| before the first
/// iteration and after each) reaches `tolerance`, continued at the geometric rate of its
/// last three iterations; at least one more than it holds, at most 10 000.
fn iterations_to_reach(history: &[f32], tolerance: f64) -> u32 {
    let n = history.len().saturating_sub(1);
    let last = history.last().map_or(0.0, |&r| r as f64);
    let k = n.min(3);
    let from = history.get(n - k).map_or(0.0, |&r| r as f64);
    let more = if k == 0 || last <= tolerance || !(from > last && last > 0.0) {
        1.0
    } else {
        let rate = (last / from).powf(1.0 / k as f64);
        ((tolerance / last).ln() / rate.ln()).ceil().max(1.0)
    };
    (n as f64 + more).min(10_000.0) as u32
}

/// 32-bit words of the state buffer's header.
const HEADER_WORDS: usize = (pcg::STATE_HEADER_BYTES / 4) as usize;

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SolveStatus {
    Converged,
    IterationLimit,
    /// d.q <= 0 or r.z <= 0: the system or the preconditioner lost positive definiteness
    /// in f32 (seen only at residuals far below the tolerance).
    Breakdown,
    /// A pipelined solve ([`PressureSolver::queue_ahead`]) still running when the
    /// iterations queued for it ran out: the projection used the solution as it stood.
    Stopped,
    Running,
}

/// Result of one pressure solve.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SolveReport {
    pub iterations: u32,
    /// max|r| / max|b| at the end, r the recursive residual the iteration updates (what
    /// the convergence test reads).
    pub residual: f64,
    /// max|b - A p| / max|b| of the solution as stored (f32), evaluated with compensated
    /// arithmetic: what the solve actually reached (None where it is not recomputed: the
    /// volume correction's fixed-count solve).
    pub true_residual: Option<f64>,
    /// The floor of that residual in f32 relative to max|b| (an ulp of each cell's largest
    /// term): a tolerance below it cannot be met by any f32 solution.
    pub f32_floor: Option<f64>,
    pub status: SolveStatus,
    /// max|r| / max|b| before the first iteration and after each one.
    pub history: Vec<f32>,
    /// Dispatches recorded per iteration (preconditioner included).
    pub dispatches_per_iteration: u32,
}

pub struct PressureSolver {
    pub build: BuildMatrix,
    pub pcg: Pcg,
    pub precond: Precond,
    readers: [BufferReader; 2],
    final_reader: BufferReader,
    /// Iterations of the last solve, the guess for how many to queue ahead of the first
    /// read of the next one (None before the first solve).
    last_iterations: Option<u32>,
    /// The counts of the last [`RECENT_SOLVES`] solves, newest last (a stopped solve's as
    /// its residual history says the tolerance needs): a solve queued ahead queues for the
    /// hardest of them.
    recent: RecentCounts,
}

/// The iteration counts of the last [`RECENT_SOLVES`] solves, newest last.
#[derive(Clone, Debug, Default)]
pub struct RecentCounts(std::collections::VecDeque<u32>);

impl RecentCounts {
    /// Keeps a solve's count, forgetting the oldest past [`RECENT_SOLVES`].
    pub fn push(&mut self, n: u32) {
        if self.0.len() == RECENT_SOLVES {
            self.0.pop_front();
        }
        self.0.push_back(n);
    }

    /// Replaces the newest count (a stopped solve's, by what its tolerance needs).
    pub fn replace_newest(&mut self, n: u32) {
        if let Some(newest) = self.0.back_mut() {
            *newest = n;
        }
    }

    /// The largest count kept.
    pub fn hardest(&self) -> Option<u32> {
        self.0.iter().copied().max()
    }

    /// Whether the newest `n` counts are kept and all iterated.
    pub fn all_iterated(&self, n: usize) -> bool {
        self.0.len() >= n && self.0.iter().rev().take(n).all(|&c| c > 0)
    }
}

/// Solves whose counts a solve queued ahead covers (the pressure's and the diffusion's).
/// One solve's count alone undershoots where counts swing from one substep to the next:
/// with rigid bodies in the strong scheme a 24^3 pool's `mg` solves took 14-22 iterations,
/// and queuing the last count plus two stopped 20 of 166 solves above the tolerance (up to
/// 8x); queuing the largest of the last six stopped 3 of 170
/// (docs/guide/06-how-a-step-works.md, "Solves queued ahead").
pub const RECENT_SOLVES: usize = 6;

impl PressureSolver {
    pub fn new(ctx: &GpuContext, f: &GridFields, v: &PcgVectors) -> Self {
        let d = &ctx.device;
        Self {
            build: BuildMatrix::new(d, f, v),
            pcg: Pcg::new(d, f, v),
            precond: Precond::new(d, &ctx.limits, &ctx.info, f, v),
            readers: [
                BufferReader::new(d, pcg::STATE_HEADER_BYTES, "PressureSolver::flag_a"),
                BufferReader::new(d, pcg::STATE_HEADER_BYTES, "PressureSolver::flag_b"),
            ],
            final_reader: BufferReader::new(d, v.state.size(), "PressureSolver::state"),
            last_iterations: None,
            recent: RecentCounts::default(),
        }
    }

    /// Writes the solve's settings; `coupled` when the solves that follow pass an
    /// [`AddedTerm`].
    pub fn write_config(
        &self,
        ctx: &GpuContext,
        v: &PcgVectors,
        s: &PressureSettings,
        coupled: bool,
    ) {
        let cfg = PcgConfig {
            tol: s.tolerance as f32,
            max_iterations: s.max_iterations.min(v.history_len - 1),
            groups: self.pcg.groups(),
            warm_start: s.warm_start as u32,
            coupled: coupled as u32,
            _pad: [0; 3],
        };
        ctx.queue
            .write_buffer(&v.config, 0, bytemuck::bytes_of(&cfg));
    }

    /// Records matrix assembly, preconditioner set-up and the initial residual/direction
    /// (of A + K with an added `term`).
    pub fn record_setup(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: &GridFields,
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
    ) {
        self.build.record(pass, f);
        self.precond.record_setup(pass, kind);
        self.record_start(pass, f, kind, term);
    }

    /// Records the initial residual and direction of a new solve with the matrix and
    /// preconditioner of the last `record_setup` (a second right-hand side on the same cells).
    pub fn record_start(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: &GridFields,
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
    ) {
        self.pcg.record_init_residual(pass, f);
        if let Some(t) = term {
            t.record(pass, TermOp::SubtractFromR);
            if deflates(kind) && t.deflates() {
                t.record(pass, TermOp::PrepareDeflation);
                t.record(pass, TermOp::DeflateStart);
                // r = b - (A + K) p of the corrected start.
                self.pcg.record_residual(pass, f);
                t.record(pass, TermOp::SubtractFromR);
            }
        }
        self.precond.record_apply(pass, f, kind);
        if let Some(t) = term.filter(|_| deflates(kind)) {
            t.record(pass, TermOp::Deflate);
        }
        self.pcg.record_init_direction(pass, f);
    }

    /// Records one PCG iteration (on A + K with an added `term`).
    pub fn record_iteration(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: &GridFields,
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
    ) {
        self.pcg.record_step(pass, f, term);
        self.precond.record_apply(pass, f, kind);
        if let Some(t) = term.filter(|_| deflates(kind)) {
            t.record(pass, TermOp::Deflate);
        }
        self.pcg.record_direction(pass);
    }

    /// Records the last iteration of a solve cut off at a fixed count (the volume
    /// correction's): the step that updates the solution, then the convergence test with
    /// z = r. The preconditioner's z would only serve a next direction that is never used,
    /// so the identity stands in for it (with `mg`, one V-cycle saved); the solution, its
    /// residual and the iteration count are those of [`Self::record_iteration`].
    pub fn record_last_iteration(&self, pass: &mut wgpu::ComputePass<'_>, f: &GridFields) {
        self.pcg.record_step(pass, f, None);
        self.precond.record_apply(pass, f, PreconditionerKind::None);
        self.pcg.record_direction(pass);
    }

    /// Applies the preconditioner once, z = M^-1 r, for a given r (tests and debugging).
    /// Uses the matrix currently in `v.a`; the MIC(0) factorisation is recomputed.
    pub fn apply_preconditioner(
        &self,
        ctx: &GpuContext,
        f: &GridFields,
        v: &PcgVectors,
        kind: PreconditionerKind,
        r: &[f32],
    ) -> Result<Vec<f32>, GpuError> {
        // The preconditioner kernels skip work once a solve is done; clear the flag.
        ctx.queue
            .write_buffer(&v.state, 0, &[0u8; pcg::STATE_HEADER_BYTES as usize]);
        v.r.write(&ctx.queue, bytemuck::cast_slice(r));
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("PressureSolver::apply_preconditioner"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("precond"),
                timestamp_writes: None,
            });
            self.precond.record_setup(&mut pass, kind);
            self.precond.record_apply(&mut pass, f, kind);
        }
        ctx.submit(enc.finish());
        v.z.read(ctx)
    }

    pub fn dispatches_per_iteration(
        &self,
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
    ) -> u32 {
        pcg::Pcg::DISPATCHES
            + self.precond.dispatches(kind)
            + term.map_or(0, |t| {
                t.dispatches()
                    + if deflates(kind) {
                        t.deflation_dispatches()
                    } else {
                        0
                    }
            })
    }

    /// Runs the iteration loop after `record_setup` has been submitted.
    ///
    /// The first submit queues as many iterations as the last solve needed, then the true
    /// residual and the copy of the final state: a solve that converges within that guess
    /// (the usual case with warm starts: `mg` needs the same 6-10 every substep) costs one
    /// host read. Iterations after convergence return at once on the GPU (they test the
    /// flag first), and the true residual runs only once the solve is done, so a guess
    /// that falls short leaves the state as it was and the solve goes on: first one chunk
    /// of `check_every` iterations with the end behind it and one read (a guess short by a
    /// few iterations costs one read more), then, for a solve still running, chunks
    /// submitted back to back, the host reading the done flag of chunk k-1 while chunk k
    /// runs, then the final state. With an added term (the bodies' strong coupling) the
    /// true residual needs K p in z, which the term writes behind the guess too
    /// ([`TermOp::IntoZ`]: a solve still running writes z again before reading it).
    ///
    /// With a timer, `slot` times the iterations: its begin is written by the first chunk's
    /// pass and its end after the last, so the host's encoding of the first chunk (the GPU
    /// idles meanwhile, once the set-up was submitted) is not counted; the waits for the
    /// convergence checks of a chunked loop are. The caller times its set-up pass itself.
    pub fn iterate(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        v: &PcgVectors,
        s: &PressureSettings,
        timer: Option<(&crate::gpu::PassTimer, &str)>,
        term: Option<&dyn AddedTerm>,
    ) -> Result<SolveReport, GpuError> {
        Ok(self.iterate_with(ctx, f, v, s, timer, term, None)?.0)
    }

    /// As [`Self::iterate`], bringing `with`'s staging buffer back in the solve's first
    /// read (the runner's counters of the substep before, on the GPU clock): its words
    /// come back second, None without.
    #[allow(clippy::too_many_arguments)]
    pub fn iterate_with(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        v: &PcgVectors,
        s: &PressureSettings,
        timer: Option<(&crate::gpu::PassTimer, &str)>,
        term: Option<&dyn AddedTerm>,
        with: Option<&BufferReader>,
    ) -> Result<(SolveReport, Option<Vec<u32>>), GpuError> {
        let on = SolveOn {
            ctx,
            f,
            v,
            s,
            timer,
            term,
        };
        let queued = self.queue_guess(&on);
        let (words, with_words) = self.final_reader.read_with::<u32>(ctx, with)?;
        let report = self.go_on(&on, queued, words)?;
        Ok((report, with_words))
    }

    /// Two independent solves (the smoke's viscosity and its heat and dye) with one read
    /// between them: both guesses are queued, both final states come back together, and a
    /// solve whose guess fell short goes on alone ([`Self::iterate`] for each).
    pub fn iterate_pair(
        (a, av, af): (&mut PressureSolver, &PcgVectors, &GridFields),
        (b, bv, bf): (&mut PressureSolver, &PcgVectors, &GridFields),
        ctx: &GpuContext,
        (sa, sb): (&PressureSettings, &PressureSettings),
    ) -> Result<(SolveReport, SolveReport), GpuError> {
        let on = |f, v, s| SolveOn {
            ctx,
            f,
            v,
            s,
            timer: None,
            term: None,
        };
        let (on_a, on_b) = (on(af, av, sa), on(bf, bv, sb));
        let qa = a.queue_guess(&on_a);
        let qb = b.queue_guess(&on_b);
        let (wa, wb) = a
            .final_reader
            .read_with::<u32>(ctx, Some(&b.final_reader))?;
        let wb = wb.expect("read with the first");
        let ra = a.go_on(&on_a, qa, wa)?;
        let rb = b.go_on(&on_b, qb, wb)?;
        Ok((ra, rb))
    }

    /// Raises the guess to `iterations` (a pipelined frame's largest count: its substeps'
    /// solves are read together, and the next frame queues for the hardest of them).
    pub fn guess_at_least(&mut self, iterations: u32) {
        self.last_iterations = Some(self.last_iterations.unwrap_or(0).max(iterations));
    }

    /// The counts of the last solves (a stopped one's as its tolerance needs).
    pub fn recent(&self) -> &RecentCounts {
        &self.recent
    }

    /// Whether a solve has run, so the next one has a guess of its iterations.
    pub fn has_guess(&self) -> bool {
        self.last_iterations.is_some()
    }

    /// A pipelined solve: records (into `enc`, nothing submitted or read) as many
    /// iterations as the hardest recent solve needed plus `s.margin`, then the solve's end: a solve
    /// still running stops there ([`SolveStatus::Stopped`]), the true residual runs and
    /// the whole state is copied into `into`, whose words [`Self::report_from`] turns
    /// into the report once the host reads them. Iterations past convergence return at
    /// once on the GPU. Returns the iterations queued.
    #[allow(clippy::too_many_arguments)]
    pub fn queue_ahead(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        f: &GridFields,
        v: &PcgVectors,
        s: &PressureSettings,
        timer: Option<(&crate::gpu::PassTimer, &str)>,
        term: Option<&dyn AddedTerm>,
        into: &mut BufferReader,
    ) -> u32 {
        let ahead = self.ahead(v, s, s.margin, true);
        let begin = timer.and_then(|(t, slot)| t.writes(slot, true, false));
        self.record_chunk(enc, f, s.preconditioner, term, ahead, begin);
        Self::record_end(&self.pcg, enc, v, (timer, term), true, into);
        ahead
    }

    /// The report of a pipelined solve from its state's words ([`Self::queue_ahead`]),
    /// which also sets the guess for the solves queued after the host reads it. A solve
    /// that stopped at its queue needed more than it had: the guess is then the count at
    /// which its residual history, continued at its last iterations' rate, reaches the
    /// tolerance (at least one more than it ran).
    pub fn report_from(
        &mut self,
        words: &[u32],
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
        tolerance: f64,
    ) -> SolveReport {
        let report = self.report(words, kind, term);
        if report.status == SolveStatus::Stopped {
            let needed = iterations_to_reach(&report.history, tolerance);
            self.last_iterations = Some(needed);
            self.recent.replace_newest(needed);
        }
        report
    }

    /// Iterations to queue ahead of a solve's first look at its state: the last solve's count
    /// (a chunk before the first solve) plus `margin`, within the iteration limit. A solve
    /// queued ahead (`recent`) takes the largest count of the last [`RECENT_SOLVES`] instead.
    fn ahead(&self, v: &PcgVectors, s: &PressureSettings, margin: u32, recent: bool) -> u32 {
        let max = s.max_iterations.min(v.history_len - 1);
        let hardest = self.recent.hardest().filter(|_| recent);
        let guess = match (self.last_iterations, hardest) {
            (Some(last), Some(h)) => last.max(h),
            (Some(last), None) => last,
            _ => s.check_every.max(1),
        };
        (guess + margin).clamp(1, max.max(1)).min(max)
    }

    /// Queues as many iterations as the last solve needed, the true residual and the copy
    /// of the final state (submitted; nothing read). Returns the iterations queued.
    fn queue_guess(&mut self, on: &SolveOn<'_>) -> u32 {
        let SolveOn {
            ctx,
            f,
            v,
            s,
            timer,
            term,
        } = *on;
        let kind = s.preconditioner;
        let ahead = self.ahead(v, s, 0, false);
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("PressureSolver::ahead"),
            });
        let begin = timer.and_then(|(t, slot)| t.writes(slot, true, false));
        self.record_chunk(&mut enc, f, kind, term, ahead, begin);
        self.record_final_end(&mut enc, v, (timer, term));
        ctx.submit(enc.finish());
        ahead
    }

    /// After the guess's `queued` iterations and their final state's `words`: the report
    /// if the solve is done, or the chunked loop until it is.
    fn go_on(
        &mut self,
        on: &SolveOn<'_>,
        queued: u32,
        words: Vec<u32>,
    ) -> Result<SolveReport, GpuError> {
        let SolveOn {
            ctx,
            f,
            v,
            s,
            timer,
            term,
        } = *on;
        let kind = s.preconditioner;
        let max = s.max_iterations.min(v.history_len - 1);
        let chunk = s.check_every.max(1);
        let mut queued = queued;
        let header = Self::header(&words);
        if header.done != 0 || queued >= max {
            return Ok(self.report(&words, kind, term));
        }
        // A guess short by a few iterations (the usual miss): one chunk more with the end
        // behind it, one read. Only a solve still running after that takes the pipelined
        // loop below.
        {
            let n = chunk.min(max - queued);
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("PressureSolver::short"),
                });
            self.record_chunk(&mut enc, f, kind, term, n, None);
            queued += n;
            self.record_final_end(&mut enc, v, (timer, term));
            ctx.submit(enc.finish());
            let words: Vec<u32> = self.final_reader.read(ctx)?;
            if Self::header(&words).done != 0 || queued >= max {
                return Ok(self.report(&words, kind, term));
            }
        }
        let mut pending: Option<usize> = None;
        let mut c = 0usize;
        while queued < max {
            let n = chunk.min(max - queued);
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("PressureSolver::chunk"),
                });
            // The iterations' time begins with the first chunk queued.
            let begin = timer
                .filter(|_| queued == 0)
                .and_then(|(t, slot)| t.writes(slot, true, false));
            self.record_chunk(&mut enc, f, kind, term, n, begin);
            queued += n;
            let slot = c % 2;
            c += 1;
            self.readers[slot].copy_range(&mut enc, &v.state, 0, pcg::STATE_HEADER_BYTES);
            ctx.submit(enc.finish());
            if let Some(prev) = pending {
                let h: Vec<PcgStateHeader> = self.readers[prev].read(ctx)?;
                if h[0].done != 0 {
                    break;
                }
            }
            pending = Some(slot);
        }
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("PressureSolver::end"),
            });
        self.record_final_end(&mut enc, v, (timer, term));
        ctx.submit(enc.finish());
        let words: Vec<u32> = self.final_reader.read(ctx)?;
        Ok(self.report(&words, kind, term))
    }

    /// Records `n` iterations in one compute pass.
    fn record_chunk(
        &self,
        enc: &mut wgpu::CommandEncoder,
        f: &GridFields,
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
        n: u32,
        begin: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("pressure::pcg"),
            timestamp_writes: begin,
        });
        for _ in 0..n {
            self.record_iteration(&mut pass, f, kind, term);
        }
    }

    /// Records the end of a solve the host reads itself: into the final state's reader.
    fn record_final_end(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        v: &PcgVectors,
        on: (
            Option<(&crate::gpu::PassTimer, &str)>,
            Option<&dyn AddedTerm>,
        ),
    ) {
        Self::record_end(&self.pcg, enc, v, on, false, &mut self.final_reader);
    }

    /// Records a solve's end: the stage timing's close (a later end overwrites an earlier
    /// one), with `stop` the stop of a solve still running ([`Self::queue_ahead`]), the
    /// true residual and the copy of the whole state into `into` for the host.
    fn record_end(
        pcg: &Pcg,
        enc: &mut wgpu::CommandEncoder,
        v: &PcgVectors,
        (timer, term): (
            Option<(&crate::gpu::PassTimer, &str)>,
            Option<&dyn AddedTerm>,
        ),
        stop: bool,
        into: &mut BufferReader,
    ) {
        if let Some((t, stage)) = timer {
            // An empty pass closes the stage's timing after the last chunk.
            let _ = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pressure::end"),
                timestamp_writes: t.writes(stage, false, true),
            });
        }
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pressure::true_residual"),
                timestamp_writes: None,
            });
            if stop {
                pcg.record_stop(&mut pass);
            }
            if let Some(t) = term {
                t.record(&mut pass, TermOp::IntoZ);
            }
            pcg.record_true_residual(&mut pass);
        }
        into.copy_from(enc, &v.state);
    }

    fn header(words: &[u32]) -> PcgStateHeader {
        bytemuck::pod_read_unaligned(bytemuck::cast_slice(&words[..HEADER_WORDS]))
    }

    /// The report of a finished solve from its state's words (and the guess for the next).
    fn report(
        &mut self,
        words: &[u32],
        kind: PreconditionerKind,
        term: Option<&dyn AddedTerm>,
    ) -> SolveReport {
        let header = Self::header(words);
        let hist: &[f32] = bytemuck::cast_slice(&words[HEADER_WORDS..]);
        let iterations = header.iterations;
        self.last_iterations = Some(iterations);
        self.recent.push(iterations);
        let history = hist[..(iterations as usize + 1).min(hist.len())].to_vec();
        let status = match header.status {
            PCG_CONVERGED => SolveStatus::Converged,
            PCG_ITERATION_LIMIT => SolveStatus::IterationLimit,
            PCG_BREAKDOWN => SolveStatus::Breakdown,
            PCG_STOPPED => SolveStatus::Stopped,
            _ => SolveStatus::Running,
        };
        let relative = |x: f32| {
            if header.bb > 0.0 {
                x as f64 / header.bb as f64
            } else {
                0.0
            }
        };
        SolveReport {
            iterations,
            residual: relative(header.rr),
            true_residual: Some(relative(header.true_rr)),
            f32_floor: Some(relative(header.floor_rr)),
            status,
            history,
            dispatches_per_iteration: self.dispatches_per_iteration(kind, term),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{iterations_to_reach, RecentCounts, RECENT_SOLVES};

    #[test]
    fn a_queued_solve_covers_the_hardest_of_the_recent_solves() {
        let mut r = RecentCounts::default();
        assert_eq!(r.hardest(), None);
        for n in [14, 22, 15, 16] {
            r.push(n);
        }
        assert_eq!(r.hardest(), Some(22));
        // A stopped solve's count becomes what its tolerance needs.
        r.replace_newest(30);
        assert_eq!(r.hardest(), Some(30));
        // The hard ones are forgotten after RECENT_SOLVES easier solves.
        for _ in 0..RECENT_SOLVES {
            r.push(15);
        }
        assert_eq!(r.hardest(), Some(15));
    }

    #[test]
    fn a_stopped_solve_s_history_says_how_many_iterations_the_tolerance_needs() {
        // A tenth per iteration over the last three: two more reach 1e-6 from 1e-4.
        let h = [1.0, 0.1, 0.01, 0.001, 0.0001];
        assert_eq!(iterations_to_reach(&h, 1e-6), 6);
        // Already there, stagnating, or too short a history: one more.
        assert_eq!(iterations_to_reach(&h, 1e-2), 5);
        assert_eq!(iterations_to_reach(&[1.0, 1.0, 1.0], 1e-6), 3);
        assert_eq!(iterations_to_reach(&[1.0], 1e-6), 1);
        // One iteration's history (a halving): ten more for 1e-3.
        assert_eq!(iterations_to_reach(&[1.0, 0.5], 0.5e-3), 11);
    }
}
