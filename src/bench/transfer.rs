//! Transfer benchmarks (`eddy bench --transfer`): how well FLIP, PIC and APIC keep what an
//! inviscid liquid must keep.
//!
//! - A blob of liquid rotating rigidly in zero gravity: its angular momentum after a fixed
//!   number of substeps, relative to the start.
//! - The first sloshing mode of a tank (a slice, free-slip walls): its amplitude kept per
//!   period and its period against linear theory, omega^2 = g k tanh(k d).

use crate::bench::BenchError;
use crate::gpu::GpuContext;
use crate::reference as cpu;
use crate::scene::{Scene, Shape, TransferKind};
use crate::sim::{Simulation, Stage};
use serde::Serialize;
use std::sync::Arc;

/// A transfer to compare: FLIP 5/95 (the default), pure PIC, or APIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Flip,
    Pic,
    Apic,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Flip, Variant::Pic, Variant::Apic];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Flip => "flip",
            Variant::Pic => "pic",
            Variant::Apic => "apic",
        }
    }

    /// Sets the scene's transfer and PIC ratio for this variant.
    pub fn apply(self, scene: &mut Scene) {
        let (transfer, pic_ratio) = match self {
            Variant::Flip => (TransferKind::Flip, Scene::default().pic_ratio),
            Variant::Pic => (TransferKind::Flip, 1.0),
            Variant::Apic => (TransferKind::Apic, Scene::default().pic_ratio),
        };
        scene.transfer = transfer;
        scene.pic_ratio = pic_ratio;
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct TransferBenchOptions {
    /// Cells across the rotating blob's cubic domain (the blob's diameter is half of it).
    pub blob_cells: u32,
    pub blob_substeps: u32,
    /// Cells across the sloshing tank.
    pub slosh_cells: u32,
    /// Sloshing periods simulated (of linear theory).
    pub periods: u32,
}

impl Default for TransferBenchOptions {
    fn default() -> Self {
        Self {
            blob_cells: 32,
            blob_substeps: 100,
            slosh_cells: 48,
            periods: 3,
        }
    }
}

impl TransferBenchOptions {
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: String| Err(BenchError::Options(m));
        if !(8..=256).contains(&self.blob_cells) || !(8..=1024).contains(&self.slosh_cells) {
            return bad(format!(
                "transfer benchmark sizes out of range: blob 8 to 256 cells (got {}), tank 8 to \
                 1024 cells (got {})",
                self.blob_cells, self.slosh_cells
            ));
        }
        if !(1..=100_000).contains(&self.blob_substeps) || !(1..=100).contains(&self.periods) {
            return bad(format!(
                "--steps (blob substeps) must be in 1..=100000 and the periods in 1..=100, got \
                 {} and {}",
                self.blob_substeps, self.periods
            ));
        }
        Ok(())
    }
}

/// Angular momentum of the rotating blob for one transfer.
#[derive(Clone, Debug, Serialize)]
pub struct BlobRow {
    pub transfer: Variant,
    pub particles: u32,
    pub substeps: u32,
    /// Particles' L_z per unit particle mass at the start and the end, m^2/s.
    pub l_start: f64,
    pub l_end: f64,
    /// (l_end - l_start) / l_start, percent.
    pub change_percent: f64,
    /// Largest |L_z / L_start - 1| over the run, percent.
    pub max_deviation_percent: f64,
    /// The same for the angular momentum P2G transfers (APIC's matrices included).
    pub transferred_change_percent: f64,
    pub transferred_max_deviation_percent: f64,
}

/// The first sloshing mode for one transfer.
#[derive(Clone, Debug, Serialize)]
pub struct SloshRow {
    pub transfer: Variant,
    pub cells: u32,
    /// Measured period and the linear theory's, s.
    pub period_s: f64,
    pub theory_s: f64,
    pub period_error_percent: f64,
    /// Fraction of the mode amplitude kept per period (geometric mean over the run).
    pub amplitude_per_period: f64,
    /// Mode amplitude at the start and at each later extremum, m (signs alternate).
    pub extrema_m: Vec<f64>,
    /// (time s, mode amplitude m) after every frame.
    pub series: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct TransferBenchReport {
    pub adapter: String,
    pub blob: Vec<BlobRow>,
    pub slosh: Vec<SloshRow>,
}

/// Angular velocity of the blob, rad/s, and its radius as a fraction of the domain.
const BLOB_OMEGA: f64 = 2.0;
const BLOB_RADIUS: f64 = 0.2;
/// Substep of the blob runs as a CFL number at the rim speed.
const BLOB_CFL: f64 = 0.1;

/// A sphere of liquid in zero gravity in the middle of an n^3 box of 1 m.
pub fn blob_scene(n: u32, variant: Variant) -> Scene {
    let mut scene = Scene {
        name: "rotating_blob".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (n, n, n),
        gravity: (0.0, 0.0, 0.0),
        fluid: vec![Shape::Sphere {
            center: (0.5, 0.5, 0.5),
            radius: BLOB_RADIUS,
            velocity: (0.0, 0.0, 0.0),
        }],
        // The blob measures the transfer alone: the volume correction moves particles without
        // changing their velocities, which changes r x v (by up to 1.6% over 100 substeps).
        volume_correction: false,
        ..Scene::default()
    };
    variant.apply(&mut scene);
    scene
}

/// Angular momentum per unit particle mass about the particles' centroid, m^2/s, and the
/// centroid.
pub fn angular_momentum(pos: &[[f32; 4]], vel: &[[f32; 4]]) -> ([f64; 3], [f64; 3]) {
    let n = pos.len().max(1) as f64;
    let mut c = [0.0f64; 3];
    for p in pos {
        for a in 0..3 {
            c[a] += p[a] as f64 / n;
        }
    }
    let mut l = [0.0; 3];
    for (p, v) in pos.iter().zip(vel) {
        let r = [0, 1, 2].map(|a| p[a] as f64 - c[a]);
        let v = [0, 1, 2].map(|a| v[a] as f64);
        l[0] += r[1] * v[2] - r[2] * v[1];
        l[1] += r[2] * v[0] - r[0] * v[2];
        l[2] += r[0] * v[1] - r[1] * v[0];
    }
    (l, c)
}

/// Angular momentum per unit particle mass about `center` that particle-to-grid hands the
/// grid, m^2/s: each particle's velocity at its stencil's faces (v + c_a . (x_face - x) with
/// APIC's matrices, v without) times the weights, crossed with the faces' positions. With
/// APIC this counts the rotation a particle's matrix carries, which x x v leaves out.
pub fn transferred_angular_momentum(
    scene: &Scene,
    pos: &[[f32; 4]],
    vel: &[[f32; 4]],
    affine: &[[f32; 4]],
    center: [f64; 3],
) -> [f64; 3] {
    let [nx, ny, nz] = scene.dims().map(|n| n as usize);
    let g = cpu::Grid {
        nx,
        ny,
        nz,
        h: scene.h(),
    };
    let mut l = [0.0; 3];
    for (p, (x, v)) in pos.iter().zip(vel).enumerate() {
        let x = [0, 1, 2].map(|a| x[a] as f64);
        for comp in 0..3 {
            for (node, w, _) in cpu::stencil_corners(&g, comp, x) {
                let xf = cpu::face_position(&g, comp, node);
                let mut u = v[comp] as f64;
                if let Some(c) = affine.get(3 * p + comp) {
                    u += (0..3).map(|a| c[a] as f64 * (xf[a] - x[a])).sum::<f64>();
                }
                let r = [0, 1, 2].map(|a| xf[a] - center[a]);
                // r x (u e_comp)
                let (a1, a2) = ((comp + 1) % 3, (comp + 2) % 3);
                l[a1] += w * r[a2] * u;
                l[a2] -= w * r[a1] * u;
            }
        }
    }
    l
}

/// L_z of the rotating blob after each substep (the first entry is the start), m^2/s per
/// unit particle mass, about the particles' centroid.
#[derive(Clone, Debug)]
pub struct BlobSeries {
    pub particles: u32,
    /// Of the particles: sum of (x - centroid) x v.
    pub particle_l: Vec<f64>,
    /// What P2G hands the grid ([`transferred_angular_momentum`]).
    pub transferred_l: Vec<f64>,
}

/// Runs the rotating blob: rigid rotation about z at [`BLOB_OMEGA`], APIC's matrices set to
/// the velocity gradient, `substeps` full substeps.
pub fn rotating_blob(
    ctx: Arc<GpuContext>,
    n: u32,
    variant: Variant,
    substeps: u32,
) -> Result<BlobSeries, BenchError> {
    let scene = blob_scene(n, variant);
    let mut sim = Simulation::new(ctx, &scene)?;
    let (pos, _) = sim.read_particles()?;
    let w = BLOB_OMEGA as f32;
    let vel: Vec<[f32; 4]> = pos
        .iter()
        .map(|p| [-w * (p[1] - 0.5), w * (p[0] - 0.5), 0.0, 0.0])
        .collect();
    sim.upload_particles(&pos, &vel)?;
    if variant == Variant::Apic {
        let rows: Vec<[f32; 4]> = pos
            .iter()
            .flat_map(|_| [[0.0, -w, 0.0, 0.0], [w, 0.0, 0.0, 0.0], [0.0; 4]])
            .collect();
        sim.upload_affine(&rows)?;
    }
    let dt = BLOB_CFL * scene.h() / (BLOB_OMEGA * BLOB_RADIUS);
    let mut out = BlobSeries {
        particles: sim.mode.particles.count,
        particle_l: vec![],
        transferred_l: vec![],
    };
    for step in 0..=substeps {
        if step > 0 {
            sim.substep(dt, Stage::Advect)?;
        }
        let (p, v) = sim.read_particles()?;
        let (l, c) = angular_momentum(&p, &v);
        out.particle_l.push(l[2]);
        let affine = sim.read_affine()?;
        out.transferred_l
            .push(transferred_angular_momentum(&scene, &p, &v, &affine, c)[2]);
    }
    Ok(out)
}

/// Depth of the sloshing tank's liquid and the height of the tank, as fractions of its width.
const SLOSH_DEPTH: f64 = 0.5;
const SLOSH_HEIGHT: f64 = 0.75;
/// Initial amplitude of the mode, as a fraction of the width (linear regime: k A = 0.06).
const SLOSH_AMPLITUDE: f64 = 0.05;

/// A 1 m wide tank, `n` cells across, one cell thick, liquid at rest at [`SLOSH_DEPTH`].
pub fn slosh_scene(n: u32, variant: Variant) -> Scene {
    let h = 1.0 / n as f64;
    let ny = (SLOSH_HEIGHT * n as f64).round() as u32;
    let mut scene = Scene {
        name: "sloshing".into(),
        domain: (1.0, ny as f64 * h, h),
        resolution: (n, ny, 1),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, SLOSH_DEPTH, h),
            velocity: (0.0, 0.0, 0.0),
        }],
        ..Scene::default()
    };
    variant.apply(&mut scene);
    scene
}

/// The period of the first mode by linear theory, s: omega^2 = g k tanh(k d), k = pi / L.
pub fn slosh_theory_period(g: f64, width: f64, depth: f64) -> f64 {
    let k = std::f64::consts::PI / width;
    2.0 * std::f64::consts::PI / (g * k * (k * depth).tanh()).sqrt()
}

/// Amplitude of the first mode, m: the surface height of each column (twice the mean
/// particle height, exact for a column filled evenly from the floor) projected on cos(k x).
pub fn slosh_mode_amplitude(pos: &[[f32; 4]], n: u32, depth: f64) -> f64 {
    mode_amplitude(pos, n, 1.0, depth, 1)
}

/// Amplitude of the standing mode cos(m pi x / width) of a layer `depth` deep in a tank
/// `width` wide and `n` cells across, m: each column's surface height (twice its mean
/// particle height, exact for a column filled evenly from the floor) projected on the mode.
pub fn mode_amplitude(pos: &[[f32; 4]], n: u32, width: f64, depth: f64, mode: u32) -> f64 {
    let h = width / n as f64;
    let mut sum = vec![0.0f64; n as usize];
    let mut count = vec![0u32; n as usize];
    for p in pos {
        let i = ((p[0] as f64 / h) as usize).min(n as usize - 1);
        sum[i] += p[1] as f64;
        count[i] += 1;
    }
    let k = mode as f64 * std::f64::consts::PI / width;
    let mut a = 0.0;
    for i in 0..n as usize {
        if count[i] == 0 {
            continue;
        }
        let eta = 2.0 * sum[i] / count[i] as f64 - depth;
        a += eta * (k * (i as f64 + 0.5) * h).cos();
    }
    2.0 * a / n as f64
}

/// Runs the first sloshing mode for `periods` periods of linear theory, starting at rest
/// with the surface at depth + A cos(k x) (each column of seeded particles stretched).
pub fn sloshing(
    ctx: Arc<GpuContext>,
    n: u32,
    variant: Variant,
    periods: u32,
) -> Result<SloshRow, BenchError> {
    let scene = slosh_scene(n, variant);
    let mut sim = Simulation::new(ctx, &scene)?;
    let (mut pos, vel) = sim.read_particles()?;
    let k = std::f64::consts::PI;
    for p in pos.iter_mut() {
        let eta = SLOSH_AMPLITUDE * (k * p[0] as f64).cos();
        p[1] = (p[1] as f64 * (1.0 + eta / SLOSH_DEPTH)) as f32;
    }
    let zero = vec![[0.0f32; 4]; vel.len()];
    sim.upload_particles(&pos, &zero)?;
    let g = -scene.gravity.1;
    let theory = slosh_theory_period(g, 1.0, SLOSH_DEPTH);
    let mut series = vec![(0.0, slosh_mode_amplitude(&pos, n, SLOSH_DEPTH))];
    while sim.time < periods as f64 * theory {
        sim.step_frame()?;
        let (p, _) = sim.read_particles()?;
        series.push((sim.time, slosh_mode_amplitude(&p, n, SLOSH_DEPTH)));
    }
    let (period, extrema) = oscillation(&series);
    let kept = match extrema.len() {
        0 | 1 => f64::NAN,
        m => (extrema[m - 1].abs() / extrema[0].abs()).powf(2.0 / (m - 1) as f64),
    };
    Ok(SloshRow {
        transfer: variant,
        cells: n,
        period_s: period,
        theory_s: theory,
        period_error_percent: 100.0 * (period - theory) / theory,
        amplitude_per_period: kept,
        extrema_m: extrema,
        series,
    })
}

/// Period (twice the mean spacing of zero crossings, linearly interpolated) and the
/// extremum of each half period (the start, then the largest |a| between two crossings,
/// refined by a parabola through its neighbours) of a sampled oscillation.
pub fn oscillation(series: &[(f64, f64)]) -> (f64, Vec<f64>) {
    let mut crossings = vec![];
    for (i, w) in series.windows(2).enumerate() {
        let ((t0, a0), (t1, a1)) = (w[0], w[1]);
        if a0 != 0.0 && (a0 < 0.0) != (a1 < 0.0) {
            crossings.push((i + 1, t0 + (t1 - t0) * a0 / (a0 - a1)));
        }
    }
    let period = if crossings.len() >= 2 {
        let (first, last) = (crossings[0].1, crossings[crossings.len() - 1].1);
        2.0 * (last - first) / (crossings.len() - 1) as f64
    } else {
        f64::NAN
    };
    let mut extrema = vec![series.first().map_or(0.0, |s| s.1)];
    for w in crossings.windows(2) {
        let (lo, hi) = (w[0].0, w[1].0);
        let Some(i) = (lo..hi).max_by(|a, b| series[*a].1.abs().total_cmp(&series[*b].1.abs()))
        else {
            continue;
        };
        let mut e = series[i].1;
        if i > 0 && i + 1 < series.len() {
            // Vertex of the parabola through three equally spaced samples.
            let (a, b, c) = (series[i - 1].1, series[i].1, series[i + 1].1);
            let den = a - 2.0 * b + c;
            if den != 0.0 {
                let s = 0.5 * (a - c) / den;
                if s.abs() <= 1.0 {
                    e = b - 0.25 * (a - c) * s;
                }
            }
        }
        extrema.push(e);
    }
    (period, extrema)
}

/// Change of the last entry from the first and largest deviation from it, percent.
pub fn relative_change(series: &[f64]) -> (f64, f64) {
    let first = series.first().copied().unwrap_or(f64::NAN);
    let rel = |x: f64| 100.0 * (x - first) / first;
    let last = series.last().map_or(f64::NAN, |x| rel(*x));
    let max = series.iter().map(|x| rel(*x).abs()).fold(0.0, f64::max);
    (last, max)
}

/// Runs the blob and the sloshing mode for FLIP, PIC and APIC.
pub fn run(
    ctx: Arc<GpuContext>,
    opts: &TransferBenchOptions,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<TransferBenchReport, BenchError> {
    opts.validate()?;
    let total = 2 * Variant::ALL.len();
    let mut done = 0;
    let mut blob = vec![];
    for v in Variant::ALL {
        progress(done, total, &format!("rotating blob, {}", v.name()));
        let b = rotating_blob(ctx.clone(), opts.blob_cells, v, opts.blob_substeps)?;
        let (l, t) = (&b.particle_l, &b.transferred_l);
        blob.push(BlobRow {
            transfer: v,
            particles: b.particles,
            substeps: opts.blob_substeps,
            l_start: l[0],
            l_end: l[l.len() - 1],
            change_percent: relative_change(l).0,
            max_deviation_percent: relative_change(l).1,
            transferred_change_percent: relative_change(t).0,
            transferred_max_deviation_percent: relative_change(t).1,
        });
        done += 1;
    }
    let mut slosh = vec![];
    for v in Variant::ALL {
        progress(done, total, &format!("sloshing, {}", v.name()));
        slosh.push(sloshing(ctx.clone(), opts.slosh_cells, v, opts.periods)?);
        done += 1;
    }
    progress(done, total, "done");
    Ok(TransferBenchReport {
        adapter: ctx.describe(),
        blob,
        slosh,
    })
}

pub fn table(r: &TransferBenchReport) -> String {
    let mut s = format!("adapter: {}\n\n", r.adapter);
    if let Some(b) = r.blob.first() {
        s += &format!(
            "rotating blob in zero gravity (omega {BLOB_OMEGA} rad/s, radius {BLOB_RADIUS} m, \
             {} particles, {} substeps at CFL {BLOB_CFL}): angular momentum L_z\n",
            b.particles, b.substeps
        );
    }
    s += &format!(
        "{:>8} {:>12} {:>12} {:>10} {:>10} {:>13} {:>13}\n",
        "transfer", "L start", "L end", "change %", "max dev %", "P2G change %", "P2G max dev %"
    );
    for b in &r.blob {
        s += &format!(
            "{:>8} {:>12.5e} {:>12.5e} {:>10.3} {:>10.3} {:>13.3} {:>13.3}\n",
            b.transfer.name(),
            b.l_start,
            b.l_end,
            b.change_percent,
            b.max_deviation_percent,
            b.transferred_change_percent,
            b.transferred_max_deviation_percent
        );
    }
    s += "\nfirst sloshing mode (1 m wide, 0.5 m deep, one cell thick, free-slip walls)\n";
    s += &format!(
        "{:>8} {:>6} {:>10} {:>10} {:>9} {:>13}\n",
        "transfer", "cells", "period s", "theory s", "error %", "kept/period"
    );
    for row in &r.slosh {
        s += &format!(
            "{:>8} {:>6} {:>10.4} {:>10.4} {:>9.2} {:>13.4}\n",
            row.transfer.name(),
            row.cells,
            row.period_s,
            row.theory_s,
            row.period_error_percent,
            row.amplitude_per_period
        );
    }
    s
}

/// The transfer bench prints its tables once both cases have run (each row needs the whole
/// run of its variant).
impl crate::bench::StreamedTable for TransferBenchReport {
    fn head(&self) -> String {
        String::new()
    }
    fn row_count(&self) -> usize {
        0
    }
    fn row(&self, _i: usize) -> String {
        String::new()
    }
    fn tail(&self) -> String {
        table(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oscillation_finds_the_period_and_the_decay_of_a_damped_cosine() {
        let (period, kept) = (1.18, 0.8f64);
        let gamma = -kept.ln() / period;
        let series: Vec<(f64, f64)> = (0..400)
            .map(|i| {
                let t = i as f64 / 60.0;
                let a = 0.05 * (-gamma * t).exp() * (2.0 * std::f64::consts::PI * t / period).cos();
                (t, a)
            })
            .collect();
        let (p, extrema) = oscillation(&series);
        assert!((p - period).abs() < 1e-3 * period, "period {p}");
        assert_eq!(extrema.len(), 11);
        let m = extrema.len() - 1;
        let measured = (extrema[m].abs() / extrema[0].abs()).powf(2.0 / m as f64);
        assert!((measured - kept).abs() < 2e-3, "kept {measured}");
        assert!(extrema.windows(2).all(|w| w[0] * w[1] < 0.0));
    }

    #[test]
    fn slosh_amplitude_of_a_stretched_column_layout_is_the_stretch() {
        let n = 16;
        let k = std::f64::consts::PI;
        // Columns filled evenly from the floor to depth + A cos(k x).
        let mut pos = vec![];
        for i in 0..n {
            let x = (i as f64 + 0.5) / n as f64;
            let top = SLOSH_DEPTH + 0.03 * (k * x).cos();
            for j in 0..64 {
                pos.push([x as f32, ((j as f64 + 0.5) / 64.0 * top) as f32, 0.0, 0.0]);
            }
        }
        let a = slosh_mode_amplitude(&pos, n, SLOSH_DEPTH);
        assert!((a - 0.03).abs() < 1e-5, "amplitude {a}");
    }

    #[test]
    fn theory_period_matches_the_dispersion_relation() {
        // Deep water limit: omega^2 = g k.
        let t = slosh_theory_period(9.81, 1.0, 100.0);
        let k = std::f64::consts::PI;
        assert!((t - 2.0 * std::f64::consts::PI / (9.81 * k).sqrt()).abs() < 1e-9);
    }
}
