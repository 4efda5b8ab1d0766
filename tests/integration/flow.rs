//! Liquid that flows in and out: the inflow/outflow stage against its f64 reference, a
//! flux emitter's volume per second, the faucet-and-drain tank's steady level, the count
//! bookkeeping, determinism, checkpoints, and a full buffer said once.

use crate::common;

use eddy::reference::flow::{flow_step, FlowInput};
use eddy::scene::{Drain, Emitter, Scene, Shape, Side};
use eddy::sim::{liquid::flow::fill_seed, Simulation, Stage};

fn boxed(min: (f64, f64, f64), max: (f64, f64, f64), velocity: (f64, f64, f64)) -> Shape {
    Shape::Box { min, max, velocity }
}

/// A 16 x 16 x 8 tank (h = 1/32 m) with a pool, a solid block, a kept-full emitter on the
/// left, a flux emitter above, a drain in the floor and an open right side.
fn flowing() -> Scene {
    let s = Scene {
        name: "flowing".into(),
        domain: (0.5, 0.5, 0.25),
        resolution: (16, 16, 8),
        fluid: vec![boxed((0.0, 0.0, 0.0), (0.5, 0.15, 0.25), (0.0, 0.0, 0.0))],
        solids: vec![boxed((0.3, 0.0, 0.0), (0.35, 0.1, 0.25), (0.0, 0.0, 0.0))],
        emitters: vec![
            Emitter {
                shape: boxed((0.0, 0.2, 0.05), (0.1, 0.3, 0.2), (0.8, 0.0, 0.0)),
                start: 0.0,
                stop: None,
                flux: None,
            },
            Emitter {
                shape: Shape::Cylinder {
                    center: (0.25, 0.42, 0.125),
                    axis: (0.0, 1.0, 0.0),
                    radius: 0.05,
                    length: 0.04,
                    velocity: (0.0, -1.0, 0.0),
                },
                start: 0.0,
                stop: None,
                flux: Some(2e-3),
            },
        ],
        drains: vec![Drain {
            shape: Shape::Sphere {
                center: (0.15, 0.0, 0.125),
                radius: 0.06,
                velocity: (0.0, 0.0, 0.0),
            },
            start: 0.0,
            stop: None,
        }],
        open_sides: vec![Side::XMax],
        ..Scene::default()
    };
    s.validate().unwrap();
    s
}

#[test]
fn gpu_flow_stage_matches_the_f64_reference() {
    let scene = flowing();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    // Cell types of a real substep (bodies none, the block SOLID).
    sim.substep(0.005, Stage::MarkCells).unwrap();
    // Particles everywhere: in the pool, in the drain, in the open side's last layer, in
    // some of the kept-full emitter's sub-cells (the rest must be filled), one not finite.
    let mut pos = Vec::new();
    let mut vel = Vec::new();
    let mut rng = eddy::scene::SplitMix64(7);
    for i in 0..3000 {
        let x = [
            rng.next_f64() * 0.5,
            rng.next_f64() * 0.35,
            rng.next_f64() * 0.25,
        ];
        pos.push([x[0] as f32, x[1] as f32, x[2] as f32, 0.0]);
        vel.push([(i % 7) as f32 * 0.1, -0.2, 0.05, 0.0]);
    }
    pos[17] = [f32::NAN, 0.1, 0.1, 0.0];
    sim.upload_particles(&pos, &vel).unwrap();
    let solid: Vec<u32> = eddy::gpu::read_buffer(&sim.ctx, &sim.fields.cell_type).unwrap();
    let (emitted, removed) = sim.run_flow(0.005).unwrap().unwrap();
    let (queued, substep) = {
        let flow = sim.mode.flow.as_ref().unwrap();
        let (q, s) = flow.queued();
        (q.to_vec(), s)
    };
    let (gpu_pos, gpu_vel) = sim.read_particles().unwrap();

    let f64s = |v: &[[f32; 4]]| -> Vec<[f64; 3]> {
        v.iter()
            .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
            .collect()
    };
    let incoming: Vec<([f64; 3], usize)> = queued
        .iter()
        .map(|q| {
            (
                [q[0] as f64, q[1] as f64, q[2] as f64],
                q[3].to_bits() as usize,
            )
        })
        .collect();
    assert!(!incoming.is_empty(), "the flux emitter placed nothing");
    let is_solid = |c: usize| solid[c] == eddy::scene::SOLID;
    let want = flow_step(
        &scene,
        &FlowInput {
            pos: &f64s(&pos),
            vel: &f64s(&vel),
            solid: &is_solid,
            t: 0.0,
            substep,
            seed: fill_seed(&scene),
            incoming: &incoming,
            capacity: sim.mode.particles.capacity as usize,
        },
    );
    assert!(want.removed > 100, "only {} removed", want.removed);
    assert!(want.emitted > 50, "only {} emitted", want.emitted);
    assert_eq!(
        (emitted as usize, removed as usize),
        (want.emitted, want.removed)
    );
    assert_eq!(gpu_pos.len(), want.pos.len());
    let got = f64s(&gpu_pos);
    let got_v = f64s(&gpu_vel);
    for i in 0..got.len() {
        for a in 0..3 {
            assert!(
                (got[i][a] - want.pos[i][a]).abs() < 2e-6,
                "particle {i} of {}: {:?} vs {:?}",
                got.len(),
                got[i],
                want.pos[i]
            );
            assert!((got_v[i][a] - want.vel[i][a]).abs() < 1e-6, "velocity {i}");
        }
    }
}

/// `frames` frames of `scene`; the stats rows.
fn run(scene: &Scene, frames: u32) -> (Simulation, Vec<eddy::sim::FrameStats>) {
    let mut sim = Simulation::new(common::gpu(), scene).unwrap();
    let rows = (0..frames).map(|_| sim.step_frame().unwrap()).collect();
    (sim, rows)
}

#[test]
fn a_flux_emitter_emits_its_volume_per_second() {
    // 1.5 litres a second into a 16^3 tank for 2 s, starting empty of emitted liquid.
    let q = 1.5e-3;
    let scene = Scene {
        name: "flux".into(),
        domain: (0.5, 0.5, 0.5),
        resolution: (16, 16, 16),
        fluid: vec![boxed((0.0, 0.0, 0.0), (0.5, 0.06, 0.5), (0.0, 0.0, 0.0))],
        emitters: vec![Emitter {
            shape: Shape::Sphere {
                center: (0.25, 0.35, 0.25),
                radius: 0.05,
                velocity: (0.0, -0.5, 0.0),
            },
            start: 0.0,
            stop: None,
            flux: Some(q),
        }],
        frame_dt: 0.05,
        ..Scene::default()
    };
    scene.validate().unwrap();
    let (sim, rows) = run(&scene, 40);
    let emitted: u64 = rows
        .iter()
        .map(|r| r.liquid().unwrap().particles_emitted)
        .sum();
    let volume = emitted as f64 * scene.particle_volume();
    let want = q * 2.0;
    assert!(
        (volume - want).abs() <= 0.02 * want,
        "emitted {volume:.6e} m^3 in 2 s, {want:.6e} asked"
    );
    // Nothing leaves this closed tank: the count is the seeded plus the emitted.
    let seeded = scene.particle_count();
    assert_eq!(sim.mode.particles.count as u64, seeded + emitted);
    assert_eq!(rows.last().unwrap().particles as u64, seeded + emitted);
}

#[test]
fn the_faucet_and_drain_tank_keeps_a_steady_level() {
    let scene = Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/faucet_drain.ron"
    ))
    .unwrap();
    let (sim, rows) = run(&scene, 360);
    let vp = scene.particle_volume();
    // The count follows the frames' emitted and removed exactly.
    let mut count = scene.particle_count() as i64;
    for r in &rows {
        let l = r.liquid().unwrap();
        count += l.particles_emitted as i64 - l.particles_removed as i64;
        assert_eq!(r.particles as i64, count, "frame {}", r.frame);
    }
    assert_eq!(sim.mode.particles.count as i64, count);
    // After 1 s the level holds: the particles' volume within 2% of its mean for 5 s, and
    // the free surface's volume too, averaged over a quarter second (a faucet's jet
    // splashes from frame to frame).
    let steady = &rows[60..];
    let particle_volume: Vec<f64> = steady.iter().map(|r| r.particles as f64 * vp).collect();
    let mean = particle_volume.iter().sum::<f64>() / particle_volume.len() as f64;
    for (i, v) in particle_volume.iter().enumerate() {
        assert!(
            (v - mean).abs() <= 0.02 * mean,
            "frame {}: particle volume {v:.5e} vs mean {mean:.5e}",
            i + 61
        );
    }
    let windows: Vec<f64> = steady
        .chunks(15)
        .map(|c| {
            c.iter()
                .map(|r| r.liquid().unwrap().liquid_volume)
                .sum::<f64>()
                / c.len() as f64
        })
        .collect();
    let wmean = windows.iter().sum::<f64>() / windows.len() as f64;
    for w in &windows {
        assert!(
            (w - wmean).abs() <= 0.02 * wmean,
            "liquid volume {w:.5e} vs {wmean:.5e} ({windows:?})"
        );
    }
    // And liquid flows through: about as much leaves as enters.
    let emitted: u64 = steady
        .iter()
        .map(|r| r.liquid().unwrap().particles_emitted)
        .sum();
    let removed: u64 = steady
        .iter()
        .map(|r| r.liquid().unwrap().particles_removed)
        .sum();
    assert!(emitted > 10_000, "{emitted} emitted");
    assert!(
        (emitted as f64 - removed as f64).abs() <= 0.03 * emitted as f64,
        "{emitted} emitted, {removed} removed"
    );
}

#[test]
fn flowing_runs_are_deterministic_and_resume_bit_for_bit() {
    let scene = flowing();
    let (a, _) = run(&scene, 12);
    let (b, _) = run(&scene, 12);
    let pa = a.read_particles().unwrap();
    let pb = b.read_particles().unwrap();
    assert!(pa.0.len() > 1000);
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&pa.0),
        bytemuck::cast_slice::<_, u8>(&pb.0)
    );
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&pa.1),
        bytemuck::cast_slice::<_, u8>(&pb.1)
    );

    // Stop at frame 6, resume in a new simulation: the same particles at frame 12.
    let (mut first, _) = run(&scene, 6);
    let state = first.save_state().unwrap();
    let mut resumed = Simulation::new(common::gpu(), &scene).unwrap();
    resumed.restore_state(&state).unwrap();
    let mut rows_first = Vec::new();
    let mut rows_resumed = Vec::new();
    for _ in 0..6 {
        rows_first.push(first.step_frame().unwrap().csv_row());
        rows_resumed.push(resumed.step_frame().unwrap().csv_row());
    }
    assert_eq!(rows_first, rows_resumed);
    let p1 = first.read_particles().unwrap();
    let p2 = resumed.read_particles().unwrap();
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&p1.0),
        bytemuck::cast_slice::<_, u8>(&pa.0)
    );
    assert_eq!(
        bytemuck::cast_slice::<_, u8>(&p2.0),
        bytemuck::cast_slice::<_, u8>(&pa.0)
    );
    assert_eq!(
        resumed.mode.flow.as_ref().unwrap().totals,
        a.mode.flow.as_ref().unwrap().totals
    );
}

#[test]
fn a_full_buffer_stops_the_emitters_and_counts_what_it_could_not_emit() {
    let mut scene = flowing();
    scene.drains.clear();
    scene.open_sides.clear();
    let seeded = scene.particle_count();
    scene.max_particles = Some(seeded + 500);
    scene.validate().unwrap();
    let (sim, rows) = run(&scene, 10);
    assert_eq!(sim.mode.particles.count as u64, seeded + 500);
    assert_eq!(rows.last().unwrap().particles as u64, seeded + 500);
    let flow = sim.mode.flow.as_ref().unwrap();
    assert!(flow.totals.not_emitted > 0);
    assert_eq!(flow.totals.emitted, 500);
    // Nothing past the capacity was written: the particles are all finite and inside.
    let (pos, _) = sim.read_particles().unwrap();
    assert!(pos
        .iter()
        .all(|p| (0..3).all(|a| p[a].is_finite() && p[a] >= 0.0 && p[a] <= 0.5)));
}

#[test]
fn the_open_channel_lets_out_what_enters() {
    let scene = Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/open_channel.ron"
    ))
    .unwrap();
    let (sim, rows) = run(&scene, 360);
    // After 2 s the channel runs at its steady state, but for surges between the inlet and
    // the open side: the water it holds swings by up to 15% over seconds (21.8k to 25.2k
    // particles over 2-10 s), so what a 4 s window lets out differs from what enters by
    // that window's change of storage (2-6 s: 3.6% with a frame's substeps even, 1.3%
    // before; 2-10 s: 0.5%). Checked: the open side lets out what enters within 5% over
    // 2-6 s, and the channel neither fills nor drains (every frame's particles within 12%
    // of the window's mean: measured -8.7% to +6.1%).
    let steady = &rows[120..];
    let emitted: u64 = steady
        .iter()
        .map(|r| r.liquid().unwrap().particles_emitted)
        .sum();
    let removed: u64 = steady
        .iter()
        .map(|r| r.liquid().unwrap().particles_removed)
        .sum();
    eprintln!("{emitted} emitted, {removed} removed at the steady state");
    assert!(emitted > 40_000, "{emitted} emitted");
    assert!(
        (emitted as f64 - removed as f64).abs() <= 0.05 * emitted as f64,
        "{emitted} emitted, {removed} removed at the steady state"
    );
    let held: Vec<f64> = steady.iter().map(|r| r.particles as f64).collect();
    let mean = held.iter().sum::<f64>() / held.len() as f64;
    for (k, n) in held.iter().enumerate() {
        assert!(
            (n / mean - 1.0).abs() <= 0.12,
            "frame {}: {n} particles against a mean of {mean:.0}",
            k + 121
        );
    }
    // No particle outside the domain, and none left in the open side's last cell layer.
    let (pos, _) = sim.read_particles().unwrap();
    let d = scene.domain_size();
    let last = d[0] - scene.h();
    for p in &pos {
        assert!((0..3).all(|a| p[a].is_finite() && p[a] >= 0.0 && p[a] as f64 <= d[a]));
        assert!(
            (p[0] as f64) < last + 1e-6,
            "a particle at x = {} in the open layer",
            p[0]
        );
    }
}

#[test]
fn a_full_buffer_is_one_warning_and_the_run_goes_on() {
    let dir = std::env::temp_dir().join(format!("eddy-flow-full-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/faucet_drain.ron"
    ))
    .unwrap()
    .replace("drains: [", "max_particles: Some(9800),\n    drains: [");
    let scene = dir.join("full.ron");
    std::fs::write(&scene, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "run",
            scene.to_str().unwrap(),
            "--frames",
            "12",
            "--check-invariants",
        ])
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("the liquid holds max_particles").count(),
        1,
        "{err}"
    );
    assert!(err.contains("not emitted"), "{err}");
    assert!(stdout.contains("not emitted for want of room"), "{stdout}");
    assert!(stdout.contains("(max_particles 9800)"), "{stdout}");
}
