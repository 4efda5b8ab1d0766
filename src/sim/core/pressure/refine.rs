//! Mixed-precision iterative refinement (`pressure.refine`): the f32 PCG solves, the host
//! keeps the solution and computes the residual in f64. After the solve, the host reads A,
//! b and the solution x; while max|b - A x| / max|b| (in f64) is above the target it solves
//! A e = r on the GPU with the same preconditioner (a cold start, the scene's tolerance) and
//! adds e to x in f64. The solution goes back as two f32 buffers, `p` (the nearest f32) and
//! `p_lo` (what f32 dropped), and the projection subtracts the gradient of both
//! (src/sim/core/project.rs), so the velocity sees the refined pressure.
//!
//! Each round costs a solve and reads three cell arrays back: for users who want the
//! pressure to 1e-9 and more, not for speed. The system solved is A alone (scenes with
//! rigid bodies, whose coupled term lives on the GPU, are refused by the scene's checks).

use super::{PcgVectors, PressureSolver, SolveReport};
use crate::gpu::{read_buffer, GpuContext, GpuError};
use crate::scene::PressureSettings;
use crate::sim::core::fields::GridFields;

/// Most refinement rounds per solve (each gains about the f32 solve's tolerance).
pub const MAX_ROUNDS: u32 = 6;

/// What a refinement did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RefineReport {
    /// Correction solves run.
    pub rounds: u32,
    /// Their PCG iterations, all together.
    pub iterations: u32,
    /// max|b - A x| / max|b| of the refined solution, in f64 (x = p + p_lo).
    pub true_residual: f64,
    /// The same of the f32 solution before the refinement.
    pub before: f64,
}

/// y = A x in f64 over the packed matrix `a` (diag, +x, +y, +z per cell, each coupling
/// stored once on the lower cell of its pair, as the GPU reads it); zero on rows with no
/// equation (not FLUID).
pub fn apply_packed_f64(dims: [u32; 3], a: &[[f32; 4]], x: &[f64]) -> Vec<f64> {
    let [nx, ny, nz] = dims.map(|v| v as usize);
    let stride = [1, nx, nx * ny];
    let len = [nx, ny, nz];
    (0..a.len())
        .map(|c| {
            let row = a[c];
            if row[0] == 0.0 {
                return 0.0;
            }
            let at = [c % nx, (c / nx) % ny, c / (nx * ny)];
            let mut s = row[0] as f64 * x[c];
            for ax in 0..3 {
                if at[ax] + 1 < len[ax] {
                    s += row[ax + 1] as f64 * x[c + stride[ax]];
                }
                if at[ax] > 0 {
                    let m = c - stride[ax];
                    s += a[m][ax + 1] as f64 * x[m];
                }
            }
            s
        })
        .collect()
}

/// r = b - A x in f64 on the rows with an equation (0 elsewhere), and max|r| / max|b| over
/// those rows.
pub fn residual(dims: [u32; 3], a: &[[f32; 4]], b: &[f32], x: &[f64]) -> (Vec<f64>, f64) {
    let ax = apply_packed_f64(dims, a, x);
    let r: Vec<f64> = (0..b.len())
        .map(|c| {
            if a[c][0] != 0.0 {
                b[c] as f64 - ax[c]
            } else {
                0.0
            }
        })
        .collect();
    let bmax = (0..b.len())
        .filter(|&c| a[c][0] != 0.0)
        .fold(0.0f64, |m, c| m.max((b[c] as f64).abs()));
    let rmax = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (r, if bmax > 0.0 { rmax / bmax } else { 0.0 })
}

impl PressureSolver {
    /// Refines the solution of the solve that just ran (its matrix, preconditioner set-up
    /// and right-hand side are still in `v`) to a true residual of `target`, at most
    /// [`MAX_ROUNDS`] rounds; writes `p` and `p_lo`.
    pub fn refine(
        &mut self,
        ctx: &GpuContext,
        f: &GridFields,
        v: &PcgVectors,
        p_lo: &wgpu::Buffer,
        s: &PressureSettings,
        target: f64,
    ) -> Result<RefineReport, GpuError> {
        let dims = f.params.n;
        let a: Vec<[f32; 4]> = read_buffer(ctx, &v.a)?;
        let b: Vec<f32> = v.b.read(ctx)?;
        let p: Vec<f32> = read_buffer(ctx, &v.p)?;
        let n = b.len();
        let mut x: Vec<f64> = p[..n].iter().map(|v| *v as f64).collect();
        let (mut r, before) = residual(dims, &a, &b, &x);
        let mut rel = before;
        let mut report = RefineReport {
            before,
            ..Default::default()
        };
        let cold = PressureSettings {
            warm_start: false,
            ..s.clone()
        };
        while rel > target && report.rounds < MAX_ROUNDS {
            let rf: Vec<f32> = r.iter().map(|v| *v as f32).collect();
            v.b.write(&ctx.queue, bytemuck::cast_slice(&rf));
            ctx.queue
                .write_buffer(&v.p, 0, bytemuck::cast_slice(&vec![0f32; n]));
            self.write_config(ctx, v, &cold, false);
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("PressureSolver::refine"),
                });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("pressure::refine"),
                    timestamp_writes: None,
                });
                self.record_start(&mut pass, f, s.preconditioner, None);
            }
            ctx.submit(enc.finish());
            let solve: SolveReport = self.iterate(ctx, f, v, &cold, None, None)?;
            report.iterations += solve.iterations;
            report.rounds += 1;
            let e: Vec<f32> = read_buffer(ctx, &v.p)?;
            for (xi, ei) in x.iter_mut().zip(&e) {
                *xi += *ei as f64;
            }
            let (r2, rel2) = residual(dims, &a, &b, &x);
            if rel2.is_nan() || rel2 >= rel {
                // The f32 correction no longer helps (a floor, e.g. a closed box's mean):
                // keep the better solution.
                for (xi, ei) in x.iter_mut().zip(&e) {
                    *xi -= *ei as f64;
                }
                break;
            }
            r = r2;
            rel = rel2;
        }
        report.true_residual = rel;
        let hi: Vec<f32> = x.iter().map(|v| *v as f32).collect();
        let lo: Vec<f32> = x
            .iter()
            .zip(&hi)
            .map(|(v, h)| (v - *h as f64) as f32)
            .collect();
        v.b.write(&ctx.queue, bytemuck::cast_slice(&b));
        ctx.queue.write_buffer(&v.p, 0, bytemuck::cast_slice(&hi));
        ctx.queue.write_buffer(p_lo, 0, bytemuck::cast_slice(&lo));
        self.write_config(ctx, v, s, false);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_f64_residual_reads_the_packed_matrix_both_ways() {
        // Two cells along x coupled by -1, diagonals 2 and 3: A = [[2, -1], [-1, 3]].
        let a = [[2.0, -1.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]];
        let b = [1.0f32, 4.0];
        let x = [0.5, 1.0];
        // r = b - A x = (1 - (1 - 1), 4 - (-0.5 + 3)) = (1, 1.5); max|b| = 4.
        let (r, rel) = residual([2, 1, 1], &a, &b, &x);
        assert_eq!(r, vec![1.0, 1.5]);
        assert_eq!(rel, 1.5 / 4.0);
        // The exact solution x = (7/5, 9/5) leaves nothing.
        let (_, rel) = residual([2, 1, 1], &a, &b, &[1.4, 1.8]);
        assert!(rel < 1e-15, "{rel}");
    }
}
