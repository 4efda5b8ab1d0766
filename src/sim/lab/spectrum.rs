//! The spectrum of the preconditioned operator, estimated by Lanczos from CG's
//! coefficients.

use super::*;

/// alpha and beta of iterations 1.. as f64.
pub(super) fn coefficients(rows: &[IterationRow]) -> (Vec<f64>, Vec<f64>) {
    let it = rows.iter().filter(|r| r.iteration > 0);
    let a = it.clone().map(|r| r.alpha as f64).collect();
    let b = it.map(|r| r.beta as f64).collect();
    (a, b)
}

/// Extreme eigenvalues of the preconditioned operator M^-1 A estimated by Lanczos from CG's
/// coefficients, the condition number, and the textbook iteration bound from it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Spectrum {
    /// Lanczos steps (CG iterations) the estimate uses.
    pub steps: usize,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// lambda_max / lambda_min (a lower bound on the true condition number, which the
    /// extreme Ritz values approach from inside).
    pub kappa: f64,
    /// k = 1/2 sqrt(kappa) ln(2/eps): iterations after which the A-norm error of CG has
    /// dropped by eps (the tolerance; eddy's test is in the max norm of r, so this is a
    /// guide, not a promise).
    pub bound_iterations: f64,
}

/// The Lanczos tridiagonal T_k of preconditioned CG from its coefficients (alpha_j,
/// beta_j of iterations j = 1..k) and its extreme eigenvalues:
/// T[0][0] = 1/alpha_1, T[j][j] = 1/alpha_{j+1} + beta_j/alpha_j,
/// T[j][j+1] = sqrt(beta_{j+1})/alpha_{j+1}. None with no usable iteration.
pub fn lanczos(alpha: &[f64], beta: &[f64], eps: f64) -> Option<Spectrum> {
    // Only the leading run of finite, positive coefficients (a breakdown ends it); the
    // last iteration's beta is not used.
    let ok = |x: f64| x.is_finite() && x > 0.0;
    let mut k = 0;
    while k < alpha.len() && ok(alpha[k]) && (k == 0 || beta.get(k - 1).is_some_and(|&b| ok(b))) {
        k += 1;
    }
    if k == 0 {
        return None;
    }
    let mut t = nalgebra::DMatrix::<f64>::zeros(k, k);
    for j in 0..k {
        t[(j, j)] = 1.0 / alpha[j]
            + if j > 0 {
                beta[j - 1] / alpha[j - 1]
            } else {
                0.0
            };
        if j + 1 < k {
            let off = beta[j].sqrt() / alpha[j];
            t[(j, j + 1)] = off;
            t[(j + 1, j)] = off;
        }
    }
    let eig = nalgebra::SymmetricEigen::new(t).eigenvalues;
    let lambda_min = eig.iter().copied().fold(f64::INFINITY, f64::min);
    let lambda_max = eig.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let kappa = lambda_max / lambda_min;
    Some(Spectrum {
        steps: k,
        lambda_min,
        lambda_max,
        kappa,
        bound_iterations: 0.5 * kappa.sqrt() * (2.0 / eps).ln(),
    })
}
