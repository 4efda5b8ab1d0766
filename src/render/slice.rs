//! Slices of grid fields: one axis-aligned plane of any field, colour-mapped on the CPU
//! into an image, and the pipeline that draws it in place inside the domain.

use super::{
    colormap::{to_rgba8, Scale},
    scene_pipeline,
};
use crate::gpu::RenderLayout;
use crate::sim::liquid::views::{Field, FieldData, Location};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use wgpu::util::DeviceExt;

/// How the colour range is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    Auto,
    Fixed { lo: f32, hi: f32 },
}

/// Which slice to show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SliceSpec {
    pub field: Field,
    /// Normal axis of the plane: 0 x, 1 y, 2 z.
    pub axis: usize,
    /// Layer along the axis, counted on the simulation grid (clamped to the field's grid).
    pub index: u32,
    pub range: Range,
}

/// A colour-mapped slice ready to draw.
#[derive(Clone, Debug)]
pub struct SliceImage {
    pub spec: SliceSpec,
    pub width: u32,
    pub height: u32,
    /// RGBA8 (sRGB) texels, row 0 at the low end of the second in-plane axis.
    pub rgba: Vec<u8>,
    /// The plane's corners in metres: (lo, lo), (hi, lo), (lo, hi), (hi, hi) in the two
    /// in-plane axes.
    pub corners: [Vec3; 4],
    pub scale: Scale,
    /// Field values of the slice, row-major like `rgba`.
    pub values: Vec<f32>,
    /// The in-plane axes (a, b): texel x runs along a, texel y along b.
    pub plane_axes: (usize, usize),
    /// Draw with bilinear filtering between sample centres (smooth fields such as smoke
    /// dye) instead of one flat colour per cell.
    pub bilinear: bool,
    /// Where samples sit in cells along each axis (0.5 cell-centred, 0 on faces).
    offsets: [f32; 3],
    /// Size of a sample's cell along each axis, m.
    cell: [f32; 3],
    index: u32,
}

/// Offsets of sample positions (in cells) along each axis for a field location.
pub fn sample_offsets(loc: Location) -> [f32; 3] {
    let mut o = [0.5; 3];
    if let Location::Face(c) = loc {
        o[c as usize] = 0.0;
    }
    o
}

impl SliceImage {
    pub fn build(data: &FieldData, h: f32, spec: SliceSpec) -> SliceImage {
        let axis = spec.axis.min(2);
        let (a, b) = match axis {
            0 => (2, 1),
            1 => (0, 2),
            _ => (0, 1),
        };
        let d = data.dims;
        // The index counts layers of the simulation grid, so one slider serves every
        // field: a coarser grid (a multigrid level) shows its layer that holds that one.
        let index = (spec.index / data.spacing[axis]).min(d[axis] - 1);
        let cell = data.spacing.map(|s| s as f32 * h);
        let (w, hgt) = (d[a], d[b]);
        let mut values = Vec::with_capacity((w * hgt) as usize);
        for y in 0..hgt {
            for x in 0..w {
                let mut c = [0u32; 3];
                c[axis] = index;
                c[a] = x;
                c[b] = y;
                values.push(data.get(c[0], c[1], c[2]));
            }
        }
        let scale = match (spec.field, spec.range) {
            (f, _) if f.cell_types() == f => Scale::CellTypes,
            (f, Range::Auto) => Scale::auto(&values, f.signed()),
            (f, Range::Fixed { lo, hi }) => {
                if f.signed() {
                    Scale::Diverging {
                        max: lo.abs().max(hi.abs()),
                    }
                } else {
                    Scale::Sequential { lo, hi }
                }
            }
        };
        let rgba = values
            .iter()
            .flat_map(|v| to_rgba8(scale.color(*v)))
            .collect();
        let offsets = sample_offsets(spec.field.location());
        let plane = (index as f32 + offsets[axis]) * cell[axis];
        let lo = |ax: usize| (offsets[ax] - 0.5) * cell[ax];
        let hi = |ax: usize| (d[ax] as f32 + offsets[ax] - 0.5) * cell[ax];
        let point = |ua: f32, ub: f32| {
            let mut p = Vec3::ZERO;
            p[axis] = plane;
            p[a] = ua;
            p[b] = ub;
            p
        };
        SliceImage {
            spec: SliceSpec { index, ..spec },
            width: w,
            height: hgt,
            rgba,
            corners: [
                point(lo(a), lo(b)),
                point(hi(a), lo(b)),
                point(lo(a), hi(b)),
                point(hi(a), hi(b)),
            ],
            scale,
            values,
            plane_axes: (a, b),
            bilinear: false,
            offsets,
            cell,
            index,
        }
    }

    /// A caller-coloured image of the cell layer k = 0 of an `nx x ny` grid (the smoke
    /// slice) of cells `cell` m wide, drawn at z = cell.z/2. `rgba` and `values` hold one
    /// entry per cell, i-fastest.
    pub fn xy_layer(
        spec: SliceSpec,
        nx: u32,
        ny: u32,
        cell: [f32; 3],
        rgba: Vec<u8>,
        values: Vec<f32>,
        scale: Scale,
    ) -> SliceImage {
        let z = 0.5 * cell[2];
        let (x1, y1) = (nx as f32 * cell[0], ny as f32 * cell[1]);
        SliceImage {
            spec: SliceSpec {
                axis: 2,
                index: 0,
                ..spec
            },
            width: nx,
            height: ny,
            rgba,
            corners: [
                Vec3::new(0.0, 0.0, z),
                Vec3::new(x1, 0.0, z),
                Vec3::new(0.0, y1, z),
                Vec3::new(x1, y1, z),
            ],
            scale,
            values,
            plane_axes: (0, 1),
            bilinear: false,
            offsets: [0.5; 3],
            cell,
            index: 0,
        }
    }

    /// The slice's centre and its extent along the two in-plane axes (a, b), m.
    pub fn centre_and_extent(&self) -> (Vec3, [f32; 2]) {
        let (a, b) = self.plane_axes;
        let (lo, hi) = (self.corners[0], self.corners[3]);
        ((lo + hi) * 0.5, [hi[a] - lo[a], hi[b] - lo[b]])
    }

    /// The sample a ray hits: (sample coordinates in the field's grid, value).
    pub fn pick(&self, origin: Vec3, dir: Vec3) -> Option<([u32; 3], f32)> {
        let axis = self.spec.axis;
        let plane = (self.index as f32 + self.offsets[axis]) * self.cell[axis];
        if dir[axis].abs() < 1e-9 {
            return None;
        }
        let t = (plane - origin[axis]) / dir[axis];
        if t < 0.0 {
            return None;
        }
        let p = origin + dir * t;
        let (a, b) = self.plane_axes;
        let x = (p[a] / self.cell[a] - self.offsets[a] + 0.5).floor();
        let y = (p[b] / self.cell[b] - self.offsets[b] + 0.5).floor();
        if x < 0.0 || y < 0.0 || x >= self.width as f32 || y >= self.height as f32 {
            return None;
        }
        let mut c = [0u32; 3];
        c[axis] = self.index;
        c[a] = x as u32;
        c[b] = y as u32;
        Some((c, self.values[(y as u32 * self.width + x as u32) as usize]))
    }
}

/// Mirror of `SliceStyle` in slice.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SliceUniform {
    bilinear: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<SliceUniform>() == 16);
crate::wgsl_mirror!(slice_uniform_layout: SliceUniform = "slice.wgsl" SliceStyle {
    bilinear: bilinear,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SliceVertex {
    pos: [f32; 3],
    uv: [f32; 2],
}

/// The slice pipeline (slice.wgsl): the shown slice image as a textured
/// quad in place inside the domain.
pub(super) struct SlicePipeline {
    pipeline: wgpu::RenderPipeline,
    layout: RenderLayout,
    slice: Option<(wgpu::Buffer, wgpu::BindGroup)>,
    /// The shown slice's plane: normal axis and position along it, m.
    plane: Option<(usize, f32)>,
}

impl SlicePipeline {
    pub(super) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let layout = RenderLayout::new(device, "Render::slice", &[crate::wgsl!("slice.wgsl")]);
        let slice_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2];
        let pipeline = scene_pipeline(
            device,
            format,
            "Render::slice",
            crate::wgsl!("slice.wgsl"),
            &layout,
            &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<SliceVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &slice_attrs,
            })],
            wgpu::PrimitiveTopology::TriangleStrip,
            true,
        );
        Self {
            pipeline,
            layout,
            slice: None,
            plane: None,
        }
    }

    /// The shown slice's plane: normal axis and position along it, m.
    pub(super) fn plane(&self) -> Option<(usize, f32)> {
        self.plane
    }

    /// Uploads a slice image (or hides the slice with `None`); `view_uniform` holds the
    /// camera's `ViewProj`.
    pub(super) fn set(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        view_uniform: &wgpu::Buffer,
        image: Option<&SliceImage>,
    ) {
        let Some(img) = image else {
            self.slice = None;
            self.plane = None;
            return;
        };
        let axis = img.spec.axis.min(2);
        self.plane = Some((axis, img.corners[0][axis]));
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
        let group = self.layout.bind(
            device,
            "Render::slice",
            &[
                ("u", view_uniform.as_entire_binding()),
                ("tex", wgpu::BindingResource::TextureView(&view)),
                ("style", style.as_entire_binding()),
            ],
        );
        self.slice = Some((vb, group));
    }

    pub(super) fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some((vb, group)) = &self.slice {
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.set_vertex_buffer(0, vb.slice(..));
            pass.draw(0..4, 0..1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(field: Field, dims: [u32; 3]) -> FieldData {
        let n = (dims[0] * dims[1] * dims[2]) as usize;
        FieldData {
            field,
            dims,
            spacing: [1; 3],
            values: (0..n).map(|i| i as f32).collect(),
        }
    }

    #[test]
    fn slice_of_cells_spans_the_domain_and_picks_back() {
        let d = data(Field::Divergence, [4, 3, 2]);
        let s = SliceImage::build(
            &d,
            0.5,
            SliceSpec {
                field: Field::Divergence,
                axis: 2,
                index: 1,
                range: Range::Auto,
            },
        );
        assert_eq!((s.width, s.height), (4, 3));
        assert_eq!(s.corners[0], Vec3::new(0.0, 0.0, 0.75));
        assert_eq!(s.corners[3], Vec3::new(2.0, 1.5, 0.75));
        // Cell (2, 1, 1) has value 2 + 4*(1 + 3*1) = 18.
        let (c, v) = s
            .pick(Vec3::new(1.25, 0.75, 5.0), Vec3::new(0.0, 0.0, -1.0))
            .unwrap();
        assert_eq!((c, v), ([2, 1, 1], 18.0));
        assert!(s
            .pick(Vec3::new(9.0, 0.75, 5.0), Vec3::new(0.0, 0.0, -1.0))
            .is_none());
    }

    #[test]
    fn a_coarse_level_spans_the_domain_and_takes_the_fine_index() {
        // Level 1 of a 6x4x4 grid of 0.5 m cells: 3x2x2 cells of 1 m.
        let mut d = data(
            Field::Mg(crate::sim::liquid::views::MgField {
                level: 1,
                vector: crate::sim::liquid::views::MgVector::Residual,
            }),
            [3, 2, 2],
        );
        d.spacing = [2; 3];
        let s = SliceImage::build(
            &d,
            0.5,
            SliceSpec {
                field: d.field,
                axis: 2,
                index: 3,
                range: Range::Auto,
            },
        );
        // Fine layer 3 lies in coarse layer 1, whose centre is at z = 1.5 m.
        assert_eq!(s.spec.index, 1);
        assert_eq!(s.corners[0], Vec3::new(0.0, 0.0, 1.5));
        assert_eq!(s.corners[3], Vec3::new(3.0, 2.0, 1.5));
        // (2.2, 0.3) m is in coarse cell (2, 0, 1), value 2 + 3*(0 + 2*1) = 8.
        let (c, v) = s
            .pick(Vec3::new(2.2, 0.3, 5.0), Vec3::new(0.0, 0.0, -1.0))
            .unwrap();
        assert_eq!((c, v), ([2, 0, 1], 8.0));
    }

    #[test]
    fn face_slices_sit_on_faces() {
        let d = data(Field::U, [5, 3, 2]);
        let s = SliceImage::build(
            &d,
            1.0,
            SliceSpec {
                field: Field::U,
                axis: 0,
                index: 4,
                range: Range::Auto,
            },
        );
        assert_eq!(s.corners[0].x, 4.0);
        let d = data(Field::U, [5, 3, 2]);
        let s = SliceImage::build(
            &d,
            1.0,
            SliceSpec {
                field: Field::U,
                axis: 2,
                index: 0,
                range: Range::Auto,
            },
        );
        // Along x the u samples sit on faces 0..=4: the quad runs from -0.5 to 4.5.
        assert_eq!(s.corners[0].x, -0.5);
        assert_eq!(s.corners[3].x, 4.5);
    }
}
