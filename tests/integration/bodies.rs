//! Rigid bodies coupled with the liquid and the smoke, on the software adapter: the GPU's
//! force and torque against the f64 reference, floating and sinking, free fall in air,
//! bounces, collisions, a jet turning a plate, no particle inside a body.

use crate::common;

use eddy::reference::bodies::{body_cells, body_forces, RefBody};
use eddy::reference::Grid;
use eddy::scene::{BodyMotion, BodyShape, BodySpec, Scene, SceneKind, Shape};
use eddy::sim::{
    bodies::coupling::GpuBody,
    smoke::{SmokeSimulation, SmokeStage},
    SimError, Simulation, Stage,
};

/// A dynamic body at rest, a little less bouncy and more frictional than a scene file's.
fn body(shape: BodyShape, center: (f64, f64, f64), density: f64) -> BodySpec {
    BodySpec {
        restitution: 0.2,
        friction: 0.5,
        ..BodySpec::at_rest(shape, center, density)
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
    // Whole cells, then the bodies cutting faces.
    for cut in [false, true] {
        let mut scene = pool(vec![tilted.clone(), sphere.clone()]);
        scene.body_cut_faces = Some(cut);
        forces_against_the_reference(&scene, cut);
    }
}

fn forces_against_the_reference(scene: &Scene, cut: bool) {
    let ctx = common::gpu();
    let mut sim = Simulation::new(ctx.clone(), scene).unwrap();
    for _ in 0..3 {
        sim.substep(0.01, Stage::Advect).unwrap();
    }
    // A substep up to the projection: the forces are summed but the bodies stay where the
    // GPU saw them.
    sim.substep(0.01, Stage::Project).unwrap();
    let b = sim.bodies.as_ref().unwrap();
    let gpu_forces: Vec<[f64; 6]> = b
        .read_forces(0.01)
        .unwrap()
        .iter()
        .map(|f| {
            let (force, torque) = f.total();
            [force.x, force.y, force.z, torque.x, torque.y, torque.z]
        })
        .collect();
    let gpu_bodies: Vec<GpuBody> = eddy::gpu::read_buffer(&ctx, &b.coupling.bodies).unwrap();
    let rb = ref_bodies(&gpu_bodies, 2);
    let g = Grid {
        nx: 16,
        ny: 16,
        nz: 16,
        h: scene.h(),
    };
    let ids: Vec<u32> = eddy::gpu::read_buffer(&ctx, &b.coupling.body_id).unwrap();
    assert_eq!(
        ids,
        body_cells(g, &rb, false),
        "cells covered by the bodies"
    );
    assert!(ids.iter().filter(|&&i| i == 1).count() > 20);
    assert!(ids.iter().filter(|&&i| i == 2).count() > 10);
    // What the bodies cover of each face, against the f64 reference (f32 distances may
    // round a share differently only next to the snapping thresholds).
    let cover: Vec<u32> = eddy::gpu::read_buffer(&ctx, &b.coupling.cover).unwrap();
    let expect = if cut {
        // And the open fractions the bodies leave (no static solids here).
        let (expect, open) = eddy::reference::bodies::cover_faces(g, &rb, None, false);
        let gpu_open: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.fields.open).unwrap();
        assert_eq!(gpu_open.len(), open.len());
        let worst = gpu_open
            .iter()
            .zip(&open)
            .map(|(&a, &b)| (a as f64 - b).abs())
            .filter(|&d| d < 0.019) // a share that snapped differently, checked below
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "open fractions differ by {worst}");
        assert!(open.iter().filter(|&&o| o > 0.0 && o < 1.0).count() > 100);
        expect
    } else {
        eddy::reference::bodies::whole_cell_cover(g, &ids, 2)
    };
    let parts = eddy::reference::bodies::cover_parts;
    let mut partly = 0;
    for (f, (&gw, &rw)) in cover.iter().zip(&expect).enumerate() {
        let ((gi, gs), (ri, rs)) = (parts(gw), parts(rw));
        assert!(
            (gs - rs).abs() < 1e-4 || (rs - 0.02).abs() < 1e-4 || (rs - 0.98).abs() < 1e-4,
            "face {f}: share {gs} vs {rs}"
        );
        if rs > 0.03 {
            assert_eq!(gi, ri, "face {f}: covered by body {gi}, the reference {ri}");
            partly += (rs < 0.97) as usize;
        }
    }
    assert!(!cut || partly > 100, "only {partly} faces partly covered");
    let types: Vec<u32> = eddy::gpu::read_buffer(&ctx, &sim.fields.cell_type).unwrap();
    let types: Vec<u8> = types.iter().map(|&t| t as u8).collect();
    let phi: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.pcg.p).unwrap();
    let rho = eddy::sim::DENSITY;
    // Whole cells take the hydrostatic half cell to the faces; covered shares sum the
    // pressure's gradient over the bodies and need none.
    let rho_g = if cut {
        [0.0; 3]
    } else {
        [0.0, -9.81 * rho, 0.0]
    };
    let reference = body_forces(
        g,
        &rb,
        (&ids, &cover),
        &types,
        &phi,
        (rho / 0.01, g.h * g.h, rho_g),
        false,
    );
    for (k, (gf, rf)) in gpu_forces.iter().zip(&reference).enumerate() {
        for (what, r) in [("force", 0..3), ("torque", 3..6)] {
            let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let diff: Vec<f64> = r.clone().map(|a| gf[a] - rf[a]).collect();
            let rel = norm(&diff) / norm(&rf[r.clone()]);
            assert!(
                norm(&rf[r.clone()]) > 1e-3,
                "body {k} {what} is trivial: {rf:?}"
            );
            assert!(
                rel < 1e-4,
                "cut {cut}: body {k} {what}: GPU {:?} vs reference {:?} (relative {rel:e})",
                &gf[r.clone()],
                &rf[r]
            );
        }
    }
}

/// Fraction of a flat box's height below the pool's level, from the conserved liquid
/// volume: level = (V_liquid + A_box * submerged) / A_pool with submerged = level - bottom.
/// The liquid is the half-full pool less what the box, released with its centre at
/// `start`, displaced there (no liquid is seeded inside a body).
fn submerged_fraction(y: f64, start: f64) -> f64 {
    let half = 0.125;
    let area = (2.0 * 0.1875) * (2.0 * 0.1875);
    let volume = 0.5 - area * (0.5 - (start - half)).clamp(0.0, 2.0 * half);
    let bottom = y - half;
    let level = (volume - area * bottom) / (1.0 - area);
    ((level - bottom) / (2.0 * half)).clamp(0.0, 1.0)
}

fn inside(b: &eddy::sim::bodies::RigidBody, p: [f32; 4]) -> bool {
    b.contains(
        glam::DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64),
        false,
    )
}

#[test]
fn light_box_floats_half_submerged_and_no_particle_enters_it() {
    // Released a little above where it floats (centre 0.518).
    let scene = pool(vec![body(flat_box(), (0.5, 0.56, 0.5), 500.0)]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut ys = vec![];
    for i in 0..200 {
        sim.substep(0.01, Stage::Advect).unwrap();
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        if i >= 100 {
            ys.push(b.position.y);
        }
    }
    let y = ys.iter().sum::<f64>() / ys.len() as f64;
    let spread = ys.iter().map(|v| (v - y).abs()).fold(0.0, f64::max);
    let frac = submerged_fraction(y, 0.56);
    assert!(
        (frac - 0.5).abs() <= 0.05,
        "submerged fraction {frac} (y {y})"
    );
    // Settled: over the last second it bobs by less than a third of its draft (the closed
    // tank's sloshing, which the body rides, is barely damped at FLIP's 5% PIC).
    assert!(spread < 0.045, "still bobbing by {spread} m");
    let set = &sim.bodies.as_ref().unwrap().set;
    let (pos, _) = sim.read_particles().unwrap();
    let inside_count = pos.iter().filter(|p| inside(&set.bodies[0], **p)).count();
    assert_eq!(inside_count, 0, "particles inside the body");
}

#[test]
fn a_body_faster_than_its_substeps_stops_the_run_with_its_name() {
    // 1e5 m/s: at max_substeps the last substep takes the rest of the frame and would
    // carry the body kilometres outside the box; the run stops there instead.
    let mut s = body(BodyShape::Sphere { radius: 0.1 }, (0.5, 0.75, 0.5), 500.0);
    s.motion = BodyMotion::Kinematic;
    s.velocity = (1e5, 0.0, 0.0);
    let mut scene = pool(vec![s]);
    scene.max_substeps = 4;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let err = (0..3)
        .find_map(|_| sim.step_frame().err())
        .expect("the run went on with the body lost");
    match &err {
        SimError::BodyLost {
            frame: 1,
            substep: 4,
            body: 0,
            what,
        } => assert!(what.contains("moved up to"), "{what}"),
        e => panic!("another error: {e}"),
    }
    let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
    assert!(b.position.x.is_finite());
}

#[test]
fn bodies_inside_each_other_at_the_start_are_refused() {
    let cube = || BodyShape::Box {
        half_extents: (0.1, 0.1, 0.1),
    };
    let scene = pool(vec![
        body(cube(), (0.3, 0.7, 0.5), 500.0),
        body(cube(), (0.35, 0.72, 0.5), 500.0),
    ]);
    for e in [
        eddy::sim::check_scene_limits(&common::gpu(), &scene).unwrap_err(),
        Simulation::new(common::gpu(), &scene).err().unwrap(),
    ] {
        assert!(matches!(e, SimError::BodiesOverlap(_)), "{e}");
        assert!(e.to_string().contains("body 0 and body 1"), "{e}");
    }
}

#[test]
fn heavy_box_sinks_and_rests_on_the_floor() {
    let scene = pool(vec![body(flat_box(), (0.5, 0.6, 0.5), 2000.0)]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut last = vec![];
    for i in 0..150 {
        sim.substep(0.01, Stage::Advect).unwrap();
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        if i >= 120 {
            last.push((b.position.y, b.velocity().length()));
        }
    }
    for (y, v) in last {
        assert!((y - 0.125).abs() < 0.01, "resting height {y}");
        assert!(v < 0.02, "speed at rest {v}");
    }
}

/// A 32 x 48 smoke slice (cells of 1/32 m) with no sources and `bodies`.
fn air(bodies: Vec<BodySpec>, gravity: f64) -> Scene {
    let h = 1.0 / 32.0;
    Scene {
        name: "air with bodies".into(),
        kind: SceneKind::Smoke,
        domain: (1.0, 1.5, h),
        resolution: (32, 48, 1),
        gravity: (0.0, -gravity, 0.0),
        bodies,
        frame_dt: 0.01,
        ..Default::default()
    }
}

fn rect(center: (f64, f64), half: (f64, f64), density: f64) -> BodySpec {
    body(
        BodyShape::Box {
            half_extents: (half.0, half.1, 0.0),
        },
        (center.0, center.1, 0.0),
        density,
    )
}

fn smoke_state(sim: &SmokeSimulation, i: usize) -> eddy::sim::bodies::RigidBody {
    sim.bodies.as_ref().unwrap().set.bodies[i].clone()
}

#[test]
fn body_falls_in_still_air_at_reduced_gravity() {
    let rho = 300.0;
    let scene = air(vec![rect((0.5, 1.2), (0.1, 0.05), rho)], 9.81);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.005;
    let mut samples = vec![];
    for _ in 0..30 {
        sim.substep(dt, SmokeStage::Tracers).unwrap();
        samples.push((sim.time, smoke_state(&sim, 0).velocity().y));
    }
    // The mean acceleration from the 5th substep on (the first few settle the air around
    // the body), before drag matters (|v| < 1.5 m/s).
    let (t0, v0) = samples[4];
    let (t1, v1) = samples[29];
    let a = -(v1 - v0) / (t1 - t0);
    let expect = 9.81 * (1.0 - 1.2 / rho);
    assert!(
        (a / expect - 1.0).abs() < 0.05,
        "acceleration {a} m/s^2, expected {expect}"
    );
}

#[test]
fn body_bounces_off_the_floor_with_its_restitution() {
    let e = 0.6;
    let mut b = rect((0.5, 0.4), (0.12, 0.06), 800.0);
    b.restitution = e;
    let scene = air(vec![b], 9.81);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.004;
    let mut before = 0.0;
    for _ in 0..200 {
        sim.substep(dt, SmokeStage::Tracers).unwrap();
        let v = smoke_state(&sim, 0).velocity().y;
        if before < -1.0 && v > 0.0 {
            // One substep of gravity acts after the impulse.
            let out = v + 9.81 * dt;
            let ratio = out / -before;
            assert!(
                (ratio / e - 1.0).abs() < 0.1,
                "impact {before} m/s, rebound {out} m/s: ratio {ratio}, restitution {e}"
            );
            return;
        }
        before = v;
    }
    panic!("the body never bounced (last vy {before})");
}

#[test]
fn colliding_bodies_in_air_conserve_momentum() {
    let mut a = rect((0.3, 0.75), (0.08, 0.06), 600.0);
    a.velocity = (1.2, 0.0, 0.0);
    a.restitution = 0.5;
    let mut b = rect((0.65, 0.78), (0.06, 0.08), 900.0);
    b.rotation_deg = (0.0, 0.0, 15.0);
    b.restitution = 0.5;
    let scene = air(vec![a, b], 0.0);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let momentum = |sim: &SmokeSimulation| sim.bodies.as_ref().unwrap().set.total_momentum();
    let touching = |sim: &SmokeSimulation| {
        !eddy::sim::bodies::contact::find_contacts(&sim.bodies.as_ref().unwrap().set).is_empty()
    };
    let dt = 0.002;
    let mut p_before = momentum(&sim);
    let mut touched = false;
    for _ in 0..300 {
        if !touched {
            p_before = momentum(&sim);
        }
        sim.substep(dt, SmokeStage::Tracers).unwrap();
        let now = touching(&sim);
        if touched && !now {
            let p_after = momentum(&sim);
            let (va, vb) = (
                smoke_state(&sim, 0).velocity(),
                smoke_state(&sim, 1).velocity(),
            );
            assert!(vb.x > 0.2, "b did not take momentum: {vb}");
            assert!(
                (p_after - p_before).length() < 0.01 * p_before.length(),
                "momentum {p_before} -> {p_after} (va {va}, vb {vb})"
            );
            return;
        }
        touched |= now;
    }
    panic!("the bodies never collided and separated");
}

/// A jet from the left, its top half above `plate`'s centre.
fn jet(plate: BodySpec) -> Scene {
    let mut s = air(vec![plate], 0.0);
    s.smoke.sources = vec![eddy::scene::SmokeSource {
        shape: Shape::Box {
            min: (0.05, 0.6, 0.0),
            max: (0.15, 0.85, 1.0),
            velocity: (0.0, 0.0, 0.0),
        },
        dye: (1.0, 1.0, 1.0),
        temperature: 0.0,
        velocity: (2.0, 0.0, 0.0),
    }];
    s.smoke.buoyancy = 0.0;
    s.smoke.dye_weight = 0.0;
    s
}

#[test]
fn jet_turns_a_plate_hit_above_its_centre() {
    let plate = rect((0.5, 0.6), (0.04, 0.25), 100.0);
    let mut sim = SmokeSimulation::new(common::gpu(), &jet(plate)).unwrap();
    for _ in 0..80 {
        sim.substep(0.004, SmokeStage::Tracers).unwrap();
    }
    let b = smoke_state(&sim, 0);
    // Pushed +x above its centre: it turns clockwise (negative z) and moves downstream.
    assert!(b.omega().z < -0.01, "angular velocity {}", b.omega());
    assert!(b.velocity().x > 0.0, "velocity {}", b.velocity());
}

/// Total x-momentum of the air (faces between two FLUID cells, plus half of each face
/// between FLUID and a body) and the rate at which the side walls push it in x.
fn air_momentum(sim: &SmokeSimulation, dt: f64) -> (f64, f64) {
    let ctx = &sim.ctx;
    let (nx, ny) = (32usize, 48usize);
    let h = sim.scene.h();
    let area = h * sim.scene.domain.2;
    let rho = 1.2;
    let u = sim.read_velocity().unwrap();
    let phi: Vec<f32> = eddy::gpu::read_buffer(ctx, &sim.pcg.p).unwrap();
    let w = slice_face_weights(sim);
    let momentum = (0..=nx)
        .flat_map(|i| (0..ny).map(move |j| i + (nx + 1) * j))
        .map(|f| w[f] * rho * u[f] as f64 * h * area)
        .sum();
    let p = |i: usize, j: usize| phi[i + nx * j] as f64 * rho / dt;
    let wall = (0..ny).map(|j| (p(0, j) - p(nx - 1, j)) * area).sum();
    (momentum, wall)
}

#[test]
fn a_moving_body_gives_the_air_the_momentum_it_loses() {
    // No gravity, a light plate thrown broadside through still air: whatever momentum the
    // air's pressure takes from it, the air gains, apart from what the walls push. Measured
    // (the air's momentum weighted by the faces' open fractions): 15% more than the plate
    // lost with cut faces, 10% as whole cells (the walls' push is taken from the pressure
    // of the cells beside them).
    let mut plate = rect((0.35, 0.75), (0.04, 0.2), 20.0);
    plate.velocity = (1.0, 0.0, 0.0);
    let scene = air(vec![plate], 0.0);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.004;
    sim.substep(dt, SmokeStage::Tracers).unwrap();
    let (start, _) = air_momentum(&sim, dt);
    let body_start = smoke_state(&sim, 0).momentum.x;
    let mut walls = 0.0;
    let mut impulse = 0.0;
    for _ in 0..40 {
        sim.substep(dt, SmokeStage::Tracers).unwrap();
        walls += air_momentum(&sim, dt).1 * dt;
        impulse += smoke_state(&sim, 0).fluid_force.x * dt;
    }
    let (end, _) = air_momentum(&sim, dt);
    let body_change = smoke_state(&sim, 0).momentum.x - body_start;
    let air_change = end - start;
    eprintln!(
        "body {body_change:e} (impulse {impulse:e}), air {air_change:e}, walls {walls:e} N s"
    );
    assert!(body_change < 0.0, "the air did not slow the plate");
    // The air's gain minus the walls' push is the reaction to the plate's loss.
    let reaction = air_change - walls;
    assert!(
        (reaction / -impulse - 1.0).abs() < 0.2,
        "air gained {reaction:e} N s (less the walls), the plate felt {impulse:e} N s"
    );
}

/// The solid-velocity views show a spinning body's v + w x r in its cells (and nothing
/// where no solid is), as the boundary stage will put it on the faces.
#[test]
fn solid_velocity_views_show_a_spinning_body() {
    use eddy::sim::liquid::views::Field;
    let mut spinning = body(flat_box(), (0.5, 0.75, 0.5), 500.0);
    spinning.velocity = (0.3, 0.0, 0.0);
    spinning.angular_velocity = (0.0, 0.0, 2.0);
    spinning.motion = BodyMotion::Kinematic;
    let scene = pool(vec![spinning]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(1e-4, Stage::MarkCells).unwrap();
    let types = sim.read_field(Field::CellType).unwrap();
    let u = sim.read_field(Field::SolidVelX).unwrap();
    let v = sim.read_field(Field::SolidVelY).unwrap();
    let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
    let (c, vel, w) = (b.position, b.velocity(), b.omega());
    let h = scene.h();
    let mut checked = 0;
    for k in 0..16u32 {
        for j in 0..16u32 {
            for i in 0..16u32 {
                let x = glam::DVec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5) * h;
                let inside = b.contains(x, false);
                let (gu, gv) = (u.get(i, j, k) as f64, v.get(i, j, k) as f64);
                if inside {
                    // SOLID, or a cut cell (the body cuts faces in the liquid).
                    let expect = vel + w.cross(x - c);
                    assert!(
                        (gu - expect.x).abs() < 1e-3 && (gv - expect.y).abs() < 1e-3,
                        "cell ({i}, {j}, {k}): ({gu}, {gv}) vs {expect}"
                    );
                    checked += 1;
                } else if types.get(i, j, k) != eddy::scene::SOLID as f32 {
                    assert!(
                        gu == 0.0 && gv == 0.0,
                        "cell ({i}, {j}, {k}) outside: ({gu}, {gv})"
                    );
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} body cells");
}

/// The smoke's solid-velocity view shows a spinning plate's v + w x r in its cells and
/// nothing in the air.
#[test]
fn smoke_solid_velocity_view_shows_a_spinning_plate() {
    use eddy::sim::smoke::views::SmokeField;
    let mut plate = rect((0.5, 0.75), (0.2, 0.06), 50.0);
    plate.velocity = (0.2, -0.1, 0.0);
    plate.angular_velocity = (0.0, 0.0, 1.5);
    plate.motion = BodyMotion::Kinematic;
    let scene = air(vec![plate], 0.0);
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.substep(1e-4, SmokeStage::Mark).unwrap();
    let view = sim.read_view(SmokeField::SolidVelocity).unwrap();
    let u = view.velocity.as_ref().unwrap();
    let b = smoke_state(&sim, 0);
    let (c, vel, w) = (b.position, b.velocity(), b.omega());
    let h = scene.h();
    let mut checked = 0;
    for j in 0..48usize {
        for i in 0..32usize {
            let k = i + 32 * j;
            let x = glam::DVec3::new((i as f64 + 0.5) * h, (j as f64 + 0.5) * h, c.z);
            if b.contains(x, true) {
                let expect = vel + w.cross(x - c);
                assert!(
                    (u[k][0] as f64 - expect.x).abs() < 1e-3
                        && (u[k][1] as f64 - expect.y).abs() < 1e-3,
                    "cell ({i}, {j}): {:?} vs {expect}",
                    u[k]
                );
                assert!((view.values[k] as f64 - expect.truncate().length()).abs() < 1e-3);
                checked += 1;
            } else if view.cell_type[k] != eddy::scene::SOLID {
                assert_eq!(u[k], [0.0, 0.0], "air cell ({i}, {j})");
            }
        }
    }
    assert!(checked >= 20, "only {checked} plate cells");
}

/// A kinematic plate pushed through the wall of a closed ring of static solids squeezes
/// the pocket inside it: the air it pushes in has nowhere to go but out of the pocket's
/// own right-hand side. Each separate region of the closed box is its own pure Neumann
/// problem, and its right-hand side must sum to zero over the region, not just over the
/// box (where the plate's two faces cancel). With one mean over the box the solve stops
/// above its tolerance every substep.
#[test]
fn a_sealed_pocket_is_made_solvable_on_its_own() {
    let wall = |min: (f64, f64), max: (f64, f64)| Shape::Box {
        min: (min.0, min.1, 0.0),
        max: (max.0, max.1, 1.0),
        velocity: (0.0, 0.0, 0.0),
    };
    let mut plate = rect((0.5, 0.5), (0.1, 0.125), 500.0);
    plate.motion = BodyMotion::Kinematic;
    plate.velocity = (0.5, 0.0, 0.0);
    let mut scene = air(vec![plate], 0.0);
    scene.resolution = (32, 32, 1);
    scene.domain = (1.0, 1.0, 1.0 / 32.0);
    // A ring from x 0.5 to 0.875 and y 0.25 to 0.75, two cells thick; the plate spans
    // its left wall.
    scene.solids = vec![
        wall((0.5, 0.25), (0.5625, 0.75)),
        wall((0.8125, 0.25), (0.875, 0.75)),
        wall((0.5, 0.25), (0.875, 0.3125)),
        wall((0.5, 0.6875), (0.875, 0.75)),
    ];
    // Whole cells (the smoke's default), then the plate cutting faces: the pocket is then
    // sealed by the faces it closes, whatever its cells' flags.
    for cut in [false, true] {
        scene.body_cut_faces = Some(cut);
        sealed_pocket(&scene, cut);
    }
}

fn sealed_pocket(scene: &Scene, cut: bool) {
    let mut sim = SmokeSimulation::new(common::gpu(), scene).unwrap();
    let tolerance = scene.pressure.tolerance;
    for step in 0..6 {
        let report = sim.substep(0.01, SmokeStage::Tracers).unwrap();
        let solve = report.solve.expect("the pressure solve ran");
        let solid: Vec<u32> = eddy::gpu::read_buffer(&sim.ctx, &sim.fields.solid).unwrap();
        let b: Vec<f32> = sim.pcg.b.read(&sim.ctx).unwrap();
        let open: Option<Vec<f32>> =
            cut.then(|| eddy::gpu::read_buffer(&sim.ctx, &sim.fields.open).unwrap());
        let regions =
            eddy::sim::bodies::regions::Regions::find_through(&solid, open.as_deref(), [32, 32, 1]);
        // The labels the GPU got, from the 4 bits per cell its `pack_regions` sent back, are
        // those of the whole flags and fractions.
        let coupling = &sim.bodies.as_ref().unwrap().coupling;
        let gpu: Vec<u32> = eddy::gpu::read_buffer(&sim.ctx, &coupling.regions).unwrap();
        assert_eq!(
            gpu,
            regions.gpu_words(),
            "substep {step}: labels from the packed bits"
        );
        let big = regions.cells.iter().filter(|&&c| c >= 20).count();
        assert!(big >= 2, "substep {step}: no pocket ({:?})", regions.cells);
        let scale: f64 = b.iter().map(|v| (*v as f64).abs()).sum();
        assert!(scale > 0.0, "the plate moves no air");
        for (r, cells) in regions.cells.iter().enumerate() {
            let sum: f64 = b
                .iter()
                .zip(&regions.label)
                .filter(|(_, &l)| l == r as u32)
                .map(|(v, _)| *v as f64)
                .sum();
            assert!(
                sum.abs() <= 1e-5 * scale,
                "substep {step}: region {r} ({cells} cells) sums to {sum:e} (scale {scale:e})"
            );
        }
        assert!(
            solve.residual <= tolerance,
            "substep {step}: solve stopped at {:e} after {} iterations",
            solve.residual,
            solve.iterations
        );
        println!(
            "substep {step}: regions {:?}, {} iterations, residual {:.2e}, max div {:.2e}",
            regions.cells, solve.iterations, solve.residual, report.max_divergence
        );
    }
}

/// A liquid without solids or bodies keeps no solid fields (`GridFields::solid` and
/// `solid_vel` are placeholders, 20 bytes per cell saved), a liquid with a body or a solid
/// keeps them, and the solid-velocity view of a liquid without them is zero everywhere.
#[test]
fn only_a_liquid_that_can_have_solid_cells_keeps_solid_fields() {
    let without = pool(vec![]);
    let mut with_solid = pool(vec![]);
    with_solid.solids = vec![Shape::Box {
        min: (0.7, 0.0, 0.0),
        max: (0.8, 0.3, 1.0),
        velocity: (0.0, 0.0, 0.0),
    }];
    let with_body = pool(vec![body(flat_box(), (0.5, 0.5, 0.5), 500.0)]);
    assert!(!without.has_solid_cells());
    assert!(with_solid.has_solid_cells() && with_body.has_solid_cells());
    assert!(
        air(vec![], 9.81).has_solid_cells(),
        "smoke obstacles are drawn live"
    );
    let cells = 16 * 16 * 16;
    for (scene, keeps) in [(&without, false), (&with_solid, true), (&with_body, true)] {
        let mut sim = Simulation::new(common::gpu(), scene).unwrap();
        assert_eq!(sim.fields.has_solid_cells(), keeps, "{}", scene.name);
        let bytes = sim.fields.solid.size() + sim.fields.solid_vel.size();
        assert_eq!(bytes, if keeps { cells * 20 } else { 32 });
        sim.step_frame().unwrap();
        let view = sim
            .read_field(eddy::sim::liquid::views::Field::SolidVelY)
            .unwrap();
        assert_eq!(view.values.len(), cells as usize);
        if !keeps {
            assert!(view.values.iter().all(|v| *v == 0.0));
        }
    }
}

/// The memory check counts what the bodies' coupling allocates: the per-cell body index,
/// and the liquid's copy of its static solids or the smoke's regions and their readback.
#[test]
fn memory_estimates_count_the_bodies_buffers() {
    let with = pool(vec![body(flat_box(), (0.5, 0.5, 0.5), 500.0)]);
    let without = pool(vec![]);
    let cells = 16u64 * 16 * 16;
    let grown = eddy::sim::memory_estimate(&with, 1000).total
        - eddy::sim::memory_estimate(&without, 1000).total;
    // The liquid's bodies cut faces: the open fractions, their static copy and the cover
    // (12 bytes per face) come with them, and the solid fields the pool alone does without
    // (20 bytes per cell less a placeholder's 32).
    let faces = 3 * 17 * 16 * 16;
    assert_eq!(
        grown,
        eddy::sim::bodies::coupling::memory(&with) + faces * 12 + cells * 20 - 32,
        "the coupling, the open fractions, their static copy, the cover and the solid fields"
    );
    assert!(
        grown >= cells * 24,
        "liquid: {grown} bytes for {cells} cells"
    );
    // The deflation's spaces, where the scene turns it on: the body's box grown by its
    // spare cells, 48 bytes a cell, at most the grid's.
    let mut deflated = with.clone();
    deflated.body_deflation = Some(true);
    let spaces = eddy::sim::memory_estimate(&deflated, 1000).total
        - eddy::sim::memory_estimate(&with, 1000).total;
    assert!(
        spaces >= 10 * 10 * 10 * 48 && spaces <= cells * 48 * 3 / 2,
        "the deflation's spaces: {spaces} bytes"
    );
    let smoke = air(vec![rect((0.5, 0.5), (0.1, 0.1), 10.0)], 9.81);
    let cells = 32u64 * 48;
    let grown = eddy::sim::smoke::memory_estimate(&smoke).total
        - eddy::sim::smoke::memory_estimate(&air(vec![], 9.81)).total;
    assert!(
        grown >= cells * 12,
        "smoke: {grown} bytes for {cells} cells"
    );
    assert_eq!(eddy::sim::bodies::coupling::memory(&without), 0);
}

/// Bodies whose deflation spaces would need a buffer past the adapter's binding limit are
/// refused before anything is allocated, with that buffer and what to change named; the
/// same scene without deflation is not refused for it.
#[test]
fn deflation_spaces_past_the_adapter_s_binding_limit_are_refused() {
    use eddy::sim::bodies::coupling::deflation_buffer;
    let ctx = common::gpu();
    // 64 balls of 0.11 m on a 4 x 4 x 4 lattice (none touches another) at 512 cells a side:
    // each ball's space spans about 122^3 cells, 48 bytes a cell, 5.6 GB in all.
    let mut balls = Vec::new();
    for k in 0..4 {
        for j in 0..4 {
            for i in 0..4 {
                let at = |n: i32| 0.125 + 0.25 * n as f64;
                balls.push(body(
                    BodyShape::Sphere { radius: 0.11 },
                    (at(i), at(j), at(k)),
                    500.0,
                ));
            }
        }
    }
    let mut scene = pool(balls);
    scene.resolution = (512, 512, 512);
    scene.body_deflation = Some(true);
    let limit = eddy::sim::buffer_limit(&ctx);
    let need = deflation_buffer(&scene);
    assert!(need > limit, "{need} bytes fit the limit {limit}");
    match eddy::sim::check_limits(&ctx, &scene, 1000) {
        Err(eddy::sim::SimError::TooLarge {
            what, bytes, hint, ..
        }) => {
            assert_eq!(bytes, need);
            assert!(what.contains("deflation"), "{what}");
            assert!(hint.contains("body_deflation"), "{hint}");
        }
        other => panic!("not refused for the deflation's buffer: {other:?}"),
    }
    scene.body_deflation = Some(false);
    assert_eq!(deflation_buffer(&scene), 0);
    if let Err(eddy::sim::SimError::TooLarge { what, .. }) =
        eddy::sim::check_limits(&ctx, &scene, 1000)
    {
        assert!(!what.contains("deflation"), "{what}");
    }
    // A small scene's bound holds its actual spaces: `place_spaces` over the bodies as the
    // solve sees them takes no more than the bound.
    let mut small = pool(vec![
        body(flat_box(), (0.3, 0.5, 0.5), 500.0),
        body(BodyShape::Sphere { radius: 0.1 }, (0.75, 0.5, 0.7), 500.0),
    ]);
    small.bodies[0].rotation_deg = (20.0, 30.0, 40.0);
    small.body_deflation = Some(true);
    let sim = Simulation::new(ctx, &small).unwrap();
    let b = sim.bodies.as_ref().unwrap();
    let n = sim.fields.params.n;
    let mut couple = b.strong.couple_bodies(&b.set, n, small.h());
    let cells = eddy::sim::bodies::strong::place_spaces(&mut couple, n);
    let bound = deflation_buffer(&small);
    let actual = eddy::sim::bodies::strong::DEFL_BLOCK_BYTES + cells * 48;
    assert!(
        actual <= bound && bound <= actual * 3,
        "spaces {actual} bytes, bound {bound}"
    );
}

/// Deterministic values in [-1, 1).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = eddy::scene::SplitMix64(seed);
    (0..n)
        .map(|_| (s.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        .collect()
}

/// After a substep up to the projection of `core`'s scene: the solve's f64 residual with
/// the bodies' term, and the GPU's q += K d, r -= K p and z = K p on random vectors
/// against the f64 reference.
fn check_coupled_operator(ctx: &eddy::gpu::GpuContext, core: &eddy::sim::runner::Core) {
    use eddy::reference::bodies::{coupled_term_projected, RefCoupledBody};
    use eddy::sim::core::pressure::TermOp;
    let n = core.fields.params.n;
    let g = Grid {
        nx: n[0] as usize,
        ny: n[1] as usize,
        nz: n[2] as usize,
        h: core.fields.params.h as f64,
    };
    let slice = n[2] == 1;
    // The smoke's closed box takes P K P (strong.wgsl); the liquid K itself.
    let coupled_term =
        |g, bodies: &[RefCoupledBody], ids: (&[u32], &[u32]), types: &[u8], x: &[f32], slice| {
            if slice {
                coupled_term_projected(g, bodies, ids, types, x, slice)
            } else {
                eddy::reference::bodies::coupled_term(g, bodies, ids, types, x, slice)
            }
        };
    let cells = g.cells();
    let b = core.bodies.as_ref().unwrap();
    let term = core.added_term().expect("the strong scheme adds its term");
    let read = |buf: &wgpu::Buffer| -> Vec<f32> { eddy::gpu::read_buffer(ctx, buf).unwrap() };
    let couple: Vec<eddy::sim::bodies::strong::CoupleBody> =
        eddy::gpu::read_buffer(ctx, &b.strong.couple).unwrap();
    let v3 = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
    let bodies: Vec<RefCoupledBody> = couple
        .iter()
        .take(b.set.bodies.len())
        .map(|c| RefCoupledBody {
            centre: v3(c.centre),
            inv_mass: v3(c.inv_mass),
            // s I^-1 is symmetric: its columns are its rows.
            inv_inertia: [c.inv_inertia_x, c.inv_inertia_y, c.inv_inertia_z].map(v3),
        })
        .collect();
    assert!(
        bodies.iter().any(|b| b.inv_mass[0] > 0.0),
        "no body moves with the fluid"
    );
    let id_words: Vec<u32> = eddy::gpu::read_buffer(ctx, &b.coupling.body_id).unwrap();
    let cover: Vec<u32> = eddy::gpu::read_buffer(ctx, &b.coupling.cover).unwrap();
    let ids = (&id_words[..], &cover[..]);
    let types: Vec<u32> = eddy::gpu::read_buffer(ctx, &core.fields.cell_type).unwrap();
    let types: Vec<u8> = types.iter().map(|&t| t as u8).collect();
    // The solve: b - (A + K) phi in f64, relative to max|b|.
    let a: Vec<[f32; 4]> = eddy::gpu::read_buffer(ctx, &core.pcg.a).unwrap();
    let a: Vec<[f64; 4]> = a.iter().map(|r| r.map(|v| v as f64)).collect();
    let rhs = core.pcg.b.read::<f32>(ctx).unwrap();
    let phi = read(&core.pcg.p);
    let phi64: Vec<f64> = phi.iter().map(|&v| v as f64).collect();
    let ap = eddy::reference::apply_packed(&g, &a, &phi64);
    let kp = coupled_term(g, &bodies, ids, &types, &phi, slice);
    let kp_max = kp.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let b_max = rhs.iter().fold(0.0f64, |m, v| m.max(v.abs() as f64));
    let res = (0..cells)
        .map(|c| (rhs[c] as f64 - ap[c] - kp[c]).abs())
        .fold(0.0, f64::max)
        / b_max;
    assert!(
        kp_max > 1e-3 * b_max,
        "the bodies' term is trivial: {kp_max:e} vs {b_max:e}"
    );
    let report = core.last_solve.as_ref().unwrap();
    assert!(res < 1e-3, "coupled solve residual {res:e} ({report:?})");
    let gpu_true = report.true_residual.unwrap();
    // Within a tenth, or f32's own floor on the system (the GPU sums K p in f32: 34 light
    // bodies put it 1.3 floors from the f64 residual).
    let floor = report.f32_floor.unwrap_or(0.0);
    assert!(
        (gpu_true - res).abs() <= 0.1 * res + (1.5 * floor).max(1e-6),
        "the GPU's true residual {gpu_true:e}, the f64 one {res:e} ({report:?})"
    );
    // The term on random vectors: q += K d, then r -= K p, then z = K p.
    let (d, p, q0, r0) = (
        noise(cells, 1),
        noise(cells, 2),
        noise(cells, 3),
        noise(cells, 4),
    );
    let write =
        |region: &eddy::gpu::Region, v: &[f32]| region.write(&ctx.queue, bytemuck::cast_slice(v));
    write(&core.pcg.d, &d);
    ctx.queue
        .write_buffer(&core.pcg.p, 0, bytemuck::cast_slice(&p));
    write(&core.pcg.q, &q0);
    write(&core.pcg.r, &r0);
    // Not done: the iteration's kernels return at once after a solve.
    ctx.queue.write_buffer(&core.pcg.state, 0, &[0u8; 40]);
    // Records `ops` of the term in one pass and submits them.
    let record = |ops: &[TermOp]| {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            for &op in ops {
                term.record(&mut pass, op);
            }
        }
        ctx.queue.submit([enc.finish()]);
    };
    record(&[TermOp::AddToQ, TermOp::SubtractFromR, TermOp::IntoZ]);
    let kd = coupled_term(g, &bodies, ids, &types, &d, slice);
    let kp = coupled_term(g, &bodies, ids, &types, &p, slice);
    for (what, gpu, expect) in [
        (
            "q + K d",
            core.pcg.q.read::<f32>(ctx).unwrap(),
            (0..cells).map(|c| q0[c] as f64 + kd[c]).collect::<Vec<_>>(),
        ),
        (
            "r - K p",
            core.pcg.r.read::<f32>(ctx).unwrap(),
            (0..cells).map(|c| r0[c] as f64 - kp[c]).collect(),
        ),
        ("K p", core.pcg.z.read::<f32>(ctx).unwrap(), kp.clone()),
    ] {
        let scale = kp.iter().chain(&kd).fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            scale > 0.02,
            "{what}: the term is trivial ({scale}) next to inputs of 1"
        );
        let touched = (0..cells).filter(|&c| kd[c] != 0.0).count();
        assert!(touched > 20, "{what}: only {touched} cells next to a body");
        let err = (0..cells)
            .map(|c| (gpu[c] as f64 - expect[c]).abs())
            .fold(0.0, f64::max);
        assert!(
            err < 1e-5 * scale,
            "{what}: GPU vs f64 reference differ by {err:e} (scale {scale:e})"
        );
    }
    // The liquid's deflation of the bodies' modes (strong.wgsl, `deflate_*`): its blocks
    // from A and the term, then z + J^T y for random r and z.
    if slice {
        return;
    }
    let deflating = b.strong.deflate;
    assert!(deflating, "the scene's strong solve deflates");
    // Some deflation spaces' boxes meet: `deflate_add` must write their shared cells once,
    // with every body's rows.
    let couple: Vec<eddy::sim::bodies::strong::CoupleBody> =
        eddy::gpu::read_buffer(ctx, &b.strong.couple).unwrap();
    let meeting = couple[..b.strong.params.bodies as usize]
        .iter()
        .filter(|c| c.hi[3] != 0)
        .count();
    assert!(
        meeting >= 2,
        "{meeting} bodies' deflation boxes meet another's"
    );
    let (r1, z1) = (noise(cells, 5), noise(cells, 6));
    write(&core.pcg.r, &r1);
    write(&core.pcg.z, &z1);
    ctx.queue.write_buffer(&core.pcg.state, 0, &[0u8; 40]);
    record(&[TermOp::PrepareDeflation, TermOp::Deflate]);
    let gpu = core.pcg.z.read::<f32>(ctx).unwrap();
    let blocks = eddy::reference::bodies::deflation_blocks(g, &bodies, ids, &types, &a, slice);
    let to64 = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let expect = eddy::reference::bodies::deflate(
        g,
        &bodies,
        ids,
        &types,
        &a,
        &blocks,
        &to64(&r1),
        &to64(&z1),
        slice,
    );
    let correction = (0..cells)
        .map(|c| (expect[c] - z1[c] as f64).abs())
        .fold(0.0, f64::max);
    let changed = (0..cells).filter(|&c| expect[c] != z1[c] as f64).count();
    assert!(
        correction > 0.05 && changed > 20,
        "the deflation is trivial: {correction:e} over {changed} cells"
    );
    let err = (0..cells)
        .map(|c| (gpu[c] as f64 - expect[c]).abs())
        .fold(0.0, f64::max);
    assert!(
        err < 1e-4 * correction,
        "deflated z: GPU vs f64 reference differ by {err:e} (correction {correction:e})"
    );
    // The deflated start: p += Z E^-1 Z^T r, with the blocks set up above.
    let p0 = noise(cells, 7);
    ctx.queue
        .write_buffer(&core.pcg.p, 0, bytemuck::cast_slice(&p0));
    record(&[TermOp::DeflateStart]);
    let gpu = read(&core.pcg.p);
    let start = eddy::reference::bodies::deflated_start(
        g,
        &bodies,
        ids,
        &types,
        &a,
        &blocks,
        &to64(&r1),
        slice,
    );
    let size = start.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        size > 0.05 && start.iter().filter(|v| **v != 0.0).count() > 20,
        "the deflated start is trivial: {size:e}"
    );
    let err = (0..cells)
        .map(|c| (gpu[c] as f64 - p0[c] as f64 - start[c]).abs())
        .fold(0.0, f64::max);
    assert!(
        err < 1e-4 * size,
        "deflated start: GPU vs f64 reference differ by {err:e} (correction {size:e})"
    );
}

/// More than 32 bodies (the deflation's neighbour lists name bodies below 32, and a body
/// that meets one of index 32 or more tests every body: strong.rs, `place_spaces`): 34
/// spheres in a row of rows across the 16^3 pool, the last two beside the first, deflated,
/// in one part per body and split: the term and the deflation against the f64 reference.
#[test]
fn a_deflated_operator_with_more_than_32_bodies_matches_the_f64_reference() {
    use eddy::sim::bodies::strong::MEETS_ANY;
    let ctx = common::gpu();
    let mut bodies: Vec<BodySpec> = (0..32)
        .map(|i| {
            let (x, z) = (0.1 + 0.11 * (i % 8) as f64, 0.1 + 0.11 * (i / 8) as f64);
            body(
                BodyShape::Sphere { radius: 0.045 },
                (x, 0.45, z),
                400.0 + 10.0 * i as f64,
            )
        })
        .collect();
    for z in [0.56, 0.67] {
        bodies.push(body(
            BodyShape::Sphere { radius: 0.045 },
            (0.1, 0.45, z),
            600.0,
        ));
    }
    let mut scene = pool(bodies);
    scene.body_deflation = Some(true);
    for max_chunks in [1, eddy::sim::bodies::strong::MAX_CHUNKS] {
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        sim.bodies.as_mut().unwrap().strong.max_chunks = max_chunks;
        sim.substep(0.01, Stage::Advect).unwrap();
        sim.substep(0.01, Stage::Project).unwrap();
        let b = sim.bodies.as_ref().unwrap();
        let couple: Vec<eddy::sim::bodies::strong::CoupleBody> =
            eddy::gpu::read_buffer(&ctx, &b.strong.couple).unwrap();
        let every = couple[..34]
            .iter()
            .filter(|c| c.hi[3] as u32 == MEETS_ANY)
            .count();
        assert!(every >= 3, "{every} bodies meet one of index 32 or more");
        check_coupled_operator(&ctx, &sim);
    }
}

#[test]
fn coupled_operator_matches_the_f64_reference_in_both_modes() {
    let ctx = common::gpu();
    // The liquid: a light tilted box, a heavy sphere, a kinematic box (a boundary the
    // solve cannot move) and a cork-light spinning sphere.
    let mut tilted = body(
        BodyShape::Box {
            half_extents: (0.2, 0.09, 0.13),
        },
        (0.43, 0.47, 0.52),
        100.0,
    );
    tilted.rotation_deg = (17.0, -8.0, 31.0);
    tilted.velocity = (0.3, -0.4, 0.1);
    let mut kinematic = body(flat_box(), (0.75, 0.2, 0.75), 1000.0);
    kinematic.motion = BodyMotion::Kinematic;
    kinematic.velocity = (0.0, 0.2, 0.0);
    let mut cork = body(BodyShape::Sphere { radius: 0.09 }, (0.2, 0.45, 0.2), 50.0);
    cork.angular_velocity = (0.0, 3.0, 1.0);
    let scene = pool(vec![
        tilted,
        body(
            BodyShape::Sphere { radius: 0.11 },
            (0.78, 0.31, 0.27),
            2500.0,
        ),
        kinematic,
        cork,
    ]);
    // Whole cells, then the bodies cutting faces; deflated, to check the deflation too. The
    // box loops in one part per body (a CPU adapter's default) and split over as many as
    // they take (a GPU's): both must give the same operator.
    let parts = [1, eddy::sim::bodies::strong::MAX_CHUNKS];
    for (cut, max_chunks) in [false, true]
        .into_iter()
        .flat_map(|c| parts.map(|m| (c, m)))
    {
        let mut scene = scene.clone();
        scene.body_cut_faces = Some(cut);
        scene.body_deflation = Some(true);
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        sim.bodies.as_mut().unwrap().strong.max_chunks = max_chunks;
        for _ in 0..2 {
            sim.substep(0.01, Stage::Advect).unwrap();
        }
        sim.substep(0.01, Stage::Project).unwrap();
        let chunks = sim.bodies.as_ref().unwrap().strong.params.chunks;
        assert!(
            (max_chunks == 1) == (chunks == 1),
            "cut {cut}, at most {max_chunks} parts: {chunks}"
        );
        check_coupled_operator(&ctx, &sim);
    }
    // The smoke slice: a plate and a disc in rising air, one of them lighter than it.
    let mut plate = rect((0.4, 0.7), (0.2, 0.04), 0.6);
    plate.rotation_deg = (0.0, 0.0, 25.0);
    plate.velocity = (0.2, 0.5, 0.0);
    let mut disc = body(BodyShape::Sphere { radius: 0.1 }, (0.7, 0.3, 0.0), 5.0);
    disc.angular_velocity = (0.0, 0.0, 4.0);
    let scene = air(vec![plate, disc], 9.81);
    for cut in [false, true] {
        let mut scene = scene.clone();
        scene.body_cut_faces = Some(cut);
        let mut sim = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
        for _ in 0..2 {
            sim.substep(0.01, SmokeStage::Tracers).unwrap();
        }
        sim.substep(0.01, SmokeStage::Project).unwrap();
        check_coupled_operator(&ctx, &sim);
    }
    // A block resting on the floor and a disc against the left wall: their faces do not
    // close (J 1 is not zero), so the closed box's term is P K P, whose projection the
    // operator check above would not see with free bodies.
    let mut block = rect((0.5, 0.1), (0.2, 0.1), 0.9);
    block.rotation_deg = (0.0, 0.0, 0.0);
    let mut wall_disc = body(BodyShape::Sphere { radius: 0.1 }, (0.1, 0.8, 0.0), 3.0);
    wall_disc.velocity = (0.0, 0.4, 0.0);
    let scene = air(vec![block, wall_disc], 9.81);
    let mut sim = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
    sim.substep(0.01, SmokeStage::Tracers).unwrap();
    sim.substep(0.01, SmokeStage::Project).unwrap();
    {
        use eddy::reference::bodies::{coupled_term, RefCoupledBody};
        let coupling = &sim.bodies.as_ref().unwrap().coupling;
        let id_words: Vec<u32> = eddy::gpu::read_buffer(&ctx, &coupling.body_id).unwrap();
        let cover: Vec<u32> = eddy::gpu::read_buffer(&ctx, &coupling.cover).unwrap();
        let ids = (&id_words[..], &cover[..]);
        let types: Vec<u32> = eddy::gpu::read_buffer(&ctx, &sim.fields.cell_type).unwrap();
        let types: Vec<u8> = types.iter().map(|&t| t as u8).collect();
        let g = Grid {
            nx: 32,
            ny: 48,
            nz: 1,
            h: sim.fields.params.h as f64,
        };
        let unit = RefCoupledBody {
            centre: [0.5, 0.1, 0.0],
            inv_mass: [1.0; 3],
            inv_inertia: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        };
        let k1 = coupled_term(g, &[unit], ids, &types, &vec![1.0; g.cells()], true);
        let open = k1.iter().sum::<f64>().abs();
        assert!(
            open > 1.0,
            "the block's faces close ({open}): not against the floor"
        );
    }
    check_coupled_operator(&ctx, &sim);
}

/// A pool 0.8 m deep in a 1 m box at 32^3 with a sphere of radius 0.1 m (3.2 cells) at its
/// centre, 0.4 m (4 radii) from the walls and the surface.
fn deep_pool(density: f64) -> Scene {
    Scene {
        name: "sphere in a deep pool".into(),
        resolution: (32, 32, 32),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.8, 1.0),
            velocity: (0.0, 0.0, 0.0),
        }],
        bodies: vec![body(
            BodyShape::Sphere { radius: 0.1 },
            (0.5, 0.4, 0.5),
            density,
        )],
        ..Default::default()
    }
}

#[test]
fn a_sphere_released_in_still_liquid_accelerates_with_its_added_mass() {
    // Released from rest in ideal fluid, a sphere starts at a = (rho_b - rho_f) /
    // (rho_b + rho_f / 2) g: its added mass is half the displaced fluid's. The strong
    // coupling's solve gives that for every body density (the weak scheme guesses it, and
    // without it a 0.1x sphere would start at 9 g); with `body_cut_faces` the body's
    // covered faces (strong.wgsl) let the fluid flow round the sphere's true surface. Measured over the 2nd to 4th
    // substeps, 32^3, radius 3.2 cells, in a 1 m tank (whose walls add a little added
    // mass): 0.1x 7.6% and 2x 6.3% below the formula; the coefficient over the volume the
    // faces cover is 0.55 and 0.59 (with whole cells it was 0.73 and 0.69, not converging with
    // the grid).
    let rho_f = eddy::sim::DENSITY;
    let mut cs = vec![];
    for ratio in [0.1, 2.0] {
        let rho_b = ratio * rho_f;
        let mut scene = deep_pool(rho_b);
        scene.body_cut_faces = Some(true);
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let dt = 0.002;
        let mut v = vec![];
        for _ in 0..4 {
            sim.substep(dt, Stage::Advect).unwrap();
            v.push(sim.bodies.as_ref().unwrap().set.bodies[0].velocity());
        }
        let a = (v[3].y - v[1].y) / (2.0 * dt);
        let g = 9.81;
        let expect = (rho_b - rho_f) / (rho_b + 0.5 * rho_f) * scene.gravity.1;
        assert!(
            ((a - expect) / expect).abs() < 0.1,
            "{ratio}x water: acceleration {a:.3} m/s^2, ideal {expect:.3}"
        );
        // The volume the pressure pushes on: what the faces' control volumes cover, summed
        // over the three components.
        let cover: Vec<u32> =
            eddy::gpu::read_buffer(&common::gpu(), &sim.bodies.as_ref().unwrap().coupling.cover)
                .unwrap();
        let h = scene.h();
        let vd = cover
            .iter()
            .map(|&w| eddy::reference::bodies::cover_parts(w).1)
            .sum::<f64>()
            * h
            * h
            * h
            / 3.0;
        let vol = 4.0 / 3.0 * std::f64::consts::PI * 0.1f64.powi(3);
        assert!(
            (vd / vol - 1.0).abs() < 0.05,
            "covered volume {vd} of {vol}"
        );
        // a (rho_b V + C rho_f V_d) = (rho_f V_d - rho_b V) g
        let c = ((rho_f * vd - rho_b * vol) * g / a - rho_b * vol) / (rho_f * vd);
        eprintln!("{ratio}x: a {a:.3} m/s^2 (ideal {expect:.3}), added mass coefficient {c:.3}");
        assert!(
            (0.45..0.65).contains(&c),
            "{ratio}x water: acceleration {a:.3} m/s^2, added mass coefficient {c:.3}"
        );
        // The particles the sphere pushes out as it moves give it their momentum back, a
        // little unevenly: measured 2.5% sideways at 0.1x after 4 substeps.
        let side = v[3].x.abs() + v[3].z.abs();
        assert!(side < 0.04 * v[3].y.abs(), "{ratio}x: sideways {}", v[3]);
        cs.push(c);
    }
    assert!(
        (cs[0] / cs[1] - 1.0).abs() < 0.1,
        "added mass coefficient {:.3} at 0.1x, {:.3} at 2x",
        cs[0],
        cs[1]
    );
}

#[test]
fn a_beach_ball_a_cork_and_a_stone_settle_in_a_pool() {
    // The issue that made the strong coupling the default: bodies far lighter than water
    // (a beach ball at 0.05x, a cork at 0.25x) spun up to 170 rad/s and left the domain
    // while the run went on. Dropped from above the surface, each must settle: the
    // floaters at the surface, the stone on the floor, nothing fast or spinning.
    let ball_volume = 4.0 / 3.0 * std::f64::consts::PI * 0.1f64.powi(3);
    let cork_volume = 0.375 * 0.25 * 0.375;
    // The pool's 0.5 m plus what the three displace.
    let level = 0.5 + 0.05 * ball_volume + 0.25 * cork_volume + 0.14f64.powi(3);
    let mut scene = pool(vec![
        body(BodyShape::Sphere { radius: 0.1 }, (0.27, 0.62, 0.27), 50.0),
        body(flat_box(), (0.7, 0.66, 0.7), 250.0),
        body(
            BodyShape::Box {
                half_extents: (0.07, 0.07, 0.07),
            },
            (0.27, 0.75, 0.73),
            2500.0,
        ),
    ]);
    scene.resolution = (24, 24, 24);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    for _ in 0..90 {
        sim.step_frame().unwrap();
    }
    let set = &sim.bodies.as_ref().unwrap().set;
    for (i, b) in set.bodies.iter().enumerate() {
        let (v, w) = (b.velocity().length(), b.omega().length());
        assert!(
            v < 0.25 && w < 5.0,
            "body {i}: speed {v} m/s, spin {w} rad/s"
        );
        let p = b.position;
        assert!(
            p.min_element() > 0.0 && p.max_element() < 1.0,
            "body {i} at {p}"
        );
    }
    let [ball, cork, stone] = [&set.bodies[0], &set.bodies[1], &set.bodies[2]];
    // The ball floats with about 5% of its volume under (its lowest 0.03 m), the cork
    // box a quarter of its 0.25 m height: each within a cell (1/24 m) of that, as
    // all-or-nothing cells resolve it.
    let h = scene.h();
    let ball_bottom = level - 0.03;
    assert!(
        (ball.position.y - 0.1 - ball_bottom).abs() < h,
        "ball at {}",
        ball.position.y
    );
    let cork_bottom = level - 0.25 * 0.25;
    assert!(
        (cork.position.y - 0.125 - cork_bottom).abs() < h,
        "cork at {}",
        cork.position.y
    );
    assert!(
        (stone.position.y - 0.07).abs() < 0.01,
        "stone at {}",
        stone.position.y
    );
}

#[test]
fn bodies_from_a_hundredth_to_a_hundred_times_water_settle_in_a_coarse_pool() {
    // The issue's range at its ends, at 16^3 (bodies 2.5-6 cells across): a foam ball and
    // a foam box at 0.01x (the box released at the bottom, where it rises at over 1 m/s
    // and breaches), a block at 100x resting on the floor and a ball at 100x dropped beside
    // the wall. While the push-out stopped the liquid inside a body whole, `eddy run` of
    // this scene (`mg` to 1e-5) threw the breaching box off the surface at 32 m/s (the
    // 0.026 kg box took the reaction to 0.25 kg of liquid), and this test saw it spin at
    // 3.4 rad/s at the end. Two seconds, then every body at rest where Archimedes puts it,
    // the foam ball not spinning (pressure cannot turn a sphere).
    let foam = 0.01 * eddy::sim::DENSITY;
    let dense = 100.0 * eddy::sim::DENSITY;
    let mut foam_box = body(
        BodyShape::Box {
            half_extents: (0.08, 0.05, 0.08),
        },
        (0.75, 0.2, 0.3),
        foam,
    );
    foam_box.rotation_deg = (0.0, 10.0, 5.0);
    let scene = pool(vec![
        body(BodyShape::Sphere { radius: 0.1 }, (0.25, 0.7, 0.25), foam),
        foam_box,
        body(
            BodyShape::Box {
                half_extents: (0.08, 0.06, 0.08),
            },
            (0.3, 0.06, 0.75),
            dense,
        ),
        body(BodyShape::Sphere { radius: 0.07 }, (0.93, 0.6, 0.8), dense),
    ]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let mut fastest = [0.0f64; 4];
    // The foam box's spin over the last half second.
    let mut box_spin = 0.0;
    for frame in 0..120 {
        sim.step_frame().unwrap();
        let bodies = &sim.bodies.as_ref().unwrap().set.bodies;
        for (f, b) in fastest.iter_mut().zip(bodies) {
            *f = f.max(b.velocity().length());
        }
        if frame >= 90 {
            box_spin += bodies[1].omega().length() / 30.0;
        }
    }
    eprintln!("fastest: {fastest:.3?} m/s; the foam box's mean spin over the last 0.5 s {box_spin:.3} rad/s");
    let set = &sim.bodies.as_ref().unwrap().set;
    for (i, b) in set.bodies.iter().enumerate() {
        let (v, w) = (b.velocity().length(), b.omega().length());
        eprintln!("body {i}: at {:.4}, {v:.4} m/s, {w:.4} rad/s", b.position);
        if i == 0 {
            assert!(w < 1e-9, "the foam ball spins at {w} rad/s");
        }
        // The floaters ride what is left of the waves the falling ball made. The foam ball
        // spun at 3.5 rad/s while its faces' grid-made torque turned it.
        assert!(v < 0.25, "body {i}: {v} m/s");
        if i == 1 {
            // The foam box rides what the falling ball left: over the last 0.5 s it spins
            // at 0.4-5.4 rad/s, 2.5 on average, and ends at 1.5-2.6 rad/s by the phase of
            // its tumble. That is the pool's motion (still 0.8 J, 0.5 m/s at 1.2 s), not
            // the box's lightness: the same box at 0.1x and 0.5x water in its place (as
            // an `eddy run` scene) spins at 2.4 and 2.2 rad/s on average over that half
            // second; alone at its waterline in a still pool the foam box comes to rest
            // (4 mm/s and 0.15 rad/s over 1.5-3 s, tilted under 1 degree). The bound
            // catches a spin-up, the 170 rad/s the issue saw.
            assert!(
                box_spin < 3.5,
                "the foam box spins at {box_spin} rad/s on average"
            );
        } else {
            assert!(w < 2.0, "body {i}: {w} rad/s");
        }
        let p = b.position;
        assert!(
            p.min_element() > 0.0 && p.max_element() < 1.0,
            "body {i} at {p}"
        );
    }
    // The foam rises at 1-1.5 m/s; the dense ball falls 0.53 m, 3.2 m/s in free fall.
    assert!(
        fastest[0] < 2.5 && fastest[1] < 2.5 && fastest[3] < 3.6,
        "fastest {fastest:?} m/s"
    );
    // Floating at 0.01x: a hundredth of the ball's volume is a cap 0.012 m deep, and of
    // the box a hundredth of its height; each within a cell of that under the level (0.5 m
    // and what the four displace).
    let h = scene.h();
    let level = 0.5
        + (0.01 * set.bodies[0].volume() + 0.01 * set.bodies[1].volume())
        + set.bodies[2].volume()
        + set.bodies[3].volume();
    let ball_bottom = set.bodies[0].position.y - 0.1;
    let box_bottom = set.bodies[1].position.y - 0.05;
    assert!(
        (ball_bottom - (level - 0.012)).abs() < h,
        "ball bottom at {ball_bottom}"
    );
    assert!(
        (box_bottom - (level - 0.001)).abs() < h,
        "box bottom at {box_bottom}"
    );
    // At 100x: on the floor.
    assert!(
        (set.bodies[2].position.y - 0.06).abs() < 0.01,
        "block at {}",
        set.bodies[2].position
    );
    assert!(
        (set.bodies[3].position.y - 0.07).abs() < 0.01,
        "ball at {}",
        set.bodies[3].position
    );
}

/// A warm plume rising in a closed 1 x 1.5 m slice at 32 x 48, carrying `bodies` up to
/// the ceiling.
fn plume(bodies: &str, coupling: &str) -> Scene {
    let text = format!(
        "(name: \"plume with bodies\", kind: smoke, domain: (1.0, 1.5, 0.02),
          resolution: (32, 48, 1), gravity: (0.0, -9.81, 0.0), frame_dt: 0.02,
          body_coupling: {coupling},
          smoke: (buoyancy: 6.0, vorticity: 0.2, temperature_dissipation: 0.2,
                  sources: [(shape: Sphere(center: (0.5, 0.15, 0.01), radius: 0.08),
                             temperature: 1.0, velocity: (0.0, 1.0, 0.0))]),
          bodies: [{bodies}])"
    );
    Scene::parse(&text, std::path::Path::new("plume.ron")).unwrap()
}

#[test]
fn bodies_near_the_density_of_air_ride_a_plume_to_the_ceiling() {
    // A box at the density of air (the run blew up at 7.7e5 m/s under the weak scheme)
    // and a disc at half of it, carried up by the plume and pressed against the ceiling:
    // 3 s and nothing runs away.
    let rho = eddy::sim::AIR_DENSITY;
    let bodies = format!(
        "(shape: Box(half_extents: (0.1, 0.05, 0.0)), center: (0.5, 0.55, 0.0), density: {rho}),
         (shape: Sphere(radius: 0.06), center: (0.45, 1.0, 0.0), density: {})",
        0.5 * rho
    );
    let scene = plume(&bodies, "strong");
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let mut top = 0.0f64;
    for _ in 0..150 {
        sim.step_frame().unwrap();
        let set = &sim.bodies.as_ref().unwrap().set;
        for b in &set.bodies {
            assert!(b.velocity().length() < 5.0, "speed {}", b.velocity());
            assert!(b.omega().length() < 50.0, "spin {}", b.omega());
        }
        top = top.max(set.bodies[0].position.y);
    }
    // The plume carried the box up most of the way.
    assert!(top > 1.1, "the box rose only to {top}");
}

/// A cube of liquid 0.5 m across floating free in a 24^3 box with no gravity (nothing
/// touches a wall, so nothing outside the liquid and the body pushes on either), moving at
/// `u`, with `bodies` inside it.
fn free_blob(u: (f64, f64, f64), bodies: Vec<BodySpec>) -> Scene {
    Scene {
        name: "free blob".into(),
        resolution: (24, 24, 24),
        gravity: (0.0, 0.0, 0.0),
        fluid: vec![Shape::Box {
            min: (0.25, 0.25, 0.25),
            max: (0.75, 0.75, 0.75),
            velocity: u,
        }],
        bodies,
        frame_dt: 0.01,
        ..Default::default()
    }
}

/// A box of the liquid's density inside a blob moving at `u` with no gravity, moving with
/// it, for `frames` frames: the body must keep the liquid's velocity within 5%, and its
/// surface (0.13 m from the centre at most) must not slip by more than that from spinning.
/// With the body cutting faces (the liquid's default) it keeps 0.5000 m/s and spins at
/// under 1e-4 rad/s over 0.3 s; as whole cells it was 6% slow and spun up to 0.24 rad/s.
fn neutral_body_in_moving_liquid(frames: u32) {
    let u = glam::DVec3::new(0.5, 0.0, 0.25);
    let mut ball = body(
        BodyShape::Box {
            half_extents: (0.1, 0.07, 0.08),
        },
        (0.45, 0.5, 0.48),
        eddy::sim::DENSITY,
    );
    ball.rotation_deg = (10.0, 20.0, 0.0);
    ball.velocity = (u.x, u.y, u.z);
    let scene = free_blob((u.x, u.y, u.z), vec![ball]);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let start = sim.bodies.as_ref().unwrap().set.bodies[0].position;
    for frame in 0..frames {
        sim.step_frame().unwrap();
        let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
        let (v, w) = (b.velocity(), b.omega().length());
        eprintln!("frame {frame}: {v:.4} m/s, {w:.4} rad/s");
        assert!(
            (v - u).length() < 0.05 * u.length() && w * 0.13 < 0.05 * u.length(),
            "frame {frame}: body at {v} m/s, {w} rad/s in liquid moving at {u}"
        );
    }
    let b = &sim.bodies.as_ref().unwrap().set.bodies[0];
    let moved = b.position - start;
    let expect = u * (frames as f64 * scene.frame_dt);
    assert!(
        (moved - expect).length() < 0.05 * expect.length(),
        "moved {moved}, the liquid {expect}"
    );
}

#[test]
fn a_neutrally_buoyant_body_moves_with_a_moving_liquid() {
    neutral_body_in_moving_liquid(10);
}

#[test]
fn a_neutrally_buoyant_body_keeps_moving_with_a_moving_liquid() {
    neutral_body_in_moving_liquid(30);
}

/// Whether cell (i, j) of a smoke slice is inside the grid and FLUID, from its cell types.
fn slice_fluid(sim: &SmokeSimulation) -> impl Fn(isize, isize) -> bool {
    let n = sim.fields.params.n;
    let (nx, ny) = (n[0] as isize, n[1] as isize);
    let types: Vec<u32> = eddy::gpu::read_buffer(&sim.ctx, &sim.fields.cell_type).unwrap();
    move |i, j| (0..nx).contains(&i) && (0..ny).contains(&j) && types[(i + nx * j) as usize] == 1
}

/// How much of each face of a slice (u faces, then v) the air fills: the share of its two
/// cells that are FLUID (a wall face: its one cell's half), times the face's open fraction
/// where bodies or solids cut faces.
fn slice_face_weights(sim: &SmokeSimulation) -> Vec<f64> {
    let n = sim.fields.params.n;
    let (nx, ny) = (n[0] as usize, n[1] as usize);
    let fluid = slice_fluid(sim);
    let open: Vec<f32> = if sim.fields.has_cut_faces() {
        eddy::gpu::read_buffer(&sim.ctx, &sim.fields.open).unwrap()
    } else {
        Vec::new()
    };
    let share = |a: bool, b: bool| 0.5 * (a as u32 + b as u32) as f64;
    let mut w = Vec::with_capacity((nx + 1) * ny + nx * (ny + 1));
    for j in 0..ny as isize {
        for i in 0..=nx as isize {
            w.push(share(fluid(i - 1, j), fluid(i, j)));
        }
    }
    for j in 0..=ny as isize {
        for i in 0..nx as isize {
            w.push(share(fluid(i, j - 1), fluid(i, j)));
        }
    }
    for (w, o) in w.iter_mut().zip(&open) {
        *w *= *o as f64;
    }
    w
}

/// Kinetic energy of the air in a slice (each face weighted by [`slice_face_weights`]) plus
/// the bodies'.
fn slice_energy(sim: &SmokeSimulation) -> f64 {
    let h = sim.scene.h();
    let cell_volume = h * h * sim.scene.domain.2;
    let rho = eddy::sim::AIR_DENSITY;
    let u = sim.read_velocity().unwrap();
    let w = slice_face_weights(sim);
    let e: f64 = w
        .iter()
        .zip(&u)
        .map(|(w, v)| 0.5 * rho * w * (*v as f64).powi(2) * cell_volume)
        .sum();
    let bodies = &sim.bodies.as_ref().unwrap().set.bodies;
    e + bodies
        .iter()
        .map(|b| 0.5 * b.momentum.dot(b.velocity()) + 0.5 * b.angular_momentum.dot(b.omega()))
        .sum::<f64>()
}

#[test]
fn a_body_thrown_through_still_air_never_adds_energy() {
    // Closed box, no gravity, no viscosity: the air and a plate thrown through it only
    // trade energy and lose it to the advection's smoothing. The pressure solve with the
    // body in it is a projection (in the energy's own inner product) and cannot add any;
    // what the plate uncovers joins the air with the plate's velocity there. So: the energy
    // never climbs above where it started, and most of the substeps lose energy. Measured
    // over 60 substeps: with cut faces (the default) the energy rose in 3 and 0 of them
    // (0.6 and 20 kg/m^3), by 3.4e-4 at most; as whole cells in 8 and 10, by up to 2.2%
    // (a cell the plate uncovers joins the air whole). Both are held to the same bounds.
    for (rho, cut) in [(0.6, true), (20.0, true), (0.6, false), (20.0, false)] {
        let mut plate = rect((0.35, 0.75), (0.04, 0.2), rho);
        plate.velocity = (1.0, 0.3, 0.0);
        plate.angular_velocity = (0.0, 0.0, 2.0);
        let mut scene = air(vec![plate], 0.0);
        scene.smoke.vorticity = 0.0;
        scene.body_cut_faces = Some(cut);
        let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        let dt = 0.004;
        sim.substep(dt, SmokeStage::Tracers).unwrap();
        let first = slice_energy(&sim);
        let mut last = first;
        let mut worst = 0.0f64;
        let mut rises = 0;
        let steps = 60;
        for step in 0..steps {
            sim.substep(dt, SmokeStage::Tracers).unwrap();
            let e = slice_energy(&sim);
            worst = worst.max(e / last - 1.0);
            rises += (e > last) as u32;
            assert!(
                e <= first * (1.0 + 1e-4),
                "{rho} kg/m^3, substep {step}: energy {e:e} J, {first:e} J at the start"
            );
            last = e;
        }
        eprintln!(
            "{rho} kg/m^3, cut faces {cut}: {first:e} J -> {last:e} J, {rises} of {steps} \
             substeps rose, the largest by {worst:e}"
        );
        assert!(
            rises < steps / 4,
            "{rho}: the energy rose in {rises} of {steps} substeps"
        );
        assert!(
            last < 0.99 * first,
            "{rho}: no energy lost ({first} -> {last})"
        );
    }
}

#[test]
fn air_fills_what_a_body_uncovers_at_the_body_s_velocity() {
    // A plate thrown and spinning through still air, cutting faces (the default): the part
    // of a face it left in a substep joins the air at the plate's velocity there, against
    // the f64 reference (the faces' velocities carry over between the smoke's substeps).
    let mut plate = rect((0.35, 0.75), (0.04, 0.2), 20.0);
    plate.velocity = (1.0, 0.3, 0.0);
    plate.angular_velocity = (0.0, 0.0, 2.0);
    let scene = air(vec![plate], 0.0);
    assert!(scene.bodies_cut_faces());
    let ctx = common::gpu();
    let mut sim = SmokeSimulation::new(ctx.clone(), &scene).unwrap();
    let dt = 0.004;
    for _ in 0..3 {
        sim.substep(dt, SmokeStage::Tracers).unwrap();
    }
    let read = |b: &wgpu::Buffer| -> Vec<u32> { eddy::gpu::read_buffer(&ctx, b).unwrap() };
    let last_cover = read(&sim.bodies.as_ref().unwrap().coupling.cover);
    let last_open: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.fields.open).unwrap();
    let before = sim.read_velocity().unwrap();
    sim.substep(dt, SmokeStage::Mark).unwrap();
    let open: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.fields.open).unwrap();
    let after = sim.read_velocity().unwrap();
    let gpu: Vec<GpuBody> =
        eddy::gpu::read_buffer(&ctx, &sim.bodies.as_ref().unwrap().coupling.bodies).unwrap();
    let v = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
    let bodies: Vec<eddy::reference::smoke::MovingSolid> = ref_bodies(&gpu, 1)
        .into_iter()
        .zip(&gpu)
        .map(|(body, b)| eddy::reference::smoke::MovingSolid {
            body,
            velocity: v(b.vel),
            omega: v(b.omega),
        })
        .collect();
    let g = Grid {
        nx: 32,
        ny: 48,
        nz: 1,
        h: scene.h(),
    };
    let mut expect = eddy::reference::MacField::from_faces(&g, &before);
    eddy::reference::smoke::uncover(&g, &bodies, (&last_cover, &last_open), &open, &mut expect);
    let expect: Vec<f64> = [&expect.u, &expect.v, &expect.w]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    let worst = after
        .iter()
        .zip(&expect)
        .map(|(a, b)| (*a as f64 - b).abs())
        .fold(0.0, f64::max);
    let changed = after.iter().zip(&before).filter(|(a, b)| a != b).count();
    eprintln!("{changed} faces took the plate's velocity; worst difference {worst:e} m/s");
    assert!(
        worst < 1e-5,
        "the blend differs from the f64 one by {worst} m/s"
    );
    assert!(changed >= 3, "only {changed} faces uncovered");
}

#[test]
fn no_fluid_cell_is_left_closed_in_on_every_side() {
    // A corridor of 5 cells walled in by static solids: the two rounds of closing dead
    // ends take its ends, then the next two, and leave the middle cell with no fluid
    // neighbour: a row of A with a zero diagonal, which the preconditioners divide by (a
    // disc wedged into a corner of the box at 0.5x air stalled every preconditioner so).
    // It must become solid too.
    let h = 1.0 / 32.0;
    let cells = |i0: usize, j0: usize, i1: usize, j1: usize| Shape::Box {
        min: (i0 as f64 * h, j0 as f64 * h, 0.0),
        max: ((i1 + 1) as f64 * h, (j1 + 1) as f64 * h, 1.0),
        velocity: (0.0, 0.0, 0.0),
    };
    let mut scene = air(vec![rect((0.7, 1.0), (0.1, 0.1), 2.0)], 0.0);
    scene.solids = vec![
        cells(9, 19, 15, 19),
        cells(9, 21, 15, 21),
        cells(9, 20, 9, 20),
        cells(15, 20, 15, 20),
    ];
    let mut sim = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    sim.substep(0.005, SmokeStage::Project).unwrap();
    let fluid = slice_fluid(&sim);
    for j in 0..48 {
        for i in 0..32 {
            if fluid(i, j) {
                assert!(
                    fluid(i - 1, j) || fluid(i + 1, j) || fluid(i, j - 1) || fluid(i, j + 1),
                    "FLUID cell ({i}, {j}) has no fluid neighbour"
                );
            }
        }
    }
    assert!(!fluid(12, 20), "the corridor's middle is still fluid");
    let report = sim.last_solve.as_ref().unwrap();
    assert!(report.residual <= scene.pressure.tolerance, "{report:?}");
}

#[test]
fn a_heavy_box_resting_on_the_floor_of_a_still_pool_stays_put() {
    // Resting contact under fluid pressure: placed on the floor of a still pool, a stone
    // box (2.5x water) must not creep. Goal: under 0.01 cell per second; measured 0.
    let h = 1.0 / 16.0;
    let stone = body(
        BodyShape::Box {
            half_extents: (0.1875, 0.125, 0.1875),
        },
        (0.5, 0.1251, 0.5),
        2500.0,
    );
    let mut scene = pool(vec![stone]);
    scene.frame_dt = 1.0 / 60.0;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let at = |sim: &Simulation| sim.bodies.as_ref().unwrap().set.bodies[0].position;
    for _ in 0..30 {
        sim.step_frame().unwrap();
    }
    let start = at(&sim);
    let mut path = 0.0;
    let mut last = start;
    for _ in 0..60 {
        sim.step_frame().unwrap();
        path += (at(&sim) - last).length();
        last = at(&sim);
    }
    let cells_per_s = path / h; // over 1 s
    assert!(
        cells_per_s < 0.01,
        "the resting box moved {cells_per_s} cells/s (from {start} to {last})"
    );
    assert!(
        (last.y - 0.125).abs() < 0.01 * h + 1e-4,
        "resting at y = {}",
        last.y
    );
}

/// The liquid's mean kinetic energy over 0.5-1.5 s and over 2-3 s of a box at half the
/// water's density set tilted at its waterline (roll 5 degrees, yaw 10), centred at `at`
/// in the 16^3 pool (frames of 0.01 s), and the box's mean spin over the same windows.
fn rocking(half_extents: (f64, f64, f64), at: (f64, f64, f64)) -> ([f64; 2], [f64; 2]) {
    let mut b = body(BodyShape::Box { half_extents }, at, 500.0);
    b.rotation_deg = (0.0, 10.0, 5.0);
    let mut sim = Simulation::new(common::gpu(), &pool(vec![b])).unwrap();
    let (mut energy, mut spin) = ([0.0; 2], [0.0; 2]);
    for frame in 0..300 {
        let st = sim.step_frame().unwrap();
        let w = sim.bodies.as_ref().unwrap().set.bodies[0].omega().length();
        let window = match frame {
            50..150 => 0,
            200..300 => 1,
            _ => continue,
        };
        energy[window] += st.kinetic_energy / 100.0;
        spin[window] += w / 100.0;
    }
    (energy, spin)
}

#[test]
fn a_tilted_floating_box_calms_a_still_pool() {
    // A box 6 x 4 x 6 cells at 0.5x water, tilted at its waterline: it rocks, the waves it
    // makes spread and FLIP damps them a little; nothing feeds the motion, so the liquid
    // must hold less energy in its third second than in its first, and the box spin less.
    // Measured: 0.0374 J over 0.5-1.5 s, 0.0247 over 2-3 s; 0.135 and 0.112 rad/s. A box
    // 1.6 cells thin (half extents (0.08, 0.05, 0.08), under `THIN_BODY_CELLS`, which eddy
    // warns about) centred at (0.75, 0.5, 0.3) fails it: 0.0052 J, then 0.0112, its spin
    // 0.66 and then 0.87 rad/s (at three other places it calmed the pool as this box does).
    let (energy, spin) = rocking((0.1875, 0.125, 0.1875), (0.5, 0.5, 0.5));
    eprintln!("liquid kinetic energy {energy:.4?} J, the box's spin {spin:.3?} rad/s");
    assert!(
        energy[1] < 0.8 * energy[0],
        "the liquid's kinetic energy went from {} J to {} J",
        energy[0],
        energy[1]
    );
    assert!(
        spin[1] < spin[0],
        "the box's spin went from {} to {} rad/s",
        spin[0],
        spin[1]
    );
}

/// The first body's mean height over substeps 50-99 of `scene` (the floating validation's
/// substep, src/validate/floating.rs): where it settles.
fn settled_height(scene: &Scene) -> f64 {
    let mut sim = Simulation::new(common::gpu(), scene).unwrap();
    let mut ys = Vec::new();
    for i in 0..100 {
        sim.substep(eddy::validate::floating::DT, Stage::Advect)
            .unwrap();
        if i >= 50 {
            ys.push(sim.bodies.as_ref().unwrap().set.bodies[0].position.y);
        }
    }
    ys.iter().sum::<f64>() / ys.len() as f64
}

#[test]
fn boxes_float_at_their_density_ratio_the_issues_three() {
    // Archimedes: a floating box's submerged fraction of its height equals its density
    // over the liquid's. A beach ball's 0.05, a cork's 0.25 and wood's 0.6, each in a 16^3
    // tank (the box 4 cells tall), 100 substeps, the fraction from the mean height over
    // the second half (src/validate/floating.rs), within 0.03 of the ratio. The bodies cut
    // faces: measured 0.029, 0.257 and 0.610 (the beach ball's draft is a fifth of a cell),
    // and errors of 0.005-0.011 at 0.3, 0.5 and 0.7 (eddy validate) where whole cells gave
    // 0.008-0.089.
    use eddy::validate::floating::{scene, submerged_fraction};
    for ratio in [0.05, 0.25, 0.6] {
        let s = scene(16, ratio * eddy::sim::DENSITY);
        let frac = submerged_fraction(settled_height(&s), s.bodies[0].center.1);
        eprintln!("ratio {ratio}: submerged {frac:.4}");
        assert!(
            (frac - ratio).abs() < 0.03,
            "ratio {ratio}: submerged fraction {frac:.4}"
        );
    }
}

#[test]
fn a_body_pushed_through_a_free_blob_keeps_its_momentum() {
    pushed_through_a_free_blob(0.0);
}

#[test]
fn a_body_pushed_through_a_viscous_blob_keeps_its_momentum() {
    // The same with a viscous liquid (nu dt / h^2 = 0.06 per substep): the viscous stress
    // moves momentum between the body and the liquid too (src/sim/bodies/viscous.rs), in
    // the same solve, so the total stays put and the body slows faster (it keeps 7-9% of
    // its momentum after 0.15 s, against 35-39% inviscid). Largest drift over the 15
    // frames at 24^3: the tilted box 0.45%, the axis-aligned one 0.24%, the sphere 0.31%.
    // Each face's mass in the viscosity step is the liquid's share of it, as the pressure
    // and G2P count it (sim/core/face_kinds.wgsl `face_mass`): with every face a whole one
    // the liquid took 4% less than the tilted box gave it in the first frame.
    pushed_through_a_free_blob(0.01);
}

fn pushed_through_a_free_blob(viscosity: f64) {
    // No gravity, a blob of liquid floating free (no wall touches it) and a 0.5x body thrown
    // through it: the pressure only moves momentum between the liquid and the body, so
    // their total should stay put while the body slows and the liquid takes up what it
    // loses. The issue asks for 1%, the bound in every frame. Measured over 15 frames
    // (0.15 s), the largest drift: a tilted box 0.15%, the same box on the grid's axes
    // 0.35%, a sphere 0.16% (at 32^3: 0.09%, 0.27% and 0.30%). Without a body the blob's
    // momentum stays within 0.07%. Four things each cost up to several percent, and each
    // is what this test caught (docs/guide/07-rigid-bodies.md, G2P near bodies):
    // - G2P weighing each face's change near the bodies by the solve's liquid over the
    //   particles' own (coupling.wgsl `gather_scale_faces`): without it 2.7%, 9.3%, 8.2%;
    // - by the free surface and in the AIR pockets a body's cut cells leave, only ever
    //   scaled down: left at 1, the particles crowding a face the body mostly covers took
    //   far more than the solve moved there (the sphere 1.1%, the box 1.0% at 32^3);
    // - the volume correction moving the particles after G2P, not before: moved first,
    //   they gathered the change away from where P2G weighed them (the liquid took 3% less
    //   than the box lost in the first substep);
    // - a frame's last push-out taken off the bodies as the frame ends
    //   (`Bodies::settle_push`): left to the next substep, each frame ended with 1-2% of
    //   the body's momentum counted twice.
    // The kinetic energy of liquid and body never rises from one frame to the next.
    let bx = BodyShape::Box {
        half_extents: (0.08, 0.06, 0.07),
    };
    let shapes = [
        ("tilted box", bx.clone(), (0.0, 15.0, 10.0)),
        ("axis-aligned box", bx, (0.0, 0.0, 0.0)),
        (
            "sphere",
            BodyShape::Sphere { radius: 0.08 },
            (0.0, 0.0, 0.0),
        ),
    ];
    for (name, shape, rotation) in shapes {
        let mut bx = body(shape, (0.42, 0.5, 0.5), 0.5 * eddy::sim::DENSITY);
        bx.rotation_deg = rotation;
        bx.velocity = (0.6, 0.1, 0.0);
        let mut scene = free_blob((0.0, 0.0, 0.0), vec![bx]);
        scene.viscosity = viscosity;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let (_, vel) = sim.read_particles().unwrap();
        // The liquid's mass per particle: the blob less the body, over the particles.
        let body0 = &sim.bodies.as_ref().unwrap().set.bodies[0];
        let mass = eddy::sim::DENSITY * (0.125 - body0.volume()) / vel.len() as f64;
        // The momenta of the liquid and the body, and their kinetic energy together (the
        // `exchange` validation case's measure).
        let momentum = |sim: &Simulation| eddy::validate::exchange::totals(sim, mass).unwrap();
        let (l0, b0, e0) = momentum(&sim);
        let start = l0 + b0;
        let mut last_energy = e0;
        for frame in 0..15 {
            sim.step_frame().unwrap();
            let (l, b, e) = momentum(&sim);
            let drift = (l + b - start).length() / start.length();
            eprintln!(
                "{name}, frame {frame}: liquid {l:.4}, body {b:.4}, drift {drift:.2e}, energy {:.4}",
                e / e0
            );
            // Inviscid, but the pressure only trades energy and FLIP's transfers lose some:
            // it never grows.
            assert!(
                e <= last_energy * (1.0 + 1e-6),
                "{name}, frame {frame}: the energy rose from {last_energy} J to {e} J"
            );
            last_energy = e;
            if frame == 0 && name == "sphere" && viscosity == 0.0 {
                // Set off at once in still liquid, the 0.5x sphere shares its momentum with
                // its added mass, half the displaced liquid's: the speed halves and so does
                // the energy (rho_b / (rho_b + rho_f / 2) = 1/2). Measured 0.479.
                assert!((e / e0 - 0.5).abs() < 0.05, "sphere: energy {e} of {e0}");
            }
            assert!(
                drift < 0.01,
                "{name}, frame {frame}: total momentum drifted by {drift:e}"
            );
            if frame == 14 {
                assert!(
                    b.x < 0.8 * b0.x,
                    "{name}: the body kept its momentum ({b0} -> {b}): no exchange"
                );
            }
        }
    }
}

#[test]
fn prisms_float_at_their_density_ratio_in_a_liquid_slice() {
    // Archimedes in a one-cell-deep liquid slice: the same boxes as above as prisms across
    // the slice's depth, 32 x 32 x 1 (the box 8 cells tall), within 0.03 of the ratio.
    // Measured: 0.0605, 0.2695 and 0.6275 for 0.05, 0.25 and 0.6 (at 16 x 16 x 1: 0.041,
    // 0.252 and 0.636, the last outside the bound).
    use eddy::validate::floating::{release_height, scene, HALF, POOL};
    let n = 32u32;
    let depth = 1.0 / n as f64;
    for ratio in [0.05, 0.25, 0.6] {
        let mut s = scene(n, ratio * eddy::sim::DENSITY);
        s.resolution = (n, n, 1);
        s.domain = (1.0, 1.0, depth);
        s.fluid = vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, POOL, depth),
            velocity: (0.0, 0.0, 0.0),
        }];
        s.bodies[0].center = (0.5, release_height(ratio), 0.5 * depth);
        s.bodies[0].shape = BodyShape::Box {
            half_extents: (HALF[0], HALF[1], 0.5 * depth),
        };
        let start = s.bodies[0].center.1;
        let y = settled_height(&s);
        // The level from the conserved liquid: the pool less what the prism displaced at its
        // release, over the slice's width less the prism's (per unit of depth).
        let (half, width) = (HALF[1], 2.0 * HALF[0]);
        let liquid = POOL - width * (POOL - (start - half)).clamp(0.0, 2.0 * half);
        let bottom = y - half;
        let level = (liquid - width * bottom) / (1.0 - width);
        let frac = ((level - bottom) / (2.0 * half)).clamp(0.0, 1.0);
        eprintln!("ratio {ratio}: submerged {frac:.4}");
        assert!(
            (frac - ratio).abs() < 0.03,
            "ratio {ratio}: submerged fraction {frac:.4}"
        );
    }
}

/// The push-out (coupling.wgsl, `push_count` and `push_out`) against the f64 reference on
/// 5000 particles with random velocities, many inside the bodies: a tilted box at 0.01x
/// water (its particles' approach mostly taken up by the box, which moves with them), a
/// sphere at 2x and a fixed box (the approach stopped whole). The new positions,
/// velocities and each body's momentum sums agree to f32 round-off, and the light box's
/// sums are a small part of what stopping its particles whole would have given.
#[test]
fn the_push_out_weighs_the_particles_against_the_body_like_the_f64_reference() {
    use eddy::reference::bodies::{push_is_close, push_out, PushBody, PushSettings};
    use eddy::sim::bodies::coupling::BodyCoupling;
    let mut light = body(
        BodyShape::Box {
            half_extents: (0.15, 0.08, 0.11),
        },
        (0.35, 0.5, 0.45),
        10.0,
    );
    light.rotation_deg = (15.0, -25.0, 35.0);
    light.velocity = (0.2, -0.3, 0.1);
    light.angular_velocity = (1.0, 0.5, -2.0);
    let mut stone = body(
        BodyShape::Sphere { radius: 0.12 },
        (0.72, 0.45, 0.6),
        2000.0,
    );
    stone.velocity = (-0.4, 0.1, 0.2);
    let mut fixed = body(
        BodyShape::Box {
            half_extents: (0.08, 0.1, 0.08),
        },
        (0.5, 0.2, 0.8),
        1000.0,
    );
    fixed.motion = BodyMotion::Fixed;
    let scene = pool(vec![light, stone, fixed]);
    let ctx = common::gpu();
    let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
    let (old_pos, _) = sim.read_particles().unwrap();
    let b = sim.bodies.as_ref().unwrap();
    let gpu = eddy::sim::bodies::coupling::GpuBody::from_set(&b.set);
    let refs = ref_bodies(&gpu, 3);
    let f = |a: [f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
    let bodies: Vec<PushBody> = (0..3)
        .map(|k| PushBody {
            body: refs[k],
            vel: f(gpu[k].vel),
            omega: f(gpu[k].omega),
            inverse: gpu[k].inverse.map(|v| v as f64),
        })
        .collect();
    let settings = PushSettings {
        margin: b.coupling.params.margin as f64,
        particle_mass: b.coupling.params.particle_mass as f64,
        slice: false,
        domain: [1.0; 3],
    };
    assert!(settings.particle_mass > 0.0);
    // Random particles around the bodies, none whose outcome hangs on a near tie; the
    // rest of the seeded count parked in a corner, outside every body.
    let mut rng = eddy::scene::SplitMix64(7);
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let n = old_pos.len();
    let mut pos = vec![[0.04, 0.04, 0.04]; n];
    let mut vel = vec![[0.0; 3]; n];
    let mut placed = 0;
    while placed < 5000.min(n) {
        let x = [
            0.15 + 0.75 * unit(),
            0.05 + 0.7 * unit(),
            0.25 + 0.7 * unit(),
        ];
        if push_is_close(&bodies, &settings, x, 1e-4) {
            continue;
        }
        pos[placed] = x;
        vel[placed] = [2.0 * unit() - 1.0, 2.0 * unit() - 1.0, 2.0 * unit() - 1.0];
        placed += 1;
    }
    let to_f32 = |v: &[[f64; 3]]| -> Vec<[f32; 4]> {
        v.iter()
            .map(|a| [a[0] as f32, a[1] as f32, a[2] as f32, 0.0])
            .collect()
    };
    // The reference starts from the f32 values the GPU gets.
    let (p32, v32) = (to_f32(&pos), to_f32(&vel));
    let back = |v: &[[f32; 4]]| -> Vec<[f64; 3]> {
        v.iter()
            .map(|a| [a[0] as f64, a[1] as f64, a[2] as f64])
            .collect()
    };
    let start = back(&p32);
    let (mut rpos, mut rvel) = (start.clone(), back(&v32));
    let sums = push_out(&bodies, &settings, &mut rpos, &mut rvel);
    let inside: Vec<usize> = bodies
        .iter()
        .map(|p| start.iter().filter(|&&x| p.body.contains(x, false)).count())
        .collect();
    eprintln!("particles inside each body: {inside:?}");
    assert!(inside.iter().all(|&c| c >= 40), "{inside:?}");
    sim.upload_particles(&p32, &v32).unwrap();
    {
        let b = sim.bodies.as_mut().unwrap();
        b.coupling.set_particles(n as u32);
        b.coupling.push_queue(&ctx, &b.set);
    }
    let (gpos, gvel) = sim.read_particles().unwrap();
    let mut worst: (f64, f64) = (0.0, 0.0);
    for i in 0..n {
        for a in 0..3 {
            worst.0 = worst.0.max((gpos[i][a] as f64 - rpos[i][a]).abs());
            worst.1 = worst.1.max((gvel[i][a] as f64 - rvel[i][a]).abs());
        }
    }
    eprintln!(
        "largest differences: position {:.2e} m, velocity {:.2e} m/s",
        worst.0, worst.1
    );
    assert!(worst.0 < 1e-5 && worst.1 < 1e-4, "{worst:?}");
    let b = sim.bodies.as_ref().unwrap();
    let words: Vec<u32> =
        eddy::gpu::read_buffer(&sim.ctx, b.coupling.push_sums().unwrap()).unwrap();
    let gsums = BodyCoupling::decode_push(&words, 3);
    for k in 0..3 {
        let (p, l) = gsums[k];
        let (rp, rl) = sums[k];
        let scale = rp.iter().map(|v| v.abs()).fold(1e-6, f64::max);
        let lscale = rl.iter().map(|v| v.abs()).fold(1e-7, f64::max);
        eprintln!("body {k}: momentum {p:.5} (reference {rp:.5?}), angular {l:.6}");
        // Each particle's share is rounded to the sums' fixed point (2^-24 N s).
        let unit = inside[k] as f64 / 16777216.0;
        for a in 0..3 {
            assert!(
                (p[a] - rp[a]).abs() < 1e-4 * scale + unit,
                "body {k}: {p} vs {rp:?}"
            );
            assert!(
                (l[a] - rl[a]).abs() < 1e-4 * lscale + unit,
                "body {k}: {l} vs {rl:?}"
            );
        }
    }
    // Against stopping every particle whole (as for bodies that cannot move): the light
    // box takes a small part of that, the 2x sphere most of it.
    let mut whole = bodies.clone();
    for b in &mut whole {
        b.inverse = [0.0; 4];
    }
    let (mut wpos, mut wvel) = (start.clone(), back(&v32));
    let stopped = push_out(&whole, &settings, &mut wpos, &mut wvel);
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let part = |k: usize| norm(sums[k].0) / norm(stopped[k].0);
    eprintln!(
        "of a whole stop: light box {:.3}, sphere {:.3}",
        part(0),
        part(1)
    );
    assert!(part(0) > 0.0 && part(0) < 0.3, "light box: {}", part(0));
    assert!(part(1) > 0.6 && part(1) < 1.0, "sphere: {}", part(1));
}

#[test]
fn the_push_out_s_reaction_on_the_gpu_takes_what_the_host_takes() {
    // Three bodies (a tilted box, a sphere, a fixed box): push sums of both signs and of
    // several sizes, encoded as the push-out writes them; the GPU's new velocity and spin
    // of each body, in both bodies buffers, against the host's f64 bookkeeping: momentum
    // less the push, over the mass, and the world inverse inertia times the angular
    // momentum less the push's. The fixed body keeps its velocity.
    use eddy::sim::bodies::coupling::BodyCoupling;
    use eddy::sim::bodies::push::PushReaction;
    use eddy::sim::bodies::BodySet;
    use glam::DVec3;
    let mut tilted = body(
        BodyShape::Box {
            half_extents: (0.1, 0.05, 0.07),
        },
        (0.4, 0.5, 0.5),
        300.0,
    );
    tilted.rotation_deg = (20.0, 35.0, 10.0);
    tilted.velocity = (0.3, -0.2, 0.1);
    tilted.angular_velocity = (1.0, -2.0, 0.5);
    let mut sphere = body(BodyShape::Sphere { radius: 0.06 }, (0.7, 0.4, 0.3), 900.0);
    sphere.velocity = (-0.1, 0.05, 0.2);
    let mut fixed = body(
        BodyShape::Box {
            half_extents: (0.05, 0.05, 0.05),
        },
        (0.2, 0.2, 0.2),
        1000.0,
    );
    fixed.motion = eddy::scene::BodyMotion::Fixed;
    let mut scene = pool(vec![tilted, sphere, fixed]);
    scene.fluid.clear();
    let set = BodySet::from_scene(&scene).unwrap();
    let pushes = [
        (
            DVec3::new(1.5e-3, -2.0e-4, 7.0e-5),
            DVec3::new(-3.0e-5, 1.0e-5, 2.0e-6),
        ),
        (
            DVec3::new(-4.0e-2, 3.0e-3, -1.0e-6),
            DVec3::new(2.0e-7, -5.0e-6, 1.0e-5),
        ),
        (DVec3::new(1.0, 1.0, 1.0), DVec3::new(1.0, 1.0, 1.0)),
    ];
    let unit = 16777216.0f64;
    let mut words = vec![0u32; eddy::sim::bodies::coupling::PUSH_WORDS as usize];
    for (k, (p, l)) in pushes.iter().enumerate() {
        for (a, v) in [p.x, p.y, p.z, l.x, l.y, l.z].into_iter().enumerate() {
            let fixed = (v * unit).round() as i64 as u64;
            words[2 * (6 * k + a)] = fixed as u32;
            words[2 * (6 * k + a) + 1] = (fixed >> 32) as u32;
        }
    }
    // The host decodes what it encoded.
    let back = BodyCoupling::decode_push(&words, 3);
    assert!((back[1].0 - pushes[1].0).length() < 1e-7);
    let ctx = common::gpu();
    let sums = eddy::gpu::storage_buffer(&ctx.device, "test::push_sums", words.len() as u64 * 4);
    ctx.queue
        .write_buffer(&sums, 0, bytemuck::cast_slice(&words));
    let vec4 = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32, 0.0];
    // coupling.wgsl's Body (8 vec4: velocity at 5, spin at 6) and strong.wgsl's CoupleBody
    // (9 vec4: velocity at 1, spin at 2), the rest filled with markers left alone.
    let mut gpu_bodies = vec![[9.0f32; 4]; 8 * 3];
    let mut couple = vec![[7.0f32; 4]; 9 * 3];
    for (k, b) in set.bodies.iter().enumerate() {
        gpu_bodies[8 * k + 5] = vec4(b.velocity());
        gpu_bodies[8 * k + 6] = vec4(b.omega());
        couple[9 * k + 1] = vec4(b.velocity());
        couple[9 * k + 2] = vec4(b.omega());
    }
    let bodies_buf = eddy::gpu::storage_buffer(&ctx.device, "test::bodies", 8 * 3 * 16);
    let couple_buf = eddy::gpu::storage_buffer(&ctx.device, "test::couple", 9 * 3 * 16);
    ctx.queue
        .write_buffer(&bodies_buf, 0, bytemuck::cast_slice(&gpu_bodies));
    ctx.queue
        .write_buffer(&couple_buf, 0, bytemuck::cast_slice(&couple));
    let mut reaction = PushReaction::new(&ctx.device, &sums, &bodies_buf, &couple_buf);
    reaction.upload(&ctx.queue, &set);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    reaction.record(&mut enc);
    ctx.submit(enc.finish());
    let got_b: Vec<[f32; 4]> = eddy::gpu::read_buffer(&ctx, &bodies_buf).unwrap();
    let got_c: Vec<[f32; 4]> = eddy::gpu::read_buffer(&ctx, &couple_buf).unwrap();
    for (k, b) in set.bodies.iter().enumerate() {
        let (mut v, mut w) = (b.velocity(), b.omega());
        if b.is_dynamic() {
            // What the host takes off: the sums as the readback brings them.
            let (p, l) = back[k];
            let mut host = b.clone();
            host.momentum -= p;
            host.angular_momentum -= l;
            v = host.velocity();
            w = host.omega();
        }
        // The velocity and the spin in each buffer.
        let slots = [
            (got_b[8 * k + 5], v),
            (got_b[8 * k + 6], w),
            (got_c[9 * k + 1], v),
            (got_c[9 * k + 2], w),
        ];
        for (g, want) in slots {
            let g = DVec3::new(g[0] as f64, g[1] as f64, g[2] as f64);
            assert!(
                (g - want).length() <= 1e-5 * want.length().max(1e-3),
                "body {k}: {g} against {want}"
            );
        }
        assert_eq!(got_b[8 * k], [9.0; 4], "a marker moved");
        assert_eq!(got_c[9 * k + 3], [7.0; 4], "a marker moved");
    }
}

/// The x-momentum of the air on the faces the projection moves (those between two FLUID
/// cells, each weighted by its open fraction), kg m/s.
fn projected_air_momentum(sim: &SmokeSimulation) -> f64 {
    let n = sim.fields.params.n;
    let (nx, ny) = (n[0] as isize, n[1] as isize);
    let fluid = slice_fluid(sim);
    let open: Vec<f32> = eddy::gpu::read_buffer(&sim.ctx, &sim.fields.open).unwrap();
    assert!(sim.fields.has_cut_faces());
    let h = sim.scene.h();
    let volume = h * h * sim.scene.domain.2;
    let u = sim.read_velocity().unwrap();
    let mut m = 0.0;
    for j in 0..ny {
        for i in 1..nx {
            let f = (i + (nx + 1) * j) as usize;
            if fluid(i - 1, j) && fluid(i, j) {
                m += open[f] as f64 * 1.2 * u[f] as f64 * volume;
            }
        }
    }
    m
}

/// The strong coupling's momentum balance, substep by substep: what the projection takes
/// from the air's momentum (on the faces it moves, weighted by their open fractions) less
/// the side walls' push is the pressure's impulse on the body, to f32 round-off, for a
/// body that cuts faces at an angle. (The substep as a whole conserves less: the smoke's
/// semi-Lagrangian advection is not conservative, `a_moving_body_gives_the_air_the_momentum_it_loses`.)
#[test]
fn the_projection_trades_momentum_with_a_body_exactly_in_air() {
    let mut plate = rect((0.35, 0.75), (0.04, 0.2), 20.0);
    plate.velocity = (1.0, 0.0, 0.0);
    plate.rotation_deg = (0.0, 0.0, 20.0);
    let scene = air(vec![plate], 0.0);
    let mut b = SmokeSimulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.004;
    let mut worst: f64 = 0.0;
    let mut smallest = f64::INFINITY;
    for step in 0..8 {
        // A twin stopped before the pressure stage (the same bits as `b` up to there).
        let mut a = SmokeSimulation::new(common::gpu(), &scene).unwrap();
        for _ in 0..step {
            a.substep(dt, SmokeStage::Tracers).unwrap();
        }
        a.substep(dt, SmokeStage::Boundary).unwrap();
        let before = projected_air_momentum(&a);
        let body_before = smoke_state(&b, 0).momentum.x;
        b.substep(dt, SmokeStage::Tracers).unwrap();
        let air = projected_air_momentum(&b) - before;
        let walls = air_momentum(&b, dt).1 * dt;
        let body = smoke_state(&b, 0);
        let impulse = body.fluid_force.x * dt;
        eprintln!("substep {step}: air {air:e}, walls {walls:e}, body {impulse:e} N s");
        let change = body.momentum.x - body_before;
        assert!(
            (change / impulse - 1.0).abs() < 1e-9,
            "{change:e}: something else pushed it"
        );
        worst = worst.max(((air - walls) / -impulse - 1.0).abs());
        smallest = smallest.min(impulse.abs());
    }
    eprintln!("out of balance by {worst:e} of the body's impulse at most");
    assert!(
        smallest > 1e-5,
        "the air barely pushed the plate: {smallest:e} N s"
    );
    assert!(
        worst < 1e-5,
        "momentum out of balance by {worst:e} of the body's impulse"
    );
}

/// The same balance in a closed box full of liquid without gravity, a sphere pushed
/// through it (3D, faces cut by the body).
#[test]
fn the_projection_trades_momentum_with_a_body_exactly_in_liquid() {
    use eddy::sim::liquid::views::Field;
    let mut ball = body(BodyShape::Sphere { radius: 0.17 }, (0.4, 0.5, 0.5), 400.0);
    ball.velocity = (0.8, 0.0, 0.0);
    let mut scene = pool(vec![ball]);
    scene.fluid = vec![Shape::Box {
        min: (0.0, 0.0, 0.0),
        max: (1.0, 1.0, 1.0),
        velocity: (0.0, 0.0, 0.0),
    }];
    scene.gravity = (0.0, 0.0, 0.0);
    scene.validate().unwrap();
    let rho = eddy::sim::DENSITY;
    let h = scene.h();
    // The x-momentum on the faces between two FLUID cells (weighted by their open
    // fractions), and the x-walls' impulse over dt from the pressure beside them.
    let measure = |sim: &Simulation, dt: f64| -> (f64, f64) {
        let [nx, ny, nz] = sim.fields.params.n.map(|v| v as usize);
        let types = sim.read_field(Field::CellType).unwrap().values;
        let u = sim.read_field(Field::U).unwrap().values;
        let p = sim.read_field(Field::Pressure).unwrap().values;
        assert!(sim.fields.has_cut_faces());
        let open: Vec<f32> = eddy::gpu::read_buffer(&sim.ctx, &sim.fields.open).unwrap();
        let fluid = |i: usize, j: usize, k: usize| types[i + nx * (j + ny * k)] == 1.0;
        let (mut m, mut walls) = (0.0, 0.0);
        for k in 0..nz {
            for j in 0..ny {
                for i in 1..nx {
                    let f = i + (nx + 1) * (j + ny * k);
                    if fluid(i - 1, j, k) && fluid(i, j, k) {
                        m += open[f] as f64 * rho * u[f] as f64 * h * h * h;
                    }
                }
                let at = |i: usize| p[i + nx * (j + ny * k)] as f64;
                if fluid(0, j, k) && fluid(nx - 1, j, k) {
                    walls += (at(0) - at(nx - 1)) * h * h * dt;
                }
            }
        }
        (m, walls)
    };
    let mut b = Simulation::new(common::gpu(), &scene).unwrap();
    let dt = 0.004;
    let mut worst: f64 = 0.0;
    let mut smallest = f64::INFINITY;
    for step in 0..5 {
        let mut a = Simulation::new(common::gpu(), &scene).unwrap();
        for _ in 0..step {
            a.substep(dt, Stage::Advect).unwrap();
        }
        a.substep(dt, Stage::Boundary).unwrap();
        let before = measure(&a, dt).0;
        let body_before = b.bodies.as_ref().unwrap().set.bodies[0].momentum.x;
        b.substep(dt, Stage::Advect).unwrap();
        let (after, walls) = measure(&b, dt);
        let body = &b.bodies.as_ref().unwrap().set.bodies[0];
        let impulse = body.fluid_force.x * dt;
        let air = after - before;
        eprintln!(
            "substep {step}: liquid {air:e}, walls {walls:e}, body {impulse:e} (its change {:e}) N s",
            body.momentum.x - body_before
        );
        worst = worst.max(((air - walls) / -impulse - 1.0).abs());
        smallest = smallest.min(impulse.abs());
    }
    eprintln!("out of balance by {worst:e} of the body's impulse at most");
    assert!(
        smallest > 1e-4,
        "the liquid barely pushed the ball: {smallest:e} N s"
    );
    assert!(
        worst < 1e-5,
        "momentum out of balance by {worst:e} of the body's impulse"
    );
}

/// The 16 floating bodies of `eddy bench`'s pool at 16^3, first solve, `mg` to 1e-6: the
/// strong coupling's term gives `mg` one outlying eigenvalue per body mode, and deflating
/// them (strong.wgsl, `deflate_*`) brings the iterations back to those of A alone on the
/// same system (the term left out, solved by the solver lab: `eddy bench`'s
/// `floating_bodies_alone`), within one; without the deflation the solve needs at least
/// three more. Both strong solves reach the same pressure.
#[test]
fn deflating_the_bodies_modes_gives_mg_back_its_iterations() {
    use eddy::scene::{PreconditionerKind, StandardProblem};
    use eddy::sim::lab::SolverLab;
    let ctx = common::gpu();
    let solve = |deflate: Option<bool>| {
        let mut scene = StandardProblem::FloatingBodies.scene(16);
        scene.pressure.preconditioner = PreconditionerKind::Mg;
        scene.pressure.tolerance = 1e-6;
        scene.body_deflation = deflate;
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        sim.keep_initial_guess(true);
        sim.substep(scene.frame_dt, Stage::Project).unwrap();
        let report = sim.last_solve.clone().unwrap();
        let p: Vec<f32> = eddy::gpu::read_buffer(&ctx, &sim.pcg.p).unwrap();
        (report, p, sim.freeze_system().unwrap())
    };
    let (deflated, p_deflated, mut sys) = solve(Some(true));
    let (plain, p_plain, _) = solve(Some(false));
    assert!(sys.bodies.as_ref().is_some_and(|b| b.deflate));
    sys.bodies = None;
    let mut lab = SolverLab::new(ctx.clone(), &sys, PreconditionerKind::Mg, 1e-6).unwrap();
    let alone = lab.timed_solve().unwrap().0;
    let its = (deflated.iterations, plain.iterations, alone.iterations);
    eprintln!("mg iterations, deflated, undeflated, A alone: {its:?}");
    assert_eq!(
        alone.status,
        eddy::sim::core::pressure::SolveStatus::Converged,
        "{alone:?}"
    );
    assert!(
        deflated.iterations <= alone.iterations + 1,
        "deflated, undeflated, A alone: {its:?}"
    );
    assert!(
        plain.iterations >= alone.iterations + 3,
        "deflated, undeflated, A alone: {its:?}"
    );
    let scale = p_plain.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let diff = p_plain
        .iter()
        .zip(&p_deflated)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(
        scale > 0.0 && diff <= 1e-3 * scale,
        "the two strong solves differ by {diff:e} (max|p| {scale:e})"
    );
}

/// The shipped buoyancy scene at 16^3: a beach ball, a cork box, wood and a stone dropped
/// onto a pool. As they reach the liquid, bodies that barely touch it give their deflation
/// blocks modes more than five decades apart; without the deflated start (strong.wgsl) the deflated
/// `mg` solve stalled there (frame 7 at 16^3, frame 9 at 32^3, residuals up to 4e-3).
/// Every solve of 12 frames converges, and in no more iterations than without deflation
/// plus one.
#[test]
fn bodies_reaching_the_liquid_keep_the_deflated_solve_converging() {
    let ctx = common::gpu();
    let run = |deflate: Option<bool>| {
        let mut scene = common::shipped("buoyancy", 16);
        scene.body_deflation = deflate;
        let tol = scene.pressure.tolerance;
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        (0..12)
            .map(|_| {
                let s = sim.step_frame().unwrap();
                assert_eq!(s.unconverged_solves, 0, "deflation {deflate:?}: {s:?}");
                assert!(s.pcg_max_residual <= tol, "deflation {deflate:?}: {s:?}");
                s.pcg_iterations_total
            })
            .sum::<u32>()
    };
    let (deflated, plain) = (run(Some(true)), run(None));
    eprintln!("mg iterations over 12 frames, deflated {deflated}, undeflated {plain}");
    assert!(
        deflated <= plain + 12,
        "deflated {deflated}, undeflated {plain}"
    );
}

/// G2P next to bodies (coupling.wgsl `gather_scale_faces`, g2p.wgsl) against the f64
/// reference, in a pool with a light tilted box and a heavy sphere thrown through it: each
/// face's factor from the GPU's cell types, open fractions and P2G weights and the bodies'
/// exact distances, then the particles' new velocities from the GPU's grids and factors,
/// under the PIC/FLIP blend and APIC. Faces near the bodies take factors on both sides of
/// 1 (and 0 against their SOLID cells, and under 1 by AIR where the particles crowd); the
/// rest keep 1, the floor's under the sphere too.
#[test]
fn g2p_next_to_bodies_matches_the_f64_reference() {
    use eddy::sim::liquid::views::Field;
    let mut tilted = body(
        BodyShape::Box {
            half_extents: (0.12, 0.08, 0.1),
        },
        (0.4, 0.45, 0.45),
        250.0,
    );
    tilted.rotation_deg = (20.0, 10.0, 35.0);
    tilted.velocity = (0.4, -0.2, 0.1);
    // The sphere 0.6 cells above the floor, whose faces keep 1.
    let mut sphere = body(BodyShape::Sphere { radius: 0.1 }, (0.7, 0.14, 0.6), 2000.0);
    sphere.velocity = (-0.3, 0.2, 0.0);
    for apic in [false, true] {
        let mut scene = pool(vec![tilted.clone(), sphere.clone()]);
        // It moves the particles before G2P; the reference starts from where they are.
        scene.volume_correction = false;
        if apic {
            scene.transfer = eddy::scene::TransferKind::Apic;
        }
        let ctx = common::gpu();
        let mut sim = Simulation::new(ctx.clone(), &scene).unwrap();
        sim.keep_grid_views();
        for _ in 0..6 {
            sim.substep(0.01, Stage::Advect).unwrap();
        }
        let (pos, vel) = sim.read_particles().unwrap();
        sim.substep(0.01, Stage::G2p).unwrap();
        let (_, after) = sim.read_particles().unwrap();
        let read = |f: Field| -> Vec<f64> {
            let d = sim.read_field(f).unwrap();
            d.values.iter().map(|&v| v as f64).collect()
        };
        let faces = |f: [Field; 3]| eddy::reference::MacField {
            u: read(f[0]),
            v: read(f[1]),
            w: read(f[2]),
        };
        let concat = |m: &eddy::reference::MacField| [&m.u[..], &m.v[..], &m.w[..]].concat();
        let types: Vec<u8> = read(Field::CellType).iter().map(|&t| t as u8).collect();
        let open = faces([Field::OpenU, Field::OpenV, Field::OpenW]);
        let weight = faces([Field::WeightU, Field::WeightV, Field::WeightW]);
        let scale = faces([Field::GatherU, Field::GatherV, Field::GatherW]);
        let gpu_bodies: Vec<GpuBody> =
            eddy::gpu::read_buffer(&ctx, &sim.bodies.as_ref().unwrap().coupling.bodies).unwrap();
        let rb = ref_bodies(&gpu_bodies, 2);
        let g = Grid {
            nx: 16,
            ny: 16,
            nz: 16,
            h: scene.h(),
        };
        let solid: Vec<u32> = eddy::gpu::read_buffer(&ctx, &sim.fields.solid).unwrap();
        let expect = eddy::reference::bodies::gather_scale(
            g,
            &rb,
            &types,
            &solid,
            &concat(&open),
            &concat(&weight),
            scene.particles_per_cell as f64,
            false,
        );
        let got = concat(&scale);
        assert_eq!(got.len(), expect.len());
        let (mut above, mut below, mut zero) = (0, 0, 0);
        for (i, (&a, &b)) in got.iter().zip(&expect).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.max(1.0),
                "face {i}: factor {a} against the reference's {b}"
            );
            if b == 0.0 {
                zero += 1;
            } else if b > 1.0 {
                above += 1;
            } else if b < 1.0 {
                below += 1;
            }
        }
        // By the free surface and in a body's AIR pockets a face is only scaled down.
        let mut by_air = 0;
        eddy::reference::for_each_face(&g, |comp, f, _| {
            let slot = eddy::scene::fractions::face_slot(g.n(), comp, f);
            let hi = f.map(|v| v as i64);
            let mut lo = hi;
            lo[comp] -= 1;
            let air = [lo, hi]
                .iter()
                .any(|&c| g.type_at(&types, c) == eddy::reference::AIR);
            if air && expect[slot] > 0.0 && expect[slot] < 1.0 {
                by_air += 1;
            }
        });
        eprintln!(
            "apic {apic}: factors above 1 {above}, below {below} ({by_air} by AIR), zero {zero}"
        );
        assert!(
            above > 50 && below > 50 && zero > 10 && by_air > 0,
            "{above} {below} {by_air} {zero}"
        );
        let p64 = |p: &[[f32; 4]]| -> Vec<[f64; 3]> {
            p.iter()
                .map(|v| [v[0] as f64, v[1] as f64, v[2] as f64])
                .collect()
        };
        let new = faces([Field::U, Field::V, Field::W]);
        let old = faces([Field::UOld, Field::VOld, Field::WOld]);
        let expect = eddy::reference::g2p_scaled(
            &g,
            &p64(&pos),
            &p64(&vel),
            (&new, &old, &scale),
            scene.pic_ratio,
            apic,
        );
        let got = p64(&after);
        let worst = got
            .iter()
            .zip(&expect)
            .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs()))
            .fold(0.0, f64::max);
        let speed = expect
            .iter()
            .flat_map(|v| v.iter().map(|x| x.abs()))
            .fold(0.0, f64::max);
        eprintln!("apic {apic}: G2P differs by {worst:e} (fastest {speed:.3} m/s)");
        assert!(speed > 0.05, "the bodies stirred nothing: {speed}");
        assert!(worst < 1e-5 * speed.max(1.0), "G2P differs by {worst}");
    }
}
