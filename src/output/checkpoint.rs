//! Checkpoints: a simulation's saved state (src/sim/runner/state.rs) with its scene, in one
//! file that `eddy run --resume` and the viewer's load read back.
//!
//! Layout: the magic `EDDYCKPT`, the format version (u32, little-endian), the length of a
//! JSON header (u64) and the header (eddy's version, the mode, frame, time, the scene as
//! RON, each section's name and length), the sections' bytes one after another, and a
//! CRC-32 of everything before it (u32). A file is written under a temporary name and
//! renamed, so a run killed while writing one leaves the previous checkpoints as they were.

use crate::scene::{Scene, SceneKind};
use crate::sim::runner::state::{Section, SimState};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The version of the layout above; a file of another version is refused.
pub const FORMAT_VERSION: u32 = 1;
/// The largest checkpoint eddy reads: more than any one GPU's memory holds (a state is
/// what the simulation keeps on its GPU), so a larger file is not one eddy wrote.
pub const MAX_CHECKPOINT_BYTES: u64 = 256 << 30;
/// The longest version string a checkpoint's header may carry.
const MAX_VERSION_CHARS: usize = 64;
const MAGIC: &[u8; 8] = b"EDDYCKPT";

/// Why a checkpoint cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Invalid { path: String, why: String },
    #[error("{0}: holds no checkpoint (checkpoint_NNNNN.eddy, written by --checkpoint-every)")]
    None(String),
}

#[derive(Serialize, Deserialize)]
struct Header {
    eddy_version: String,
    kind: String,
    frame: u64,
    time: f64,
    scene: String,
    /// The folder the scene's relative mesh paths were read against (absolute), when it
    /// has mesh solids: resuming reads them from there, wherever the checkpoint is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mesh_folder: Option<String>,
    sections: Vec<(String, u64)>,
}

/// A checkpoint as read back.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// The eddy that wrote it.
    pub eddy_version: String,
    /// The scene it was run with.
    pub scene: Scene,
    pub state: SimState,
}

impl Checkpoint {
    /// The liquid's particle count the state holds (None for smoke, or when absent).
    pub fn particle_count(&self) -> Option<u64> {
        let b = self.state.get("particles").ok()?;
        let w = f64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        (w.is_finite() && w >= 0.0 && w <= u32::MAX as f64).then_some(w as u64)
    }
}

/// The checkpoint of frame `frame` in an output folder.
pub fn file_name(frame: u64) -> String {
    format!("checkpoint_{frame:05}.eddy")
}

/// The frame of a checkpoint's file name (not of a temporary file).
pub fn frame_of(name: &str) -> Option<u64> {
    let n = name.strip_prefix("checkpoint_")?.strip_suffix(".eddy")?;
    (n.len() >= 5 && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

fn kind_name(k: SceneKind) -> &'static str {
    match k {
        SceneKind::Liquid => "liquid",
        SceneKind::Smoke => "smoke",
    }
}

/// The bytes of a checkpoint of `state`, run with `scene`.
pub fn encode(scene: &Scene, state: &SimState) -> Vec<u8> {
    let header = Header {
        eddy_version: env!("CARGO_PKG_VERSION").into(),
        kind: kind_name(state.kind).into(),
        frame: state.frame,
        time: state.time,
        scene: scene.to_ron(),
        mesh_folder: scene
            .mesh_folder()
            .map(|f| f.to_string_lossy().into_owned()),
        sections: state
            .sections
            .iter()
            .map(|s| (s.name.clone(), s.bytes.len() as u64))
            .collect(),
    };
    let json = serde_json::to_vec(&header).expect("a header serialises");
    let mut out = Vec::with_capacity(24 + json.len() + state.bytes());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    for s in &state.sections {
        out.extend_from_slice(&s.bytes);
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Reads back what [`encode`] wrote; `path` names the file in errors.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Checkpoint, CheckpointError> {
    let bad = |why: String| CheckpointError::Invalid {
        path: path.display().to_string(),
        why,
    };
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(bad("not an eddy checkpoint".into()));
    }
    if bytes.len() < 24 {
        return Err(bad(format!("truncated ({} bytes)", bytes.len())));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if version != FORMAT_VERSION {
        return Err(bad(format!(
            "checkpoint format {version}; this eddy ({}) reads format {FORMAT_VERSION}",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let header_len = u64::from_le_bytes(bytes[12..20].try_into().unwrap());
    let truncated = || bad(format!("truncated ({} bytes)", bytes.len()));
    let header_end = 20usize
        .checked_add(usize::try_from(header_len).map_err(|_| truncated())?)
        .filter(|&e| e <= body.len())
        .ok_or_else(truncated)?;
    let header: Header = serde_json::from_slice(&bytes[20..header_end])
        .map_err(|_| bad("damaged: its header does not parse (checksum not reached)".into()))?;
    // Section lengths are read from the file: summed without wrapping, so a table that adds
    // past 2^64 is damage, never a short sum that slices out of bounds.
    let total = crate::files::checked_sum(header.sections.iter().map(|(_, n)| *n))
        .and_then(|t| t.checked_add(header_end as u64));
    if total != Some(body.len() as u64) {
        return Err(truncated());
    }
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().unwrap()) {
        return Err(bad(
            "damaged: its checksum does not match its contents".into()
        ));
    }
    let kind = match header.kind.as_str() {
        "liquid" => SceneKind::Liquid,
        "smoke" => SceneKind::Smoke,
        k => {
            return Err(bad(format!(
                "unknown mode \"{}\"",
                crate::files::printable(k, 32)
            )))
        }
    };
    if header.eddy_version.chars().count() > MAX_VERSION_CHARS
        || header
            .eddy_version
            .chars()
            .any(crate::files::is_unsafe_char)
    {
        return Err(bad(format!(
            "its header's eddy version \"{}\" is not a version eddy writes",
            crate::files::printable(&header.eddy_version, MAX_VERSION_CHARS)
        )));
    }
    // A checkpoint's name carries its frame; a file whose header says another frame was
    // renamed or damaged, and resuming from it would drop the wrong frames' outputs.
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(named) = frame_of(name) {
        if named != header.frame {
            return Err(bad(format!(
                "its header is of frame {}, its name of frame {named}: the file was renamed or \
                 damaged (a checkpoint keeps the name eddy gave it)",
                header.frame
            )));
        }
    }
    let scene = match &header.mesh_folder {
        Some(f) => Scene::parse_with(
            &header.scene,
            path,
            &crate::scene::mesh::MeshBase::Folder(f.into()),
        ),
        None => Scene::parse(&header.scene, path),
    }
    .map_err(|e| bad(format!("its scene does not load: {e}")))?;
    check_clock(header.frame, header.time, scene.frame_dt).map_err(bad)?;
    let mut at = header_end;
    let sections = header
        .sections
        .into_iter()
        .map(|(name, n)| {
            let bytes = body[at..at + n as usize].to_vec();
            at += n as usize;
            Section { name, bytes }
        })
        .collect();
    Ok(Checkpoint {
        eddy_version: header.eddy_version,
        scene,
        state: SimState {
            kind,
            frame: header.frame,
            time: header.time,
            sections,
        },
    })
}

/// A checkpoint's clock must be a clock eddy could have reached: finite, not negative, and
/// at the end of its frame (the frames' substeps end exactly on the frame; half a frame is
/// room for the f32 substeps' rounding).
fn check_clock(frame: u64, time: f64, frame_dt: f64) -> Result<(), String> {
    let expected = frame as f64 * frame_dt;
    if !time.is_finite() || time < 0.0 || (time - expected).abs() > 0.5 * frame_dt {
        return Err(format!(
            "its header's time {time:e} s is not the end of its frame {frame} ({expected:e} s \
             at {frame_dt} s a frame): damaged"
        ));
    }
    Ok(())
}

/// Writes the checkpoint of `state` into `dir` (under a temporary name, flushed to disk,
/// then renamed); returns its path and size.
pub fn write(dir: &Path, scene: &Scene, state: &SimState) -> std::io::Result<(PathBuf, u64)> {
    let path = dir.join(file_name(state.frame));
    let bytes = encode(scene, state);
    super::write_atomically(&path, |w| {
        w.write_all(&bytes)?;
        w.flush()?;
        w.get_ref().sync_all()
    })?;
    Ok((path, bytes.len() as u64))
}

/// Reads the checkpoint at `path`.
pub fn read(path: &Path) -> Result<Checkpoint, CheckpointError> {
    let bytes = crate::files::read_bounded(path, MAX_CHECKPOINT_BYTES, "a checkpoint").map_err(
        |source| CheckpointError::Io {
            path: path.display().to_string(),
            source,
        },
    )?;
    decode(&bytes, path)
}

/// The checkpoints in `dir`, oldest first (temporary files of an interrupted write are not
/// checkpoints).
pub fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>, CheckpointError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CheckpointError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let mut out: Vec<(u64, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            frame_of(&name).map(|f| (f, e.path()))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The newest checkpoint in `dir`, read and checked. A damaged newest one is an error
/// (naming it), not a silent step back to an older one: the caller decides.
pub fn newest(dir: &Path) -> Result<(PathBuf, Checkpoint), CheckpointError> {
    let all = list(dir)?;
    let (_, path) = all
        .last()
        .ok_or_else(|| CheckpointError::None(dir.display().to_string()))?;
    Ok((path.clone(), read(path)?))
}

/// Removes all but the newest `keep` checkpoints of `dir`; returns how many went.
pub fn prune(dir: &Path, keep: usize) -> std::io::Result<usize> {
    let all = list(dir).map_err(|e| std::io::Error::other(e.to_string()))?;
    let excess = all.len().saturating_sub(keep);
    for (_, p) in &all[..excess] {
        std::fs::remove_file(p)?;
    }
    Ok(excess)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> SimState {
        SimState {
            kind: SceneKind::Smoke,
            frame: 12,
            time: 0.2,
            sections: vec![
                Section {
                    name: "a".into(),
                    bytes: vec![1, 2, 3],
                },
                Section {
                    name: "b".into(),
                    bytes: (0..=255).collect(),
                },
            ],
        }
    }

    fn scene() -> Scene {
        Scene::parse(
            "(name: \"s\", kind: smoke, domain: (1.0, 1.0, 0.03125), resolution: (32, 32, 1))",
            Path::new("s.ron"),
        )
        .unwrap()
    }

    #[test]
    fn a_checkpoint_reads_back_and_every_damage_is_named() {
        let p = Path::new("c.eddy");
        let bytes = encode(&scene(), &state());
        let back = decode(&bytes, p).unwrap();
        assert_eq!(back.state, state());
        assert_eq!(back.scene.to_ron(), scene().to_ron());
        let err = |b: &[u8]| decode(b, p).unwrap_err().to_string();
        assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
        assert!(err(&bytes[..30]).contains("truncated"));
        assert!(err(b"hello").contains("not an eddy checkpoint"));
        let mut flipped = bytes.clone();
        let at = bytes.len() - 10;
        flipped[at] ^= 1;
        assert!(err(&flipped).contains("checksum"));
        let mut other = bytes.clone();
        other[8] = 9;
        assert!(err(&other).contains("format 9"));
        // The name's frame must be the header's; a name of another pattern says nothing.
        assert!(decode(&bytes, Path::new("d/checkpoint_00012.eddy")).is_ok());
        assert!(decode(&bytes, Path::new("saved.eddy")).is_ok());
        let e = decode(&bytes, Path::new("d/checkpoint_00013.eddy"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("frame 12, its name of frame 13"), "{e}");
        // A clock no run reaches, a version string no eddy writes.
        let mut nan = state();
        nan.time = f64::NAN;
        assert!(decode(&encode(&scene(), &nan), p).is_err());
        for time in [-5.0, 1e308, 0.5] {
            let mut s = state();
            s.time = time;
            let e = err(&encode(&scene(), &s));
            assert!(e.contains("not the end of its frame"), "{time}: {e}");
        }
        let mut long = encode(&scene(), &state());
        let at = 20
            + long[20..]
                .windows(7)
                .position(|w| w == b"\"0.1.0\"")
                .unwrap();
        long.splice(at + 1..at + 6, std::iter::repeat_n(b'9', 5000));
        let header_len = u64::from_le_bytes(long[12..20].try_into().unwrap()) + 4995;
        long[12..20].copy_from_slice(&header_len.to_le_bytes());
        let n = long.len() - 4;
        let crc = crc32fast::hash(&long[..n]);
        long[n..].copy_from_slice(&crc.to_le_bytes());
        let e = err(&long);
        assert!(
            e.contains("not a version eddy writes") && e.len() < 300,
            "{e}"
        );
        assert_eq!(frame_of("checkpoint_00012.eddy"), Some(12));
        assert_eq!(frame_of("checkpoint_00012.eddy.tmp"), None);
        assert_eq!(frame_of("checkpoint_12.eddy"), None);
    }
}
