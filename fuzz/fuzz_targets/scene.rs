//! A scene file's text, as every command parses and validates it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = eddy::scene::Scene::parse(text, std::path::Path::new("fuzz.ron"));
    }
});
