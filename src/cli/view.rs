//! `eddy view` (and no command): the viewer's options and their parsers.

use super::*;

pub(crate) fn view(
    scene: PathBuf,
    frames: Option<u64>,
    screenshot: Option<PathBuf>,
) -> Result<ExitCode> {
    eddy::ui::run(eddy::ui::ViewerOptions {
        scene,
        frames,
        screenshot,
        ..Default::default()
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--camera 30,25,2.2`: yaw and pitch in degrees, distance in metres.
pub(crate) fn parse_camera(s: &str) -> Result<[f32; 3], String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("expected YAW,PITCH,DISTANCE (three numbers), got {s:?}"))?;
    match v.as_slice() {
        [yaw, pitch, d] if v.iter().all(|x| x.is_finite()) => {
            if pitch.abs() > 87.0 {
                return Err(format!(
                    "pitch must be within -87 to 87 degrees, got {pitch}"
                ));
            }
            if *d <= 0.0 {
                return Err(format!("distance must be positive, got {d}"));
            }
            Ok([*yaw, *pitch, *d])
        }
        _ => Err(format!(
            "expected YAW,PITCH,DISTANCE (three finite numbers), got {s:?}"
        )),
    }
}

/// `--size 960x600`.
pub(crate) fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let bad = || format!("expected WIDTHxHEIGHT in pixels (e.g. 960x600), got {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
    if !(64..=8192).contains(&w) || !(64..=8192).contains(&h) {
        return Err(format!(
            "width and height must be 64 to 8192 pixels, got {w}x{h}"
        ));
    }
    Ok([w, h])
}

/// `eddy view --help` lists every field and smoke view with what it shows.
pub(crate) fn view_fields_help() -> String {
    use eddy::sim::{
        liquid::views::{Field, MgField},
        smoke::views::SmokeField,
    };
    let mut s = String::from("Fields (--field, liquid scenes):\n");
    for f in Field::ALL {
        s += &format!("  {:<18} {}\n", f.id(), f.meaning());
    }
    s += &format!("  {}\n", MgField::NAMES);
    s += "\nSmoke views (--smoke-view, smoke scenes; also the mg_ names above):\n";
    for f in SmokeField::ALL {
        s += &format!("  {:<18} {}\n", f.name(), f.label());
    }
    s
}

/// Refuses viewer options the scene would ignore: `--field` on a smoke scene,
/// `--smoke-view` on a liquid one, a `--slice` past the grid along `--axis`.
pub(crate) fn check_view_options(
    scene: &Scene,
    field: bool,
    smoke_view: bool,
    axis: &str,
    slice: Option<u32>,
) -> Result<()> {
    let smoke = scene.kind == SceneKind::Smoke;
    if field && smoke {
        bail!(
            "--field shows liquid fields; a smoke scene takes --smoke-view (see eddy view --help)"
        );
    }
    if smoke_view && !smoke {
        bail!("--smoke-view applies to smoke scenes; a liquid scene takes --field (see eddy view --help)");
    }
    if let Some(i) = slice {
        let a = match axis {
            "x" => 0,
            "y" => 1,
            _ => 2,
        };
        let n = scene.dims()[a];
        if i >= n {
            bail!(
                "--slice {i} is past the grid: {axis} has cells 0 to {} in this scene",
                n - 1
            );
        }
    }
    Ok(())
}
