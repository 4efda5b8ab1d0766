//! Offscreen rendering without a window: the cell-type slice shows the expected colours at
//! known pixels, and particles show up where the liquid is.

mod common;

use eddy::render::camera::OrbitCamera;
use eddy::render::colormap::cell_type;
use eddy::render::slice::{Range, SliceImage, SliceSpec};
use eddy::render::{read_texture, Offscreen, ParticleStyle, SceneRenderer, OFFSCREEN_FORMAT};
use eddy::scene::{Scene, Shape, AIR, FLUID, SOLID};
use eddy::sim::views::Field;
use eddy::sim::{Simulation, Stage};
use glam::Vec3;

fn scene() -> Scene {
    Scene {
        domain: (1.0, 1.0, 1.0),
        resolution: (16, 16, 16),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.5, 0.5, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![Shape::Box {
            min: (0.75, 0.0, 0.0),
            max: (1.0, 0.25, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        ..Scene::default()
    }
}

/// Camera looking straight down -z at the slice plane z = 0.5, the domain filling the view.
fn front_camera() -> OrbitCamera {
    let mut c = OrbitCamera {
        yaw: 0.0,
        pitch: 0.0,
        ..OrbitCamera::default()
    };
    c.target = Vec3::new(0.5, 0.5, 0.5);
    c.distance = 0.5 / (c.fov_y * 0.5).tan();
    c
}

fn pixel(img: &[u8], w: u32, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * w + x) * 4) as usize;
    [img[i], img[i + 1], img[i + 2]]
}

fn close(a: [u8; 3], b: [f32; 3]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (*x as f32 - y * 255.0).abs() <= 3.0)
}

#[test]
fn cell_type_slice_has_the_expected_colours() {
    let ctx = common::gpu();
    let s = scene();
    let mut sim = Simulation::new(ctx.clone(), &s).unwrap();
    sim.substep(s.frame_dt, Stage::MarkCells).unwrap();
    let data = sim.read_field(Field::CellType).unwrap();
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
    r.set_slice(&ctx.device, &ctx.queue, Some(&img));
    let (w, h) = (256, 256);
    let off = Offscreen::new(&ctx.device, w, h);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let style = ParticleStyle {
        visible: false,
        ..ParticleStyle::default()
    };
    r.render(&ctx.queue, &mut enc, &off.target(), &front_camera(), &style);
    ctx.queue.submit([enc.finish()]);
    let px = read_texture(&ctx, &off.texture).unwrap();
    // World (x, y) on the plane maps to pixel (x * w, (1 - y) * h).
    let at = |x: f32, y: f32| pixel(&px, w, (x * w as f32) as u32, ((1.0 - y) * h as f32) as u32);
    assert!(
        close(at(0.2, 0.2), cell_type(FLUID)),
        "fluid: {:?}",
        at(0.2, 0.2)
    );
    assert!(
        close(at(0.9, 0.1), cell_type(SOLID)),
        "solid: {:?}",
        at(0.9, 0.1)
    );
    // Off the cell borders: 16 px cells draw grid lines on them.
    assert!(
        close(at(0.53, 0.85), cell_type(AIR)),
        "air: {:?}",
        at(0.53, 0.85)
    );
}

#[test]
fn particles_render_where_the_liquid_is() {
    let ctx = common::gpu();
    let s = scene();
    let sim = Simulation::new(ctx.clone(), &s).unwrap();
    let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
    r.bind_particles(&ctx.device, &sim);
    let (w, h) = (200, 200);
    let off = Offscreen::new(&ctx.device, w, h);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let style = ParticleStyle {
        radius: 0.01,
        ..ParticleStyle::default()
    };
    r.render(&ctx.queue, &mut enc, &off.target(), &front_camera(), &style);
    ctx.queue.submit([enc.finish()]);
    let px = read_texture(&ctx, &off.texture).unwrap();
    if let Ok(dir) = std::env::var("EDDY_TEST_IMAGES") {
        image::save_buffer(
            format!("{dir}/particles.png"),
            &px,
            w,
            h,
            image::ColorType::Rgba8,
        )
        .unwrap();
    }
    // The corner pixel is background (the clear colour); particles differ from it.
    let bg = pixel(&px, w, 0, 0);
    let lit = |x0: f32, x1: f32, y0: f32, y1: f32| {
        let mut n = 0;
        let mut total = 0;
        for y in ((1.0 - y1) * h as f32) as u32..((1.0 - y0) * h as f32) as u32 {
            for x in (x0 * w as f32) as u32..(x1 * w as f32) as u32 {
                total += 1;
                let p = pixel(&px, w, x, y);
                if p.iter()
                    .zip(bg)
                    .map(|(a, b)| (*a as i32 - b as i32).abs())
                    .sum::<i32>()
                    > 30
                {
                    n += 1;
                }
            }
        }
        n as f32 / total as f32
    };
    let inside = lit(0.05, 0.45, 0.05, 0.45);
    let outside = lit(0.55, 0.95, 0.55, 0.95);
    assert!(inside > 0.8, "liquid region covered {inside}");
    assert!(outside < 0.01, "empty region covered {outside}");
}
