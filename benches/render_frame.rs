//! What each render mode costs the viewer: the default scene (scenes/dam_break.ron) after
//! 30 frames, drawn offscreen at the viewer's window size (1280 x 800, or
//! EDDY_RENDER_SIZE=WxH) from the viewer's starting camera, in each mode, beside the time
//! of one simulated frame. A redraw of the playing viewer costs about one simulated frame
//! plus one render, so the last column is the frame-time ratio against particles.
//! EDDY_RENDER_RESOLUTION=N runs the scene at N cells along its longest axis (as
//! `eddy run --resolution N`): 104 gives about a million particles.
//!
//! `cargo bench --bench render_frame` (or `--profile dev` to skip the release build:
//! the time is spent in the GPU driver either way).

use eddy::gpu::GpuContext;
use eddy::render::camera::OrbitCamera;
use eddy::render::lines::scene_lines;
use eddy::render::surface::{RenderMode, SurfaceStyle};
use eddy::render::{Offscreen, ParticleStyle, SceneRenderer, OFFSCREEN_FORMAT};
use eddy::scene::Scene;
use eddy::sim::Simulation;
use glam::Vec3;
use std::sync::Arc;
use std::time::Instant;

fn wait(ctx: &GpuContext) {
    let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
}

fn main() {
    let ctx = Arc::new(GpuContext::new().unwrap_or_else(|e| panic!("{e}")));
    let (w, h) = std::env::var("EDDY_RENDER_SIZE")
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once('x')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((1280u32, 800u32));
    // The bench binary may run from a copy of the repository elsewhere (a GPU machine):
    // then the scene is found from the working directory.
    let built = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/dam_break.ron");
    let path = if std::path::Path::new(built).exists() {
        built
    } else {
        "scenes/dam_break.ron"
    };
    let mut scene = Scene::load(path).unwrap_or_else(|e| panic!("{e}"));
    if let Some(n) = std::env::var("EDDY_RENDER_RESOLUTION")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
    {
        scene = scene.with_resolution(n);
    }
    let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
    for _ in 0..30 {
        sim.step_frame().unwrap();
    }
    let frames = 5;
    let t = Instant::now();
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    wait(&ctx);
    let sim_ms = t.elapsed().as_secs_f64() * 1e3 / frames as f64;

    let mut r = SceneRenderer::new(&ctx.device, OFFSCREEN_FORMAT);
    r.bind_particles(&ctx.device, &sim);
    r.set_lines(&ctx.device, &scene_lines(&scene));
    let off = Offscreen::new(&ctx.device, w, h);
    let mut camera = OrbitCamera::default();
    let d = scene.domain_size();
    camera.frame(Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32));
    let spacing = scene.h() / (scene.particles_per_cell as f64).cbrt();
    println!(
        "{} at {w}x{h}, {} particles; one simulated frame {sim_ms:.1} ms",
        ctx.info.name, sim.mode.particles.count
    );
    println!("| mode | render ms | frame ms (sim + render) | frame vs particles |");
    println!("|---|---|---|---|");
    // Modes take turns, so a change in the machine's load hits all of them alike; the
    // median of each mode's times is reported.
    let styles = RenderMode::ALL.map(|mode| ParticleStyle {
        radius: (scene.h() * 0.3) as f32,
        mode,
        surface: SurfaceStyle::for_spacing(spacing as f32),
        ..ParticleStyle::default()
    });
    let mut times = [vec![], vec![], vec![]];
    for round in 0..16 {
        for (style, t) in styles.iter().zip(times.iter_mut()) {
            let start = Instant::now();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            r.render(&ctx.queue, &mut enc, &off.target(), &camera, style);
            ctx.queue.submit([enc.finish()]);
            wait(&ctx);
            // The first round compiles pipelines and sizes textures.
            if round > 0 {
                t.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let mut base = None;
    for (style, mut t) in styles.iter().zip(times) {
        t.sort_by(f64::total_cmp);
        let ms = t[t.len() / 2];
        let frame = sim_ms + ms;
        let base = *base.get_or_insert(frame);
        println!(
            "| {} | {ms:.1} | {frame:.1} | {:.2}x |",
            style.mode.name(),
            frame / base
        );
    }
}
