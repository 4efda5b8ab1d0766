//! Rigid bodies as shaded solids (bodies.wgsl): one unit triangle mesh per
//! shape (a box with flat faces, a UV sphere with smooth normals), drawn instanced with one
//! instance per body: its model matrix (rotation, half extents or radius, centre; from the
//! body's f64 state) and a colour that says how it moves. They are drawn in the scene pass,
//! depth-tested with the particles, and the liquid surface composites against that depth,
//! so a body half in the liquid shows half under it.
//!
//! A smoke slice's bodies (prisms and cylinders across the slice) are drawn as outlines
//! only ([`super::lines::body_lines`]); here a slice's set draws nothing.

use super::scene_pipeline;
use crate::gpu::RenderLayout;
use crate::scene::motion::Keyframe;
use crate::scene::BodyMotion;
use crate::sim::bodies::{BodySet, RigidBody, Solid};
use bytemuck::{Pod, Zeroable};
use glam::{DMat4, DQuat, DVec3, Mat4, Vec3};
use wgpu::util::DeviceExt;

/// A mesh vertex: position and outward unit normal.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MeshVertex {
    pub pos: [f32; 3],
    pub normal: [f32; 3],
}

/// An indexed triangle mesh, counter-clockwise seen from outside.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    pub vertices: Vec<MeshVertex>,
    pub indices: Vec<u32>,
}

impl Mesh {
    /// Each triangle's three corners.
    pub fn triangles(&self) -> impl Iterator<Item = [Vec3; 3]> + '_ {
        self.indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]].map(|i| Vec3::from(self.vertices[i as usize].pos)))
    }
}

/// The box [-1, 1]^3: four vertices per face, all with the face's normal (flat shading), two
/// triangles per face.
pub fn box_mesh() -> Mesh {
    let mut m = Mesh::default();
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut n = Vec3::ZERO;
            n[axis] = sign;
            // Two in-face axes with a x b = n, so (a, b) turn counter-clockwise seen from n.
            let mut a = Vec3::ZERO;
            a[(axis + 1) % 3] = 1.0;
            let b = n.cross(a);
            let base = m.vertices.len() as u32;
            for (s, t) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                m.vertices.push(MeshVertex {
                    pos: (n + a * s + b * t).into(),
                    normal: n.into(),
                });
            }
            m.indices
                .extend([0, 1, 2, 0, 2, 3].into_iter().map(|k| base + k));
        }
    }
    m
}

/// The unit sphere as `stacks` rings of latitude (poles included) by `slices` meridians;
/// each vertex's normal is its position.
pub fn sphere_mesh(stacks: u32, slices: u32) -> Mesh {
    let (stacks, slices) = (stacks.max(2), slices.max(3));
    let point = |i: u32, j: u32| {
        let theta = std::f32::consts::PI * i as f32 / stacks as f32;
        let phi = std::f32::consts::TAU * (j % slices) as f32 / slices as f32;
        Vec3::new(
            theta.sin() * phi.cos(),
            theta.cos(),
            theta.sin() * phi.sin(),
        )
    };
    let mut m = Mesh::default();
    let mut push = |p: Vec3| {
        m.vertices.push(MeshVertex {
            pos: p.into(),
            normal: p.into(),
        });
    };
    // Vertex 0 the north pole, then rings 1..stacks-1 of `slices` each, then the south pole.
    push(Vec3::Y);
    for i in 1..stacks {
        for j in 0..slices {
            push(point(i, j));
        }
    }
    push(-Vec3::Y);
    let south = 1 + (stacks - 1) * slices;
    let ring = |i: u32, j: u32| 1 + (i - 1) * slices + j % slices;
    for j in 0..slices {
        m.indices.extend([0, ring(1, j + 1), ring(1, j)]);
        m.indices
            .extend([ring(stacks - 1, j), ring(stacks - 1, j + 1), south]);
        for i in 1..stacks - 1 {
            let (u0, u1) = (ring(i, j), ring(i, j + 1));
            let (l0, l1) = (ring(i + 1, j), ring(i + 1, j + 1));
            m.indices.extend([u0, u1, l0, u1, l1, l0]);
        }
    }
    m
}

/// Resolution of the sphere mesh: 16 x 32 keeps a body's silhouette round at a full-window
/// size for 1 k triangles.
const SPHERE_STACKS: u32 = 16;
const SPHERE_SLICES: u32 = 32;

/// Colours (sRGB) by how a body moves; the grabbed body's overrides them.
pub const DYNAMIC_COLOR: [f32; 3] = [0.86, 0.56, 0.30];
pub const KINEMATIC_COLOR: [f32; 3] = [0.42, 0.78, 0.40];
pub const FIXED_COLOR: [f32; 3] = [0.56, 0.58, 0.64];
pub const GRABBED_COLOR: [f32; 3] = [1.0, 0.9, 0.35];

/// The colour of a body moving as `motion`, `grabbed` or not.
pub fn body_color(motion: BodyMotion, grabbed: bool) -> [f32; 3] {
    match (grabbed, motion) {
        (true, _) => GRABBED_COLOR,
        (false, BodyMotion::Dynamic) => DYNAMIC_COLOR,
        (false, BodyMotion::Kinematic) => KINEMATIC_COLOR,
        (false, BodyMotion::Fixed) => FIXED_COLOR,
    }
}

/// Direction towards the bodies' light (world space; the particles light their view-space
/// normals with the same vector, so their light turns with the camera).
pub fn light_dir() -> Vec3 {
    Vec3::new(0.4, 0.8, 0.6).normalize()
}

/// The linear colour the shader gives a body of sRGB colour `color` where its outward normal
/// is `normal`: ambient plus diffuse (the host's copy of render_bodies.wgsl's `fs`).
pub fn body_shade(color: [f32; 3], normal: Vec3) -> [f32; 3] {
    let k = 0.35 + 0.65 * normal.normalize().dot(light_dir()).max(0.0);
    color.map(|c| c.powf(2.2) * k)
}

/// One body's instance: the columns of its model matrix (unit mesh to world) and its
/// colour (sRGB, alpha unused).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BodyInstance {
    pub model: [[f32; 4]; 4],
    pub color: [f32; 4],
}

/// The model matrix that puts the unit mesh of `body`'s shape where the body is: scaled to
/// its half extents (box) or radius (sphere), turned by its orientation, at its centre.
/// Built in f64 and rounded once.
pub fn model_matrix(body: &RigidBody) -> Mat4 {
    let scale = match body.solid {
        Solid::Box { half } => half,
        Solid::Sphere { radius } => DVec3::splat(radius),
    };
    DMat4::from_scale_rotation_translation(scale, body.orientation, body.position).as_mat4()
}

/// The instances of `set`'s boxes and spheres (in that order of the pair), body `grabbed`
/// highlighted. A slice's bodies have none (they are drawn as outlines).
pub fn body_instances(
    set: &BodySet,
    grabbed: Option<usize>,
) -> (Vec<BodyInstance>, Vec<BodyInstance>) {
    let (mut boxes, mut spheres) = (vec![], vec![]);
    if set.slice {
        return (boxes, spheres);
    }
    for (i, b) in set.bodies.iter().enumerate() {
        let c = body_color(b.motion, grabbed == Some(i));
        let inst = BodyInstance {
            model: model_matrix(b).to_cols_array_2d(),
            color: [c[0], c[1], c[2], 1.0],
        };
        match b.solid {
            Solid::Box { .. } => boxes.push(inst),
            Solid::Sphere { .. } => spheres.push(inst),
        }
    }
    (boxes, spheres)
}

/// The scene's mesh solids as one mesh in world coordinates, flat-shaded (three vertices
/// per triangle, each with its face's outward normal; a mesh wound inside out is turned
/// round), drawn as one instance with the identity matrix. A slice's are none: its solids
/// show as outlines ([`super::lines::mesh_outline`]).
pub fn scene_solid_mesh(scene: &crate::scene::Scene) -> Mesh {
    let mut m = Mesh::default();
    if scene.kind == crate::scene::SceneKind::Smoke {
        return m;
    }
    // Keyframed meshes move: `moving_solids` draws them.
    for s in scene.solids.iter().filter(|s| s.keyframes().is_empty()) {
        if let Some(solid) = s.solid_mesh() {
            append_flat(&mut m, &solid.mesh);
        }
    }
    m
}

/// The scene's keyframed mesh solids, each a flat-shaded mesh as placed at t = 0 with its
/// path (drawn with [`moving_instance`]).
pub fn moving_solids(scene: &crate::scene::Scene) -> Vec<(Mesh, Vec<Keyframe>)> {
    scene
        .solids
        .iter()
        .filter(|s| !s.keyframes().is_empty())
        .filter_map(|s| {
            let solid = s.solid_mesh()?;
            let mut m = Mesh::default();
            append_flat(&mut m, &solid.mesh);
            Some((m, s.keyframes().to_vec()))
        })
        .collect()
}

/// The instance that moves a keyframed mesh from where it is at t = 0 to where its path
/// puts it at `t`: pose(t) pose(0)^-1, in the scene solids' colour.
pub fn moving_instance(keys: &[Keyframe], t: f64) -> BodyInstance {
    let pose = |t: f64| {
        let (r, x) = crate::scene::motion::pose_at(keys, t);
        let q = DQuat::from_rotation_z(r.2.to_radians())
            * DQuat::from_rotation_y(r.1.to_radians())
            * DQuat::from_rotation_x(r.0.to_radians());
        DMat4::from_rotation_translation(q.normalize(), DVec3::new(x.0, x.1, x.2))
    };
    let mut i = scene_solid_instance();
    i.model = (pose(t) * pose(0.0).inverse()).as_mat4().to_cols_array_2d();
    i
}

/// Appends `mesh`'s triangles, each with its own flat normal facing out.
fn append_flat(m: &mut Mesh, mesh: &crate::scene::mesh::TriMesh) {
    let flip = mesh.signed_volume() < 0.0;
    for t in &mesh.triangles {
        let mut p = t.map(|i| DVec3::from(mesh.vertices[i as usize]));
        if flip {
            p.swap(1, 2);
        }
        let n = (p[1] - p[0])
            .cross(p[2] - p[0])
            .normalize_or_zero()
            .as_vec3();
        let base = m.vertices.len() as u32;
        for v in p {
            m.vertices.push(MeshVertex {
                pos: v.as_vec3().into(),
                normal: n.into(),
            });
        }
        m.indices.extend([base, base + 1, base + 2]);
    }
}

/// The instance that draws [`scene_solid_mesh`]: the identity, in the scene solids' colour.
pub fn scene_solid_instance() -> BodyInstance {
    let c = super::lines::SOLID_COLOR;
    BodyInstance {
        model: Mat4::IDENTITY.to_cols_array_2d(),
        color: [c[0], c[1], c[2], 1.0],
    }
}

/// Mirror of `View` in bodies.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BodyView {
    view_proj: [[f32; 4]; 4],
    cut_plane: [f32; 4],
    cut: u32,
    _pad: [u32; 3],
}
const _: () = assert!(std::mem::size_of::<BodyView>() == 96);
crate::wgsl_mirror!(body_view_layout: BodyView = "bodies.wgsl" View {
    view_proj: view_proj,
    cut_plane: cut_plane,
    cut: cut,
    _pad0: _pad[0],
    _pad1: _pad[1],
    _pad2: _pad[2],
});

/// A mesh on the device and its instances.
struct GpuMesh {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    count: u32,
    instances: Option<(wgpu::Buffer, u32)>,
}

impl GpuMesh {
    fn new(device: &wgpu::Device, label: &str, mesh: &Mesh) -> Self {
        let init = |what: &str, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(&format!("Render::bodies_{label}_{what}")),
                contents,
                usage,
            })
        };
        Self {
            vertices: init(
                "vertices",
                bytemuck::cast_slice(&mesh.vertices),
                wgpu::BufferUsages::VERTEX,
            ),
            indices: init(
                "indices",
                bytemuck::cast_slice(&mesh.indices),
                wgpu::BufferUsages::INDEX,
            ),
            count: mesh.indices.len() as u32,
            instances: None,
        }
    }

    fn set(&mut self, device: &wgpu::Device, instances: &[BodyInstance]) {
        self.instances = (!instances.is_empty()).then(|| {
            let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("Render::body_instances"),
                contents: bytemuck::cast_slice(instances),
                usage: wgpu::BufferUsages::VERTEX,
            });
            (buf, instances.len() as u32)
        });
    }

    fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some((inst, n)) = &self.instances {
            pass.set_vertex_buffer(0, self.vertices.slice(..));
            pass.set_vertex_buffer(1, inst.slice(..));
            pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..self.count, 0, 0..*n);
        }
    }
}

/// The body pipeline, its two meshes and their instances.
pub(super) struct BodyPipeline {
    pipeline: wgpu::RenderPipeline,
    /// The same meshes into a depth buffer only (the liquid's depth and thickness passes).
    depth_pipeline: wgpu::RenderPipeline,
    group: wgpu::BindGroup,
    uniform: wgpu::Buffer,
    boxes: GpuMesh,
    spheres: GpuMesh,
    /// The scene's mesh solids (static: set with the scene).
    solids: Option<GpuMesh>,
    /// Its keyframed mesh solids, each with its path (moved by `set_solid_time`).
    moving: Vec<(GpuMesh, Vec<Keyframe>)>,
}

impl BodyPipeline {
    pub(super) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let layout = RenderLayout::new(device, "Render::bodies", &[crate::wgsl!("bodies.wgsl")]);
        let vertex_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
        let instance_attrs = wgpu::vertex_attr_array![
            2 => Float32x4, 3 => Float32x4, 4 => Float32x4, 5 => Float32x4, 6 => Float32x4
        ];
        let buffers = [
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<MeshVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &vertex_attrs,
            }),
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<BodyInstance>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &instance_attrs,
            }),
        ];
        let pipeline = scene_pipeline(
            device,
            format,
            "Render::bodies",
            crate::wgsl!("bodies.wgsl"),
            &layout,
            &buffers,
            wgpu::PrimitiveTopology::TriangleList,
            true,
        );
        let module = crate::gpu::shader_module(device, crate::wgsl!("bodies.wgsl"));
        let depth_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("Render::bodies_depth"),
            bind_group_layouts: &[Some(layout.layout())],
            immediate_size: 0,
        });
        let depth_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("Render::bodies_depth"),
            layout: Some(&depth_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleList,
                ..Default::default()
            },
            depth_stencil: Some(super::depth_state(true)),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_depth"),
                compilation_options: Default::default(),
                targets: &[],
            }),
            multiview_mask: None,
            cache: None,
        });
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Render::body_view"),
            size: std::mem::size_of::<BodyView>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = layout.bind(
            device,
            "Render::bodies",
            &[("u", uniform.as_entire_binding())],
        );
        Self {
            pipeline,
            depth_pipeline,
            group,
            uniform,
            boxes: GpuMesh::new(device, "box", &box_mesh()),
            spheres: GpuMesh::new(device, "sphere", &sphere_mesh(SPHERE_STACKS, SPHERE_SLICES)),
            solids: None,
            moving: Vec::new(),
        }
    }

    /// Uploads the scene's mesh solids (none for a scene without, or a slice).
    pub(super) fn set_scene_solids(&mut self, device: &wgpu::Device, scene: &crate::scene::Scene) {
        let mesh = scene_solid_mesh(scene);
        self.solids = (!mesh.indices.is_empty()).then(|| {
            let mut g = GpuMesh::new(device, "scene_solids", &mesh);
            g.set(device, &[scene_solid_instance()]);
            g
        });
        self.moving = moving_solids(scene)
            .into_iter()
            .map(|(m, keys)| (GpuMesh::new(device, "moving_solid", &m), keys))
            .collect();
        self.set_solid_time(device, 0.0);
    }

    /// Puts the keyframed mesh solids where their paths are at time `t`.
    pub(super) fn set_solid_time(&mut self, device: &wgpu::Device, t: f64) {
        for (g, keys) in &mut self.moving {
            g.set(device, &[moving_instance(keys, t)]);
        }
    }

    /// Uploads the bodies of `set` (none when `None`), body `grabbed` highlighted.
    pub(super) fn set(
        &mut self,
        device: &wgpu::Device,
        set: Option<&BodySet>,
        grabbed: Option<usize>,
    ) {
        let (boxes, spheres) = set.map(|s| body_instances(s, grabbed)).unwrap_or_default();
        self.boxes.set(device, &boxes);
        self.spheres.set(device, &spheres);
    }

    /// Writes the camera and the shown slice's cut plane (`cut`: a SLICE_CUT_* code).
    pub(super) fn write(&self, queue: &wgpu::Queue, view_proj: Mat4, plane: [f32; 4], cut: u32) {
        queue.write_buffer(
            &self.uniform,
            0,
            bytemuck::bytes_of(&BodyView {
                view_proj: view_proj.to_cols_array_2d(),
                cut_plane: plane,
                cut,
                _pad: [0; 3],
            }),
        );
    }

    pub(super) fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.draw_with(pass, &self.pipeline);
    }

    /// The bodies' depth only, into a pass whose depth attachment is a [`DEPTH_FORMAT`]
    /// buffer and which has no colour attachment.
    ///
    /// [`DEPTH_FORMAT`]: super::DEPTH_FORMAT
    pub(super) fn draw_depth(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.draw_with(pass, &self.depth_pipeline);
    }

    fn draw_with(&self, pass: &mut wgpu::RenderPass<'_>, pipeline: &wgpu::RenderPipeline) {
        if self.boxes.instances.is_none()
            && self.spheres.instances.is_none()
            && self.solids.is_none()
            && self.moving.is_empty()
        {
            return;
        }
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        self.boxes.draw(pass);
        self.spheres.draw(pass);
        if let Some(s) = &self.solids {
            s.draw(pass);
        }
        for (g, _) in &self.moving {
            g.draw(pass);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{BodyShape, BodySpec, Scene};
    use std::collections::HashMap;

    fn normal(t: [Vec3; 3]) -> Vec3 {
        (t[1] - t[0]).cross(t[2] - t[0])
    }

    /// Positions rounded so that the same point from two triangles is one key.
    fn key(p: Vec3) -> [i64; 3] {
        (p * 1e5).round().as_i64vec3().to_array()
    }

    /// Every edge of `m` (by position) is used once in each direction: the surface is
    /// closed and consistently oriented. Returns the enclosed volume (divergence theorem).
    fn closed_volume(m: &Mesh) -> f32 {
        let mut edges: HashMap<([i64; 3], [i64; 3]), i32> = HashMap::new();
        let mut volume = 0.0;
        for t in m.triangles() {
            assert!(normal(t).length() > 0.0, "degenerate triangle {t:?}");
            for k in 0..3 {
                *edges.entry((key(t[k]), key(t[(k + 1) % 3]))).or_default() += 1;
            }
            volume += t[0].dot(t[1].cross(t[2])) / 6.0;
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "edge {a:?} -> {b:?} used {n} times");
            assert_eq!(
                edges.get(&(b, a)),
                Some(&1),
                "edge {a:?} -> {b:?} has no twin"
            );
        }
        volume
    }

    #[test]
    fn box_triangles_face_away_from_the_centre_with_flat_normals() {
        let m = box_mesh();
        assert_eq!(m.indices.len(), 36);
        for (t, idx) in m.triangles().zip(m.indices.chunks_exact(3)) {
            let n = normal(t).normalize();
            let centroid = (t[0] + t[1] + t[2]) / 3.0;
            // Outward: along the face's centroid (the cube's centre is the origin), and
            // exactly an axis.
            assert!(n.dot(centroid) > 0.99, "triangle {t:?} faces {n}");
            for &i in idx {
                assert_eq!(Vec3::from(m.vertices[i as usize].normal), n.round());
            }
        }
        let v = closed_volume(&m);
        assert!((v - 8.0).abs() < 1e-5, "volume {v}");
    }

    #[test]
    fn sphere_mesh_is_closed_with_outward_normals() {
        let m = sphere_mesh(SPHERE_STACKS, SPHERE_SLICES);
        for v in &m.vertices {
            let (p, n) = (Vec3::from(v.pos), Vec3::from(v.normal));
            assert!((p.length() - 1.0).abs() < 1e-6);
            assert!((n - p).length() < 1e-6);
        }
        for t in m.triangles() {
            let centroid = (t[0] + t[1] + t[2]) / 3.0;
            assert!(
                normal(t).dot(centroid) > 0.0,
                "triangle {t:?} faces inwards"
            );
        }
        // A closed polyhedron inscribed in the unit sphere: a little less than 4/3 pi.
        let v = closed_volume(&m);
        let sphere = 4.0 / 3.0 * std::f32::consts::PI;
        assert!(v < sphere && v > 0.97 * sphere, "volume {v} vs {sphere}");
    }

    #[test]
    fn instance_matrix_puts_the_mesh_where_the_body_is() {
        let spec = BodySpec {
            shape: BodyShape::Box {
                half_extents: (0.1, 0.05, 0.2),
            },
            center: (0.3, 0.6, 0.4),
            density: 500.0,
            velocity: (0.0, 0.0, 0.0),
            angular_velocity: (0.0, 0.0, 0.0),
            rotation_deg: (30.0, -20.0, 50.0),
            restitution: 0.5,
            friction: 0.4,
            motion: BodyMotion::Dynamic,
        };
        let mut sphere = spec.clone();
        sphere.shape = BodyShape::Sphere { radius: 0.12 };
        sphere.center = (0.7, 0.3, 0.6);
        sphere.motion = BodyMotion::Kinematic;
        let scene = Scene {
            bodies: vec![spec, sphere],
            ..Default::default()
        };
        let set = BodySet::from_scene(&scene).unwrap();
        let (boxes, spheres) = body_instances(&set, Some(1));
        assert_eq!((boxes.len(), spheres.len()), (1, 1));
        let b = &set.bodies[0];
        let Solid::Box { half } = b.solid else {
            unreachable!()
        };
        let m = Mat4::from_cols_array_2d(&boxes[0].model);
        // Every corner of the unit box lands on the body's corner, which the body itself
        // counts as inside (and a little further out, outside).
        for c in 0..8 {
            let s = DVec3::new(
                if c & 1 == 0 { -1.0 } else { 1.0 },
                if c & 2 == 0 { -1.0 } else { 1.0 },
                if c & 4 == 0 { -1.0 } else { 1.0 },
            );
            let world = b.position + b.orientation * (s * half);
            let got = m.transform_point3(s.as_vec3()).as_dvec3();
            assert!(
                (got - world).length() < 1e-6,
                "corner {s}: {got} vs {world}"
            );
            assert!(b.contains(b.position + (world - b.position) * 0.999, false));
            assert!(!b.contains(b.position + (world - b.position) * 1.001, false));
        }
        // Face normals turn with the body.
        let n = m.transform_vector3(Vec3::X).normalize().as_dvec3();
        assert!((n - b.orientation * DVec3::X).length() < 1e-6);
        let s = &set.bodies[1];
        let m = Mat4::from_cols_array_2d(&spheres[0].model);
        let top = m.transform_point3(Vec3::Y).as_dvec3();
        assert!((top - s.position).length() - 0.12 < 1e-6);
        assert!(((top - s.position).length() - 0.12).abs() < 1e-6);
        // Tints: the dynamic box, the grabbed (kinematic) sphere highlighted.
        assert_eq!(boxes[0].color[..3], DYNAMIC_COLOR);
        assert_eq!(spheres[0].color[..3], GRABBED_COLOR);
        let (_, spheres) = body_instances(&set, None);
        assert_eq!(spheres[0].color[..3], KINEMATIC_COLOR);
    }

    #[test]
    fn a_keyframed_mesh_is_drawn_where_its_path_puts_it() {
        let keys = [
            Keyframe {
                time: 0.0,
                translation: (0.2, 0.1, 0.3),
                rotation_deg: (0.0, 0.0, 0.0),
            },
            Keyframe {
                time: 2.0,
                translation: (0.6, 0.1, 0.3),
                rotation_deg: (0.0, 90.0, 0.0),
            },
        ];
        let at = |t: f64, p: Vec3| {
            Mat4::from_cols_array_2d(&moving_instance(&keys, t).model).transform_point3(p)
        };
        // The placed mesh's point 0.1 m ahead of the origin, at t = 0 and t = 2.
        let p = Vec3::new(0.3, 0.1, 0.3);
        assert!((at(0.0, p) - p).length() < 1e-6);
        // Turned 90 degrees about y (x goes to -z) and moved 0.4 m along x.
        assert!(
            (at(2.0, p) - Vec3::new(0.6, 0.1, 0.2)).length() < 1e-6,
            "{}",
            at(2.0, p)
        );
    }

    #[test]
    fn mesh_solids_are_one_flat_shaded_mesh_facing_out() {
        use crate::scene::mesh::MeshBase;
        let text = "(domain: (1.0, 1.0, 1.0), resolution: (8, 8, 8), \
             fluid: [Box(min: (0, 0, 0), max: (0.2, 0.2, 0.2))], \
             solids: [Box(min: (0.8, 0, 0), max: (1, 0.1, 0.1)), \
                      Mesh(path: \"meshes/pillar.obj\", translation: (0.5, 0.0, 0.5))])";
        let scene =
            Scene::parse_with(text, std::path::Path::new("t.ron"), &MeshBase::Shipped).unwrap();
        let m = scene_solid_mesh(&scene);
        assert_eq!((m.vertices.len(), m.indices.len()), (3 * 1344, 3 * 1344));
        let centre = Vec3::new(0.5, 0.5, 0.5);
        for (t, idx) in m.triangles().zip(m.indices.chunks_exact(3)) {
            let n = Vec3::from(m.vertices[idx[0] as usize].normal);
            assert!((n - normal(t).normalize()).length() < 1e-4);
            // The pier is convex: every face looks away from its axis.
            let c = (t[0] + t[1] + t[2]) / 3.0;
            let mut out = c - centre;
            if n.y.abs() < 0.5 {
                out.y = 0.0;
            }
            assert!(n.dot(out) > 0.0, "face at {c} looks {n}");
        }
        assert_eq!(
            scene_solid_instance().color[..3],
            crate::render::lines::SOLID_COLOR
        );
        // A slice draws its solids as outlines only.
        let smoke = crate::scene::shipped::find("smoke_mesh_obstacle")
            .unwrap()
            .scene()
            .unwrap();
        assert!(scene_solid_mesh(&smoke).indices.is_empty());
    }

    #[test]
    fn lit_faces_are_brighter_than_faces_turned_away() {
        let c = DYNAMIC_COLOR;
        let lit = body_shade(c, light_dir());
        let away = body_shade(c, -light_dir());
        for k in 0..3 {
            assert!((lit[k] - c[k].powf(2.2)).abs() < 1e-6);
            assert!((away[k] - 0.35 * c[k].powf(2.2)).abs() < 1e-6);
        }
        assert_ne!(body_color(BodyMotion::Fixed, false), DYNAMIC_COLOR);
        assert_ne!(body_color(BodyMotion::Kinematic, false), DYNAMIC_COLOR);
    }
}
