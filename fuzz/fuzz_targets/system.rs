//! An exported system's system.json, loaded beside the raw arrays of a real export
//! (EDDY_FUZZ_SYSTEM, written by scripts/fuzz.sh), as `eddy bench --system` and
//! `eddy view --system` load it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A folder of this process holding the real export's raw arrays.
fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let real = PathBuf::from(
            std::env::var("EDDY_FUZZ_SYSTEM").expect("EDDY_FUZZ_SYSTEM: a system folder"),
        );
        let dir = std::env::temp_dir().join(format!("eddy-fuzz-system-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(&real).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = folder();
    std::fs::write(dir.join("system.json"), data).unwrap();
    let _ = eddy::output::frozen::load_frozen_system(dir);
});
