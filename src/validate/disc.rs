//! A disc settling at Re 0.02 midway between two walls (the smoke slice; a cylinder in 2D),
//! against Faxen's drag on a cylinder moving parallel to and midway between two plane walls
//! at low Reynolds number: per unit length F = 4 pi mu U / Lambda, with
//! Lambda = ln(l/a) - 0.9157 + 1.7244 k^2 - 1.7302 k^4 + 2.4056 k^6 - 4.5913 k^8, k = a / l,
//! the walls 2 l apart
//! (Faxen 1946, Proc. R. Swed. Inst. Eng. Res. 187; in Happel & Brenner 1965, "Low Reynolds
//! Number Hydrodynamics", section 7-5). In two dimensions there is no Stokes drag without
//! the walls (Stokes' paradox): the walls set the answer, so the case checks the no-slip
//! walls, the disc's surface and the viscous coupling together. The settling speed that
//! balances the weight less the buoyancy, (rho_s - rho) pi a^2 g, is U = (rho_s / rho - 1)
//! g a^2 Lambda / (4 nu).
//!
//! The run: a disc of radius a = 10 mm, 1.5 times the air's density, in a closed channel
//! 10 a wide (k = 0.2) and 30 a tall, released 18 a above the floor, nu = 0.01 m^2/s:
//! U = 9.32 mm/s, Re = U 2a / nu = 0.019. The ends are 1.2 and 1.8 channel widths away,
//! where the channel's Stokes disturbance has decayed (as e^(-4.2 z / 2l)) to under a
//! percent. The substep is the frame's, so nu dt / h^2 is 20 to 80: with the plain split of
//! viscosity and pressure this disc fell at 0.050 m/s, 5.3 times too fast (the smoke's
//! incremental correction, src/sim/core/split.rs).

use super::stokes::{terminal_runs, TerminalBounds};
use super::{CaseReport, Level, Mark, Plot, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{BodyShape, BodySpec, Scene, SceneKind};
use std::sync::Arc;

/// The disc's radius, m.
pub const A: f64 = 0.01;
/// The channel: width (2 l) and height, m.
pub const WIDTH: f64 = 10.0 * A;
pub const HEIGHT: f64 = 30.0 * A;
/// The disc's centre above the floor at release, m.
pub const RELEASE_Y: f64 = 18.0 * A;
/// Kinematic viscosity, m^2/s.
pub const NU: f64 = 0.01;
/// Disc over air density.
pub const RATIO: f64 = 1.5;
/// Frames, s.
const FRAME: f64 = 0.02;
/// The run's length and the window the terminal speed is averaged over, s.
const DURATION: f64 = 0.6;
const WINDOW: f64 = 0.2;

/// The bound on the relative error of the terminal speed at 12 and more cells across the
/// disc: measured on llvmpipe 7% fast at 8 across, 5% at 10, 2.2% at 16, converging: 5%.
pub const TOLERANCE: f64 = 0.05;
/// The same under 12 cells across.
pub const COARSE_TOLERANCE: f64 = 0.10;

/// Faxen's Lambda for a cylinder midway between two walls, `k` = a / l.
pub fn faxen_lambda(k: f64) -> f64 {
    (1.0 / k).ln() - 0.9157 + 1.7244 * k.powi(2) - 1.7302 * k.powi(4) + 2.4056 * k.powi(6)
        - 4.5913 * k.powi(8)
}

/// The settling speed between the walls, m/s.
pub fn reference_speed(g: f64) -> f64 {
    (RATIO - 1.0) * g * A * A * faxen_lambda(2.0 * A / WIDTH) / (4.0 * NU)
}

/// The scene at `n` cells across the channel (n / 5 across the disc).
pub fn scene(n: u32) -> Scene {
    let ny = (n as f64 * HEIGHT / WIDTH).round() as u32;
    let h = WIDTH / n as f64;
    let mut s = Scene {
        name: format!("validate: a disc settling between walls ({n} cells across)"),
        kind: SceneKind::Smoke,
        domain: (WIDTH, HEIGHT, h),
        resolution: (n, ny, 1),
        viscosity: NU,
        bodies: vec![BodySpec::at_rest(
            BodyShape::Sphere { radius: A },
            (0.5 * WIDTH, RELEASE_Y, 0.5 * h),
            RATIO * crate::sim::AIR_DENSITY,
        )],
        frame_dt: FRAME,
        ..Default::default()
    };
    s.smoke.vorticity = 0.0;
    s.smoke.buoyancy = 0.0;
    s.smoke.tracers = 0;
    s.smoke.sources.clear();
    s
}

fn resolutions(level: Level) -> Vec<u32> {
    match level {
        Level::Quick => vec![40, 60],
        Level::Full => vec![40, 60, 80],
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let ns = resolutions(level);
    let reference = reference_speed(-scene(ns[0]).gravity.1);
    let runs: Vec<(Scene, f64)> = ns
        .iter()
        .map(|&n| {
            let s = scene(n);
            let across = 2.0 * A / s.h();
            (s, across)
        })
        .collect();
    let bounds = TerminalBounds {
        fine: 12.0,
        tolerance: TOLERANCE,
        coarse: COARSE_TOLERANCE,
        third: "16 cells across",
    };
    let times = (reference, DURATION, WINDOW);
    let measured = terminal_runs(ctx, "disc", &runs, times, &bounds, progress)?;
    let (rows, mut series) = (measured.rows, measured.series);
    series.push(Series::new(
        "Faxen: a cylinder midway between two walls",
        vec![(0.0, reference), (DURATION, reference)],
        Mark::Line,
    ));
    let notes = vec![measured.order_note];
    Ok(CaseReport {
        name: "disc".into(),
        title: "A disc settling between two walls (slice), against Faxen".into(),
        reference: format!(
            "Faxen's drag on a cylinder midway between two plane walls at low Reynolds \
             number (Faxen 1946; Happel & Brenner 1965, section 7-5), Lambda = {:.4} at a/l \
             = 0.2: a disc of {} mm radius, {RATIO} times the air's density, nu = {NU} \
             m^2/s (Re {:.3}), settling at {:.2} mm/s; the terminal speed (the mean of the \
             last {WINDOW} s of a {DURATION} s run) within {:.0}% at 12 and more cells \
             across the disc.",
            faxen_lambda(0.2),
            1e3 * A,
            reference * 2.0 * A / NU,
            1e3 * reference,
            100.0 * TOLERANCE
        ),
        rows,
        plots: vec![Plot {
            name: "disc_speed".into(),
            title: "Settling speed of the disc".into(),
            x_label: "time (s)".into(),
            y_label: "settling speed (m/s)".into(),
            log_x: false,
            log_y: false,
            series,
        }],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faxen_and_the_scene() {
        // ln 5 - 0.9157 + 1.7244 (0.04) - 1.7302 (0.0016) + ... = 0.76009.
        assert!((faxen_lambda(0.2) - 0.760_09).abs() < 1e-5);
        // 0.5 * 9.81 * 1e-4 * 0.76009 / 0.04 = 9.32 mm/s.
        assert!((reference_speed(9.81) - 0.009_320_6).abs() < 1e-7);
        let s = scene(40);
        assert_eq!(s.resolution, (40, 120, 1));
        assert!((2.0 * A / s.h() - 8.0).abs() < 1e-9);
        s.validate().unwrap();
    }
}
