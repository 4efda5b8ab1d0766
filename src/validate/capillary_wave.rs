//! Capillary waves: the standing modes of a thin layer of water held by surface tension
//! alone (no gravity), in a slice 1 cm wide with free-slip walls. The layer starts at rest
//! with its surface at depth + A cos(m pi x / L) (each column of seeded particles
//! stretched), k A = 0.1, and the mode's amplitude is followed from the columns' particle
//! heights, as the standing-wave case does with gravity. Reference: the dispersion relation
//! of capillary waves, omega^2 = (sigma / rho) k^3 tanh(k d) (Lamb, "Hydrodynamics", 1932,
//! sec. 267; on deep water sigma k^3 / rho), k = m pi / L. The layer is half a width deep
//! (tanh(k d) = 0.917 for the first mode, 0.996 for the second). The two modes check the
//! k^3 law, the resolutions the convergence.
//!
//! The liquid is water (nu 1e-6 m^2/s): nu k^2 / omega is under 0.01 for the modes run,
//! so the viscosity moves the frequency by less than a part in 10^4. Ten times water's
//! viscosity made the periods worse, not better (measured: the third mode 6% short and
//! the second at 16 cells per wavelength 10% short, against 0.04% and 0.5% with water's):
//! the viscosity solve's free-surface condition and the surface tension's jump are not
//! solved together, which is an open item. The amplitude decays 5-20 times faster than
//! the viscous 2 nu k^2 (Lamb, sec. 348); the decay measured is reported.

use super::{convergence_plot, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::bench::transfer::{mode_amplitude, oscillation};
use crate::gpu::GpuContext;
use crate::scene::{PreconditionerKind, Scene, Shape};
use crate::sim::Simulation;
use std::f64::consts::PI;
use std::sync::Arc;

/// The tank's width, the layer's depth and the domain's height, m.
pub const WIDTH: f64 = 0.01;
pub const DEPTH: f64 = 0.5 * WIDTH;
const HEIGHT: f64 = 0.75 * WIDTH;
/// Water's surface tension, N/m, and kinematic viscosity, m^2/s.
pub const SIGMA: f64 = 0.072;
pub const NU: f64 = 1e-6;
/// The initial amplitude times the wavenumber (linear waves).
pub const KA: f64 = 0.1;
/// Periods run, and frames per period.
const PERIODS: f64 = 3.0;
const FRAMES_PER_PERIOD: f64 = 40.0;
/// The bound on |period / theory - 1|, the 5%. Measured on llvmpipe at 24 cells
/// per wavelength: mode 1 2.8% short, mode 2 2.5% long, mode 3 0.04% short, mode 4 4.0%
/// long; the second mode at 16, 32 and 48 cells per wavelength 0.5%, 2.7% and 0.8% long.
pub const TOLERANCE: f64 = 0.05;

/// Cells across the tank and the mode, by level: the modes at 24 cells per wavelength
/// (the dispersion relation), then the second mode at 16 and 32 (the convergence).
fn runs(level: Level) -> Vec<(u32, u32)> {
    match level {
        Level::Quick => vec![(12, 1), (24, 2), (36, 3), (16, 2), (32, 2)],
        Level::Full => vec![
            (12, 1),
            (24, 2),
            (36, 3),
            (48, 4),
            (16, 2),
            (32, 2),
            (48, 2),
        ],
    }
}

/// The runs at 24 cells per wavelength, where the modes are compared with each other.
fn on_dispersion(n: u32, mode: u32) -> bool {
    2 * n / mode == 24
}

/// The wavenumber of mode `m`, 1/m.
pub fn wavenumber(mode: u32) -> f64 {
    mode as f64 * PI / WIDTH
}

/// The period of mode `m` by the dispersion relation, s.
pub fn theory_period(mode: u32) -> f64 {
    let k = wavenumber(mode);
    let omega2 = SIGMA / crate::sim::DENSITY * k.powi(3) * (k * DEPTH).tanh();
    2.0 * PI / omega2.sqrt()
}

/// The layer at rest, `n` cells across, frames of a fortieth of mode `mode`'s period.
pub fn scene(n: u32, mode: u32) -> Scene {
    let h = WIDTH / n as f64;
    let ny = (HEIGHT / h).round() as u32;
    let mut s = Scene {
        name: format!("validate: capillary wave, mode {mode}, {n} cells across"),
        domain: (WIDTH, ny as f64 * h, h),
        resolution: (n, ny, 1),
        gravity: (0.0, 0.0, 0.0),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (WIDTH, DEPTH, h),
            velocity: (0.0, 0.0, 0.0),
        }],
        viscosity: NU,
        surface_tension: SIGMA,
        frame_dt: theory_period(mode) / FRAMES_PER_PERIOD,
        max_substeps: 64,
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Mg;
    s
}

/// One run's measurements: the amplitude over time (m), the period (s) and the amplitude's
/// decay rate (1/s) from the first and the last extremum.
struct Wave {
    series: Vec<(f64, f64)>,
    period: f64,
    decay: f64,
}

fn wave(
    ctx: &Arc<GpuContext>,
    n: u32,
    mode: u32,
    progress: &mut dyn FnMut(&str),
) -> Result<Wave, ValidateError> {
    let s = scene(n, mode);
    let mut sim = Simulation::new(ctx.clone(), &s)?;
    let (mut pos, vel) = sim.read_particles()?;
    let k = wavenumber(mode);
    for p in pos.iter_mut() {
        let eta = KA / k * (k * p[0] as f64).cos();
        p[1] = (p[1] as f64 * (1.0 + eta / DEPTH)) as f32;
    }
    sim.upload_particles(&pos, &vec![[0.0f32; 4]; vel.len()])?;
    let amplitude = |p: &[[f32; 4]]| mode_amplitude(p, n, WIDTH, DEPTH, mode);
    let mut series = vec![(0.0, amplitude(&pos))];
    let end = PERIODS * theory_period(mode);
    while sim.time < end {
        progress(&format!("mode {mode}, {n} cells across"));
        sim.step_frame()?;
        let (p, _) = sim.read_particles()?;
        series.push((sim.time, amplitude(&p)));
    }
    let (period, extrema) = oscillation(&series);
    let decay = match extrema.len() {
        0 | 1 => f64::NAN,
        m => -(extrema[m - 1].abs() / extrema[0].abs()).ln() / ((m - 1) as f64 * 0.5 * period),
    };
    Ok(Wave {
        series,
        period,
        decay,
    })
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let runs = runs(level);
    let total = runs.len() as u64 * ((PERIODS * FRAMES_PER_PERIOD) as u64 + 1);
    let mut done = 0;
    let (mut rows, mut notes, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    let (mut histories, mut measured_omega) = (Vec::new(), Vec::new());
    for &(n, mode) in &runs {
        let theory = theory_period(mode);
        let w = wave(ctx, n, mode, &mut |label| {
            progress(done, total, label);
            done += 1;
        })?;
        let error = (w.period / theory - 1.0).abs();
        if mode == 2 {
            errors.push(((2 * n / mode) as f64, error));
        }
        if on_dispersion(n, mode) {
            let k = wavenumber(mode);
            measured_omega.push((k, 2.0 * PI / w.period));
        }
        rows.push(Row {
            case: "capillary_wave".into(),
            resolution: format!(
                "mode {mode}, {n} cells across ({} per wavelength), period (s)",
                2 * n / mode
            ),
            measured: w.period,
            reference: theory,
            error,
            tolerance: TOLERANCE,
        });
        let k = wavenumber(mode);
        notes.push(format!(
            "Mode {mode}, {n} cells across: period {:.4} s against {theory:.4} ({:+.2}%); the \
             amplitude decays at {:.2} 1/s (2 nu k^2 = {:.2}).",
            w.period,
            100.0 * (w.period / theory - 1.0),
            w.decay,
            2.0 * NU * k * k
        ));
        let a0 = KA / k;
        histories.push(Series::new(
            format!("eddy, mode {mode}, {n} cells"),
            w.series
                .iter()
                .map(|&(t, a)| (t / theory, a / a0))
                .collect(),
            Mark::Line,
        ));
    }
    progress(total, total, "done");
    if let Some((p, _)) = super::fitted_order(&errors) {
        let listed: Vec<String> = errors
            .iter()
            .map(|(n, e)| format!("{:.1}% at {n}", 100.0 * e))
            .collect();
        notes.push(format!(
            "The second mode's period error by cells per wavelength: {}; a fitted order of \
             {p:.2}, but it does not fall steadily. The wave's curvature is small on the grid \
             (k A k h = 0.04 at 16 cells per wavelength, 0.013 at 48: a hundredth of a cell \
             between neighbouring columns' heights), where the particles' jitter in the \
             heights counts.",
            listed.join(", ")
        ));
    }
    let samples = (PERIODS * 100.0) as usize;
    histories.insert(
        0,
        Series::new(
            "linear theory, cos(omega t)",
            (0..=samples)
                .map(|i| {
                    let x = i as f64 / 100.0;
                    (x, (2.0 * PI * x).cos())
                })
                .collect(),
            Mark::Line,
        ),
    );
    Ok(CaseReport {
        name: "capillary_wave".into(),
        title: "Capillary waves: the dispersion relation".into(),
        reference: format!(
            "Capillary waves without gravity, omega^2 = (sigma / rho) k^3 tanh(k d) (Lamb 1932, \
             sec. 267): a layer {} mm deep in a slice {} mm wide (sigma {SIGMA} N/m, nu {NU} \
             m^2/s), started at rest with k A = {KA}; the first mode's period {:.4} s, the \
             second's {:.4} s; each within {:.0}%.",
            1e3 * DEPTH,
            1e3 * WIDTH,
            theory_period(1),
            theory_period(2),
            100.0 * TOLERANCE
        ),
        rows,
        plots: vec![
            Plot {
                name: "capillary_wave_amplitude".into(),
                title: "The mode's amplitude over its initial value".into(),
                x_label: "t / T (linear theory)".into(),
                y_label: "a / a0".into(),
                log_x: false,
                log_y: false,
                series: histories,
            },
            Plot {
                name: "capillary_wave_dispersion".into(),
                title: "Dispersion: angular frequency against wavenumber, 24 cells per wavelength"
                    .into(),
                x_label: "k (1/m)".into(),
                y_label: "omega (rad/s)".into(),
                log_x: true,
                log_y: true,
                series: vec![
                    Series::new(
                        "omega^2 = (sigma / rho) k^3 tanh(k d)",
                        (0..=40)
                            .map(|i| {
                                let k = wavenumber(1) * (1.0 + 4.0 * i as f64 / 40.0);
                                let w2 =
                                    SIGMA / crate::sim::DENSITY * k.powi(3) * (k * DEPTH).tanh();
                                (k, w2.sqrt())
                            })
                            .collect(),
                        Mark::Line,
                    ),
                    Series::new("eddy", measured_omega, Mark::Markers),
                ],
            },
            convergence_plot(
                "capillary_wave_convergence",
                "Capillary wave, second mode: period error against cells per wavelength",
                "|T / T_theory - 1|",
                &errors,
            ),
        ],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenes_are_valid_and_the_periods_follow_k_to_the_three_halves() {
        for (n, mode) in runs(Level::Full) {
            let s = scene(n, mode);
            s.validate().unwrap();
            assert_eq!(s.resolution.2, 1);
            assert!((s.h() - WIDTH / n as f64).abs() < 1e-12);
        }
        // omega^2 = sigma k^3 tanh(k d) / rho, by hand for the first mode: k = 314.16 1/m,
        // tanh(pi / 2) = 0.91715, omega^2 = 0.072e-3 * 31006277 * 0.91715 = 2047.4.
        let t1 = theory_period(1);
        assert!((t1 - 2.0 * PI / 2047.4f64.sqrt()).abs() < 1e-4, "{t1}");
        // Twice the wavenumber: 2^(3/2) times the frequency, less the depth's share.
        let ratio = t1 / theory_period(2);
        let depth = ((2.0 * PI / 2.0).tanh() / (PI / 2.0).tanh()).sqrt();
        assert!((ratio - 2f64.powf(1.5) * depth).abs() < 1e-9);
    }
}
