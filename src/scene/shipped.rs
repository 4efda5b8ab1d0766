//! The scenes shipped with eddy, compiled into the binary so `eddy`, `eddy view dam_break`
//! and `eddy run double_dam_break` work from any folder and after `cargo install`.
//!
//! A path that exists always wins: the files in `scenes/` stay the ones a user copies and
//! edits, and an edited `scenes/dam_break.ron` is read from disk, not from the binary.

use std::path::{Component, Path};

/// One scene file of `scenes/`, embedded at build time.
pub struct ShippedScene {
    /// The file name without `.ron`: what a user types.
    pub name: &'static str,
    /// The RON text, comments included.
    pub source: &'static str,
}

macro_rules! shipped {
    ($($name:literal),* $(,)?) => {
        [$(ShippedScene {
            name: $name,
            source: include_str!(concat!("../../scenes/", $name, ".ron")),
        }),*]
    };
}

/// Every file of `scenes/` (a test checks that none is missing).
pub const SHIPPED: [ShippedScene; 17] = shipped![
    "buoyancy",
    "dam_break",
    "double_dam_break",
    "drop_into_pool",
    "faucet_drain",
    "floating_bodies",
    "moving_pier",
    "obstacle",
    "open_channel",
    "plateau_rayleigh",
    "smoke_convection",
    "smoke_convection_bodies",
    "smoke_empty",
    "smoke_mesh_obstacle",
    "smoke_obstacles",
    "smoke_plume",
    "smoke_rigid_bodies",
];

/// A mesh file of `scenes/meshes/`, embedded at build time: what the shipped scenes' mesh
/// solids read, from any folder.
pub struct ShippedMesh {
    /// The path as a scene in `scenes/` writes it (`meshes/pillar.obj`).
    pub path: &'static str,
    pub bytes: &'static [u8],
}

/// Every file of `scenes/meshes/` (a test checks that none is missing).
pub const SHIPPED_MESHES: [ShippedMesh; 1] = [ShippedMesh {
    path: "meshes/pillar.obj",
    bytes: include_bytes!("../../scenes/meshes/pillar.obj"),
}];

/// The shipped mesh a scene's relative `path` names (`meshes/pillar.obj`, or
/// `./meshes/pillar.obj`).
pub fn find_mesh(path: &str) -> Option<&'static ShippedMesh> {
    let path = path.trim_start_matches("./");
    SHIPPED_MESHES.iter().find(|m| m.path == path)
}

/// The shipped scene called `name` (`dam_break` or `dam_break.ron`).
pub fn find(name: &str) -> Option<&'static ShippedScene> {
    let stem = name.strip_suffix(".ron").unwrap_or(name);
    SHIPPED.iter().find(|s| s.name == stem)
}

/// The shipped scene a path that does not exist stands for: a bare name (`dam_break`,
/// `dam_break.ron`) or the repository's own `scenes/dam_break.ron`, so commands copied from
/// the README work from any folder. Any other missing path names no scene.
pub fn for_missing_path(path: &Path) -> Option<&'static ShippedScene> {
    let parts: Vec<Component> = path.components().collect();
    let name = match parts.as_slice() {
        [Component::Normal(n)] => n,
        [Component::Normal(dir), Component::Normal(n)] if *dir == "scenes" => n,
        _ => return None,
    };
    find(name.to_str()?)
}

/// The shipped names, comma separated, for messages.
pub fn names() -> String {
    SHIPPED
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_with_or_without_extension_and_the_scenes_folder() {
        for p in ["dam_break", "dam_break.ron", "scenes/dam_break.ron"] {
            assert_eq!(
                for_missing_path(Path::new(p)).map(|s| s.name),
                Some("dam_break")
            );
        }
        for p in [
            "other/dam_break.ron",
            "/scenes/dam_break.ron",
            "tsunami",
            "../dam_break",
        ] {
            assert!(for_missing_path(Path::new(p)).is_none(), "{p}");
        }
    }
}
