//! The desktop viewer: a winit window with egui panels over the 3D view, on the
//! simulation's own wgpu device.
//!
//! This file holds the viewer's state and how it changes (scenes, panel actions, steps);
//! `window` opens the window and draws each frame, `input` turns window events into
//! camera moves, pushes, body drags and smoke tools, and `slice_view` keeps the shown field slice
//! and the flat layout up to date.

mod input;
pub mod lab;
pub mod layout;
pub mod liquid;
pub mod overlay;
pub mod panels;
pub mod picking;
pub mod probes;
pub mod record;
mod slice_view;
pub mod smoke;
mod window;

pub use window::run;

use crate::gpu::{GpuContext, GpuError};
use crate::render::camera::OrbitCamera;
use crate::render::lines::scene_lines;
use crate::render::push::Pusher;
use crate::render::slice::{SliceImage, SliceSpec};
use crate::render::SceneRenderer;
use crate::scene::{Scene, SceneKind};
use crate::sim::{
    core::recorder::StageList,
    liquid::views::{Field, FieldData},
    runner::Mode,
    Runner, Sim, SimError,
};
use glam::Vec3;
use panels::{Action, ControlsPanel, ParametersPanel, StatsPanel, ViewPanel};
use smoke::{Drag, SmokePanel};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;
use winit::window::Window;

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
    /// A saved state or a checkpoint of `eddy run` to start from (its scene replaces
    /// `scene`); also where "Save state" writes.
    pub state: Option<PathBuf>,
    /// Open the solver lab after `frames` (`eddy view --lab`).
    pub lab: Option<lab::LabStart>,
    /// Most redraws a second while the simulation runs (0: no cap).
    pub max_fps: u32,
}

/// The running viewer's redraw cap when none is given.
pub const DEFAULT_MAX_FPS: u32 = 60;

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
            state: None,
            lab: None,
            max_fps: DEFAULT_MAX_FPS,
        }
    }
}

/// What the viewer keeps beside a smoke slice: its panel, the drag of its tools and the
/// image shown (unused while a liquid is shown).
struct SmokeUi {
    panel: SmokePanel,
    drag: Drag,
    /// Cell types read with the current image (for hover text).
    types: Vec<u32>,
    image: Option<crate::render::slice::SliceImage>,
    image_key: Option<(SmokeViewKey, u64)>,
}

impl Default for SmokeUi {
    fn default() -> Self {
        Self {
            panel: SmokePanel::default(),
            drag: Drag::None,
            types: vec![],
            image: None,
            image_key: None,
        }
    }
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

/// The lines drawn over every view: the domain, the scene's solids and the rigid bodies
/// where they are now.
fn overlay_lines(
    scene: &Scene,
    bodies: Option<&crate::sim::bodies::coupling::Bodies>,
) -> Vec<crate::render::lines::LineVertex> {
    let mut lines = scene_lines(scene);
    if let Some(b) = bodies {
        lines.extend(crate::render::lines::body_lines(&b.set));
    }
    lines
}

/// A body the mouse holds in the 3D view.
struct BodyGrab {
    index: usize,
    /// Where it was grabbed (world, m): the cursor moves the spring's end in the plane
    /// through this point facing the camera, so the body keeps its depth.
    point: glam::DVec3,
}

/// A simulation of `scene` for the viewer, keeping what its views and the solver lab
/// read.
fn viewer_sim(ctx: Arc<GpuContext>, scene: &Scene) -> Result<Sim, SimError> {
    let mut sim = Sim::new(ctx, scene)?;
    // A warm-started solve overwrites its initial guess; the viewer keeps a copy (one
    // GPU copy of p per solve) so the solver lab can freeze any substep's system.
    sim.keep_initial_guess(scene.pressure.warm_start);
    // The PCG vectors' views read them after a substep.
    sim.keep_solver_vectors();
    // The weight and divergence views read these.
    sim.keep_grid_views();
    if let Sim::Liquid(s) = &mut sim {
        // The particle colours by FLIP change read it.
        s.ensure_flip_delta();
    }
    Ok(sim)
}

/// The rigid bodies of a liquid scene, which the 3D view can grab.
fn liquid_bodies_mut(sim: &mut Sim) -> Option<&mut crate::sim::bodies::coupling::Bodies> {
    match sim {
        Sim::Liquid(s) => s.bodies.as_mut(),
        Sim::Smoke(_) => None,
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
    /// The smoke slice's panel and tools.
    smoke: SmokeUi,
    scene: Scene,
    scene_path: PathBuf,
    camera: OrbitCamera,
    mouse: Mouse,
    controls: ControlsPanel,
    params: ParametersPanel,
    view: ViewPanel,
    stats: StatsPanel,
    bodies: panels::BodiesPanel,
    /// The probes' series, plotted live.
    probes: probes::ProbesPanel,
    /// The solver lab.
    lab: lab::LabPanel,
    /// The body the mouse holds in the 3D view, if any.
    grab: Option<BodyGrab>,
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
    /// The side panels' state and the window size, and where they are remembered (None:
    /// headless, or `EDDY_VIEWER_SETTINGS=off`).
    layout: layout::Layout,
    layout_file: Option<PathBuf>,
    /// When egui asked to be drawn again (an animation, a tooltip's delay); None when it
    /// did not.
    egui_repaint_at: Option<std::time::Instant>,
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
    for s in &crate::scene::shipped::SHIPPED {
        if !v.iter().any(|p| p.file_stem().is_some_and(|f| f == s.name)) {
            v.push(PathBuf::from(s.name));
        }
    }
    v
}

impl Viewer {
    fn bind_scene(&mut self) {
        match &self.sim {
            Sim::Liquid(sim) => {
                self.renderer.bind_particles(&self.ctx.device, sim);
                self.stats.particles = sim.mode.particles.count;
                self.controls.smoke = false;
                self.stats.smoke = false;
            }
            Sim::Smoke(s) => {
                self.renderer.clear_particles();
                self.renderer
                    .set_slice(&self.ctx.device, &self.ctx.queue, None);
                self.stats.particles = s.mode.tracers.count;
                self.controls.smoke = true;
                self.stats.smoke = true;
                frame_camera(&mut self.camera, &self.scene);
            }
        }
        self.slice = None;
        self.grab = None;
        self.probes.reset(&self.scene);
        self.renderer.set_lines(
            &self.ctx.device,
            &overlay_lines(&self.scene, self.sim.bodies()),
        );
        self.update_solids();
        self.renderer
            .set_scene_solids(&self.ctx.device, &self.scene);
        self.slice_key = None;
        let r = self.scene.resolution;
        self.view.max_index = [r.0, r.1, r.2];
    }

    /// Shows `sim`, a simulation of `scene`, from now on.
    fn install(&mut self, sim: Sim, scene: Scene) {
        self.sim = sim;
        self.scene = scene;
        self.params.edit = self.scene.clone();
        self.revision += 1;
        self.bind_scene();
    }

    /// Replaces the simulation with a fresh one of `scene` (keeps the old one on error).
    fn reset_to(&mut self, scene: Scene) -> Result<(), ViewerError> {
        match viewer_sim(self.ctx.clone(), &scene) {
            Ok(sim) => {
                self.install(sim, scene);
                Ok(())
            }
            Err(e @ SimError::TooLarge { .. }) | Err(e @ SimError::Unsupported(_)) => {
                self.controls.error = Some(e.to_string());
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the simulation's state to the state file; the message says what happened.
    fn save_state(&mut self) -> Result<String, String> {
        let state = self
            .sim
            .save_state()
            .map_err(|e| format!("cannot save: {e}"))?;
        let path = PathBuf::from(&self.controls.state_path);
        let frame = state.frame;
        let bytes = crate::output::checkpoint::encode(&self.scene, &state);
        crate::output::write_atomically(&path, |w| std::io::Write::write_all(w, &bytes))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(format!(
            "saved frame {frame} to {} ({:.1} MB)",
            path.display(),
            bytes.len() as f64 / 1e6
        ))
    }

    /// Goes back to the state in the state file, with its scene (a fresh simulation of it,
    /// then the state); the simulation shown is kept when the file cannot be used.
    fn load_state(&mut self, pause: bool) -> Result<Result<String, String>, ViewerError> {
        let path = PathBuf::from(&self.controls.state_path);
        let c = match crate::output::checkpoint::read(&path) {
            Ok(c) => c,
            Err(e) => return Ok(Err(format!("cannot load: {e}"))),
        };
        let mut sim = match viewer_sim(self.ctx.clone(), &c.scene) {
            Ok(s) => s,
            Err(e @ SimError::TooLarge { .. }) | Err(e @ SimError::Unsupported(_)) => {
                return Ok(Err(format!("cannot load: {e}")))
            }
            Err(e) => return Err(e.into()),
        };
        if let Err(e) = sim.restore_state(&c.state) {
            return Ok(Err(format!("cannot load {}: {e}", path.display())));
        }
        // Paused, so the moment it returns to can be looked at.
        if pause {
            self.controls.playing = false;
        }
        self.install(sim, c.scene);
        Ok(Ok(format!(
            "loaded frame {} (t = {:.3} s) from {}",
            c.state.frame,
            c.state.time,
            path.display()
        )))
    }

    fn apply_actions(&mut self) -> Result<(), ViewerError> {
        self.apply_lab_actions()?;
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
                Action::SaveState => {
                    let r = self.save_state();
                    self.controls.state_message = Some(r.unwrap_or_else(|e| e));
                }
                Action::LoadState => {
                    let r = self.load_state(true)?;
                    self.controls.state_message = Some(r.unwrap_or_else(|e| e));
                }
                Action::ApplyParameters => match self.sim.apply_live_settings(&self.params.edit) {
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
        let full = match &mut self.sim {
            Sim::Liquid(sim) => {
                let before = self.stats.particles;
                let full = advance(
                    sim,
                    self.controls.stop_after,
                    &mut self.stats,
                    &mut self.probes,
                )?;
                // Inflow and outflow change the count: draw the particles there are now.
                if sim.mode.particles.count != before {
                    self.stats.particles = sim.mode.particles.count;
                    self.renderer.bind_particles(&self.ctx.device, sim);
                }
                if sim.mode.moving.is_some() {
                    self.renderer.set_solid_time(&self.ctx.device, sim.time);
                }
                if self.view.auto_particle_range {
                    self.view.particles.lo = 0.0;
                    self.view.particles.hi = sim.max_speed.max(0.1);
                }
                full
            }
            Sim::Smoke(s) => advance(
                s,
                self.smoke.panel.stop_after,
                &mut self.stats,
                &mut self.probes,
            )?,
        };
        if !full {
            self.controls.playing = false;
        }
        self.bodies_moved();
        self.revision += 1;
        self.frames_done += 1;
        Ok(())
    }

    /// Bodies moved: their solids and outlines follow. A shown slice (and every smoke
    /// view) rebuilds its lines with the bodies for the next revision; only the bare 3D
    /// view needs it here.
    fn bodies_moved(&mut self) {
        let bare = matches!(self.sim, Sim::Liquid(_)) && self.view.field.is_none();
        if let (true, Some(b)) = (bare, self.sim.bodies()) {
            let lines = overlay_lines(&self.scene, Some(b));
            self.renderer.set_lines(&self.ctx.device, &lines);
        }
        self.update_solids();
    }

    /// Uploads the liquid's bodies as shaded solids, the held one highlighted (a smoke
    /// slice's bodies show as outlines only).
    fn update_solids(&mut self) {
        let set = match &self.sim {
            Sim::Liquid(s) => s.bodies.as_ref().map(|b| &b.set),
            Sim::Smoke(_) => None,
        };
        let grabbed = self.grab.as_ref().map(|g| g.index);
        self.renderer.set_bodies(&self.ctx.device, set, grabbed);
    }
}

/// One frame (CFL substeps) of either mode, or one substep up to `stop_after` when that is
/// not the last stage. Returns whether a whole frame ran.
fn advance<M: Mode>(
    sim: &mut Runner<M>,
    stop_after: M::Stage,
    stats: &mut StatsPanel,
    probes: &mut probes::ProbesPanel,
) -> Result<bool, SimError> {
    let full = stop_after == M::Stage::last();
    let before = crate::gpu::Traffic::now();
    if full {
        let st = sim.step_frame()?;
        probes.push(st.frame, &st.probes);
        stats.frame_simulated(st.substeps, std::time::Instant::now());
        stats.fluid_cells = st.fluid_cells;
        stats.iterations = st.pcg_iterations;
        stats.residual = st.pcg_residual;
        stats.true_residual = sim.last_solve.as_ref().and_then(|s| s.true_residual);
    } else {
        let dt = sim.cfl_dt().min(sim.scene.frame_dt);
        // Stepping stage by stage, each substep is the frame a held body moves over.
        sim.begin_frame(dt);
        let r = sim.substep(dt, stop_after)?;
        // A partial substep is not timed: show no stale frame timings beside its fields.
        sim.last_timing = sim.last_substep_timing.clone();
        stats.frame_simulated(1, std::time::Instant::now());
        stats.fluid_cells = r.fluid_cells;
        if let Some(s) = &r.solve {
            stats.iterations = s.iterations;
            stats.residual = s.residual;
            stats.true_residual = s.true_residual;
        }
    }
    stats.traffic = crate::gpu::Traffic::now().since(before);
    stats.sim_time = sim.time;
    stats.stage_ms = sim.last_timing.stages.clone();
    stats.history = sim
        .last_solve
        .as_ref()
        .map(|s| s.history.clone())
        .unwrap_or_default();
    Ok(full)
}

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
