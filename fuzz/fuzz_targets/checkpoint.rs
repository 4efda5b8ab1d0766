//! A checkpoint's bytes, as `eddy run --resume` and `eddy view --state` decode them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = eddy::output::checkpoint::decode(data, std::path::Path::new("checkpoint_00002.eddy"));
});
