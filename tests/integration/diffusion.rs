//! Implicit diffusion (viscosity, heat, dye) on the software adapter: the GPU stage against
//! the f64 reference, analytic decay rates, conservation, and its effect on whole runs.
//!
//! eddy's domain is a closed box (no periodic axis), so a shear mode sin(pi y / L) between
//! two no-slip walls needs the walls across the flow too: the velocity tests use
//! u = sin(pi x / Lx) sin(pi y / Ly) (times sin(pi z / Lz) in 3D), which the box's
//! no-penetration walls hold exactly and which decays as exp(-nu pi^2 (1/Lx^2 + 1/Ly^2 ...) t).

use crate::common;

use eddy::gpu::read_buffer;
use eddy::reference::diffusion as cpu;
use eddy::reference::Grid;
use eddy::scene::{
    PreconditionerKind, Scene, SceneKind, Shape, SplitMix64, Wall, WallSpot, WallValues,
};
use eddy::sim::{
    smoke::{SmokeSimulation, SmokeStage},
    Simulation, Stage,
};
use std::f64::consts::PI;

fn smoke_scene(nx: u32, ny: u32, h: f64) -> Scene {
    let mut s = Scene {
        name: "diffusion".into(),
        kind: SceneKind::Smoke,
        domain: (nx as f64 * h, ny as f64 * h, h),
        resolution: (nx, ny, 1),
        ..Scene::default()
    };
    s.pressure.preconditioner = PreconditionerKind::Ip;
    s.smoke.tracers = 0;
    s.smoke.vorticity = 0.0;
    s.smoke.temperature_dissipation = 0.0;
    s
}

fn grid_of(scene: &Scene) -> Grid {
    let [nx, ny, nz] = scene.dims().map(|v| v as usize);
    Grid {
        nx,
        ny,
        nz,
        h: scene.h(),
    }
}

fn types_u8(t: &[u32]) -> Vec<u8> {
    t.iter().map(|&v| v as u8).collect()
}

fn rel_err(gpu: &[f64], reference: &[f64]) -> f64 {
    common::max_abs_diff(gpu, reference) / common::max_abs(reference).max(1e-30)
}

/// A smoke sim whose cell types are marked, with `dye` and `vel` uploaded.
fn marked_smoke(scene: &Scene, dye: &[[f32; 4]], vel: &[f32]) -> SmokeSimulation {
    let mut sim = SmokeSimulation::new(common::gpu(), scene).unwrap();
    sim.substep(1e-3, SmokeStage::Mark).unwrap();
    sim.upload_state(dye, vel).unwrap();
    sim
}

fn num_faces(g: &Grid) -> usize {
    (0..3)
        .map(|c| g.face_dims(c).iter().product::<usize>())
        .sum()
}

#[test]
fn smoke_step_matches_the_reference() {
    let mut scene = smoke_scene(20, 16, 0.05);
    scene.solids = vec![Shape::Sphere {
        center: (0.42, 0.4, 0.025),
        radius: 0.13,
        velocity: (0.3, -0.2, 0.0),
    }];
    scene.viscosity = 0.03;
    scene.smoke.temperature_diffusion = 0.02;
    scene.smoke.dye_diffusion = 0.005;
    scene.smoke.wall_temperature = WallValues {
        left: Some(1.5),
        top: Some(-0.5),
        spots: vec![WallSpot {
            wall: Wall::Bottom,
            from: 0.3,
            to: 0.6,
            value: 4.0,
        }],
        ..Default::default()
    };
    scene.smoke.wall_dye = WallValues {
        right: Some(0.7),
        ..Default::default()
    };
    // The top wall slides (a lid): its u faces see the ghost 2 U - u.
    scene.smoke.lid_velocity = 0.8;
    scene.validate().unwrap();
    let g = grid_of(&scene);
    let mut rng = SplitMix64(11);
    let mut r = |s: f64| ((rng.next_f64() * 2.0 - 1.0) * s) as f32;
    let vel: Vec<f32> = (0..num_faces(&g)).map(|_| r(1.0)).collect();
    let dye: Vec<[f32; 4]> = (0..g.cells())
        .map(|_| [r(1.0).abs(), r(1.0).abs(), r(1.0).abs(), r(2.0)])
        .collect();
    let mut sim = marked_smoke(&scene, &dye, &vel);
    // Mark cleared the dye inside the solid: the reference starts from what the GPU holds.
    let dye0: Vec<[f64; 4]> = sim
        .read_dye()
        .unwrap()
        .iter()
        .map(|d| d.map(|v| v as f64))
        .collect();
    let types = types_u8(&read_buffer::<u32>(&sim.ctx, &sim.fields.cell_type).unwrap());
    assert!(types.contains(&2), "the sphere should be SOLID");
    let dt = 0.05;
    let report = sim.run_diffusion(dt).unwrap();
    let v = report.velocity.expect("viscosity solve");
    let s = report.scalars.expect("scalar solve");
    assert!(v.iterations > 0 && s.iterations > 0);
    let vel_gpu = common::to_f64(&sim.read_velocity().unwrap());
    let dye_gpu: Vec<[f64; 4]> = sim
        .read_dye()
        .unwrap()
        .iter()
        .map(|d| d.map(|v| v as f64))
        .collect();
    let vel_ref = cpu::diffuse_velocity_sliding(
        &g,
        &types,
        &common::to_f64(&vel),
        scene.viscosity,
        dt,
        [0.0, 0.0, 0.0, 0.8],
    );
    let k = [0.005, 0.005, 0.005, 0.02];
    let sm = &scene.smoke;
    let dye_ref =
        cpu::diffuse_scalars(&g, &types, &dye0, k, dt, &sm.wall_temperature, &sm.wall_dye);
    let e = rel_err(&vel_gpu, &vel_ref);
    assert!(e < 1e-4, "velocity: relative error {e:e}");
    let resting = cpu::diffuse_velocity(&g, &types, &common::to_f64(&vel), scene.viscosity, dt);
    assert!(
        rel_err(&vel_ref, &resting) > 1e-3,
        "the lid changed nothing"
    );
    // The step changed the field by far more than the tolerance.
    assert!(rel_err(&common::to_f64(&vel), &vel_ref) > 0.05);
    for ch in 0..4 {
        let a: Vec<f64> = dye_gpu.iter().map(|d| d[ch]).collect();
        let b: Vec<f64> = dye_ref.iter().map(|d| d[ch]).collect();
        let e = rel_err(&a, &b);
        assert!(e < 1e-4, "channel {ch}: relative error {e:e}");
    }
}

#[test]
fn liquid_viscosity_matches_the_reference() {
    let scene = Scene {
        name: "viscous tank".into(),
        domain: (1.2, 1.0, 0.8),
        resolution: (12, 10, 8),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.9, 0.6, 0.8),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![Shape::Box {
            min: (0.5, 0.0, 0.2),
            max: (0.8, 0.3, 0.5),
            velocity: (0.0, 0.0, 0.0),
        }],
        volume_correction: false,
        viscosity: 0.02,
        ..Scene::default()
    };
    scene.validate().unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let (pos, vel) = sim.read_particles().unwrap();
    let mut rng = SplitMix64(5);
    let vel: Vec<[f32; 4]> = vel
        .iter()
        .map(|_| {
            let mut r = || (rng.next_f64() * 2.0 - 1.0) as f32;
            [r(), r(), r(), 0.0]
        })
        .collect();
    sim.upload_particles(&pos, &vel).unwrap();
    let dt = 0.01;
    sim.substep(dt, Stage::Boundary).unwrap();
    let before = common::to_f64(&read_buffer::<f32>(&sim.ctx, &sim.fields.vel).unwrap());
    let types = types_u8(&read_buffer::<u32>(&sim.ctx, &sim.fields.cell_type).unwrap());
    assert!(types.contains(&0) && types.contains(&1) && types.contains(&2));
    let report = sim.run_viscosity(dt).unwrap();
    assert!(report.iterations > 0);
    let after = common::to_f64(&read_buffer::<f32>(&sim.ctx, &sim.fields.vel).unwrap());
    let g = grid_of(&scene);
    let expected = cpu::diffuse_velocity(&g, &types, &before, scene.viscosity, dt);
    let e = rel_err(&after, &expected);
    assert!(e < 1e-4, "relative error {e:e}");
    assert!(
        rel_err(&before, &expected) > 0.05,
        "the step should change the field"
    );
    let r = sim.substep(dt, Stage::Viscosity).unwrap();
    assert!(r.extra.viscosity.is_some_and(|v| v.iterations > 0));
}

/// Amplitude of `field` along `mode` (least squares over the listed entries).
fn amplitude(field: &[f64], mode: &[(usize, f64)]) -> f64 {
    let num: f64 = mode.iter().map(|&(i, m)| field[i] * m).sum();
    let den: f64 = mode.iter().map(|&(_, m)| m * m).sum();
    num / den
}

/// The u-face mode sin(pi x/Lx) sin(pi y/Ly) [sin(pi z/Lz)] of a closed box.
fn u_mode(g: &Grid) -> Vec<(usize, f64)> {
    let d = g.face_dims(0);
    let l = [g.nx as f64 * g.h, g.ny as f64 * g.h, g.nz as f64 * g.h];
    let mut out = Vec::new();
    for k in 0..d[2] {
        for j in 0..d[1] {
            for i in 1..d[0] - 1 {
                let x = [
                    i as f64 * g.h,
                    (j as f64 + 0.5) * g.h,
                    (k as f64 + 0.5) * g.h,
                ];
                let mut m = (PI * x[0] / l[0]).sin() * (PI * x[1] / l[1]).sin();
                if g.nz > 1 {
                    m *= (PI * x[2] / l[2]).sin();
                }
                out.push((i + d[0] * (j + d[1] * k), m));
            }
        }
    }
    out
}

/// Decay rate of the mode over `steps` backward-Euler steps of `dt`, from `step`.
fn measured_rate(a0: f64, a1: f64, t: f64) -> f64 {
    assert!(
        a1 > 0.0 && a1 < 0.55 * a0,
        "the amplitude must about halve: {a0} -> {a1}"
    );
    -(a1 / a0).ln() / t
}

const STEPS: usize = 70;

#[test]
fn shear_mode_decays_at_the_analytic_rate_in_a_slice() {
    let n = 32;
    let mut scene = smoke_scene(n, n, 1.0 / n as f64);
    scene.viscosity = 0.01;
    let g = grid_of(&scene);
    let exact = scene.viscosity * PI * PI * 2.0;
    // nu dt lambda = 0.01: backward Euler's own error in the rate is 0.5%.
    let dt = 0.01 / exact;
    let mode = u_mode(&g);
    let mut vel = vec![0.0f64; num_faces(&g)];
    for &(i, m) in &mode {
        vel[i] = m;
    }
    let vel32: Vec<f32> = vel.iter().map(|&v| v as f32).collect();
    let mut sim = marked_smoke(&scene, &vec![[0.0; 4]; g.cells()], &vel32);
    let types = vec![1u8; g.cells()];
    let mut cpu_vel = vel.clone();
    for _ in 0..STEPS {
        sim.run_diffusion(dt).unwrap();
        cpu_vel = cpu::diffuse_velocity(&g, &types, &cpu_vel, scene.viscosity, dt);
    }
    let t = STEPS as f64 * dt;
    let gpu_vel = common::to_f64(&sim.read_velocity().unwrap());
    for (name, field) in [("gpu", &gpu_vel), ("reference", &cpu_vel)] {
        let rate = measured_rate(amplitude(&vel, &mode), amplitude(field, &mode), t);
        let e = (rate / exact - 1.0).abs();
        assert!(
            e < 0.02,
            "{name}: rate {rate} vs exp(-nu pi^2 (2/L^2) t) {exact}: {e:.4}"
        );
    }
}

#[test]
fn shear_mode_decays_at_the_analytic_rate_in_3d() {
    let n = 16;
    let scene = Scene {
        name: "viscous box".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (n, n, n),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 1.0, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        gravity: (0.0, 0.0, 0.0),
        volume_correction: false,
        viscosity: 0.01,
        ..Scene::default()
    };
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(1e-3, Stage::Boundary).unwrap();
    let types = types_u8(&read_buffer::<u32>(&sim.ctx, &sim.fields.cell_type).unwrap());
    assert!(
        types.iter().all(|&t| t == 1),
        "the box should be full of liquid"
    );
    let g = grid_of(&scene);
    let exact = scene.viscosity * PI * PI * 3.0;
    let dt = 0.01 / exact;
    let mode = u_mode(&g);
    let mut vel = vec![0.0f64; num_faces(&g)];
    for &(i, m) in &mode {
        vel[i] = m;
    }
    let vel32: Vec<f32> = vel.iter().map(|&v| v as f32).collect();
    sim.ctx
        .queue
        .write_buffer(&sim.fields.vel, 0, bytemuck::cast_slice(&vel32));
    let mut cpu_vel = vel.clone();
    for _ in 0..STEPS {
        sim.run_viscosity(dt).unwrap();
        cpu_vel = cpu::diffuse_velocity(&g, &types, &cpu_vel, scene.viscosity, dt);
    }
    let t = STEPS as f64 * dt;
    let gpu_vel = common::to_f64(&read_buffer::<f32>(&sim.ctx, &sim.fields.vel).unwrap());
    for (name, field) in [("gpu", &gpu_vel), ("reference", &cpu_vel)] {
        let rate = measured_rate(amplitude(&vel, &mode), amplitude(field, &mode), t);
        let e = (rate / exact - 1.0).abs();
        assert!(
            e < 0.02,
            "{name}: rate {rate} vs exp(-nu pi^2 (3/L^2) t) {exact}: {e:.4}"
        );
    }
}

#[test]
fn temperature_mode_relaxes_to_the_linear_profile() {
    let n = 32;
    let mut scene = smoke_scene(4, n, 1.0 / n as f64);
    scene.smoke.temperature_diffusion = 0.02;
    scene.smoke.wall_temperature = WallValues {
        bottom: Some(1.0),
        top: Some(0.0),
        ..Default::default()
    };
    let g = grid_of(&scene);
    let kappa = scene.smoke.temperature_diffusion;
    let exact = kappa * PI * PI;
    let dt = 0.01 / exact;
    let y = |c: usize| (g.coord(c)[1] as f64 + 0.5) * g.h;
    let linear: Vec<f64> = (0..g.cells()).map(|c| 1.0 - y(c)).collect();
    let mode: Vec<(usize, f64)> = (0..g.cells()).map(|c| (c, (PI * y(c)).sin())).collect();
    let t0: Vec<[f64; 4]> = (0..g.cells())
        .map(|c| [0.0, 0.0, 0.0, linear[c] + 0.8 * mode[c].1])
        .collect();
    let t32: Vec<[f32; 4]> = t0.iter().map(|d| d.map(|v| v as f32)).collect();
    let mut sim = marked_smoke(&scene, &t32, &vec![0.0; num_faces(&g)]);
    let types = vec![1u8; g.cells()];
    let none = WallValues::default();
    let mut cpu_t = t0.clone();
    for _ in 0..STEPS {
        sim.run_diffusion(dt).unwrap();
        let k = [0.0, 0.0, 0.0, kappa];
        cpu_t = cpu::diffuse_scalars(
            &g,
            &types,
            &cpu_t,
            k,
            dt,
            &scene.smoke.wall_temperature,
            &none,
        );
    }
    let t = STEPS as f64 * dt;
    let gpu_t: Vec<f64> = sim
        .read_dye()
        .unwrap()
        .iter()
        .map(|d| d[3] as f64)
        .collect();
    let cpu_t: Vec<f64> = cpu_t.iter().map(|d| d[3]).collect();
    let dev0: Vec<f64> = (0..g.cells()).map(|c| t0[c][3] - linear[c]).collect();
    for (name, field) in [("gpu", &gpu_t), ("reference", &cpu_t)] {
        let dev: Vec<f64> = (0..g.cells()).map(|c| field[c] - linear[c]).collect();
        let (a0, a1) = (amplitude(&dev0, &mode), amplitude(&dev, &mode));
        let rate = measured_rate(a0, a1, t);
        let e = (rate / exact - 1.0).abs();
        assert!(
            e < 0.02,
            "{name}: rate {rate} vs kappa pi^2 / L^2 = {exact}: {e:.4}"
        );
        // What is left is the mode alone: the field relaxes toward the linear profile.
        let rest = (0..g.cells())
            .map(|c| (dev[c] - a1 * mode[c].1).abs())
            .fold(0.0, f64::max);
        assert!(rest < 1e-4, "{name}: off-mode deviation {rest:e}");
    }
}

#[test]
fn an_insulated_box_keeps_its_heat() {
    let mut scene = smoke_scene(16, 16, 1.0 / 16.0);
    scene.solids = vec![Shape::Sphere {
        center: (0.6, 0.45, 0.03),
        radius: 0.2,
        velocity: (0.0, 0.0, 0.0),
    }];
    scene.smoke.temperature_diffusion = 0.05;
    scene.smoke.dye_diffusion = 0.02;
    let g = grid_of(&scene);
    let mut rng = SplitMix64(3);
    let dye: Vec<[f32; 4]> = (0..g.cells())
        .map(|_| {
            let v = rng.next_f64() as f32;
            [v, 0.0, 0.0, 1.0 + 3.0 * rng.next_f64() as f32]
        })
        .collect();
    let mut sim = marked_smoke(&scene, &dye, &vec![0.0; num_faces(&g)]);
    // Only FLUID cells hold smoke (the upload came after Mark cleared the solid's cells).
    let types = read_buffer::<u32>(&sim.ctx, &sim.fields.cell_type).unwrap();
    let fluid = |d: &[[f32; 4]]| -> Vec<[f64; 4]> {
        (0..d.len())
            .filter(|&c| types[c] == 1)
            .map(|c| d[c].map(|v| v as f64))
            .collect()
    };
    let total = |d: &[[f64; 4]], ch: usize| d.iter().map(|v| v[ch]).sum::<f64>();
    let start = fluid(&sim.read_dye().unwrap());
    assert!(start.len() < g.cells(), "the sphere should be SOLID");
    let spread = |d: &[[f64; 4]]| {
        let t: Vec<f64> = d.iter().map(|v| v[3]).collect();
        t.iter().cloned().fold(f64::MIN, f64::max) - t.iter().cloned().fold(f64::MAX, f64::min)
    };
    for _ in 0..20 {
        sim.run_diffusion(0.2).unwrap();
    }
    let end = fluid(&sim.read_dye().unwrap());
    for ch in [0, 3] {
        let (a, b) = (total(&start, ch), total(&end, ch));
        assert!((b / a - 1.0).abs() < 1e-3, "channel {ch}: total {a} -> {b}");
    }
    let (s0, s1) = (spread(&start), spread(&end));
    assert!(s1 < 0.2 * s0, "the heat should spread out: {s0} -> {s1}");
}

/// Largest particle x after `t` seconds of a small dam break with viscosity `nu`.
fn dam_break_front(nu: f64, t: f64) -> f64 {
    let scene = Scene {
        name: "dam break".into(),
        domain: (2.4, 0.6, 0.2),
        resolution: (48, 12, 4),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.4, 0.4, 0.2),
            velocity: (0.0, 0.0, 0.0),
        }],
        viscosity: nu,
        frame_dt: 0.05,
        ..Scene::default()
    };
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut front = 0.0;
    let mut iterations = 0;
    while sim.time < t - 1e-9 {
        let s = sim.step_frame().unwrap();
        front = s.front_x;
        iterations += s.viscosity_iterations();
    }
    assert_eq!(iterations > 0, nu > 0.0, "viscosity_iterations");
    front
}

#[test]
fn a_viscous_dam_break_is_slower() {
    let x0 = 0.4;
    let inviscid = dam_break_front(0.0, 0.5) - x0;
    let viscous = dam_break_front(0.05, 0.5) - x0;
    assert!(
        inviscid < 2.0,
        "the inviscid front reached the wall: {inviscid}"
    );
    assert!(
        viscous < 0.8 * inviscid,
        "front advance: viscous {viscous} m, inviscid {inviscid} m"
    );
}

#[test]
fn a_viscous_pool_stays_still() {
    let mut scene = eddy::scene::StandardProblem::SettledPool.scene(12);
    scene.viscosity = 0.05;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let limit = 0.01 * (9.81f64 * 0.4).sqrt();
    let mut worst = 0.0f32;
    for i in 0..120 {
        let r = sim.substep(scene.frame_dt, Stage::Advect).unwrap();
        assert!(r.extra.viscosity.is_some());
        if i >= 100 {
            worst = worst.max(r.max_speed);
        }
    }
    assert!(
        (worst as f64) < limit,
        "max speed {worst} m/s, limit {limit}"
    );
}

/// Kinetic energy of a 2 x 1 m box (32 x 16) heated from below by `dt_wall` (walls bottom
/// dt_wall, top 0, nu = kappa = 0.02 m^2/s, buoyancy 1 m/s^2 per unit temperature: Ra =
/// 2500 dt_wall), from the conducting profile plus a 1e-3 perturbation, at `times` (s).
fn rayleigh_benard(dt_wall: f64, times: &[f64]) -> Vec<f64> {
    let (nx, ny) = (32, 16);
    let mut scene = smoke_scene(nx, ny, 1.0 / ny as f64);
    scene.viscosity = 0.02;
    scene.smoke.temperature_diffusion = 0.02;
    scene.smoke.buoyancy = 1.0;
    scene.smoke.dye_weight = 0.0;
    scene.smoke.ambient_temperature = 0.0;
    scene.smoke.wall_temperature = WallValues {
        bottom: Some(dt_wall),
        top: Some(0.0),
        ..Default::default()
    };
    scene.cfl = 2.0;
    scene.frame_dt = 0.25;
    scene.pressure.tolerance = 1e-6;
    scene.validate().unwrap();
    let g = grid_of(&scene);
    let mut rng = SplitMix64(17);
    let dye: Vec<[f32; 4]> = (0..g.cells())
        .map(|c| {
            let y = (g.coord(c)[1] as f64 + 0.5) * g.h;
            let t = dt_wall * (1.0 - y) + 1e-3 * dt_wall * (rng.next_f64() - 0.5);
            [0.0, 0.0, 0.0, t as f32]
        })
        .collect();
    let mut sim = marked_smoke(&scene, &dye, &vec![0.0; num_faces(&g)]);
    let mut out = Vec::new();
    for &t in times {
        let mut ke = 0.0;
        while sim.time < t - 1e-9 {
            ke = sim.step_frame().unwrap().kinetic_energy;
        }
        out.push(ke);
    }
    out
}

/// Growth rate of the kinetic energy between the last two sample times, 1/s.
fn growth(ke: &[f64], times: &[f64]) -> f64 {
    let n = ke.len();
    (ke[n - 1] / ke[n - 2]).ln() / (times[n - 1] - times[n - 2])
}

#[test]
#[ignore = "a scan of the onset of convection (about a minute); see docs/guide/05-scenes.md"]
fn rayleigh_benard_threshold_scan() {
    let times = [10.0, 20.0, 30.0];
    for dt_wall in [0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5, 2.0] {
        let ke = rayleigh_benard(dt_wall, &times);
        eprintln!(
            "dT {dt_wall}: Ra {:.0}, KE {:?}, growth {:.4} 1/s",
            2500.0 * dt_wall,
            ke,
            growth(&ke, &times)
        );
    }
}

/// The onset of convection: the scan above finds the kinetic energy's growth rate
/// crossing zero near dT = 0.72 (Ra about 1800; 1708 for an infinite layer between rigid
/// plates). Well below, the perturbation dies away; well above, cells form and the
/// energy grows by orders of magnitude.
#[test]
fn rayleigh_benard_convection_sets_in_above_the_threshold() {
    let times = [10.0, 30.0];
    let below = rayleigh_benard(0.4, &times);
    let above = rayleigh_benard(2.0, &times);
    // At rest up to round-off: 1e-10 J is a speed of about 1e-5 m/s here.
    assert!(
        below[1] < 1e-10 && below[1] < 2.0 * below[0],
        "Ra 1000: the fluid should stay at rest: kinetic energy {below:?} J"
    );
    assert!(
        above[1] > 1e3 * above[0] && above[1] > 1e4 * below[1],
        "Ra 5000: kinetic energy {above:?} should grow by orders of magnitude"
    );
}

#[test]
fn the_memory_estimate_counts_the_diffusion_systems() {
    let mut smoke = smoke_scene(64, 32, 1.0 / 32.0);
    let base = eddy::sim::smoke::memory_estimate(&smoke).total;
    smoke.smoke.temperature_diffusion = 0.01;
    let heat = eddy::sim::smoke::memory_estimate(&smoke).total;
    smoke.viscosity = 0.01;
    let both = eddy::sim::smoke::memory_estimate(&smoke).total;
    // The scalar system's matrix alone is 16 bytes per cell and channel.
    assert!(heat >= base + 64 * 32 * 4 * 16, "{base} -> {heat}");
    assert!(both >= heat + 65 * 33 * 2 * 16, "{heat} -> {both}");
    let mut liquid = eddy::scene::StandardProblem::DamBreak.scene(16);
    let base = eddy::sim::memory_estimate(&liquid, 1000).total;
    liquid.viscosity = 0.01;
    let viscous = eddy::sim::memory_estimate(&liquid, 1000).total;
    assert!(viscous >= base + 17 * 17 * 51 * 16, "{base} -> {viscous}");
}

#[test]
fn solves_that_stop_above_their_tolerance_are_counted_in_stats_csv() {
    // A viscous dam break whose viscosity solves may take 2 iterations and whose pressure
    // solves may take 3, both asked 1e-9: each frame counts its stopped solves in the
    // last two stats.csv columns (`unconverged_solves`, `diffusion_unconverged`); the
    // same scene with room to converge counts none.
    use eddy::scene::StandardProblem;
    let run = |tight: bool| {
        let mut scene = StandardProblem::DamBreak.scene(12);
        scene.viscosity = 0.01;
        scene.frame_dt = 0.05;
        if tight {
            scene.diffusion.max_iterations = 2;
            scene.diffusion.tolerance = 1e-9;
            scene.pressure.max_iterations = 3;
            scene.pressure.tolerance = 1e-9;
        }
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        (0..3)
            .map(|_| {
                let s = sim.step_frame().unwrap();
                let row = s.csv_row();
                let tail: Vec<u32> = row
                    .rsplit(',')
                    .take(2)
                    .map(|x| x.parse().unwrap())
                    .collect();
                (
                    s.substeps,
                    s.unconverged_solves,
                    s.diffusion_unconverged(),
                    tail,
                )
            })
            .collect::<Vec<_>>()
    };
    let tight = run(true);
    let loose = run(false);
    eprintln!("tight {tight:?}\nloose {loose:?}");
    let columns = eddy::output::stats::LIQUID_CSV_HEADER.rsplit(',').take(2);
    assert_eq!(
        columns.collect::<Vec<_>>(),
        ["diffusion_unconverged", "unconverged_solves"]
    );
    for (i, (substeps, pressure, diffusion, tail)) in tight.iter().enumerate() {
        assert!(*pressure >= 1 && *pressure <= *substeps, "{tight:?}");
        // The first frame's viscosity starts from a liquid at rest: nothing to solve.
        assert!(
            i == 0 || *diffusion >= 1 && *diffusion <= *substeps,
            "{tight:?}"
        );
        assert_eq!(tail, &[*diffusion, *pressure]);
    }
    for (_, pressure, diffusion, tail) in &loose {
        assert_eq!((*pressure, *diffusion), (0, 0), "{loose:?}");
        assert_eq!(tail, &[0, 0]);
    }
}

/// What the coupled viscosity step starts from, read off the GPU.
struct CoupledStart {
    before: Vec<f64>,
    types: Vec<u8>,
    owner: Vec<usize>,
    covered: Vec<(usize, f64)>,
    bodies: Vec<cpu::RefViscousBody>,
    m_face: f64,
}

fn coupled_start(
    ctx: &eddy::gpu::GpuContext,
    f: &eddy::sim::core::fields::GridFields,
    b: &eddy::sim::bodies::coupling::Bodies,
) -> CoupledStart {
    use eddy::sim::bodies::strong::CoupleBody;
    let solid_vel: Vec<[f32; 4]> = read_buffer(ctx, &f.solid_vel).unwrap();
    let cover: Vec<u32> = read_buffer(ctx, &b.coupling.cover).unwrap();
    let couple: Vec<CoupleBody> = read_buffer(ctx, &b.strong.couple).unwrap();
    let shapes: Vec<eddy::sim::bodies::coupling::GpuBody> =
        read_buffer(ctx, &b.coupling.bodies).unwrap();
    let v3 = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
    CoupledStart {
        before: common::to_f64(&read_buffer::<f32>(ctx, &f.vel).unwrap()),
        types: types_u8(&read_buffer::<u32>(ctx, &f.cell_type).unwrap()),
        owner: solid_vel.iter().map(|v| v[3] as usize).collect(),
        covered: cover
            .iter()
            .map(|&w| ((w >> 24) as usize, (w & 0xff_ffff) as f64 / 16_777_215.0))
            .collect(),
        bodies: b
            .set
            .bodies
            .iter()
            .zip(couple.iter().zip(&shapes))
            .map(|(body, (c, s))| {
                let i = body.world_inertia();
                let half = v3(s.half);
                cpu::RefViscousBody {
                    coupled: body.is_dynamic(),
                    centre: v3(c.centre),
                    shape: if s.centre[3] == eddy::sim::bodies::coupling::SHAPE_SPHERE {
                        cpu::RefShape::Sphere { radius: half[0] }
                    } else {
                        cpu::RefShape::Box {
                            half,
                            axes: [v3(s.axis_x), v3(s.axis_y), v3(s.axis_z)],
                        }
                    },
                    mass: body.mass,
                    inertia: [0, 1, 2].map(|r| [i.x_axis[r], i.y_axis[r], i.z_axis[r]]),
                    vel: v3(c.vel),
                    omega: v3(c.omega),
                }
            })
            .collect(),
        m_face: b.strong.scales.s(),
    }
}

/// The GPU's step (`after`, the faces; `sums`, the strong coupling's sums with the
/// bodies' changes) against the f64 reference from `start`.
fn check_coupled(scene: &Scene, start: &CoupledStart, dt: f64, after: &[f64], sums: &[f32]) {
    use eddy::sim::bodies::strong::VISCOUS_AT;
    let g = grid_of(scene);
    let n = start.bodies.len();
    for k in 0..n {
        let faces = start.covered.iter().filter(|c| c.0 == k + 1).count();
        let cells = start.owner.iter().filter(|&&o| o == k + 1).count();
        assert!(faces + cells > 0, "body {k} covers nothing");
    }
    let step = |bodies: &[cpu::RefViscousBody]| {
        cpu::diffuse_velocity_coupled(
            &g,
            &start.types,
            (&start.owner, &start.covered),
            &start.before,
            scene.viscosity,
            dt,
            start.m_face,
            bodies,
        )
    };
    let (expected, moved) = step(&start.bodies);
    let e = rel_err(after, &expected);
    if e > 1e-4 {
        let mut idx: Vec<usize> = (0..after.len()).collect();
        idx.sort_by(|&i, &j| {
            (after[j] - expected[j])
                .abs()
                .total_cmp(&(after[i] - expected[i]).abs())
        });
        for &i in idx.iter().take(8) {
            eprintln!(
                "face {i}: gpu {} ref {} before {} covered {:?}",
                after[i], expected[i], start.before[i], start.covered[i]
            );
        }
    }
    // The bodies drag the liquid differently once they answer: against the same step with
    // every body a velocity boundary.
    let fixed: Vec<cpu::RefViscousBody> = start
        .bodies
        .iter()
        .map(|r| cpu::RefViscousBody {
            coupled: false,
            ..*r
        })
        .collect();
    let change = rel_err(&expected, &step(&fixed).0);
    eprintln!("faces: GPU {e:e} off the coupled reference, which is {change:e} off the uncoupled");
    assert!(e < 1e-4, "faces: relative error {e:e}");
    assert!(change > 1e-3, "the coupling should change the faces");
    for (k, b) in start.bodies.iter().enumerate() {
        let dq: Vec<f64> = (0..6)
            .map(|i| sums[VISCOUS_AT + 6 * k + i] as f64)
            .collect();
        let want: Vec<f64> = (0..3)
            .map(|i| moved[k].0[i] - b.vel[i])
            .chain((0..3).map(|i| moved[k].1[i] - b.omega[i]))
            .collect();
        if !b.coupled {
            assert!(
                dq.iter().all(|&v| v == 0.0),
                "kinematic body {k} changed: {dq:?}"
            );
            continue;
        }
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1e-3, "body {k} should feel the liquid: {want:?}");
        let err = common::max_abs_diff(&dq, &want) / scale;
        eprintln!("body {k}: change {dq:?}, {err:e} off the reference");
        assert!(
            err < 1e-3,
            "body {k}: GPU {dq:?} against {want:?} ({err:e})"
        );
    }
}

fn viscous_body(
    shape: eddy::scene::BodyShape,
    center: (f64, f64, f64),
    density: f64,
    motion: eddy::scene::BodyMotion,
) -> eddy::scene::BodySpec {
    eddy::scene::BodySpec {
        velocity: (0.3, -0.2, 0.1),
        angular_velocity: (0.5, -1.0, 2.0),
        rotation_deg: (10.0, 20.0, 30.0),
        motion,
        ..eddy::scene::BodySpec::at_rest(shape, center, density)
    }
}

/// The dynamic bodies in the viscosity step (src/sim/bodies/viscous.wgsl) against the f64
/// reference that solves the faces and the bodies' velocities together: a light and a
/// heavy dynamic body and a kinematic one, in a tank of random velocities.
#[test]
fn viscous_bodies_match_the_coupled_reference() {
    use eddy::scene::{BodyMotion, BodyShape};
    let scene = Scene {
        name: "viscous bodies".into(),
        domain: (1.2, 1.0, 0.8),
        resolution: (12, 10, 8),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.2, 0.8, 0.8),
            velocity: (0.0, 0.0, 0.0),
        }],
        bodies: vec![
            viscous_body(
                BodyShape::Box {
                    half_extents: (0.16, 0.12, 0.14),
                },
                (0.35, 0.4, 0.4),
                300.0,
                BodyMotion::Dynamic,
            ),
            viscous_body(
                BodyShape::Sphere { radius: 0.15 },
                (0.85, 0.4, 0.4),
                3000.0,
                BodyMotion::Dynamic,
            ),
            viscous_body(
                BodyShape::Sphere { radius: 0.1 },
                (0.6, 0.75, 0.4),
                1000.0,
                BodyMotion::Kinematic,
            ),
        ],
        volume_correction: false,
        viscosity: 0.05,
        gravity: (0.0, 0.0, 0.0),
        ..Scene::default()
    };
    scene.validate().unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let (pos, vel) = sim.read_particles().unwrap();
    let mut rng = SplitMix64(9);
    let vel: Vec<[f32; 4]> = vel
        .iter()
        .map(|_| {
            let mut r = || (rng.next_f64() * 2.0 - 1.0) as f32;
            [r(), r(), r(), 0.0]
        })
        .collect();
    sim.upload_particles(&pos, &vel).unwrap();
    let dt = 0.01;
    sim.substep(dt, Stage::Boundary).unwrap();
    let ctx = sim.ctx.clone();
    let start = coupled_start(&ctx, &sim.fields, sim.bodies.as_ref().unwrap());
    let report = sim.run_viscosity(dt).unwrap();
    assert!(report.iterations > 0);
    let after = common::to_f64(&read_buffer::<f32>(&ctx, &sim.fields.vel).unwrap());
    let sums: Vec<f32> = read_buffer(&ctx, &sim.bodies.as_ref().unwrap().strong.sums).unwrap();
    check_coupled(&scene, &start, dt, &after, &sums);
}

/// The same in a smoke slice: prism bodies that move in x-y and turn about z.
#[test]
fn slice_viscous_bodies_match_the_coupled_reference() {
    use eddy::scene::{BodyMotion, BodyShape};
    let mut scene = smoke_scene(24, 20, 0.05);
    scene.viscosity = 0.01;
    scene.gravity = (0.0, 0.0, 0.0);
    scene.bodies = vec![
        viscous_body(
            BodyShape::Box {
                half_extents: (0.15, 0.1, 0.0),
            },
            (0.35, 0.5, 0.025),
            0.6,
            BodyMotion::Dynamic,
        ),
        viscous_body(
            BodyShape::Sphere { radius: 0.12 },
            (0.8, 0.45, 0.025),
            12.0,
            BodyMotion::Dynamic,
        ),
        viscous_body(
            BodyShape::Sphere { radius: 0.1 },
            (0.6, 0.8, 0.025),
            1.2,
            BodyMotion::Kinematic,
        ),
    ];
    for b in &mut scene.bodies {
        b.velocity.2 = 0.0;
        b.angular_velocity = (0.0, 0.0, 2.0);
        b.rotation_deg = (0.0, 0.0, 30.0);
    }
    scene.validate().unwrap();
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.01;
    sim.substep(dt, SmokeStage::Mark).unwrap();
    let n = sim.read_velocity().unwrap().len();
    let mut rng = SplitMix64(11);
    let vel: Vec<f32> = (0..n)
        .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32)
        .collect();
    let dye = sim.read_dye().unwrap();
    sim.upload_state(&dye, &vel).unwrap();
    let ctx = sim.ctx.clone();
    let start = coupled_start(&ctx, &sim.fields, sim.bodies.as_ref().unwrap());
    let report = sim.run_diffusion(dt).unwrap();
    assert!(report.velocity.is_some_and(|r| r.iterations > 0));
    let after = common::to_f64(&read_buffer::<f32>(&ctx, &sim.fields.vel).unwrap());
    let sums: Vec<f32> = read_buffer(&ctx, &sim.bodies.as_ref().unwrap().strong.sums).unwrap();
    check_coupled(&scene, &start, dt, &after, &sums);
}

/// The viscosity's incremental pressure correction (src/sim/core/split.rs) against its f64
/// reference: a sloshing viscous block with a free surface and a solid step, after a full
/// substep has kept its pressure; the shift before the solve, then the one after it,
/// which gives the velocities back.
#[test]
fn the_viscosity_split_matches_its_reference() {
    use eddy::sim::{liquid::views::Field, StageList};
    let scene = Scene {
        name: "viscous split".into(),
        domain: (1.0, 0.8, 0.6),
        resolution: (15, 12, 9),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.55, 0.6, 0.6),
            velocity: (0.4, 0.0, -0.2),
        }],
        solids: vec![Shape::Box {
            min: (0.6, 0.0, 0.0),
            max: (1.0, 0.2, 0.6),
            velocity: (0.0, 0.0, 0.0),
        }],
        viscosity: 0.02,
        ..Scene::default()
    };
    scene.validate().unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.01;
    assert!(
        !sim.shift_for_viscosity(true).unwrap(),
        "no pressure kept yet"
    );
    sim.substep(dt, Stage::last()).unwrap();
    // The next substep up to the viscosity: new cells and face velocities.
    sim.substep(dt, Stage::VolumeCorrection).unwrap();
    let ctx = sim.ctx.clone();
    let g = grid_of(&scene);
    let faces = |sim: &Simulation| {
        let v: Vec<f32> = read_buffer(&ctx, &sim.fields.vel).unwrap();
        eddy::reference::MacField::from_faces(&g, &v)
    };
    let types: Vec<u8> = (sim.read_field(Field::CellType).unwrap().values)
        .iter()
        .map(|&t| t as u8)
        .collect();
    let surface: Vec<f64> = (sim.read_field(Field::LevelSet).unwrap().values)
        .iter()
        .map(|&l| 0.5 - l as f64)
        .collect();
    let last =
        common::to_f64(&read_buffer::<f32>(&ctx, sim.viscous_split_kept().unwrap()).unwrap());
    assert!(common::max_abs(&last) > 1.0, "the kept pressure is p / rho");
    let before = faces(&sim);
    assert!(sim.shift_for_viscosity(true).unwrap());
    let shifted = faces(&sim);
    let mut expect = before.clone();
    let grav = [scene.gravity.0, scene.gravity.1, scene.gravity.2];
    let input = (grav, dt, 1.0);
    cpu::pressure_shift(&g, &types, Some(&surface), None, &last, input, &mut expect);
    let flat = |m: &eddy::reference::MacField| [m.u.clone(), m.v.clone(), m.w.clone()].concat();
    let shift: Vec<f64> = (flat(&expect).iter().zip(flat(&before)))
        .map(|(a, b)| a - b)
        .collect();
    let moved = shift.iter().filter(|s| s.abs() > 1e-5).count();
    eprintln!(
        "{moved} faces shifted, the largest by {:e}",
        common::max_abs(&shift)
    );
    assert!(
        moved > 50,
        "the shift should move faces in a sloshing block"
    );
    let e = common::max_abs_diff(&flat(&shifted), &flat(&expect));
    assert!(e < 1e-5, "the shift differs from the reference by {e:e}");
    assert!(sim.shift_for_viscosity(false).unwrap());
    let back = common::max_abs_diff(&flat(&faces(&sim)), &flat(&before));
    assert!(back < 1e-5, "the shift after the solve leaves {back:e}");
}

/// The smoke's incremental correction: the shift is the last substep's change of each
/// face by the forces and the pressure, on the faces the viscosity solves for, in a warm
/// slice with a solid block and buoyancy; the shift after the solve gives the velocities
/// back, and a substep stopped before its projection leaves the next one unshifted.
#[test]
fn the_smoke_viscosity_split_matches_its_reference() {
    let mut scene = smoke_scene(20, 16, 0.05);
    scene.viscosity = 0.01;
    scene.solids = vec![Shape::Box {
        min: (0.4, 0.0, 0.0),
        max: (0.6, 0.2, 0.05),
        velocity: (0.0, 0.0, 0.0),
    }];
    scene.smoke.buoyancy = 2.0;
    scene.smoke.sources = vec![eddy::scene::SmokeSource {
        shape: Shape::Box {
            min: (0.1, 0.0, 0.0),
            max: (0.3, 0.1, 0.05),
            velocity: (0.0, 0.5, 0.0),
        },
        dye: (1.0, 1.0, 1.0),
        temperature: 1.0,
        velocity: (0.0, 0.5, 0.0),
    }];
    scene.validate().unwrap();
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.01;
    for _ in 0..3 {
        sim.substep(dt, SmokeStage::Tracers).unwrap();
    }
    sim.substep(dt, SmokeStage::Advect).unwrap();
    let ctx = sim.ctx.clone();
    let g = grid_of(&scene);
    let faces = |sim: &SmokeSimulation| {
        let v: Vec<f32> = read_buffer(&ctx, &sim.fields.vel).unwrap();
        eddy::reference::MacField::from_faces(&g, &v)
    };
    let types = types_u8(&read_buffer::<u32>(&ctx, &sim.fields.cell_type).unwrap());
    let delta =
        common::to_f64(&read_buffer::<f32>(&ctx, sim.viscous_split_kept().unwrap()).unwrap());
    assert!(
        common::max_abs(&delta) > 1e-3,
        "the last substep moved the faces"
    );
    let before = faces(&sim);
    assert!(sim.shift_for_viscosity(true).unwrap());
    let mut expect = before.clone();
    cpu::delta_shift(&g, &types, (&delta, dt, 1.0), &mut expect);
    let flat = |m: &eddy::reference::MacField| [m.u.clone(), m.v.clone(), m.w.clone()].concat();
    let e = common::max_abs_diff(&flat(&faces(&sim)), &flat(&expect));
    assert!(e < 1e-5, "the shift differs from the reference by {e:e}");
    assert!(sim.shift_for_viscosity(false).unwrap());
    let back = common::max_abs_diff(&flat(&faces(&sim)), &flat(&before));
    assert!(back < 1e-6, "the shift after the solve leaves {back:e}");
    // Stopped before its projection, a substep leaves the change half made: no shift.
    sim.substep(dt, SmokeStage::Forces).unwrap();
    assert!(!sim.shift_for_viscosity(true).unwrap());
}
