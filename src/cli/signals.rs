//! Ctrl-C and SIGTERM: the first ends a run after the current frame's outputs, a second at
//! once.

use super::*;

/// SIGINT (Ctrl-C) and SIGTERM ask a run to stop once the current frame's outputs are
/// written; a second one ends the process at once (exit 128 + signal).
pub(crate) struct StopRequest {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl StopRequest {
    pub(crate) fn install() -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Self {
            flag: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicUsize::new(0)),
        };
        for sig in [SIGINT, SIGTERM] {
            // The shutdown goes first: it fires only once the flag is already set.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.flag.clone())
                .and_then(|_| signal_hook::flag::register(sig, stop.flag.clone()))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, stop.signal.clone(), sig as usize)
                })
                .context("cannot install the Ctrl-C handler")?;
        }
        Ok(stop)
    }

    /// The signal that asked to stop, if any.
    pub(crate) fn requested(&self) -> Option<i32> {
        self.flag
            .load(Ordering::SeqCst)
            .then(|| self.signal.load(Ordering::SeqCst) as i32)
    }
}

pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        signal_hook::consts::SIGINT => "SIGINT (Ctrl-C)",
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
