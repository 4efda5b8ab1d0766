//! The viewer's layout: two side panels that collapse (F1 and F2, the buttons at the top of
//! the 3D view, or a double-click on their edge) and resize by their edge, each at most a
//! quarter of the window, so the 3D view always keeps at least half its width. The layout
//! and the window size are remembered between interactive sessions in a small JSON file
//! (`$XDG_CONFIG_HOME/eddy/viewer.json`, else `~/.config/eddy/viewer.json`;
//! `EDDY_VIEWER_SETTINGS=FILE` names another, `EDDY_VIEWER_SETTINGS=off` keeps none).
//! Headless runs (`--frames`, `--screenshot`, `--record`) neither read nor write it, so a
//! script's window is always the one it asks for.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The narrowest an open side panel gets, in points.
pub const MIN_PANEL_WIDTH: f32 = 140.0;
/// The largest share of the window's width one side panel may take.
pub const MAX_PANEL_SHARE: f32 = 0.25;
/// The largest settings file read back (it holds a few numbers).
const MAX_SETTINGS_BYTES: u64 = 64 << 10;

/// What is remembered: which panels are open, their widths (points) and the window size
/// (physical pixels).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Layout {
    pub left_open: bool,
    pub right_open: bool,
    pub left_width: f32,
    pub right_width: f32,
    pub window: Option<[u32; 2]>,
}

impl Default for Layout {
    fn default() -> Self {
        Self {
            left_open: true,
            right_open: true,
            left_width: 300.0,
            right_width: 280.0,
            window: None,
        }
    }
}

impl Layout {
    /// The widest a side panel may be in a window `width` points wide.
    pub fn max_panel_width(width: f32) -> f32 {
        (width * MAX_PANEL_SHARE).max(MIN_PANEL_WIDTH)
    }

    /// The layout with its widths inside what a window `width` points wide allows and
    /// every value finite (a settings file edited by hand).
    pub fn fitted(&self, width: f32) -> Self {
        let max = Self::max_panel_width(width);
        let fit = |w: f32, default: f32| {
            let w = if w.is_finite() { w } else { default };
            w.clamp(MIN_PANEL_WIDTH, max)
        };
        Self {
            left_width: fit(self.left_width, 300.0),
            right_width: fit(self.right_width, 280.0),
            window: self
                .window
                .filter(|[w, h]| (64..=16384).contains(w) && (64..=16384).contains(h)),
            ..self.clone()
        }
    }

    /// Reads `path`; the default layout when it is missing or unreadable (a broken file
    /// is said once on stderr and replaced at the next save).
    pub fn load(path: &Path) -> Self {
        let text =
            match crate::files::read_text_bounded(path, MAX_SETTINGS_BYTES, "a settings file") {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Self::default(),
                Err(e) => {
                    log::warn!("{}: {e}; using the default layout", path.display());
                    return Self::default();
                }
            };
        serde_json::from_str(&text).unwrap_or_else(|e| {
            log::warn!("{}: {e}; using the default layout", path.display());
            Self::default()
        })
    }

    /// Writes `path` (its folder created), replacing it whole.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::files::write_atomically(path, |w| std::io::Write::write_all(w, text.as_bytes()))
    }
}

/// Where the layout is remembered, from the environment (see the module's text); None to
/// remember nothing.
pub fn settings_path() -> Option<PathBuf> {
    settings_path_from(
        std::env::var_os("EDDY_VIEWER_SETTINGS"),
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

fn settings_path_from(
    explicit: Option<std::ffi::OsString>,
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(e) = explicit {
        return (!e.is_empty() && e != "off").then(|| PathBuf::from(e));
    }
    let base = match xdg.filter(|x| !x.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".config"),
    };
    Some(base.join("eddy").join("viewer.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_never_take_more_than_half_the_window() {
        for width in [800.0, 1280.0, 1920.0, 3840.0 / 2.0, 400.0] {
            let l = Layout {
                left_width: 5000.0,
                right_width: f32::NAN,
                ..Default::default()
            }
            .fitted(width);
            let max = Layout::max_panel_width(width);
            assert!(
                l.left_width <= max && l.right_width <= max,
                "{width}: {l:?}"
            );
            if width >= MIN_PANEL_WIDTH / MAX_PANEL_SHARE {
                assert!(
                    width - l.left_width - l.right_width >= width / 2.0,
                    "{width}"
                );
            }
        }
        // 800 x 600: 200 points a panel at most, the 3D view 400 of 800.
        assert_eq!(Layout::max_panel_width(800.0), 200.0);
    }

    #[test]
    fn the_layout_round_trips_and_a_broken_file_is_the_default() {
        let dir = std::env::temp_dir().join(format!("eddy-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub/viewer.json");
        let l = Layout {
            left_open: false,
            right_open: true,
            left_width: 222.0,
            right_width: 180.0,
            window: Some([1024, 700]),
        };
        l.save(&path).unwrap();
        assert_eq!(Layout::load(&path), l);
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(Layout::load(&path), Layout::default());
        std::fs::write(&path, r#"{"left_open": false}"#).unwrap();
        assert!(!Layout::load(&path).left_open);
        assert_eq!(Layout::load(&dir.join("absent.json")), Layout::default());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_settings_file_follows_the_environment() {
        let s = |e: Option<&str>, x: Option<&str>, h: Option<&str>| {
            settings_path_from(e.map(Into::into), x.map(Into::into), h.map(Into::into))
        };
        assert_eq!(s(Some("off"), None, Some("/h")), None);
        assert_eq!(
            s(Some("/tmp/v.json"), None, None),
            Some("/tmp/v.json".into())
        );
        assert_eq!(
            s(None, Some("/x"), Some("/h")),
            Some("/x/eddy/viewer.json".into())
        );
        assert_eq!(
            s(None, None, Some("/h")),
            Some("/h/.config/eddy/viewer.json".into())
        );
        assert_eq!(s(None, None, None), None);
    }
}
