//! What the host asks of the GPU, counted: compute dispatches recorded, command buffers
//! submitted, blocking reads and the bytes they bring back. On a real GPU a small grid's
//! substep is bound by these, not by arithmetic, so they are measured, not guessed.
//!
//! The counts are kept per thread: a simulation is driven from one thread, so the counts a
//! thread sees around a substep are that substep's, even while other simulations (tests
//! in parallel) run on other threads.

use std::cell::Cell;

/// Counts since the thread started (subtract two snapshots with [`Traffic::since`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Command buffers submitted to the queue.
    pub submits: u64,
    /// Blocking reads: the host waited for the GPU and mapped a buffer.
    pub reads: u64,
    /// Those of the reads that waited for everything submitted: the GPU had nothing queued
    /// behind them and idled until the host submitted more. The others waited for one
    /// submission while later ones kept the GPU busy.
    pub drains: u64,
    /// Bytes those reads brought back.
    pub bytes_read: u64,
    /// Nanoseconds the host spent blocked in those reads, waiting for the GPU.
    pub wait_ns: u64,
    /// Nanoseconds the host spent inside the queue's submit calls.
    pub submit_ns: u64,
}

thread_local! {
    static COUNTS: Cell<Traffic> = const { Cell::new(Traffic {
        dispatches: 0,
        submits: 0,
        reads: 0,
        drains: 0,
        bytes_read: 0,
        wait_ns: 0,
        submit_ns: 0,
    }) };
}

impl Traffic {
    /// This thread's counts so far.
    pub fn now() -> Traffic {
        COUNTS.with(Cell::get)
    }

    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: Traffic) -> Traffic {
        Traffic {
            dispatches: self.dispatches - earlier.dispatches,
            submits: self.submits - earlier.submits,
            reads: self.reads - earlier.reads,
            drains: self.drains - earlier.drains,
            bytes_read: self.bytes_read - earlier.bytes_read,
            wait_ns: self.wait_ns - earlier.wait_ns,
            submit_ns: self.submit_ns - earlier.submit_ns,
        }
    }
}

impl std::ops::AddAssign for Traffic {
    fn add_assign(&mut self, o: Traffic) {
        self.dispatches += o.dispatches;
        self.submits += o.submits;
        self.reads += o.reads;
        self.drains += o.drains;
        self.bytes_read += o.bytes_read;
        self.wait_ns += o.wait_ns;
        self.submit_ns += o.submit_ns;
    }
}

pub(super) fn count(f: impl FnOnce(&mut Traffic)) {
    COUNTS.with(|c| {
        let mut t = c.get();
        f(&mut t);
        c.set(t);
    });
}
