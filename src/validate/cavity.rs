//! Lid-driven cavity at Re 100 in the smoke mode: a unit square, the top wall sliding at
//! 1 m/s (`smoke.lid_velocity`), nu = 0.01 m^2/s, run to its steady state; the velocity
//! along the two centre lines against Ghia, Ghia & Shin (1982), "High-Re solutions for
//! incompressible flow using the Navier-Stokes equations and a multigrid method", J.
//! Comput. Phys. 48(3), 387-411, Tables I and II (Re = 100). Error: the largest
//! |u - u_Ghia| (and |v - v_Ghia|) over their interior points, in units of the lid speed.

use super::{convergence_plot, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{PreconditionerKind, Scene, SceneKind};
use crate::sim::smoke::SmokeSimulation;
use std::sync::Arc;

pub const RE: f64 = 100.0;
pub const LID: f64 = 1.0;

/// Ghia et al. (1982), Table I, Re = 100: (y, u) on the vertical centre line x = 0.5.
pub const GHIA_U: [(f64, f64); 17] = [
    (1.0000, 1.00000),
    (0.9766, 0.84123),
    (0.9688, 0.78871),
    (0.9609, 0.73722),
    (0.9531, 0.68717),
    (0.8516, 0.23151),
    (0.7344, 0.00332),
    (0.6172, -0.13641),
    (0.5000, -0.20581),
    (0.4531, -0.21090),
    (0.2813, -0.15662),
    (0.1719, -0.10150),
    (0.1016, -0.06434),
    (0.0703, -0.04775),
    (0.0625, -0.04192),
    (0.0547, -0.03717),
    (0.0000, 0.00000),
];

/// Ghia et al. (1982), Table II, Re = 100: (x, v) on the horizontal centre line y = 0.5.
pub const GHIA_V: [(f64, f64); 17] = [
    (1.0000, 0.00000),
    (0.9688, -0.05906),
    (0.9609, -0.07391),
    (0.9531, -0.08864),
    (0.9453, -0.10313),
    (0.9063, -0.16914),
    (0.8594, -0.22445),
    (0.8047, -0.24533),
    (0.5000, 0.05454),
    (0.2344, 0.17527),
    (0.2266, 0.17507),
    (0.1563, 0.16077),
    (0.0938, 0.12317),
    (0.0781, 0.10890),
    (0.0703, 0.10091),
    (0.0625, 0.09233),
    (0.0000, 0.00000),
];

/// Largest |profile - reference| over the reference's interior points (its two wall points
/// are the boundary conditions), the profile linearly interpolated between its samples.
pub fn profile_error(profile: &[(f64, f64)], reference: &[(f64, f64)]) -> f64 {
    reference
        .iter()
        .filter(|(s, _)| *s > 0.0 && *s < 1.0)
        .map(|&(s, want)| (interpolate(profile, s) - want).abs())
        .fold(0.0, f64::max)
}

/// Linear interpolation in a profile sorted by its first coordinate.
pub fn interpolate(profile: &[(f64, f64)], s: f64) -> f64 {
    let i = profile.partition_point(|p| p.0 < s);
    if i == 0 {
        return profile[0].1;
    }
    if i >= profile.len() {
        return profile[profile.len() - 1].1;
    }
    let (a, b) = (profile[i - 1], profile[i]);
    a.1 + (b.1 - a.1) * (s - a.0) / (b.0 - a.0)
}

/// The u profile along x = 0.5 and the v profile along y = 0.5 of an n x n slice's face
/// velocities (u faces (n+1) x n first, then v faces n x (n+1)), with the walls' values at
/// the ends (u = lid at the top, 0 elsewhere).
pub fn centre_lines(vel: &[f32], n: usize, lid: f64) -> (Vec<(f64, f64)>, Vec<(f64, f64)>) {
    let h = 1.0 / n as f64;
    let half = n / 2;
    let mut u = vec![(0.0, 0.0)];
    for j in 0..n {
        // x = 0.5 is a u-face column for even n; for odd n, the mean of the two nearest.
        let at = |i: usize| vel[i + (n + 1) * j] as f64;
        let v = if n % 2 == 0 {
            at(half)
        } else {
            0.5 * (at(half) + at(half + 1))
        };
        u.push(((j as f64 + 0.5) * h, v));
    }
    u.push((1.0, lid));
    let off = (n + 1) * n;
    let mut v = vec![(0.0, 0.0)];
    for i in 0..n {
        let at = |j: usize| vel[off + i + n * j] as f64;
        let w = if n % 2 == 0 {
            at(half)
        } else {
            0.5 * (at(half) + at(half + 1))
        };
        v.push(((i as f64 + 0.5) * h, w));
    }
    v.push((1.0, 0.0));
    (u, v)
}

struct Sizes {
    grids: Vec<u32>,
    /// Simulated time, s (the steady state sets in over about 10 lid passes).
    t_end: f64,
}

fn sizes(level: Level) -> Sizes {
    match level {
        Level::Quick => Sizes {
            grids: vec![16, 32],
            t_end: 12.0,
        },
        Level::Full => Sizes {
            grids: vec![32, 64, 128],
            t_end: 30.0,
        },
    }
}

/// Tolerance on the largest centre-line error at the finest grid of each level (in units
/// of the lid speed): today's accuracy with a margin, not a theory; the page says so.
pub fn tolerance(level: Level) -> f64 {
    match level {
        Level::Quick => 0.02,
        Level::Full => 0.01,
    }
}

pub fn cavity_scene(n: u32) -> Scene {
    let h = 1.0 / n as f64;
    let mut s = Scene {
        name: "validate: lid-driven cavity".into(),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.0, h),
        resolution: (n, n, 1),
        gravity: (0.0, 0.0, 0.0),
        viscosity: LID / RE,
        frame_dt: 0.1,
        max_substeps: 200,
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Mg;
    s.pressure.tolerance = 1e-6;
    s.smoke.tracers = 0;
    s.smoke.vorticity = 0.0;
    s.smoke.buoyancy = 0.0;
    s.smoke.dye_weight = 0.0;
    s.smoke.temperature_dissipation = 0.0;
    s.smoke.lid_velocity = LID;
    s
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let sz = sizes(level);
    let tol = tolerance(level);
    let finest = *sz.grids.last().expect("grids");
    let mut rows = Vec::new();
    let mut u_series = vec![Series::new(
        "Ghia et al. (1982)",
        GHIA_U.iter().map(|&(y, u)| (u, y)).collect(),
        Mark::Markers,
    )];
    let mut v_series = vec![Series::new(
        "Ghia et al. (1982)",
        GHIA_V.to_vec(),
        Mark::Markers,
    )];
    let mut conv = Vec::new();
    for (k, &n) in sz.grids.iter().enumerate() {
        progress(k as u64, sz.grids.len() as u64, &format!("{n}x{n}"));
        let scene = cavity_scene(n);
        let mut sim = SmokeSimulation::new(ctx.clone(), &scene)?;
        let frames = (sz.t_end / scene.frame_dt).round() as usize;
        for _ in 0..frames {
            sim.step_frame()?;
        }
        let vel = sim.read_velocity()?;
        let (u, v) = centre_lines(&vel, n as usize, LID);
        let eu = profile_error(&u, &GHIA_U.iter().rev().copied().collect::<Vec<_>>());
        let ev = profile_error(&v, &GHIA_V.iter().rev().copied().collect::<Vec<_>>());
        let err = eu.max(ev);
        // Every grid is reported; the finest is held to the tolerance (coarser ones to
        // twice it).
        let t = if n == finest { tol } else { 2.0 * tol };
        for (what, e) in [("u on x = 0.5", eu), ("v on y = 0.5", ev)] {
            rows.push(Row {
                case: "cavity".into(),
                resolution: format!("{n}x{n} {what}"),
                measured: e,
                reference: 0.0,
                error: e,
                tolerance: t,
            });
        }
        conv.push((1.0 / n as f64, err));
        u_series.push(Series::new(
            format!("eddy {n}x{n}"),
            u.iter().map(|&(y, u)| (u, y)).collect(),
            Mark::Line,
        ));
        v_series.push(Series::new(format!("eddy {n}x{n}"), v, Mark::Line));
    }
    let plot = |name: &str, title: &str, x: &str, y: &str, series: Vec<Series>| Plot {
        name: name.into(),
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        log_x: false,
        log_y: false,
        series,
    };
    Ok(CaseReport {
        name: "cavity".into(),
        title: "Lid-driven cavity, Re 100".into(),
        reference: "Ghia, Ghia & Shin (1982), J. Comput. Phys. 48, 387-411, Tables I and II: \
                    u on the vertical and v on the horizontal centre line at Re = 100. Error: \
                    the largest |u - u_Ghia| (and |v - v_Ghia|) over their interior points, in \
                    lid speeds. The tolerance records today's accuracy with a margin (the \
                    finest grid; coarser ones at twice it), not a theory."
            .into(),
        rows,
        plots: vec![
            plot(
                "cavity_u",
                "u along x = 0.5",
                "u / U_lid",
                "y / L",
                u_series,
            ),
            plot(
                "cavity_v",
                "v along y = 0.5",
                "x / L",
                "v / U_lid",
                v_series,
            ),
            convergence_plot(
                "cavity_convergence",
                "Largest centre-line error against the grid spacing",
                "max |error| / U_lid",
                &conv,
            ),
        ],
        notes: vec![format!(
            "Each grid runs {} s of simulated time from rest (about {} lid passes) with \
             MacCormack advection and the implicit viscosity solve; the lid acts through the \
             viscosity's no-slip wall (ghost 2 U - u).",
            sz.t_end,
            sz.t_end.round()
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_lines_read_the_middle_faces_and_the_walls() {
        // n = 2: u faces 3 x 2 (x = 0, 0.5, 1), v faces 2 x 3 (y = 0, 0.5, 1).
        let vel = [
            0.0, 0.25, 0.0, // u, row j = 0 (y = 0.25)
            0.0, 0.75, 0.0, // u, row j = 1 (y = 0.75)
            0.0, 0.0, // v, j = 0
            -0.125, 0.5, // v, j = 1 (y = 0.5)
            0.0, 0.0, // v, j = 2
        ];
        let (u, v) = centre_lines(&vel, 2, 1.0);
        assert_eq!(u, vec![(0.0, 0.0), (0.25, 0.25), (0.75, 0.75), (1.0, 1.0)]);
        assert_eq!(v, vec![(0.0, 0.0), (0.25, -0.125), (0.75, 0.5), (1.0, 0.0)]);
    }

    #[test]
    fn the_error_is_the_largest_gap_at_the_interior_points() {
        let reference = [(0.0, 0.0), (0.5, 1.0), (1.0, 0.0)];
        // A profile through (0.25, 0.5) and (0.75, 0.5): 0.5 at s = 0.5, off by 0.5.
        let profile = [(0.0, 9.0), (0.25, 0.5), (0.75, 0.5), (1.0, 9.0)];
        assert!((profile_error(&profile, &reference) - 0.5).abs() < 1e-12);
        assert_eq!(interpolate(&profile, 0.5), 0.5);
        assert!((interpolate(&profile, 0.125) - 4.75).abs() < 1e-12);
    }

    #[test]
    fn the_tables_run_from_wall_to_wall() {
        assert_eq!(GHIA_U[0], (1.0, 1.0));
        assert_eq!(GHIA_U[16], (0.0, 0.0));
        assert!(GHIA_V.windows(2).all(|w| w[0].0 > w[1].0));
        assert!(GHIA_U.windows(2).all(|w| w[0].0 > w[1].0));
    }
}
