//! Drawing the simulation: particles as sphere impostors or a screen-space liquid surface,
//! slices of grid fields, the domain box and solids, velocity arrows. Everything renders
//! into any colour + depth target, so the viewer's window and offscreen tests share one
//! code path.

pub mod camera;
pub mod colormap;
pub mod lines;
pub mod push;
pub mod slice;
pub mod surface;

use crate::gpu::constants::{
    PARTICLE_COLOR_FLIP_DELTA, PARTICLE_COLOR_SPEED, SLICE_CUT_DRAW, SLICE_CUT_FADE, SLICE_CUT_HIDE,
};
use crate::gpu::shader_module;
use crate::sim::Simulation;
use bytemuck::{Pod, Zeroable};
use camera::OrbitCamera;
use glam::Mat4;
use slice::SliceImage;
use surface::{Cut, RenderMode, SurfaceRenderer, SurfaceStyle};
use wgpu::util::DeviceExt;

pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// What colours the particles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParticleColor {
    Speed,
    FlipDelta,
}

/// What happens to the liquid between the camera and a shown slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceOcclusion {
    /// Drawn as usual (the slice may be hidden behind it).
    Show,
    /// Particles thinned to one pixel in four, so the slice reads through them; the
    /// surface is cut away.
    Fade,
    /// Left out: the slice is a clean cross-section.
    Hide,
}

impl SliceOcclusion {
    fn code(self) -> u32 {
        match self {
            SliceOcclusion::Show => SLICE_CUT_DRAW,
            SliceOcclusion::Fade => SLICE_CUT_FADE,
            SliceOcclusion::Hide => SLICE_CUT_HIDE,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParticleStyle {
    /// Whether the liquid (particles or surface) is drawn at all.
    pub visible: bool,
    /// Sphere radius in metres.
    pub radius: f32,
    pub color: ParticleColor,
    /// Colour range of the chosen quantity (m/s).
    pub lo: f32,
    pub hi: f32,
    /// Particles, surface or both.
    pub mode: RenderMode,
    pub surface: SurfaceStyle,
    /// The liquid in front of a shown slice.
    pub occlusion: SliceOcclusion,
}

impl Default for ParticleStyle {
    fn default() -> Self {
        Self {
            visible: true,
            radius: 0.008,
            color: ParticleColor::Speed,
            lo: 0.0,
            hi: 2.0,
            mode: RenderMode::Particles,
            surface: SurfaceStyle::default(),
            occlusion: SliceOcclusion::Fade,
        }
    }
}

/// Mirror of `View` in shaders/render_particles.wgsl (layout checked by tests/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ParticleUniform {
    view: [[f32; 4]; 4],
    proj: [[f32; 4]; 4],
    radius: f32,
    lo: f32,
    hi: f32,
    mode: u32,
    cut_plane: [f32; 4],
    cut: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<ParticleUniform>() == 176);
crate::wgsl_mirror!(particle_uniform_layout: ParticleUniform = "render_particles.wgsl" View {
    view: view,
    proj: proj,
    radius: radius,
    color_lo: lo,
    color_hi: hi,
    mode: mode,
    cut_plane: cut_plane,
    cut: cut,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// Mirror of `SliceStyle` in shaders/render_slice.wgsl (layout checked by tests/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SliceUniform {
    bilinear: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<SliceUniform>() == 16);
crate::wgsl_mirror!(slice_uniform_layout: SliceUniform = "render_slice.wgsl" SliceStyle {
    bilinear: bilinear,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// Mirror of `View` in shaders/render_lines.wgsl and render_slice.wgsl (layouts checked by
/// tests/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ViewProj {
    view_proj: [[f32; 4]; 4],
}
crate::wgsl_mirror!(lines_view_layout: ViewProj = "render_lines.wgsl" View {
    view_proj: view_proj,
});
crate::wgsl_mirror!(slice_view_layout: ViewProj = "render_slice.wgsl" View {
    view_proj: view_proj,
});

/// A vertex of a line segment (position, colour).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct LineVertex {
    pub pos: [f32; 3],
    pub color: [f32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SliceVertex {
    pos: [f32; 3],
    uv: [f32; 2],
}

/// Colour and depth views of a render target and its size.
pub struct RenderTarget<'a> {
    pub color: &'a wgpu::TextureView,
    pub depth: &'a wgpu::TextureView,
    pub width: u32,
    pub height: u32,
}

pub fn create_depth(device: &wgpu::Device, width: u32, height: u32) -> wgpu::TextureView {
    device
        .create_texture(&wgpu::TextureDescriptor {
            label: Some("Render::depth"),
            size: wgpu::Extent3d {
                width: width.max(1),
                height: height.max(1),
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        })
        .create_view(&Default::default())
}

pub struct SceneRenderer {
    particle_pipeline: wgpu::RenderPipeline,
    particle_layout: wgpu::BindGroupLayout,
    particle_uniform: wgpu::Buffer,
    particle_group: Option<(wgpu::BindGroup, u32)>,
    line_pipeline: wgpu::RenderPipeline,
    view_uniform: wgpu::Buffer,
    line_group: wgpu::BindGroup,
    lines: Option<(wgpu::Buffer, u32)>,
    slice_pipeline: wgpu::RenderPipeline,
    slice_layout: wgpu::BindGroupLayout,
    slice: Option<(wgpu::Buffer, wgpu::BindGroup)>,
    /// The shown slice's plane: normal axis and position along it, m.
    slice_plane: Option<(usize, f32)>,
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

fn uniform_entry(binding: u32, vis: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: vis,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

impl SceneRenderer {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let vf = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT;
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let particle_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("Render::particles"),
            entries: &[uniform_entry(0, vf), storage(1), storage(2), storage(3)],
        });
        let target = [Some(wgpu::ColorTargetState {
            format,
            blend: None,
            write_mask: wgpu::ColorWrites::ALL,
        })];
        let pipeline = |label: &str,
                        shader: &str,
                        layout: &wgpu::BindGroupLayout,
                        buffers: &[Option<wgpu::VertexBufferLayout>],
                        topology: wgpu::PrimitiveTopology,
                        depth_write: bool| {
            let module = shader_module(device, shader);
            let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(layout)],
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
        };
        let particle_pipeline = pipeline(
            "Render::particles",
            "render_particles.wgsl",
            &particle_layout,
            &[],
            wgpu::PrimitiveTopology::TriangleStrip,
            true,
        );
        let view_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("Render::lines"),
            entries: &[uniform_entry(0, vf)],
        });
        let line_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
        let line_pipeline = pipeline(
            "Render::lines",
            "render_lines.wgsl",
            &view_layout,
            &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<LineVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &line_attrs,
            })],
            wgpu::PrimitiveTopology::LineList,
            true,
        );
        let slice_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("Render::slice"),
            entries: &[
                uniform_entry(0, vf),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                uniform_entry(2, wgpu::ShaderStages::FRAGMENT),
            ],
        });
        let slice_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2];
        let slice_pipeline = pipeline(
            "Render::slice",
            "render_slice.wgsl",
            &slice_layout,
            &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<SliceVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &slice_attrs,
            })],
            wgpu::PrimitiveTopology::TriangleStrip,
            true,
        );
        let particle_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Render::particle_uniform"),
            size: std::mem::size_of::<ParticleUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let view_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Render::view_uniform"),
            size: std::mem::size_of::<ViewProj>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let line_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("Render::lines"),
            layout: &view_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: view_uniform.as_entire_binding(),
            }],
        });
        Self {
            particle_pipeline,
            particle_layout,
            particle_uniform,
            particle_group: None,
            line_pipeline,
            view_uniform,
            line_group,
            lines: None,
            slice_pipeline,
            slice_layout,
            slice: None,
            slice_plane: None,
            surface: SurfaceRenderer::new(device, format),
        }
    }

    /// Draws no particles (the smoke mode has none).
    pub fn clear_particles(&mut self) {
        self.particle_group = None;
        self.surface.clear_particles();
    }

    /// Points the particle renderer at a simulation's particle buffers.
    pub fn bind_particles(&mut self, device: &wgpu::Device, sim: &Simulation) {
        let p = &sim.particles;
        let h = sim.scene.h() as f32;
        self.surface.bind_particles(
            &p.pos,
            p.count,
            h * h * h / sim.scene.particles_per_cell.max(1) as f32,
        );
        if p.count == 0 {
            self.particle_group = None;
            return;
        }
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("Render::particles"),
            layout: &self.particle_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.particle_uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: p.pos.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: p.vel.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: p.flip_delta.as_entire_binding(),
                },
            ],
        });
        self.particle_group = Some((group, p.count));
    }

    pub fn set_lines(&mut self, device: &wgpu::Device, lines: &[LineVertex]) {
        self.lines = (!lines.is_empty()).then(|| {
            let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("Render::line_vertices"),
                contents: bytemuck::cast_slice(lines),
                usage: wgpu::BufferUsages::VERTEX,
            });
            (buf, lines.len() as u32)
        });
    }

    /// Uploads a slice image (or hides the slice with `None`).
    pub fn set_slice(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        image: Option<&SliceImage>,
    ) {
        let Some(img) = image else {
            self.slice = None;
            self.slice_plane = None;
            return;
        };
        let axis = img.spec.axis.min(2);
        self.slice_plane = Some((axis, img.corners[0][axis]));
        let size = wgpu::Extent3d {
            width: img.width,
            height: img.height,
            depth_or_array_layers: 1,
        };
        let tex = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("Render::slice_texture"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        queue.write_texture(
            tex.as_image_copy(),
            &img.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * img.width),
                rows_per_image: None,
            },
            size,
        );
        let c = img.corners;
        let verts = [
            SliceVertex {
                pos: c[0].into(),
                uv: [0.0, 0.0],
            },
            SliceVertex {
                pos: c[1].into(),
                uv: [1.0, 0.0],
            },
            SliceVertex {
                pos: c[2].into(),
                uv: [0.0, 1.0],
            },
            SliceVertex {
                pos: c[3].into(),
                uv: [1.0, 1.0],
            },
        ];
        let vb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("Render::slice_vertices"),
            contents: bytemuck::cast_slice(&verts),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let view = tex.create_view(&Default::default());
        let style = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("Render::slice_style"),
            contents: bytemuck::bytes_of(&SliceUniform {
                bilinear: img.bilinear as u32,
                _pad: [0; 3],
            }),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("Render::slice"),
            layout: &self.slice_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.view_uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: style.as_entire_binding(),
                },
            ],
        });
        self.slice = Some((vb, group));
    }

    /// The shown slice's plane as seen from `eye`: normal towards the eye and offset.
    fn cut_plane(&self, eye: glam::Vec3) -> Option<[f32; 4]> {
        let (axis, at) = self.slice_plane?;
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
        queue.write_buffer(
            &self.particle_uniform,
            0,
            bytemuck::bytes_of(&ParticleUniform {
                view: view.to_cols_array_2d(),
                proj: proj.to_cols_array_2d(),
                radius: style.radius,
                lo: style.lo,
                hi: style.hi,
                mode: match style.color {
                    ParticleColor::Speed => PARTICLE_COLOR_SPEED,
                    ParticleColor::FlipDelta => PARTICLE_COLOR_FLIP_DELTA,
                },
                cut_plane: plane,
                cut: cut_mode.code(),
                _pad: [0; 3],
            }),
        );
        let liquid = style.visible && camera.flat.is_none() && self.particle_group.is_some();
        if !liquid || style.mode == RenderMode::Particles {
            self.draw_scene(encoder, target.color, target.depth, liquid);
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
        // refracts it), with its depth in the target's depth buffer.
        let scene = self.surface.scene_view().expect("prepared above");
        self.draw_scene(encoder, scene, target.depth, style.mode == RenderMode::Both);
        self.surface.record(encoder, target);
    }

    /// The lines, the slice and (when `particles`) the particle impostors, into `color`
    /// and `depth`, both cleared first.
    fn draw_scene(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        particles: bool,
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
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        if let Some((vb, n)) = &self.lines {
            pass.set_pipeline(&self.line_pipeline);
            pass.set_bind_group(0, &self.line_group, &[]);
            pass.set_vertex_buffer(0, vb.slice(..));
            pass.draw(0..*n, 0..1);
        }
        if let Some((vb, group)) = &self.slice {
            pass.set_pipeline(&self.slice_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.set_vertex_buffer(0, vb.slice(..));
            pass.draw(0..4, 0..1);
        }
        if let (true, Some((group, count))) = (particles, &self.particle_group) {
            pass.set_pipeline(&self.particle_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..4, 0..*count);
        }
    }
}

/// An offscreen colour target (RGBA8 sRGB) with depth, readable back to the host.
pub struct Offscreen {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    pub depth: wgpu::TextureView,
    pub width: u32,
    pub height: u32,
}

pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

impl Offscreen {
    pub fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("Render::offscreen"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: OFFSCREEN_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        Self {
            view: texture.create_view(&Default::default()),
            depth: create_depth(device, width, height),
            texture,
            width,
            height,
        }
    }

    pub fn target(&self) -> RenderTarget<'_> {
        RenderTarget {
            color: &self.view,
            depth: &self.depth,
            width: self.width,
            height: self.height,
        }
    }
}

/// Reads a texture (4 bytes per texel) back as tightly packed rows.
pub fn read_texture(
    ctx: &crate::gpu::GpuContext,
    texture: &wgpu::Texture,
) -> Result<Vec<u8>, crate::gpu::GpuError> {
    let (w, h) = (texture.width(), texture.height());
    let padded =
        (4 * w).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("Render::readback"),
        size: (padded * h) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    enc.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buf,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: None,
            },
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
    ctx.queue.submit([enc.finish()]);
    let raw: Vec<u8> = crate::gpu::read_buffer(ctx, &buf)?;
    let mut out = Vec::with_capacity((4 * w * h) as usize);
    for row in 0..h {
        let start = (row * padded) as usize;
        out.extend_from_slice(&raw[start..start + (4 * w) as usize]);
    }
    // BGRA surfaces: swap to RGBA so PNGs come out right.
    if matches!(
        texture.format(),
        wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
    ) {
        for px in out.chunks_exact_mut(4) {
            px.swap(0, 2);
        }
    }
    Ok(out)
}
