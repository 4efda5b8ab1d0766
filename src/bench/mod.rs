//! `eddy bench`: the tables that compare the pressure solvers ([`solver`]), the smoke
//! step ([`smoke`]) and the liquid's transfers ([`transfer`]).

pub mod smoke;
pub mod solver;
pub mod transfer;

pub use solver::{run, BenchOptions, BenchReport, BenchRow};

use crate::sim::SimError;
use thiserror::Error;

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
