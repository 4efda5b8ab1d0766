//! Hydrostatic pressure: a still pool of depth D = 0.375 m in a 1 m box, its first
//! pressure solve from the jittered seeding. Reference: p = rho g d at depth d below the
//! seeded surface (cell centres). Error: the relative L2 error over every FLUID cell,
//! sqrt(sum (p - rho g d)^2 / sum (rho g d)^2).

use super::{convergence_plot, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{Scene, Shape};
use crate::sim::{liquid::views::Field, Simulation, Stage};
use std::sync::Arc;

/// The pool's depth, m: a whole number of cells on grids of a multiple of 8 cells.
pub const DEPTH: f64 = 0.375;
pub const G: f64 = 9.81;
/// Largest relative L2 error that passes.
pub const TOLERANCE: f64 = 0.03;

/// The pool of the case on an n^3 grid.
pub fn scene(n: u32) -> Scene {
    let mut s = Scene {
        name: "validate: still pool".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (n, n, n),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, DEPTH, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        volume_correction: false,
        ..Scene::default()
    };
    s.pressure.tolerance = 1e-6;
    s
}

/// The pressure of the FLUID cells against rho g d, d = `surface` - the cell centre's y:
/// returns the relative L2 error and the profile (depth of each layer, mean pressure over
/// its FLUID cells), deepest layer first. `types` holds cell types as floats.
pub fn hydrostatic_error(
    p: &[f32],
    types: &[f32],
    n: [u32; 3],
    h: f64,
    surface: f64,
    rho_g: f64,
) -> (f64, Vec<(f64, f64)>) {
    let [nx, ny, nz] = n;
    let fluid = crate::scene::FLUID as f32;
    let (mut num, mut den) = (0.0f64, 0.0f64);
    let mut profile = Vec::new();
    for j in 0..ny {
        let d = surface - (j as f64 + 0.5) * h;
        let (mut sum, mut count) = (0.0f64, 0usize);
        for k in 0..nz {
            for i in 0..nx {
                let c = (i + nx * (j + ny * k)) as usize;
                if types[c] == fluid {
                    let reference = rho_g * d;
                    num += (p[c] as f64 - reference).powi(2);
                    den += reference * reference;
                    sum += p[c] as f64;
                    count += 1;
                }
            }
        }
        if count > 0 {
            profile.push((d, sum / count as f64));
        }
    }
    ((num / den.max(f64::MIN_POSITIVE)).sqrt(), profile)
}

fn sizes(level: Level) -> Vec<u32> {
    match level {
        Level::Quick => vec![8, 16, 24],
        Level::Full => vec![16, 32, 64, 96],
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let sizes = sizes(level);
    let rho_g = crate::sim::DENSITY * G;
    let mut rows = Vec::new();
    let mut conv = Vec::new();
    let mut profiles = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        progress(i as u64, sizes.len() as u64, &format!("{n}^3"));
        let s = scene(n);
        let mut sim = Simulation::new(ctx.clone(), &s)?;
        sim.substep(s.frame_dt, Stage::Pressure)?;
        let p = sim.read_field(Field::Pressure)?.values;
        let types = sim.read_field(Field::CellType)?.values;
        let (err, profile) = hydrostatic_error(&p, &types, s.dims(), s.h(), DEPTH, rho_g);
        // The bottom layer's mean pressure, against rho g d there.
        let (d0, p0) = profile.first().copied().unwrap_or((DEPTH, 0.0));
        rows.push(Row {
            case: "hydrostatic".into(),
            resolution: format!("{n}^3"),
            measured: p0,
            reference: rho_g * d0,
            error: err,
            tolerance: TOLERANCE,
        });
        conv.push((s.h(), err));
        profiles.push((n, profile));
    }
    progress(sizes.len() as u64, sizes.len() as u64, "done");
    let mut series = vec![Series::new(
        "rho g d",
        vec![(0.0, 0.0), (DEPTH, rho_g * DEPTH)],
        Mark::Line,
    )];
    for (n, prof) in &profiles {
        series.push(Series::new(
            format!("eddy {n}^3 (layer means)"),
            prof.clone(),
            Mark::Markers,
        ));
    }
    Ok(CaseReport {
        name: "hydrostatic".into(),
        title: super::CASES[1].title.into(),
        reference: format!(
            "A still pool {DEPTH} m deep in a 1 m box, particles seeded jittered, one substep \
             up to the pressure solve (ghost-fluid free surface, tolerance 1e-6). Reference: \
             p = rho g d, rho = {} kg/m^3, g = {G} m/s^2, d the depth of the cell centre \
             below the seeded surface. Measured: the mean pressure of the bottom layer; \
             error: the relative L2 error over every FLUID cell, passing below {TOLERANCE}.",
            crate::sim::DENSITY
        ),
        rows,
        plots: vec![
            Plot {
                name: "hydrostatic_profile".into(),
                title: "Hydrostatic pressure vs depth".into(),
                x_label: "depth d below the surface (m)".into(),
                y_label: "pressure p (Pa)".into(),
                log_x: false,
                log_y: false,
                series,
            },
            convergence_plot(
                "hydrostatic_convergence",
                "Hydrostatic pressure: error vs grid spacing",
                "relative L2 error of p",
                &conv,
            ),
        ],
        notes: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_of_a_three_cell_column() {
        // h = 1, surface at 3, rho g = 1: references 2.5, 1.5, 0.5; the top cell is 0.5 off.
        let fluid = crate::scene::FLUID as f32;
        let (e, prof) = hydrostatic_error(
            &[2.5, 1.5, 1.0, 9.0],
            &[fluid, fluid, fluid, 0.0],
            [1, 4, 1],
            1.0,
            3.0,
            1.0,
        );
        assert!((e - 0.5 / 8.75f64.sqrt()).abs() < 1e-12, "{e}");
        assert_eq!(prof, vec![(2.5, 2.5), (1.5, 1.5), (0.5, 1.0)]);
    }
}
