//! Particle spacing: the GPU's push-apart against the f64 reference on clustered particles
//! (bins that overflow included), determinism, and what it does to a pool's particles.

mod common;

use eddy::reference as cpu;
use eddy::scene::{Scene, Shape, SplitMix64};
use eddy::sim::{Simulation, Stage};

/// A 12 x 10 x 8 tank with a solid block, liquid in its lower half.
fn tank(spacing: f64) -> Scene {
    let s = Scene {
        name: "spacing".into(),
        domain: (1.2, 1.0, 0.8),
        resolution: (12, 10, 8),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.2, 0.5, 0.8),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![Shape::Box {
            min: (0.8, 0.0, 0.0),
            max: (1.0, 0.3, 0.4),
            velocity: (0.0, 0.0, 0.0),
        }],
        particle_spacing: spacing,
        // Only the spacing moves particles before advection in these substeps.
        volume_correction: false,
        ..Scene::default()
    };
    s.validate().unwrap();
    s
}

/// Particles in random clusters outside the solid: most cells hold a handful, some more
/// than a bin holds.
fn clustered(scene: &Scene, n: usize, seed: u64) -> Vec<[f32; 4]> {
    let init = scene.initial_state();
    let [nx, ny, nz] = scene.dims();
    let h = scene.h();
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let c = [nx, ny, nz].map(|d| (rng.next_u64() % d as u64) as f64);
        let idx = c[0] as usize + nx as usize * (c[1] as usize + ny as usize * c[2] as usize);
        if init.solid[idx] != 0 {
            continue;
        }
        // A cluster of up to 24 particles within a third of a cell.
        let centre = c.map(|v| (v + 0.2 + 0.6 * rng.next_f64()) * h);
        let size = 1 + rng.next_u64() % 24;
        for _ in 0..size {
            if out.len() == n {
                break;
            }
            let p = centre.map(|v| v + (rng.next_f64() - 0.5) * h / 3.0);
            out.push([p[0] as f32, p[1] as f32, p[2] as f32, 0.0]);
        }
    }
    out
}

fn grid(scene: &Scene) -> cpu::Grid {
    let [nx, ny, nz] = scene.dims().map(|v| v as usize);
    cpu::Grid {
        nx,
        ny,
        nz,
        h: scene.h(),
    }
}

/// The GPU's spacing stage moves clustered particles as the f64 reference does (the GPU
/// sums fixed point in 2^-20 cells; positions are f32).
#[test]
fn gpu_spacing_matches_the_reference() {
    let scene = tank(0.9);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let n = sim.mode.particles.count as usize;
    let pos = clustered(&scene, n, 11);
    let vel = vec![[0.0f32; 4]; n];
    sim.upload_particles(&pos, &vel).unwrap();
    sim.substep(1e-4, Stage::Spacing).unwrap();
    let (gpu, _) = sim.read_particles().unwrap();
    let g = grid(&scene);
    let solid: Vec<bool> = scene
        .initial_state()
        .solid
        .iter()
        .map(|s| *s != 0)
        .collect();
    let p64: Vec<[f64; 3]> = pos.iter().map(|p| [0, 1, 2].map(|a| p[a] as f64)).collect();
    let radius = eddy::sim::spacing::min_distance(g.h, scene.particles_per_cell, 0.9);
    let cpu = cpu::push_apart(
        &g,
        &solid,
        &p64,
        radius,
        eddy::sim::spacing::STRENGTH as f64,
        eddy::sim::spacing::BIN_SLOTS as usize,
    );
    let mut worst = 0.0f64;
    let mut moved = 0;
    for (p, (a, b)) in gpu.iter().zip(&cpu).enumerate() {
        for ax in 0..3 {
            worst = worst.max((a[ax] as f64 - b[ax]).abs());
        }
        if (0..3).any(|ax| (b[ax] - p64[p][ax]).abs() > 1e-3 * g.h) {
            moved += 1;
        }
    }
    println!("{moved} of {n} particles moved; largest GPU - reference difference {worst:.2e} m");
    assert!(moved > n / 4, "only {moved} of {n} particles moved");
    assert!(
        worst < 1e-4 * g.h,
        "GPU and reference differ by {worst:e} m"
    );
    // Every particle stays in the domain and out of the solid.
    for p in &gpu {
        let c = cpu::cell_of(&g, [0, 1, 2].map(|a| p[a] as f64));
        assert!(!solid[c], "particle {p:?} in the solid");
    }
}

/// Same input, same adapter: the same positions, bit for bit (the bins fill in a different
/// order each run; the fixed-point sums and the skipped overfull cells make that harmless).
#[test]
fn spacing_is_deterministic() {
    let scene = tank(0.9);
    let run = || {
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let n = sim.mode.particles.count as usize;
        let pos = clustered(&scene, n, 5);
        sim.upload_particles(&pos, &vec![[0.0f32; 4]; n]).unwrap();
        sim.substep(1e-4, Stage::Spacing).unwrap();
        (pos, sim.read_particles().unwrap().0)
    };
    let ((input, a), (_, b)) = (run(), run());
    // The stage moved particles (identical runs of a stage that does nothing prove
    // nothing) ...
    let moved = input.iter().zip(&a).filter(|(x, y)| x != y).count();
    assert!(
        moved > a.len() / 4,
        "only {moved} of {} particles moved",
        a.len()
    );
    // ... and moved them the same way both times.
    assert!(a
        .iter()
        .zip(&b)
        .all(|(x, y)| x.map(f32::to_bits) == y.map(f32::to_bits)));
}

/// A pool settling for two seconds: with spacing, far fewer particle pairs end up closer
/// than half the rest spacing than without.
#[test]
fn spacing_keeps_a_settling_pool_from_bunching() {
    let close_pairs = |spacing: f64| {
        let mut scene = tank(spacing);
        scene.volume_correction = true;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        for _ in 0..120 {
            sim.step_frame().unwrap();
        }
        let (pos, _) = sim.read_particles().unwrap();
        let p64: Vec<[f64; 3]> = pos.iter().map(|p| [0, 1, 2].map(|a| p[a] as f64)).collect();
        let g = grid(&scene);
        let rest = eddy::sim::spacing::min_distance(g.h, scene.particles_per_cell, 1.0);
        cpu::close_pairs(&g, &p64, 0.5 * rest).1
    };
    let (without, with) = (close_pairs(0.0), close_pairs(0.8));
    println!("pairs closer than half the rest spacing after 2 s: {without} without, {with} with spacing 0.8");
    assert!(
        (with as f64) < 0.2 * without as f64,
        "spacing left {with} close pairs (without: {without})"
    );
}
