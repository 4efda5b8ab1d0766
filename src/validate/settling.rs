//! A sphere settling in a viscous liquid, against experiment: ten Cate, Nieuwstad,
//! Derksen & Van den Akker (2002), "Particle imaging velocimetry experiments and
//! lattice-Boltzmann simulations on a single sphere settling under gravity", Phys. Fluids
//! 14, 4012, case E1: a 15 mm nylon sphere (1120 kg/m^3) released from rest in silicone
//! oil (970 kg/m^3, 0.373 Pa s) filling a 100 x 160 x 100 mm box, Re 1.5 at its terminal
//! speed. eddy's liquid is 1000 kg/m^3: the run keeps the density ratio (1.155) and the
//! kinematic viscosity (3.85e-4 m^2/s), which set the motion.
//!
//! Measured in the experiment (PIV): 0.013 m/s at 0.05 s, 0.033 m/s at 0.38 s, a terminal
//! speed of 0.038 m/s. Most of the drag at Re 1.5 is viscous (Stokes: two thirds of it is
//! the shear stress), so the case checks that the bodies feel the liquid's viscous stress
//! (src/sim/bodies/viscous.rs): with the pressure alone the same run settled at 0.10 m/s.
//! The measurement: the sphere's settling speed at 0.38 s (the mean over the frames within
//! 0.02 s of it), against 0.033 m/s. `--full` also runs the paper's other three liquids
//! (E2-E4, Re 4.1 to 31.9) for 1 s each and compares each run's terminal speed (its
//! largest three-frame mean) with the measured one.

use super::{CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{BodyShape, BodySpec, Scene, Shape};
use std::sync::Arc;

/// The box, m.
pub const BOX: [f64; 3] = [0.1, 0.16, 0.1];
/// The sphere's radius, m.
pub const RADIUS: f64 = 0.0075;
/// Its centre at release (its bottom 120 mm above the floor), m.
pub const RELEASE_Y: f64 = 0.1275;
/// The sphere's density, kg/m^3.
pub const SPHERE_DENSITY: f64 = 1120.0;
/// The paper's liquids: name, density (kg/m^3), dynamic viscosity (Pa s), the measured
/// terminal speed (m/s) and Reynolds number.
pub const LIQUIDS: [(&str, f64, f64, f64, f64); 4] = [
    ("E1", 970.0, 0.373, 0.038, 1.5),
    ("E2", 965.0, 0.212, 0.060, 4.1),
    ("E3", 962.0, 0.113, 0.091, 11.6),
    ("E4", 960.0, 0.058, 0.128, 31.9),
];
/// E1's density ratio sphere / liquid (1120 / 970).
pub const RATIO: f64 = SPHERE_DENSITY / 970.0;
/// E1's kinematic viscosity, m^2/s (0.373 Pa s / 970 kg/m^3).
pub const NU: f64 = 0.373 / 970.0;
/// The experiment's settling speeds (s, m/s) and its terminal speed.
pub const MEASURED: [(f64, f64); 2] = [(0.05, 0.013), (0.38, 0.033)];
pub const TERMINAL: f64 = 0.038;
/// When the speed is compared, s.
pub const AT: f64 = 0.38;
/// Frames, s.
const FRAME: f64 = 0.02;

/// The bound on the relative error of the speed at 0.38 s at 6 cells across the sphere (40 x
/// 64 x 40, `--quick`'s run): measured 21% slow on llvmpipe (0.026 m/s), 16% slow at 7.5
/// cells across (0.0275): it converges from below, slowly: 25%. Before the viscosity's
/// incremental pressure correction (src/sim/core/split.rs) it read 0.034, the split's error
/// hiding the rest, and it accelerated half again too fast early on (0.020 m/s at 0.05
/// s, measured 0.013; now 0.013).
///
/// What is known of the rest: it is consistent with first-order convergence in the cell
/// size, as a stair-stepped surface's error is: extrapolated to h = 0 as c0 + c1 h, the
/// speeds at 6 and 7.5 cells across give 0.0331 m/s (measured 0.033). The sphere's drag is
/// too high, not its approach to it (run on, it settles near 0.029 m/s at 6 cells against
/// the measured terminal 0.038; at 0.6 s the viscous part is 1.8 times the pressure's,
/// Stokes' 2). Ruled out: the substep (a 4x shorter one moved the speed under 2%), the 5%
/// PIC (pure FLIP under 1%), the particles' push-out (under 2% of the drag), and the box
/// (twice as wide, the speed at 0.38 s is 0.028 instead of 0.026). Not yet in: the
/// pressure's volume fractions (the pressure sees the faces the sphere covers).
pub const TOLERANCE: f64 = 0.25;

/// The same bound under 6 cells across the sphere.
pub const COARSE_TOLERANCE: f64 = 0.35;

/// The bound on the relative error of a terminal speed (`--full`, at 6 cells across the
/// sphere; not yet run there for E2-E4): at 4.5 cells across E4 (Re 32) settled at 0.088
/// m/s against 0.128, 31% slow, its shear layer d / sqrt(Re) under a cell; E1's is 4.9 cells
/// thick at 6 across.
pub const TERMINAL_TOLERANCE: f64 = 0.35;

pub fn scene(n: u32) -> Scene {
    scene_in(n, 0)
}

/// The scene with liquid `liquid` of [`LIQUIDS`].
pub fn scene_in(n: u32, liquid: usize) -> Scene {
    let (name, rho, mu, _, _) = LIQUIDS[liquid];
    let ny = (n as f64 * BOX[1] / BOX[0]).round() as u32;
    Scene {
        name: format!("validate: settling sphere (ten Cate et al. 2002, {name})"),
        domain: (BOX[0], BOX[1], BOX[2]),
        resolution: (n, ny, n),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (BOX[0], BOX[1], BOX[2]),
            velocity: (0.0, 0.0, 0.0),
        }],
        viscosity: mu / rho,
        bodies: vec![BodySpec::at_rest(
            BodyShape::Sphere { radius: RADIUS },
            (0.5 * BOX[0], RELEASE_Y, 0.5 * BOX[2]),
            SPHERE_DENSITY / rho * crate::sim::DENSITY,
        )],
        frame_dt: FRAME,
        ..Default::default()
    }
}

/// The mean settling speed (m/s, downward positive) of the frames whose middles lie within
/// a frame of `at`, from a history of (time, frame-mean speed): with the frames' middles
/// at 0.37 and 0.39 s, the displacement over 0.36-0.40 s for 0.38 s.
pub fn speed_at(history: &[(f64, f64)], at: f64) -> Option<f64> {
    let near: Vec<f64> = history
        .iter()
        .filter(|(t, _)| (t - at).abs() <= FRAME + 1e-9)
        .map(|&(_, v)| v)
        .collect();
    (!near.is_empty()).then(|| near.iter().sum::<f64>() / near.len() as f64)
}

/// The terminal speed of a run: its largest mean over three frames in a row.
pub fn terminal_speed(history: &[(f64, f64)]) -> Option<f64> {
    history
        .windows(3)
        .map(|w| w.iter().map(|p| p.1).sum::<f64>() / 3.0)
        .reduce(f64::max)
}

/// The runs: cells across the box, the liquid, and how long, s.
fn runs(level: Level) -> Vec<(u32, usize, f64)> {
    match level {
        Level::Quick => vec![(40, 0, AT + 2.0 * FRAME)],
        Level::Full => (0..LIQUIDS.len()).map(|l| (40, l, 1.0)).collect(),
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let runs = runs(level);
    let frames_of = |t: f64| (t / FRAME).round() as u64;
    let total: u64 = runs.iter().map(|r| frames_of(r.2)).sum();
    let mut done = 0;
    let mut rows = Vec::new();
    let mut series = vec![Series::new(
        "ten Cate et al. (2002), E1, PIV",
        MEASURED.to_vec(),
        Mark::Markers,
    )];
    let mut terminal = vec![Series::new(
        "ten Cate et al. (2002), terminal",
        LIQUIDS.iter().map(|l| (l.4, l.3)).collect(),
        Mark::Markers,
    )];
    let mut eddy_terminal: Vec<(u32, Vec<(f64, f64)>)> = Vec::new();
    for &(n, liquid, duration) in &runs {
        let (name, _, _, u_inf, re) = LIQUIDS[liquid];
        let s = scene_in(n, liquid);
        let across = 2.0 * RADIUS / s.h();
        let label = format!(
            "{name} {n}x{}x{n} ({across:.1} cells across)",
            s.resolution.1
        );
        let history = super::settling_history(
            ctx,
            &s,
            frames_of(duration),
            (&mut *progress, &mut done, total, &label),
        )?;
        if liquid == 0 {
            let measured = speed_at(&history, AT).unwrap_or(f64::NAN);
            let reference = MEASURED[1].1;
            rows.push(Row {
                case: "settling".into(),
                resolution: format!("{label} speed at {AT} s"),
                measured,
                reference,
                error: (measured - reference).abs() / reference,
                tolerance: if across >= 6.0 - 1e-9 {
                    TOLERANCE
                } else {
                    COARSE_TOLERANCE
                },
            });
        }
        if duration >= 1.0 {
            let measured = terminal_speed(&history).unwrap_or(f64::NAN);
            rows.push(Row {
                case: "settling".into(),
                resolution: format!("{label} terminal speed"),
                measured,
                reference: u_inf,
                error: (measured - u_inf).abs() / u_inf,
                tolerance: TERMINAL_TOLERANCE,
            });
            match eddy_terminal.iter_mut().find(|(m, _)| *m == n) {
                Some((_, pts)) => pts.push((re, measured)),
                None => eddy_terminal.push((n, vec![(re, measured)])),
            }
        }
        series.push(Series::new(
            format!("eddy, {label}"),
            history,
            Mark::MarkersLine,
        ));
    }
    progress(total, total, "done");
    let mut plots = vec![Plot {
        name: "settling_speed".into(),
        title: "Settling speed of the sphere".into(),
        x_label: "time (s)".into(),
        y_label: "settling speed (m/s)".into(),
        log_x: false,
        log_y: false,
        series,
    }];
    if !eddy_terminal.is_empty() {
        for (n, pts) in eddy_terminal {
            terminal.push(Series::new(
                format!("eddy, {n} cells across the box"),
                pts,
                Mark::MarkersLine,
            ));
        }
        plots.push(Plot {
            name: "settling_terminal".into(),
            title: "Terminal speed against the Reynolds number (ten Cate E1-E4)".into(),
            x_label: "Reynolds number (measured)".into(),
            y_label: "terminal speed (m/s)".into(),
            log_x: true,
            log_y: false,
            series: terminal,
        });
    }
    Ok(CaseReport {
        name: "settling".into(),
        title: "A sphere settling in a viscous liquid, against ten Cate et al. (2002)".into(),
        reference: format!(
            "ten Cate, Nieuwstad, Derksen & Van den Akker, Phys. Fluids 14, 4012 (2002): a 15 \
             mm sphere of {SPHERE_DENSITY} kg/m^3 released from rest in silicone oils filling \
             a 100 x 160 x 100 mm box (eddy keeps each oil's density ratio and kinematic \
             viscosity). E1 (Re 1.5): the settling speed at {AT} s, the mean of the frames \
             within {FRAME} s of it, against the PIV's 0.033 m/s ({:.0}%). `--full`: E1-E4 (Re \
             1.5-31.9) for 1 s each, the terminal speed (largest three-frame mean) against the \
             measured ones ({:.0}%).",
            100.0 * TOLERANCE,
            100.0 * TERMINAL_TOLERANCE
        ),
        rows,
        plots,
        notes: vec![
            "The viscosity step puts the sphere's no-slip surface where it is between the \
             faces (ghost fluid); the pressure still sees the faces it covers. The early \
             acceleration matches the PIV (0.013 m/s at 0.05 s at 6 cells across). E1's \
             speed at 0.38 s converges from below, slowly: 0.026 m/s at 6 cells across, \
             0.0275 at 7.5 (measured 0.033), which extrapolate to 0.0331 if the error is \
             first order in the cell size, as a stair-stepped surface's is. \
             Before the viscosity's incremental pressure correction it read 0.034 at 6 \
             cells, the split's error hiding this, and accelerated too fast early on (0.020 \
             m/s at 0.05 s)."
                .into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_at_takes_the_frames_near_the_time() {
        let h = [
            (0.34, 1.0),
            (0.36, 2.0),
            (0.38, 3.0),
            (0.40, 4.0),
            (0.42, 5.0),
        ];
        assert!((speed_at(&h, 0.38).unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(speed_at(&h, 2.0), None);
        // The terminal speed: the largest mean of three frames in a row.
        assert!((terminal_speed(&h).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(terminal_speed(&h[..2]), None);
        // E4's liquid: its density ratio and viscosity.
        let e4 = scene_in(40, 3);
        assert!((e4.viscosity - 0.058 / 960.0).abs() < 1e-12);
        assert!((e4.bodies[0].density - 1120.0 / 960.0 * 1000.0).abs() < 1e-9);
        // The scene keeps the box's aspect: 160 / 100 of the cells along y.
        assert_eq!(scene(40).resolution, (40, 64, 40));
        assert!((2.0 * RADIUS / scene(40).h() - 6.0).abs() < 1e-9);
    }
}
