//! Lines (lines.wgsl): the pipeline that draws coloured segments, and their
//! geometry: the domain box, the scene's solids, velocity arrows on a slice.

use super::scene_pipeline;
use crate::gpu::RenderLayout;
use crate::scene::{Scene, Shape};
use crate::sim::liquid::views::FieldData;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use wgpu::util::DeviceExt;

/// A vertex of a line segment (position, colour).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct LineVertex {
    pub pos: [f32; 3],
    pub color: [f32; 3],
}

/// The line pipeline and the segments it draws.
pub(super) struct LinePipeline {
    pipeline: wgpu::RenderPipeline,
    group: wgpu::BindGroup,
    lines: Option<(wgpu::Buffer, u32)>,
}

impl LinePipeline {
    /// `view_uniform` holds the camera's `ViewProj`.
    pub(super) fn new(
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
        view_uniform: &wgpu::Buffer,
    ) -> Self {
        let view_layout = RenderLayout::new(device, "Render::lines", &[crate::wgsl!("lines.wgsl")]);
        let line_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
        let pipeline = scene_pipeline(
            device,
            format,
            "Render::lines",
            crate::wgsl!("lines.wgsl"),
            &view_layout,
            &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<LineVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &line_attrs,
            })],
            wgpu::PrimitiveTopology::LineList,
            true,
        );
        let group = view_layout.bind(
            device,
            "Render::lines",
            &[("u", view_uniform.as_entire_binding())],
        );
        Self {
            pipeline,
            group,
            lines: None,
        }
    }

    pub(super) fn set(&mut self, device: &wgpu::Device, lines: &[LineVertex]) {
        self.lines = (!lines.is_empty()).then(|| {
            let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("Render::line_vertices"),
                contents: bytemuck::cast_slice(lines),
                usage: wgpu::BufferUsages::VERTEX,
            });
            (buf, lines.len() as u32)
        });
    }

    pub(super) fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some((vb, n)) = &self.lines {
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.group, &[]);
            pass.set_vertex_buffer(0, vb.slice(..));
            pass.draw(0..*n, 0..1);
        }
    }
}

fn seg(out: &mut Vec<LineVertex>, a: Vec3, b: Vec3, color: [f32; 3]) {
    out.push(LineVertex {
        pos: a.into(),
        color,
    });
    out.push(LineVertex {
        pos: b.into(),
        color,
    });
}

/// The 12 edges of an axis-aligned box.
pub fn box_edges(out: &mut Vec<LineVertex>, lo: Vec3, hi: Vec3, color: [f32; 3]) {
    oriented_box_edges(out, |c| lo + (hi - lo) * c, color);
}

/// The 12 edges of the box whose corner `c` (each coordinate 0 or 1) is at `corner(c)`.
fn oriented_box_edges(out: &mut Vec<LineVertex>, corner: impl Fn(Vec3) -> Vec3, color: [f32; 3]) {
    let p = |i: u32| {
        corner(Vec3::new(
            (i & 1) as f32,
            ((i >> 1) & 1) as f32,
            ((i >> 2) & 1) as f32,
        ))
    };
    for i in 0..8u32 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                seg(out, p(i), p(i | bit), color);
            }
        }
    }
}

/// A circle of radius `r` about `c` in the plane of the unit vectors `a` and `b`, 48
/// segments.
fn circle(out: &mut Vec<LineVertex>, c: Vec3, r: f32, (a, b): (Vec3, Vec3), color: [f32; 3]) {
    let n = 48;
    let at = |i: u32| {
        let t = i as f32 / n as f32 * std::f32::consts::TAU;
        c + r * (a * t.cos() + b * t.sin())
    };
    for i in 0..n {
        seg(out, at(i), at(i + 1), color);
    }
}

/// Three great circles of a sphere of radius `r` at `c`, along the axes `axes`.
fn sphere_circles(out: &mut Vec<LineVertex>, c: Vec3, r: f32, axes: [Vec3; 3], color: [f32; 3]) {
    let [x, y, z] = axes;
    for plane in [(x, y), (y, z), (z, x)] {
        circle(out, c, r, plane, color);
    }
}

/// A cylinder's two end circles and four lines along its side (shapes with no outline of
/// their own draw nothing).
fn cylinder_edges(out: &mut Vec<LineVertex>, shape: &Shape, color: [f32; 3]) {
    let Shape::Cylinder {
        center,
        axis,
        radius,
        length,
        ..
    } = shape
    else {
        return;
    };
    let a = crate::scene::unit(*axis);
    let a = Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32);
    let c = Vec3::new(center.0 as f32, center.1 as f32, center.2 as f32);
    let u = a.any_orthonormal_vector();
    let v = a.cross(u);
    let (r, half) = (*radius as f32, 0.5 * *length as f32);
    for end in [-half, half] {
        circle(out, c + end * a, r, (u, v), color);
    }
    for w in [u, v, -u, -v] {
        seg(out, c - half * a + r * w, c + half * a + r * w, color);
    }
}

/// The rigid bodies where they are now: boxes as their 12 edges, spheres as three great
/// circles turning with them (a slice's bodies are prisms and cylinders across its depth).
pub fn body_lines(set: &crate::sim::bodies::BodySet) -> Vec<LineVertex> {
    use crate::sim::bodies::Solid;
    let mut out = Vec::new();
    let color = [0.3, 0.85, 0.95];
    for b in &set.bodies {
        let c = b.position.as_vec3();
        let q = b.orientation.as_quat();
        let axes = [q * Vec3::X, q * Vec3::Y, q * Vec3::Z];
        match b.solid {
            Solid::Box { half } => {
                let mut half = half.as_vec3();
                if set.slice {
                    half.z = 0.5 * set.domain.z as f32;
                }
                oriented_box_edges(&mut out, |k| c + q * ((2.0 * k - Vec3::ONE) * half), color);
            }
            Solid::Sphere { radius } => {
                sphere_circles(&mut out, c, radius as f32, axes, color);
            }
        }
    }
    out
}

/// The colour of the scene's own solids: their outlines here, mesh solids' shading in
/// src/render/bodies.rs.
pub const SOLID_COLOR: [f32; 3] = [0.95, 0.6, 0.2];

/// Most segments a mesh solid's outline draws; a mesh whose feature edges are more is drawn
/// as its bounding box.
const MAX_OUTLINE_SEGMENTS: usize = 200_000;

/// A mesh solid's outline: in a slice, where the slice's mid-depth plane cuts its triangles;
/// in 3D, its feature edges (where the faces meet at more than 30 degrees, and open edges),
/// or its bounding box when those are too many.
pub fn mesh_outline(
    out: &mut Vec<LineVertex>,
    mesh: &crate::scene::mesh::SolidMesh,
    slice_z: Option<f64>,
    color: [f32; 3],
) {
    use glam::DVec3;
    let m = &mesh.mesh;
    let corner = |t: &[u32; 3], k: usize| DVec3::from(m.vertices[t[k] as usize]);
    let mut segs: Vec<(DVec3, DVec3)> = Vec::new();
    if let Some(z) = slice_z {
        for t in &m.triangles {
            let p: [DVec3; 3] = std::array::from_fn(|k| corner(t, k));
            // A corner on the plane counts as above it, so no crossing is counted twice.
            let above = p.map(|v| v.z >= z);
            let mut cut = Vec::new();
            for k in 0..3 {
                let (a, b) = (p[k], p[(k + 1) % 3]);
                if above[k] != above[(k + 1) % 3] {
                    cut.push(a + (b - a) * ((z - a.z) / (b.z - a.z)));
                }
            }
            if let [a, b] = cut[..] {
                segs.push((a, b));
            }
        }
    } else {
        let mut edges: std::collections::HashMap<(u32, u32), Vec<DVec3>> = Default::default();
        for t in &m.triangles {
            let p: [DVec3; 3] = std::array::from_fn(|k| corner(t, k));
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                edges.entry((a.min(b), a.max(b))).or_default().push(n);
            }
        }
        let sharp = 30f64.to_radians().cos();
        for ((a, b), normals) in &edges {
            let feature = match normals[..] {
                [n1, n2] => n1.dot(n2) < sharp,
                _ => true,
            };
            if feature {
                segs.push((
                    DVec3::from(m.vertices[*a as usize]),
                    DVec3::from(m.vertices[*b as usize]),
                ));
            }
        }
        // The map's order is arbitrary: sort, so the lines are the same every time.
        segs.sort_by(|x, y| {
            (x.0.to_array(), x.1.to_array())
                .partial_cmp(&(y.0.to_array(), y.1.to_array()))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        if segs.len() > MAX_OUTLINE_SEGMENTS {
            let (lo, hi) = mesh.bounds;
            box_edges(
                out,
                DVec3::from(lo).as_vec3(),
                DVec3::from(hi).as_vec3(),
                color,
            );
            return;
        }
    }
    for (a, b) in segs {
        seg(out, a.as_vec3(), b.as_vec3(), color);
    }
}

/// Domain box and solids (boxes as edges, spheres as three great circles, meshes as their
/// outlines).
pub fn scene_lines(scene: &Scene) -> Vec<LineVertex> {
    let mut out = Vec::new();
    let d = scene.domain_size();
    box_edges(
        &mut out,
        Vec3::ZERO,
        Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32),
        [0.7, 0.7, 0.75],
    );
    let solid = SOLID_COLOR;
    let slice_z = (scene.kind == crate::scene::SceneKind::Smoke).then_some(0.5 * d[2]);
    for s in &scene.solids {
        match s {
            // A keyframed mesh moves: it is drawn shaded where its path puts it.
            Shape::Mesh {
                loaded, keyframes, ..
            } => {
                if let Some(m) = loaded.get().filter(|_| keyframes.is_empty()) {
                    mesh_outline(&mut out, m, slice_z, solid);
                }
            }
            other => shape_lines(&mut out, other, solid),
        }
    }
    // Inflow blue, outflow red: emitters, drains, and the open sides' removal layer.
    for (shapes, color) in [
        (
            scene.emitters.iter().map(|e| &e.shape).collect::<Vec<_>>(),
            EMITTER_COLOR,
        ),
        (scene.drains.iter().map(|d| &d.shape).collect(), DRAIN_COLOR),
    ] {
        for s in shapes {
            shape_lines(&mut out, s, color);
        }
    }
    let h = scene.h() as f32;
    for side in &scene.open_sides {
        let (a, far) = side.axis();
        let mut lo = Vec3::ZERO;
        let mut hi = Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32);
        if far {
            lo[a] = hi[a] - h;
        } else {
            hi[a] = h;
        }
        box_edges(&mut out, lo, hi, DRAIN_COLOR);
    }
    probe_lines(&mut out, scene);
    out
}

/// The colour of the probes' markers.
pub const PROBE_COLOR: [f32; 3] = [1.0, 0.85, 0.2];

/// The probes where they sample: a cross at a point (a cell across), a gauge's vertical
/// line, a square on a sensor's wall as wide as its disc (a force probe's solid is drawn
/// already). Read from the scene's probes directly: the lines are rebuilt as bodies move,
/// and the probes' plan would voxelise the solids each time.
fn probe_lines(out: &mut Vec<LineVertex>, scene: &Scene) {
    use crate::scene::probes::ProbeSpec;
    let h = scene.h() as f32;
    let top = scene.domain_size()[1] as f32;
    let mut seg = |a: Vec3, b: Vec3| {
        for pos in [a, b] {
            out.push(LineVertex {
                pos: pos.into(),
                color: PROBE_COLOR,
            });
        }
    };
    let vec = |q: [f64; 3]| Vec3::new(q[0] as f32, q[1] as f32, q[2] as f32);
    for probe in &scene.probes {
        match probe {
            ProbeSpec::Point { at, .. } => {
                let p = vec(scene.probe_point(*at));
                for a in 0..3 {
                    let mut d = Vec3::ZERO;
                    d[a] = 0.5 * h;
                    seg(p - d, p + d);
                }
            }
            ProbeSpec::Gauge { x, z, .. } => {
                let (x, z) = (*x as f32, z.unwrap_or(0.0) as f32);
                seg(Vec3::new(x, 0.0, z), Vec3::new(x, top, z));
            }
            ProbeSpec::Sensor { at, radius, .. } => {
                let q = scene.probe_point(*at);
                let Some((axis, _, _)) = scene.sensor_wall(q) else {
                    continue;
                };
                let p = vec(q);
                let r = (*radius as f32).max(0.25 * h);
                let (t1, t2) = ((axis + 1) % 3, (axis + 2) % 3);
                let corner = |(s1, s2): (f32, f32)| {
                    let mut c = p;
                    c[t1] += s1 * r;
                    c[t2] += s2 * r;
                    c
                };
                let square = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
                for k in 0..4 {
                    seg(corner(square[k]), corner(square[(k + 1) % 4]));
                }
            }
            ProbeSpec::Force { .. } => {}
        }
    }
}

/// Colours of the emitters' outlines, and of the drains' and open sides'.
pub const EMITTER_COLOR: [f32; 3] = [0.3, 0.55, 1.0];
pub const DRAIN_COLOR: [f32; 3] = [0.95, 0.3, 0.3];

/// A box's edges, a sphere's three great circles, a cylinder's outline (a mesh: nothing;
/// `mesh_outline` draws it).
fn shape_lines(out: &mut Vec<LineVertex>, s: &Shape, color: [f32; 3]) {
    match s {
        Shape::Box { min, max, .. } => box_edges(
            out,
            Vec3::new(min.0 as f32, min.1 as f32, min.2 as f32),
            Vec3::new(max.0 as f32, max.1 as f32, max.2 as f32),
            color,
        ),
        Shape::Sphere { center, radius, .. } => sphere_circles(
            out,
            Vec3::new(center.0 as f32, center.1 as f32, center.2 as f32),
            *radius as f32,
            [Vec3::X, Vec3::Y, Vec3::Z],
            color,
        ),
        other => cylinder_edges(out, other, color),
    }
}

/// Arrows of the cell-centre velocity (average of the two faces per component) on the
/// cells of plane `index` along `axis`, scaled so that `max_len` metres is the largest.
pub fn velocity_arrows(
    u: &FieldData,
    v: &FieldData,
    w: &FieldData,
    h: f32,
    axis: usize,
    index: u32,
    max_len: f32,
) -> Vec<LineVertex> {
    let n = [v.dims[0], u.dims[1], u.dims[2]];
    let index = index.min(n[axis] - 1);
    let mut cells = Vec::new();
    let mut vmax = 0.0f32;
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                if [i, j, k][axis] != index {
                    continue;
                }
                let vel = Vec3::new(
                    0.5 * (u.get(i, j, k) + u.get(i + 1, j, k)),
                    0.5 * (v.get(i, j, k) + v.get(i, j + 1, k)),
                    0.5 * (w.get(i, j, k) + w.get(i, j, k + 1)),
                );
                vmax = vmax.max(vel.length());
                cells.push((
                    Vec3::new(i as f32 + 0.5, j as f32 + 0.5, k as f32 + 0.5) * h,
                    vel,
                ));
            }
        }
    }
    let mut out = Vec::new();
    if vmax <= 0.0 || !vmax.is_finite() {
        return out;
    }
    let scale = max_len / vmax;
    for (p, vel) in cells {
        let tip = p + vel * scale;
        seg(&mut out, p, tip, [1.0, 1.0, 1.0]);
        // A small head: two short strokes back from the tip.
        let dir = vel.normalize_or_zero();
        let side = dir.any_orthogonal_vector().normalize_or_zero();
        let back = tip - dir * (vel.length() * scale * 0.3);
        seg(
            &mut out,
            tip,
            back + side * (vel.length() * scale * 0.15),
            [1.0, 1.0, 1.0],
        );
        seg(
            &mut out,
            tip,
            back - side * (vel.length() * scale * 0.15),
            [1.0, 1.0, 1.0],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mesh_solid_is_outlined_by_its_cut_in_a_slice_and_its_edges_in_3d() {
        use crate::scene::mesh::MeshBase;
        let smoke = crate::scene::shipped::find("smoke_mesh_obstacle")
            .unwrap()
            .scene()
            .unwrap();
        let lines = scene_lines(&smoke);
        let cut: Vec<&[LineVertex]> = lines
            .chunks_exact(2)
            .filter(|s| s[0].color == SOLID_COLOR)
            .collect();
        assert!(cut
            .iter()
            .flat_map(|s| s.iter())
            .all(|v| (v.pos[2] - 0.01).abs() < 1e-6));
        // The pier's plan, 0.8 times its perimeter (half-disc, straight sides, wedge, tip).
        let length: f32 = cut
            .iter()
            .map(|s| (Vec3::from(s[1].pos) - Vec3::from(s[0].pos)).length())
            .sum();
        assert!((length - 0.95).abs() < 0.02, "{length}");
        let liquid = Scene::parse_with(
            "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8), \
             fluid: [Box(min: (0, 0, 0), max: (0.2, 0.2, 0.2))], \
             solids: [Mesh(path: \"meshes/pillar.obj\", translation: (0.5, 0.0, 0.5))])",
            std::path::Path::new("t.ron"),
            &MeshBase::Shipped,
        )
        .unwrap();
        let edges = scene_lines(&liquid).len() / 2 - 12;
        // Top and bottom outlines (96 edges each), the nose's two creases and the tail's
        // two seams where the straight sides meet the half-disc are sharper than 30 degrees;
        // the smooth sides are not drawn.
        assert!((192..260).contains(&edges), "{edges}");
    }

    #[test]
    fn emitters_drains_and_open_sides_are_outlined_in_their_colours() {
        let scene: Scene = ron::from_str(
            "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8),
              fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.2, 1.0))],
              emitters: [(shape: Box(min: (0.0, 0.5, 0.0), max: (0.2, 0.7, 0.2), velocity: (1.0, 0.0, 0.0)))],
              drains: [(shape: Sphere(center: (0.5, 0.0, 0.5), radius: 0.1))],
              open_sides: [x_max])",
        )
        .unwrap();
        let lines = scene_lines(&scene);
        let count = |c: [f32; 3]| lines.iter().filter(|v| v.color == c).count() / 2;
        assert_eq!(count(EMITTER_COLOR), 12);
        // Three great circles of 48 segments, and the open side's layer box.
        assert_eq!(count(DRAIN_COLOR), 3 * 48 + 12);
        let layer: Vec<_> = lines.iter().filter(|v| v.color == DRAIN_COLOR).collect();
        assert!(layer.iter().any(|v| (v.pos[0] - 0.875).abs() < 1e-6));
    }

    #[test]
    fn domain_box_has_twelve_edges() {
        let s = Scene::default();
        let l = scene_lines(&s);
        assert_eq!(l.len(), 24);
        assert!(l
            .iter()
            .all(|v| v.pos.iter().all(|x| (0.0..=1.0).contains(x))));
    }
}
