//! Every WGSL file parses and validates with naga, and every Rust mirror of a WGSL struct
//! has the struct's byte layout, without needing an adapter.

use eddy::gpu::layout::MirrorLayout;
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

#[test]
fn generated_constants_are_included() {
    let src = expand_wgsl("mark_cells.wgsl");
    assert!(src.contains(&format!(
        "const FLUID: u32 = {}u;",
        eddy::gpu::constants::FLUID
    )));
    assert!(src.contains(&format!(
        "const COUNTER_FLUID_CELLS: u32 = {}u;",
        eddy::gpu::constants::COUNTER_FLUID_CELLS
    )));
    // Declared exactly once: by the generated file, with no hand-written copy beside it.
    assert_eq!(src.matches("const WORKGROUP:").count(), 1);
    assert_eq!(src.matches("const SOLID:").count(), 1);
}

/// Every Rust struct written as-is into a uniform or storage buffer that a shader reads.
fn mirrors() -> Vec<MirrorLayout> {
    use eddy::{render, sim};
    vec![
        sim::params::sim_params_layout(),
        sim::pressure::pcg::pcg_config_layout(),
        sim::pressure::pcg::pcg_state_layout(),
        sim::pressure::multigrid::mg_level_layout(),
        sim::pressure::precond::plane_slot_layout(),
        sim::smoke::params::smoke_params_layout(),
        sim::smoke::params::emitter_layout(),
        sim::spacing::spacing_params_layout(),
        sim::diffusion::diffusion_params_layout(),
        sim::diffusion::spot_layout(),
        sim::bodies::coupling::gpu_body_layout(),
        sim::bodies::coupling::body_params_layout(),
        render::particles::particle_uniform_layout(),
        render::bodies::body_view_layout(),
        render::slice::slice_uniform_layout(),
        render::lines_view_layout(),
        render::slice_view_layout(),
        render::surface::surface_uniform_layout(),
        render::push::push_params_layout(),
    ]
}

fn parse(shader: &str) -> naga::Module {
    let code = expand_wgsl(shader);
    naga::front::wgsl::parse_str(&code)
        .unwrap_or_else(|e| panic!("{shader}: {}", e.emit_to_string(&code)))
}

/// naga's layout of struct `name` in `module`: (member, offset, size) in order, the
/// struct's size and its alignment.
/// (member, offset, size) in order, the struct's size and its alignment.
type WgslLayout = (Vec<(String, usize, usize)>, usize, u32);

fn wgsl_layout(module: &naga::Module, name: &str) -> Option<WgslLayout> {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))?;
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        return None;
    };
    let members = members
        .iter()
        .map(|m| {
            (
                m.name.clone().unwrap_or_default(),
                m.offset as usize,
                layouter[m.ty].size as usize,
            )
        })
        .collect();
    Some((members, *span as usize, layouter[handle].alignment * 1))
}

/// Why `m` does not match struct `m.wgsl` of `module`, if it does not.
fn mismatch(m: &MirrorLayout, module: &naga::Module) -> Option<String> {
    let Some((wgsl, span, align)) = wgsl_layout(module, m.wgsl) else {
        return Some(format!("no struct {}", m.wgsl));
    };
    let rust: Vec<(String, usize, usize)> = m
        .members
        .iter()
        .map(|&(n, o, s)| (n.to_string(), o, s))
        .collect();
    let fixed = if m.prefix {
        // The WGSL struct goes on (a runtime-sized array) right where the Rust one ends.
        match wgsl.get(rust.len()) {
            Some(next) if next.1 == m.size => {}
            next => return Some(format!("next WGSL member {next:?}, Rust size {}", m.size)),
        }
        &wgsl[..rust.len().min(wgsl.len())]
    } else {
        if span != m.size {
            return Some(format!("WGSL size {span}, Rust size {}", m.size));
        }
        &wgsl[..]
    };
    if fixed != rust.as_slice() {
        return Some(format!(
            "members (name, offset, size) differ:\n  WGSL {fixed:?}\n  Rust {rust:?}"
        ));
    }
    // An array of these (emitters) has the WGSL stride only if the size is a multiple of
    // the WGSL alignment.
    if !m.size.is_multiple_of(align as usize) {
        return Some(format!(
            "Rust size {} is not a multiple of the WGSL alignment {align}",
            m.size
        ));
    }
    None
}

fn has_entry_points(src: &str) -> bool {
    src.contains("@compute") || src.contains("@vertex") || src.contains("@fragment")
}

/// `shader` parsed on its own, or for an include-only file, the first shader including it.
fn module_declaring(shader: &str) -> naga::Module {
    let (_, src) = SHADER_SOURCES
        .iter()
        .find(|(n, _)| *n == shader)
        .unwrap_or_else(|| panic!("{shader} is not in SHADER_SOURCES"));
    if has_entry_points(src) {
        return parse(shader);
    }
    let include = format!("//!include {shader}");
    let (user, _) = SHADER_SOURCES
        .iter()
        .find(|(_, s)| has_entry_points(s) && s.lines().any(|l| l.trim() == include))
        .unwrap_or_else(|| panic!("no shader includes {shader}"));
    parse(user)
}

#[test]
fn rust_mirrors_match_the_wgsl_struct_layouts() {
    for m in mirrors() {
        if let Some(why) = mismatch(&m, &module_declaring(m.shader)) {
            panic!(
                "{} does not mirror {} in {}: {why}",
                m.rust, m.wgsl, m.shader
            );
        }
    }
}

#[test]
fn every_buffer_struct_has_a_rust_mirror() {
    // Structs of uniform and storage buffers that the host fills from a Rust struct, in every
    // shader that uses them: each must be one of the mirrors above (same layout there too).
    let mirrors = mirrors();
    let mut checked = 0;
    for (name, src) in SHADER_SOURCES {
        if !has_entry_points(src) {
            continue;
        }
        let module = parse(name);
        for (_, var) in module.global_variables.iter() {
            if !matches!(
                var.space,
                naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. }
            ) {
                continue;
            }
            let mut ty = &module.types[var.ty];
            if let naga::TypeInner::Array { base, .. } = ty.inner {
                ty = &module.types[base];
            }
            if !matches!(ty.inner, naga::TypeInner::Struct { .. }) {
                continue;
            }
            let sname = ty.name.clone().unwrap_or_default();
            let candidates: Vec<_> = mirrors.iter().filter(|m| m.wgsl == sname).collect();
            assert!(
                !candidates.is_empty(),
                "{name}: struct {sname} of a buffer has no Rust mirror (see src/gpu/layout.rs)"
            );
            let why: Vec<String> = candidates
                .iter()
                .filter_map(|m| mismatch(m, &module).map(|w| format!("{}: {w}", m.rust)))
                .collect();
            assert!(
                why.len() < candidates.len(),
                "{name}: struct {sname} matches none of its mirrors: {why:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} buffer structs found");
}
