//! [`Sim`]: one handle for a simulation of either mode, which the command line and the
//! viewer drive alike. What only one mode has (the liquid's particles and views, the
//! smoke's tracers and painted solids) is reached through its variant.

use super::bodies::coupling::Bodies;
use super::frames::ExportedSystem;
use super::lab::FrozenSystem;
use super::runner::state::SimState;
use super::smoke::SmokeSimulation;
use super::{FrameStats, SimError, Simulation};
use crate::gpu::{GpuContext, StageTiming};
use crate::scene::{Scene, SceneKind};
use std::sync::Arc;

/// A liquid or a smoke simulation.
pub enum Sim {
    Liquid(Box<Simulation>),
    Smoke(Box<SmokeSimulation>),
}

/// `$body` with `$s` bound to the simulation, whichever mode it is.
macro_rules! each {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Sim::Liquid($s) => $body,
            Sim::Smoke($s) => $body,
        }
    };
}

impl Sim {
    /// A simulation of `scene`, in the scene's mode.
    pub fn new(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Sim, SimError> {
        Ok(match scene.kind {
            SceneKind::Liquid => Sim::Liquid(Box::new(Simulation::new(ctx, scene)?)),
            SceneKind::Smoke => Sim::Smoke(Box::new(SmokeSimulation::new(ctx, scene)?)),
        })
    }

    pub fn is_liquid(&self) -> bool {
        matches!(self, Sim::Liquid(_))
    }

    /// The scene it simulates, with the live settings applied so far.
    pub fn scene(&self) -> &Scene {
        each!(self, s => &s.scene)
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        each!(self, s => s.time)
    }

    /// Runs one frame.
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        each!(self, s => s.step_frame())
    }

    /// The state after the last frame, as a checkpoint holds it.
    pub fn save_state(&self) -> Result<SimState, SimError> {
        each!(self, s => s.save_state())
    }

    /// Continues from `state`, saved from a simulation of this scene.
    pub fn restore_state(&mut self, state: &SimState) -> Result<(), SimError> {
        each!(self, s => s.restore_state(state))
    }

    /// Applies the settings that may change while it runs; an error names the one that
    /// may not.
    pub fn apply_live_settings(&mut self, scene: &Scene) -> Result<(), String> {
        each!(self, s => s.apply_live_settings(scene))
    }

    /// The last pressure solve's system, frozen for the solver lab.
    pub fn freeze_system(&self) -> Result<FrozenSystem, SimError> {
        each!(self, s => s.freeze_system())
    }

    /// Whether a pressure solve has run (and so can be frozen).
    pub fn has_solved(&self) -> bool {
        each!(self, s => s.last_solve.is_some())
    }

    /// The last pressure solve's system as Matrix Market data, for one that cannot be
    /// frozen.
    pub fn export_system(&self) -> Result<ExportedSystem, SimError> {
        each!(self, s => s.export_system())
    }

    /// Keeps a copy of each solve's initial guess (a warm start overwrites it).
    pub fn keep_initial_guess(&mut self, keep: bool) {
        each!(self, s => s.keep_initial_guess(keep))
    }

    /// Keeps the PCG's vectors after each solve.
    pub fn keep_solver_vectors(&mut self) {
        each!(self, s => s.keep_solver_vectors())
    }

    /// Keeps the fields only the views read (weights, divergence).
    pub fn keep_grid_views(&mut self) {
        each!(self, s => s.keep_grid_views())
    }

    /// Substeps recorded ahead on the GPU clock that did not run (their frame had ended).
    pub fn skipped_substeps(&self) -> u64 {
        each!(self, s => s.skipped_substeps)
    }

    /// Dispatches per stage since the simulation was made.
    pub fn dispatches_by_stage(&self) -> &[(&'static str, u64)] {
        each!(self, s => &s.dispatches_by_stage)
    }

    /// The last timed substep's stage times.
    pub fn timing(&self) -> &StageTiming {
        each!(self, s => &s.last_timing)
    }

    /// Particles (the liquid) or tracers (the smoke) it moves.
    pub fn particles(&self) -> u32 {
        match self {
            Sim::Liquid(s) => s.mode.particles.count,
            Sim::Smoke(s) => s.mode.tracers.count,
        }
    }

    /// Particle (or tracer) positions, xyz.
    pub fn positions(&self) -> Result<Vec<[f32; 4]>, SimError> {
        match self {
            Sim::Liquid(s) => Ok(s.read_particles()?.0),
            Sim::Smoke(s) => s.read_tracers(),
        }
    }

    /// The rigid bodies, when the scene has any.
    pub fn bodies(&self) -> Option<&Bodies> {
        each!(self, s => s.bodies.as_ref())
    }

    pub fn bodies_mut(&mut self) -> Option<&mut Bodies> {
        each!(self, s => s.bodies.as_mut())
    }
}
