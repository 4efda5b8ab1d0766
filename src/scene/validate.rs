//! Scene validation: everything a user can get wrong, with a message that names the field
//! and the fix.

use super::*;

impl Scene {
    /// Checks everything a user can get wrong; the message names the field and the fix.
    /// Every number must also be one the f32 GPU arithmetic can carry without overflow, so a
    /// scene that passes cannot turn into NaN through its inputs alone.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_name()?;
        let d = self.domain_size();
        self.validate_grid(d)?;
        self.validate_gravity()?;
        self.validate_kind_settings()?;
        self.validate_shapes(d)?;
        self.validate_stepping()?;
        self.validate_smoke(d)?;
        self.validate_bodies(d)?;
        self.validate_flow()?;
        self.validate_keyframed_solids()?;
        self.validate_probes()?;
        diffusion::check_diffusion("viscosity", self.viscosity)?;
        self.validate_surface_tension()?;
        self.diffusion.validate()?;
        self.pressure.validate()
    }

    /// Checks the name: no control characters, and not too long.
    fn validate_name(&self) -> Result<(), String> {
        if let Some(c) = self.name.chars().find(|c| c.is_control()) {
            return Err(format!(
                "name {:?} contains the control character U+{:04X}; names are printed to terminals and logs",
                self.name, c as u32
            ));
        }
        if self.name.chars().count() > MAX_NAME_CHARS {
            return Err(format!(
                "name is {} characters long; at most {MAX_NAME_CHARS}",
                self.name.chars().count()
            ));
        }
        Ok(())
    }

    /// Checks the grid: the resolution, the domain `d` (its size on each axis) and the cubic
    /// cells they make, and that a smoke scene is one cell deep.
    fn validate_grid(&self, d: [f64; 3]) -> Result<(), String> {
        let (nx, ny, nz) = self.resolution;
        if nx == 0 || ny == 0 || nz == 0 {
            return Err(format!(
                "resolution {:?} must be at least 1 cell on every axis",
                self.resolution
            ));
        }
        if nx < 2 || ny < 2 {
            return Err(format!(
                "resolution {:?}: x and y need at least 2 cells",
                self.resolution
            ));
        }
        if [nx, ny, nz].iter().any(|n| *n > MAX_AXIS_CELLS) {
            return Err(format!(
                "resolution {:?}: at most {MAX_AXIS_CELLS} cells per axis",
                self.resolution
            ));
        }
        if self.cell_count() > MAX_CELLS {
            return Err(format!(
                "resolution {:?} has {} cells; eddy supports at most {MAX_CELLS}",
                self.resolution,
                self.cell_count()
            ));
        }
        if d.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return Err(format!(
                "domain {:?} must be positive on every axis (metres)",
                self.domain
            ));
        }
        if d.iter().any(|v| !(MIN_LENGTH..=MAX_LENGTH).contains(v)) {
            return Err(format!(
                "domain {:?}: every axis must be between {MIN_LENGTH:e} and {MAX_LENGTH:e} m",
                self.domain
            ));
        }
        let hx = d[0] / nx as f64;
        let hy = d[1] / ny as f64;
        let hz = d[2] / nz as f64;
        let cubic = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.max(b);
        // A one-cell-thick slice (smoke mode) may have any depth: no flow crosses z.
        if !cubic(hx, hy) || (nz > 1 && !cubic(hx, hz)) {
            return Err(format!(
                "cells must be cubes: domain {:?} / resolution {:?} gives cell sizes {hx} x {hy} x {hz} m",
                self.domain, self.resolution
            ));
        }
        if hx < MIN_LENGTH {
            return Err(format!(
                "domain {:?} / resolution {:?} gives cells of {hx:e} m; the smallest cell eddy \
                 simulates in f32 is {MIN_LENGTH:e} m",
                self.domain, self.resolution
            ));
        }
        if self.kind == SceneKind::Smoke && nz != 1 {
            return Err(format!(
                "smoke scenes are 2D: resolution z must be 1, got {nz}"
            ));
        }
        Ok(())
    }

    /// Checks that gravity is finite and within what f32 can carry.
    fn validate_gravity(&self) -> Result<(), String> {
        let g = [self.gravity.0, self.gravity.1, self.gravity.2];
        if g.iter().any(|v| !v.is_finite()) {
            return Err(format!("gravity {:?} must be finite", self.gravity));
        }
        if norm(g) > MAX_ACCELERATION {
            return Err(format!(
                "gravity {:?} exceeds {MAX_ACCELERATION:e} m/s^2",
                self.gravity
            ));
        }
        Ok(())
    }

    /// Checks what the scene's kind asks for: a liquid scene has some liquid, and no setting
    /// of the other kind is set (it would be ignored).
    fn validate_kind_settings(&self) -> Result<(), String> {
        match self.kind {
            SceneKind::Liquid => {
                if self.fluid.is_empty() && self.emitters.is_empty() {
                    return Err(
                        "a liquid scene needs at least one shape in `fluid` or an emitter".into(),
                    );
                }
                // A smoke block in a liquid scene would be ignored without a word.
                if self.smoke != SmokeSettings::default() {
                    return Err(
                        "smoke settings apply to smoke scenes only: remove `smoke`, or set `kind: smoke`"
                            .into(),
                    );
                }
            }
            SceneKind::Smoke => {
                if !self.fluid.is_empty() {
                    return Err(
                        "fluid shapes apply to liquid scenes only: smoke scenes inject smoke with `smoke.sources`"
                            .into(),
                    );
                }
                if self.transfer != TransferKind::default() {
                    return Err(
                        "transfer applies to liquid scenes only: smoke scenes have no particles to transfer"
                            .into(),
                    );
                }
                // Liquid-only settings changed in a smoke scene would be ignored silently.
                let liquid = Scene::default();
                if self.volume_correction != liquid.volume_correction {
                    return Err(
                        "volume_correction applies to liquid scenes only: smoke scenes have no \
                         particle density to correct"
                            .into(),
                    );
                }
                if self.particle_spacing != liquid.particle_spacing {
                    return Err(
                        "particle_spacing applies to liquid scenes only: smoke scenes have no \
                         particles to space"
                            .into(),
                    );
                }
            }
        }
        Ok(())
    }

    /// Checks the fluid and solid shapes, and that each reaches into the domain `d`.
    fn validate_shapes(&self, d: [f64; 3]) -> Result<(), String> {
        for (what, shapes) in [("fluid", &self.fluid), ("solids", &self.solids)] {
            for (i, s) in shapes.iter().enumerate() {
                if what == "fluid" && matches!(s, Shape::Mesh { .. }) {
                    return Err(format!(
                        "fluid[{i}]: a Mesh can only be a solid (in `solids`); fluid shapes are \
                         Box, Sphere or Cylinder"
                    ));
                }
                validate_shape(s).map_err(|m| format!("{what}[{i}]: {m}"))?;
                let (lo, hi) = s.bounds();
                // Smoke scenes are one-cell slices: their shapes are read in x and y only.
                let axes = if self.kind == SceneKind::Smoke { 2 } else { 3 };
                let inside = (0..axes).all(|a| hi[a] > 0.0 && lo[a] < d[a]);
                if !inside {
                    return Err(format!(
                        "{what}[{i}] lies outside the domain [0, {:?}]: bounds {lo:?} .. {hi:?}",
                        self.domain
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks the particle and time-stepping settings: particles per cell, PIC ratio, CFL,
    /// frame length, substeps, extrapolation layers and particle spacing.
    fn validate_stepping(&self) -> Result<(), String> {
        if ![1, 8, 27].contains(&self.particles_per_cell) {
            return Err(format!(
                "particles_per_cell must be 1, 8 or 27 (a cube number), got {}",
                self.particles_per_cell
            ));
        }
        if !(0.0..=1.0).contains(&self.pic_ratio) {
            return Err(format!(
                "pic_ratio must be in [0, 1], got {}",
                self.pic_ratio
            ));
        }
        if !(MIN_CFL..=10.0).contains(&self.cfl) {
            return Err(format!(
                "cfl must be in [{MIN_CFL}, 10] (cells a particle may cross per substep), got {}",
                self.cfl
            ));
        }
        if !(MIN_FRAME_DT..=MAX_FRAME_DT).contains(&self.frame_dt) {
            return Err(format!(
                "frame_dt must be in [{MIN_FRAME_DT:e}, {MAX_FRAME_DT}] s, got {}",
                self.frame_dt
            ));
        }
        if !(1..=MAX_SUBSTEPS).contains(&self.max_substeps) {
            return Err(format!(
                "max_substeps must be in 1..={MAX_SUBSTEPS}, got {} (a frame's work must stay bounded)",
                self.max_substeps
            ));
        }
        if self.extrapolation_layers == 0 || self.extrapolation_layers > 64 {
            return Err(format!(
                "extrapolation_layers must be in 1..=64, got {}",
                self.extrapolation_layers
            ));
        }
        // Up to half a cell: the neighbour search looks at the 2 x 2 x 2 cells nearest a
        // particle.
        let most = 0.5 * (self.particles_per_cell as f64).cbrt();
        if !(self.particle_spacing.is_finite()
            && self.particle_spacing >= 0.0
            && self.particle_spacing <= most)
        {
            return Err(format!(
                "particle_spacing must be in 0..={most} (a fraction of the rest spacing, at \
                 most half a cell), got {}",
                self.particle_spacing
            ));
        }
        Ok(())
    }

    /// Checks `surface_tension`: a liquid's, finite, not negative, and at most
    /// [`MAX_SURFACE_TENSION`] (mercury's is 0.49 N/m).
    fn validate_surface_tension(&self) -> Result<(), String> {
        let sigma = self.surface_tension;
        if !(sigma.is_finite() && (0.0..=MAX_SURFACE_TENSION).contains(&sigma)) {
            return Err(format!(
                "surface_tension must be finite, 0 to {MAX_SURFACE_TENSION} N/m, got {sigma}"
            ));
        }
        if sigma > 0.0 && self.pressure.refine > 0.0 {
            return Err(
                "pressure.refine: not with surface_tension (the refinement's correction would \
                 take the surface's jump a second time)"
                    .into(),
            );
        }
        if sigma > 0.0 && self.kind == SceneKind::Smoke {
            return Err(
                "surface_tension is a liquid's (the smoke fills its domain: it has no free \
                 surface)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Checks a smoke scene's smoke settings and lid against the domain `d`; other scenes pass.
    fn validate_smoke(&self, d: [f64; 3]) -> Result<(), String> {
        if self.kind == SceneKind::Smoke {
            self.smoke.validate(d)?;
            let lid = self.smoke.lid_velocity;
            if !(lid.is_finite() && lid.abs() <= MAX_SPEED) {
                return Err(format!(
                    "smoke.lid_velocity must be finite and at most {MAX_SPEED:e} m/s, got {lid}"
                ));
            }
            if lid != 0.0 && self.viscosity <= 0.0 {
                return Err(
                    "smoke.lid_velocity needs viscosity > 0: the lid drags the air through the \
                     no-slip wall of the viscosity solve"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// Checks the rigid bodies against the domain `d`: how many, each one, and the pressure
    /// settings that cannot go with them.
    fn validate_bodies(&self, d: [f64; 3]) -> Result<(), String> {
        // A smoke scene's `smoke.obstacle` becomes one more body.
        let obstacle = (self.kind == SceneKind::Smoke && self.smoke.obstacle.is_some()) as usize;
        if self.bodies.len() + obstacle > MAX_BODIES {
            return Err(format!(
                "bodies: {} bodies{}, eddy supports at most {MAX_BODIES}",
                self.bodies.len() + obstacle,
                if obstacle > 0 {
                    " (counting smoke.obstacle, a kinematic body)"
                } else {
                    ""
                }
            ));
        }
        for (i, b) in self.bodies.iter().enumerate() {
            b.validate(d, self.kind == SceneKind::Smoke)
                .map_err(|m| format!("bodies[{i}]: {m}"))?;
        }
        if self.pressure.refine > 0.0 && !self.bodies.is_empty() {
            return Err(
                "pressure.refine: not with rigid bodies (the coupled solve's term lives on the \
                 GPU; the refinement corrects A alone)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Checks that keyframed meshes are only in liquid scenes without rigid bodies.
    fn validate_keyframed_solids(&self) -> Result<(), String> {
        for (i, s) in self.solids.iter().enumerate() {
            if let Shape::Mesh { keyframes, .. } = s {
                if keyframes.is_empty() {
                    continue;
                }
                if self.kind != SceneKind::Liquid {
                    return Err(format!(
                        "solids[{i}]: keyframed meshes move in liquid scenes; a smoke scene \
                         moves a solid as a kinematic body"
                    ));
                }
                if !self.bodies.is_empty() {
                    return Err(format!(
                        "solids[{i}]: a keyframed mesh and rigid bodies in one scene are not \
                         supported (bodies keep the static solids they were given)"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl PressureSettings {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(format!(
                "pressure.tolerance must be in (0, 1) (relative residual), got {}",
                self.tolerance
            ));
        }
        if self.tolerance < MIN_TOLERANCE {
            return Err(format!(
                "pressure.tolerance {:e} is below {MIN_TOLERANCE:e}, which f32 PCG cannot reach \
                 (every solve would stop at max_iterations)",
                self.tolerance
            ));
        }
        if self.max_iterations == 0 {
            return Err("pressure.max_iterations must be at least 1".into());
        }
        if self.max_iterations > 100_000 {
            return Err(format!(
                "pressure.max_iterations must be at most 100000, got {}",
                self.max_iterations
            ));
        }
        if self.check_every == 0 {
            return Err("pressure.check_every must be at least 1".into());
        }
        if self.margin > 1000 {
            return Err(format!(
                "pressure.margin must be at most 1000 iterations, got {}",
                self.margin
            ));
        }
        if !(self.refine == 0.0 || (1e-14..=1e-3).contains(&self.refine)) {
            return Err(format!(
                "pressure.refine must be 0 (off) or a true residual in [1e-14, 1e-3], got {}",
                self.refine
            ));
        }
        Ok(())
    }
}

impl SmokeSettings {
    pub fn validate(&self, domain: [f64; 3]) -> Result<(), String> {
        let signed = [
            ("smoke.vorticity", self.vorticity),
            ("smoke.buoyancy", self.buoyancy),
            ("smoke.dye_weight", self.dye_weight),
            ("smoke.ambient_temperature", self.ambient_temperature),
        ];
        for (name, v) in signed {
            if !v.is_finite() {
                return Err(format!("{name} must be finite, got {v}"));
            }
            if v.abs() > MAX_SMOKE_VALUE {
                return Err(format!(
                    "{name} is {v:e}; at most {MAX_SMOKE_VALUE:e} in magnitude (f32 headroom)"
                ));
            }
        }
        if self.vorticity < 0.0 {
            return Err(format!(
                "smoke.vorticity must be >= 0, got {}",
                self.vorticity
            ));
        }
        let rates = [
            ("smoke.velocity_dissipation", self.velocity_dissipation),
            ("smoke.dye_dissipation", self.dye_dissipation),
            (
                "smoke.temperature_dissipation",
                self.temperature_dissipation,
            ),
        ];
        for (name, v) in rates {
            if !(v.is_finite() && (0.0..=MAX_SMOKE_VALUE).contains(&v)) {
                return Err(format!(
                    "{name} must be a rate in [0, {MAX_SMOKE_VALUE:e}] (1/s), got {v}"
                ));
            }
        }
        diffusion::check_diffusion("smoke.temperature_diffusion", self.temperature_diffusion)?;
        diffusion::check_diffusion("smoke.dye_diffusion", self.dye_diffusion)?;
        self.wall_temperature
            .validate("smoke.wall_temperature", domain)?;
        self.wall_dye.validate("smoke.wall_dye", domain)?;
        // Wall values act through their diffusion: without it they would be ignored.
        for (walls, name, rate, rate_name) in [
            (
                &self.wall_temperature,
                "smoke.wall_temperature",
                self.temperature_diffusion,
                "smoke.temperature_diffusion",
            ),
            (
                &self.wall_dye,
                "smoke.wall_dye",
                self.dye_diffusion,
                "smoke.dye_diffusion",
            ),
        ] {
            if !walls.is_empty() && rate == 0.0 {
                return Err(format!(
                    "{name} holds walls at fixed values, which act only through diffusion: set \
                     {rate_name} above 0, or remove {name}"
                ));
            }
        }
        let dye_values = Wall::ALL
            .iter()
            .filter_map(|w| self.wall_dye.wall(*w))
            .chain(self.wall_dye.spots.iter().map(|s| s.value));
        if let Some(v) = dye_values.into_iter().find(|v| *v < 0.0) {
            return Err(format!(
                "smoke.wall_dye: a dye density cannot be negative, got {v}"
            ));
        }
        if self.tracers > MAX_TRACERS {
            return Err(format!(
                "smoke.tracers must be at most {MAX_TRACERS}, got {}",
                self.tracers
            ));
        }
        self.validate_sources(domain)?;
        if let Some(o) = &self.obstacle {
            validate_shape(o).map_err(|m| format!("smoke.obstacle: {m}"))?;
            box_or_sphere(o).map_err(|m| format!("smoke.obstacle: {m}"))?;
            let (lo, hi) = o.bounds();
            if (0..2).any(|a| lo[a] < 0.0 || hi[a] > domain[a]) {
                return Err(format!(
                    "smoke.obstacle must lie inside the domain in x and y: bounds {lo:?} .. {hi:?}"
                ));
            }
            // What the simulation runs is the kinematic body it becomes.
            super::obstacle_body(o, domain[2])
                .validate(domain, true)
                .map_err(|m| format!("smoke.obstacle (a kinematic body): {m}"))?;
        }
        Ok(())
    }

    /// Checks the smoke sources: how many, and each one's shape (inside the domain in x and
    /// y), dye, temperature and velocity.
    fn validate_sources(&self, domain: [f64; 3]) -> Result<(), String> {
        if self.sources.len() > MAX_SMOKE_SOURCES {
            return Err(format!(
                "smoke.sources has {} entries; at most {MAX_SMOKE_SOURCES}",
                self.sources.len()
            ));
        }
        let inside = |s: &Shape| {
            let (lo, hi) = s.bounds();
            (0..2).all(|a| hi[a] > 0.0 && lo[a] < domain[a])
        };
        for (i, src) in self.sources.iter().enumerate() {
            let at = format!("smoke.sources[{i}]");
            validate_shape(&src.shape).map_err(|m| format!("{at}.shape: {m}"))?;
            box_or_sphere(&src.shape).map_err(|m| format!("{at}.shape: {m}"))?;
            if !inside(&src.shape) {
                return Err(format!("{at} lies outside the domain [0, {domain:?}]"));
            }
            let dye = [src.dye.0, src.dye.1, src.dye.2];
            if dye
                .iter()
                .any(|x| !(x.is_finite() && (0.0..=MAX_SMOKE_VALUE).contains(x)))
            {
                return Err(format!(
                    "{at}.dye {:?}: every channel must be in [0, {MAX_SMOKE_VALUE:e}]",
                    src.dye
                ));
            }
            if !(src.temperature.is_finite() && src.temperature.abs() <= MAX_SMOKE_VALUE) {
                return Err(format!(
                    "{at}.temperature must be finite and at most {MAX_SMOKE_VALUE:e} in magnitude, got {}",
                    src.temperature
                ));
            }
            let v = [src.velocity.0, src.velocity.1, src.velocity.2];
            check_speed(v).map_err(|m| format!("{at}.velocity {:?}: {m}", src.velocity))?;
        }
        Ok(())
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

pub(super) fn check_speed(v: [f64; 3]) -> Result<(), String> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err("must be finite".into());
    }
    if norm(v) > MAX_SPEED {
        return Err(format!("speed exceeds {MAX_SPEED:e} m/s"));
    }
    Ok(())
}

fn check_point(p: &(f64, f64, f64)) -> bool {
    [p.0, p.1, p.2]
        .iter()
        .all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE)
}

/// Smoke sources and the smoke's obstacle are a Box or a Sphere (the GPU's emitter kinds,
/// the body shapes).
fn box_or_sphere(s: &Shape) -> Result<(), String> {
    match s {
        Shape::Box { .. } | Shape::Sphere { .. } => Ok(()),
        _ => Err("must be a Box or a Sphere here".into()),
    }
}

/// Checks a mesh's placement before it is read; the messages name the field.
pub(super) fn check_placement(path: &str, p: &super::mesh::Placement) -> Result<(), String> {
    if path.is_empty() || path.chars().any(|c| c.is_control()) {
        return Err(format!("mesh path {path:?} must name a file"));
    }
    if !(p.scale.is_finite() && p.scale > 0.0 && p.scale <= MAX_COORDINATE) {
        return Err(format!(
            "mesh scale must be positive and at most {MAX_COORDINATE:e}, got {}",
            p.scale
        ));
    }
    if !check_point(&p.translation) {
        return Err(format!(
            "mesh translation {:?} must be finite and within {MAX_COORDINATE:e} m of the origin",
            p.translation
        ));
    }
    let r = p.rotation_deg;
    if [r.0, r.1, r.2]
        .iter()
        .any(|x| !(x.is_finite() && x.abs() <= 1e6))
    {
        return Err(format!(
            "mesh rotation_deg {r:?} must be finite and at most 1e6 degrees"
        ));
    }
    Ok(())
}

/// Checks one shape; each message names the field at fault.
pub(super) fn validate_shape(s: &Shape) -> Result<(), String> {
    let coord = |name: &str, p: &(f64, f64, f64)| {
        if check_point(p) {
            Ok(())
        } else {
            Err(format!(
                "{name} {p:?} must be finite and within {MAX_COORDINATE:e} m of the origin"
            ))
        }
    };
    let velocity = match s {
        Shape::Box { min, max, velocity } => {
            coord("box min", min)?;
            coord("box max", max)?;
            if max.0 <= min.0 || max.1 <= min.1 || max.2 <= min.2 {
                return Err(format!(
                    "box max {max:?} must exceed min {min:?} on every axis"
                ));
            }
            velocity
        }
        Shape::Sphere {
            center,
            radius,
            velocity,
        } => {
            coord("sphere center", center)?;
            if !(radius.is_finite() && *radius > 0.0 && *radius <= MAX_COORDINATE) {
                return Err(format!(
                    "sphere radius must be positive and at most {MAX_COORDINATE:e} m, got {radius}"
                ));
            }
            velocity
        }
        Shape::Cylinder {
            center,
            axis,
            radius,
            length,
            velocity,
        } => {
            coord("cylinder center", center)?;
            coord("cylinder axis", axis)?;
            let n = (axis.0 * axis.0 + axis.1 * axis.1 + axis.2 * axis.2).sqrt();
            if n.is_nan() || n <= 1e-12 {
                return Err(format!(
                    "cylinder axis {axis:?} must be a non-zero direction"
                ));
            }
            for (name, v) in [("radius", radius), ("length", length)] {
                if !(v.is_finite() && *v > 0.0 && *v <= MAX_COORDINATE) {
                    return Err(format!(
                        "cylinder {name} must be positive and at most {MAX_COORDINATE:e} m, got {v}"
                    ));
                }
            }
            velocity
        }
        Shape::Mesh {
            path,
            scale,
            translation,
            rotation_deg,
            velocity,
            loaded,
            keyframes,
        } => {
            if !keyframes.is_empty() {
                super::motion::validate_keyframes(keyframes)?;
                if *translation != (0.0, 0.0, 0.0) || *rotation_deg != (0.0, 0.0, 0.0) {
                    return Err(format!(
                        "mesh {path}: a keyframed mesh is placed by its keyframes; leave out \
                         translation and rotation_deg"
                    ));
                }
            }
            check_placement(
                path,
                &super::mesh::Placement {
                    scale: *scale,
                    rotation_deg: *rotation_deg,
                    translation: *translation,
                },
            )?;
            let Some(m) = loaded.get() else {
                return Err(format!(
                    "mesh {path} is not loaded: a Mesh can only be a solid (in `solids`), \
                     read when the scene loads (a scene built in code calls \
                     Scene::load_meshes)"
                ));
            };
            let (lo, hi) = m.bounds;
            if !(lo.iter().chain(&hi).all(|x| x.abs() <= MAX_COORDINATE)) {
                return Err(format!(
                    "mesh {path} placed reaches {lo:?} .. {hi:?}, beyond {MAX_COORDINATE:e} m"
                ));
            }
            velocity
        }
    };
    check_speed([velocity.0, velocity.1, velocity.2])
        .map_err(|m| format!("velocity {velocity:?}: {m}"))
}
