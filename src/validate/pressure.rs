//! The pressure solve: the relative residual after each PCG iteration for every
//! preconditioner on one system (the dam break's first pressure solve), and the iterations
//! each needs to reach the tolerance as the grid grows (the scaling that shows why `mg`
//! wins). Each solve must end with its true residual max|b - A p| / max|b| within what an
//! f32 solve can reach ([`pass_bound`]).

use super::{fitted_order, CaseReport, Level, Mark, Plot, Row, Series, ValidateError};
use crate::gpu::GpuContext;
use crate::scene::{PreconditionerKind, StandardProblem};
use crate::sim::{Simulation, Stage};
use std::sync::Arc;

/// The relative residual the solves iterate to.
pub const TOLERANCE: f64 = 1e-6;
/// A solve passes when its true residual is below this (f32 round-off makes the true
/// residual drift above the recursive one the test reads).
pub const PASS: f64 = 10.0 * TOLERANCE;

/// The largest true residual that passes on a system whose f32 floor is `floor`, solved in
/// `iterations`: 10x the tolerance, 10x the floor, or the floor once per iteration,
/// whichever is largest. In f32 the true residual drifts above the recursive one the
/// convergence test reads, by round-off that accumulates over the iterations (CG's
/// attainable accuracy: the gap grows with the iteration count, about a floor each at
/// worst); measured at 96^3, 1-3e-4 after 230-420 iterations for none, jacobi and ip.
pub fn pass_bound(floor: f64, iterations: u32) -> f64 {
    PASS.max(10.0 * floor).max(iterations as f64 * floor)
}

/// Iterations until `history` (the relative residual before the first iteration and after
/// each one) first falls to `tol`; None if it never does.
pub fn iterations_to(history: &[f32], tol: f64) -> Option<usize> {
    history.iter().position(|&r| (r as f64) <= tol)
}

/// `(iteration, residual)` points of a residual history, dropping non-positive values (a
/// log axis cannot show them).
pub fn history_points(history: &[f32]) -> Vec<(f64, f64)> {
    history
        .iter()
        .enumerate()
        .filter(|(_, &r)| r > 0.0 && r.is_finite())
        .map(|(i, &r)| (i as f64, r as f64))
        .collect()
}

fn sizes(level: Level) -> Vec<u32> {
    match level {
        Level::Quick => vec![8, 12, 16],
        Level::Full => vec![16, 32, 64, 96],
    }
}

pub fn run(
    ctx: &Arc<GpuContext>,
    level: Level,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<CaseReport, ValidateError> {
    let kinds = PreconditionerKind::ALL;
    let sizes = sizes(level);
    let total = (sizes.len() * kinds.len()) as u64;
    let problem = StandardProblem::DamBreak;
    let mut rows = Vec::new();
    let mut histories: Vec<(PreconditionerKind, Vec<f32>)> = Vec::new();
    let mut scaling: Vec<Vec<(f64, f64)>> = vec![Vec::new(); kinds.len()];
    let mut done = 0;
    for &n in &sizes {
        let mut scene = problem.scene(n);
        scene.pressure.tolerance = TOLERANCE;
        scene.pressure.max_iterations = 4000;
        let mut sim = Simulation::new(ctx.clone(), &scene)?;
        sim.substep(scene.frame_dt, Stage::Boundary)?;
        for (ki, &kind) in kinds.iter().enumerate() {
            progress(done, total, &format!("{n}^3 {kind}"));
            let mut s = scene.clone();
            s.pressure.preconditioner = kind;
            sim.apply_live_settings(&s)
                .map_err(|e| ValidateError::Options(format!("pressure case: {e}")))?;
            let rep = sim.solve_pressure_again()?;
            let true_res = rep.true_residual.unwrap_or(rep.residual);
            let floor = rep.f32_floor.unwrap_or(0.0);
            let pass = pass_bound(floor, rep.iterations);
            let iters = iterations_to(&rep.history, TOLERANCE).unwrap_or(rep.iterations as usize);
            scaling[ki].push((n as f64, iters.max(1) as f64));
            rows.push(Row {
                case: "pressure".into(),
                resolution: format!("{n}^3 {kind} ({iters} it)"),
                measured: true_res,
                reference: TOLERANCE,
                error: true_res,
                tolerance: pass,
            });
            if n == *sizes.last().unwrap() {
                histories.push((kind, rep.history.clone()));
            }
            done += 1;
        }
    }
    progress(done, total, "done");
    let nmax = *sizes.last().unwrap();
    let mut hist_series: Vec<Series> = histories
        .iter()
        .map(|(k, h)| Series::new(k.name(), history_points(h), Mark::MarkersLine))
        .collect();
    let last = histories.iter().map(|(_, h)| h.len()).max().unwrap_or(1);
    hist_series.push(Series::new(
        format!("tolerance {TOLERANCE:e}"),
        vec![(0.0, TOLERANCE), (last as f64, TOLERANCE)],
        Mark::Line,
    ));
    let scale_series: Vec<Series> = kinds
        .iter()
        .zip(&scaling)
        .map(|(k, pts)| {
            let label = match fitted_order(pts) {
                Some((p, _)) => format!("{} (iterations ~ n^{p:.2})", k.name()),
                None => k.name().to_string(),
            };
            Series::new(label, pts.clone(), Mark::MarkersLine)
        })
        .collect();
    Ok(CaseReport {
        name: "pressure".into(),
        title: super::CASES[0].title.into(),
        reference: format!(
            "The first pressure solve of the dam break (StandardProblem::DamBreak, as in `eddy \
             bench`) on n^3 grids, solved by PCG with each preconditioner to a relative \
             residual max|r|/max|b| of {TOLERANCE:e}. Measured: the true residual max|b - A p| / \
             max|b| of the stored solution. It passes below the largest of {PASS:e}, 10x the \
             system's f32 floor (an ulp of each cell's largest term relative to max|b|) and \
             that floor times the iterations: in f32 the true residual drifts above the \
             recursive one the test reads, by round-off that accumulates over the \
             iterations. The resolution column also gives the iterations to the tolerance."
        ),
        rows,
        plots: vec![
            Plot {
                name: "pressure_residual".into(),
                title: format!("PCG residual history, dam break {nmax}^3"),
                x_label: "PCG iteration".into(),
                y_label: "relative residual max|r| / max|b|".into(),
                log_x: false,
                log_y: true,
                series: hist_series,
            },
            Plot {
                name: "pressure_scaling".into(),
                title: "Iterations to the tolerance vs grid size".into(),
                x_label: "cells per axis n".into(),
                y_label: format!("PCG iterations to {TOLERANCE:e}"),
                log_x: true,
                log_y: true,
                series: scale_series,
            },
        ],
        notes: vec![format!(
            "The growth exponents fit iterations ~ n^p over n = {} to {nmax}.{}",
            sizes[0],
            if level == Level::Quick {
                " On --quick's small grids they are dominated by the smallest one (there mg's \
                 coarse levels nearly solve the system); --full's larger grids show the \
                 asymptotic scaling."
            } else {
                ""
            }
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_to_the_tolerance() {
        let h = [1.0, 0.1, 1e-3, 5e-7, 1e-7];
        assert_eq!(iterations_to(&h, 1e-6), Some(3));
        assert_eq!(iterations_to(&h, 1e-2), Some(2));
        assert_eq!(iterations_to(&h, 1e-8), None);
        assert_eq!(pass_bound(1e-7, 10), PASS);
        assert_eq!(pass_bound(3e-6, 5), 3e-5);
        assert!((pass_bound(1e-6, 400) - 4e-4).abs() < 1e-15);
        assert_eq!(
            history_points(&[1.0, 0.0, 0.5]),
            vec![(0.0, 1.0), (2.0, 0.5)]
        );
    }
}
