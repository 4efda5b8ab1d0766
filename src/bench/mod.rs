//! `eddy bench`: the tables that compare the pressure solvers ([`solver`]), the smoke
//! step ([`smoke`]) and the liquid's transfers ([`transfer`]).

pub mod smoke;
pub mod solver;
pub mod transfer;

pub use solver::{run, BenchOptions, BenchReport, BenchRow};

use crate::sim::SimError;
use thiserror::Error;

/// Most of any count option (solves, steps, warm-up substeps, iterations between checks):
/// a typo of a few digits more must not start a benchmark that runs until killed.
pub const MAX_COUNT: u32 = 100_000;

/// Smallest `--tolerance`: far below what an f32 solve reaches (see the f32 floor that
/// `eddy bench` prints), so a smaller one only spins to the iteration limit.
pub const MIN_TOLERANCE: f64 = 1e-10;

/// Refuses a tolerance outside [MIN_TOLERANCE, 1) and a count past [`MAX_COUNT`] (or 0).
pub(crate) fn check_common(tolerance: f64, counts: &[(&str, u32)]) -> Result<(), BenchError> {
    if !(MIN_TOLERANCE..1.0).contains(&tolerance) {
        return Err(BenchError::Options(format!(
            "--tolerance must be in [{MIN_TOLERANCE:e}, 1), got {tolerance}"
        )));
    }
    for (name, n) in counts {
        if !(1..=MAX_COUNT).contains(n) {
            return Err(BenchError::Options(format!(
                "{name} must be between 1 and {MAX_COUNT}, got {n}"
            )));
        }
    }
    Ok(())
}

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
}

/// A report printed as it grows: its head once the run has started, a line per case as
/// the case finishes, and a tail at the end; `table` is all of it at once.
pub trait StreamedTable {
    fn head(&self) -> String;
    fn row_count(&self) -> usize;
    fn row(&self, i: usize) -> String;
    fn tail(&self) -> String;
    fn table(&self) -> String {
        let mut s = self.head();
        for i in 0..self.row_count() {
            s += &self.row(i);
        }
        s + &self.tail()
    }
}
