//! A dam break against a box, against experiment: the MARIN measurement of Kleefsman,
//! Fekken, Veldman, Iwanowski & Buchner (2005), "A Volume-of-Fluid based simulation method
//! for wave impact problems", J. Comput. Phys. 206, 363-393, distributed as SPHERIC /
//! ERCOFTAC Test-case 2 (Issa & Violeau 2006). A column of water 1.228 m long and 0.55 m
//! deep at the end of a 3.22 x 1 x 1 m tank is released at t = 0 and runs into a box
//! 0.161 m high; pressure transducers on the box's front face and top, and water-height
//! gauges along the tank. The traces (data/validation/kleefsman_2005.csv, every row of the
//! 1 kHz table in 0.35-0.70 s, every fifth elsewhere) come from the SPHERIC distribution.
//!
//! eddy reads the same instruments as scene probes: `Sensor`s on the box (the wall
//! pressure averaged over the transducer's face) and `Gauge`s (the level set's height),
//! every substep. Compared: each front-face sensor's impact peak and arrival (the first
//! time it passes a quarter of the measured peak), its mean error over the loaded phase,
//! and each gauge's mean error over the run, relative to the column's depth.
//!
//! Cells are cubes that fit the tank's 1 m width and height; where 3.22 m is not a whole
//! number of cells the tank is lengthened at the box's end, and the box, sensors and gauges
//! keep their distances from the column.

use super::{CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::probes::{ProbeEvery, ProbeSpec};
use crate::scene::{PreconditionerKind, Scene, Shape};
use crate::sim::Simulation;
use std::sync::Arc;

/// The measured traces: time_s, P1..P8 (Pa), H1..H4 (m).
pub const DATA: &str = include_str!("../../data/validation/kleefsman_2005.csv");
/// The tank's length, width (across) and height, m.
pub const TANK: (f64, f64, f64) = (3.22, 1.0, 1.0);
/// The water column: from x = 1.992 m to the tank's end, 0.55 m deep.
pub const COLUMN_X: f64 = 1.992;
pub const DEPTH: f64 = 0.55;
/// The box: x, across and up, each (min, max), m.
pub const BOX: [(f64, f64); 3] = [(0.6635, 0.8245), (0.2955, 0.6985), (0.0, 0.161)];
/// The front-face sensors P1-P4: their heights, m (x = 0.8245, 0.471 across).
pub const FRONT: [f64; 4] = [0.021, 0.061, 0.101, 0.141];
/// The top sensors P5-P8: their x, m (0.161 up, 0.471 across).
pub const TOP: [f64; 4] = [0.8035, 0.7635, 0.7235, 0.6835];
/// The sensors' position across the tank, m.
pub const SENSOR_ACROSS: f64 = 0.471;
/// The gauges H1-H4: their x, m (mid-tank across).
pub const GAUGES: [f64; 4] = [0.496, 0.992, 1.488, 2.638];
/// The transducer's face: a disc of this radius, m (smaller than a cell here).
const SENSOR_RADIUS: f64 = 0.0045;
/// The window searched for the first impact's peak and arrival, and over which its impulse
/// is taken, s.
const IMPACT: (f64, f64) = (0.35, 0.70);
const IMPULSE: (f64, f64) = (0.38, 0.50);
/// The loaded phase over which the sensors' mean error is taken, s.
const LOADED: (f64, f64) = (0.45, 0.70);
/// The peak is that of the pressure averaged over this long (the measured rise time is
/// about 15 ms; a substep is 2-5 ms here), s.
const PEAK_WIDTH: f64 = 0.010;
/// Frames, s.
const FRAME: f64 = 0.01;

/// Bounds, as the issue sets them for an impact: within 25% of the measured peak and
/// impulse at a resolution this machine runs. Measured on llvmpipe: P2's 10 ms peak 0.3%
/// low at 4 cm cells and 23% high at 2 cm, its impulse 21% and 9% low, P1's impulse 3% and
/// 2% low. The arrival lags the measurement by 20 and 17 ms (see the notes): bounded at
/// 25 ms. Gauges: mean |H - H_measured| within 5% of the column's depth.
pub const PEAK_TOLERANCE: f64 = 0.25;
pub const IMPULSE_TOLERANCE: f64 = 0.25;
pub const ARRIVAL_TOLERANCE_S: f64 = 0.025;
pub const GAUGE_TOLERANCE: f64 = 0.05;
/// P2's mean error over the loaded phase, relative to its measured mean.
pub const MEAN_TOLERANCE: f64 = 0.25;
/// The gauges compared: H2 (between the column and the box) and H4 (in the column). The
/// distribution's H1 and H3 are left out: the trace it labels H1 is wetted first (0.20 s)
/// and H3 last (0.92 s), as gauges at 1.488 and 0.496 m would be, the reverse of the
/// positions listed for them, so which is where is not certain.
const COMPARED_GAUGES: [usize; 2] = [1, 3];

/// The measurement, as columns.
#[derive(Clone, Debug)]
pub struct Measured {
    pub t: Vec<f64>,
    /// P1..P8, then H1..H4.
    pub cols: Vec<Vec<f64>>,
}

impl Measured {
    pub fn sensor(&self, k: usize) -> Vec<(f64, f64)> {
        self.t
            .iter()
            .copied()
            .zip(self.cols[k].iter().copied())
            .collect()
    }
    pub fn gauge(&self, k: usize) -> Vec<(f64, f64)> {
        self.sensor(8 + k)
    }
}

/// Parses [`DATA`].
pub fn measured() -> Measured {
    let mut m = Measured {
        t: Vec::new(),
        cols: vec![Vec::new(); 12],
    };
    for line in DATA.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("time") {
            continue;
        }
        let v: Vec<f64> = line
            .split(',')
            .map(|s| s.trim().parse().expect("kleefsman_2005.csv: a number"))
            .collect();
        assert_eq!(v.len(), 13, "kleefsman_2005.csv: 13 columns");
        m.t.push(v[0]);
        for (c, x) in m.cols.iter_mut().zip(&v[1..]) {
            c.push(*x);
        }
    }
    m
}

/// Cells across the tank's 1 m width, by level, and how long each runs, s.
fn runs(level: Level) -> Vec<(u32, f64)> {
    match level {
        Level::Quick => vec![(25, 1.0)],
        Level::Full => vec![(25, 1.5), (50, 0.7)],
    }
}

/// How far the tank is lengthened at the box's end to a whole number of cells, m.
pub fn offset(n: u32) -> f64 {
    let h = TANK.1 / n as f64;
    (TANK.0 / h - 1e-9).ceil() * h - TANK.0
}

/// The experiment at `n` cells across the width, with its twelve probes: P1..P8, H1..H4.
pub fn scene(n: u32) -> Scene {
    let h = TANK.1 / n as f64;
    let nx = ((TANK.0 / h) - 1e-9).ceil() as u32;
    let dx = offset(n);
    // The experiment's (along, across, up) is eddy's (x, z, y).
    let mut probes: Vec<ProbeSpec> = FRONT
        .iter()
        .enumerate()
        .map(|(k, &up)| ProbeSpec::Sensor {
            name: format!("P{}", k + 1),
            at: (BOX[0].1 + dx, up, SENSOR_ACROSS),
            radius: SENSOR_RADIUS,
        })
        .collect();
    probes.extend(TOP.iter().enumerate().map(|(k, &x)| ProbeSpec::Sensor {
        name: format!("P{}", k + 5),
        at: (x + dx, BOX[2].1, SENSOR_ACROSS),
        radius: SENSOR_RADIUS,
    }));
    probes.extend(GAUGES.iter().enumerate().map(|(k, &x)| ProbeSpec::Gauge {
        name: format!("H{}", k + 1),
        x: x + dx,
        z: Some(0.5 * TANK.1),
    }));
    let mut s = Scene {
        name: format!(
            "validate: dam break against a box (Kleefsman et al. 2005), {n} cells across"
        ),
        domain: (nx as f64 * h, TANK.2, TANK.1),
        resolution: (nx, n, n),
        fluid: vec![Shape::Box {
            min: (COLUMN_X + dx, 0.0, 0.0),
            max: (TANK.0 + dx, DEPTH, TANK.1),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![Shape::Box {
            min: (BOX[0].0 + dx, BOX[2].0, BOX[1].0),
            max: (BOX[0].1 + dx, BOX[2].1, BOX[1].1),
            velocity: (0.0, 0.0, 0.0),
        }],
        frame_dt: FRAME,
        max_substeps: 64,
        probes,
        probe_every: ProbeEvery::Substep,
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Mg;
    s
}

/// The value of a history at `t`, linear between its points (None outside it).
pub fn at(history: &[(f64, f64)], t: f64) -> Option<f64> {
    let k = history.partition_point(|p| p.0 < t);
    if k == 0 {
        return (history.first()?.0 == t).then(|| history[0].1);
    }
    let (a, b) = (history[k - 1], *history.get(k)?);
    Some(a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0).max(1e-12))
}

/// The largest value in `window` and its time.
pub fn peak(history: &[(f64, f64)], window: (f64, f64)) -> (f64, f64) {
    history
        .iter()
        .filter(|p| p.0 >= window.0 && p.0 <= window.1)
        .fold((f64::NAN, f64::NEG_INFINITY), |best, p| {
            if p.1 > best.1 {
                *p
            } else {
                best
            }
        })
}

/// The first time in `window` the history reaches `level`, linear between its points.
pub fn arrival(history: &[(f64, f64)], window: (f64, f64), level: f64) -> Option<f64> {
    history
        .windows(2)
        .filter(|w| w[1].0 >= window.0 && w[0].0 <= window.1)
        .find(|w| w[0].1 < level && w[1].1 >= level)
        .map(|w| w[0].0 + (w[1].0 - w[0].0) * (level - w[0].1) / (w[1].1 - w[0].1))
}

/// The mean of |eddy - measured| at the measured times in `window`, and the mean of the
/// measured values there.
pub fn mean_error(eddy: &[(f64, f64)], measured: &[(f64, f64)], window: (f64, f64)) -> (f64, f64) {
    let pairs: Vec<(f64, f64)> = measured
        .iter()
        .filter(|p| p.0 >= window.0 && p.0 <= window.1)
        .filter_map(|&(t, m)| at(eddy, t).map(|e| (e, m)))
        .collect();
    let n = pairs.len().max(1) as f64;
    (
        pairs.iter().map(|(e, m)| (e - m).abs()).sum::<f64>() / n,
        pairs.iter().map(|(_, m)| m).sum::<f64>() / n,
    )
}

/// The integral of a history over `window`, linear between its points (the part of the
/// window it covers).
pub fn integral(history: &[(f64, f64)], window: (f64, f64)) -> f64 {
    history
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0].0.max(window.0), w[1].0.min(window.1));
            if b <= a {
                return 0.0;
            }
            let v = |t: f64| w[0].1 + (w[1].1 - w[0].1) * (t - w[0].0) / (w[1].0 - w[0].0);
            0.5 * (v(a) + v(b)) * (b - a)
        })
        .sum()
}

/// The largest mean of a history over `width` seconds starting in `window` (in steps of a
/// millisecond), and where that stretch begins.
pub fn averaged_peak(history: &[(f64, f64)], width: f64, window: (f64, f64)) -> (f64, f64) {
    let steps = ((window.1 - width - window.0) / 1e-3).floor().max(0.0) as usize;
    (0..=steps)
        .map(|k| {
            let t = window.0 + k as f64 * 1e-3;
            (t, integral(history, (t, t + width)) / width)
        })
        .fold((f64::NAN, f64::NEG_INFINITY), |best, p| {
            if p.1 > best.1 {
                p
            } else {
                best
            }
        })
}

/// One front-face sensor's comparison with its measurement.
#[derive(Clone, Copy, Debug)]
pub struct Impact {
    /// The largest value (Pa) and its time (s), eddy and measured.
    pub peak: ((f64, f64), (f64, f64)),
    /// The largest [`PEAK_WIDTH`] average (Pa), eddy and measured.
    pub averaged: (f64, f64),
    /// The integral over [`IMPULSE`] (Pa s), eddy and measured.
    pub impulse: (f64, f64),
    /// When it first reaches a quarter of the measured peak (s), eddy and measured.
    pub arrival: (Option<f64>, Option<f64>),
    /// The mean |eddy - measured| over [`LOADED`] and the measured mean there (Pa).
    pub mean: (f64, f64),
}

impl Impact {
    pub fn of(eddy: &[(f64, f64)], measured: &[(f64, f64)], t_end: f64) -> Impact {
        let window = (IMPACT.0, IMPACT.1.min(t_end));
        let pm = peak(measured, window);
        let quarter = 0.25 * pm.1;
        Impact {
            peak: (peak(eddy, window), pm),
            averaged: (
                averaged_peak(eddy, PEAK_WIDTH, window).1,
                averaged_peak(measured, PEAK_WIDTH, window).1,
            ),
            impulse: (integral(eddy, IMPULSE), integral(measured, IMPULSE)),
            arrival: (
                arrival(eddy, window, quarter),
                arrival(measured, window, quarter),
            ),
            mean: mean_error(eddy, measured, (LOADED.0, LOADED.1.min(t_end))),
        }
    }

    pub fn describe(&self, name: &str) -> String {
        let t = |a: Option<f64>| a.map_or("-".into(), |a| format!("{a:.3}"));
        format!(
            "{name}: peak {:.2} kPa at {:.3} s (measured {:.2} at {:.3}), {:.0} ms mean \
             {:.2} ({:.2}), impulse {:.0} Pa s ({:.0}), arrival {} s ({}), mean error {:.2} \
             kPa of a measured mean {:.2}",
            self.peak.0 .1 / 1e3,
            self.peak.0 .0,
            self.peak.1 .1 / 1e3,
            self.peak.1 .0,
            PEAK_WIDTH * 1e3,
            self.averaged.0 / 1e3,
            self.averaged.1 / 1e3,
            self.impulse.0,
            self.impulse.1,
            t(self.arrival.0),
            t(self.arrival.1),
            self.mean.0 / 1e3,
            self.mean.1 / 1e3,
        )
    }
}

/// A row of the case.
fn row(resolution: String, measured: f64, reference: f64, error: f64, tolerance: f64) -> Row {
    Row {
        case: "impact".into(),
        resolution,
        measured,
        reference,
        error,
        tolerance,
    }
}

/// The rows of one run: P2's averaged peak, arrival and mean error, P1's and P2's
/// impulses, and the gauges H2 and H4.
fn rows_of(label: &str, p1: &Impact, p2: &Impact, gauges: &[(usize, f64)]) -> Vec<Row> {
    let rel = |a: f64, b: f64| (a / b - 1.0).abs();
    let mut rows = vec![
        row(
            format!(
                "{label}, P2 peak of its {:.0} ms mean (Pa)",
                PEAK_WIDTH * 1e3
            ),
            p2.averaged.0,
            p2.averaged.1,
            rel(p2.averaged.0, p2.averaged.1),
            PEAK_TOLERANCE,
        ),
        row(
            format!("{label}, P2 arrival (s), error in s"),
            p2.arrival.0.unwrap_or(f64::NAN),
            p2.arrival.1.unwrap_or(f64::NAN),
            match p2.arrival {
                (Some(a), Some(b)) => (a - b).abs(),
                _ => f64::NAN,
            },
            ARRIVAL_TOLERANCE_S,
        ),
        row(
            format!(
                "{label}, P2 mean |p - p_measured| over {:.2}-{:.2} s (Pa) / measured mean",
                LOADED.0, LOADED.1
            ),
            p2.mean.0,
            p2.mean.1,
            p2.mean.0 / p2.mean.1.abs().max(1e-9),
            MEAN_TOLERANCE,
        ),
    ];
    for (name, p) in [("P1", p1), ("P2", p2)] {
        rows.push(row(
            format!(
                "{label}, {name} impulse over {:.2}-{:.2} s (Pa s)",
                IMPULSE.0, IMPULSE.1
            ),
            p.impulse.0,
            p.impulse.1,
            rel(p.impulse.0, p.impulse.1),
            IMPULSE_TOLERANCE,
        ));
    }
    for &(k, err) in gauges {
        rows.push(row(
            format!("{label}, H{} mean |H - H_measured| (m) / depth", k + 1),
            err,
            DEPTH,
            err / DEPTH,
            GAUGE_TOLERANCE,
        ));
    }
    rows
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let data = measured();
    let runs = runs(level);
    let total: u64 = runs.iter().map(|r| (r.1 / FRAME).round() as u64).sum();
    let mut done = 0;
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    // The measurement is drawn as far as the longest run goes.
    let t_max = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    let upto = |v: Vec<(f64, f64)>| v.into_iter().filter(|p| p.0 <= t_max).collect();
    let mut pressure_series = vec![
        Series::new("P1 measured (MARIN)", upto(data.sensor(0)), Mark::Line),
        Series::new("P2 measured (MARIN)", upto(data.sensor(1)), Mark::Line),
    ];
    let mut gauge_series = vec![
        Series::new("H2 measured (MARIN)", upto(data.gauge(1)), Mark::Line),
        Series::new("H4 measured (MARIN)", upto(data.gauge(3)), Mark::Line),
    ];
    for &(n, t_end) in &runs {
        let s = scene(n);
        let label = format!("{n} cells across ({:.0} mm)", 1000.0 * s.h());
        let mut sim = Simulation::new(ctx.clone(), &s)?;
        let mut history: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 12];
        for _ in 0..(t_end / FRAME).round() as u64 {
            progress(done, total, &label);
            let st = sim.step_frame()?;
            for row in &st.probes {
                for (h, v) in history.iter_mut().zip(&row.values) {
                    h.push((row.time, *v));
                }
            }
            done += 1;
        }
        let front: Vec<Impact> = (0..4)
            .map(|k| Impact::of(&history[k], &data.sensor(k), t_end))
            .collect();
        let gauges: Vec<(usize, f64)> = COMPARED_GAUGES
            .iter()
            .map(|&k| {
                (
                    k,
                    mean_error(&history[8 + k], &data.gauge(k), (0.0, t_end)).0,
                )
            })
            .collect();
        rows.extend(rows_of(&label, &front[0], &front[1], &gauges));
        let window = (IMPACT.0, IMPACT.1.min(t_end));
        let top: Vec<String> = (4..8)
            .map(|k| {
                let (_, pe) = peak(&history[k], window);
                let (_, pm) = peak(&data.sensor(k), window);
                format!("P{} {:.2} ({:.2})", k + 1, pe / 1e3, pm / 1e3)
            })
            .collect();
        notes.push(format!(
            "{label} ({}x{}x{} cells, tank lengthened {:.0} mm, {} substeps to {t_end} s). {}. \
             Top sensors' peaks, kPa (measured): {}. Gauges' mean error, of the 0.55 m \
             depth: {}.",
            s.resolution.0,
            s.resolution.1,
            s.resolution.2,
            1000.0 * offset(n),
            history[0].len(),
            front
                .iter()
                .enumerate()
                .map(|(k, f)| f.describe(&format!("P{}", k + 1)))
                .collect::<Vec<_>>()
                .join("; "),
            top.join(", "),
            gauges
                .iter()
                .map(|(k, e)| format!("H{} {:.1}%", k + 1, 100.0 * e / DEPTH))
                .collect::<Vec<_>>()
                .join(", "),
        ));
        for (k, name) in [(0, "P1"), (1, "P2")] {
            pressure_series.push(Series::new(
                format!("{name} eddy, {label}"),
                history[k].clone(),
                Mark::Line,
            ));
        }
        for (k, name) in [(1, "H2"), (3, "H4")] {
            gauge_series.push(Series::new(
                format!("{name} eddy, {label}"),
                history[8 + k].clone(),
                Mark::Line,
            ));
        }
    }
    progress(total, total, "done");
    notes.extend(
        [
            "Why the peak is read as a 10 ms mean, with the impulse beside it: the first \
             contact stops the liquid's momentum within one substep, so an incompressible \
             solve's peak grows as the substep shrinks (P2 at 4 cm cells: 7.6 kPa with 7 ms \
             substeps, 8.2 with 5 ms, 10.2 with 2.5 ms), while the impulse and the mean over \
             the measured rise time (about 15 ms) hold.",
            "What was wrong before: a frame was cut into CFL substeps and a short remainder, \
             and a substep corrects what the last one's advection left, over its own length: \
             the remainders read the box's pressure 5-8 times higher than the substeps around \
             them (P2 peaked at 21.7 kPa at 4 cm). Frames are now cut into even substeps. \
             Where the CFL step itself shrinks during the impact, the substep after the change \
             still reads high by the ratio of the two lengths (2 cm: 3.3 to 2.2 ms, P1 18.7 \
             kPa against 13-14 on either side); advecting with the next substep's length \
             would remove that, and is not done.",
            "The arrival lags the measurement by 17-20 ms at both resolutions, and the \
             column's level at H4 falls behind it from the start (the best time shift matching \
             H4 is 34-46 ms; its measured level already falls by 13 mm at 0.1 s, before the \
             release's depression wave, at sqrt(g H) = 2.3 m/s, reaches it at 0.28 s). The \
             lag does not shrink with the grid; it points at the release (how t = 0 was taken \
             against the gate's lift), which the data do not record.",
            "P3 and P4 (101 and 141 mm up the 161 mm face) read 20-70% low: the run-up along \
             the face and over the top edge is under-resolved at 4-8 cells up the box \
             (measured P4 7.2 kPa, eddy 1.8-2.2). The top sensors see the water that crosses \
             the box.",
        ]
        .map(String::from),
    );
    Ok(CaseReport {
        name: "impact".into(),
        title:
            "Dam break against a box: pressures and water heights against Kleefsman et al. (2005)"
                .into(),
        reference: format!(
            "MARIN's measurement (Kleefsman et al., J. Comput. Phys. 206, 363 (2005); SPHERIC \
             Test-case 2): a 0.55 m column released against a box. P2 (61 mm up the box's \
             front face): the peak of its {:.0} ms mean within {:.0}%, arrival (a quarter of \
             the measured peak) within {:.0} ms, mean error over {:.2}-{:.2} s within {:.0}% \
             of the measured mean; P1's and P2's impulse over {:.2}-{:.2} s within {:.0}%; \
             gauges H2 and H4: mean error within {:.0}% of the depth.",
            1000.0 * PEAK_WIDTH,
            100.0 * PEAK_TOLERANCE,
            1000.0 * ARRIVAL_TOLERANCE_S,
            LOADED.0,
            LOADED.1,
            100.0 * MEAN_TOLERANCE,
            IMPULSE.0,
            IMPULSE.1,
            100.0 * IMPULSE_TOLERANCE,
            100.0 * GAUGE_TOLERANCE
        ),
        rows,
        plots: vec![
            Plot {
                name: "impact_pressure".into(),
                title: "Pressure on the box's front face, P1 (21 mm up) and P2 (61 mm)".into(),
                x_label: "t (s)".into(),
                y_label: "p (Pa)".into(),
                log_x: false,
                log_y: false,
                series: pressure_series,
            },
            Plot {
                name: "impact_gauges".into(),
                title: "Water height at H2 (x = 0.992 m) and H4 (x = 2.638 m, in the column)"
                    .into(),
                x_label: "t (s)".into(),
                y_label: "H (m)".into(),
                log_x: false,
                log_y: false,
                series: gauge_series,
            },
        ],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_holds_the_known_peaks() {
        let m = measured();
        assert!(m.t.len() > 600, "{}", m.t.len());
        assert!(m.t.windows(2).all(|w| w[1] > w[0]));
        // The column's initial depth at H4, and P2's impact peak (8.13 kPa near 0.45 s).
        assert!((m.cols[11][0] - 0.5467).abs() < 1e-3);
        let (t, p) = peak(&m.sensor(1), IMPACT);
        assert!((p - 8127.5).abs() < 1.0 && t > 0.4 && t < 0.5, "{t} {p}");
    }

    #[test]
    fn the_scene_is_valid_and_its_probes_sit_on_the_box() {
        for n in [25, 50] {
            let s = scene(n);
            s.validate().unwrap();
            assert_eq!(s.probes.len(), 12);
            assert!(offset(n) >= 0.0 && offset(n) < s.h());
            assert!((s.domain.0 - TANK.0 - offset(n)).abs() < 1e-9);
        }
        assert!(offset(50).abs() < 1e-9);
        assert!((offset(25) - 0.02).abs() < 1e-9);
    }

    #[test]
    fn peak_arrival_and_mean_error_read_a_history() {
        let h = [(0.0, 0.0), (1.0, 4.0), (2.0, 2.0), (3.0, 0.0)];
        assert_eq!(peak(&h, (0.0, 3.0)), (1.0, 4.0));
        assert_eq!(arrival(&h, (0.0, 3.0), 1.0), Some(0.25));
        assert_eq!(at(&h, 1.5), Some(3.0));
        assert_eq!(at(&h, 3.5), None);
        let m = [(0.5, 1.0), (1.5, 4.0)];
        let (err, mean) = mean_error(&h, &m, (0.0, 3.0));
        assert!((err - 1.0).abs() < 1e-12 && (mean - 2.5).abs() < 1e-12);
        // The triangle's area 6, half of it before t = 1; its best 1 s mean straddles the
        // peak: from 2/3 to 5/3 (in steps of a millisecond), 10/3.
        assert!((integral(&h, (0.0, 3.0)) - 6.0).abs() < 1e-12);
        assert!((integral(&h, (-1.0, 1.0)) - 2.0).abs() < 1e-12);
        let (t, mean) = averaged_peak(&h, 1.0, (0.0, 3.0));
        assert!(
            (t - 0.667).abs() < 1e-9 && (mean - 10.0 / 3.0).abs() < 1e-5,
            "{t} {mean}"
        );
    }
}
