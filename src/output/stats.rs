//! stats.csv: one row per frame, the columns both modes share and then the mode's own.

use crate::scene::SceneKind;
use crate::sim::{FrameStats, ModeColumns};

const SHARED_HEADER: &str = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x,pcg_iterations_total";
/// stats.csv's header of a liquid run.
pub const LIQUID_CSV_HEADER: &str = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x,pcg_iterations_total,liquid_volume,density_error_max,density_error_mean,volume_iterations,viscosity_iterations,pcg_true_residual,particles_emitted,particles_removed,unconverged_solves,diffusion_unconverged";
/// stats.csv's header of a smoke run.
pub const SMOKE_CSV_HEADER: &str = "frame,time_s,substeps,particles,fluid_cells,pcg_iterations,pcg_residual,max_divergence,kinetic_energy,max_speed,volume,front_x,pcg_iterations_total,dye_total,dye_center_y,enstrophy,viscosity_iterations,pcg_true_residual,unconverged_solves,diffusion_unconverged";
const _: () = {
    let (s, l, m) = (
        SHARED_HEADER.as_bytes(),
        LIQUID_CSV_HEADER.as_bytes(),
        SMOKE_CSV_HEADER.as_bytes(),
    );
    let mut i = 0;
    while i < s.len() {
        assert!(l[i] == s[i] && m[i] == s[i]);
        i += 1;
    }
};

impl FrameStats {
    /// The stats.csv header for a scene of `kind`.
    pub fn csv_header(kind: SceneKind) -> &'static str {
        match kind {
            SceneKind::Liquid => LIQUID_CSV_HEADER,
            SceneKind::Smoke => SMOKE_CSV_HEADER,
        }
    }

    /// The stats.csv header for `scene`: its kind's, and `capillary_substeps` after it
    /// when the scene has surface tension (a scene without keeps the header it had).
    pub fn csv_header_for(scene: &crate::scene::Scene) -> String {
        let mut h = Self::csv_header(scene.kind).to_string();
        if scene.surface_tension > 0.0 {
            h.push_str(",capillary_substeps");
        }
        h
    }

    pub fn csv_row(&self) -> String {
        let shared = format!(
            "{},{:.6},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.6},{:.6e},{:.6},{}",
            self.frame,
            self.time_s,
            self.substeps,
            self.particles,
            self.fluid_cells,
            self.pcg_iterations,
            self.pcg_residual,
            self.max_divergence,
            self.kinetic_energy,
            self.max_speed,
            self.volume,
            self.front_x,
            self.pcg_iterations_total,
        );
        let row = match &self.columns {
            ModeColumns::Liquid(l) => format!(
                "{shared},{:.6e},{:.4},{:.4},{},{},{:.6e},{},{},{},{}",
                l.liquid_volume,
                l.density_error_max,
                l.density_error_mean,
                l.volume_iterations,
                l.viscosity_iterations,
                self.pcg_true_residual,
                l.particles_emitted,
                l.particles_removed,
                self.unconverged_solves,
                l.diffusion_unconverged
            ),
            ModeColumns::Smoke(m) => format!(
                "{shared},{:.9e},{:.6},{:.6e},{},{:.6e},{},{}",
                m.dye_total,
                m.dye_center_y,
                m.enstrophy,
                m.viscosity_iterations,
                self.pcg_true_residual,
                self.unconverged_solves,
                m.diffusion_unconverged
            ),
        };
        match self.capillary_substeps {
            Some(n) => format!("{row},{n}"),
            None => row,
        }
    }
}
