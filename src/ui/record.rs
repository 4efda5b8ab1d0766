//! `eddy view --record DIR --every K`: a PNG of the window every K simulated frames,
//! numbered without gaps (`frame_00001.png` is simulated frame K, `frame_00002.png` frame
//! 2K, ...), as `ffmpeg -i DIR/frame_%05d.png` expects a sequence.

use std::path::{Path, PathBuf};

/// Where and how often the viewer saves frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub dir: PathBuf,
    /// Save after every this many simulated frames (at least 1).
    pub every: u64,
}

impl Recording {
    /// The file of the `n`-th saved picture (from 1).
    pub fn path(&self, n: u64) -> PathBuf {
        self.dir.join(format!("frame_{n:05}.png"))
    }

    /// Whether the frame just simulated is one to save.
    pub fn wants(&self, frame: u64) -> bool {
        frame > 0 && frame.is_multiple_of(self.every)
    }

    /// Makes the folder ready before the window opens: it is created if missing, and one
    /// that already holds frames is refused, so an old, longer sequence never mixes with a
    /// new one in the same video.
    pub fn prepare(&self) -> Result<(), String> {
        if self.every == 0 {
            return Err("--every must be at least 1".into());
        }
        let dir = &self.dir;
        if dir.exists() && !dir.is_dir() {
            return Err(format!(
                "--record {}: is a file, not a folder",
                dir.display()
            ));
        }
        crate::output::ensure_writable_dir(dir)
            .map_err(|e| format!("--record {}: cannot write there: {e}", dir.display()))?;
        let old = std::fs::read_dir(dir)
            .map_err(|e| format!("--record {}: cannot list the folder: {e}", dir.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| is_frame_name(&e.file_name().to_string_lossy()))
            .count();
        if old > 0 {
            return Err(format!(
                "--record {}: already holds {old} frame_NNNNN.png file(s) of an earlier \
                 recording; remove them or choose another folder",
                dir.display()
            ));
        }
        Ok(())
    }
}

fn is_frame_name(name: &str) -> bool {
    name.strip_prefix("frame_")
        .and_then(|r| r.strip_suffix(".png"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Writes RGBA pixels as an opaque PNG under a temporary name, then renames it into place,
/// so an interrupted recording never leaves a truncated frame.
pub fn write_png(path: &Path, rgba: &[u8], width: u32, height: u32) -> std::io::Result<()> {
    use image::ImageEncoder;
    // Surfaces may carry any alpha; a video frame is opaque.
    let opaque: Vec<u8> = rgba
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    crate::output::write_atomically(path, |w| {
        image::codecs::png::PngEncoder::new(w)
            .write_image(&opaque, width, height, image::ExtendedColorType::Rgba8)
            .map_err(std::io::Error::other)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_numbered_and_filtered() {
        let r = Recording {
            dir: PathBuf::from("out"),
            every: 3,
        };
        assert_eq!(r.path(12), PathBuf::from("out/frame_00012.png"));
        assert_eq!(r.path(123456), PathBuf::from("out/frame_123456.png"));
        let saved: Vec<u64> = (0..10).filter(|f| r.wants(*f)).collect();
        assert_eq!(saved, vec![3, 6, 9]);
        assert!(is_frame_name("frame_00012.png"));
        assert!(!is_frame_name("frame_.png") && !is_frame_name("frame_1.jpg"));
    }

    #[test]
    fn a_folder_with_old_frames_is_refused() {
        let dir = std::env::temp_dir().join(format!("eddy-record-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let r = Recording {
            dir: dir.clone(),
            every: 1,
        };
        r.prepare().unwrap();
        write_png(&r.path(1), &[10, 20, 30, 0, 40, 50, 60, 0], 2, 1).unwrap();
        let img = image::open(r.path(1)).unwrap().to_rgba8();
        assert_eq!(img.get_pixel(1, 0).0, [40, 50, 60, 255]);
        assert!(r.prepare().unwrap_err().contains("already holds 1"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
