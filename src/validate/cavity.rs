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

/// The same tables at Re = 1000 (u on x = 0.5 at `GHIA_U`'s y, v on y = 0.5 at `GHIA_V`'s x).
pub const GHIA_U_1000: [f64; 17] = [
    1.00000, 0.65928, 0.57492, 0.51117, 0.46604, 0.33304, 0.18719, 0.05702, -0.06080, -0.10648,
    -0.27805, -0.38289, -0.29730, -0.22220, -0.20196, -0.18109, 0.00000,
];
pub const GHIA_V_1000: [f64; 17] = [
    0.00000, -0.21388, -0.27669, -0.33714, -0.39188, -0.51550, -0.42665, -0.31966, 0.02526,
    0.32235, 0.33075, 0.37095, 0.32627, 0.30353, 0.29012, 0.27485, 0.00000,
];

/// A profile: (position along the line, velocity) pairs.
pub type Profile = Vec<(f64, f64)>;

/// Ghia's (u on x = 0.5, v on y = 0.5) profiles at Reynolds number `re` (100 or 1000), each
/// sorted from the wall at 0.
pub fn ghia(re: u32) -> (Profile, Profile) {
    let (u, v): (Profile, Profile) = if re == 1000 {
        (
            GHIA_U
                .iter()
                .zip(GHIA_U_1000)
                .map(|(p, u)| (p.0, u))
                .collect(),
            GHIA_V
                .iter()
                .zip(GHIA_V_1000)
                .map(|(p, v)| (p.0, v))
                .collect(),
        )
    } else {
        (GHIA_U.to_vec(), GHIA_V.to_vec())
    };
    (u.into_iter().rev().collect(), v.into_iter().rev().collect())
}

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
pub fn centre_lines(vel: &[f32], n: usize, lid: f64) -> (Profile, Profile) {
    let h = 1.0 / n as f64;
    let half = n / 2;
    let mut u = vec![(0.0, 0.0)];
    for j in 0..n {
        // x = 0.5 is a u-face column for even n; for odd n, the mean of the two nearest.
        let at = |i: usize| vel[i + (n + 1) * j] as f64;
        let v = if n.is_multiple_of(2) {
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
        let w = if n.is_multiple_of(2) {
            at(half)
        } else {
            0.5 * (at(half) + at(half + 1))
        };
        v.push(((i as f64 + 0.5) * h, w));
    }
    v.push((1.0, 0.0));
    (u, v)
}

/// One cavity run: Reynolds number, grid, simulated time (s), and whether the tolerance
/// holds it (the finest grid of its Re) or twice the tolerance does.
struct Run {
    re: u32,
    n: u32,
    t_end: f64,
    finest: bool,
}

fn runs(level: Level) -> Vec<Run> {
    let r = |re, n, t_end, finest| Run {
        re,
        n,
        t_end,
        finest,
    };
    match level {
        Level::Quick => vec![
            r(100, 16, 12.0, false),
            r(100, 32, 12.0, true),
            r(1000, 32, 30.0, true),
        ],
        Level::Full => vec![
            r(100, 32, 30.0, false),
            r(100, 64, 30.0, false),
            r(100, 128, 30.0, true),
            r(1000, 64, 60.0, false),
            r(1000, 128, 60.0, true),
        ],
    }
}

/// Tolerance on the largest centre-line error of the finest grid of each Re (in lid
/// speeds): today's accuracy with a margin, not a theory; the page says so.
pub fn tolerance(level: Level, re: u32) -> f64 {
    match (level, re) {
        (Level::Quick, 1000) => TOL_1000_QUICK,
        (Level::Quick, _) => 0.02,
        (Level::Full, 1000) => 0.1,
        (Level::Full, _) => 0.01,
    }
}

/// Re 1000 on --quick's 32x32 grid: its boundary layers are a cell or two thick there.
pub const TOL_1000_QUICK: f64 = 0.18;

pub fn cavity_scene(n: u32, re: u32) -> Scene {
    let h = 1.0 / n as f64;
    let mut s = Scene {
        name: "validate: lid-driven cavity".into(),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.0, h),
        resolution: (n, n, 1),
        gravity: (0.0, 0.0, 0.0),
        viscosity: LID / re as f64,
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
    let runs = runs(level);
    let mut rows = Vec::new();
    let mut u_series = Vec::new();
    let mut v_series = Vec::new();
    for re in [100, 1000] {
        let (gu, gv) = ghia(re);
        u_series.push(Series::new(
            format!("Ghia et al. (1982), Re {re}"),
            gu.iter().map(|&(y, u)| (u, y)).collect(),
            Mark::Markers,
        ));
        v_series.push(Series::new(
            format!("Ghia et al. (1982), Re {re}"),
            gv,
            Mark::Markers,
        ));
    }
    let mut conv = Vec::new();
    for (k, run) in runs.iter().enumerate() {
        let (re, n) = (run.re, run.n);
        progress(k as u64, runs.len() as u64, &format!("Re {re} {n}x{n}"));
        let scene = cavity_scene(n, re);
        let mut sim = SmokeSimulation::new(ctx.clone(), &scene)?;
        let frames = (run.t_end / scene.frame_dt).round() as usize;
        for _ in 0..frames {
            sim.step_frame()?;
        }
        let vel = sim.read_velocity()?;
        let (u, v) = centre_lines(&vel, n as usize, LID);
        let (gu, gv) = ghia(re);
        let eu = profile_error(&u, &gu);
        let ev = profile_error(&v, &gv);
        let tol = tolerance(level, re);
        let t = if run.finest { tol } else { 2.0 * tol };
        for (what, e) in [("u on x = 0.5", eu), ("v on y = 0.5", ev)] {
            rows.push(Row {
                case: "cavity".into(),
                resolution: format!("Re {re} {n}x{n} {what}"),
                measured: e,
                reference: 0.0,
                error: e,
                tolerance: t,
            });
        }
        if re == 100 {
            conv.push((1.0 / n as f64, eu.max(ev)));
        }
        u_series.push(Series::new(
            format!("eddy Re {re} {n}x{n}"),
            u.iter().map(|&(y, u)| (u, y)).collect(),
            Mark::Line,
        ));
        v_series.push(Series::new(format!("eddy Re {re} {n}x{n}"), v, Mark::Line));
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
        title: "Lid-driven cavity, Re 100 and 1000".into(),
        reference: "Ghia, Ghia & Shin (1982), J. Comput. Phys. 48, 387-411, Tables I and II: \
                    u on the vertical and v on the horizontal centre line at Re = 100 and \
                    1000. Error: \
                    the largest |u - u_Ghia| (and |v - v_Ghia|) over their interior points, in \
                    lid speeds. The tolerance records today's accuracy with a margin (the \
                    finest grid of each Re; coarser ones at twice it), not a theory."
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
                "Largest centre-line error against the grid spacing, Re 100",
                "max |error| / U_lid",
                &conv,
            ),
        ],
        notes: vec![
            "Each grid runs from rest (12 s at Re 100 on --quick, 30 s at Re 1000: about as \
             many lid passes) with MacCormack advection and the implicit viscosity solve; the \
             lid acts through the viscosity's no-slip wall (ghost 2 U - u)."
                .into(),
        ],
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
        let (u, v) = ghia(1000);
        assert_eq!((u[0], u[16]), ((0.0, 0.0), (1.0, 1.0)));
        assert_eq!(v[8], (0.5, 0.02526));
        assert_eq!(u[5], (0.1719, -0.38289));
    }
}
