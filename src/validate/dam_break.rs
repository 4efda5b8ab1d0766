//! Volume conservation of the dam break: the shipped dam_break scene's setup (a 0.35 x 0.6
//! m column in a 1 x 1 x 0.5 m tank) at two resolutions. Reference: the first frame's
//! volume. Measured: the liquid volume inside the free surface (FLUID cells plus the level
//! set's reach, `liquid_volume`) and the FLUID cells' volume over time; errors: the
//! relative change at the end, and the largest on the way.

use super::{CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{PreconditionerKind, Scene, Shape};
use crate::sim::Simulation;
use std::sync::Arc;

/// Bounds on |V(t)/V(0) - 1|: the liquid volume at the end, on the way, and the FLUID
/// cells' volume at the end (counted whole cells move in steps of a layer as the surface
/// crosses cell centres).
pub const END: f64 = 0.02;
pub const WORST: f64 = 0.12;
pub const CELLS_END: f64 = 0.10;

/// The dam break of scenes/dam_break.ron with `n` cells along its longest axis.
pub fn scene(n: u32) -> Scene {
    let mut s = Scene {
        name: "validate: dam break".into(),
        domain: (1.0, 1.0, 0.5),
        resolution: (32, 32, 16),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.35, 0.6, 0.5),
            velocity: (0.0, 0.0, 0.0),
        }],
        particles_per_cell: 8,
        seed: 1,
        pic_ratio: 0.05,
        cfl: 1.0,
        frame_dt: 1.0 / 60.0,
        max_substeps: 32,
        extrapolation_layers: 3,
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Mg;
    s.pressure.tolerance = 1e-5;
    s.pressure.max_iterations = 1000;
    s.pressure.check_every = 2;
    s.with_resolution(n)
}

/// Relative changes of a volume series against its first value: (at the end, largest
/// magnitude on the way).
pub fn drift(volumes: &[f64]) -> (f64, f64) {
    let Some(&v0) = volumes.first() else {
        return (0.0, 0.0);
    };
    let rel = |v: f64| (v - v0) / v0;
    let end = rel(*volumes.last().unwrap());
    let worst = volumes.iter().map(|&v| rel(v).abs()).fold(0.0, f64::max);
    (end, worst)
}

struct Plan {
    sizes: Vec<u32>,
    seconds: f64,
}

fn plan(level: Level) -> Plan {
    match level {
        Level::Quick => Plan {
            sizes: vec![16, 20],
            seconds: 10.0,
        },
        Level::Full => Plan {
            sizes: vec![32, 64],
            seconds: 10.0,
        },
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let p = plan(level);
    let mut rows = Vec::new();
    let mut series = vec![Series::new(
        "reference: V(0)",
        vec![(0.0, 1.0), (p.seconds, 1.0)],
        Mark::Line,
    )];
    let frames_each = (p.seconds * 60.0).round() as u64;
    let total = frames_each * p.sizes.len() as u64;
    for (si, &n) in p.sizes.iter().enumerate() {
        let s = scene(n);
        let frames = (p.seconds / s.frame_dt).round() as u64;
        let mut sim = Simulation::new(ctx.clone(), &s)?;
        let (mut t, mut liquid, mut cells) = (Vec::new(), Vec::new(), Vec::new());
        for f in 0..frames {
            if f % 30 == 0 {
                progress(
                    si as u64 * frames_each + f,
                    total,
                    &format!("{n} cells, {:.1} s", f as f64 * s.frame_dt),
                );
            }
            let st = sim.step_frame()?;
            t.push(st.time_s);
            liquid.push(st.liquid().map_or(0.0, |l| l.liquid_volume));
            cells.push(st.volume);
        }
        let (end, worst) = drift(&liquid);
        let (cend, _) = drift(&cells);
        let v0 = liquid[0];
        let c0 = cells[0];
        let res = format!("{}x{}x{}", s.resolution.0, s.resolution.1, s.resolution.2);
        for (what, measured, reference, err, tol) in [
            (
                "liquid volume at the end",
                *liquid.last().unwrap(),
                v0,
                end.abs(),
                END,
            ),
            ("liquid volume worst", v0 * (1.0 + worst), v0, worst, WORST),
            (
                "FLUID cells at the end",
                *cells.last().unwrap(),
                c0,
                cend.abs(),
                CELLS_END,
            ),
        ] {
            rows.push(Row {
                case: "dam_break".into(),
                resolution: format!("{res} {what}"),
                measured,
                reference,
                error: err,
                tolerance: tol,
            });
        }
        let every = (t.len() / 120).max(1);
        series.push(Series::new(
            format!("liquid volume {res}"),
            t.iter()
                .zip(&liquid)
                .step_by(every)
                .map(|(&t, &v)| (t, v / v0))
                .collect(),
            Mark::Markers,
        ));
        series.push(Series::new(
            format!("FLUID cells {res}"),
            t.iter()
                .zip(&cells)
                .step_by(every)
                .map(|(&t, &v)| (t, v / c0))
                .collect(),
            Mark::Markers,
        ));
    }
    progress(total, total, "done");
    Ok(CaseReport {
        name: "dam_break".into(),
        title: "Volume conservation of the dam break".into(),
        reference: format!(
            "The shipped dam_break scene (a 0.35 x 0.6 x 0.5 m column in a 1 x 1 x 0.5 m tank, \
             FLIP with 5% PIC, volume correction on) for {} s. Reference: the volume of the \
             first frame. Measured: the liquid volume inside the free surface (liquid_volume \
             in stats.csv) at the end (passes within {END}) and at its worst on the way \
             (within {WORST}: splashing sheets one or two cells thick are where the level set \
             is crudest), and the FLUID cells' volume at the end (within {CELLS_END}: whole \
             cells move in steps of a layer).",
            p.seconds
        ),
        rows,
        plots: vec![Plot {
            name: "dam_break_volume".into(),
            title: "Dam break: volume vs time".into(),
            x_label: "time t (s)".into(),
            y_label: "volume V(t) / V(0)".into(),
            log_x: false,
            log_y: false,
            series,
        }],
        notes: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_of_a_short_series() {
        // 2 -> 2.2 -> 1.9 -> 2.1: end +5%, worst 10%.
        let (end, worst) = drift(&[2.0, 2.2, 1.9, 2.1]);
        assert!((end - 0.05).abs() < 1e-12 && (worst - 0.1).abs() < 1e-12);
        assert_eq!(drift(&[]), (0.0, 0.0));
    }
}
