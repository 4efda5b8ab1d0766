//! Offscreen rendering without a window: the cell-type slice shows the expected colours at
//! known pixels, particles show up where the liquid is, and rigid bodies are shaded solids
//! with the host's lighting, depth-tested against the liquid surface.

use crate::common;

use eddy::render::camera::OrbitCamera;
use eddy::render::colormap::cell_type;
use eddy::render::slice::{Range, SliceImage, SliceSpec};
use eddy::render::{read_texture, Offscreen, ParticleStyle, SceneRenderer, OFFSCREEN_FORMAT};
use eddy::scene::{Scene, Shape, AIR, FLUID, SOLID};
use eddy::sim::{liquid::views::Field, Simulation, Stage};
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

/// sRGB encoding of a linear value, 0..=255 (what the sRGB target stores).
fn srgb8(linear: f32) -> f32 {
    let c = linear.clamp(0.0, 1.0);
    let s = if c <= 0.0031308 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    s * 255.0
}

fn expected_pixel(linear: [f32; 3]) -> [f32; 3] {
    linear.map(srgb8)
}

fn distance(a: [u8; 3], b: [f32; 3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x as f32 - y).abs())
        .fold(0.0, f32::max)
}

/// floating_bodies on a 16^3 grid, its bodies where the scene puts them, seen from the +z
/// side and above: the stone box (body 1) and the ball (body 2) are in full view.
struct BodyView {
    ctx: std::sync::Arc<eddy::gpu::GpuContext>,
    sim: Simulation,
    camera: OrbitCamera,
    size: u32,
}

impl BodyView {
    fn new() -> Self {
        let ctx = common::gpu();
        let mut s = Scene::load(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenes/floating_bodies.ron"
        ))
        .unwrap();
        s.resolution = (16, 16, 16);
        let sim = Simulation::new(ctx.clone(), &s).unwrap();
        let mut camera = OrbitCamera {
            yaw: 0.0,
            pitch: 0.35,
            ..OrbitCamera::default()
        };
        camera.target = Vec3::new(0.5, 0.55, 0.5);
        camera.distance = 2.2;
        Self {
            ctx,
            sim,
            camera,
            size: 256,
        }
    }

    fn set(&self) -> &eddy::sim::bodies::BodySet {
        &self.sim.bodies.as_ref().expect("the scene has bodies").set
    }

    /// Renders `set` (no lines, no slice) with `style` into an offscreen target; returns
    /// the renderer (its liquid images stay readable) and the target.
    fn render_to(
        &self,
        set: &eddy::sim::bodies::BodySet,
        grabbed: Option<usize>,
        style: &ParticleStyle,
    ) -> (SceneRenderer, Offscreen) {
        let ctx = &self.ctx;
        let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
        r.bind_particles(&ctx.device, &self.sim);
        r.set_bodies(&ctx.device, Some(set), grabbed);
        let off = Offscreen::new(&ctx.device, self.size, self.size);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        r.render(&ctx.queue, &mut enc, &off.target(), &self.camera, style);
        ctx.queue.submit([enc.finish()]);
        (r, off)
    }

    /// Renders `set` (no lines, no slice) with `style` and returns the pixels.
    fn render(
        &self,
        set: &eddy::sim::bodies::BodySet,
        grabbed: Option<usize>,
        style: &ParticleStyle,
        name: &str,
    ) -> Vec<u8> {
        let (_, off) = self.render_to(set, grabbed, style);
        let px = read_texture(&self.ctx, &off.texture).unwrap();
        if let Ok(dir) = std::env::var("EDDY_TEST_IMAGES") {
            let (w, h) = (self.size, self.size);
            image::save_buffer(
                format!("{dir}/{name}.png"),
                &px,
                w,
                h,
                image::ColorType::Rgba8,
            )
            .unwrap();
        }
        px
    }

    /// The pixel (x right, y down) that world point `p` projects to.
    fn project(&self, p: glam::DVec3) -> (u32, u32) {
        let vp = self.camera.proj(1.0) * self.camera.view();
        let ndc = vp.project_point3(p.as_vec3());
        let s = self.size as f32;
        (
            ((ndc.x + 1.0) * 0.5 * s) as u32,
            ((1.0 - ndc.y) * 0.5 * s) as u32,
        )
    }

    /// The centres of box `i`'s faces that face the camera, with their world normals.
    fn visible_faces(
        &self,
        set: &eddy::sim::bodies::BodySet,
        i: usize,
    ) -> Vec<(glam::DVec3, glam::DVec3)> {
        let b = &set.bodies[i];
        let eddy::sim::bodies::Solid::Box { half } = b.solid else {
            panic!("body {i} is not a box")
        };
        let eye = self.camera.eye().as_dvec3();
        let mut out = vec![];
        for axis in 0..3 {
            for sign in [-1.0, 1.0] {
                let mut n = glam::DVec3::ZERO;
                n[axis] = sign;
                let centre = b.position + b.orientation * (n * half);
                let world_n = b.orientation * n;
                // Seen clearly: not at a grazing angle.
                if world_n.dot((eye - centre).normalize()) > 0.25 {
                    out.push((centre, world_n));
                }
            }
        }
        out
    }
}

#[test]
fn bodies_render_as_shaded_solids_in_their_colours() {
    use eddy::render::bodies::{body_shade, DYNAMIC_COLOR, GRABBED_COLOR, KINEMATIC_COLOR};
    let v = BodyView::new();
    let hidden = ParticleStyle {
        visible: false,
        ..ParticleStyle::default()
    };
    let px = v.render(v.set(), None, &hidden, "bodies");
    let w = v.size;
    let bg = pixel(&px, w, 0, 0);
    // Every visible face of the stone box has the host's shade of the dynamic colour at its
    // centre, and two of them differ clearly in brightness (the box is lit, not flat).
    let faces = v.visible_faces(v.set(), 1);
    assert!(faces.len() >= 2, "{} faces in view", faces.len());
    let mut seen = vec![];
    for (centre, n) in &faces {
        let (x, y) = v.project(*centre);
        let want = expected_pixel(body_shade(DYNAMIC_COLOR, n.as_vec3()));
        let got = pixel(&px, w, x, y);
        assert!(
            distance(got, want) <= 3.0,
            "face {n} at ({x}, {y}): {got:?} vs {want:?}"
        );
        seen.push(got.iter().map(|&c| c as i32).sum::<i32>());
    }
    let spread = seen.iter().max().unwrap() - seen.iter().min().unwrap();
    assert!(spread > 30, "face brightnesses {seen:?}");
    // The viewer's pick: the camera's ray through the pixel of a face centre hits that box
    // near that point (within a pixel's width at the box's distance).
    let pixel_m = 2.0 * v.camera.distance as f64 * (v.camera.fov_y as f64 * 0.5).tan() / w as f64;
    for (centre, _) in &faces {
        let (x, y) = v.project(*centre);
        let s = w as f32;
        let (o, d) = v.camera.ray(x as f32 + 0.5, y as f32 + 0.5, s, s);
        let (i, t) =
            eddy::ui::picking::ray_hit(v.set(), o.as_dvec3(), d.as_dvec3()).expect("a hit");
        let hit = o.as_dvec3() + d.as_dvec3() * t;
        assert_eq!(i, 1, "picked body {i} at {hit}");
        assert!(
            (hit - *centre).length() < 2.0 * pixel_m,
            "picked {hit}, face centre {centre}"
        );
    }
    // The ball: at its projected centre the surface faces the eye.
    let ball = &v.set().bodies[2];
    let (x, y) = v.project(ball.position);
    let n = (v.camera.eye().as_dvec3() - ball.position).normalize();
    let want = expected_pixel(body_shade(DYNAMIC_COLOR, n.as_vec3()));
    let got = pixel(&px, w, x, y);
    assert!(distance(got, bg.map(|c| c as f32)) > 40.0, "ball {got:?}");
    // A faceted sphere: its interpolated normal is close to the true one.
    assert!(distance(got, want) <= 6.0, "ball {got:?} vs {want:?}");

    // A kinematic box and a grabbed ball change colour; nothing else does.
    let mut set = v.set().clone();
    set.bodies[1].motion = eddy::scene::BodyMotion::Kinematic;
    let px = v.render(&set, Some(2), &hidden, "bodies_tinted");
    for (centre, n) in &faces {
        let (x, y) = v.project(*centre);
        let want = expected_pixel(body_shade(KINEMATIC_COLOR, n.as_vec3()));
        let got = pixel(&px, w, x, y);
        assert!(
            distance(got, want) <= 3.0,
            "kinematic face {n}: {got:?} vs {want:?}"
        );
    }
    let want = expected_pixel(body_shade(GRABBED_COLOR, n.as_vec3()));
    let got = pixel(&px, w, x, y);
    assert!(
        distance(got, want) <= 6.0,
        "grabbed ball {got:?} vs {want:?}"
    );
}

#[test]
fn a_half_submerged_body_shows_half_under_the_liquid_surface() {
    use eddy::render::bodies::{body_shade, DYNAMIC_COLOR};
    use eddy::render::surface::RenderMode;
    let v = BodyView::new();
    // The stone box, unrotated, centred on the water line (y = 0.45).
    let mut set = v.set().clone();
    let b = &mut set.bodies[1];
    b.orientation = glam::DQuat::IDENTITY;
    b.position.y = 0.45;
    let (p, half) = (b.position, 0.07);
    let style = ParticleStyle {
        mode: RenderMode::Surface,
        surface: eddy::render::surface::SurfaceStyle::for_spacing(1.0 / 32.0),
        ..ParticleStyle::default()
    };
    let px = v.render(&set, None, &style, "bodies_submerged");
    let w = v.size;
    let front = glam::DVec3::Z;
    let want = expected_pixel(body_shade(DYNAMIC_COLOR, front.as_vec3()));
    // The front face above the water line: the body, untouched by the liquid.
    let above = p + glam::DVec3::new(0.0, 0.6 * half, half);
    let (x, y) = v.project(above);
    let got = pixel(&px, w, x, y);
    assert!(
        distance(got, want) <= 3.0,
        "above water {got:?} vs {want:?}"
    );
    // Below it: the liquid between the camera and the face covers it.
    let below = p + glam::DVec3::new(0.0, -0.6 * half, half);
    let (x, y) = v.project(below);
    let got = pixel(&px, w, x, y);
    assert!(
        distance(got, want) > 20.0,
        "below water {got:?} shows the bare body"
    );
    // Only the liquid there: with the liquid hidden, the same pixel is the body again.
    let hidden = ParticleStyle {
        visible: false,
        ..style
    };
    let px = v.render(&set, None, &hidden, "bodies_submerged_dry");
    let got = pixel(&px, w, x, y);
    assert!(distance(got, want) <= 3.0, "dry {got:?} vs {want:?}");
}

/// Liquid behind a body adds nothing to the liquid seen in front of it: through a
/// submerged box's front face the thickness image holds only the liquid between the camera
/// and the face (the bodies' depth is drawn into the liquid's depth buffer first).
#[test]
fn liquid_behind_a_body_does_not_thicken_the_liquid_in_front_of_it() {
    use eddy::render::surface::RenderMode;
    let v = BodyView::new();
    let mut set = v.set().clone();
    // The stone box, unrotated, under the water line (y = 0.45).
    let b = &mut set.bodies[1];
    b.orientation = glam::DQuat::IDENTITY;
    b.position.y = 0.3;
    let face = b.position + glam::DVec3::new(0.0, 0.0, 0.07);
    // A point as deep beside the box: the ray there runs through the pool to its floor.
    let beside = face - glam::DVec3::new(0.4, 0.0, 0.0);
    let style = ParticleStyle {
        mode: RenderMode::Surface,
        surface: eddy::render::surface::SurfaceStyle::for_spacing(1.0 / 32.0),
        ..ParticleStyle::default()
    };
    let (r, _) = v.render_to(&set, None, &style);
    let (thick, [lw, lh]) = r.read_thickness(&v.ctx).unwrap();
    let at = |p: glam::DVec3| {
        let (x, y) = v.project(p);
        let (x, y) = (x * lw / v.size, y * lh / v.size);
        thick[(x + lw * y) as usize]
    };
    let (front, open) = (at(face), at(beside));
    // Measured: 0.25 m of liquid along the ray to the face, 0.91 m beside it; counting the
    // liquid behind the box the face's ray had 0.80 m.
    println!("thickness through the box's face {front:.3} m, beside it {open:.3} m");
    assert!(open > 0.5, "beside the box {open} m of liquid");
    assert!(
        front > 0.1 * open && front < 0.5 * open,
        "through the box's face {front} m against {open} m beside it"
    );
}
