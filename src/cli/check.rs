//! `eddy check`: what a scene will do and need, without running it.

use super::*;

/// Above this many particles `eddy check` skips its CPU estimate of the first step's FLUID
/// cells (a reference P2G over every particle).
pub(crate) const FLUID_ESTIMATE_MAX_PARTICLES: usize = 4 << 20;

/// Warnings for a liquid scene: from its seeding, when it would simulate nothing, and
/// for its dynamic bodies too thin for the grid to float them faithfully.
pub(crate) fn scene_warnings(scene: &Scene) -> Vec<String> {
    if scene.kind != SceneKind::Liquid {
        return Vec::new();
    }
    let mut w = seeding_warnings(scene);
    if let Some(set) = eddy::sim::bodies::BodySet::from_scene(scene) {
        let h = scene.h();
        for (i, cells) in set.thin_bodies(h) {
            w.push(format!(
                "body {i} spans {cells:.1} cells across its thinnest side ({:.4} m, cells of \
                 {h:.4} m): under {} cells a floating body is under-resolved, and its rocking \
                 can grow instead of dying out; raise the resolution or make it larger",
                cells * h,
                eddy::sim::bodies::THIN_BODY_CELLS
            ));
        }
        for i in 0..set.bodies.len() {
            let Some(e) = set.settling(i, scene.viscosity) else {
                continue;
            };
            if let Some(why) = eddy::sim::bodies::viscous::coarse_drag(&e, h) {
                w.push(format!(
                    "body {i} settles at about {:.3} m/s (Re {:.2}, estimated): {why}; raise \
                     the resolution or make it larger",
                    e.speed, e.reynolds
                ));
            }
        }
    }
    w
}

/// Warnings for a liquid scene that would simulate nothing, from its seeding.
fn seeding_warnings(scene: &Scene) -> Vec<String> {
    let per_shape = scene.seeded_cells_per_shape();
    let mut w: Vec<String> = per_shape
        .iter()
        .enumerate()
        .filter(|(_, n)| **n == 0)
        .map(|(i, _)| {
            format!(
                "fluid[{i}] seeds no particles: it holds no cell centre outside the solids \
                 (or earlier fluid shapes); make it larger than a cell or move it out of the solids"
            )
        })
        .collect();
    if per_shape.iter().all(|n| *n == 0) {
        w.push("the scene seeds no particles at all: nothing will move".into());
    }
    w
}

/// FLUID cells the first substep will mark, estimated on the CPU with the f64 reference
/// (the GPU marks the same cells up to f32 rounding at the density threshold).
pub(crate) fn initial_fluid_cells(scene: &Scene, init: &InitialState) -> usize {
    use eddy::reference as r;
    let [nx, ny, nz] = scene.dims().map(|v| v as usize);
    let g = r::Grid {
        nx,
        ny,
        nz,
        h: scene.h(),
    };
    let pos: Vec<[f64; 3]> = init
        .positions
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let vel = vec![[0.0; 3]; pos.len()];
    let p2g = r::p2g(&g, &pos, &vel);
    let solid: Vec<bool> = init.solid.iter().map(|s| *s != 0).collect();
    r::mark_cells(
        &g,
        &p2g.count,
        &p2g.weight,
        &solid,
        scene.particles_per_cell as f64,
    )
    .iter()
    .filter(|t| **t == r::FLUID)
    .count()
}

/// One line per mesh solid: its file, triangles, bounds as placed, and its voxelisation on
/// the scene's grid (timed afresh, without the cache) with the SOLID cells it makes.
pub(crate) fn mesh_lines(scene: &Scene, warnings: &mut Vec<String>) -> Vec<String> {
    let h = scene.h();
    let hz = scene.domain.2 / scene.resolution.2 as f64;
    let mut out = Vec::new();
    for (i, s) in scene.solids.iter().enumerate() {
        let Some(m) = s.solid_mesh() else { continue };
        let start = std::time::Instant::now();
        let mask = m.compute_cell_mask(scene.dims(), [h, h, hz]);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let cells = mask.count();
        let (lo, hi) = m.bounds;
        let v = |p: [f64; 3]| format!("({:.4}, {:.4}, {:.4})", p[0], p[1], p[2]);
        let dropped = if m.mesh.dropped > 0 {
            format!(" ({} degenerate dropped)", m.mesh.dropped)
        } else {
            String::new()
        };
        out.push(format!(
            "  solids[{i}] mesh {}: {} triangles{dropped}, bounds {} .. {} m; voxelised in \
             {ms:.1} ms: {cells} SOLID cells{}",
            m.source,
            m.mesh.triangles.len(),
            v(lo),
            v(hi),
            if scene.kind == SceneKind::Smoke {
                format!(" (cut at z = {:.4} m)", 0.5 * scene.domain.2)
            } else {
                String::new()
            }
        ));
        if cells == 0 {
            warnings.push(format!(
                "solids[{i}] (mesh {}) holds no cell centre: it makes no SOLID cell on this \
                 grid (smaller than a cell of {h:.4} m, or outside the slice)",
                m.source
            ));
        }
    }
    out
}

/// `eddy check`'s lines on inflow and outflow: each emitter and drain, the open sides,
/// and the particles the buffers hold.
pub(crate) fn flow_lines(scene: &Scene, seeded: u64) -> Vec<String> {
    let mut out = Vec::new();
    let when = |start: f64, stop: Option<f64>| match stop {
        Some(s) => format!("from {start} s to {s} s"),
        None => format!("from {start} s on"),
    };
    for (i, e) in scene.emitters.iter().enumerate() {
        let v = e.shape.velocity();
        let how = match e.flux {
            Some(q) => format!("{q:e} m^3/s at random points"),
            None => format!(
                "kept full: {} cells, about {:.3e} m^3/s",
                scene.shape_cells(&e.shape),
                e.estimated_flux()
            ),
        };
        out.push(format!(
            "emitter {i}   {how}, velocity ({}, {}, {}) m/s, {}",
            v[0],
            v[1],
            v[2],
            when(e.start, e.stop)
        ));
    }
    for (i, d) in scene.drains.iter().enumerate() {
        let (lo, hi) = d.shape.bounds();
        out.push(format!(
            "drain {i}     bounds ({:.3}, {:.3}, {:.3}) .. ({:.3}, {:.3}, {:.3}) m, {}",
            lo[0],
            lo[1],
            lo[2],
            hi[0],
            hi[1],
            hi[2],
            when(d.start, d.stop)
        ));
    }
    if !scene.open_sides.is_empty() {
        let sides: Vec<String> = scene
            .open_sides
            .iter()
            .map(|s| s.name().to_string())
            .collect();
        out.push(format!(
            "open sides  {} (particles in the outermost cell layer are removed)",
            sides.join(", ")
        ));
    }
    out.push(format!(
        "capacity    {} particles{}",
        scene.particle_capacity(seeded),
        if scene.max_particles.is_some() {
            " (max_particles)"
        } else {
            " (the seeded plus what the emitters add, at most the domain's fill)"
        }
    ));
    out
}

pub(crate) fn check(
    path: &Path,
    limits: Option<&str>,
    resolution: Option<u32>,
) -> Result<ExitCode> {
    let mut scene = Scene::load(path)?;
    if let Some(n) = resolution {
        scene = with_resolution_flag(&scene, n, path)?;
    }
    let planned = match limits {
        Some(l) => Some(eddy::sim::AdapterLimits::named_or_file(l).map_err(|e| anyhow!(e))?),
        None => None,
    };
    let (est, adapter) = match &planned {
        Some(l) => {
            let at = || format!("{} on {}", path.display(), l.name);
            (
                Some(eddy::sim::check_scene_limits_for(l, &scene).with_context(at)?),
                None,
            )
        }
        None => adapter_limits(&scene, path)?,
    };
    let [nx, ny, nz] = scene.dims();
    let mut lines = Vec::new();
    let mut warnings = scene_warnings(&scene);
    lines.push(format!("scene       {} ({})", scene.name, path.display()));
    lines.push(format!("kind        {:?}", scene.kind));
    lines.push(format!(
        "domain      {} x {} x {} m, grid {nx} x {ny} x {nz} = {} cells of {} m",
        scene.domain.0,
        scene.domain.1,
        scene.domain.2,
        scene.cell_count(),
        metres(scene.h())
    ));
    let statics = scene.static_solids();
    let solid = statics.flags.iter().filter(|f| **f != 0).count() as u64;
    lines.push(match &statics.open {
        Some(open) => format!(
            "solid cells {solid} ({} closed); cut faces {} (partly open to the fluid), cut \
             cells {} (centre inside a solid, a face open: the solve reaches into them)",
            statics.closed_cells(),
            open.iter().filter(|f| **f > 0.0 && **f < 1.0).count(),
            statics.partial_cells(),
        ),
        None => format!("solid cells {solid}"),
    });
    lines.extend(mesh_lines(&scene, &mut warnings));
    lines.extend(diffusion_lines(&scene));
    lines.extend(body_lines(&scene));
    // The estimate per cell and per particle (what the grid alone takes, and the rest).
    let cells = scene.cell_count() as f64;
    let (est, split) = if scene.kind == SceneKind::Smoke {
        let s = &scene.smoke;
        lines.push(format!(
            "smoke       {} advection, vorticity {}, buoyancy {}, dye weight {}, sources: {}",
            s.advection.name(),
            s.vorticity,
            s.buoyancy,
            s.dye_weight,
            s.sources.len(),
        ));
        lines.push(format!("tracers     {}", s.tracers));
        if solid == scene.cell_count() {
            warnings.push("every cell is SOLID: there is no room for smoke".into());
        }
        let est = est.unwrap_or_else(|| eddy::sim::smoke::memory_estimate(&scene));
        let split = format!(": {:.1} B per cell", est.total as f64 / cells);
        (est, split)
    } else {
        lines.extend(liquid_lines(&scene, &mut warnings));
        let particles = scene.particle_count();
        let est = eddy::sim::memory_estimate(&scene, particles);
        let grid = eddy::sim::memory_estimate(&scene, 0).total;
        let split = format!(
            ": {:.1} B per cell, {:.1} B per particle",
            grid as f64 / cells,
            (est.total - grid) as f64 / particles.max(1) as f64
        );
        (est, split)
    };
    if !scene.probes.is_empty() {
        lines.push(format!(
            "probes      {} writing {} columns to probes.csv, a row per {}",
            scene.probes.len(),
            scene.probe_columns().len(),
            if scene.probe_every.is_substep() {
                "substep"
            } else {
                "frame"
            }
        ));
    }
    lines.push(solver_line(&scene));
    lines.push(format!(
        "memory      {:.1} MiB on the GPU{split} (largest buffer {:.1} MiB: {})",
        est.total as f64 / 1048576.0,
        est.largest_buffer as f64 / 1048576.0,
        est.largest_name
    ));
    lines.push(format!(
        "viewer      {:.1} MiB more for its views (P2G weights and divergence{})",
        viewer_extra_bytes(&scene) as f64 / 1048576.0,
        if scene.kind == SceneKind::Liquid {
            ", FLIP change per particle, a copy of the solves' vectors"
        } else {
            ""
        }
    ));
    if let Some((a, binding)) = adapter {
        lines.push(format!(
            "adapter     {a}: the scene fits its limits (a binding holds up to {:.1} MiB)",
            binding as f64 / 1048576.0
        ));
    }
    if let Some(l) = &planned {
        lines.extend(planned_lines(&scene, l));
    }
    for w in &warnings {
        note!("warning: {}: {w}", path.display());
    }
    let mut text = String::new();
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The same size checks `run` applies, on the same adapter, before anything is seeded:
/// the memory estimate and the adapter's name, or neither (and a warning) without an
/// adapter, when only the particle count can be checked.
/// The adapter opened: its description and binding limit, bytes.
type AdapterLine = (String, u64);

fn adapter_limits(
    scene: &Scene,
    path: &Path,
) -> Result<(Option<eddy::sim::MemoryEstimate>, Option<AdapterLine>)> {
    let at = || path.display().to_string();
    match GpuContext::new() {
        Ok(ctx) => Ok((
            Some(eddy::sim::check_scene_limits(&ctx, scene).with_context(at)?),
            Some((ctx.describe(), eddy::sim::buffer_limit(&ctx))),
        )),
        Err(e) => {
            note!(
                "warning: {}: no GPU adapter, so the adapter's size limits are not checked ({e})",
                path.display()
            );
            let particles = scene.particle_count();
            if particles > eddy::scene::MAX_PARTICLES {
                return Err(eddy::sim::SimError::TooManyParticles {
                    particles,
                    max: eddy::scene::MAX_PARTICLES,
                })
                .with_context(at);
            }
            Ok((None, None))
        }
    }
}

/// `--limits`: the planned adapter, what of it the scene takes, and the largest resolution
/// of the scene that fits it.
fn planned_lines(scene: &Scene, l: &eddy::sim::AdapterLimits) -> Vec<String> {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let mut lines = vec![format!(
        "limits      {}: a binding holds up to {:.1} MiB, {} ({})",
        l.name,
        l.max_binding as f64 / 1048576.0,
        l.memory.map_or("memory not checked".into(), |m| format!(
            "{:.1} GiB of memory",
            gib(m)
        )),
        l.source
    )];
    match largest_resolution(scene, l) {
        Some(f) => lines.push(format!(
            "largest     {} cells along the longest axis ({} x {} x {}, {:.1} M cells, {:.1} M \
             particles): {:.1} GiB, largest buffer {:.0} MiB ({}); one more cell exceeds {}",
            f.n,
            f.dims[0],
            f.dims[1],
            f.dims[2],
            f.cells as f64 / 1e6,
            f.particles as f64 / 1e6,
            gib(f.est.total),
            f.est.largest_buffer as f64 / 1048576.0,
            f.est.largest_name,
            f.stop
        )),
        None => lines.push(format!(
            "largest     no resolution of this scene fits {}",
            l.name
        )),
    }
    lines
}

/// The largest resolution of a scene that fits an adapter, and what stops the next one.
pub(crate) struct LargestFit {
    pub n: u32,
    pub dims: [u32; 3],
    pub cells: u64,
    pub particles: u64,
    pub est: eddy::sim::MemoryEstimate,
    pub stop: String,
}

/// Whether `scene` at `n` cells along its longest axis fits `l`: its estimate with the
/// particles bounded from the fluid shapes' boxes (exact for boxes, above the count
/// otherwise), or why not.
fn fits_at(scene: &Scene, n: u32, l: &eddy::sim::AdapterLimits) -> Result<LargestFit, String> {
    let s = scene.with_resolution(n);
    s.validate()?;
    let particles = if s.kind == SceneKind::Liquid {
        let bound = s.particle_bound();
        if s.has_flow() || s.max_particles.is_some() {
            s.particle_capacity(bound)
        } else {
            bound
        }
    } else {
        0
    };
    if particles > eddy::scene::MAX_PARTICLES {
        return Err(format!("eddy's {} particles", eddy::scene::MAX_PARTICLES));
    }
    let est = if s.kind == SceneKind::Liquid {
        eddy::sim::memory_estimate(&s, particles)
    } else {
        eddy::sim::smoke::memory_estimate(&s)
    };
    eddy::sim::check_estimate_for(l, est).map_err(|e| match e {
        eddy::sim::SimError::TooLarge { what, limit, .. } => {
            format!("the {what} ({:.0} MiB)", limit as f64 / 1048576.0)
        }
        other => other.to_string(),
    })?;
    Ok(LargestFit {
        n,
        dims: s.dims(),
        cells: s.cell_count(),
        particles,
        est,
        stop: String::new(),
    })
}

/// The largest resolution (cells along the longest axis) of `scene` that fits `l`, by
/// bisection (the memory grows with the resolution); None when even 2 does not.
pub(crate) fn largest_resolution(
    scene: &Scene,
    l: &eddy::sim::AdapterLimits,
) -> Option<LargestFit> {
    // From the scene's own resolution when it fits (a small one may be refused for
    // reasons of its own, such as a body thinner than a cell), else from 2.
    let own = scene.dims().into_iter().max().unwrap_or(2);
    let (mut lo, mut best) = match fits_at(scene, own, l) {
        Ok(f) => (own, f),
        Err(_) => (2, fits_at(scene, 2, l).ok()?),
    };
    let mut hi = eddy::scene::MAX_AXIS_CELLS + 1;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match fits_at(scene, mid, l) {
            Ok(f) => {
                lo = mid;
                best = f;
            }
            Err(_) => hi = mid,
        }
    }
    best.stop = if hi > eddy::scene::MAX_AXIS_CELLS {
        format!("eddy's {} cells along an axis", eddy::scene::MAX_AXIS_CELLS)
    } else {
        fits_at(scene, hi, l).err().unwrap_or_default()
    };
    Some(best)
}

/// The viscosity, and the smoke's heat and dye diffusion with their walls.
fn diffusion_lines(scene: &Scene) -> Vec<String> {
    let mut lines = Vec::new();
    let d = &scene.diffusion;
    let implicit = format!("implicit, {} to {:e}", d.preconditioner.name(), d.tolerance);
    lines.push(if scene.viscosity > 0.0 {
        format!("viscosity   {} m^2/s ({implicit})", scene.viscosity)
    } else {
        "viscosity   0 (inviscid)".to_string()
    });
    if let Some(cap) =
        eddy::sim::core::tension::capillary_dt(scene.surface_tension, eddy::sim::DENSITY, scene.h())
    {
        let frame = scene.frame_dt / cap;
        lines.push(format!(
            "tension     {} N/m: the pressure jumps by sigma kappa across the surface; \
             capillary substep limit {cap:.3e} s ({:.1} per frame at least)",
            scene.surface_tension,
            frame.ceil().max(1.0)
        ));
    }
    if scene.kind == SceneKind::Smoke {
        let s = &scene.smoke;
        let walls = |w: &eddy::scene::WallValues| {
            if w.is_empty() {
                "insulated walls".to_string()
            } else {
                let fixed: Vec<String> = eddy::scene::Wall::ALL
                    .iter()
                    .filter_map(|x| w.wall(*x).map(|v| format!("{x:?} {v}").to_lowercase()))
                    .collect();
                format!("walls {}; {} spot(s)", fixed.join(", "), w.spots.len())
            }
        };
        lines.push(format!(
            "diffusion   heat {} m^2/s ({}), dye {} m^2/s ({})",
            s.temperature_diffusion,
            walls(&s.wall_temperature),
            s.dye_diffusion,
            walls(&s.wall_dye)
        ));
    }
    lines
}

/// Each rigid body: its shape, motion, density, mass and inertia, and how fast it would
/// settle in still liquid.
fn body_lines(scene: &Scene) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(set) = eddy::sim::bodies::BodySet::from_scene(scene) else {
        return lines;
    };
    lines.push(format!("bodies      {}", set.bodies.len()));
    for (i, b) in set.bodies.iter().enumerate() {
        let shape = match b.solid {
            eddy::sim::bodies::Solid::Box { half } => {
                format!(
                    "box {:.3} x {:.3} x {:.3} m",
                    2.0 * half.x,
                    2.0 * half.y,
                    2.0 * half.z
                )
            }
            eddy::sim::bodies::Solid::Sphere { radius } if set.slice => {
                format!("disc r {radius:.3} m")
            }
            eddy::sim::bodies::Solid::Sphere { radius } => format!("sphere r {radius:.3} m"),
        };
        let i3 = b.inertia;
        lines.push(format!(
            "  [{i}]      {shape}, {:?}, density {} kg/m^3, mass {:.4e} kg, inertia ({:.4e}, {:.4e}, {:.4e}) kg m^2",
            b.motion, b.density, b.mass, i3.x, i3.y, i3.z
        ));
        if let Some(e) = set.settling(i, scene.viscosity) {
            lines.push(format!(
                "            settles at about {:.3e} m/s in still liquid (Schiller-Naumann, \
                 a sphere of its volume, {:.1} cells across): Re {:.3}, Stokes {:.3}",
                e.speed,
                e.diameter / scene.h(),
                e.reynolds,
                e.stokes
            ));
        }
    }
    lines
}

/// What the viewer keeps on top (`eddy view`): the views' own fields, the liquid's FLIP
/// change per particle, and a copy of the solves' vectors where they share P2G's room.
fn viewer_extra_bytes(scene: &Scene) -> u64 {
    let [nx, ny, nz] = scene.dims().map(|v| v as u64);
    let c = nx * ny * nz;
    let faces = (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1);
    let liquid = scene.kind == SceneKind::Liquid;
    eddy::sim::core::fields::GridFields::views_bytes(c, faces, liquid)
        + if liquid {
            eddy::sim::core::fields::Particles::flip_delta_bytes(scene.particle_count())
                + eddy::sim::core::pressure::PcgVectors::scratch_bytes(c)
        } else {
            0
        }
}

/// The liquid's particles (seeded as the simulation seeds, less what bodies displace),
/// its flow, transfer, volume correction and spacing, and its FLUID cells at the first
/// step.
fn liquid_lines(scene: &Scene, warnings: &mut Vec<String>) -> Vec<String> {
    let mut lines = Vec::new();
    let particles = scene.particle_count();
    // Seeded as the simulation seeds (less what bodies displace), when not too many.
    let init = (particles > 0 && particles as usize <= FLUID_ESTIMATE_MAX_PARTICLES).then(|| {
        let bodies = eddy::sim::bodies::BodySet::from_scene(scene);
        eddy::sim::liquid::seed(scene, bodies.as_ref())
    });
    let displaced = init
        .as_ref()
        .map_or(0, |i| particles - i.positions.len() as u64);
    lines.push(format!(
        "particles   {} ({} per fluid cell{})",
        particles - displaced,
        scene.particles_per_cell,
        if displaced > 0 {
            format!("; {displaced} fewer where bodies displace the liquid")
        } else {
            String::new()
        }
    ));
    if scene.has_flow() || scene.max_particles.is_some() {
        lines.extend(flow_lines(scene, particles - displaced));
    }
    lines.push(match scene.transfer {
        eddy::scene::TransferKind::Flip => {
            format!("transfer    flip ({}% PIC)", 100.0 * scene.pic_ratio)
        }
        eddy::scene::TransferKind::Apic => {
            "transfer    apic (affine matrix per particle, 48 bytes each)".into()
        }
    });
    lines.push(if scene.volume_correction {
        "volume      corrected each substep where the density is off rest by more than 20%"
            .to_string()
    } else {
        "volume      not corrected (volume_correction: false)".to_string()
    });
    lines.push(if scene.particle_spacing > 0.0 {
        format!(
            "spacing     particles closer than {} m ({} of the rest spacing) push apart",
            metres(eddy::sim::liquid::spacing::min_distance(
                scene.h(),
                scene.particles_per_cell,
                scene.particle_spacing
            )),
            scene.particle_spacing
        )
    } else {
        "spacing     off (particle_spacing: 0)".to_string()
    });
    if let Some(init) = &init {
        let fluid = initial_fluid_cells(scene, init);
        lines.push(format!("fluid cells {fluid} at the first step"));
        if fluid == 0 {
            warnings.push(format!(
                "no cell reaches the FLUID density at the first step (the liquid is too \
                 small or thin for cells of {} m): no pressure will act on it",
                metres(scene.h())
            ));
        }
    }
    lines
}

/// The pressure solve: preconditioner, tolerance, iterations and how its solves are read.
fn solver_line(scene: &Scene) -> String {
    format!(
        "solver      {} to relative residual {:e}, at most {} iterations{}",
        scene.pressure.preconditioner,
        scene.pressure.tolerance,
        scene.pressure.max_iterations,
        if scene.pressure.pipelined && eddy::sim::runner::queues_ahead(&scene.pressure) {
            format!(
                "; solves queued ahead, the last count + {} (pressure.pipelined)",
                scene.pressure.margin
            )
        } else if scene.pressure.pipelined {
            format!(
                "; each solve read back as it runs (pressure.pipelined queues mg solves only: {}'s iteration counts vary too much between solves)",
                scene.pressure.preconditioner
            )
        } else {
            String::new()
        }
    )
}

/// A length for `eddy check`'s lines: four decimals from a millimetre up, three significant
/// digits below (a millimetre scene's cells would read 0.0003 m, its spacing 0.000 m).
fn metres(m: f64) -> String {
    if m.abs() >= 1e-3 || m == 0.0 {
        format!("{m:.4}")
    } else {
        format!("{m:.3e}")
    }
}
