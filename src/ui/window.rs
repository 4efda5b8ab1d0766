//! The viewer's window: opening it with its surface and egui, and drawing each frame
//! (the 3D scene, the panels, screenshots and recorded frames).

use super::panels::{ControlsPanel, ParametersPanel, StatsPanel, ViewPanel};
use super::{
    frame_camera, list_scenes, overlay, record, Mouse, Sim, Viewer, ViewerError, ViewerOptions,
};
use crate::gpu::GpuContext;
use crate::render::camera::OrbitCamera;
use crate::render::push::Pusher;
use crate::render::{create_depth, read_texture, RenderTarget, SceneRenderer};
use crate::scene::{Scene, SceneKind, StandardProblem};
use crate::sim::Stage;
use std::path::Path;
use std::sync::Arc;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// Opens the viewer and runs until the window closes (or `frames` are done).
pub fn run(opts: ViewerOptions) -> Result<(), ViewerError> {
    if let Some(r) = &opts.record {
        r.prepare().map_err(ViewerError::Options)?;
    }
    let event_loop = EventLoop::new().map_err(|e| ViewerError::Window(e.to_string()))?;
    // Redraws are asked for (Viewer::next_redraw): none while paused and idle.
    event_loop.set_control_flow(ControlFlow::Wait);
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
        // Any input, a resize or an expose may change what the window shows.
        if !matches!(event, WindowEvent::RedrawRequested) {
            v.window.request_redraw();
        }
        match v.handle(event_loop, event) {
            Ok(()) => {}
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    /// Redraws only when something changed: the running simulation (at most `max_fps`),
    /// pending actions, egui's own repaint requests; input asks for one in `window_event`.
    /// Paused and idle, the viewer sleeps in the event loop.
    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(v) = &self.state else { return };
        let now = std::time::Instant::now();
        match v.next_redraw(now) {
            Some(at) if at <= now => {
                v.window.request_redraw();
                event_loop.set_control_flow(ControlFlow::Wait);
            }
            Some(at) => event_loop.set_control_flow(ControlFlow::WaitUntil(at)),
            None => event_loop.set_control_flow(ControlFlow::Wait),
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(v) = self.state.as_mut() {
            v.save_layout();
        }
    }

    fn new_events(&mut self, _event_loop: &ActiveEventLoop, cause: winit::event::StartCause) {
        if let (winit::event::StartCause::ResumeTimeReached { .. }, Some(v)) = (cause, &self.state)
        {
            v.window.request_redraw();
        }
    }
}

impl Viewer {
    fn new(event_loop: &ActiveEventLoop, opts: &ViewerOptions) -> Result<Self, ViewerError> {
        // An interactive session opens with the layout and window size the last one left.
        let interactive =
            opts.frames.is_none() && opts.screenshot.is_none() && opts.record.is_none();
        let layout_file = interactive.then(super::layout::settings_path).flatten();
        let layout = layout_file
            .as_deref()
            .map(super::layout::Layout::load)
            .unwrap_or_default();
        let (window, surface, ctx, config) = open_window(event_loop, opts, &layout)?;
        let size = window.inner_size();
        let depth = create_depth(&ctx.device, config.width, config.height);
        let renderer = SceneRenderer::new(&ctx.device, config.format.add_srgb_suffix());
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
        let sim = super::viewer_sim(ctx.clone(), &scene)?;
        let mut smoke = super::SmokeUi::default();
        if let Some(f) = opts.smoke_view {
            smoke.panel.field = f;
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
                state_path: "eddy_state.eddy".into(),
                state_message: None,
                max_fps: opts.max_fps,
            },
            params: ParametersPanel {
                edit: scene.clone(),
                message: None,
                actions: vec![],
            },
            view: initial_view(opts, &scene),
            bodies: Default::default(),
            probes: Default::default(),
            lab: Default::default(),
            grab: None,
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
            smoke,
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
            egui_repaint_at: None,
            layout,
            layout_file,
            opts: opts.clone(),
            ctx,
        };
        v.bind_scene();
        if let Some(p) = &opts.state {
            v.controls.state_path = p.display().to_string();
            match v.load_state(false)? {
                Ok(m) => say(&m),
                Err(m) => return Err(ViewerError::Options(m)),
            }
            frame_camera(&mut v.camera, &v.scene);
        }
        if let Some([yaw, pitch, distance]) = opts.camera {
            v.camera.yaw = yaw.to_radians();
            v.camera.pitch = pitch.to_radians();
            v.camera.distance = distance;
        }
        Ok(v)
    }

    /// Remembers the panels and the window size for the next interactive session (said on
    /// stderr when it cannot).
    fn save_layout(&mut self) {
        let Some(path) = &self.layout_file else {
            return;
        };
        let size = self.window.inner_size();
        self.layout.window = Some([size.width, size.height]);
        if let Err(e) = self.layout.save(path) {
            log::warn!("cannot remember the layout in {}: {e}", path.display());
        }
    }

    /// When the window should be drawn next: now, at a time, or (None) not until
    /// something happens. The running simulation redraws at most `max_fps` times a second;
    /// paused, only pending work (actions, the lab, a screenshot, `--frames`) or egui's
    /// own requests ask for a redraw.
    pub(super) fn next_redraw(&self, now: std::time::Instant) -> Option<std::time::Instant> {
        let limit_reached = self.opts.frames.is_some_and(|n| self.frames_done >= n);
        let pending = !self.controls.actions.is_empty()
            || !self.params.actions.is_empty()
            || !self.lab.actions.is_empty()
            || self.lab.settle > 0
            || self.screenshot_path.is_some()
            || (limit_reached && (self.opts.screenshot.is_some() || self.opts.lab.is_some()))
            || self.opts.lab.as_ref().is_some_and(|l| l.system.is_some());
        if pending {
            return Some(now);
        }
        if self.controls.playing && !limit_reached {
            // Headless runs (--frames) go as fast as they step.
            let cap = self.controls.max_fps;
            if cap == 0 || self.opts.frames.is_some() {
                return Some(now);
            }
            return Some(self.last_frame + std::time::Duration::from_secs_f64(1.0 / cap as f64));
        }
        if limit_reached && self.opts.screenshot.is_none() {
            // The redraw that exits.
            return Some(now);
        }
        self.egui_repaint_at
    }

    pub(super) fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), ViewerError> {
        let (limit_reached, record) = self.advance()?;

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
        let out = egui_ctx.run_ui(raw, |ui| self.panels_ui(ui));
        let extra = self.draw_egui(&egui_ctx, out, &mut enc, &view);
        self.ctx
            .queue
            .submit(extra.into_iter().chain([enc.finish()]));
        // Without a blocking read (a paused simulation reads nothing), wgpu frees what the
        // finished submissions held only when polled: poll without waiting each frame, or
        // every frame's transient buffers pile up while the viewer sits paused.
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);

        // --frames N --screenshot PATH: after N frames, save and exit.
        // A window egui opens this frame is laid out first and drawn from the next: the
        // lab's waits two frames for the screenshot.
        let settling = self.lab.settle > 0;
        self.lab.settle = self.lab.settle.saturating_sub(1);
        let auto_shot = limit_reached && !settling && self.opts.screenshot.is_some();
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
        if limit_reached && !settling && self.opts.screenshot.is_none() {
            event_loop.exit();
        }
        Ok(())
    }

    /// The simulation's side of a redraw: the panels' actions, the lab opened when due, a
    /// frame stepped while playing, the slice and the layout brought up to date. Returns
    /// whether `--frames` is reached and the recording's file for this frame, if any.
    fn advance(&mut self) -> Result<(bool, Option<std::path::PathBuf>), ViewerError> {
        let frames_before = self.frames_done;
        self.apply_actions()?;
        let limit_reached = self.opts.frames.is_some_and(|n| self.frames_done >= n);
        // The lab opens after --frames; on an exported system (--system) at once.
        let exported = self.opts.lab.as_ref().is_some_and(|l| l.system.is_some());
        if limit_reached || exported {
            if let Some(start) = self.opts.lab.take() {
                // A frozen solve is looked at paused; an exported system leaves the
                // simulation as it was.
                if limit_reached {
                    self.controls.playing = false;
                }
                self.start_lab(start)?;
            }
        }
        if self.controls.playing && !limit_reached {
            self.step()?;
        } else if let Some(b) = self.sim.bodies_mut() {
            // A body dragged while paused is placed, not swept through the fluid.
            b.set.restart_grab_motion();
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
        Ok((limit_reached, record))
    }

    /// The side panels, their toggles, the lab's windows and the legend; remembers the
    /// panels' widths and the part of the window left to the 3D view.
    fn panels_ui(&mut self, ui: &mut egui::Ui) {
        // Each side panel at most a quarter of the window: the 3D view keeps half.
        let fitted = self.layout.fitted(ui.max_rect().width());
        let max_w = super::layout::Layout::max_panel_width(ui.max_rect().width());
        let left = egui::Panel::left("controls")
            .resizable(true)
            .default_size(fitted.left_width)
            .size_range(super::layout::MIN_PANEL_WIDTH..=max_w)
            .show_collapsible(ui, &mut self.layout.left_open, |ui| {
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
                        Sim::Smoke(_) => {
                            egui::CollapsingHeader::new("Smoke")
                                .default_open(true)
                                .show(ui, |ui| self.smoke.panel.ui(ui));
                        }
                    }
                });
            });
        if let Some(r) = left.filter(|_| self.layout.left_open) {
            self.layout.left_width = r.response.rect.width();
        }
        let right = egui::Panel::right("stats")
            .resizable(true)
            .default_size(fitted.right_width)
            .size_range(super::layout::MIN_PANEL_WIDTH..=max_w)
            .show_collapsible(ui, &mut self.layout.right_open, |ui| {
                self.stats.ui(ui);
                if let Some(b) = self.sim.bodies() {
                    self.bodies.update(&b.set, self.sim.scene().h());
                    ui.separator();
                    egui::CollapsingHeader::new("Bodies")
                        .default_open(true)
                        .show(ui, |ui| self.bodies.ui(ui));
                }
                if !self.probes.is_empty() {
                    ui.separator();
                    egui::CollapsingHeader::new("Probes")
                        .default_open(true)
                        .show(ui, |ui| self.probes.ui(ui));
                }
                // The lab's own window holds it once a system is frozen.
                if self.lab.lab.is_none() {
                    ui.separator();
                    egui::CollapsingHeader::new("Solver lab").show(ui, |ui| self.lab.ui(ui));
                }
            });
        if let Some(r) = right.filter(|_| self.layout.right_open) {
            self.layout.right_width = r.response.rect.width();
        }
        // The panels' toggles at the top corners of the 3D view (also F1 and F2).
        let view = ui.available_rect_before_wrap();
        let (left_open, right_open) = (&mut self.layout.left_open, &mut self.layout.right_open);
        panel_toggle(
            ui,
            view.left_top(),
            egui::Align2::LEFT_TOP,
            left_open,
            "<<",
            ">> controls",
            "Controls panel (F1)",
        );
        panel_toggle(
            ui,
            view.right_top(),
            egui::Align2::RIGHT_TOP,
            right_open,
            ">>",
            "stats <<",
            "Stats panel (F2)",
        );
        if self.lab.lab.is_some() {
            egui::Window::new("Solver lab")
                .default_pos([310.0, 40.0])
                .default_width(560.0)
                .default_height(330.0)
                .vscroll(true)
                .show(ui.ctx(), |ui| self.lab.ui(ui));
        }
        if self.lab.race.is_some() {
            egui::Window::new("Preconditioner race")
                .default_pos([310.0, 420.0])
                .default_width(560.0)
                .vscroll(true)
                .show(ui.ctx(), |ui| self.lab.race_ui(ui));
        }
        let r = ui.available_rect_before_wrap();
        let ppp = ui.ctx().pixels_per_point();
        self.central = [r.min.x * ppp, r.min.y * ppp, r.max.x * ppp, r.max.y * ppp];
        let legend = match &self.sim {
            Sim::Liquid(_) => self.view.legend.as_ref(),
            Sim::Smoke(_) => self.smoke.panel.legend.as_ref(),
        };
        overlay::legend_overlay(ui.ctx(), legend, self.view.hover.as_deref());
    }

    /// Hands egui's output to the window, uploads its textures and buffers and records
    /// its pass over the scene; returns the command buffers its callbacks made.
    fn draw_egui(
        &mut self,
        egui_ctx: &egui::Context,
        out: egui::FullOutput,
        enc: &mut wgpu::CommandEncoder,
        view: &wgpu::TextureView,
    ) -> Vec<wgpu::CommandBuffer> {
        self.egui_state
            .handle_platform_output(&self.window, out.platform_output);
        let delay = out
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(std::time::Duration::MAX, |v| v.repaint_delay);
        self.egui_repaint_at = std::time::Instant::now().checked_add(delay);
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
            enc,
            &jobs,
            &screen,
        );
        {
            let pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
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
        extra
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

/// A small button at `corner` of the 3D view (`pivot` its side) that folds or unfolds a
/// side panel: `open_label` while it is open, `closed_label` while it is folded.
fn panel_toggle(
    ui: &egui::Ui,
    corner: egui::Pos2,
    pivot: egui::Align2,
    open: &mut bool,
    open_label: &str,
    closed_label: &str,
    hint: &str,
) {
    let inset = egui::vec2(
        if pivot == egui::Align2::LEFT_TOP {
            4.0
        } else {
            -4.0
        },
        4.0,
    );
    egui::Area::new(egui::Id::unique(closed_label))
        .pivot(pivot)
        .fixed_pos(corner + inset)
        .show(ui.ctx(), |ui| {
            let label = if *open { open_label } else { closed_label };
            let button = egui::Button::new(label)
                .small()
                .wrap_mode(egui::TextWrapMode::Extend);
            if ui.add(button).on_hover_text(hint).clicked() {
                *open = !*open;
            }
        });
}

/// The window (at the size asked for, or the last session's), a surface on it and the
/// GPU context that presents to it, configured for egui (a non-sRGB target the 3D scene
/// draws into through an sRGB view).
fn open_window(
    event_loop: &ActiveEventLoop,
    opts: &ViewerOptions,
    layout: &super::layout::Layout,
) -> Result<
    (
        Arc<Window>,
        wgpu::Surface<'static>,
        Arc<GpuContext>,
        wgpu::SurfaceConfiguration,
    ),
    ViewerError,
> {
    let attributes = Window::default_attributes().with_title("eddy");
    let attributes = match (opts.size, layout.window) {
        (Some([w, h]), _) | (None, Some([w, h])) => {
            attributes.with_inner_size(winit::dpi::PhysicalSize::new(w, h))
        }
        (None, None) => attributes.with_inner_size(winit::dpi::LogicalSize::new(1280, 800)),
    };
    let window = Arc::new(
        event_loop
            .create_window(attributes)
            .map_err(|e| ViewerError::Window(e.to_string()))?,
    );
    let instance = wgpu::Instance::new(crate::gpu::instance_descriptor());
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
    Ok((window, surface, ctx, config))
}

/// The view panel as the options open it: the field and slice asked for, the particles
/// drawn at a third of a cell.
fn initial_view(opts: &ViewerOptions, scene: &Scene) -> ViewPanel {
    ViewPanel {
        field: opts.field,
        mg_levels: vec![],
        note: None,
        axis: opts.axis.min(2),
        index: opts.slice.unwrap_or(
            [scene.resolution.0, scene.resolution.1, scene.resolution.2][opts.axis.min(2)] / 2,
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
    }
}
