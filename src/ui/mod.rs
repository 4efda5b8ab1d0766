//! The desktop viewer: a winit window with egui panels over the 3D view, on the
//! simulation's own wgpu device.

pub mod liquid;
pub mod overlay;
pub mod panels;
pub mod record;
pub mod smoke;

use crate::gpu::{GpuContext, GpuError};
use crate::render::camera::OrbitCamera;
use crate::render::lines::{scene_lines, velocity_arrows};
use crate::render::push::Pusher;
use crate::render::slice::{SliceImage, SliceSpec};
use crate::render::{create_depth, read_texture, RenderTarget, SceneRenderer};
use crate::scene::{Scene, SceneKind, StandardProblem};
use crate::sim::smoke::{SmokeSimulation, SmokeStage};
use crate::sim::views::{Field, FieldData};
use crate::sim::{SimError, Simulation, Stage};
use glam::Vec3;
use panels::{Action, ControlsPanel, ParametersPanel, StatsPanel, ViewPanel};
use smoke::{Drag, SmokePanel};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

#[derive(Debug, Error)]
pub enum ViewerError {
    #[error("cannot open a window: {0} (is a display available? under CI use xvfb-run)")]
    Window(String),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("cannot save the screenshot {path}: {message}")]
    Screenshot { path: PathBuf, message: String },
    #[error("{0}")]
    Options(String),
}

/// How the viewer was started.
#[derive(Clone, Debug)]
pub struct ViewerOptions {
    pub scene: PathBuf,
    /// Run this many frames, then (after the screenshot, if any) exit.
    pub frames: Option<u64>,
    pub screenshot: Option<PathBuf>,
    /// Field slice to show at start.
    pub field: Option<Field>,
    /// Slice axis (0 x, 1 y, 2 z) and index; the middle of the grid when None.
    pub axis: usize,
    pub slice: Option<u32>,
    /// Smoke scenes: the view to open on (dye by default).
    pub smoke_view: Option<smoke::SmokeField>,
    /// How the liquid is drawn at start.
    pub render: crate::render::surface::RenderMode,
    /// Start in the flat layout: the shown slice as a 2D image filling the view.
    pub flat: bool,
    /// Save a numbered PNG of the window every K simulated frames.
    pub record: Option<record::Recording>,
    /// Camera yaw and pitch (degrees) and distance to the domain's centre (m); the
    /// framed default view when None.
    pub camera: Option<[f32; 3]>,
    /// Window size in pixels (recorded frames have this size); 1280 x 800 points when None.
    pub size: Option<[u32; 2]>,
}

impl Default for ViewerOptions {
    fn default() -> Self {
        Self {
            scene: PathBuf::from("scenes/dam_break.ron"),
            frames: None,
            screenshot: None,
            field: None,
            axis: 2,
            slice: None,
            smoke_view: None,
            render: Default::default(),
            flat: false,
            record: None,
            camera: None,
            size: None,
        }
    }
}

/// Opens the viewer and runs until the window closes (or `frames` are done).
pub fn run(opts: ViewerOptions) -> Result<(), ViewerError> {
    if let Some(r) = &opts.record {
        r.prepare().map_err(ViewerError::Options)?;
    }
    let event_loop = EventLoop::new().map_err(|e| ViewerError::Window(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        opts,
        state: None,
        error: None,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| ViewerError::Window(e.to_string()))?;
    if let (Some(v), Some(r)) = (&app.state, &app.opts.record) {
        say(&format!(
            "recorded {} frame(s) to {}",
            v.frames_recorded,
            r.dir.join("frame_%05d.png").display()
        ));
    }
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Results (files written) go to stdout; a reader that went away is no reason to fail.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

struct App {
    opts: ViewerOptions,
    state: Option<Viewer>,
    error: Option<ViewerError>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.state.is_some() {
            return;
        }
        match Viewer::new(event_loop, &self.opts) {
            Ok(v) => self.state = Some(v),
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(v) = self.state.as_mut() else { return };
        match v.handle(event_loop, event) {
            Ok(()) => {}
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(v) = &self.state {
            v.window.request_redraw();
        }
    }
}

/// The simulation the viewer drives: a liquid, or a smoke slice with its panel and drag.
enum Sim {
    Liquid(Simulation),
    Smoke(Box<SmokeMode>),
}

struct SmokeMode {
    sim: SmokeSimulation,
    panel: SmokePanel,
    drag: Drag,
    /// Cell types read with the current image (for hover text).
    types: Vec<u32>,
    image: Option<crate::render::slice::SliceImage>,
    image_key: Option<(SmokeViewKey, u64)>,
}

#[derive(Clone, Copy, PartialEq)]
struct SmokeViewKey {
    field: smoke::SmokeField,
    auto: bool,
    lo: f32,
    hi: f32,
    trails: bool,
    bilinear: bool,
}

impl SmokeViewKey {
    fn of(p: &SmokePanel) -> Self {
        Self {
            field: p.field,
            auto: p.auto_range,
            lo: p.lo,
            hi: p.hi,
            trails: p.trails,
            bilinear: p.bilinear,
        }
    }
}

impl Sim {
    fn new(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Sim, SimError> {
        Ok(match scene.kind {
            SceneKind::Liquid => Sim::Liquid(Simulation::new(ctx, scene)?),
            SceneKind::Smoke => Sim::Smoke(Box::new(SmokeMode {
                sim: SmokeSimulation::new(ctx, scene)?,
                panel: SmokePanel::default(),
                drag: Drag::None,
                types: vec![],
                image: None,
                image_key: None,
            })),
        })
    }

    fn scene(&self) -> &Scene {
        match self {
            Sim::Liquid(s) => &s.scene,
            Sim::Smoke(m) => &m.sim.scene,
        }
    }
}

struct Mouse {
    pos: (f32, f32),
    left: bool,
    right: bool,
    shift: bool,
}

struct Viewer {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    ctx: Arc<GpuContext>,
    depth: wgpu::TextureView,
    renderer: SceneRenderer,
    pusher: Pusher,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    sim: Sim,
    scene: Scene,
    scene_path: PathBuf,
    camera: OrbitCamera,
    mouse: Mouse,
    controls: ControlsPanel,
    params: ParametersPanel,
    view: ViewPanel,
    stats: StatsPanel,
    /// The slice currently drawn and the cell types it was read with (for hover text).
    slice: Option<(SliceImage, FieldData)>,
    slice_key: Option<(SliceSpec, u64, bool)>,
    /// The flat layout's framing (slice axis and layer, viewport size) while it is on.
    flat_key: Option<(usize, u32, [u32; 6])>,
    /// The part of the window not under the side panels, in pixels [x0, y0, x1, y1].
    central: [f32; 4],
    /// Bumped whenever the simulation state changes, so slices are re-read only then.
    revision: u64,
    frames_done: u64,
    screenshot_path: Option<PathBuf>,
    screenshots_taken: u32,
    frames_recorded: u64,
    last_frame: std::time::Instant,
    opts: ViewerOptions,
}

/// The `.ron` files beside the current scene (or in `scenes/`), then the shipped scenes
/// that are not among them, by name (they load from the binary).
fn list_scenes(current: &Path) -> Vec<PathBuf> {
    let dir = current
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("scenes"));
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "ron"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    for s in &crate::scenes::SHIPPED {
        if !v.iter().any(|p| p.file_stem().is_some_and(|f| f == s.name)) {
            v.push(PathBuf::from(s.name));
        }
    }
    v
}

impl Viewer {
    fn new(event_loop: &ActiveEventLoop, opts: &ViewerOptions) -> Result<Self, ViewerError> {
        let attributes = Window::default_attributes().with_title("eddy");
        let attributes = match opts.size {
            Some([w, h]) => attributes.with_inner_size(winit::dpi::PhysicalSize::new(w, h)),
            None => attributes.with_inner_size(winit::dpi::LogicalSize::new(1280, 800)),
        };
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| ViewerError::Window(e.to_string()))?,
        );
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = crate::gpu::default_backends();
        let instance = wgpu::Instance::new(desc);
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| ViewerError::Window(e.to_string()))?;
        let ctx = Arc::new(GpuContext::with_instance(instance, Some(&surface))?);
        let size = window.inner_size();
        let caps = surface.get_capabilities(&ctx.adapter);
        let mut config = surface
            .get_default_config(&ctx.adapter, size.width.max(1), size.height.max(1))
            .ok_or_else(|| {
                ViewerError::Window(format!(
                    "adapter {} cannot present to this window",
                    ctx.info.name
                ))
            })?;
        // egui blends in gamma space and wants a non-sRGB target; the 3D scene renders
        // through an sRGB view of the same texture so its lighting stays linear.
        if let Some(f) = caps
            .formats
            .iter()
            .find(|f| !f.is_srgb() && f.add_srgb_suffix() != **f)
        {
            config.format = *f;
        }
        let scene_format = config.format.add_srgb_suffix();
        config.view_formats = vec![scene_format];
        // Screenshots copy straight from the surface when it allows it.
        if caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            config.usage |= wgpu::TextureUsages::COPY_SRC;
        }
        surface.configure(&ctx.device, &config);
        let depth = create_depth(&ctx.device, config.width, config.height);
        let renderer = SceneRenderer::new(&ctx.device, scene_format);
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx,
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            None,
        );
        let egui_renderer = egui_wgpu::Renderer::new(
            &ctx.device,
            config.format,
            egui_wgpu::RendererOptions::default(),
        );

        // A broken scene file keeps the viewer open on the built-in dam break, with the error shown.
        let (scene, error) = match Scene::load(&opts.scene) {
            Ok(s) => (s, None),
            Err(e) => {
                eprintln!("error: {e}");
                (StandardProblem::DamBreak.scene(32), Some(e.to_string()))
            }
        };
        let mut sim = Sim::new(ctx.clone(), &scene)?;
        if let (Sim::Smoke(m), Some(f)) = (&mut sim, opts.smoke_view) {
            m.panel.field = f;
        }
        let mut camera = OrbitCamera::default();
        frame_camera(&mut camera, &scene);
        let mut v = Self {
            controls: ControlsPanel {
                playing: true,
                stop_after: Stage::Advect,
                scenes: list_scenes(&opts.scene),
                current: opts.scene.clone(),
                error,
                actions: vec![],
                smoke: scene.kind == SceneKind::Smoke,
            },
            params: ParametersPanel {
                edit: scene.clone(),
                message: None,
                actions: vec![],
            },
            view: ViewPanel {
                field: opts.field,
                mg_levels: vec![],
                note: None,
                axis: opts.axis.min(2),
                index: opts.slice.unwrap_or(
                    [scene.resolution.0, scene.resolution.1, scene.resolution.2][opts.axis.min(2)]
                        / 2,
                ),
                max_index: [scene.resolution.0, scene.resolution.1, scene.resolution.2],
                auto_range: true,
                lo: -1.0,
                hi: 1.0,
                arrows: false,
                flat: opts.flat,
                particles: crate::render::ParticleStyle {
                    radius: (scene.h() * 0.3) as f32,
                    mode: opts.render,
                    surface: crate::render::surface::SurfaceStyle::for_spacing(
                        (scene.h() / (scene.particles_per_cell.max(1) as f64).cbrt()) as f32,
                    ),
                    ..Default::default()
                },
                auto_particle_range: true,
                hover: None,
                legend: None,
            },
            stats: StatsPanel {
                adapter: ctx.describe(),
                timestamps: ctx.timestamps,
                ..Default::default()
            },
            window,
            surface,
            config,
            depth,
            renderer,
            pusher: Pusher::new(&ctx.device),
            egui_state,
            egui_renderer,
            sim,
            scene,
            scene_path: opts.scene.clone(),
            camera,
            mouse: Mouse {
                pos: (0.0, 0.0),
                left: false,
                right: false,
                shift: false,
            },
            slice: None,
            slice_key: None,
            flat_key: None,
            central: [0.0, 0.0, size.width as f32, size.height as f32],
            revision: 0,
            frames_done: 0,
            screenshot_path: None,
            screenshots_taken: 0,
            frames_recorded: 0,
            last_frame: std::time::Instant::now(),
            opts: opts.clone(),
            ctx,
        };
        v.bind_scene();
        if let Some([yaw, pitch, distance]) = opts.camera {
            v.camera.yaw = yaw.to_radians();
            v.camera.pitch = pitch.to_radians();
            v.camera.distance = distance;
        }
        Ok(v)
    }

    fn bind_scene(&mut self) {
        match &self.sim {
            Sim::Liquid(sim) => {
                self.renderer.bind_particles(&self.ctx.device, sim);
                self.stats.particles = sim.particles.count;
                self.controls.smoke = false;
                self.stats.smoke = false;
            }
            Sim::Smoke(m) => {
                self.renderer.clear_particles();
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, None);
                self.stats.particles = m.sim.tracers.count;
                self.controls.smoke = true;
                self.stats.smoke = true;
                frame_camera(&mut self.camera, &self.scene);
            }
        }
        self.slice = None;
        self.renderer
            .set_lines(&self.ctx.device, &scene_lines(&self.scene));
        self.slice_key = None;
        let r = self.scene.resolution;
        self.view.max_index = [r.0, r.1, r.2];
    }

    /// Replaces the simulation with a fresh one of `scene` (keeps the old one on error).
    fn reset_to(&mut self, scene: Scene) -> Result<(), ViewerError> {
        match Sim::new(self.ctx.clone(), &scene) {
            Ok(sim) => {
                self.sim = sim;
                self.scene = scene;
                self.params.edit = self.scene.clone();
                self.revision += 1;
                self.bind_scene();
                Ok(())
            }
            Err(e @ SimError::TooLarge { .. }) | Err(e @ SimError::Unsupported(_)) => {
                self.controls.error = Some(e.to_string());
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn apply_actions(&mut self) -> Result<(), ViewerError> {
        let mut actions = std::mem::take(&mut self.controls.actions);
        actions.append(&mut self.params.actions);
        for a in actions {
            match a {
                Action::Step => self.step()?,
                Action::Reset => {
                    let s = self.params.edit.clone();
                    match s.validate() {
                        Ok(()) => self.reset_to(s)?,
                        Err(m) => self.params.message = Some(m),
                    }
                }
                Action::FrameDomain => {
                    frame_camera(&mut self.camera, &self.scene);
                    self.flat_key = None;
                }
                Action::Screenshot => {
                    self.screenshots_taken += 1;
                    self.screenshot_path = Some(PathBuf::from(format!(
                        "eddy_screenshot_{:03}.png",
                        self.screenshots_taken
                    )));
                }
                Action::LoadScene(p) => match Scene::load(&p) {
                    Ok(s) => {
                        self.controls.error = None;
                        self.controls.current = p.clone();
                        self.scene_path = p;
                        self.reset_to(s)?;
                    }
                    Err(e) => self.controls.error = Some(e.to_string()),
                },
                Action::ApplyParameters => match match &mut self.sim {
                    Sim::Liquid(s) => s.apply_live_settings(&self.params.edit),
                    Sim::Smoke(m) => m.sim.apply_live_settings(&self.params.edit),
                } {
                    Ok(()) => {
                        self.scene = self.sim.scene().clone();
                        self.params.message = None;
                    }
                    Err(m) => self.params.message = Some(m),
                },
            }
        }
        Ok(())
    }

    /// One frame of simulation, or one substep up to the chosen stage.
    fn step(&mut self) -> Result<(), ViewerError> {
        let sim = match &mut self.sim {
            Sim::Liquid(sim) => sim,
            Sim::Smoke(m) => {
                step_smoke(m, &mut self.stats, &mut self.controls.playing)?;
                self.revision += 1;
                self.frames_done += 1;
                return Ok(());
            }
        };
        if self.controls.stop_after == Stage::Advect {
            let st = sim.step_frame()?;
            self.stats
                .frame_simulated(st.substeps, std::time::Instant::now());
            self.stats.fluid_cells = st.fluid_cells;
            self.stats.iterations = st.pcg_iterations;
            self.stats.residual = st.pcg_residual;
        } else {
            let dt = sim.cfl_dt().min(self.scene.frame_dt);
            let r = sim.substep(dt, self.controls.stop_after)?;
            self.stats.frame_simulated(1, std::time::Instant::now());
            self.stats.fluid_cells = r.fluid_cells;
            if let Some(s) = &r.solve {
                self.stats.iterations = s.iterations;
                self.stats.residual = s.residual;
            }
            self.controls.playing = false;
        }
        self.stats.sim_time = sim.time;
        self.stats.stage_ms = sim.last_timing.stages.clone();
        self.stats.history = sim
            .last_solve
            .as_ref()
            .map(|s| s.history.clone())
            .unwrap_or_default();
        if self.view.auto_particle_range {
            self.view.particles.lo = 0.0;
            self.view.particles.hi = sim.max_speed.max(0.1);
        }
        self.revision += 1;
        self.frames_done += 1;
        Ok(())
    }

    fn update_slice(&mut self) -> Result<(), ViewerError> {
        let sim = match &mut self.sim {
            Sim::Liquid(sim) => {
                self.view.mg_levels = sim.mg_levels();
                sim
            }
            Sim::Smoke(m) => {
                m.panel.mg_levels = m.sim.mg_levels();
                if m.image_key == Some((SmokeViewKey::of(&m.panel), self.revision)) {
                    return Ok(());
                }
                let (img, types) = match smoke::build_image(&m.sim, &m.panel) {
                    // Levels come and go with the preconditioner and the grid: say why and
                    // show the dye rather than close the viewer.
                    Err(SimError::Unsupported(why))
                        if matches!(m.panel.field, smoke::SmokeField::Mg(_)) =>
                    {
                        log::warn!("{why}");
                        m.panel.note = Some(why);
                        m.panel.field = smoke::SmokeField::Dye;
                        smoke::build_image(&m.sim, &m.panel)?
                    }
                    r => r?,
                };
                let p = &m.panel;
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, Some(&img));
                let mut lines = scene_lines(&self.scene);
                if p.trails {
                    lines.extend(smoke::trail_lines(&m.sim)?);
                }
                self.renderer.set_lines(&self.ctx.device, &lines);
                m.panel.legend = (p.field != smoke::SmokeField::Dye)
                    .then(|| (img.scale, p.field.label().to_string()));
                m.image = Some(img);
                m.types = types;
                m.image_key = Some((SmokeViewKey::of(&m.panel), self.revision));
                return Ok(());
            }
        };
        let Some(field) = self.view.field else {
            if self.slice.take().is_some() {
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, None);
                self.renderer
                    .set_lines(&self.ctx.device, &scene_lines(&self.scene));
            }
            self.view.legend = None;
            self.slice_key = None;
            return Ok(());
        };
        let spec = SliceSpec {
            field,
            axis: self.view.axis,
            index: self.view.index,
            range: self.view.range(),
        };
        let key = (spec, self.revision, self.view.arrows);
        if self.slice_key == Some(key) {
            return Ok(());
        }
        let data = match sim.read_field(field) {
            // Levels come and go with the preconditioner and the grid: say why and show no
            // slice rather than close the viewer.
            Err(SimError::Unsupported(why)) if matches!(field, Field::Mg(_)) => {
                log::warn!("{why}");
                self.view.note = Some(why);
                self.view.field = None;
                return self.update_slice();
            }
            r => r?,
        };
        let types = sim.read_field(field.cell_types())?;
        let img = SliceImage::build(&data, self.scene.h() as f32, spec);
        self.renderer
            .set_slice(&self.ctx.device, &self.ctx.queue, Some(&img));
        let mut lines = scene_lines(&self.scene);
        if self.view.arrows {
            let (u, v, w) = (
                sim.read_field(Field::U)?,
                sim.read_field(Field::V)?,
                sim.read_field(Field::W)?,
            );
            // Arrows sit on a layer of the simulation grid: on a coarse level, the middle
            // one of the level's layer.
            let s = data.spacing[spec.axis];
            let idx = img.spec.index * s + s / 2;
            lines.extend(velocity_arrows(
                &u,
                &v,
                &w,
                self.scene.h() as f32,
                spec.axis,
                idx,
                self.scene.h() as f32 * 1.5,
            ));
        }
        self.renderer.set_lines(&self.ctx.device, &lines);
        self.view.legend = Some((img.scale, field.label().to_string()));
        self.slice = Some((img, types));
        self.slice_key = Some(key);
        Ok(())
    }

    /// The flat layout: while on (liquid with a shown slice), the camera looks along the
    /// slice's axis and is framed on it whenever the axis, layer, window size or side
    /// panels change;
    /// when turned off, the orbit camera comes back.
    fn update_layout(&mut self) {
        let slice = match (&self.sim, self.view.flat, &self.slice) {
            (Sim::Liquid(_), true, Some((img, _))) => img,
            _ => {
                if self.flat_key.take().is_some() || self.camera.flat.is_some() {
                    self.camera.flat = None;
                    frame_camera(&mut self.camera, &self.scene);
                }
                return;
            }
        };
        let (w, h) = (self.config.width, self.config.height);
        let c = self.central.map(|v| v.round() as u32);
        let key = (
            slice.spec.axis,
            slice.spec.index,
            [w, h, c[0], c[1], c[2], c[3]],
        );
        if self.flat_key == Some(key) {
            return;
        }
        let (centre, extent) = slice.centre_and_extent();
        // Leave the bottom of the view to the legend overlay.
        let mut rect = self.central;
        rect[3] = (rect[3] - LEGEND_OVERLAY_PX).max(rect[1] + 1.0);
        self.camera
            .frame_flat(slice.spec.axis, centre, extent, rect, w as f32, h as f32);
        self.flat_key = Some(key);
    }

    fn hover_text(&self) -> Option<String> {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        if let Sim::Smoke(m) = &self.sim {
            let img = m.image.as_ref()?;
            return smoke::hover_text(img, &m.types, o, d, &m.panel.field.label());
        }
        let (img, types) = self.slice.as_ref()?;
        let (c, value) = img.pick(o, d)?;
        let n = types.dims;
        let cell = [c[0].min(n[0] - 1), c[1].min(n[1] - 1), c[2].min(n[2] - 1)];
        let t = types.get(cell[0], cell[1], cell[2]) as u32;
        let tname = ["AIR", "FLUID", "SOLID"]
            .get(t as usize)
            .copied()
            .unwrap_or("?");
        Some(format!(
            "{} at ({}, {}, {}): {:.6e}\ncell ({}, {}, {}) is {tname}",
            img.spec.field.label(),
            c[0],
            c[1],
            c[2],
            value,
            cell[0],
            cell[1],
            cell[2]
        ))
    }

    fn handle(
        &mut self,
        event_loop: &ActiveEventLoop,
        event: WindowEvent,
    ) -> Result<(), ViewerError> {
        let response = self.egui_state.on_window_event(&self.window, &event);
        let egui_wants = self.egui_state.egui_ctx().egui_wants_pointer_input();
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                self.config.width = size.width.max(1);
                self.config.height = size.height.max(1);
                self.surface.configure(&self.ctx.device, &self.config);
                self.depth = create_depth(&self.ctx.device, self.config.width, self.config.height);
            }
            WindowEvent::ModifiersChanged(m) => self.mouse.shift = m.state().shift_key(),
            WindowEvent::KeyboardInput { event, .. }
                if !response.consumed && event.state == ElementState::Pressed =>
            {
                match event.logical_key {
                    Key::Named(NamedKey::Space) => self.controls.playing = !self.controls.playing,
                    Key::Named(NamedKey::Escape) => event_loop.exit(),
                    Key::Character(c) => match c.as_str() {
                        "f" | "F" => self.controls.actions.push(Action::FrameDomain),
                        "p" | "P" => self.controls.actions.push(Action::Screenshot),
                        "n" | "N" => {
                            self.controls.playing = false;
                            self.controls.actions.push(Action::Step);
                        }
                        "r" | "R" => self.controls.actions.push(Action::Reset),
                        _ => {}
                    },
                    _ => {}
                }
            }
            WindowEvent::MouseInput { state, button, .. } if self.is_smoke() => {
                let down = state == ElementState::Pressed && !egui_wants;
                self.smoke_button(button, down);
            }
            WindowEvent::CursorMoved { position, .. } if self.is_smoke() => {
                let (x, y) = (position.x as f32, position.y as f32);
                let (dx, dy) = (x - self.mouse.pos.0, y - self.mouse.pos.1);
                self.mouse.pos = (x, y);
                if self.mouse.right {
                    self.camera.pan(dx, dy, self.config.height as f32);
                } else {
                    self.smoke_move();
                }
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let down = state == ElementState::Pressed && !egui_wants;
                match button {
                    MouseButton::Left => self.mouse.left = down,
                    MouseButton::Right | MouseButton::Middle => self.mouse.right = down,
                    _ => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                let (dx, dy) = (x - self.mouse.pos.0, y - self.mouse.pos.1);
                self.mouse.pos = (x, y);
                if self.mouse.left && self.mouse.shift {
                    self.push(dx, dy);
                } else if self.mouse.left && self.camera.flat.is_some() {
                    self.camera.pan(dx, dy, self.config.height as f32);
                } else if self.mouse.left {
                    self.camera.orbit(dx, dy);
                } else if self.mouse.right {
                    self.camera.pan(dx, dy, self.config.height as f32);
                }
            }
            WindowEvent::MouseWheel { delta, .. } if !egui_wants => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.camera.zoom(steps);
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop)?,
            _ => {}
        }
        Ok(())
    }

    /// Shift-drag: kick the particles along the ray under the cursor in the drag direction.
    fn push(&mut self, dx: f32, dy: f32) {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        let (o0, d0) = self
            .camera
            .ray(self.mouse.pos.0 - dx, self.mouse.pos.1 - dy, w, h);
        // The drag's world-space direction at the target's distance.
        let at = |o: Vec3, d: Vec3| o + d * self.camera.distance;
        let drag = at(o, d) - at(o0, d0);
        let dv = drag * 20.0;
        let radius = (self.scene.h() * 3.0) as f32;
        if let Sim::Liquid(sim) = &self.sim {
            self.pusher
                .push(sim, o, d, radius, dv.clamp_length_max(10.0));
        }
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), ViewerError> {
        let frames_before = self.frames_done;
        self.apply_actions()?;
        let limit_reached = self.opts.frames.is_some_and(|n| self.frames_done >= n);
        if self.controls.playing && !limit_reached {
            self.step()?;
        }
        let record = self
            .opts
            .record
            .as_ref()
            .filter(|r| self.frames_done != frames_before && r.wants(self.frames_done))
            .map(|r| r.path(self.frames_recorded + 1));
        self.update_slice()?;
        self.update_layout();
        self.view.hover = self.hover_text();
        let now = std::time::Instant::now();
        self.stats.frame_ms = (now - self.last_frame).as_secs_f64() * 1e3;
        self.last_frame = now;

        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t)
            | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.ctx.device, &self.config);
                return Ok(());
            }
            _ => return Ok(()),
        };
        let view = frame.texture.create_view(&Default::default());
        let scene_view = frame.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(self.config.format.add_srgb_suffix()),
            ..Default::default()
        });
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let target = RenderTarget {
            color: &scene_view,
            depth: &self.depth,
            width: self.config.width,
            height: self.config.height,
        };
        self.renderer.render(
            &self.ctx.queue,
            &mut enc,
            &target,
            &self.camera,
            &self.view.particles,
        );

        let raw = self.egui_state.take_egui_input(&self.window);
        let egui_ctx = self.egui_state.egui_ctx().clone();
        let out = egui_ctx.run_ui(raw, |ui| {
            egui::Panel::left("controls")
                .default_size(300.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        self.controls.ui(ui);
                        ui.separator();
                        ui.collapsing("Parameters", |ui| self.params.ui(ui));
                        ui.separator();
                        match &mut self.sim {
                            Sim::Liquid(_) => {
                                ui.collapsing("View", |ui| self.view.ui(ui))
                                    .header_response
                                    .clicked();
                            }
                            Sim::Smoke(m) => {
                                egui::CollapsingHeader::new("Smoke")
                                    .default_open(true)
                                    .show(ui, |ui| m.panel.ui(ui));
                            }
                        }
                    });
                });
            egui::Panel::right("stats")
                .default_size(280.0)
                .show(ui, |ui| self.stats.ui(ui));
            let r = ui.available_rect_before_wrap();
            let ppp = ui.ctx().pixels_per_point();
            self.central = [r.min.x * ppp, r.min.y * ppp, r.max.x * ppp, r.max.y * ppp];
            let legend = match &self.sim {
                Sim::Liquid(_) => self.view.legend.as_ref(),
                Sim::Smoke(m) => m.panel.legend.as_ref(),
            };
            overlay::legend_overlay(ui.ctx(), legend, self.view.hover.as_deref());
        });
        self.egui_state
            .handle_platform_output(&self.window, out.platform_output);
        let ppp = out.pixels_per_point;
        let jobs = egui_ctx.tessellate(out.shapes, ppp);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [self.config.width, self.config.height],
            pixels_per_point: ppp,
        };
        let mut textures = out.textures_delta;
        for (id, deltas) in textures.set.drain() {
            for delta in deltas.iter() {
                self.egui_renderer
                    .update_texture(&self.ctx.device, &self.ctx.queue, id, delta);
            }
        }
        let extra = self.egui_renderer.update_buffers(
            &self.ctx.device,
            &self.ctx.queue,
            &mut enc,
            &jobs,
            &screen,
        );
        {
            let pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    resolve_target: None,
                    depth_slice: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Load,
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            let mut pass = pass.forget_lifetime();
            self.egui_renderer.render(&mut pass, &jobs, &screen);
        }
        for id in textures.free.drain() {
            self.egui_renderer.free_texture(&id);
        }
        self.ctx
            .queue
            .submit(extra.into_iter().chain([enc.finish()]));

        // --frames N --screenshot PATH: after N frames, save and exit.
        let auto_shot = limit_reached && self.opts.screenshot.is_some();
        if auto_shot {
            self.screenshot_path = self.opts.screenshot.take();
        }
        if let Some(path) = self.screenshot_path.take() {
            self.save_screenshot(&frame.texture, &path)?;
            say(&format!("screenshot saved to {}", path.display()));
        }
        if let Some(path) = record {
            let px = self.read_window(&frame.texture, &path)?;
            record::write_png(&path, &px, frame.texture.width(), frame.texture.height()).map_err(
                |e| ViewerError::Screenshot {
                    path: path.clone(),
                    message: e.to_string(),
                },
            )?;
            self.frames_recorded += 1;
        }
        self.ctx.queue.present(frame);
        if limit_reached && self.opts.screenshot.is_none() {
            event_loop.exit();
        }
        Ok(())
    }

    fn is_smoke(&self) -> bool {
        matches!(self.sim, Sim::Smoke(_))
    }

    /// The cursor's point on the smoke slice (m).
    fn smoke_cursor(&self) -> Option<[f64; 2]> {
        let (w, h) = (self.config.width as f32, self.config.height as f32);
        let (o, d) = self.camera.ray(self.mouse.pos.0, self.mouse.pos.1, w, h);
        smoke::plane_point(o, d, self.scene.h())
    }

    /// Smoke mode buttons: left and right start and end drags (the panel's tool decides
    /// what they do); middle drags pan the view.
    fn smoke_button(&mut self, button: MouseButton, down: bool) {
        let p = self.smoke_cursor();
        let Sim::Smoke(m) = &mut self.sim else { return };
        match button {
            MouseButton::Middle => self.mouse.right = down,
            MouseButton::Left | MouseButton::Right => {
                if down {
                    if let Some(p) = p {
                        m.drag =
                            smoke::start_drag(&m.sim, &m.panel, button == MouseButton::Left, p);
                        // A drag that starts on a rigid body holds it on a spring.
                        smoke::grab_body(&mut m.sim, &m.drag, p);
                    }
                } else {
                    smoke::end_drag(&mut m.sim, &mut m.drag);
                }
            }
            _ => {}
        }
    }

    fn smoke_move(&mut self) {
        let Some(p) = self.smoke_cursor() else { return };
        let frame_dt = self.scene.frame_dt;
        let Sim::Smoke(m) = &mut self.sim else { return };
        if smoke::apply_drag(&mut m.sim, &m.panel, &mut m.drag, p, frame_dt) {
            // Painted solids show at once, even when paused.
            m.image_key = None;
        }
    }

    /// The window's pixels (RGBA); `path` names the file they are for in errors.
    fn read_window(&self, texture: &wgpu::Texture, path: &Path) -> Result<Vec<u8>, ViewerError> {
        if !texture.usage().contains(wgpu::TextureUsages::COPY_SRC) {
            return Err(ViewerError::Screenshot {
                path: path.to_path_buf(),
                message: "this window surface cannot be read back (no COPY_SRC usage)".into(),
            });
        }
        Ok(read_texture(&self.ctx, texture)?)
    }

    fn save_screenshot(&self, texture: &wgpu::Texture, path: &Path) -> Result<(), ViewerError> {
        let err = |m: String| ViewerError::Screenshot {
            path: path.to_path_buf(),
            message: m,
        };
        let px = self.read_window(texture, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        image::save_buffer(
            path,
            &px,
            texture.width(),
            texture.height(),
            image::ColorType::Rgba8,
        )
        .map_err(|e| err(e.to_string()))
    }
}

/// Height kept free for the legend overlay when the flat layout frames a slice, pixels.
const LEGEND_OVERLAY_PX: f32 = 120.0;

/// Frames the domain: liquids from above at an angle, smoke slices head-on.
fn frame_camera(camera: &mut OrbitCamera, scene: &Scene) {
    let d = scene.domain_size();
    if scene.kind == SceneKind::Smoke {
        camera.yaw = 0.0;
        camera.pitch = 0.0;
        camera.frame(Vec3::new(d[0] as f32, d[1] as f32, 0.0));
        camera.target.z = (scene.h() * 0.5) as f32;
    } else {
        camera.frame(Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32));
    }
}

/// One frame of smoke (CFL substeps), or one substep up to the panel's stage.
fn step_smoke(
    m: &mut SmokeMode,
    stats: &mut panels::StatsPanel,
    playing: &mut bool,
) -> Result<(), SimError> {
    let sim = &mut m.sim;
    if m.panel.stop_after == SmokeStage::Tracers {
        let st = sim.step_frame()?;
        stats.frame_simulated(st.substeps, std::time::Instant::now());
        stats.fluid_cells = st.fluid_cells;
        stats.iterations = st.pcg_iterations;
        stats.residual = st.pcg_residual;
    } else {
        let dt = sim.cfl_dt().min(sim.scene.frame_dt);
        let r = sim.substep(dt, m.panel.stop_after)?;
        sim.last_timing = sim.last_substep_timing.clone();
        stats.frame_simulated(1, std::time::Instant::now());
        stats.fluid_cells = r.fluid_cells;
        if let Some(s) = &r.solve {
            stats.iterations = s.iterations;
            stats.residual = s.residual;
        }
        *playing = false;
    }
    stats.sim_time = sim.time;
    stats.stage_ms = sim.last_timing.stages.clone();
    stats.history = sim
        .last_solve
        .as_ref()
        .map(|s| s.history.clone())
        .unwrap_or_default();
    Ok(())
}
