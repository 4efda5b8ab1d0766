//! Particle spacing: the GPU's push-apart against the f64 reference on clustered particles
//! (cells far over the rest count included), determinism, and what it does to a pool's
//! particles.

use crate::common;

use eddy::reference as cpu;
use eddy::scene::{Scene, Shape, SplitMix64};
use eddy::sim::{liquid::views::Field, Simulation, Stage};

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

/// The seeded pool's particles bunched: in each cell they are drawn to within a third of a
/// cell of a random point, and in the second layer every fourth cell takes three particles
/// from each of three neighbours (17, over twice the rest count). Every particle stays in
/// its cell's liquid, so most cells stay FLUID and inside the liquid, where particles move.
fn clustered(scene: &Scene, seed: u64) -> Vec<[f32; 4]> {
    let init = scene.initial_state();
    let n = scene.dims().map(|v| v as usize);
    let h = scene.h();
    let cell_of = |p: &[f32; 4]| [0, 1, 2].map(|a| ((p[a] as f64 / h) as usize).min(n[a] - 1));
    let idx = |c: [usize; 3]| c[0] + n[0] * (c[1] + n[1] * c[2]);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n[0] * n[1] * n[2]];
    for (p, x) in init.positions.iter().enumerate() {
        members[idx(cell_of(x))].push(p);
    }
    for k in 1..n[2] - 1 {
        for i in 1..n[0] - 1 {
            let target = idx([i, 1, k]);
            if (i + k) % 4 != 0 || members[target].len() != 8 {
                continue;
            }
            for from in [idx([i - 1, 1, k]), idx([i + 1, 1, k]), idx([i, 1, k + 1])] {
                for _ in 0..3 {
                    if let Some(p) = members[from].pop() {
                        members[target].push(p);
                    }
                }
            }
        }
    }
    let mut rng = SplitMix64(seed);
    let mut out = init.positions.clone();
    for (c, ps) in members.iter().enumerate() {
        let home = [c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])];
        let centre = home.map(|v| (v as f64 + 0.3 + 0.4 * rng.next_f64()) * h);
        for &p in ps {
            // The particle's offset from its seeded cell's centre, shrunk to a third.
            let x = &init.positions[p];
            for a in 0..3 {
                let offset = ((x[a] as f64 / h).fract() - 0.5) * h;
                out[p][a] = (centre[a] + offset / 3.0) as f32;
            }
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
    let pos = clustered(&scene, 11);
    assert_eq!(pos.len(), n);
    let vel = vec![[0.0f32; 4]; n];
    sim.upload_particles(&pos, &vel).unwrap();
    sim.substep(1e-4, Stage::Spacing).unwrap();
    let (gpu, _) = sim.read_particles().unwrap();
    let types: Vec<u8> = sim
        .read_field(Field::CellType)
        .unwrap()
        .values
        .iter()
        .map(|&t| t as u8)
        .collect();
    let g = grid(&scene);
    let solid: Vec<bool> = scene
        .initial_state()
        .solid
        .iter()
        .map(|s| *s != 0)
        .collect();
    let p64: Vec<[f64; 3]> = pos.iter().map(|p| [0, 1, 2].map(|a| p[a] as f64)).collect();
    let radius = eddy::sim::liquid::spacing::min_distance(g.h, scene.particles_per_cell, 0.9);
    let cpu = cpu::push_apart(
        &g,
        &solid,
        &types,
        &p64,
        radius,
        eddy::sim::liquid::spacing::STRENGTH as f64,
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
    // Some cells hold over twice the rest count (a list is as long as need be) ...
    let mut count = vec![0usize; g.cells()];
    for x in &p64 {
        count[cpu::cell_of(&g, *x)] += 1;
    }
    assert!(
        count.iter().any(|&c| c > 16),
        "no cell over twice the rest count"
    );
    // ... and the pool's top layer, next to the surface, is as bunched but did not move.
    let top: Vec<[f64; 3]> = p64
        .iter()
        .filter(|x| g.coord(cpu::cell_of(&g, **x))[1] == 4)
        .copied()
        .collect();
    assert!(cpu::close_pairs(&g, &top, radius).1 > 0);
    for (a, x) in gpu.iter().zip(&pos) {
        if g.coord(cpu::cell_of(&g, [0, 1, 2].map(|k| x[k] as f64)))[1] == 4 {
            assert_eq!(a, x, "a particle next to the surface moved");
        }
    }
    // Every particle stays in the domain and out of the solid.
    for p in &gpu {
        let c = cpu::cell_of(&g, [0, 1, 2].map(|a| p[a] as f64));
        assert!(!solid[c], "particle {p:?} in the solid");
    }
}

/// Same input, same adapter: the same positions, bit for bit (the cells' lists come out in
/// a different order each run; the fixed-point sums make that harmless).
#[test]
fn spacing_is_deterministic() {
    let scene = tank(0.9);
    let run = || {
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let n = sim.mode.particles.count as usize;
        let pos = clustered(&scene, 5);
        assert_eq!(pos.len(), n);
        sim.upload_particles(&pos, &vec![[0.0f32; 4]; n]).unwrap();
        sim.substep(1e-4, Stage::Spacing).unwrap();
        (pos, sim.read_particles().unwrap().0)
    };
    let ((input, a), (_, b)) = (run(), run());
    moved_alike(&input, &a, &b);
}

/// The stage moved a quarter of the particles or more from `input` (identical runs of a
/// stage that does nothing prove nothing), to the same bits in `a` and `b`.
fn moved_alike(input: &[[f32; 4]], a: &[[f32; 4]], b: &[[f32; 4]]) {
    let moved = input.iter().zip(a).filter(|(x, y)| x != y).count();
    assert!(
        moved > a.len() / 4,
        "only {moved} of {} particles moved",
        a.len()
    );
    assert!(a
        .iter()
        .zip(b)
        .all(|(x, y)| x.map(f32::to_bits) == y.map(f32::to_bits)));
}

/// The spacing's lists live in P2G's accumulator buffer, sized for them when a scene
/// starts with the spacing on. Turned on while running in a full tank (8 particles per
/// cell: 36 bytes of lists per cell, more than the buffer's 24), the next links get a
/// buffer of their own; both place them apart the same, bit for bit.
#[test]
fn spacing_lists_in_the_accumulators_or_their_own_buffer_agree() {
    let mut full = tank(0.9);
    full.solids.clear();
    full.fluid = vec![Shape::Box {
        min: (0.0, 0.0, 0.0),
        max: (1.2, 1.0, 0.8),
        velocity: (0.0, 0.0, 0.0),
    }];
    let cells = 12 * 10 * 8;
    let mut off = full.clone();
    off.particle_spacing = 0.0;
    let mut on = Simulation::new(common::gpu(), &full).unwrap();
    let mut live = Simulation::new(common::gpu(), &off).unwrap();
    let n = on.mode.particles.count as u64;
    assert_eq!(n, 8 * cells);
    assert!(on.fields.acc.size() >= eddy::sim::liquid::spacing::lists_bytes(cells, n));
    assert!(live.fields.acc.size() < eddy::sim::liquid::spacing::lists_bytes(cells, n));
    live.apply_live_settings(&full).unwrap();
    let mut rng = SplitMix64(3);
    let jitter: Vec<[f32; 4]> = {
        let (pos, _) = on.read_particles().unwrap();
        pos.iter()
            .map(|p| {
                let mut q = *p;
                for x in q.iter_mut().take(3) {
                    *x += ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.02;
                }
                q
            })
            .collect()
    };
    let zero = vec![[0.0f32; 4]; n as usize];
    on.upload_particles(&jitter, &zero).unwrap();
    live.upload_particles(&jitter, &zero).unwrap();
    on.substep(1e-4, Stage::Spacing).unwrap();
    live.substep(1e-4, Stage::Spacing).unwrap();
    let (a, b) = (
        on.read_particles().unwrap().0,
        live.read_particles().unwrap().0,
    );
    moved_alike(&jitter, &a, &b);
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
        let rest = eddy::sim::liquid::spacing::min_distance(g.h, scene.particles_per_cell, 1.0);
        cpu::close_pairs(&g, &p64, 0.5 * rest).1
    };
    let (without, with) = (close_pairs(0.0), close_pairs(0.8));
    println!("pairs closer than half the rest spacing after 2 s: {without} without, {with} with spacing 0.8");
    assert!(
        (with as f64) < 0.2 * without as f64,
        "spacing left {with} close pairs (without: {without})"
    );
}
