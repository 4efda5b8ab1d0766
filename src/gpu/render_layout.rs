//! Bind-group layouts of render pipelines, read from their shaders with naga, and bind
//! groups made by WGSL name: the render side's counterpart of [`super::Kernel::bind`].
//!
//! Each binding is visible to exactly the stages whose entry points use it (naga's analysis
//! of the shader), so a layout never has to be kept in step with a shader by hand.

use super::wgsl::Wgsl;

/// One global of bind group 0.
#[derive(Clone, Debug, PartialEq)]
struct Global {
    name: String,
    binding: u32,
    ty: wgpu::BindingType,
    visibility: wgpu::ShaderStages,
}

/// The bind group 0 of one or more render shaders drawn with the same bind groups.
pub struct RenderLayout {
    label: String,
    layout: wgpu::BindGroupLayout,
    globals: Vec<Global>,
}

fn binding_type(path: &str, module: &naga::Module, gv: &naga::GlobalVariable) -> wgpu::BindingType {
    let name = gv.name.as_deref().unwrap_or("");
    let buffer = |ty| wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    match gv.space {
        naga::AddressSpace::Uniform => buffer(wgpu::BufferBindingType::Uniform),
        naga::AddressSpace::Storage { access } => buffer(wgpu::BufferBindingType::Storage {
            read_only: !access.contains(naga::StorageAccess::STORE),
        }),
        naga::AddressSpace::Handle => match module.types[gv.ty].inner {
            naga::TypeInner::Image {
                dim: naga::ImageDimension::D2,
                arrayed: false,
                class:
                    naga::ImageClass::Sampled {
                        kind: naga::ScalarKind::Float,
                        multi,
                    },
            } => wgpu::BindingType::Texture {
                // eddy's render shaders read textures with textureLoad, never a sampler.
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: multi,
            },
            ref other => panic!("{path}: binding {name}: unsupported handle type {other:?}"),
        },
        other => panic!("{path}: binding {name} in address space {other:?}"),
    }
}

/// The globals of bind group 0 of `shader`, each visible to the stages that use it.
fn reflect(shader: Wgsl) -> Vec<Global> {
    let path = shader.path();
    let source = shader.expand();
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{path}: {}", e.emit_to_string(&source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{path}: {}", e.emit_to_string(&source)));
    module
        .global_variables
        .iter()
        .filter_map(|(handle, gv)| {
            let rb = gv.binding.as_ref()?;
            assert_eq!(
                rb.group, 0,
                "{path}: eddy's render shaders bind group 0 only"
            );
            let mut visibility = wgpu::ShaderStages::NONE;
            for (i, ep) in module.entry_points.iter().enumerate() {
                if !info.get_entry_point(i)[handle].is_empty() {
                    visibility |= match ep.stage {
                        naga::ShaderStage::Vertex => wgpu::ShaderStages::VERTEX,
                        naga::ShaderStage::Fragment => wgpu::ShaderStages::FRAGMENT,
                        _ => wgpu::ShaderStages::COMPUTE,
                    };
                }
            }
            Some(Global {
                name: gv.name.clone().unwrap_or_default(),
                binding: rb.binding,
                ty: binding_type(&path, &module, gv),
                visibility,
            })
        })
        .collect()
}

impl RenderLayout {
    /// The bind-group layout that `shaders` declare. Several shaders drawn with the same
    /// bind groups must agree on each name's binding number and type; a binding is visible
    /// to every stage that uses it in any of them.
    pub fn new(device: &wgpu::Device, label: &str, shaders: &[Wgsl]) -> Self {
        let mut globals: Vec<Global> = Vec::new();
        for shader in shaders {
            for g in reflect(*shader) {
                match globals.iter_mut().find(|o| o.binding == g.binding) {
                    Some(o) => {
                        assert!(
                            o.name == g.name && o.ty == g.ty,
                            "{label}: {} declares binding {} as {} {:?}, another shader as {} {:?}",
                            shader.path(),
                            g.binding,
                            g.name,
                            g.ty,
                            o.name,
                            o.ty
                        );
                        o.visibility |= g.visibility;
                    }
                    None => globals.push(g),
                }
            }
        }
        globals.sort_by_key(|g| g.binding);
        let entries: Vec<wgpu::BindGroupLayoutEntry> = globals
            .iter()
            .map(|g| wgpu::BindGroupLayoutEntry {
                binding: g.binding,
                visibility: g.visibility,
                ty: g.ty,
                count: None,
            })
            .collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &entries,
        });
        Self {
            label: label.to_string(),
            layout,
            globals,
        }
    }

    pub fn layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// A bind group from `(WGSL name, resource)` pairs. Panics unless every global of the
    /// layout is given exactly once, by its name.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        label: &str,
        resources: &[(&str, wgpu::BindingResource<'_>)],
    ) -> wgpu::BindGroup {
        let given: Vec<&str> = resources.iter().map(|(n, _)| *n).collect();
        super::kernel::check_names(
            &self.label,
            self.globals.iter().map(|g| g.name.as_str()),
            &given,
        );
        let entries: Vec<wgpu::BindGroupEntry> = self
            .globals
            .iter()
            .map(|g| {
                let (_, resource) = resources
                    .iter()
                    .find(|(n, _)| *n == g.name)
                    .unwrap_or_else(|| panic!("{}: binding {} not given", self.label, g.name));
                wgpu::BindGroupEntry {
                    binding: g.binding,
                    resource: resource.clone(),
                }
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.layout,
            entries: &entries,
        })
    }
}
