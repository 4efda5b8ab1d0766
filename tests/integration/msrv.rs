//! The `rust-version` in Cargo.toml is the real minimum: no locked dependency declares a
//! newer one. (Only the newest toolchain may be installed on CI, so building with the stated
//! minimum is not possible there; the dependencies' own declarations are checked instead.)

use std::process::Command;

/// "1.85" or "1.85.1" as comparable numbers (a missing patch is 0).
fn version(s: &str) -> Option<[u64; 3]> {
    let mut parts = s.trim().split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some([major, minor, patch])
}

#[test]
fn stated_rust_version_covers_every_locked_dependency() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--locked", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cannot run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let eddy = packages.iter().find(|p| p["name"] == "eddy").unwrap();
    let stated_text = eddy["rust_version"]
        .as_str()
        .expect("Cargo.toml has no rust-version");
    let stated = version(stated_text).unwrap();
    // Dependencies of every kind and platform are in the lockfile: a dev-dependency that
    // needs a newer compiler breaks `cargo test` as surely as a normal one breaks a build.
    let mut too_new: Vec<String> = packages
        .iter()
        .filter_map(|p| {
            let rv = p["rust_version"].as_str()?;
            (version(rv)? > stated).then(|| {
                format!(
                    "{} {} needs {rv}",
                    p["name"].as_str().unwrap_or("?"),
                    p["version"].as_str().unwrap_or("?")
                )
            })
        })
        .collect();
    too_new.sort();
    assert!(
        too_new.is_empty(),
        "Cargo.toml says rust-version = {stated_text}, but the lockfile holds:\n  {}\n\
         raise rust-version (and the README's minimum) to the highest of these",
        too_new.join("\n  ")
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {stated_text} or newer")),
        "README.md does not state the minimum Rust as \"Rust {stated_text} or newer\""
    );
}

#[test]
fn versions_compare_as_numbers() {
    assert!(version("1.95").unwrap() > version("1.89.1").unwrap());
    assert!(version("1.100").unwrap() > version("1.95").unwrap());
    assert_eq!(version("1.85"), Some([1, 85, 0]));
    assert_eq!(version("x"), None);
}
