//! Standing wave: the first sloshing mode of a tank (1 m wide, 0.5 m deep, a slice with
//! free-slip walls), started at rest with the surface at depth + 0.05 cos(pi x) m, for FLIP
//! (5% PIC), pure PIC and APIC: the run and its measurements are `eddy bench --transfer`'s
//! ([`crate::bench::transfer::sloshing`]: the mode's amplitude from the columns' particle
//! heights, the period from its zero crossings, the amplitude kept per period from its
//! extrema). Reference: linear theory, omega^2 = g k tanh(k h), k = pi / L. Error:
//! |period / theory - 1|; the damping per period is reported and bounded for FLIP and APIC
//! (an inviscid wave keeps its amplitude; PIC's damping is its known dissipation).

use super::{convergence_plot, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::bench::transfer::{sloshing, Variant};
use crate::gpu::GpuContext;
use std::sync::Arc;

pub const PERIOD_TOLERANCE: f64 = 0.05;
/// FLIP and APIC must keep at least this fraction of the amplitude per period.
pub const KEPT_AT_LEAST: f64 = 0.8;

/// The fraction of the amplitude lost per period (1 - kept), the damping the rows bound.
pub fn loss_per_period(kept: f64) -> f64 {
    1.0 - kept
}

struct Plan {
    sizes: Vec<u32>,
    periods: u32,
}

fn plan(level: Level) -> Plan {
    match level {
        Level::Quick => Plan {
            sizes: vec![16, 20],
            periods: 3,
        },
        Level::Full => Plan {
            sizes: vec![32, 64, 128],
            periods: 5,
        },
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let p = plan(level);
    let total = (p.sizes.len() * Variant::ALL.len()) as u64;
    let mut done = 0;
    let mut rows = Vec::new();
    let mut histories = Vec::new();
    let mut conv: Vec<Vec<(f64, f64)>> = vec![Vec::new(); Variant::ALL.len()];
    let mut theory = f64::NAN;
    let mut notes = Vec::new();
    for &n in &p.sizes {
        for (vi, &v) in Variant::ALL.iter().enumerate() {
            progress(done, total, &format!("{} {n} cells", v.name()));
            let r = sloshing(ctx.clone(), n, v, p.periods).map_err(|e| match e {
                crate::bench::BenchError::Sim(s) => ValidateError::Sim(s),
                crate::bench::BenchError::Gpu(g) => ValidateError::Gpu(g),
                crate::bench::BenchError::Options(o) => ValidateError::Options(o),
            })?;
            theory = r.theory_s;
            let err = (r.period_s / r.theory_s - 1.0).abs();
            rows.push(Row {
                case: "standing_wave".into(),
                resolution: format!("{n} cells {} period", v.name()),
                measured: r.period_s,
                reference: r.theory_s,
                error: err,
                tolerance: PERIOD_TOLERANCE,
            });
            if v != Variant::Pic {
                rows.push(Row {
                    case: "standing_wave".into(),
                    resolution: format!("{n} cells {} amplitude kept per period", v.name()),
                    measured: r.amplitude_per_period,
                    reference: 1.0,
                    error: loss_per_period(r.amplitude_per_period),
                    tolerance: 1.0 - KEPT_AT_LEAST,
                });
            } else {
                notes.push(format!(
                    "PIC at {n} cells keeps {:.3} of its amplitude per period (not bounded: \
                     PIC's averaging damps by design).",
                    r.amplitude_per_period
                ));
            }
            conv[vi].push((1.0 / n as f64, err));
            if n == *p.sizes.last().unwrap() {
                let a0 = r.series.first().map_or(1.0, |s| s.1);
                histories.push((
                    v,
                    r.series
                        .iter()
                        .map(|&(t, a)| (t / r.theory_s, a / a0))
                        .collect::<Vec<_>>(),
                ));
            }
            done += 1;
        }
    }
    progress(done, total, "done");
    let nmax = *p.sizes.last().unwrap();
    let mut series = vec![Series::new(
        "linear theory cos(2 pi t / T)",
        (0..=200)
            .map(|i| {
                let s = p.periods as f64 * i as f64 / 200.0;
                (s, (2.0 * std::f64::consts::PI * s).cos())
            })
            .collect(),
        Mark::Line,
    )];
    for (v, h) in &histories {
        let every = (h.len() / 60).max(1);
        series.push(Series::new(
            format!("eddy {}", v.name()),
            h.iter().step_by(every).copied().collect(),
            Mark::Markers,
        ));
    }
    let mut err_plot = convergence_plot(
        "standing_wave_convergence",
        "Standing wave: period error vs grid spacing",
        "|T / T_theory - 1|",
        &[],
    );
    err_plot.series.clear();
    for (v, pts) in Variant::ALL.iter().zip(&conv) {
        let label = match super::fitted_order(pts) {
            Some((o, _)) => format!("{} (order {o:.2})", v.name()),
            None => v.name().to_string(),
        };
        err_plot
            .series
            .push(Series::new(label, pts.clone(), Mark::MarkersLine));
    }
    Ok(CaseReport {
        name: "standing_wave".into(),
        title: "Standing wave: period and damping, FLIP, PIC and APIC".into(),
        reference: format!(
            "The first sloshing mode of a 1 m wide tank filled 0.5 m deep (a slice n cells \
             across, free-slip walls), released at rest with the surface at 0.5 + 0.05 cos(pi \
             x) m, for {} periods. Reference: linear theory omega^2 = g k tanh(k h), k = pi/L: \
             T = {theory:.4} s. Measured: the period from the zero crossings of the mode's \
             amplitude (error |T/T_theory - 1|, passing below {PERIOD_TOLERANCE}) and, for \
             FLIP and APIC, the fraction of the amplitude kept per period (passing above \
             {KEPT_AT_LEAST}; the error column is the fraction lost). The 5% amplitude is \
             finite, so nonlinearity shifts the period by a little.",
            p.periods
        ),
        rows,
        plots: vec![
            Plot {
                name: "standing_wave_amplitude".into(),
                title: format!("Standing wave at {nmax} cells: mode amplitude"),
                x_label: "time t / T_theory".into(),
                y_label: "mode amplitude a(t) / a(0)".into(),
                log_x: false,
                log_y: false,
                series,
            },
            err_plot,
        ],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_what_is_not_kept() {
        assert!((loss_per_period(0.85) - 0.15).abs() < 1e-15);
    }
}
