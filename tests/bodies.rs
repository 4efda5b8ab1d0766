//! Rigid bodies coupled with the liquid and the smoke, on the software adapter: the GPU's
//! force and torque against the f64 reference, floating and sinking, free fall in air,
//! bounces, collisions, a jet turning a plate, no particle inside a body.

mod common;

use eddy::reference::bodies::{body_cells, body_forces, RefBody};
use eddy::reference::Grid;
use eddy::scene::{BodyMotion, BodyShape, BodySpec, Scene, SceneKind, Shape};
use eddy::sim::bodies::coupling::GpuBody;
use eddy::sim::smoke::{SmokeSimulation, SmokeStage};
use eddy::sim::{Simulation, Stage};

fn body(shape: BodyShape, center: (f64, f64, f64), density: f64) -> BodySpec {
    BodySpec {
        shape,
        center,
        density,
        velocity: (0.0, 0.0, 0.0),
        angular_velocity: (0.0, 0.0, 0.0),
        rotation_deg: (0.0, 0.0, 0.0),
        restitution: 0.2,
        friction: 0.5,
        motion: BodyMotion::Dynamic,
    }
}

/// A 16^3 pool half full, with `bodies`.
fn pool(bodies: Vec<BodySpec>) -> Scene {
    Scene {
        name: "pool with bodies".into(),
        resolution: (16, 16, 16),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.5, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        bodies,
        frame_dt: 0.01,
        ..Default::default()
    }
}

/// A flat box (stable floating upright), 6 x 4 x 6 cells of the 16^3 grid.
fn flat_box() -> BodyShape {
    BodyShape::Box {
        half_extents: (0.1875, 0.125, 0.1875),
    }
}

fn ref_bodies(gpu: &[GpuBody], n: usize) -> Vec<RefBody> {
    gpu.iter()
        .take(n)
        .map(|b| {
            let v = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
            RefBody {
                centre: v(b.centre),
                axes: [v(b.axis_x), v(b.axis_y), v(b.axis_z)],
                half: v(b.half),
                sphere: b.centre[3] == 2.0,
            }
        })
        .collect()
}

#[test]
fn gpu_force_and_torque_match_the_f64_reference() {
    let mut tilted = body(
        BodyShape::Box {
            half_extents: (0.2, 0.09, 0.13),
        },
        (0.43, 0.47, 0.52),
        700.0,
    );
    tilted.rotation_deg = (17.0, -8.0, 31.0);
    tilted.velocity = (0.3, -0.4, 0.1);
    tilted.angular_velocity = (0.5, -1.0, 2.0);
    let sphere = body(
        BodyShape::Sphere { radius: 0.11 },
        (0.78, 0.31, 0.27),
        1500.0,
    );
    let scene = pool(vec![tilted, sphere]);
    let ctx = common::gpu();
    let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
    for _ in 0..3 {
        sim.substep(0.01, Stage::Advect).unwrap();
    }
    // A substep up to the projection: the forces are summed but the bodies stay where the
    // GPU saw them.
    sim.substep(0.01, Stage::Project).unwrap();
    let b = sim.bodies.as_ref().unwrap();
    let gpu_forces = b.coupling.read_forces(&ctx, 2).unwrap();
    let gpu_bodies: Vec<GpuBody> = eddy::gpu::read_buffer(&ctx, &b.coupling.bodies).unwrap();
    let rb = ref_bodies(&gpu_bodies, 2);
    let g = Grid {
        nx: 16,
        ny: 16,
        nz: 16,
        h: scene.h(),
    };
    let ids: Vec<u32> = eddy::gpu::read_buffer(&ctx, &b.coupling.body_id).unwrap();
    assert_eq!(ids, body_cells(g, &rb, false), "cells covered by the bodies");
    assert!(ids.iter().filter(|&&i| i == 1).count() > 20);
    assert!(ids.iter().filter(|&&i| i == 2).count() > 10);
    let types: Vec<u32> = eddy::gpu::read_buffer(&ctx, &sim.fields.cell_type).unwrap();
    let types: Vec<u8> = types.iter().map(|&t| t as u8).collect();
    let phi: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.pcg.p).unwrap();
    let p = &b.coupling.params;
    let reference = body_forces(
        g,
        &rb,
        &ids,
        &types,
        &phi,
        (p.pressure_scale as f64, p.face_area as f64),
        false,
    );
    for (k, (gf, rf)) in gpu_forces.iter().zip(&reference).enumerate() {
        for (what, r) in [("force", 0..3), ("torque", 3..6)] {
            let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let diff: Vec<f64> = r.clone().map(|a| gf[a] - rf[a]).collect();
            let rel = norm(&diff) / norm(&rf[r.clone()]);
            assert!(norm(&rf[r.clone()]) > 1e-3, "body {k} {what} is trivial: {rf:?}");
            assert!(
                rel < 1e-4,
                "body {k} {what}: GPU {:?} vs reference {:?} (relative {rel:e})",
                &gf[r.clone()],
                &rf[r]
            );
        }
    }
}

/// Fraction of a flat box's height below the pool's level, from the conserved liquid
/// volume: level = (V_liquid + A_box * submerged) / A_pool with submerged = level - bottom.
fn submerged_fraction(scene: &Scene, y: f64) -> f64 {
    let half = 0.125;
    let area = (2.0 * 0.1875) * (2.0 * 0.1875);
    let volume = 0.5;
    let bottom = y - half;
    let level = (volume - area * bottom) / (1.0 - area);
    let _ = scene;
    ((level - bottom) / (2.0 * half)).clamp(0.0, 1.0)
}

fn inside(b: &eddy::sim::bodies::RigidBody, p: [f32; 4]) -> bool {
    b.contains(glam::DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64), false)
}

#[test]
fn light_box_floats_half_submerged_and_no_particle_enters_it() {
    let scene = pool(vec![body(flat_box(), (0.5, 0.63, 0.5), 500.0)]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut ys = vec![];
    for i in 0..200 {
        sim.substep(0.01, Stage::Advect).unwrap();
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        if i % 20 == 0 {
            eprintln!(
                "t {:.2} y {:.4} v {:.4} f {:.3} sub {:.3}",
                sim.time,
                b.position.y,
                b.velocity().y,
                b.fluid_force.y,
                submerged_fraction(&scene, b.position.y)
            );
        }
        if i >= 150 {
            ys.push(b.position.y);
        }
    }
    let y = ys.iter().sum::<f64>() / ys.len() as f64;
    let frac = submerged_fraction(&scene, y);
    assert!((frac - 0.5).abs() <= 0.05, "submerged fraction {frac} (y {y})");
    let set = &sim.bodies.as_ref().unwrap().set;
    assert!(set.bodies[0].velocity().length() < 0.05);
    let (pos, _) = sim.read_particles().unwrap();
    let inside_count = pos.iter().filter(|p| inside(&set.bodies[0], **p)).count();
    assert_eq!(inside_count, 0, "particles inside the body");
}

#[test]
fn heavy_box_sinks_and_rests_on_the_floor() {
    let scene = pool(vec![body(flat_box(), (0.5, 0.6, 0.5), 2000.0)]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut last = vec![];
    for i in 0..150 {
        sim.substep(0.01, Stage::Advect).unwrap();
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        if i % 20 == 0 {
            eprintln!("t {:.2} y {:.4} v {:.4}", sim.time, b.position.y, b.velocity().y);
        }
        if i >= 120 {
            last.push((b.position.y, b.velocity().length()));
        }
    }
    for (y, v) in last {
        assert!((y - 0.125).abs() < 0.01, "resting height {y}");
        assert!(v < 0.02, "speed at rest {v}");
    }
}
