//! What `eddy scenes` shows of the shipped scenes: each one parsed, validated and summed up
//! in a line.

use super::{
    shipped::{ShippedScene, SHIPPED},
    Scene, SceneError, SceneKind,
};
use std::path::Path;

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
    /// Parses and validates the embedded text (messages name it `NAME (built in)`), with
    /// the embedded meshes.
    pub fn scene(&self) -> Result<Scene, SceneError> {
        Scene::parse_with(
            self.source,
            Path::new(&format!("{} (built in)", self.name)),
            &super::mesh::MeshBase::Shipped,
        )
    }

    pub fn summary(&self) -> Result<SceneSummary, SceneError> {
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
pub fn table() -> Result<String, SceneError> {
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
    fn every_file_in_scenes_meshes_is_shipped_and_identical() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/meshes");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| format!("meshes/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        files.sort();
        let shipped: Vec<&str> = super::super::shipped::SHIPPED_MESHES
            .iter()
            .map(|m| m.path)
            .collect();
        assert_eq!(files, shipped);
        for m in &super::super::shipped::SHIPPED_MESHES {
            let disk = std::fs::read(Path::new(dir).join(&m.path["meshes/".len()..])).unwrap();
            assert!(disk == m.bytes, "{}", m.path);
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
