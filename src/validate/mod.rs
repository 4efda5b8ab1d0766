//! `eddy validate`: verification and validation cases, each run at several resolutions
//! against a stated reference, written as one HTML page with plots ([`report`]) and
//! summary.csv. One file per case; each case's measurement is a plain function of the
//! simulation's output, unit-tested on a tiny hand-computed input.

pub mod advection;
pub mod capillary_wave;
pub mod cavity;
pub mod dam_break;
pub mod disc;
pub mod exchange;
pub mod floating;
pub mod hydrostatic;
pub mod impact;
pub mod laplace;
pub mod pressure;
pub mod rayleigh_benard;
pub mod report;
pub mod settling;
pub mod standing_wave;
pub mod stokes;
pub mod surge;
pub mod viscous;

use crate::gpu::GpuContext;
use crate::sim::SimError;
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ValidateError {
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    #[error("{0}")]
    Plot(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// How large the grids and how long the runs: `Quick` for a software adapter (CI),
/// `Full` for a real GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Quick,
    Full,
}

/// A case's run: `progress(done, total, what)` is called as it goes.
pub type CaseFn = fn(
    &Arc<GpuContext>,
    Level,
    &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError>;

/// A case: its name on the command line, its title on the page, and the function that runs
/// it.
#[derive(Debug)]
pub struct Case {
    pub name: &'static str,
    pub title: &'static str,
    pub run: CaseFn,
}

/// Every implemented case, in the order the page shows them.
pub const CASES: &[Case] = &[
    Case {
        name: "pressure",
        title: "Pressure solve: convergence of every preconditioner",
        run: pressure::run,
    },
    Case {
        name: "hydrostatic",
        title: "Hydrostatic pressure in a still pool",
        run: hydrostatic::run,
    },
    Case {
        name: "viscous",
        title: "Viscous decay of a velocity mode",
        run: viscous::run,
    },
    Case {
        name: "floating",
        title: "Floating bodies: Archimedes",
        run: floating::run,
    },
    Case {
        name: "exchange",
        title: "Momentum exchange: a body thrown through a free blob",
        run: exchange::run,
    },
    Case {
        name: "settling",
        title: "A sphere settling in a viscous liquid, against ten Cate et al. (2002)",
        run: settling::run,
    },
    Case {
        name: "stokes",
        title: "Stokes drag: a sphere settling in a square duct",
        run: stokes::run,
    },
    Case {
        name: "disc",
        title: "A disc settling between two walls (slice), against Faxen",
        run: disc::run,
    },
    Case {
        name: "laplace",
        title: "Laplace pressure of a droplet at rest",
        run: laplace::run,
    },
    Case {
        name: "capillary_wave",
        title: "Capillary waves: the dispersion relation",
        run: capillary_wave::run,
    },
    Case {
        name: "surge",
        title: "Dam-break surge front against Martin & Moyce (1952)",
        run: surge::run,
    },
    Case {
        name: "impact",
        title:
            "Dam break against a box: pressures and water heights against Kleefsman et al. (2005)",
        run: impact::run,
    },
    Case {
        name: "dam_break",
        title: "Volume conservation of the dam break",
        run: dam_break::run,
    },
    Case {
        name: "standing_wave",
        title: "Standing wave: period and damping, FLIP, PIC and APIC",
        run: standing_wave::run,
    },
    Case {
        name: "advection",
        title: "Advection: a rotating disc of dye",
        run: advection::run,
    },
    Case {
        name: "rayleigh_benard",
        title: "Rayleigh-Benard onset",
        run: rayleigh_benard::run,
    },
    Case {
        name: "cavity",
        title: "Lid-driven cavity at Re 100 against Ghia, Ghia & Shin (1982)",
        run: cavity::run,
    },
];

/// Cases of issue 30 that `eddy validate` does not run yet (listed on the page).
pub const NOT_IMPLEMENTED: &[(&str, &str)] = &[];

/// A case's progress as a helper reports it: the callback, the frames done so far (counted
/// on), the case's total and the run's label.
pub type Progress<'a> = (&'a mut dyn FnMut(u64, u64, &str), &'a mut u64, u64, &'a str);

/// Runs `scene` (either mode) for `frames` frames and returns its first body's settling
/// speed (downward positive) over each frame, its displacement over the frame's length, at
/// the frame's middle, as (time, speed) from (0, 0); `progress` sees `done` (counted on) of
/// `total` with `label`. The mean over the frame, not the last substep's velocity: a body
/// whose stair-stepped surface crosses cells changes speed from one substep to the next
/// (the Stokes sphere at 8 cells across by +-4% between frames), and a mean over a window
/// of frames is then its displacement over the window.
pub fn settling_history(
    ctx: &Arc<GpuContext>,
    scene: &crate::scene::Scene,
    frames: u64,
    (progress, done, total, label): Progress<'_>,
) -> Result<Vec<(f64, f64)>, ValidateError> {
    let mut sim = crate::sim::Sim::new(ctx.clone(), scene)?;
    let height = |sim: &crate::sim::Sim| sim.bodies().map_or(0.0, |b| b.set.bodies[0].position.y);
    let mut history = vec![(0.0, 0.0)];
    let mut last = height(&sim);
    for f in 0..frames {
        progress(*done, total, label);
        sim.step_frame()?;
        let y = height(&sim);
        history.push((
            (f as f64 + 0.5) * scene.frame_dt,
            (last - y) / scene.frame_dt,
        ));
        last = y;
        *done += 1;
    }
    Ok(history)
}

/// Finds the cases named in `names` (all of them for an empty list).
pub fn select(names: &[String]) -> Result<Vec<&'static Case>, ValidateError> {
    if names.is_empty() {
        return Ok(CASES.iter().collect());
    }
    let mut out: Vec<&'static Case> = Vec::new();
    for n in names {
        match CASES.iter().find(|c| c.name == n.as_str()) {
            Some(c) if !out.iter().any(|o| o.name == c.name) => out.push(c),
            Some(_) => {}
            None => {
                let known: Vec<&str> = CASES.iter().map(|c| c.name).collect();
                let planned = if NOT_IMPLEMENTED.iter().any(|(p, _)| p == n) {
                    " (planned, not yet implemented)"
                } else {
                    ""
                };
                return Err(ValidateError::Options(format!(
                    "--cases: unknown case {n:?}{planned}; expected one of {}",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// One line of summary.csv: a measurement at one resolution against its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub case: String,
    /// The grid, as written: "16", "16x16", "16^3", or a label of the sub-case.
    pub resolution: String,
    pub measured: f64,
    pub reference: f64,
    /// What the tolerance bounds (each case says which error it is).
    pub error: f64,
    pub tolerance: f64,
}

impl Row {
    pub fn pass(&self) -> bool {
        self.error.is_finite() && self.error <= self.tolerance
    }
}

/// How a series is drawn: the reference as a line, eddy's measurements as markers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Line,
    Markers,
    /// Markers joined by a thin line (a history).
    MarkersLine,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub mark: Mark,
}

impl Series {
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, mark: Mark) -> Self {
        Self {
            label: label.into(),
            points,
            mark,
        }
    }
}

/// A plot: written as `<name>.png` and `<name>.svg`, shown inline on the page.
#[derive(Clone, Debug)]
pub struct Plot {
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// What a case found: its rows, plots and the reference it compares with.
#[derive(Clone, Debug)]
pub struct CaseReport {
    pub name: String,
    pub title: String,
    /// The reference and what the error is, shown on the page.
    pub reference: String,
    pub rows: Vec<Row>,
    pub plots: Vec<Plot>,
    /// Anything else worth a line on the page (measured orders, run times).
    pub notes: Vec<String>,
}

impl CaseReport {
    pub fn failures(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| !r.pass())
            .map(|r| {
                format!(
                    "{} at {}: error {:.4e} above the tolerance {:.4e} (measured {:.6}, reference {:.6})",
                    r.case, r.resolution, r.error, r.tolerance, r.measured, r.reference
                )
            })
            .collect()
    }
}

/// Least-squares slope of log(err) against log(h): the observed order of convergence.
/// Returns None with fewer than two usable (positive) points.
pub fn fitted_order(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(h, e)| *h > 0.0 && *e > 0.0)
        .map(|(h, e)| (h.ln(), e.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    Some((slope, (my - slope * mx).exp()))
}

/// The error-vs-grid-spacing plot of a case: the measured errors as markers and the fitted
/// power law C h^p as a line with p in its legend.
pub fn convergence_plot(name: &str, title: &str, error_label: &str, points: &[(f64, f64)]) -> Plot {
    let mut series = vec![Series::new("eddy", points.to_vec(), Mark::Markers)];
    if let Some((p, c)) = fitted_order(points) {
        let (lo, hi) = points
            .iter()
            .fold((f64::MAX, f64::MIN), |a, q| (a.0.min(q.0), a.1.max(q.0)));
        let line: Vec<(f64, f64)> = (0..=20)
            .map(|i| {
                let h = lo * (hi / lo).powf(i as f64 / 20.0);
                (h, c * h.powf(p))
            })
            .collect();
        series.push(Series::new(
            format!("fit C h^p, order p = {p:.2}"),
            line,
            Mark::Line,
        ));
    }
    Plot {
        name: name.into(),
        title: title.into(),
        x_label: "grid spacing h (m)".into(),
        y_label: error_label.into(),
        log_x: true,
        log_y: true,
        series,
    }
}

/// Runs `cases`; `progress(case index, done, total, what)`.
pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    cases: &[&Case],
    progress: impl FnMut(usize, u64, u64, &str),
) -> Result<Vec<CaseReport>, ValidateError> {
    run_each(ctx, level, cases, progress, |_| true)
}

/// [`run`], calling `finished(reports so far)` after each case; the suite stops before the
/// next case when it returns false (the reports of the cases done are returned).
pub fn run_each(
    ctx: &Arc<GpuContext>,
    level: Level,
    cases: &[&Case],
    mut progress: impl FnMut(usize, u64, u64, &str),
    mut finished: impl FnMut(&[CaseReport]) -> bool,
) -> Result<Vec<CaseReport>, ValidateError> {
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let t0 = std::time::Instant::now();
        let mut r = (case.run)(ctx, level, &mut |d, t, w| progress(i, d, t, w))?;
        r.notes
            .push(format!("ran in {:.1} s", t0.elapsed().as_secs_f64()));
        out.push(r);
        if !finished(&out) {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_order_of_a_power_law() {
        // e = 3 h^2 at h = 0.1, 0.05: slope exactly 2, C = 3.
        let (p, c) = fitted_order(&[(0.1, 0.03), (0.05, 0.0075)]).unwrap();
        assert!((p - 2.0).abs() < 1e-12 && (c - 3.0).abs() < 1e-9, "{p} {c}");
        assert!(fitted_order(&[(0.1, 0.03)]).is_none());
        assert!(fitted_order(&[(0.1, 0.0), (0.05, 0.0)]).is_none());
    }

    #[test]
    fn rows_pass_within_their_tolerance_only() {
        let mut r = Row {
            case: "c".into(),
            resolution: "8".into(),
            measured: 1.0,
            reference: 1.0,
            error: 0.01,
            tolerance: 0.01,
        };
        assert!(r.pass());
        r.error = 0.011;
        assert!(!r.pass());
        r.error = f64::NAN;
        assert!(!r.pass());
    }

    #[test]
    fn a_failing_row_gives_one_line_naming_it() {
        let row = |res: &str, error: f64| Row {
            case: "viscous".into(),
            resolution: res.into(),
            measured: 0.9,
            reference: 1.0,
            error,
            tolerance: 0.05,
        };
        let r = CaseReport {
            name: "viscous".into(),
            title: "t".into(),
            reference: "r".into(),
            rows: vec![row("8x8", 0.1), row("16x16", 0.01)],
            plots: vec![],
            notes: vec![],
        };
        let f = r.failures();
        assert_eq!(f.len(), 1);
        assert!(
            f[0].starts_with("viscous at 8x8: error 1.0000e-1 above the tolerance"),
            "{}",
            f[0]
        );
    }

    #[test]
    fn cases_are_selected_by_name() {
        assert_eq!(select(&[]).unwrap().len(), CASES.len());
        let s = select(&["viscous".into(), "pressure".into(), "viscous".into()]).unwrap();
        assert_eq!(
            s.iter().map(|c| c.name).collect::<Vec<_>>(),
            ["viscous", "pressure"]
        );
        assert_eq!(select(&["cavity".into()]).unwrap()[0].name, "cavity");
        assert!(select(&["nope".into()]).is_err());
    }
}
