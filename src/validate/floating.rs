//! Floating bodies: a flat box (0.375 x 0.25 x 0.375 m) released just above its floating
//! position in a 1 m tank half full of liquid, one run per density. Reference (Archimedes):
//! a floating body's submerged fraction of its height equals its density over the
//! liquid's. Measured: the submerged fraction from the body's mean height over the second
//! half of the run and the pool's level (the conserved liquid volume plus what the box
//! displaces). Error: |fraction - density ratio|.

use super::{CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{BodyMotion, BodyShape, BodySpec, Scene, Shape};
use crate::sim::{Simulation, Stage};
use std::sync::Arc;

/// Half extents of the box, m.
pub const HALF: [f64; 3] = [0.1875, 0.125, 0.1875];
/// The pool's depth before the body, m (a 1 x 1 m tank).
pub const POOL: f64 = 0.5;
/// The bound on |fraction - ratio| on an n^3 grid: half a cell of the box's height, what a
/// body of whole cells resolves its draft to. Bodies that cut faces (the liquid's default)
/// do better: 0.005-0.011 at 16^3 against 0.008-0.089 as whole cells.
pub fn tolerance(n: u32) -> f64 {
    0.5 / n as f64 / (2.0 * HALF[1])
}
/// Substep, s.
pub const DT: f64 = 0.02;

/// The box's height above its floating position where it is released, m.
const DROP: f64 = 0.02;

/// Submerged fraction of the box's height with its centre at `y`, in a 1 x 1 m tank whose
/// liquid is the `POOL` m pool less what the box displaced at its release height `start`
/// (no liquid is seeded inside a body): the level is (V_liquid + A_box submerged) / A_tank,
/// submerged = level - bottom, so level = (V_liquid - A_box bottom) / (1 - A_box).
pub fn submerged_fraction(y: f64, start: f64) -> f64 {
    let half = HALF[1];
    let area = (2.0 * HALF[0]) * (2.0 * HALF[2]);
    let volume = POOL - area * (POOL - (start - half)).clamp(0.0, 2.0 * half);
    let bottom = y - half;
    let level = (volume - area * bottom) / (1.0 - area);
    ((level - bottom) / (2.0 * half)).clamp(0.0, 1.0)
}

/// Where a box of density ratio `ratio` floats (centre height, m), from the seeded pool:
/// its bottom `ratio` of its height below the level.
pub fn release_height(ratio: f64) -> f64 {
    POOL - ratio * 2.0 * HALF[1] + HALF[1] + DROP
}

pub fn scene(n: u32, density: f64) -> Scene {
    Scene {
        name: "validate: floating box".into(),
        resolution: (n, n, n),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, POOL, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        bodies: vec![BodySpec {
            shape: BodyShape::Box {
                half_extents: (HALF[0], HALF[1], HALF[2]),
            },
            center: (0.5, release_height(density / crate::sim::DENSITY), 0.5),
            density,
            velocity: (0.0, 0.0, 0.0),
            angular_velocity: (0.0, 0.0, 0.0),
            rotation_deg: (0.0, 0.0, 0.0),
            restitution: 0.2,
            friction: 0.5,
            motion: BodyMotion::Dynamic,
        }],
        frame_dt: DT,
        ..Default::default()
    }
}

struct Plan {
    sizes: Vec<u32>,
    ratios: Vec<f64>,
    substeps: usize,
}

fn plan(level: Level) -> Plan {
    match level {
        Level::Quick => Plan {
            sizes: vec![16],
            ratios: vec![0.3, 0.5, 0.7],
            substeps: 100,
        },
        Level::Full => Plan {
            sizes: vec![16, 24, 32],
            ratios: vec![0.2, 0.35, 0.5, 0.65, 0.8],
            substeps: 400,
        },
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let p = plan(level);
    let total = (p.sizes.len() * p.ratios.len()) as u64;
    let mut done = 0;
    let mut rows = Vec::new();
    let mut series = vec![Series::new(
        "Archimedes: fraction = rho_body / rho_liquid",
        vec![(0.0, 0.0), (1.0, 1.0)],
        Mark::Line,
    )];
    for &n in &p.sizes {
        let mut pts = Vec::new();
        for &r in &p.ratios {
            progress(done, total, &format!("{n}^3 ratio {r}"));
            let s = scene(n, r * crate::sim::DENSITY);
            let start = s.bodies[0].center.1;
            let mut sim = Simulation::new(ctx.clone(), &s)?;
            let mut ys = Vec::new();
            for i in 0..p.substeps {
                sim.substep(DT, Stage::Advect)?;
                if i >= p.substeps / 2 {
                    if let Some(b) = sim.bodies.as_ref() {
                        ys.push(b.set.bodies[0].position.y);
                    }
                }
            }
            let y = ys.iter().sum::<f64>() / ys.len().max(1) as f64;
            let frac = submerged_fraction(y, start);
            rows.push(Row {
                case: "floating".into(),
                resolution: format!("{n}^3 ratio {r}"),
                measured: frac,
                reference: r,
                error: (frac - r).abs(),
                tolerance: tolerance(n),
            });
            pts.push((r, frac));
            done += 1;
        }
        series.push(Series::new(format!("eddy {n}^3"), pts, Mark::Markers));
    }
    progress(done, total, "done");
    Ok(CaseReport {
        name: "floating".into(),
        title: "Floating bodies: Archimedes".into(),
        reference: format!(
            "A box 0.375 x 0.25 x 0.375 m (strong coupling, all-or-nothing solid cells) \
             released {DROP} m above its floating position in a 1 m tank filled {POOL} m deep, \
             {} substeps of {DT} s. Reference (Archimedes): the submerged fraction of its \
             height equals rho_body / rho_liquid. Measured: the fraction from its mean height \
             over the second half of the run and the level of the conserved liquid volume; \
             error |fraction - ratio|, passing below half a cell of the box's height (0.5 h / \
             0.25 m: {:.3} at {}^3), since the body covers whole cells.",
            p.substeps,
            tolerance(p.sizes[0]),
            p.sizes[0]
        ),
        rows,
        plots: vec![Plot {
            name: "floating_fraction".into(),
            title: "Submerged fraction vs density ratio".into(),
            x_label: "density ratio rho_body / rho_liquid".into(),
            y_label: "submerged fraction of the height".into(),
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
    fn submerged_fraction_by_hand() {
        // Released at 0.56 (bottom 0.435: 0.065 m of the box under the 0.5 m pool):
        // V = 0.5 - 0.140625 * 0.065 = 0.490859375. At y = 0.5 (bottom 0.375):
        // level = (V - 0.140625 * 0.375) / 0.859375 = 0.5097..., fraction
        // (level - 0.375) / 0.25.
        let v = 0.5 - 0.140625 * 0.065;
        let level = (v - 0.140625 * 0.375) / 0.859375;
        let f = submerged_fraction(0.5, 0.56);
        assert!((f - (level - 0.375) / 0.25).abs() < 1e-12, "{f}");
        // Far above the pool nothing is submerged; far below, all of it.
        assert_eq!(submerged_fraction(2.0, 2.0), 0.0);
        assert_eq!(submerged_fraction(0.13, 0.13), 1.0);
        // The release height of a half-density box: bottom 0.125 under the 0.5 m level.
        assert!((release_height(0.5) - (0.5 - 0.125 + 0.125 + DROP)).abs() < 1e-12);
        // Half a cell of 1/16 m over the 0.25 m box.
        assert!((tolerance(16) - 0.125).abs() < 1e-12);
    }
}
