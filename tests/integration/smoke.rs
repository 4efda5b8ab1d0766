//! The smoke mode (nz = 1) against the f64 reference, and its physics invariants.
//!
//! Each stage is fed the GPU's own output of the stage before it (read back), so a
//! mismatch points at one stage. The smoke runs the liquid's boundary, divergence, PCG and
//! projection kernels on a one-cell-thick grid; the projection test checks them there.

use crate::common;

use common::{mac_diff, mac_max, max_abs, to_f64};
use eddy::gpu::read_buffer;
use eddy::reference::{self as cpu, smoke as cs};
use eddy::scene::{
    AdvectionScheme, BodyMotion, BodyShape, BodySpec, PreconditionerKind, Scene, SceneKind, Shape,
    SmokeSource, SplitMix64,
};
use eddy::sim::smoke::{Emitter, SmokeSimulation, SmokeStage};

const SOURCE_BOX: Shape = Shape::Box {
    min: (0.02, 0.02, 0.0),
    max: (0.13, 0.19, 0.05),
    velocity: (0.0, 0.0, 0.0),
};

/// A smoke slice of `nx x ny` cells of `h` metres (depth h), solved with `pre` to 1e-5.
fn smoke_scene(name: &str, nx: u32, ny: u32, h: f64, pre: PreconditionerKind) -> Scene {
    let mut s = Scene {
        name: name.into(),
        kind: SceneKind::Smoke,
        domain: (nx as f64 * h, ny as f64 * h, h),
        resolution: (nx, ny, 1),
        ..Scene::default()
    };
    s.pressure.preconditioner = pre;
    s.pressure.tolerance = 1e-5;
    s
}

/// A kinematic box body in a slice of depth `depth`: centre `c`, half extents `half`, moving
/// at `v`.
fn kinematic_box(c: (f64, f64), half: (f64, f64), v: (f64, f64), depth: f64) -> BodySpec {
    let shape = BodyShape::Box {
        half_extents: (half.0, half.1, 0.5 * depth),
    };
    BodySpec {
        velocity: (v.0, v.1, 0.0),
        motion: BodyMotion::Kinematic,
        ..BodySpec::at_rest(shape, (c.0, c.1, 0.5 * depth), 500.0)
    }
}

/// A 20 x 16 x 1 box (h = 5 cm) with a moving static sphere, a kinematic box body, a box
/// jet, a disc source, dissipation, buoyancy, dye weight and confinement all on.
fn stage_scene(scheme: AdvectionScheme) -> Scene {
    let mut s = smoke_scene("smoke stages", 20, 16, 0.05, PreconditionerKind::Ip);
    s.solids = vec![Shape::Sphere {
        center: (0.31, 0.47, 0.025),
        radius: 0.11,
        velocity: (0.2, -0.1, 0.0),
    }];
    s.pressure.warm_start = false;
    let sm = &mut s.smoke;
    sm.advection = scheme;
    sm.vorticity = 0.6;
    sm.buoyancy = 2.0;
    sm.dye_weight = 0.3;
    sm.ambient_temperature = 0.1;
    sm.velocity_dissipation = 0.2;
    sm.dye_dissipation = 0.3;
    sm.temperature_dissipation = 0.7;
    sm.tracers = 64;
    sm.sources = vec![
        SmokeSource {
            shape: SOURCE_BOX,
            dye: (1.0, 0.5, 0.2),
            temperature: 1.0,
            velocity: (0.5, 0.8, 0.0),
        },
        SmokeSource {
            shape: Shape::Sphere {
                center: (0.81, 0.64, 0.025),
                radius: 0.08,
                velocity: (0.0, 0.0, 0.0),
            },
            dye: (0.2, 0.3, 0.9),
            temperature: 0.5,
            velocity: (0.0, 0.0, 0.0),
        },
    ];
    // Partial substeps leave it in place, so every stage sees it in one place.
    s.bodies = vec![kinematic_box((0.7, 0.27), (0.08, 0.06), (0.3, 0.4), 0.05)];
    s.validate().unwrap();
    s
}

fn splat() -> Emitter {
    Emitter::splat([0.52, 0.49], 0.1, [0.3, 0.2, 0.1], [0.4, -0.3])
}

struct Case {
    sim: SmokeSimulation,
    grid: cpu::Grid,
    dye0: Vec<[f32; 4]>,
    vel0: Vec<f32>,
    dt: f64,
}

impl Case {
    fn new(scene: &Scene, seed: u64) -> Self {
        let sim = SmokeSimulation::new(common::gpu(), scene).unwrap();
        let [nx, ny, nz] = scene.dims();
        let grid = cpu::Grid {
            nx: nx as usize,
            ny: ny as usize,
            nz: nz as usize,
            h: scene.h(),
        };
        let mut rng = SplitMix64(seed);
        let cells = grid.cells();
        let faces = (nx as usize + 1) * ny as usize + nx as usize * (ny as usize + 1) + 2 * cells;
        let dye0 = (0..cells)
            .map(|_| [0; 4].map(|_| rng.next_f64() as f32))
            .collect();
        let vel0 = (0..faces)
            .map(|_| (2.0 * rng.next_f64() - 1.0) as f32)
            .collect();
        Case {
            sim,
            grid,
            dye0,
            vel0,
            dt: 0.05,
        }
    }

    /// A fresh substep from the random state, with one splat, up to `last`.
    fn run_to(
        &mut self,
        last: SmokeStage,
    ) -> eddy::sim::SubstepReport<eddy::sim::smoke::SmokeSubstep> {
        self.sim.upload_state(&self.dye0, &self.vel0).unwrap();
        self.sim.add_splat(splat());
        self.sim.substep(self.dt, last).unwrap()
    }

    fn dye(&self) -> cs::Dye {
        self.sim
            .read_dye()
            .unwrap()
            .iter()
            .map(|d| d.map(|x| x as f64))
            .collect()
    }

    fn vel(&self) -> cpu::MacField {
        mac(&self.grid, &self.sim.read_velocity().unwrap())
    }

    fn types(&self) -> Vec<u8> {
        let t: Vec<u32> = read_buffer(&self.sim.ctx, &self.sim.fields.cell_type).unwrap();
        t.iter().map(|x| *x as u8).collect()
    }

    /// The scene's sources and the test's splat, as the reference takes them.
    fn sources(&self) -> Vec<cs::Source> {
        let mut v: Vec<cs::Source> = self
            .sim
            .scene
            .smoke
            .sources
            .iter()
            .map(ref_source)
            .collect();
        v.push(cs::Source {
            region: cs::Region::Gaussian {
                centre: [0.52, 0.49],
                radius: 0.1,
            },
            dye: [0.3, 0.2, 0.1, 0.0],
            velocity: [0.4, -0.3, 0.0],
            set_velocity: false,
        });
        v
    }
}

fn ref_source(s: &SmokeSource) -> cs::Source {
    let v = s.velocity;
    cs::Source {
        region: ref_region(&s.shape),
        dye: [s.dye.0, s.dye.1, s.dye.2, s.temperature],
        velocity: [v.0, v.1, v.2],
        set_velocity: v != (0.0, 0.0, 0.0),
    }
}

fn ref_region(s: &Shape) -> cs::Region {
    match s {
        Shape::Box { min, max, .. } => cs::Region::Box {
            lo: [min.0, min.1],
            hi: [max.0, max.1],
        },
        Shape::Sphere { center, radius, .. } => cs::Region::Disc {
            centre: [center.0, center.1],
            radius: *radius,
        },
        other => panic!("smoke sources are boxes and spheres, not {other:?}"),
    }
}

/// The reference's settings for a substep of `dt`, built from the scene (not from the
/// GPU's packed uniforms, so the packing is checked too).
fn ref_params(sim: &SmokeSimulation, dt: f64) -> cs::Params {
    let s = &sim.scene.smoke;
    let g = sim.scene.gravity;
    let gl = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt();
    let up = if gl > 0.0 {
        [-g.0 / gl, -g.1 / gl, -g.2 / gl]
    } else {
        [0.0, 1.0, 0.0]
    };
    let decay = |rate: f64| (-rate * dt).exp();
    cs::Params {
        up,
        dye_decay: [
            decay(s.dye_dissipation),
            decay(s.dye_dissipation),
            decay(s.dye_dissipation),
            decay(s.temperature_dissipation),
        ],
        velocity_decay: decay(s.velocity_dissipation),
        buoyancy: s.buoyancy,
        dye_weight: s.dye_weight,
        ambient: s.ambient_temperature,
        vorticity: s.vorticity,
        maccormack: s.advection == AdvectionScheme::MacCormack,
    }
}

/// The bodies as the reference's marking takes them, from their f64 state on the host.
fn ref_bodies(sim: &SmokeSimulation) -> Vec<cs::MovingSolid> {
    let Some(b) = &sim.bodies else {
        return vec![];
    };
    b.set
        .bodies
        .iter()
        .map(|b| {
            let r = b.rotation();
            let (half, sphere) = match b.solid {
                eddy::sim::bodies::Solid::Box { half } => (half.to_array(), false),
                eddy::sim::bodies::Solid::Sphere { radius } => ([radius; 3], true),
            };
            cs::MovingSolid {
                body: cpu::bodies::RefBody {
                    centre: b.position.to_array(),
                    axes: [r.x_axis, r.y_axis, r.z_axis].map(|a| a.to_array()),
                    half,
                    sphere,
                },
                velocity: b.velocity().to_array(),
                omega: b.omega().to_array(),
            }
        })
        .collect()
}

fn mac(g: &cpu::Grid, v: &[f32]) -> cpu::MacField {
    let nu = (g.nx + 1) * g.ny * g.nz;
    let nv = g.nx * (g.ny + 1) * g.nz;
    let v = to_f64(v);
    cpu::MacField {
        u: v[..nu].to_vec(),
        v: v[nu..nu + nv].to_vec(),
        w: v[nu + nv..].to_vec(),
    }
}

fn dye_diff(a: &cs::Dye, b: &cs::Dye) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| (0..4).map(move |k| (x[k] - y[k]).abs()))
        .fold(0.0, f64::max)
}

type Report = eddy::sim::SubstepReport<eddy::sim::smoke::SmokeSubstep>;

/// The GPU's state after each smoke stage, each stage run on a fresh substep from the same
/// random state (so a stage's input is the GPU's own output of the stage before it), read
/// back once per advection scheme and shared by the per-stage tests below.
struct StageOutputs {
    scheme: AdvectionScheme,
    grid: cpu::Grid,
    /// The slice's depth, m.
    depth: f64,
    dt: f64,
    params: cs::Params,
    static_solid: Vec<u32>,
    static_vel: Vec<[f64; 3]>,
    /// The static solids' cut faces, and their open fractions as the GPU holds them.
    cut: Option<cpu::Cut>,
    static_open: Option<Vec<f32>>,
    /// Whether the bodies cut faces (the smoke's default).
    cut_bodies: bool,
    bodies: Vec<cs::MovingSolid>,
    sources: Vec<cs::Source>,
    dye0: cs::Dye,
    vel0: cpu::MacField,
    /// After marking: cell types, the solids' velocities (GPU) and the dye.
    types: Vec<u8>,
    solid_vel: Vec<[f32; 4]>,
    /// The open fractions after marking (None where no face is cut).
    open_mark: Option<Vec<f32>>,
    dye_mark: cs::Dye,
    emit: (cs::Dye, cpu::MacField),
    advect: (cs::Dye, cpu::MacField),
    vel_forces: cpu::MacField,
    vel_boundary: cpu::MacField,
    /// Per preconditioner: the substep's report, the projected velocity and the pressure.
    project: Vec<(PreconditionerKind, Report, cpu::MacField, Vec<f64>)>,
    /// After the tracers (the finished substep): report, dye, velocity, tracers, and the
    /// trail's newest slot.
    finished: (Report, cs::Dye, cpu::MacField),
    tracers: Vec<[f32; 4]>,
    newest_trail: Vec<[f32; 4]>,
    /// The bodies after the finished substep moved them.
    bodies_end: Vec<cs::MovingSolid>,
}

impl StageOutputs {
    fn run(scheme: AdvectionScheme) -> Self {
        let scene = stage_scene(scheme);
        let mut c = Case::new(&scene, 11);
        let grid = c.grid;
        let static_solid = c.sim.static_solid().to_vec();
        let static_vel = scene
            .solid_cells()
            .1
            .iter()
            .map(|v| [v[0] as f64, v[1] as f64, v[2] as f64])
            .collect();
        let cut = cpu::Cut::of_scene(&grid, &scene);
        let static_open = scene.static_solids().open;
        let cut_bodies = scene.bodies_cut_faces();
        let dye0 = c.dye0.iter().map(|d| d.map(|x| x as f64)).collect();
        let vel0 = mac(&grid, &c.vel0);
        c.run_to(SmokeStage::Mark);
        let params = ref_params(&c.sim, c.dt);
        let bodies = ref_bodies(&c.sim);
        let (types, dye_mark) = (c.types(), c.dye());
        let solid_vel = read_buffer(&c.sim.ctx, &c.sim.fields.solid_vel).unwrap();
        let open_mark = c
            .sim
            .fields
            .has_cut_faces()
            .then(|| read_buffer(&c.sim.ctx, &c.sim.fields.open).unwrap());
        c.run_to(SmokeStage::Emit);
        let emit = (c.dye(), c.vel());
        c.run_to(SmokeStage::Advect);
        let advect = (c.dye(), c.vel());
        c.run_to(SmokeStage::Forces);
        let vel_forces = c.vel();
        c.run_to(SmokeStage::Boundary);
        let vel_boundary = c.vel();
        let mut project = Vec::new();
        for pre in PreconditionerKind::ALL {
            let mut scene = scene.clone();
            scene.pressure.preconditioner = pre;
            c.sim.apply_live_settings(&scene).unwrap();
            let rep = c.run_to(SmokeStage::Project);
            let phi = to_f64(&read_buffer::<f32>(&c.sim.ctx, &c.sim.pcg.p).unwrap());
            project.push((pre, rep, c.vel(), phi));
        }
        let rep = c.run_to(SmokeStage::Tracers);
        let finished = (rep, c.dye(), c.vel());
        let bodies_end = ref_bodies(&c.sim);
        let tracers = c.sim.read_tracers().unwrap();
        let trail: Vec<[f32; 4]> = read_buffer(&c.sim.ctx, &c.sim.mode.smoke.trail).unwrap();
        let slot = (c.sim.trail_slot() as usize + 15) % 16;
        let newest_trail = trail[slot * tracers.len()..(slot + 1) * tracers.len()].to_vec();
        StageOutputs {
            scheme,
            grid,
            depth: scene.domain.2,
            dt: c.dt,
            params,
            static_solid,
            cut,
            static_open,
            cut_bodies,
            static_vel,
            bodies,
            sources: c.sources(),
            dye0,
            vel0,
            types,
            solid_vel,
            open_mark,
            dye_mark,
            emit,
            advect,
            vel_forces,
            vel_boundary,
            project,
            finished,
            tracers,
            newest_trail,
            bodies_end,
        }
    }
}

impl StageOutputs {
    /// The reference's marking from the substep's start: cell types, solid velocities, the
    /// cut the later stages see (the static solids' own, or with what the bodies cover where
    /// they cut faces) and the dye.
    fn reference_mark(&self) -> (Vec<u8>, Vec<[f64; 3]>, Option<cpu::Cut>, cs::Dye) {
        let mut dye = self.dye0.clone();
        let (g, solid, vel) = (&self.grid, &self.static_solid, &self.static_vel);
        if self.cut_bodies {
            let open = self.static_open.as_deref();
            let (t, v, cut) = cs::mark_cut(g, solid, vel, open, &self.bodies, &mut dye);
            (t, v, Some(cut), dye)
        } else {
            let (t, v) = cs::mark(g, solid, vel, &self.bodies, &mut dye);
            (t, v, self.cut.clone(), dye)
        }
    }
}

fn stage_outputs(scheme: AdvectionScheme) -> &'static StageOutputs {
    static SL: std::sync::OnceLock<StageOutputs> = std::sync::OnceLock::new();
    static MC: std::sync::OnceLock<StageOutputs> = std::sync::OnceLock::new();
    let cell = match scheme {
        AdvectionScheme::SemiLagrangian => &SL,
        AdvectionScheme::MacCormack => &MC,
    };
    cell.get_or_init(|| StageOutputs::run(scheme))
}

/// Marking: static solids (one moving) and the kinematic body; dye cleared inside them.
fn check_mark(o: &StageOutputs) {
    let g = &o.grid;
    assert_eq!(o.bodies.len(), 1);
    let (types, solid_vel, cut, expect_dye) = o.reference_mark();
    assert_eq!(o.types, types, "cell types");
    let e = o
        .solid_vel
        .iter()
        .zip(&solid_vel)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] as f64 - b[k]).abs()))
        .fold(0.0, f64::max);
    assert!(e < 1e-6, "solid velocities differ by {e}");
    if o.cut_bodies {
        // What the bodies cover: the open fractions they leave, and which cells carry a
        // body's velocity (the w of solid_vel).
        let cut = cut.as_ref().unwrap();
        let open = o
            .open_mark
            .as_ref()
            .expect("bodies that cut faces hold fractions");
        let expect = [&cut.open.u, &cut.open.v, &cut.open.w];
        let e = open
            .iter()
            .zip(expect.iter().flat_map(|c| c.iter()))
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0.0, f64::max);
        assert!(e < 1e-5, "open fractions differ by {e}");
        let partly = open.iter().filter(|&&x| x > 0.0 && x < 1.0).count();
        assert!(partly >= 4, "the body cuts only {partly} faces");
        let carried: Vec<u32> = o.solid_vel.iter().map(|v| v[3] as u32).collect();
        assert_eq!(carried, cut.body, "cells carrying the body's velocity");
    }
    let moving = solid_vel.iter().filter(|v| **v == [0.3, 0.4, 0.0]).count();
    assert!(moving >= 6, "{moving} cells carry the body's velocity");
    // SOLID cells, and the cut cells that are FLUID for the solve (the static solids', and
    // the body's where it cuts faces).
    let flags = cut.as_ref().map_or(&o.static_solid, |c| &c.flags);
    let solids = types
        .iter()
        .zip(flags)
        .filter(|(t, s)| **t == cpu::SOLID || **s == eddy::gpu::constants::SOLID_PARTIAL)
        .count();
    assert!(
        solids > 20 && solids < g.cells() / 2,
        "{solids} solid cells"
    );
    assert!(
        o.static_solid
            .contains(&eddy::gpu::constants::SOLID_PARTIAL),
        "no cut cell"
    );
    assert!(types
        .iter()
        .zip(&o.static_solid)
        .any(|(t, s)| *t == cpu::SOLID && *s == 0));
    assert_eq!(dye_diff(&o.dye_mark, &expect_dye), 0.0, "dye after marking");
}

/// Sources and the splat (exp in f32: 1e-5).
fn check_emit(o: &StageOutputs) {
    let mut expect_dye = o.dye_mark.clone();
    let mut expect_vel = o.vel0.clone();
    cs::emit(
        &o.grid,
        &o.types,
        &o.sources,
        &mut expect_dye,
        &mut expect_vel,
    );
    let (dye_emit, vel_emit) = &o.emit;
    let e = dye_diff(dye_emit, &expect_dye).max(mac_diff(vel_emit, &expect_vel));
    assert!(e < 1e-5, "emit differs by {e}");
    assert!(
        dye_diff(dye_emit, &o.dye_mark) > 0.5,
        "the sources changed nothing"
    );
}

/// Advection (f32 back-traces through a random field: 1e-4 of values up to ~2).
fn check_advect(o: &StageOutputs) {
    let (dye_emit, vel_emit) = &o.emit;
    let mut expect_dye = dye_emit.clone();
    let mut expect_vel = vel_emit.clone();
    cs::advect(
        &o.grid,
        &o.types,
        &o.params,
        o.dt,
        &mut expect_vel,
        &mut expect_dye,
    );
    let (dye_adv, vel_adv) = &o.advect;
    let ed = dye_diff(dye_adv, &expect_dye);
    let ev = mac_diff(vel_adv, &expect_vel);
    assert!(
        ed < 1e-4 && ev < 1e-4,
        "{:?} advection differs: dye {ed}, velocity {ev}",
        o.scheme
    );
    assert!(dye_diff(dye_adv, dye_emit) > 0.1, "advection moved nothing");
}

/// Confinement and buoyancy (1e-4 m/s of velocities ~1 m/s).
fn check_forces(o: &StageOutputs) {
    let g = &o.grid;
    let (dye_adv, vel_adv) = &o.advect;
    let mut expect_vel = vel_adv.clone();
    cs::forces(g, &o.types, &o.params, o.dt, &mut expect_vel, dye_adv);
    let e = mac_diff(&o.vel_forces, &expect_vel);
    assert!(e < 1e-4, "forces differ by {e}");
    assert!(
        mac_diff(&o.vel_forces, vel_adv) > 1e-2,
        "forces changed nothing"
    );
    let curl = cs::vorticity(g, &o.types, vel_adv);
    let conf_only = {
        let mut q = o.params;
        q.buoyancy = 0.0;
        q.dye_weight = 0.0;
        cs::cell_forces(g, &o.types, &q, &curl, dye_adv)
    };
    assert!(
        conf_only.iter().any(|f| f[0].abs() > 1e-2),
        "no confinement force"
    );
}

/// Boundary conditions: the liquid's kernel, with the solids' velocities.
fn check_boundary(o: &StageOutputs) {
    let (_, solid_vel, cut, _) = o.reference_mark();
    let mut expect_vel = o.vel_forces.clone();
    cpu::apply_boundary_cut(&o.grid, &o.types, &solid_vel, cut.as_ref(), &mut expect_vel);
    assert!(mac_diff(&o.vel_boundary, &expect_vel) < 1e-6);
}

/// Projection, for every preconditioner: the GPU pressure against an f64 solve of the
/// same (pure Neumann, consistent) system, and the divergence drop.
fn check_project(o: &StageOutputs) {
    let (g, types, vel_bc) = (&o.grid, &o.types, &o.vel_boundary);
    let (_, _, cut, _) = o.reference_mark();
    let cut = cut.as_ref();
    let (div, b) = cpu::divergence_cut(g, types, vel_bc, cut);
    let fluid: Vec<usize> = (0..g.cells()).filter(|&i| types[i] == cpu::FLUID).collect();
    let mean = fluid.iter().map(|&i| b[i]).sum::<f64>() / fluid.len() as f64;
    assert!(
        mean.abs() < 1e-5 * max_abs(&b),
        "inconsistent system: mean b {mean}"
    );
    let b: Vec<f64> = (0..g.cells())
        .map(|i| {
            if types[i] == cpu::FLUID {
                b[i] - mean
            } else {
                0.0
            }
        })
        .collect();
    let a = cpu::build_matrix_cut(g, types, None, cut);
    let exact = cpu::pcg(
        g,
        types,
        &a,
        &b,
        cpu::Preconditioner::None,
        1e-12,
        5000,
        None,
    );
    assert!(exact.converged);
    let mut expect_vel = vel_bc.clone();
    cpu::project_cut(g, types, None, cut, &exact.p, &mut expect_vel);
    assert_eq!(o.project.len(), PreconditionerKind::ALL.len());
    for (pre, rep, vel_p, phi) in &o.project {
        let solve = rep.solve.clone().unwrap();
        assert!(solve.residual <= 1e-5, "{pre}: residual {}", solve.residual);
        let e = mac_diff(vel_p, &expect_vel) / mac_max(vel_bc);
        assert!(
            e < 2e-3,
            "{pre}: projected velocity differs from the f64 solve by {e} (relative)"
        );
        let mut with_gpu_phi = vel_bc.clone();
        cpu::project_cut(g, types, None, cut, phi, &mut with_gpu_phi);
        let e = mac_diff(vel_p, &with_gpu_phi);
        assert!(
            e < 1e-5,
            "{pre}: projection with the GPU pressure differs by {e}"
        );
        let (div_after, _) = cpu::divergence_cut(g, types, vel_p, cut);
        let (d0, d1) = (max_abs(&div), max_abs(&div_after));
        assert!(d1 <= 5e-5 * d0, "{pre}: |div| {d0} -> {d1}");
        assert!((rep.max_divergence as f64 - d1).abs() <= 1e-3 * d0);
        eprintln!(
            "{pre}: {} iterations, |div| {d0:.3e} -> {d1:.3e}",
            solve.iterations
        );
    }
}

/// Statistics of the finished step, and the tracers' newest trail slot.
fn check_stats_and_tracers(o: &StageOutputs) {
    let g = &o.grid;
    // The trail holds where the tracers moved; once the substep has moved the body, its
    // push-out takes those inside it (where it cuts faces, tracers enter its cut cells) out
    // to its surface.
    let inside = |p: &[f32; 4]| {
        let x = [p[0], p[1], p[2]].map(|v| v as f64);
        o.bodies_end.iter().any(|b| b.body.contains(x, true))
    };
    let mut pushed = 0;
    for (t, p) in o.newest_trail.iter().zip(&o.tracers) {
        if inside(t) {
            pushed += 1;
            let x = [p[0], p[1], p[2]].map(|v| v as f64);
            let d = o.bodies_end[0].body.distance(x, true);
            assert!(d > -1e-5, "a tracer left {d} m inside the body");
        } else {
            assert_eq!(t, p, "a tracer outside the body moved after its trail");
        }
    }
    assert!(pushed < o.tracers.len() / 10, "{pushed} tracers pushed");
    let (rep, dye, vel) = &o.finished;
    let (sums, max_speed) = cs::stats(g, &o.types, vel, dye);
    let vol = g.h * g.h * o.depth;
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-12);
    assert!(rel(rep.extra.dye_total, sums[0] * vol) < 1e-5);
    assert!(rel(rep.extra.dye_center_y, sums[1] / sums[0]) < 1e-5);
    assert!(rel(rep.extra.enstrophy, sums[2] * vol) < 1e-4);
    assert!(rel(rep.extra.kinetic_energy, 0.5 * 1.2 * sums[3] * vol) < 1e-5);
    assert!(rel(rep.max_speed as f64, max_speed) < 1e-5);
}

/// One test per smoke stage and advection scheme.
macro_rules! smoke_stage_tests {
    ($($check:ident => $sl:ident, $mc:ident;)*) => {$(
        #[test]
        fn $sl() {
            $check(stage_outputs(AdvectionScheme::SemiLagrangian));
        }

        #[test]
        fn $mc() {
            $check(stage_outputs(AdvectionScheme::MacCormack));
        }
    )*};
}

smoke_stage_tests! {
    check_mark => smoke_mark_matches_the_reference_sl, smoke_mark_matches_the_reference_mc;
    check_emit => smoke_emit_matches_the_reference_sl, smoke_emit_matches_the_reference_mc;
    check_advect => smoke_advect_matches_the_reference_sl, smoke_advect_matches_the_reference_mc;
    check_forces => smoke_forces_match_the_reference_sl, smoke_forces_match_the_reference_mc;
    check_boundary =>
        smoke_boundary_matches_the_reference_sl, smoke_boundary_matches_the_reference_mc;
    check_project =>
        smoke_projection_matches_the_reference_sl, smoke_projection_matches_the_reference_mc;
    check_stats_and_tracers =>
        smoke_stats_and_tracers_match_the_reference_sl,
        smoke_stats_and_tracers_match_the_reference_mc;
}

/// A closed 1 x 1.5 m box (32 x 48 cells) with a hot disc source centred at the bottom.
fn plume_scene(vorticity: f64) -> Scene {
    let mut s = smoke_scene("plume", 32, 48, 1.0 / 32.0, PreconditionerKind::Ip);
    let sm = &mut s.smoke;
    sm.vorticity = vorticity;
    sm.buoyancy = 4.0;
    sm.dye_weight = 0.0;
    sm.temperature_dissipation = 0.0;
    sm.tracers = 256;
    sm.sources = vec![SmokeSource {
        shape: Shape::Sphere {
            center: (0.5, 0.15, 0.0156),
            radius: 0.08,
            velocity: (0.0, 0.0, 0.0),
        },
        dye: (1.0, 1.0, 1.0),
        temperature: 1.0,
        velocity: (0.0, 0.0, 0.0),
    }];
    s.validate().unwrap();
    s
}

/// Largest |q(i, j) - q(nx-1-i, j)| of the dye and |u(i) + u(nx-i)|, |v(i) - v(nx-1-i)|.
fn mirror_error(sim: &SmokeSimulation) -> (f64, f64) {
    let [nx, ny, _] = sim.dims().map(|v| v as usize);
    let dye = sim.read_dye().unwrap();
    let vel = sim.read_velocity().unwrap();
    let mut ed: f64 = 0.0;
    let mut ev: f64 = 0.0;
    for j in 0..ny {
        for i in 0..nx {
            let (a, b) = (dye[i + nx * j], dye[nx - 1 - i + nx * j]);
            for k in 0..4 {
                ed = ed.max((a[k] - b[k]).abs() as f64);
            }
            let v = &vel[(nx + 1) * ny..];
            ev = ev.max((v[i + nx * j] - v[nx - 1 - i + nx * j]).abs() as f64);
        }
        for i in 0..=nx {
            ev = ev.max((vel[i + (nx + 1) * j] + vel[nx - i + (nx + 1) * j]).abs() as f64);
        }
    }
    (ed, ev)
}

#[test]
fn plume_rises_stays_symmetric_and_confinement_adds_enstrophy() {
    let dt = 1.0 / 60.0;
    let mut results = Vec::new();
    for vorticity in [0.0, 0.5] {
        let mut sim = SmokeSimulation::new(common::gpu(), &plume_scene(vorticity)).unwrap();
        let mut heights = Vec::new();
        let mut last = None;
        for step in 1..=100 {
            let rep = sim.substep(dt, SmokeStage::Tracers).unwrap();
            assert!(
                rep.max_divergence < 1e-2,
                "step {step}: |div| {}",
                rep.max_divergence
            );
            if step % 10 == 0 {
                heights.push(rep.extra.dye_center_y);
            }
            last = Some(rep);
        }
        let last = last.unwrap();
        eprintln!(
            "vorticity {vorticity}: dye centre height {heights:.3?} m, enstrophy {:.4e}, max speed {:.3}",
            last.extra.enstrophy, last.max_speed
        );
        // The plume rises: the dye's centre climbs well above the source (0.15 m).
        assert!(
            heights.windows(2).skip(2).all(|w| w[1] > w[0]),
            "{heights:?}"
        );
        assert!(heights[9] > 0.35, "{heights:?}");
        assert!(last.max_speed > 0.3);
        if vorticity == 0.0 {
            let (ed, ev) = mirror_error(&sim);
            eprintln!("mirror error after 100 steps: dye {ed:.2e}, velocity {ev:.2e} m/s");
            assert!(
                ed < 1e-3 && ev < 1e-3 * last.max_speed as f64,
                "mirror error {ed}, {ev}"
            );
        }
        results.push(last.extra.enstrophy);
    }
    assert!(
        results[1] > 1.05 * results[0],
        "enstrophy off {}, on {}",
        results[0],
        results[1]
    );
}

/// The plume's pure-Neumann systems with the multigrid preconditioner (32 x 48 -> 16 x 24 ->
/// 8 x 12 -> 4 x 6 levels): every solve of 60 steps converges, in few iterations, and the
/// flow is the one the f64-checked ip run gives.
#[test]
fn plume_solves_converge_with_multigrid_at_every_step() {
    let dt = 1.0 / 60.0;
    let mut runs = Vec::new();
    for pre in [PreconditionerKind::Mg, PreconditionerKind::Ip] {
        let mut scene = plume_scene(0.3);
        scene.pressure.preconditioner = pre;
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        let mut worst = 0;
        let mut last = None;
        for step in 1..=60 {
            let rep = sim.substep(dt, SmokeStage::Tracers).unwrap();
            let solve = rep.solve.clone().unwrap();
            assert_eq!(
                solve.status,
                eddy::sim::core::pressure::SolveStatus::Converged,
                "{pre} step {step}: {solve:?}"
            );
            assert!(solve.residual <= 1e-5);
            worst = worst.max(solve.iterations);
            last = Some(rep);
        }
        eprintln!("{pre}: at most {worst} iterations per solve");
        if pre == PreconditionerKind::Mg {
            assert!(worst <= 15, "mg needed {worst} iterations");
        }
        runs.push(last.unwrap());
    }
    let (mg, ip) = (&runs[0], &runs[1]);
    assert!((mg.extra.dye_center_y - ip.extra.dye_center_y).abs() < 1e-3 * ip.extra.dye_center_y);
    assert!(
        (mg.extra.kinetic_energy - ip.extra.kinetic_energy).abs() < 1e-2 * ip.extra.kinetic_energy
    );
}

/// A 32 x 32 closed box turning as a rigid body (2 rad/s) around its centre, with a solid
/// block and a gaussian blob of dye; nothing else acts.
fn swirl(scheme: AdvectionScheme) -> (SmokeSimulation, Vec<[f32; 4]>, Vec<f32>) {
    let mut s = smoke_scene("swirl", 32, 32, 1.0 / 32.0, PreconditionerKind::Ip);
    s.solids = vec![Shape::Box {
        min: (0.66, 0.42, 0.0),
        max: (0.76, 0.58, 0.03125),
        velocity: (0.0, 0.0, 0.0),
    }];
    s.gravity = (0.0, 0.0, 0.0);
    let sm = &mut s.smoke;
    sm.advection = scheme;
    sm.vorticity = 0.0;
    sm.buoyancy = 0.0;
    sm.dye_weight = 0.0;
    sm.temperature_dissipation = 0.0;
    sm.tracers = 256;
    s.validate().unwrap();
    let sim = SmokeSimulation::new(common::gpu(), &s).unwrap();
    let n = 32usize;
    let h = 1.0 / n as f64;
    let dye = (0..n * n)
        .map(|c| {
            let (x, y) = (((c % n) as f64 + 0.5) * h, ((c / n) as f64 + 0.5) * h);
            let r2 = (x - 0.3).powi(2) + (y - 0.5).powi(2);
            let d = (-r2 / 0.01).exp() as f32;
            [d, 0.5 * d, 0.25 * d, 0.0]
        })
        .collect();
    let mut vel = vec![0f32; (n + 1) * n * 2 + 2 * n * n];
    for j in 0..n {
        for i in 0..=n {
            vel[i + (n + 1) * j] = (-2.0 * ((j as f64 + 0.5) * h - 0.5)) as f32;
            vel[(n + 1) * n + j + n * i.min(n)] = 0.0;
        }
    }
    for j in 0..=n {
        for i in 0..n {
            vel[(n + 1) * n + i + n * j] = (2.0 * ((i as f64 + 0.5) * h - 0.5)) as f32;
        }
    }
    (sim, dye, vel)
}

fn dye_in_solids(sim: &SmokeSimulation) -> f32 {
    let t: Vec<u32> = read_buffer(&sim.ctx, &sim.fields.cell_type).unwrap();
    let dye = sim.read_dye().unwrap();
    t.iter()
        .zip(&dye)
        .filter(|(t, _)| **t == 2)
        .map(|(_, d)| d.iter().fold(0f32, |m, x| m.max(x.abs())))
        .fold(0.0, f32::max)
}

/// The same 200 steps in f64 (advect, boundary, project with an exact solve): the GPU's
/// drift is the scheme's, not the GPU's.
fn reference_drift(sim: &SmokeSimulation, types: &[u8], dye: &[[f32; 4]], vel: &[f32]) -> f64 {
    let g = cpu::Grid {
        nx: 32,
        ny: 32,
        nz: 1,
        h: 1.0 / 32.0,
    };
    let p = ref_params(sim, 0.01);
    let mut d: cs::Dye = dye.iter().map(|x| x.map(|v| v as f64)).collect();
    let mut v = mac(&g, vel);
    let still = vec![[0.0; 3]; g.cells()];
    let cut = cpu::Cut::of_scene(&g, &sim.scene);
    let cut = cut.as_ref();
    let a = cpu::build_matrix_cut(&g, types, None, cut);
    let mut totals = Vec::new();
    for _ in 0..200 {
        for c in 0..g.cells() {
            if types[c] == cpu::SOLID {
                d[c] = [0.0; 4];
            }
        }
        cs::advect(&g, types, &p, 0.01, &mut v, &mut d);
        cpu::apply_boundary_cut(&g, types, &still, cut, &mut v);
        let (_, b) = cpu::divergence_cut(&g, types, &v, cut);
        let fluid = types.iter().filter(|t| **t == cpu::FLUID).count() as f64;
        let mean = b.iter().sum::<f64>() / fluid;
        let b: Vec<f64> = (0..g.cells())
            .map(|c| {
                if types[c] == cpu::FLUID {
                    b[c] - mean
                } else {
                    0.0
                }
            })
            .collect();
        let r = cpu::pcg(
            &g,
            types,
            &a,
            &b,
            cpu::Preconditioner::Mic0,
            1e-9,
            5000,
            None,
        );
        cpu::project_cut(&g, types, None, cut, &r.p, &mut v);
        totals.push(d.iter().map(|x| (x[0] + x[1] + x[2]) / 3.0).sum::<f64>());
    }
    (totals[199] - totals[0]) / totals[0]
}

#[test]
fn dye_drift_over_200_steps_per_scheme() {
    for scheme in AdvectionScheme::ALL {
        let (mut sim, dye, vel) = swirl(scheme);
        sim.upload_state(&dye, &vel).unwrap();
        let peak = dye.iter().map(|d| d[0]).fold(0f32, f32::max);
        let first = sim.substep(0.01, SmokeStage::Tracers).unwrap();
        let types: Vec<u8> = read_buffer::<u32>(&sim.ctx, &sim.fields.cell_type)
            .unwrap()
            .iter()
            .map(|t| *t as u8)
            .collect();
        let mut last = first.clone();
        for step in 2..=200 {
            last = sim.substep(0.01, SmokeStage::Tracers).unwrap();
            if step % 50 == 0 {
                assert_eq!(
                    dye_in_solids(&sim),
                    0.0,
                    "{scheme:?}: dye inside a solid at step {step}"
                );
            }
        }
        let drift = (last.extra.dye_total - first.extra.dye_total) / first.extra.dye_total;
        let expect = reference_drift(&sim, &types, &dye, &vel);
        let d = sim.read_dye().unwrap();
        let max = d
            .iter()
            .flat_map(|c| c[..3].to_vec())
            .fold(f32::MIN, f32::max);
        let min = d
            .iter()
            .flat_map(|c| c[..3].to_vec())
            .fold(f32::MAX, f32::min);
        eprintln!(
            "{}: dye total {:.6e} -> {:.6e} after 200 steps: drift {:+.2}% (f64 reference {:+.2}%), dye range [{min:.3e}, {max:.4}] (peak at start {peak:.4})",
            scheme.name(),
            first.extra.dye_total,
            last.extra.dye_total,
            100.0 * drift,
            100.0 * expect
        );
        assert!(
            (drift - expect).abs() < 0.005,
            "{scheme:?}: GPU drift {drift}, f64 {expect}"
        );
        // Neither scheme makes new extrema (MacCormack is clamped).
        assert!(
            min >= 0.0 && max <= peak + 1e-5,
            "{scheme:?}: range [{min}, {max}]"
        );
        assert!(last.max_speed > 0.5);
        // Neither scheme conserves dye exactly; docs/guide/06-how-a-step-works.md ("Dye
        // conservation") states these numbers.
        assert!(drift.abs() < 0.2, "{scheme:?}: dye drift {drift}");
    }
}

#[test]
fn kinematic_body_pushes_the_smoke_and_dye_stays_out() {
    let mut s = smoke_scene(
        "kinematic box",
        32,
        16,
        1.0 / 32.0,
        PreconditionerKind::Mic0,
    );
    s.gravity = (0.0, 0.0, 0.0);
    s.smoke.vorticity = 0.0;
    s.smoke.tracers = 500;
    // A 0.15 x 0.2 m box from (0.1, 0.15) moving right at 0.6 m/s.
    s.bodies = vec![kinematic_box(
        (0.175, 0.25),
        (0.075, 0.1),
        (0.6, 0.0),
        s.domain.2,
    )];
    s.validate().unwrap();
    let mut sim = SmokeSimulation::new(common::gpu(), &s).unwrap();
    let cells = 32 * 16;
    let faces = 33 * 16 + 32 * 17 + 2 * cells;
    sim.upload_state(&vec![[1.0, 1.0, 1.0, 0.0]; cells], &vec![0.0; faces])
        .unwrap();
    let body = |sim: &SmokeSimulation| sim.bodies.as_ref().unwrap().set.bodies[0].clone();
    let start = body(&sim).position;
    for step in 1..=40 {
        let rep = sim.substep(0.01, SmokeStage::Tracers).unwrap();
        assert!(
            rep.max_divergence < 1e-3,
            "step {step}: |div| {}",
            rep.max_divergence
        );
    }
    // It moved on its own velocity (the substep stamps it where it is, then moves it).
    let b = body(&sim);
    assert!(
        (b.position.x - start.x - 0.24).abs() < 1e-9 && (b.position.y - start.y).abs() < 1e-12,
        "body at {}",
        b.position
    );
    // One more substep up to the projection, stamped where the body is now.
    sim.substep(0.01, SmokeStage::Project).unwrap();
    assert_eq!(dye_in_solids(&sim), 0.0);
    // The solid's faces move with it: u = 0.6 m/s on the x faces of its cells.
    let t: Vec<u32> = read_buffer(&sim.ctx, &sim.fields.cell_type).unwrap();
    let vel = sim.read_velocity().unwrap();
    let mut checked = 0;
    for j in 0..16 {
        for i in 1..32 {
            let (a, b) = (t[i - 1 + 32 * j], t[i + 32 * j]);
            if a == 2 || b == 2 {
                assert!((vel[i + 33 * j] - 0.6).abs() < 1e-6, "u face ({i}, {j})");
                checked += 1;
            }
        }
    }
    assert!(checked >= 10);
    // The flow around it: air streams back past the body.
    assert!(sim.max_speed > 0.6, "max speed {}", sim.max_speed);
    assert!(vel[..33 * 16].iter().any(|u| *u < -0.1));
    // Tracers stay in the domain and out of the body that sweeps through them.
    let (lo, hi) = (
        [b.position.x - 0.075, b.position.y - 0.1],
        [b.position.x + 0.075, b.position.y + 0.1],
    );
    for p in sim.read_tracers().unwrap() {
        assert!(
            p[0] >= 0.0 && p[0] <= 1.0 && p[1] >= 0.0 && p[1] <= 0.5,
            "tracer at {p:?}"
        );
        let (x, y) = (p[0] as f64, p[1] as f64);
        let inside = x > lo[0] + 1e-5 && x < hi[0] - 1e-5 && y > lo[1] + 1e-5 && y < hi[1] - 1e-5;
        assert!(!inside, "tracer {p:?} inside the body {lo:?}..{hi:?}");
    }
}

/// A smoke scene with a moving box: `obstacle` (a `smoke.obstacle` entry) or `bodies` (a
/// `bodies` list), the other empty.
fn moving_box_scene(obstacle: &str, bodies: &str) -> Scene {
    let text = format!(
        "(
            name: \"moving box\",
            kind: smoke,
            domain: (2.0, 1.0, 0.03125),
            resolution: (64, 32, 1),
            gravity: (0.0, -9.81, 0.0),
            solids: [Sphere(center: (0.5, 0.5, 0.0), radius: 0.12)],
            smoke: (
                sources: [(
                    shape: Box(min: (0.0, 0.375, 0.0), max: (0.125, 0.625, 0.03125)),
                    dye: (0.2, 0.6, 1.0),
                    temperature: 0.5,
                    velocity: (1.0, 0.0, 0.0),
                )],
                tracers: 256,
                {obstacle}
            ),
            {bodies}
        )"
    );
    Scene::parse(&text, std::path::Path::new("moving_box.ron")).unwrap()
}

#[test]
fn a_scene_obstacle_runs_bitwise_as_the_kinematic_body_it_becomes() {
    let old = moving_box_scene(
        "obstacle: Some(Box(min: (1.25, 0.25, 0.0), max: (1.5, 0.5, 0.03125), \
         velocity: (0.0, 0.75, 0.0))),",
        "",
    );
    let new = moving_box_scene(
        "",
        "bodies: [(shape: Box(half_extents: (0.125, 0.125, 0.015625)), \
         center: (1.375, 0.375, 0.015625), velocity: (0.0, 0.75, 0.0), motion: kinematic)],",
    );
    // Loading turned the obstacle into the same body: the two loaded scenes are one.
    assert!(old.smoke.obstacle.is_none());
    assert_eq!(old, new);
    // A scene built in code with `smoke.obstacle` runs that body too, bit for bit.
    let mut in_code = new.clone();
    in_code.bodies.clear();
    in_code.smoke.obstacle = Some(Shape::Box {
        min: (1.25, 0.25, 0.0),
        max: (1.5, 0.5, 0.03125),
        velocity: (0.0, 0.75, 0.0),
    });
    let run = |scene: &Scene| {
        let mut sim = SmokeSimulation::new(common::gpu(), scene).unwrap();
        // Live changes to the scene it was built from are taken (it runs the obstacle as
        // a body, and compares it so).
        let mut faster = scene.clone();
        faster.cfl *= 0.5;
        sim.apply_live_settings(&faster).unwrap();
        let mut rows = Vec::new();
        for _ in 0..3 {
            let f = sim.step_frame().unwrap();
            rows.push(format!("{f:?}"));
        }
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        (
            rows,
            b.position,
            sim.read_dye().unwrap(),
            sim.read_tracers().unwrap(),
        )
    };
    let (a, c) = (run(&new), run(&in_code));
    assert_eq!(a.0, c.0, "frame stats of the scene built in code");
    assert_eq!(a.1, c.1);
    let bits = |v: &[[f32; 4]]| {
        v.iter()
            .flatten()
            .map(|x| x.to_bits())
            .collect::<Vec<u32>>()
    };
    assert_eq!(bits(&a.2), bits(&c.2), "dye");
    assert_eq!(bits(&a.3), bits(&c.3), "tracers");
    // The box moved up.
    assert!(a.1.y > 0.375 + 0.5 * 0.75 * 3.0 / 60.0, "box at {}", a.1);
}

#[test]
fn viewer_mouse_tools_act_on_the_simulation() {
    use eddy::ui::smoke::{apply_drag, end_drag, grab_body, start_drag, Drag, SmokePanel, Tool};
    let scene = stage_scene(AdvectionScheme::MacCormack);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let mut panel = SmokePanel::default();
    let dt = scene.frame_dt;
    // A left drag that starts on the kinematic body holds it under the mouse; at the next
    // frame its faces move with the mouse's displacement over the frame.
    let body = |sim: &SmokeSimulation| sim.bodies.as_ref().unwrap().set.bodies[0].clone();
    let c = body(&sim).position;
    let mut drag = start_drag(&sim, &panel, true, [c.x, c.y]);
    assert!(matches!(drag, Drag::Body { index: 0 }));
    grab_body(&mut sim, &drag, [c.x, c.y]);
    assert!(apply_drag(
        &mut sim,
        &panel,
        &mut drag,
        [c.x - 0.1, c.y + 0.05],
        dt
    ));
    let b = body(&sim);
    assert!(b.grab.is_some());
    assert!(
        (b.position.x - (c.x - 0.1)).abs() < 1e-9 && (b.position.y - (c.y + 0.05)).abs() < 1e-9,
        "{}",
        b.position
    );
    assert_eq!(b.velocity(), glam::DVec3::ZERO, "held, it stopped");
    // What step_frame does first.
    sim.bodies.as_mut().unwrap().set.begin_frame(dt);
    let b = body(&sim);
    assert!(
        (b.velocity().x + 0.1 / dt).abs() < 1e-9 && (b.velocity().y - 0.05 / dt).abs() < 1e-9,
        "{}",
        b.velocity()
    );
    // Its faces push the smoke with the mouse's velocity.
    sim.substep(0.01, SmokeStage::Boundary).unwrap();
    let sv: Vec<[f32; 4]> = read_buffer(&sim.ctx, &sim.fields.solid_vel).unwrap();
    let h = scene.h();
    let at = (b.position.x / h) as usize + 20 * (b.position.y / h) as usize;
    assert!(
        (sv[at][0] as f64 + 0.1 / dt).abs() < 1e-4,
        "solid velocity under the mouse {:?}",
        sv[at]
    );
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    assert_eq!(
        body(&sim).position,
        b.position,
        "a held body stays under the mouse"
    );
    end_drag(&mut sim, &mut drag);
    let b = body(&sim);
    assert!(
        b.grab.is_none() && b.velocity().x == 0.3 && b.velocity().y == 0.4,
        "{:?}",
        b.velocity()
    );
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    let moved = body(&sim).position - b.position;
    assert!(
        (moved.x - 0.003).abs() < 1e-12 && (moved.y - 0.004).abs() < 1e-12,
        "released, the body moves on its own again: {moved}"
    );
    // Drawing paints SOLID cells, erasing removes them (scene solids too).
    panel.tool = Tool::Draw;
    let p = [0.5, 0.65];
    let mut drag = start_drag(&sim, &panel, true, p);
    assert!(apply_drag(&mut sim, &panel, &mut drag, p, dt));
    let painted = sim.static_solid().iter().filter(|s| **s != 0).count();
    sim.substep(0.01, SmokeStage::Mark).unwrap();
    let types: Vec<u32> = read_buffer(&sim.ctx, &sim.fields.cell_type).unwrap();
    let cell = |x: [f64; 2]| (x[0] / h) as usize + 20 * (x[1] / h) as usize;
    assert_eq!(types[cell(p)], 2, "painted cell is SOLID");
    panel.tool = Tool::Erase;
    let sphere = [0.31, 0.47];
    let mut drag = start_drag(&sim, &panel, true, sphere);
    apply_drag(&mut sim, &panel, &mut drag, sphere, dt);
    assert!(sim.static_solid().iter().filter(|s| **s != 0).count() < painted);
    assert_eq!(sim.static_solid()[cell(sphere)], 0);
    // A right drag lays down dye of the panel's colour around the cursor.
    let mut sim = SmokeSimulation::new(common::gpu(), &plume_scene(0.0)).unwrap();
    panel.tool = Tool::Splat;
    panel.color = [0.0, 1.0, 0.0];
    let q = [0.3, 1.0];
    let mut drag = start_drag(&sim, &panel, false, q);
    assert!(apply_drag(&mut sim, &panel, &mut drag, q, dt));
    sim.substep(0.001, SmokeStage::Emit).unwrap();
    let dye = sim.read_dye().unwrap();
    let at = dye[(q[0] * 32.0) as usize + 32 * (q[1] * 32.0) as usize];
    assert!(at[1] > 0.1 && at[0] == 0.0, "dye under the cursor {at:?}");
    // A left drag in the open pushes the air along the drag.
    let mut drag = start_drag(&sim, &panel, true, q);
    apply_drag(&mut sim, &panel, &mut drag, [q[0] + 0.05, q[1]], dt);
    sim.substep(0.001, SmokeStage::Emit).unwrap();
    let u = sim.read_velocity().unwrap();
    let face = (q[0] * 32.0 + 1.5) as usize + 33 * (q[1] * 32.0) as usize;
    assert!(u[face] > 0.5, "u at the splat {}", u[face]);
}

#[test]
fn two_smoke_runs_are_bitwise_identical() {
    let run = || {
        let mut sim = SmokeSimulation::new(common::gpu(), &plume_scene(0.4)).unwrap();
        sim.add_splat(Emitter::splat(
            [0.3, 0.7],
            0.08,
            [0.2, 0.9, 0.4],
            [1.0, 0.5],
        ));
        for _ in 0..20 {
            sim.substep(1.0 / 60.0, SmokeStage::Tracers).unwrap();
        }
        (
            sim.read_dye().unwrap(),
            sim.read_velocity().unwrap(),
            sim.read_tracers().unwrap(),
        )
    };
    let (a, b) = (run(), run());
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(
        bits(bytemuck::cast_slice(&a.0)),
        bits(bytemuck::cast_slice(&b.0)),
        "dye"
    );
    assert_eq!(bits(&a.1), bits(&b.1), "velocity");
    assert_eq!(
        bits(bytemuck::cast_slice(&a.2)),
        bits(bytemuck::cast_slice(&b.2)),
        "tracers"
    );
    assert!(a.0.iter().any(|d| d[1] > 0.1), "the splat's dye is there");
}

/// Cut faces under the mouse: erasing a disc the scene's solid cut leaves its cells' faces
/// open whole (no ghost of the erased solid in the solve), on the GPU and after a checkpoint.
#[test]
fn erasing_a_cut_solid_opens_its_faces() {
    let mut s = smoke_scene("erase", 32, 32, 1.0 / 32.0, PreconditionerKind::Mg);
    s.solids = vec![Shape::Sphere {
        center: (0.5, 0.5, 0.0),
        radius: 0.2,
        velocity: (0.0, 0.0, 0.0),
    }];
    s.validate().unwrap();
    let mut sim = SmokeSimulation::new(common::gpu(), &s).unwrap();
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    let open = |sim: &SmokeSimulation| read_buffer::<f32>(&sim.ctx, &sim.fields.open).unwrap();
    let before = open(&sim);
    let cut = before.iter().filter(|f| **f > 0.0 && **f < 1.0).count();
    assert!(cut > 20, "{cut} cut faces");
    let state = sim.save_state().unwrap();
    // The whole disc and a cell around it.
    assert!(sim.paint_solid([0.5, 0.5], 0.25, false) > 0);
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    let after = open(&sim);
    let nu = 33 * 32;
    let (in_plane, z) = after.split_at(nu + 32 * 33);
    assert!(in_plane.iter().all(|f| *f == 1.0 || *f == 0.0));
    assert_eq!(
        in_plane.iter().filter(|f| **f == 0.0).count(),
        2 * 2 * 32,
        "only the walls stay closed"
    );
    assert!(z.iter().all(|f| *f == 0.0));
    // A checkpoint taken before the erasure gives the cut faces back.
    sim.restore_state(&state).unwrap();
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    assert_eq!(open(&sim), before);
}
