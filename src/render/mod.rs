//! Drawing the simulation: particles as sphere impostors or a screen-space liquid surface,
//! slices of grid fields, the domain box and solids, velocity arrows. Everything renders
//! into any colour + depth target, so the viewer's window and offscreen tests share one
//! code path.
//!
//! One file per pipeline (`particles`, `bodies`, `lines`, `slice`, `surface`, each with its
//! `src/render/*.wgsl`); this file holds the `SceneRenderer` that draws them together
//! and the helpers they share.

pub mod bodies;
pub mod camera;
pub mod colormap;
pub mod lines;
pub mod particles;
pub mod push;
pub mod slice;
pub mod smoke;
pub mod surface;
pub mod target;

pub use lines::LineVertex;
pub use particles::{ParticleColor, ParticleStyle, SliceOcclusion};
pub use target::{
    cleared_depth, create_depth, read_texture, Offscreen, RenderTarget, DEPTH_FORMAT,
    OFFSCREEN_FORMAT,
};

use crate::gpu::shader_module;
use crate::sim::Simulation;
use bodies::BodyPipeline;
use bytemuck::{Pod, Zeroable};
use camera::OrbitCamera;
use glam::Mat4;
use lines::LinePipeline;
use particles::ParticlePipeline;
use slice::{SliceImage, SlicePipeline};
use surface::{Cut, RenderMode, SurfaceRenderer};

/// Mirror of `View` in lines.wgsl and render_slice.wgsl (layouts checked by
/// tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ViewProj {
    view_proj: [[f32; 4]; 4],
}
crate::wgsl_mirror!(lines_view_layout: ViewProj = "lines.wgsl" View {
    view_proj: view_proj,
});
crate::wgsl_mirror!(slice_view_layout: ViewProj = "slice.wgsl" View {
    view_proj: view_proj,
});

pub struct SceneRenderer {
    particles: ParticlePipeline,
    /// The rigid bodies as shaded solids (3D views only).
    bodies: BodyPipeline,
    /// The camera's `ViewProj`, shared by the line and slice pipelines.
    view_uniform: wgpu::Buffer,
    lines: LinePipeline,
    slice: SlicePipeline,
    surface: SurfaceRenderer,
}

fn depth_state(write: bool) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: DEPTH_FORMAT,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::LessEqual),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

/// A pipeline of the scene pass: `vs` and `fs` of `shader`, one bind group, drawing into
/// `format` without blending, depth-tested against the target's depth.
#[allow(clippy::too_many_arguments)]
fn scene_pipeline(
    device: &wgpu::Device,
    format: wgpu::TextureFormat,
    label: &str,
    shader: crate::gpu::Wgsl,
    layout: &crate::gpu::RenderLayout,
    buffers: &[Option<wgpu::VertexBufferLayout>],
    topology: wgpu::PrimitiveTopology,
    depth_write: bool,
) -> wgpu::RenderPipeline {
    let target = [Some(wgpu::ColorTargetState {
        format,
        blend: None,
        write_mask: wgpu::ColorWrites::ALL,
    })];
    let module = shader_module(device, shader);
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout.layout())],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(&pl),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology,
            ..Default::default()
        },
        depth_stencil: Some(depth_state(depth_write)),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &target,
        }),
        multiview_mask: None,
        cache: None,
    })
}

impl SceneRenderer {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let view_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Render::view_uniform"),
            size: std::mem::size_of::<ViewProj>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            particles: ParticlePipeline::new(device, format),
            bodies: BodyPipeline::new(device, format),
            lines: LinePipeline::new(device, format, &view_uniform),
            slice: SlicePipeline::new(device, format),
            view_uniform,
            surface: SurfaceRenderer::new(device, format),
        }
    }

    /// Draws no particles (the smoke mode has none).
    pub fn clear_particles(&mut self) {
        self.particles.clear();
        self.surface.clear_particles();
    }

    /// Points the particle renderer at a simulation's particle buffers.
    pub fn bind_particles(&mut self, device: &wgpu::Device, sim: &Simulation) {
        let p = &sim.mode.particles;
        let h = sim.scene.h() as f32;
        self.surface.bind_particles(
            &p.pos,
            p.count,
            h * h * h / sim.scene.particles_per_cell.max(1) as f32,
        );
        self.particles.bind(device, sim);
    }

    /// Uploads where the rigid bodies are (none with `None`), body `grabbed` highlighted.
    /// They are drawn as shaded solids in 3D views (not in the flat layout, and a smoke
    /// slice's bodies not at all: outlines show those).
    pub fn set_bodies(
        &mut self,
        device: &wgpu::Device,
        set: Option<&crate::sim::bodies::BodySet>,
        grabbed: Option<usize>,
    ) {
        self.bodies.set(device, set, grabbed);
    }

    /// Uploads the scene's mesh solids, shaded like the bodies in 3D views (a slice's show
    /// as outlines in the lines).
    pub fn set_scene_solids(&mut self, device: &wgpu::Device, scene: &crate::scene::Scene) {
        self.bodies.set_scene_solids(device, scene);
    }

    /// Puts the scene's keyframed mesh solids where their paths are at time `t`.
    pub fn set_solid_time(&mut self, device: &wgpu::Device, t: f64) {
        self.bodies.set_solid_time(device, t);
    }

    pub fn set_lines(&mut self, device: &wgpu::Device, lines: &[LineVertex]) {
        self.lines.set(device, lines);
    }

    /// Uploads a slice image (or hides the slice with `None`).
    pub fn set_slice(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        image: Option<&SliceImage>,
    ) {
        self.slice.set(device, queue, &self.view_uniform, image);
    }

    /// The shown slice's plane as seen from `eye`: normal towards the eye and offset.
    fn cut_plane(&self, eye: glam::Vec3) -> Option<[f32; 4]> {
        let (axis, at) = self.slice.plane()?;
        let sign = if eye[axis] >= at { 1.0 } else { -1.0 };
        let mut plane = [0.0; 4];
        plane[axis] = sign;
        plane[3] = sign * at;
        Some(plane)
    }

    /// Records the scene into `target`, clearing it first. A flat camera (a 2D slice
    /// layout) shows the slice, lines and arrows without the liquid.
    pub fn render(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &RenderTarget<'_>,
        camera: &OrbitCamera,
        style: &ParticleStyle,
    ) {
        let aspect = target.width as f32 / target.height.max(1) as f32;
        let view = camera.view();
        let proj = camera.proj(aspect);
        let vp: Mat4 = proj * view;
        let cut = self.cut_plane(camera.eye());
        let cut_mode = match cut {
            Some(_) => style.occlusion,
            None => SliceOcclusion::Show,
        };
        let plane = cut.unwrap_or([0.0; 4]);
        queue.write_buffer(
            &self.view_uniform,
            0,
            bytemuck::bytes_of(&ViewProj {
                view_proj: vp.to_cols_array_2d(),
            }),
        );
        self.particles
            .write(queue, view, proj, style, plane, cut_mode);
        self.bodies.write(queue, vp, plane, cut_mode.code());
        let solids = camera.flat.is_none();
        let liquid = style.visible && camera.flat.is_none() && self.particles.bound();
        if !liquid || style.mode == RenderMode::Particles {
            self.draw_scene(encoder, target.color, target.depth, liquid, solids);
            return;
        }
        self.surface.prepare(
            queue,
            target.width,
            target.height,
            view,
            proj,
            &style.surface,
            Cut {
                plane,
                on: cut_mode != SliceOcclusion::Show,
            },
        );
        // The scene behind the liquid goes to the surface's own texture (the shade pass
        // refracts it), with its depth in the target's depth buffer: the bodies' too, so
        // the shaded liquid is depth-tested against them (liquid behind a body is hidden,
        // liquid in front of it covers it).
        let scene = self.surface.scene_view().expect("prepared above");
        let both = style.mode == RenderMode::Both;
        self.draw_scene(encoder, scene, target.depth, both, solids);
        let bodies = &self.bodies;
        self.surface
            .record(encoder, target, |pass| bodies.draw_depth(pass));
    }

    /// The liquid surface's thickness image of the last render and its size (tests).
    pub fn read_thickness(
        &self,
        ctx: &crate::gpu::GpuContext,
    ) -> Result<(Vec<f32>, [u32; 2]), crate::gpu::GpuError> {
        self.surface.read_thickness(ctx)
    }

    /// The lines, the slice, (when `solids`) the bodies and (when `particles`) the particle
    /// impostors, into `color` and `depth`, both cleared first.
    fn draw_scene(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        particles: bool,
        solids: bool,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("Render::scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: color,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.02,
                        g: 0.02,
                        b: 0.03,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(cleared_depth(depth)),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.lines.draw(&mut pass);
        self.slice.draw(&mut pass);
        if solids {
            self.bodies.draw(&mut pass);
        }
        if particles {
            self.particles.draw(&mut pass);
        }
    }
}
