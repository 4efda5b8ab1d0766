//! A frame's row of stats.csv: the columns both modes share and each mode's own.

use super::*;

/// The columns of stats.csv only one mode has.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(untagged)]
pub enum ModeColumns {
    Liquid(LiquidColumns),
    Smoke(SmokeColumns),
}

/// The liquid's own stats.csv columns.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LiquidColumns {
    /// Volume inside the free surface (FLUID cells plus the level set's reach past their
    /// faces), m^3.
    pub liquid_volume: f64,
    /// max |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_max: f64,
    /// Mean |rho / rho0 - 1| over FLUID cells in the frame's last substep.
    pub density_error_mean: f64,
    /// Iterations of all volume-correction solves in the frame.
    pub volume_iterations: u32,
    /// Iterations of all viscosity solves in the frame (0 when inviscid).
    pub viscosity_iterations: u32,
    /// Viscosity solves in the frame that stopped above their tolerance.
    pub diffusion_unconverged: u32,
    /// Particles the emitters added in the frame.
    pub particles_emitted: u64,
    /// Particles drains and open sides removed in the frame.
    pub particles_removed: u64,
}

/// The smoke's own stats.csv columns.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SmokeColumns {
    /// Sum over cells of mean(r, g, b) x cell volume (dye units x m^3).
    pub dye_total: f64,
    /// Dye-weighted mean height, m.
    pub dye_center_y: f64,
    /// Sum over cells of |omega|^2 x cell volume, m^3/s^2.
    pub enstrophy: f64,
    /// Iterations of all viscosity solves in the frame (0 when inviscid).
    pub viscosity_iterations: u32,
    /// Viscosity, heat and dye solves in the frame that stopped above their tolerance.
    pub diffusion_unconverged: u32,
}

/// One row of stats.csv, for either mode: the shared columns, then the mode's own.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FrameStats {
    pub frame: u64,
    pub time_s: f64,
    pub substeps: u32,
    /// Liquid particles, or smoke tracers.
    pub particles: u32,
    /// FLUID cells (liquid) or non-SOLID cells (smoke).
    pub fluid_cells: u32,
    /// Iterations of the last solve in the frame.
    pub pcg_iterations: u32,
    /// max|r| / max|b| at the end of the last solve in the frame (the recursive residual
    /// its convergence test reads).
    pub pcg_residual: f64,
    /// max|b - A p| / max|b| of that solve's stored solution: the true residual.
    pub pcg_true_residual: f64,
    /// max |div u| over FLUID cells after the last projection, 1/s.
    pub max_divergence: f64,
    /// J: liquid particle mass = density * cell volume / particles per cell; smoke: air
    /// density 1.2 kg/m^3 over the slice's depth.
    pub kinetic_energy: f64,
    pub max_speed: f64,
    /// Counted cells x cell volume, m^3.
    pub volume: f64,
    /// Liquid: largest particle x; smoke: largest x holding dye (> 1e-3), m.
    pub front_x: f64,
    /// Iterations of all solves in the frame.
    pub pcg_iterations_total: u32,
    /// Largest final max|r| / max|b| over the frame's solves (not in stats.csv).
    pub pcg_max_residual: f64,
    /// Pressure solves in the frame that stopped above the tolerance: at max_iterations,
    /// at the end of their queue (`pressure.pipelined`), or on a breakdown.
    pub unconverged_solves: u32,
    /// The mode's own columns.
    #[serde(flatten)]
    pub columns: ModeColumns,
    /// Substeps of the frame whose length surface tension's capillary limit set, not the
    /// speed; None (and no stats.csv column) without surface tension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capillary_substeps: Option<u32>,
    /// The probes' rows of this frame (probes.csv), one per substep or the last one.
    #[serde(skip)]
    pub probes: Vec<crate::sim::core::probes::ProbeRow>,
}

impl FrameStats {
    /// The frame's diffusion solves (viscosity, heat, dye) that stopped above their
    /// tolerance (either mode).
    pub fn diffusion_unconverged(&self) -> u32 {
        match &self.columns {
            ModeColumns::Liquid(l) => l.diffusion_unconverged,
            ModeColumns::Smoke(m) => m.diffusion_unconverged,
        }
    }

    /// Iterations of the frame's viscosity solves (either mode; 0 when inviscid).
    pub fn viscosity_iterations(&self) -> u32 {
        match &self.columns {
            ModeColumns::Liquid(l) => l.viscosity_iterations,
            ModeColumns::Smoke(m) => m.viscosity_iterations,
        }
    }

    /// The liquid's columns, when this is a liquid frame.
    pub fn liquid(&self) -> Option<&LiquidColumns> {
        match &self.columns {
            ModeColumns::Liquid(l) => Some(l),
            ModeColumns::Smoke(_) => None,
        }
    }

    /// The smoke's columns, when this is a smoke frame.
    pub fn smoke(&self) -> Option<&SmokeColumns> {
        match &self.columns {
            ModeColumns::Smoke(m) => Some(m),
            ModeColumns::Liquid(_) => None,
        }
    }
}
