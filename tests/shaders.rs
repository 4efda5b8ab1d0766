//! Every WGSL file parses and validates with naga, without needing an adapter.

use eddy::gpu::{expand_wgsl, SHADER_SOURCES};

#[test]
fn every_shader_validates() {
    let mut checked = 0;
    for (name, src) in SHADER_SOURCES {
        // Include-only files have no entry point of their own.
        if !src.contains("@compute") && !src.contains("@vertex") && !src.contains("@fragment") {
            continue;
        }
        let code = expand_wgsl(name);
        let module = naga::front::wgsl::parse_str(&code)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&code)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&code)));
        checked += 1;
    }
    // Every .wgsl file in shaders/ is registered (and so validated here).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".wgsl") {
            assert!(
                SHADER_SOURCES.iter().any(|(n, _)| *n == name),
                "{name} is not in SHADER_SOURCES"
            );
        }
    }
    assert!(checked >= 14, "only {checked} shaders found");
}

#[test]
fn includes_are_expanded() {
    let src = expand_wgsl("forces.wgsl");
    assert!(!src.contains("//!include"));
    assert!(src.contains("struct SimParams"));
    assert!(src.contains("fn type_at"));
}
