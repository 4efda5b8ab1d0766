//! Keyframed paths of moving mesh solids: position and rotation at given times, linearly
//! interpolated between them (the rotation angles too), held before the first key and
//! after the last. The simulation side is src/sim/liquid/moving.rs.

use serde::{Deserialize, Serialize};

/// Where a keyframed mesh is at `time`: moved by `translation` after turning by
/// `rotation_deg` about the world x, then y, then z axes (a `Mesh`'s own placement).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keyframe {
    /// s.
    pub time: f64,
    /// m.
    #[serde(default)]
    pub translation: (f64, f64, f64),
    /// Degrees.
    #[serde(default)]
    pub rotation_deg: (f64, f64, f64),
}

/// Most keyframes of one mesh.
pub const MAX_KEYFRAMES: usize = 4096;

fn lerp3(a: (f64, f64, f64), b: (f64, f64, f64), s: f64) -> (f64, f64, f64) {
    (
        a.0 + s * (b.0 - a.0),
        a.1 + s * (b.1 - a.1),
        a.2 + s * (b.2 - a.2),
    )
}

/// (rotation_deg, translation) at time `t` on the path `keys` (not empty, times
/// increasing).
pub fn pose_at(keys: &[Keyframe], t: f64) -> ((f64, f64, f64), (f64, f64, f64)) {
    let first = &keys[0];
    if t <= first.time {
        return (first.rotation_deg, first.translation);
    }
    for w in keys.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if t <= b.time {
            let s = (t - a.time) / (b.time - a.time);
            return (
                lerp3(a.rotation_deg, b.rotation_deg, s),
                lerp3(a.translation, b.translation, s),
            );
        }
    }
    let last = &keys[keys.len() - 1];
    (last.rotation_deg, last.translation)
}

/// Checks a path; the message names the key at fault.
pub fn validate_keyframes(keys: &[Keyframe]) -> Result<(), String> {
    if keys.len() > MAX_KEYFRAMES {
        return Err(format!(
            "keyframes has {} entries; at most {MAX_KEYFRAMES}",
            keys.len()
        ));
    }
    let bound = super::MAX_COORDINATE;
    let finite = |v: (f64, f64, f64), most: f64| {
        [v.0, v.1, v.2]
            .iter()
            .all(|x| x.is_finite() && x.abs() <= most)
    };
    for (i, k) in keys.iter().enumerate() {
        if !(k.time.is_finite() && k.time >= 0.0) {
            return Err(format!(
                "keyframes[{i}].time must be finite and >= 0 s, got {}",
                k.time
            ));
        }
        if i > 0 && k.time <= keys[i - 1].time {
            return Err(format!(
                "keyframes[{i}].time {} must come after keyframes[{}].time {}",
                k.time,
                i - 1,
                keys[i - 1].time
            ));
        }
        if !finite(k.translation, bound) {
            return Err(format!(
                "keyframes[{i}].translation {:?} must be finite and within {bound:e} m",
                k.translation
            ));
        }
        if !finite(k.rotation_deg, 1e6) {
            return Err(format!(
                "keyframes[{i}].rotation_deg {:?} must be finite and at most 1e6 degrees",
                k.rotation_deg
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(time: f64, x: f64, angle: f64) -> Keyframe {
        Keyframe {
            time,
            translation: (x, 0.5, 0.25),
            rotation_deg: (0.0, angle, 0.0),
        }
    }

    #[test]
    fn poses_are_interpolated_between_keys_and_held_outside() {
        let keys = [key(1.0, 0.2, 0.0), key(3.0, 0.6, 90.0), key(4.0, 0.6, 90.0)];
        assert_eq!(pose_at(&keys, 0.0), ((0.0, 0.0, 0.0), (0.2, 0.5, 0.25)));
        let (r, t) = pose_at(&keys, 2.0);
        assert!((t.0 - 0.4).abs() < 1e-12 && (r.1 - 45.0).abs() < 1e-12);
        assert_eq!(pose_at(&keys, 9.0), ((0.0, 90.0, 0.0), (0.6, 0.5, 0.25)));
        assert!(validate_keyframes(&keys).is_ok());
    }

    #[test]
    fn bad_paths_name_the_key() {
        let e = validate_keyframes(&[key(1.0, 0.0, 0.0), key(1.0, 0.1, 0.0)]).unwrap_err();
        assert!(e.contains("keyframes[1].time"), "{e}");
        let e = validate_keyframes(&[key(f64::NAN, 0.0, 0.0)]).unwrap_err();
        assert!(e.contains("keyframes[0].time"), "{e}");
        let e = validate_keyframes(&[key(0.0, f64::INFINITY, 0.0)]).unwrap_err();
        assert!(e.contains("keyframes[0].translation"), "{e}");
    }
}
