//! Every WGSL file parses and validates with naga, and every Rust mirror of a WGSL struct
//! has the struct's byte layout, without needing an adapter. The files are found by walking
//! `src/`, the mirrors from the generated list of every `wgsl_mirror!`: nothing to register.

use eddy::gpu::layout::MirrorLayout;
use eddy::gpu::wgsl::{all_files, Wgsl};
use std::path::{Path, PathBuf};

/// Every `.wgsl` file under `src/`, as paths relative to `src/`.
fn wgsl_on_disk() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "wgsl") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut rel: Vec<String> = files
        .iter()
        .map(|p| {
            let r = p.strip_prefix(&src).unwrap();
            r.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    rel.sort();
    rel
}

fn shader(path: &str) -> Wgsl {
    Wgsl::at(path).unwrap_or_else(|| panic!("{path} is not in the generated table"))
}

#[test]
fn every_shader_validates() {
    let on_disk = wgsl_on_disk();
    let mut in_table: Vec<String> = all_files().map(|w| w.path()).collect();
    in_table.sort();
    assert_eq!(on_disk, in_table, "the table of WGSL files is stale");
    let mut checked = 0;
    for path in &on_disk {
        let w = shader(path);
        // Include-only files have no entry point of their own.
        if !w.has_entry_points() {
            continue;
        }
        let code = w.expand();
        let module = naga::front::wgsl::parse_str(&code)
            .unwrap_or_else(|e| panic!("{path}: {}", e.emit_to_string(&code)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{path}: {}", e.emit_to_string(&code)));
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} shaders found");
}

#[test]
fn every_shader_is_loaded_by_the_rust_file_beside_it() {
    // A shader with entry points sits in the folder of the code that dispatches or draws it:
    // some `.rs` in the same folder loads it with `wgsl!("NAME")`. Files other shaders
    // include (the prelude, the full-screen triangle) belong to their includers.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let included: Vec<String> = all_files()
        .flat_map(|w| {
            w.text()
                .lines()
                .filter_map(|l| {
                    l.trim()
                        .strip_prefix("//!include ")
                        .map(|p| p.trim().to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for path in wgsl_on_disk() {
        let w = shader(&path);
        if !w.has_entry_points() || included.contains(&path) {
            continue;
        }
        let file = src.join(&path);
        let dir = file.parent().unwrap();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let needle = format!("wgsl!(\"{name}\")");
        let loaded = std::fs::read_dir(dir).unwrap().any(|e| {
            let p = e.unwrap().path();
            p.extension().is_some_and(|x| x == "rs")
                && std::fs::read_to_string(&p).unwrap().contains(&needle)
        });
        assert!(loaded, "{path}: no .rs beside it loads it with {needle}");
    }
}

#[test]
fn includes_are_expanded() {
    let src = shader("sim/liquid/forces.wgsl").expand();
    assert!(!src.contains("//!include"));
    assert!(src.contains("struct SimParams"));
    assert!(src.contains("fn type_at"));
}

#[test]
fn generated_constants_are_included() {
    let src = shader("sim/liquid/mark_cells.wgsl").expand();
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
    eddy::gpu::layout::all_mirrors()
}

fn parse(shader: &str) -> naga::Module {
    let code = self::shader(shader).expand();
    naga::front::wgsl::parse_str(&code)
        .unwrap_or_else(|e| panic!("{shader}: {}", e.emit_to_string(&code)))
}

/// naga's layout of a struct: (member, offset, size) in order, the struct's size and its
/// alignment.
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

/// `shader` parsed on its own, or for an include-only file, the first shader including it.
fn module_declaring(shader: &str) -> naga::Module {
    if self::shader(shader).has_entry_points() {
        return parse(shader);
    }
    let include = format!("//!include {shader}");
    let user = all_files()
        .find(|w| w.has_entry_points() && w.text().lines().any(|l| l.trim() == include))
        .unwrap_or_else(|| panic!("no shader includes {shader}"));
    parse(&user.path())
}

#[test]
fn rust_mirrors_match_the_wgsl_struct_layouts() {
    for m in mirrors() {
        if let Some(why) = mismatch(&m, &module_declaring(&m.shader)) {
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
    for w in all_files() {
        if !w.has_entry_points() {
            continue;
        }
        let name = w.path();
        let module = parse(&name);
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
                "{name}: struct {sname} of a buffer has no Rust mirror (declare one with wgsl_mirror!, see src/gpu/layout.rs)"
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
