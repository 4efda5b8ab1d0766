//! Viscous decay: the velocity mode u = sin(pi x/Lx) sin(pi y/Ly) [sin(pi z/Lz)] of a
//! closed box (the walls hold it exactly) decays as exp(-nu k^2 t), k^2 = pi^2 sum 1/L^2.
//! The smoke slice and the liquid's 3D box, each diffused alone (backward Euler, the
//! implicit viscosity solve) over steps small enough that the time error (nu k^2 dt / 2,
//! relative) stays below 1e-3 of the rate. Error: |measured rate / nu k^2 - 1|.

use super::{convergence_plot, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::{read_buffer, GpuContext};
use crate::scene::{PreconditionerKind, Scene, SceneKind, Shape};
use crate::sim::{
    smoke::{SmokeSimulation, SmokeStage},
    Simulation, Stage,
};
use std::f64::consts::PI;
use std::sync::Arc;

pub const NU: f64 = 0.01;
/// nu k^2 t at the end of each run: the amplitude falls to exp(-0.2).
pub const DECAY: f64 = 0.2;
pub const TOLERANCE: f64 = 0.02;

/// Amplitude of `field` along `mode` (least squares over the listed entries).
pub fn amplitude(field: &[f64], mode: &[(usize, f64)]) -> f64 {
    let num: f64 = mode.iter().map(|&(i, m)| field[i] * m).sum();
    let den: f64 = mode.iter().map(|&(_, m)| m * m).sum();
    num / den
}

/// Decay rate from two amplitudes `t` apart: -ln(a1/a0)/t.
pub fn decay_rate(a0: f64, a1: f64, t: f64) -> f64 {
    -(a1 / a0).ln() / t
}

/// The u-face entries (index, mode value) of the mode on an nx x ny x nz grid of spacing h
/// (nz = 1: the slice, no z factor). u faces are (nx+1) x ny x nz, first in the velocity
/// buffer.
pub fn u_mode(n: [usize; 3], h: f64) -> Vec<(usize, f64)> {
    let [nx, ny, nz] = n;
    let l = [nx as f64 * h, ny as f64 * h, nz as f64 * h];
    let mut out = Vec::new();
    for k in 0..nz {
        for j in 0..ny {
            for i in 1..nx {
                let x = [i as f64 * h, (j as f64 + 0.5) * h, (k as f64 + 0.5) * h];
                let mut m = (PI * x[0] / l[0]).sin() * (PI * x[1] / l[1]).sin();
                if nz > 1 {
                    m *= (PI * x[2] / l[2]).sin();
                }
                out.push((i + (nx + 1) * (j + ny * k), m));
            }
        }
    }
    out
}

fn faces(n: [usize; 3]) -> usize {
    let [nx, ny, nz] = n;
    (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1)
}

struct Sizes {
    slice: Vec<u32>,
    box3d: Vec<u32>,
    steps: usize,
    /// Steps of the 3D runs.
    steps3d: usize,
}

fn sizes(level: Level) -> Sizes {
    match level {
        Level::Quick => Sizes {
            slice: vec![8, 16, 32],
            box3d: vec![8, 12, 16],
            steps: 400,
            steps3d: 120,
        },
        Level::Full => Sizes {
            slice: vec![16, 32, 64, 128],
            box3d: vec![16, 24, 32, 48],
            steps: 2000,
            steps3d: 1000,
        },
    }
}

/// One run: amplitudes at every step (time, A/A0).
fn history(
    mut step: impl FnMut() -> Result<Vec<f32>, ValidateError>,
    mode: &[(usize, f64)],
    a0: f64,
    dt: f64,
    steps: usize,
) -> Result<Vec<(f64, f64)>, ValidateError> {
    let mut out = vec![(0.0, 1.0)];
    for s in 1..=steps {
        let v: Vec<f64> = step()?.iter().map(|&x| x as f64).collect();
        out.push((s as f64 * dt, amplitude(&v, mode) / a0));
    }
    Ok(out)
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let sz = sizes(level);
    let total = (sz.slice.len() + sz.box3d.len()) as u64;
    let mut done = 0;
    let mut rows = Vec::new();
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut conv_slice = Vec::new();
    let mut conv_box = Vec::new();
    let mut t_end = 0.0;
    for &n in &sz.slice {
        progress(done, total, &format!("slice {n}x{n}"));
        let Decay { h, exact, t, hist } = run_slice(ctx, n, sz.steps)?;
        t_end = t;
        let rate = decay_rate(1.0, hist.last().unwrap().1, t);
        let err = (rate / exact - 1.0).abs();
        rows.push(Row {
            case: "viscous".into(),
            resolution: format!("slice {n}x{n}"),
            measured: rate,
            reference: exact,
            error: err,
            tolerance: TOLERANCE,
        });
        conv_slice.push((h, err));
        curves.push((format!("slice {n}x{n}"), hist));
        done += 1;
    }
    for &n in &sz.box3d {
        progress(done, total, &format!("liquid {n}^3"));
        let Decay { h, exact, t, hist } = run_box(ctx, n, sz.steps3d)?;
        let rate = decay_rate(1.0, hist.last().unwrap().1, t);
        let err = (rate / exact - 1.0).abs();
        rows.push(Row {
            case: "viscous".into(),
            resolution: format!("liquid {n}^3"),
            measured: rate,
            reference: exact,
            error: err,
            tolerance: TOLERANCE,
        });
        conv_box.push((h, err));
        curves.push((format!("liquid {n}^3"), hist));
        done += 1;
    }
    progress(done, total, "done");
    let series = decay_series(&curves);
    let _ = t_end;
    let conv = convergence(&conv_slice, &conv_box);
    Ok(CaseReport {
        name: "viscous".into(),
        title: super::CASES[2].title.into(),
        reference: format!(
            "The mode u = sin(pi x/L) sin(pi y/L) [sin(pi z/L)] of a closed 1 m box, nu = {NU} \
             m^2/s, diffused alone by the implicit viscosity solve (smoke slice: the diffusion \
             stage; liquid: a box full of liquid, the viscosity stage) until nu k^2 t = \
             {DECAY}, in {} steps (slice) and {} (3D). Reference: exp(-nu k^2 t), k^2 = 2 pi^2/L^2 in the slice, \
             3 pi^2/L^2 in 3D. Measured: the decay rate -ln(A(t)/A(0))/t of the mode's least \
             squares amplitude; error |rate/(nu k^2) - 1|, passing below {TOLERANCE}. The \
             second-order spatial error is the discrete Laplacian's (pi h/L)^2/12 per axis.",
            sz.steps,
            sz.steps3d
        ),
        rows,
        plots: vec![
            Plot {
                name: "viscous_decay".into(),
                title: "Viscous decay of a velocity mode".into(),
                x_label: "nu k^2 t (dimensionless time)".into(),
                y_label: "mode amplitude A(t) / A(0)".into(),
                log_x: false,
                log_y: false,
                series,
            },
            conv,
        ],
        notes: vec![],
    })
}

/// One run's result: its grid spacing, the exact rate nu k^2, its length (s) and its
/// amplitudes at every step (time, A/A0).
struct Decay {
    h: f64,
    exact: f64,
    t: f64,
    hist: Vec<(f64, f64)>,
}

/// The smoke slice of n x n cells: the mode diffused alone by the diffusion stage over
/// `steps` steps.
fn run_slice(ctx: &Arc<GpuContext>, n: u32, steps: usize) -> Result<Decay, ValidateError> {
    let h = 1.0 / n as f64;
    let mut scene = Scene {
        name: "validate: viscous slice".into(),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.0, h),
        resolution: (n, n, 1),
        viscosity: NU,
        ..Scene::default()
    };
    scene.pressure.preconditioner = PreconditionerKind::Ip;
    scene.smoke.tracers = 0;
    scene.smoke.vorticity = 0.0;
    scene.smoke.temperature_dissipation = 0.0;
    let dims = [n as usize, n as usize, 1];
    let exact = NU * PI * PI * 2.0;
    let dt = DECAY / exact / steps as f64;
    let mode = u_mode(dims, h);
    let mut vel = vec![0.0f32; faces(dims)];
    for &(i, m) in &mode {
        vel[i] = m as f32;
    }
    let mut sim = SmokeSimulation::new(ctx.clone(), &scene)?;
    sim.substep(1e-3, SmokeStage::Mark)?;
    sim.upload_state(&vec![[0.0; 4]; n as usize * n as usize], &vel)?;
    let a0 = amplitude(&vel.iter().map(|&x| x as f64).collect::<Vec<_>>(), &mode);
    let hist = history(
        || {
            sim.run_diffusion(dt)?;
            Ok(sim.read_velocity()?)
        },
        &mode,
        a0,
        dt,
        steps,
    )?;
    let t = steps as f64 * dt;
    Ok(Decay { h, exact, t, hist })
}

/// The liquid box of n^3 cells, full of liquid: the mode diffused alone by the viscosity
/// stage over `steps` steps.
fn run_box(ctx: &Arc<GpuContext>, n: u32, steps: usize) -> Result<Decay, ValidateError> {
    let scene = Scene {
        name: "validate: viscous box".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (n, n, n),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 1.0, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        gravity: (0.0, 0.0, 0.0),
        volume_correction: false,
        viscosity: NU,
        ..Scene::default()
    };
    let h = scene.h();
    let dims = [n as usize; 3];
    let exact = NU * PI * PI * 3.0;
    let dt = DECAY / exact / steps as f64;
    let mut sim = Simulation::new(ctx.clone(), &scene)?;
    sim.substep(1e-3, Stage::Boundary)?;
    let mode = u_mode(dims, h);
    let mut vel = vec![0.0f32; faces(dims)];
    for &(i, m) in &mode {
        vel[i] = m as f32;
    }
    sim.ctx
        .queue
        .write_buffer(&sim.fields.vel, 0, bytemuck::cast_slice(&vel));
    let a0 = amplitude(&vel.iter().map(|&x| x as f64).collect::<Vec<_>>(), &mode);
    let hist = history(
        || {
            sim.run_viscosity(dt)?;
            Ok(read_buffer::<f32>(&sim.ctx, &sim.fields.vel)?)
        },
        &mode,
        a0,
        dt,
        steps,
    )?;
    let t = steps as f64 * dt;
    Ok(Decay { h, exact, t, hist })
}

/// The series of the decay plot: the exact curve, then each run of `curves` (its label and
/// amplitude history).
fn decay_series(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<Series> {
    // Amplitude over time for the finest slice and box, against the exact exponentials
    // (time in units of 1/(nu k^2), so both modes share one curve).
    let mut series = vec![Series::new(
        "exp(-nu k^2 t)",
        (0..=40)
            .map(|i| {
                let s = DECAY * i as f64 / 40.0;
                (s, (-s).exp())
            })
            .collect(),
        Mark::Line,
    )];
    let slice_rate = NU * PI * PI * 2.0;
    let box_rate = NU * PI * PI * 3.0;
    for (label, hist) in curves {
        let k2 = if label.starts_with("slice") {
            slice_rate
        } else {
            box_rate
        };
        let every = (hist.len() / 10).max(1);
        series.push(Series::new(
            format!("eddy {label}"),
            hist.iter()
                .step_by(every)
                .map(|&(t, a)| (t * k2, a))
                .collect(),
            Mark::Markers,
        ));
    }
    series
}

/// The convergence plot: rate error against grid spacing for the slice (`conv_slice`) and
/// the 3D box (`conv_box`), each with its fitted order.
fn convergence(conv_slice: &[(f64, f64)], conv_box: &[(f64, f64)]) -> Plot {
    let mut conv = convergence_plot(
        "viscous_convergence",
        "Viscous decay: rate error vs grid spacing",
        "|rate / (nu k^2) - 1|",
        conv_slice,
    );
    conv.series[0].label = "eddy smoke slice".into();
    if let Some(fit) = conv.series.get_mut(1) {
        fit.label = format!("slice {}", fit.label);
    }
    let box_plot = convergence_plot("x", "", "", conv_box);
    let mut b = box_plot.series;
    b[0].label = "eddy liquid 3D".into();
    if let Some(fit) = b.get_mut(1) {
        fit.label = format!("3D {}", fit.label);
    }
    conv.series.extend(b);
    conv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amplitude_and_rate_of_a_tiny_field() {
        // mode (1, 2) at entries 0 and 2; field (0.5, 9, 1): amplitude (0.5 + 2) / 5.
        let mode = [(0usize, 1.0), (2usize, 2.0)];
        assert!((amplitude(&[0.5, 9.0, 1.0], &mode) - 0.5).abs() < 1e-15);
        // Halved in 2 s: rate ln 2 / 2.
        assert!((decay_rate(1.0, 0.5, 2.0) - 0.5 * 2f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn the_mode_of_a_2x2_slice() {
        // u faces of a 2x2 slice, h = 0.5: only i = 1 is inside, at x = 0.5, y = 0.25 and
        // 0.75: sin(pi/2) sin(pi/4) = sin(pi/2) sin(3pi/4) = sqrt(2)/2; indices 1 and 4.
        let m = u_mode([2, 2, 1], 0.5);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].0, m[1].0), (1, 4));
        for (_, v) in m {
            assert!((v - 0.5f64.sqrt()).abs() < 1e-12);
        }
    }
}
