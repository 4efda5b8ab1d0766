//! The scenes shipped with eddy, compiled into the binary so `eddy`, `eddy view dam_break`
//! and `eddy run double_dam_break` work from any folder and after `cargo install`.
//!
//! A path that exists always wins: the files in `scenes/` stay the ones a user copies and
//! edits, and an edited `scenes/dam_break.ron` is read from disk, not from the binary.

use crate::scene::{Scene, SceneKind};
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
            source: include_str!(concat!("../scenes/", $name, ".ron")),
        }),*]
    };
}

/// Every file of `scenes/` (a test checks that none is missing).
pub const SHIPPED: [ShippedScene; 10] = shipped![
    "dam_break",
    "double_dam_break",
    "drop_into_pool",
    "floating_bodies",
    "obstacle",
    "smoke_convection",
    "smoke_empty",
    "smoke_obstacles",
    "smoke_plume",
    "smoke_rigid_bodies",
];

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

/// What `eddy scenes` prints for one shipped scene.
#[derive(Clone, Debug)]
pub struct SceneSummary {
    pub name: &'static str,
    pub kind: SceneKind,
    pub resolution: (u32, u32, u32),
    /// The first sentence of the comment that opens the file, if it has one.
    pub description: Option<String>,
}

impl ShippedScene {
    /// Parses and validates the embedded text (messages name it `NAME (built in)`).
    pub fn scene(&self) -> Result<Scene, crate::scene::SceneError> {
        Scene::parse(self.source, Path::new(&format!("{} (built in)", self.name)))
    }

    pub fn summary(&self) -> Result<SceneSummary, crate::scene::SceneError> {
        let s = self.scene()?;
        Ok(SceneSummary {
            name: self.name,
            kind: s.kind,
            resolution: s.resolution,
            description: leading_comment_sentence(self.source),
        })
    }
}

/// The first sentence of the `//` comment lines a RON file starts with.
fn leading_comment_sentence(source: &str) -> Option<String> {
    let text: Vec<&str> = source
        .lines()
        .map(str::trim)
        .take_while(|l| l.starts_with("//"))
        .map(|l| l.trim_start_matches('/').trim())
        .collect();
    let text = text.join(" ");
    let end = text.find(". ").map(|i| i + 1).unwrap_or(text.len());
    let sentence = text[..end].trim();
    (!sentence.is_empty()).then(|| sentence.to_string())
}

/// The table `eddy scenes` prints: name, mode, grid and description of each shipped scene.
pub fn table() -> Result<String, crate::scene::SceneError> {
    let mut s = format!("{:<18} {:<7} {:<12} description\n", "name", "mode", "grid");
    for scene in &SHIPPED {
        let m = scene.summary()?;
        let (x, y, z) = m.resolution;
        let mode = match m.kind {
            SceneKind::Liquid => "liquid",
            SceneKind::Smoke => "smoke",
        };
        s += &format!(
            "{:<18} {:<7} {:<12} {}\n",
            m.name,
            mode,
            format!("{x}x{y}x{z}"),
            m.description.as_deref().unwrap_or("")
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_scenes_is_shipped_and_valid() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.ok()?.path();
                (p.extension()? == "ron").then(|| p.file_stem()?.to_str().map(String::from))?
            })
            .collect();
        files.sort();
        let shipped: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
        assert_eq!(files, shipped);
        for s in &SHIPPED {
            let from_disk = Scene::load(Path::new(dir).join(format!("{}.ron", s.name))).unwrap();
            assert_eq!(
                s.scene().unwrap().to_ron(),
                from_disk.to_ron(),
                "{}",
                s.name
            );
        }
    }

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

    #[test]
    fn descriptions_are_the_first_sentence_of_the_opening_comment() {
        assert_eq!(
            leading_comment_sentence("// One. Two\n// three.\n(name: \"x\")").as_deref(),
            Some("One.")
        );
        assert_eq!(
            leading_comment_sentence("// A line\n// that goes on.\n()").as_deref(),
            Some("A line that goes on.")
        );
        assert_eq!(leading_comment_sentence("(name: \"x\")"), None);
    }
}
