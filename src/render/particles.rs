//! Particles as sphere impostors (particles.wgsl): one camera-facing quad
//! per particle, coloured by speed or by the FLIP change, thinned or left out in front of
//! a shown slice.

use super::scene_pipeline;
use super::surface::{RenderMode, SurfaceStyle};
use crate::gpu::constants::{
    PARTICLE_COLOR_FLIP_DELTA, PARTICLE_COLOR_SPEED, SLICE_CUT_DRAW, SLICE_CUT_FADE, SLICE_CUT_HIDE,
};
use crate::gpu::RenderLayout;
use crate::sim::Simulation;
use bytemuck::{Pod, Zeroable};
use glam::Mat4;

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
    pub(super) fn code(self) -> u32 {
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

/// Mirror of `View` in particles.wgsl (layout checked by tests/integration/shaders.rs).
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
crate::wgsl_mirror!(particle_uniform_layout: ParticleUniform = "particles.wgsl" View {
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

/// The impostor pipeline and its bind group over a simulation's particle buffers.
pub(super) struct ParticlePipeline {
    pipeline: wgpu::RenderPipeline,
    layout: RenderLayout,
    uniform: wgpu::Buffer,
    group: Option<(wgpu::BindGroup, u32)>,
}

impl ParticlePipeline {
    pub(super) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let layout = RenderLayout::new(
            device,
            "Render::particles",
            &[crate::wgsl!("particles.wgsl")],
        );
        let pipeline = scene_pipeline(
            device,
            format,
            "Render::particles",
            crate::wgsl!("particles.wgsl"),
            &layout,
            &[],
            wgpu::PrimitiveTopology::TriangleStrip,
            true,
        );
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Render::particle_uniform"),
            size: std::mem::size_of::<ParticleUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            pipeline,
            layout,
            uniform,
            group: None,
        }
    }

    /// Whether there are particles to draw.
    pub(super) fn bound(&self) -> bool {
        self.group.is_some()
    }

    pub(super) fn clear(&mut self) {
        self.group = None;
    }

    /// Points the pipeline at a simulation's particle buffers.
    pub(super) fn bind(&mut self, device: &wgpu::Device, sim: &Simulation) {
        let p = &sim.mode.particles;
        if p.count == 0 {
            self.group = None;
            return;
        }
        let group = self.layout.bind(
            device,
            "Render::particles",
            &[
                ("u", self.uniform.as_entire_binding()),
                ("pos", p.pos.as_entire_binding()),
                ("vel", p.vel.as_entire_binding()),
                ("flip_delta", p.flip_delta.as_entire_binding()),
            ],
        );
        self.group = Some((group, p.count));
    }

    /// Writes the camera, the style and the slice's cut plane (`cut` says what happens in
    /// front of it) for the next draw.
    pub(super) fn write(
        &self,
        queue: &wgpu::Queue,
        view: Mat4,
        proj: Mat4,
        style: &ParticleStyle,
        plane: [f32; 4],
        cut: SliceOcclusion,
    ) {
        queue.write_buffer(
            &self.uniform,
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
                cut: cut.code(),
                _pad: [0; 3],
            }),
        );
    }

    pub(super) fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some((group, count)) = &self.group {
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..4, 0..*count);
        }
    }
}
