//! The screen-space liquid surface and the slice drawing, offscreen: the depth filter
//! against its f64 reference, the surface against the particle view of a resting pool
//! (no holes, smoother, different), and the smoke dye's bilinear and cell views against
//! CPU-computed colours.

use crate::common;

use eddy::reference::surface::{smooth_depth, DepthFilter};
use eddy::render::camera::OrbitCamera;
use eddy::render::colormap::{to_rgba8, Scale};
use eddy::render::slice::{Range, SliceImage, SliceSpec};
use eddy::render::surface::{RenderMode, SurfaceRenderer, SurfaceStyle};
use eddy::render::{read_texture, Offscreen, ParticleStyle, SceneRenderer, OFFSCREEN_FORMAT};
use eddy::scene::{Scene, Shape};
use eddy::sim::{liquid::views::Field, Simulation};
use glam::{Mat4, Vec3};

/// A small deterministic generator for test images.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn depth_filter_matches_the_cpu_reference() {
    let ctx = common::gpu();
    let (w, h) = (96u32, 64u32);
    let proj = Mat4::perspective_rh(45f32.to_radians(), w as f32 / h as f32, 0.01, 10.0);
    // A wavy noisy body at ~1 m, no liquid in the top rows, and a near blob at 0.7 m.
    let mut rng = Lcg(7);
    let clean = |x: f64, y: f64| {
        if y < 10.0 {
            0.0
        } else if (x - 60.0).powi(2) + (y - 40.0).powi(2) < 100.0 {
            0.7
        } else {
            1.0 + 0.02 * (x / 9.0).sin() * (y / 7.0).cos()
        }
    };
    let depth: Vec<f64> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            match clean(x, y) {
                z if z > 0.0 => z + 0.008 * (rng.next() - 0.5),
                z => z,
            }
        })
        .collect();
    let style = SurfaceStyle {
        smooth_radius: 0.1,
        depth_falloff: 0.02,
        ..SurfaceStyle::default()
    };
    let mut surface = SurfaceRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
    let input: Vec<f32> = depth.iter().map(|z| *z as f32).collect();
    let gpu = surface
        .filter_depth(&ctx, &input, w, h, proj, &style)
        .unwrap();
    let cpu = smooth_depth(
        &depth,
        w as usize,
        h as usize,
        &DepthFilter {
            focal_px: proj.y_axis.y as f64 * 0.5 * h as f64,
            radius: style.smooth_radius as f64,
            falloff: style.depth_falloff as f64,
        },
    );
    let (mut close, mut liquid) = (0, 0);
    for i in 0..depth.len() {
        // Pixels without liquid stay without, and only those.
        assert_eq!(gpu[i] > 0.0, depth[i] > 0.0, "pixel {i}");
        if depth[i] > 0.0 {
            liquid += 1;
            let d = (gpu[i] as f64 - cpu[i]).abs();
            // A tap offset that rounds the other way (f32 against f64) moves one sample
            // by a pixel: rare, and small.
            assert!(d < 5e-3, "pixel {i}: gpu {} cpu {}", gpu[i], cpu[i]);
            if d < 1e-4 {
                close += 1;
            }
        }
    }
    assert!(
        close as f64 >= 0.99 * liquid as f64,
        "{close} of {liquid} pixels agree"
    );
    // What the filter is for: the noise is gone, the blob's edge is not smeared.
    // Noise shows in second differences (the clean surface's curvature is tiny there).
    let noise = |img: &[f64]| {
        let mut s = 0.0;
        for y in 16..58 {
            for x in 4..40 {
                let i = (y * w + x) as usize;
                s += (img[i + 1] - 2.0 * img[i] + img[i - 1]).powi(2);
            }
        }
        s
    };
    let (before, after) = (noise(&depth), noise(&cpu));
    assert!(after < 0.05 * before, "noise {before} -> {after}");
    for (x, y, z) in [(60, 40, 0.7), (60, 33, 0.7), (60, 52, 1.0), (45, 40, 1.0)] {
        let i = (y * w + x) as usize;
        assert!((cpu[i] - z).abs() < 0.06, "({x}, {y}): {}", cpu[i]);
        assert!((gpu[i] as f64 - z).abs() < 0.06, "({x}, {y}): {}", gpu[i]);
    }
}

/// A resting pool filling the bottom 40% of a 16^3 box.
fn pool() -> Scene {
    Scene {
        domain: (1.0, 1.0, 1.0),
        resolution: (16, 16, 16),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.4, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![],
        ..Scene::default()
    }
}

/// Looks at the pool's front face from slightly above.
fn camera() -> OrbitCamera {
    OrbitCamera {
        target: Vec3::new(0.5, 0.3, 0.5),
        distance: 2.2,
        yaw: 0.0,
        pitch: 0.25,
        ..OrbitCamera::default()
    }
}

fn render(
    ctx: &eddy::gpu::GpuContext,
    r: &mut SceneRenderer,
    style: &ParticleStyle,
    w: u32,
    h: u32,
) -> Vec<u8> {
    let off = Offscreen::new(&ctx.device, w, h);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    r.render(&ctx.queue, &mut enc, &off.target(), &camera(), style);
    ctx.queue.submit([enc.finish()]);
    let px = read_texture(ctx, &off.texture).unwrap();
    if let Ok(dir) = std::env::var("EDDY_TEST_IMAGES") {
        let name = format!(
            "{dir}/pool_{w}_{}_{}_{:?}.png",
            style.visible,
            style.mode.name(),
            style.occlusion
        );
        image::save_buffer(name, &px, w, h, image::ColorType::Rgba8).unwrap();
    }
    px
}

#[test]
fn the_surface_covers_a_pool_without_holes_and_is_smoother_than_particles() {
    let ctx = common::gpu();
    let s = pool();
    let sim = Simulation::new(ctx.clone(), &s).unwrap();
    let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
    r.bind_particles(&ctx.device, &sim);
    let (w, h) = (240u32, 180u32);
    let spacing = (s.h() / 2.0) as f32;
    let particles = ParticleStyle {
        radius: (s.h() * 0.3) as f32,
        surface: SurfaceStyle::for_spacing(spacing),
        ..ParticleStyle::default()
    };
    let surface = ParticleStyle {
        mode: RenderMode::Surface,
        ..particles
    };
    let empty = render(
        &ctx,
        &mut r,
        &ParticleStyle {
            visible: false,
            ..particles
        },
        w,
        h,
    );
    let p = render(&ctx, &mut r, &particles, w, h);
    let f = render(&ctx, &mut r, &surface, w, h);
    // The pixels of the pool's body: its front face, inset by a cell.
    let vp = camera().proj(w as f32 / h as f32) * camera().view();
    let to_px = |q: Vec3| {
        let n = vp.project_point3(q);
        (
            (0.5 * (n.x + 1.0) * w as f32) as u32,
            (0.5 * (1.0 - n.y) * h as f32) as u32,
        )
    };
    let (x0, y1) = to_px(Vec3::new(0.1, 0.06, 1.0));
    let (x1, y0) = to_px(Vec3::new(0.9, 0.34, 1.0));
    assert!(
        x1 > x0 + 40 && y1 > y0 + 20,
        "body at {x0}..{x1} x {y0}..{y1}"
    );
    let at = |img: &[u8], x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [img[i] as i32, img[i + 1] as i32, img[i + 2] as i32]
    };
    let diff = |a: [i32; 3], b: [i32; 3]| (0..3).map(|c| (a[c] - b[c]).abs()).sum::<i32>();
    let (mut holes_surface, mut changed, mut n) = (0, 0, 0);
    let (mut rough_surface, mut rough_particles) = (0i64, 0i64);
    for y in y0..y1 {
        for x in x0..x1 {
            n += 1;
            let bg = at(&empty, x, y);
            holes_surface += (diff(at(&f, x, y), bg) <= 6) as u32;
            changed += (diff(at(&f, x, y), at(&p, x, y)) > 12) as u32;
            rough_surface += diff(at(&f, x + 1, y), at(&f, x, y)) as i64;
            rough_particles += diff(at(&p, x + 1, y), at(&p, x, y)) as i64;
        }
    }
    // No background shows through the body of the surface.
    assert_eq!(
        holes_surface, 0,
        "{holes_surface} of {n} body pixels show the background"
    );
    assert!(
        changed as f64 > 0.5 * n as f64,
        "only {changed} of {n} pixels differ"
    );
    // Mean neighbour difference (sum over channels, per pixel).
    let (rs, rp) = (
        rough_surface as f64 / n as f64,
        rough_particles as f64 / n as f64,
    );
    assert!(rs < 6.0 && rp > 6.0, "surface {rs}, particles {rp}");
}

#[test]
fn the_liquid_in_front_of_a_slice_fades_or_is_cut_away() {
    let ctx = common::gpu();
    let s = pool();
    let mut sim = Simulation::new(ctx.clone(), &s).unwrap();
    sim.substep(s.frame_dt, eddy::sim::Stage::MarkCells)
        .unwrap();
    let data = sim.read_field(Field::CellType).unwrap();
    // The slice z = 8 (behind the front half of the pool, seen from +z).
    let img = SliceImage::build(
        &data,
        s.h() as f32,
        SliceSpec {
            field: Field::CellType,
            axis: 2,
            index: 8,
            range: Range::Auto,
        },
    );
    let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
    r.bind_particles(&ctx.device, &sim);
    r.set_slice(&ctx.device, &ctx.queue, Some(&img));
    let (w, h) = (160u32, 120u32);
    let fluid = to_rgba8(eddy::render::colormap::cell_type(eddy::scene::FLUID));
    let mut share = |style: ParticleStyle| {
        let px = render(&ctx, &mut r, &style, w, h);
        let hits = px
            .chunks_exact(4)
            .filter(|c| (0..3).all(|k| (c[k] as i32 - fluid[k] as i32).abs() <= 3))
            .count();
        hits as f64 / (w * h) as f64
    };
    use eddy::render::SliceOcclusion::*;
    let base = ParticleStyle {
        radius: (s.h() * 0.3) as f32,
        surface: SurfaceStyle::for_spacing((s.h() / 2.0) as f32),
        ..ParticleStyle::default()
    };
    let show = share(ParticleStyle {
        occlusion: Show,
        ..base
    });
    let fade = share(ParticleStyle {
        occlusion: Fade,
        ..base
    });
    let hide = share(ParticleStyle {
        occlusion: Hide,
        ..base
    });
    let surface_show = share(ParticleStyle {
        occlusion: Show,
        mode: RenderMode::Surface,
        ..base
    });
    let surface_hide = share(ParticleStyle {
        occlusion: Hide,
        mode: RenderMode::Surface,
        ..base
    });
    // The FLUID part of the slice is hidden by the liquid in front unless it fades or
    // is cut away; fading keeps about three pixels in four of the slice.
    assert!(show < 0.01, "{show}");
    assert!(hide > 0.05, "{hide}");
    assert!(fade > 0.4 * hide && fade < hide, "fade {fade}, hide {hide}");
    assert!(surface_show < 0.01, "{surface_show}");
    assert!(surface_hide > 0.5 * hide, "{surface_hide}");
}

/// sRGB (0-255) to linear and back, exactly as the texture formats do.
fn to_linear(c: u8) -> f64 {
    let c = c as f64 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn to_srgb(l: f64) -> f64 {
    let c = if l <= 0.0031308 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    c * 255.0
}

#[test]
fn smoke_dye_is_bilinear_or_cell_by_cell() {
    let ctx = common::gpu();
    // A 4 x 3 dye image of random colours over a 1 m x 0.75 m slice.
    let (nx, ny) = (4u32, 3u32);
    let mut rng = Lcg(3);
    let rgba: Vec<u8> = (0..nx * ny)
        .flat_map(|_| {
            let mut c = [255u8; 4];
            for v in c.iter_mut().take(3) {
                *v = (rng.next() * 255.0) as u8;
            }
            c
        })
        .collect();
    let spec = SliceSpec {
        field: Field::CellType,
        axis: 2,
        index: 0,
        range: Range::Auto,
    };
    let cell = [0.25, 0.25, 0.05];
    let mut img = SliceImage::xy_layer(
        spec,
        nx,
        ny,
        cell,
        rgba.clone(),
        vec![0.0; 12],
        Scale::Sequential { lo: 0.0, hi: 1.0 },
    );
    // Straight at the slice, the 1 m x 0.75 m slice exactly filling a 256 x 192 target.
    let mut camera = OrbitCamera::default();
    let (w, h) = (256u32, 192u32);
    camera.frame_flat(
        2,
        Vec3::new(0.5, 0.375, 0.025),
        [1.0 / 1.05, 0.75 / 1.05],
        [0.0, 0.0, w as f32, h as f32],
        w as f32,
        h as f32,
    );
    let shot = |img: &SliceImage| {
        let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
        r.set_slice(&ctx.device, &ctx.queue, Some(img));
        let off = Offscreen::new(&ctx.device, w, h);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        r.render(
            &ctx.queue,
            &mut enc,
            &off.target(),
            &camera,
            &ParticleStyle::default(),
        );
        ctx.queue.submit([enc.finish()]);
        read_texture(&ctx, &off.texture).unwrap()
    };
    let texel = |i: i64, j: i64, k: usize| {
        let (i, j) = (i.clamp(0, nx as i64 - 1), j.clamp(0, ny as i64 - 1));
        to_linear(rgba[((j * nx as i64 + i) * 4) as usize + k])
    };
    let blocky = shot(&img);
    img.bilinear = true;
    let smooth = shot(&img);
    let (mut worst, mut lines) = (0.0f64, 0);
    for y in 0..h {
        for x in 0..w {
            // Texel coordinates of the pixel centre (row 0 of the image at the bottom).
            let tx = (x as f64 + 0.5) / w as f64 * nx as f64;
            let ty = (1.0 - (y as f64 + 0.5) / h as f64) * ny as f64;
            let (cx, cy) = (tx - 0.5, ty - 0.5);
            let (i0, j0) = (cx.floor() as i64, cy.floor() as i64);
            let (fx, fy) = (cx - cx.floor(), cy - cy.floor());
            for k in 0..3 {
                let a = texel(i0, j0, k) * (1.0 - fx) + texel(i0 + 1, j0, k) * fx;
                let b = texel(i0, j0 + 1, k) * (1.0 - fx) + texel(i0 + 1, j0 + 1, k) * fx;
                let want = to_srgb(a * (1.0 - fy) + b * fy);
                let got = smooth[((y * w + x) * 4) as usize + k] as f64;
                worst = worst.max((got - want).abs());
            }
            // Cell view: each cell its own colour away from the borders, where grid lines
            // show (64 px cells).
            let (fx, fy) = (tx.fract(), ty.fract());
            let inner = fx > 0.1 && fx < 0.9 && fy > 0.1 && fy < 0.9;
            let (i, j) = (tx.floor() as usize, ty.floor() as usize);
            let want = &rgba[(j * nx as usize + i) * 4..][..3];
            let got = &blocky[((y * w + x) * 4) as usize..][..3];
            if inner {
                assert_eq!(got, want, "cell ({i}, {j}) at pixel ({x}, {y})");
            } else if !(0.02..=0.98).contains(&fx) {
                lines += (got.iter().zip(want).all(|(g, c)| *g <= *c)
                    && got.iter().zip(want).any(|(g, c)| *g + 10 < *c))
                    as u32;
            }
        }
    }
    assert!(
        worst <= 2.0,
        "bilinear differs from the reference by {worst}"
    );
    assert!(
        lines > 100,
        "only {lines} pixels on cell borders are grid lines"
    );
}
