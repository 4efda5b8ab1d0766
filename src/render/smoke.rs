//! Images of the smoke slice: any view of it colour-mapped (dye in its own colours, flow
//! direction as hue, cell types, scalar fields on a scale), and the tracers' trails as
//! fading lines.

use super::{
    colormap::{cell_type, to_rgba8, Scale},
    slice::{Range, SliceImage, SliceSpec},
    LineVertex,
};
use crate::sim::{
    liquid::views::Field,
    smoke::views::SmokeField,
    smoke::{SmokeSimulation, TRAIL_LEN},
    SimError,
};

/// Reads the slice as `field` and colours it over `range` (the dye drawn with bilinear
/// filtering when `bilinear`). Also returns the cell types.
pub fn build_image(
    sim: &SmokeSimulation,
    field: SmokeField,
    range: Range,
    bilinear: bool,
) -> Result<(SliceImage, Vec<u32>), SimError> {
    let data = sim.read_view(field)?;
    let [nx, ny] = data.dims;
    let h = sim.scene.h() as f32;
    let cell = [data.spacing[0] as f32 * h, data.spacing[1] as f32 * h, h];
    let types = &data.cell_type;
    let solid_rgb = |c: usize| (types[c] == crate::scene::SOLID).then(|| cell_type(types[c]));
    let values = &data.values;
    let (rgba, scale): (Vec<u8>, Scale) = match (field, &data.rgb, &data.velocity) {
        (SmokeField::Dye, Some(rgb), _) => {
            let rgba = (0..values.len())
                .flat_map(|c| to_rgba8(solid_rgb(c).unwrap_or(rgb[c].map(|x| x.clamp(0.0, 1.0)))))
                .collect();
            (rgba, Scale::Sequential { lo: 0.0, hi: 1.0 })
        }
        (SmokeField::Direction, _, Some(u)) => {
            let max = values.iter().copied().fold(1e-6f32, f32::max);
            let rgba = (0..values.len())
                .flat_map(|c| {
                    to_rgba8(solid_rgb(c).unwrap_or_else(|| {
                        let hue = u[c][1].atan2(u[c][0]) / std::f32::consts::TAU + 0.5;
                        hsv(hue, 0.85, (values[c] / max).sqrt())
                    }))
                })
                .collect();
            (rgba, Scale::Sequential { lo: 0.0, hi: max })
        }
        (SmokeField::SolidVelocity, _, Some(u)) => {
            // The solids are the subject here: coloured by their velocity, the flow dark.
            let max = values.iter().copied().fold(1e-6f32, f32::max);
            let rgba = (0..values.len())
                .flat_map(|c| {
                    to_rgba8(if types[c] == crate::scene::SOLID {
                        let hue = u[c][1].atan2(u[c][0]) / std::f32::consts::TAU + 0.5;
                        hsv(hue, 0.85, 0.25 + 0.75 * (values[c] / max).sqrt())
                    } else {
                        [0.08, 0.08, 0.1]
                    })
                })
                .collect();
            (rgba, Scale::Sequential { lo: 0.0, hi: max })
        }
        (f, _, _) if f.is_cell_types() => (
            types.iter().flat_map(|t| to_rgba8(cell_type(*t))).collect(),
            Scale::CellTypes,
        ),
        (f, _, _) => {
            let scale = match range {
                Range::Auto => Scale::auto(values, f.signed()),
                Range::Fixed { lo, hi } if f.signed() => Scale::Diverging {
                    max: lo.abs().max(hi.abs()),
                },
                Range::Fixed { lo, hi } => Scale::Sequential { lo, hi },
            };
            let rgba = (0..values.len())
                .flat_map(|c| to_rgba8(solid_rgb(c).unwrap_or_else(|| scale.color(values[c]))))
                .collect();
            (rgba, scale)
        }
    };
    let spec = SliceSpec {
        field: Field::CellType,
        axis: 2,
        index: 0,
        range,
    };
    let types = data.cell_type.clone();
    let mut img = SliceImage::xy_layer(spec, nx, ny, cell, rgba, data.values, scale);
    img.bilinear = bilinear && field == SmokeField::Dye;
    Ok((img, types))
}

/// HSV (all in [0, 1]) to RGB.
fn hsv(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h6 = (h.rem_euclid(1.0)) * 6.0;
    let c = v * s;
    let x = c * (1.0 - ((h6 % 2.0) - 1.0).abs());
    let (r, g, b) = match h6 as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [r + m, g + m, b + m]
}

/// The tracers' trails as line segments, oldest segments darkest (they fade into the
/// background). The newest position is in the slot before `trail_slot`.
pub fn trail_lines(sim: &SmokeSimulation) -> Result<Vec<LineVertex>, SimError> {
    let count = sim.mode.tracers.count as usize;
    if count == 0 {
        return Ok(vec![]);
    }
    let trail: Vec<[f32; 4]> = crate::gpu::read_buffer(&sim.ctx, &sim.mode.smoke.trail)?;
    let len = TRAIL_LEN as usize;
    // Slots written so far (a fresh simulation has every slot at the seed position).
    let newest = (sim.trail_slot() as usize + len - 1) % len;
    let z = (sim.scene.h() * 0.5) as f32 + 1e-4;
    let mut out = Vec::with_capacity(count * (len - 1) * 2);
    for age in 0..len - 1 {
        let a = (newest + len - age) % len;
        let b = (newest + len - age - 1) % len;
        let fade = 1.0 - age as f32 / (len - 1) as f32;
        let color = [0.95 * fade, 0.95 * fade, 0.3 + 0.65 * fade];
        for t in 0..count {
            let (p, q) = (trail[a * count + t], trail[b * count + t]);
            out.push(LineVertex {
                pos: [p[0], p[1], z],
                color,
            });
            out.push(LineVertex {
                pos: [q[0], q[1], z],
                color,
            });
        }
    }
    Ok(out)
}
