//! The liquid as a liquid: a screen-space surface built from the particles (after van der
//! Laan, Green and Sainz 2009). The particles' spheres give the nearest eye depth per pixel
//! and, added up, the thickness of liquid along each ray; a bilateral filter with a radius
//! in world units smooths the depth; a full-screen pass takes normals from the smoothed
//! depth and shades it with a Fresnel-weighted sky reflection, refraction of the scene
//! behind, Beer-Lambert absorption and a specular highlight.
//!
//! Passes (one WGSL file each, `src/render/surface_*.wgsl`): depth, thickness, smooth
//! (along x, then y), all at half resolution, then blit (the scene without the liquid) and
//! shade at full resolution. The renderer reads the simulation's particle position buffer
//! and knows nothing else of the simulation.

use crate::gpu::{shader_module, GpuContext, GpuError, RenderLayout, Wgsl};
use bytemuck::{Pod, Zeroable};
use glam::Mat4;

/// How the liquid is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RenderMode {
    /// Coloured sphere impostors, one per particle (what the solver sees).
    #[default]
    Particles,
    /// The screen-space surface.
    Surface,
    /// The surface over the particles, which show through it.
    Both,
}

impl RenderMode {
    pub const ALL: [RenderMode; 3] = [RenderMode::Particles, RenderMode::Surface, RenderMode::Both];

    pub fn name(self) -> &'static str {
        match self {
            RenderMode::Particles => "particles",
            RenderMode::Surface => "surface",
            RenderMode::Both => "both",
        }
    }
}

impl std::str::FromStr for RenderMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RenderMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("unknown render mode {s:?}: expected particles, surface or both")
            })
    }
}

/// The surface's live parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceStyle {
    /// Sphere radius of the depth and thickness passes, m. About the particle spacing, so
    /// neighbouring spheres overlap and a resting body shows no gaps.
    pub radius: f32,
    /// Filter radius, m (world units: the look does not change with zoom).
    pub smooth_radius: f32,
    /// Depth difference (m) over which the filter stops mixing two depths: smaller keeps
    /// splashes apart from the body behind, larger smooths more.
    pub depth_falloff: f32,
    /// Beer-Lambert absorption per metre of liquid, per channel (red goes first in water).
    pub absorption: [f32; 3],
    /// Colour of light scattered in deep liquid (sRGB).
    pub deep_color: [f32; 3],
    /// Refraction: how far (m per m of liquid crossed) the scene behind is displaced.
    pub refraction: f32,
    pub specular: f32,
    pub shininess: f32,
}

impl SurfaceStyle {
    /// Defaults for particles `spacing` m apart (grid cell / cbrt(particles per cell)).
    pub fn for_spacing(spacing: f32) -> Self {
        Self {
            radius: spacing,
            smooth_radius: 4.0 * spacing,
            depth_falloff: 2.0 * spacing,
            absorption: [6.0, 2.0, 1.0],
            deep_color: [0.12, 0.42, 0.62],
            refraction: 0.1,
            specular: 0.6,
            shininess: 80.0,
        }
    }
}

impl Default for SurfaceStyle {
    fn default() -> Self {
        Self::for_spacing(1.0 / 64.0)
    }
}

/// Mirror of `Surface` in surface_common.wgsl (layout checked by
/// tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SurfaceUniform {
    view: [[f32; 4]; 4],
    proj: [[f32; 4]; 4],
    inv_view: [[f32; 4]; 4],
    cut_plane: [f32; 4],
    absorption: [f32; 4],
    deep_color: [f32; 4],
    radius: f32,
    smooth_radius: f32,
    depth_falloff: f32,
    thickness_scale: f32,
    refraction: f32,
    specular: f32,
    shininess: f32,
    cut: u32,
    width: f32,
    height: f32,
    target_width: f32,
    target_height: f32,
}
const _: () = assert!(std::mem::size_of::<SurfaceUniform>() == 288);
crate::wgsl_mirror!(surface_uniform_layout: SurfaceUniform = "surface_common.wgsl" Surface {
    view: view,
    proj: proj,
    inv_view: inv_view,
    cut_plane: cut_plane,
    absorption: absorption,
    deep_color: deep_color,
    radius: radius,
    smooth_radius: smooth_radius,
    depth_falloff: depth_falloff,
    thickness_scale: thickness_scale,
    refraction: refraction,
    specular: specular,
    shininess: shininess,
    cut: cut,
    width: width,
    height: height,
    target_width: target_width,
    target_height: target_height,
});

/// The liquid's passes (depth, thickness, smoothing) run at 1/LIQUID_SCALE of the
/// target's resolution in each direction: a quarter of the fragments, which keeps the
/// surface interactive on a software adapter; shading stays at full resolution. The
/// shaders' `LIQUID_SCALE` is the same constant.
pub const LIQUID_SCALE: u32 = crate::gpu::constants::LIQUID_SCALE as u32;

/// Eye depth (m in front of the camera, 0 = no liquid) and thickness formats.
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Float;
const THICKNESS_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R16Float;

/// Textures sized to the target, and the bind groups that read them.
struct Targets {
    /// Size of the target (and of `scene`).
    width: u32,
    height: u32,
    /// Size of the liquid's textures.
    liquid: [u32; 2],
    /// The scene without the liquid, drawn by the scene renderer, read by blit and shade.
    scene: wgpu::TextureView,
    raw: wgpu::Texture,
    raw_view: wgpu::TextureView,
    tmp: wgpu::TextureView,
    smooth: wgpu::Texture,
    smooth_view: wgpu::TextureView,
    thickness: wgpu::TextureView,
    /// Hardware depth of the depth pass (nearest sphere wins).
    zbuffer: wgpu::TextureView,
    smooth_h: wgpu::BindGroup,
    smooth_v: wgpu::BindGroup,
    blit: wgpu::BindGroup,
    shade: wgpu::BindGroup,
}

/// What the surface passes cut away in front of a shown slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    /// xyz towards the camera, w the plane's offset: particles with
    /// dot(xyz, p) > w - radius are left out.
    pub plane: [f32; 4],
    pub on: bool,
}

pub struct SurfaceRenderer {
    device: wgpu::Device,
    format: wgpu::TextureFormat,
    depth_pipeline: wgpu::RenderPipeline,
    thickness_pipeline: wgpu::RenderPipeline,
    smooth_h_pipeline: wgpu::RenderPipeline,
    smooth_v_pipeline: wgpu::RenderPipeline,
    blit_pipeline: wgpu::RenderPipeline,
    shade_pipeline: wgpu::RenderPipeline,
    particle_layout: RenderLayout,
    smooth_layout: RenderLayout,
    blit_layout: RenderLayout,
    shade_layout: RenderLayout,
    uniform: wgpu::Buffer,
    particles: Option<(wgpu::BindGroup, u32)>,
    /// Liquid volume each particle stands for, m^3.
    particle_volume: f32,
    targets: Option<Targets>,
}

/// One render pipeline of the surface: `shader`'s `vs` and `fs_entry`, one colour target.
struct PipelineDesc<'a> {
    label: &'a str,
    shader: Wgsl,
    fs_entry: &'a str,
    layout: &'a RenderLayout,
    format: wgpu::TextureFormat,
    blend: Option<wgpu::BlendState>,
    depth: Option<wgpu::DepthStencilState>,
}

fn pipeline(device: &wgpu::Device, d: PipelineDesc<'_>) -> wgpu::RenderPipeline {
    let module = shader_module(device, d.shader);
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(d.label),
        bind_group_layouts: &[Some(d.layout.layout())],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(d.label),
        layout: Some(&pl),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleStrip,
            ..Default::default()
        },
        depth_stencil: d.depth,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some(d.fs_entry),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: d.format,
                blend: d.blend,
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

fn depth_state(compare: wgpu::CompareFunction, write: bool) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: super::DEPTH_FORMAT,
        depth_write_enabled: Some(write),
        depth_compare: Some(compare),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

impl SurfaceRenderer {
    /// `format`: the colour format of the targets the surface is drawn into.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let layout = |label: &str, shaders: &[Wgsl]| RenderLayout::new(device, label, shaders);
        // Depth and thickness draw the same bind group: one layout for both shaders.
        let particle_layout = layout(
            "Surface::particles",
            &[
                crate::wgsl!("surface_depth.wgsl"),
                crate::wgsl!("surface_thickness.wgsl"),
            ],
        );
        let smooth_layout = layout("Surface::smooth", &[crate::wgsl!("surface_smooth.wgsl")]);
        let blit_layout = layout("Surface::blit", &[crate::wgsl!("surface_blit.wgsl")]);
        let shade_layout = layout("Surface::shade", &[crate::wgsl!("surface_shade.wgsl")]);
        let additive = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        };
        let depth_pipeline = pipeline(
            device,
            PipelineDesc {
                label: "Surface::depth",
                shader: crate::wgsl!("surface_depth.wgsl"),
                fs_entry: "fs",
                layout: &particle_layout,
                format: DEPTH_FORMAT,
                blend: None,
                depth: Some(depth_state(wgpu::CompareFunction::Less, true)),
            },
        );
        let thickness_pipeline = pipeline(
            device,
            PipelineDesc {
                label: "Surface::thickness",
                shader: crate::wgsl!("surface_thickness.wgsl"),
                fs_entry: "fs",
                layout: &particle_layout,
                format: THICKNESS_FORMAT,
                blend: Some(wgpu::BlendState {
                    color: additive,
                    alpha: additive,
                }),
                // Tested against the bodies' depth only (not written): a particle behind a
                // body adds nothing to the liquid seen in front of it.
                depth: Some(depth_state(wgpu::CompareFunction::LessEqual, false)),
            },
        );
        let smooth = |label, fs_entry| {
            pipeline(
                device,
                PipelineDesc {
                    label,
                    shader: crate::wgsl!("surface_smooth.wgsl"),
                    fs_entry,
                    layout: &smooth_layout,
                    format: DEPTH_FORMAT,
                    blend: None,
                    depth: None,
                },
            )
        };
        let smooth_h_pipeline = smooth("Surface::smooth_h", "fs_h");
        let smooth_v_pipeline = smooth("Surface::smooth_v", "fs_v");
        let blit_pipeline = pipeline(
            device,
            PipelineDesc {
                label: "Surface::blit",
                shader: crate::wgsl!("surface_blit.wgsl"),
                fs_entry: "fs",
                layout: &blit_layout,
                format,
                blend: None,
                depth: Some(depth_state(wgpu::CompareFunction::Always, false)),
            },
        );
        let shade_pipeline = pipeline(
            device,
            PipelineDesc {
                label: "Surface::shade",
                shader: crate::wgsl!("surface_shade.wgsl"),
                fs_entry: "fs",
                layout: &shade_layout,
                format,
                blend: None,
                depth: Some(depth_state(wgpu::CompareFunction::LessEqual, true)),
            },
        );
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Surface::uniform"),
            size: std::mem::size_of::<SurfaceUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            device: device.clone(),
            format,
            depth_pipeline,
            thickness_pipeline,
            smooth_h_pipeline,
            smooth_v_pipeline,
            blit_pipeline,
            shade_pipeline,
            particle_layout,
            smooth_layout,
            blit_layout,
            shade_layout,
            uniform,
            particles: None,
            particle_volume: 0.0,
            targets: None,
        }
    }

    /// Reads `count` particle positions (vec4 per particle) from `pos`; each stands for
    /// `particle_volume` m^3 of liquid. `count == 0` draws no liquid.
    pub fn bind_particles(&mut self, pos: &wgpu::Buffer, count: u32, particle_volume: f32) {
        self.particle_volume = particle_volume;
        self.particles = (count > 0).then(|| {
            let group = self.particle_layout.bind(
                &self.device,
                "Surface::particles",
                &[
                    ("s", self.uniform.as_entire_binding()),
                    ("pos", pos.as_entire_binding()),
                ],
            );
            (group, count)
        });
    }

    pub fn clear_particles(&mut self) {
        self.particles = None;
    }

    fn texture(
        &self,
        label: &str,
        width: u32,
        height: u32,
        format: wgpu::TextureFormat,
        extra: wgpu::TextureUsages,
    ) -> wgpu::Texture {
        self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | extra,
            view_formats: &[],
        })
    }

    /// (Re)creates the textures when the target size (`width` x `height`) or the liquid's
    /// texture size changes.
    fn ensure_targets(&mut self, width: u32, height: u32, liquid: [u32; 2]) {
        let (width, height) = (width.max(1), height.max(1));
        let liquid = liquid.map(|v| v.max(1));
        if self
            .targets
            .as_ref()
            .is_some_and(|t| t.width == width && t.height == height && t.liquid == liquid)
        {
            return;
        }
        let none = wgpu::TextureUsages::empty();
        let view = |t: &wgpu::Texture| t.create_view(&Default::default());
        let scene = view(&self.texture("Surface::scene", width, height, self.format, none));
        let scene_size = [width, height];
        let (width, height) = (liquid[0], liquid[1]);
        let raw = self.texture(
            "Surface::raw_depth",
            width,
            height,
            DEPTH_FORMAT,
            wgpu::TextureUsages::COPY_DST,
        );
        let tmp = view(&self.texture("Surface::tmp_depth", width, height, DEPTH_FORMAT, none));
        let smooth = self.texture(
            "Surface::smooth_depth",
            width,
            height,
            DEPTH_FORMAT,
            wgpu::TextureUsages::COPY_SRC,
        );
        let thickness = view(&self.texture(
            "Surface::thickness",
            width,
            height,
            THICKNESS_FORMAT,
            wgpu::TextureUsages::COPY_SRC,
        ));
        let zbuffer = super::create_depth(&self.device, width, height);
        let (raw_view, smooth_view) = (view(&raw), view(&smooth));
        let tex = |v| wgpu::BindingResource::TextureView(v);
        let s = || ("s", self.uniform.as_entire_binding());
        let smooth_h = self.smooth_layout.bind(
            &self.device,
            "Surface::smooth_h",
            &[s(), ("src", tex(&raw_view))],
        );
        let smooth_v = self.smooth_layout.bind(
            &self.device,
            "Surface::smooth_v",
            &[s(), ("src", tex(&tmp))],
        );
        let blit = self
            .blit_layout
            .bind(&self.device, "Surface::blit", &[("scene", tex(&scene))]);
        let shade = self.shade_layout.bind(
            &self.device,
            "Surface::shade",
            &[
                s(),
                ("depth_tex", tex(&smooth_view)),
                ("thickness_tex", tex(&thickness)),
                ("scene", tex(&scene)),
            ],
        );
        self.targets = Some(Targets {
            width: scene_size[0],
            height: scene_size[1],
            liquid,
            scene,
            raw,
            raw_view,
            tmp,
            smooth,
            smooth_view,
            thickness,
            zbuffer,
            smooth_h,
            smooth_v,
            blit,
            shade,
        });
    }

    /// Sizes the textures to a `width` x `height` target and uploads the camera, style and
    /// cut. Then the scene without the liquid is drawn into [`Self::scene_view`] (same size
    /// and format as the target), then [`Self::record`] adds the liquid.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        queue: &wgpu::Queue,
        width: u32,
        height: u32,
        view: Mat4,
        proj: Mat4,
        style: &SurfaceStyle,
        cut: Cut,
    ) {
        let liquid = [width, height].map(|v| v.max(1).div_ceil(LIQUID_SCALE));
        self.upload(queue, [width, height], liquid, view, proj, style, cut);
    }

    #[allow(clippy::too_many_arguments)]
    fn upload(
        &mut self,
        queue: &wgpu::Queue,
        size: [u32; 2],
        liquid: [u32; 2],
        view: Mat4,
        proj: Mat4,
        style: &SurfaceStyle,
        cut: Cut,
    ) {
        self.ensure_targets(size[0], size[1], liquid);
        let r = style.radius.max(1e-6);
        let sphere = 4.0 / 3.0 * std::f32::consts::PI * r * r * r;
        let linear = |c: [f32; 3]| {
            let l = |x: f32| x.clamp(0.0, 1.0).powf(2.2);
            [l(c[0]), l(c[1]), l(c[2]), 0.0]
        };
        let a = style.absorption;
        let u = SurfaceUniform {
            view: view.to_cols_array_2d(),
            proj: proj.to_cols_array_2d(),
            inv_view: view.inverse().to_cols_array_2d(),
            cut_plane: cut.plane,
            absorption: [a[0].max(0.0), a[1].max(0.0), a[2].max(0.0), 0.0],
            deep_color: linear(style.deep_color),
            radius: r,
            smooth_radius: style.smooth_radius.max(0.0),
            depth_falloff: style.depth_falloff.max(1e-6),
            thickness_scale: self.particle_volume / sphere,
            refraction: style.refraction,
            specular: style.specular.max(0.0),
            shininess: style.shininess.max(1.0),
            cut: cut.on as u32,
            width: liquid[0].max(1) as f32,
            height: liquid[1].max(1) as f32,
            target_width: size[0].max(1) as f32,
            target_height: size[1].max(1) as f32,
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
    }

    /// Where the scene without the liquid goes, once [`Self::prepare`] has sized it.
    pub fn scene_view(&self) -> Option<&wgpu::TextureView> {
        self.targets.as_ref().map(|t| &t.scene)
    }

    /// Records the liquid passes and composites the scene (drawn into [`Self::prepare`]'s
    /// view) with the shaded liquid into `target`, whose depth holds the scene's depth.
    /// `solids` draws the solid bodies' depth (a pass with only a depth attachment): the
    /// liquid's passes start from it, so liquid behind a body neither thickens nor shapes
    /// the liquid seen in front of it.
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        target: &super::RenderTarget<'_>,
        solids: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) {
        let Some(t) = &self.targets else { return };
        if let Some((group, count)) = &self.particles {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("Surface::solids"),
                color_attachments: &[],
                depth_stencil_attachment: Some(super::cleared_depth(&t.zbuffer)),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            solids(&mut pass);
            drop(pass);
            // Thickness first, against the bodies alone; the depth pass then adds the
            // nearest particle to the same buffer.
            let mut pass = color_pass(
                encoder,
                "Surface::thickness",
                &t.thickness,
                true,
                Some(&t.zbuffer),
            );
            pass.set_pipeline(&self.thickness_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..4, 0..*count);
            drop(pass);
            let mut pass = color_pass(
                encoder,
                "Surface::depth",
                &t.raw_view,
                true,
                Some(&t.zbuffer),
            );
            pass.set_pipeline(&self.depth_pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..4, 0..*count);
        } else {
            color_pass(encoder, "Surface::depth", &t.raw_view, true, None);
            color_pass(encoder, "Surface::thickness", &t.thickness, true, None);
        }
        self.record_smooth(encoder, t);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("Surface::shade"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target.color,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: target.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.blit_pipeline);
        pass.set_bind_group(0, &t.blit, &[]);
        pass.draw(0..3, 0..1);
        pass.set_pipeline(&self.shade_pipeline);
        pass.set_bind_group(0, &t.shade, &[]);
        pass.draw(0..3, 0..1);
    }

    fn record_smooth(&self, encoder: &mut wgpu::CommandEncoder, t: &Targets) {
        for (label, pipeline, group, out) in [
            (
                "Surface::smooth_h",
                &self.smooth_h_pipeline,
                &t.smooth_h,
                &t.tmp,
            ),
            (
                "Surface::smooth_v",
                &self.smooth_v_pipeline,
                &t.smooth_v,
                &t.smooth_view,
            ),
        ] {
            let mut pass = color_pass(encoder, label, out, false, None);
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..3, 0..1);
        }
    }

    /// The thickness image of the last [`Self::record`] (metres of liquid along each view
    /// ray, row 0 at the top) and its size: what the tests check.
    pub fn read_thickness(&self, ctx: &GpuContext) -> Result<(Vec<f32>, [u32; 2]), GpuError> {
        let t = self.targets.as_ref().expect("prepared");
        let bytes = super::read_texture(ctx, t.thickness.texture())?;
        let values = bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        Ok((values, t.liquid))
    }

    /// Runs only the smoothing filter on a given eye-depth image (`width` x `height`, row 0
    /// at the top, 0 = no liquid) as seen through `proj`, and reads the result back: what
    /// the tests compare with the CPU reference.
    pub fn filter_depth(
        &mut self,
        ctx: &GpuContext,
        depth: &[f32],
        width: u32,
        height: u32,
        proj: Mat4,
        style: &SurfaceStyle,
    ) -> Result<Vec<f32>, GpuError> {
        assert_eq!(depth.len(), (width * height) as usize);
        let cut = Cut {
            plane: [0.0; 4],
            on: false,
        };
        let size = [width, height];
        self.upload(&ctx.queue, size, size, Mat4::IDENTITY, proj, style, cut);
        let t = self.targets.as_ref().expect("prepared");
        ctx.queue.write_texture(
            t.raw.as_image_copy(),
            bytemuck::cast_slice(depth),
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * width),
                rows_per_image: None,
            },
            wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        );
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.record_smooth(&mut enc, t);
        ctx.submit(enc.finish());
        let bytes = super::read_texture(ctx, &t.smooth)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }
}

/// A render pass into one colour view, cleared to 0 (`clear`) or fully overwritten, with
/// `depth` (the solids' depth, then the particles') loaded and kept.
fn color_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    view: &wgpu::TextureView,
    clear: bool,
    depth: Option<&wgpu::TextureView>,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            resolve_target: None,
            depth_slice: None,
            ops: wgpu::Operations {
                load: if clear {
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT)
                } else {
                    wgpu::LoadOp::Load
                },
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: depth.map(|d| wgpu::RenderPassDepthStencilAttachment {
            view: d,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Load,
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
