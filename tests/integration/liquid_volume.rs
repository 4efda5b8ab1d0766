//! The liquid keeps its volume and its surface: the dam break's FLUID volume over ten
//! seconds, pools that stay still or come to rest without compacting under the surface,
//! and hydrostatic pressure with the free surface where the liquid ends (ghost fluid).

use crate::common;

use eddy::scene::{Scene, Shape};
use eddy::sim::{liquid::views::Field, Simulation, Stage};

/// A 16^3 tank with a pool `depth` metres deep (a whole number of cells when
/// `depth * 16` is), optionally with a one-cell step on the left half of its surface.
fn pool(depth: f64, step: bool) -> Scene {
    let mut fluid = vec![Shape::Box {
        min: (0.0, 0.0, 0.0),
        max: (1.0, depth, 1.0),
        velocity: (0.0, 0.0, 0.0),
    }];
    if step {
        fluid.push(Shape::Box {
            min: (0.0, depth, 0.0),
            max: (0.5, depth + 1.0 / 16.0, 1.0),
            velocity: (0.0, 0.0, 0.0),
        });
    }
    let mut s = Scene {
        name: "pool".into(),
        domain: (1.0, 1.0, 1.0),
        resolution: (16, 16, 16),
        fluid,
        ..Scene::default()
    };
    s.pressure.tolerance = 1e-6;
    s.validate().unwrap();
    s
}

fn cells(sim: &Simulation, f: Field) -> Vec<f32> {
    sim.read_field(f).unwrap().values
}

/// Density of the layer under the surface: in every column the cell below the highest FLUID
/// cell. Returns the mean and the extremes over the columns. (Compaction put 2.5-4x the
/// rest density there; the volume correction leaves errors within +-0.2 alone.)
fn layer_under_surface(sim: &Simulation) -> (f32, f32, f32) {
    let [nx, ny, nz] = sim.fields.params.n;
    let types = cells(sim, Field::CellType);
    let density = cells(sim, Field::Density);
    let at = |i: u32, j: u32, k: u32| (i + nx * (j + ny * k)) as usize;
    let fluid = eddy::scene::FLUID as f32;
    let (mut lo, mut hi, mut sum, mut n) = (f32::MAX, f32::MIN, 0.0f32, 0u32);
    for k in 0..nz {
        for i in 0..nx {
            let top = (0..ny).rev().find(|&j| types[at(i, j, k)] == fluid);
            if let Some(top) = top.filter(|&t| t >= 1) {
                let d = density[at(i, top - 1, k)];
                lo = lo.min(d);
                hi = hi.max(d);
                sum += d;
                n += 1;
            }
        }
    }
    (sum / n.max(1) as f32, lo, hi)
}

/// The liquid volume inside the free surface is back within 2% once a dam break at 16 cells
/// across has settled (10 s). While it splashes, sheets and drops one or two cells thick are
/// where a level set sampled at cell centres is crudest, so the bound on the way is looser.
/// Counting whole FLUID cells moves in steps of a layer as the surface crosses cell centres
/// (a layer is a quarter of the settled pool's depth), so that count is held to 10%.
#[test]
fn dam_break_keeps_its_volume_for_ten_seconds() {
    let scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/dam_break.ron"))
        .unwrap()
        .with_resolution(16);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let frames = (10.0 / scene.frame_dt).round() as usize;
    let first = sim.step_frame().unwrap();
    let mut worst = 0.0f64;
    let mut last = first.clone();
    for _ in 1..frames {
        last = sim.step_frame().unwrap();
        worst = worst.max(
            (last.liquid().unwrap().liquid_volume - first.liquid().unwrap().liquid_volume).abs()
                / first.liquid().unwrap().liquid_volume,
        );
    }
    let rel = |a: f64, b: f64| (a - b) / b;
    let end = rel(
        last.liquid().unwrap().liquid_volume,
        first.liquid().unwrap().liquid_volume,
    );
    let cells = rel(last.volume, first.volume);
    println!(
        "liquid volume {:.5} -> {:.5} m^3 ({:+.2}%, worst {:.2}%); FLUID cells {:+.2}%; density \
         error max {:.3} mean {:.3}",
        first.liquid().unwrap().liquid_volume,
        last.liquid().unwrap().liquid_volume,
        end * 100.0,
        worst * 100.0,
        cells * 100.0,
        last.liquid().unwrap().density_error_max,
        last.liquid().unwrap().density_error_mean
    );
    assert!(
        end.abs() <= 0.02,
        "liquid volume after 10 s off by {:.2}%",
        end * 100.0
    );
    assert!(
        worst <= 0.12,
        "liquid volume drifted by {:.1}% on the way",
        worst * 100.0
    );
    assert!(
        cells.abs() <= 0.10,
        "FLUID cells after 10 s off by {:.1}%",
        cells * 100.0
    );
}

#[test]
fn still_pool_stays_still_and_does_not_compact() {
    let depth = 0.375;
    let scene = pool(depth, false);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let limit = 0.01 * (9.81 * depth).sqrt();
    // The jittered seeding makes the surface a little rough; the liquid smooths it in a
    // transient of a few cm/s that must die down.
    let mut last = sim.step_frame().unwrap();
    let v0 = last.liquid().unwrap().liquid_volume;
    for _ in 1..200 {
        last = sim.step_frame().unwrap();
    }
    let (mean, lo, hi) = layer_under_surface(&sim);
    println!(
        "max speed after 200 frames {:.4} m/s (limit {limit:.4}); layer under the surface \
         {mean:.3} ({lo:.3}..{hi:.3}); liquid volume {v0:.5} -> {:.5}",
        last.max_speed,
        last.liquid().unwrap().liquid_volume
    );
    assert!(
        last.max_speed < limit,
        "max speed {} m/s after 200 frames, limit {limit}",
        last.max_speed
    );
    assert!(
        (0.8..=1.2).contains(&mean) && lo >= 0.7 && hi <= 1.3,
        "layer under the surface at {mean:.2} ({lo:.2}..{hi:.2}) of the rest density"
    );
    assert!(
        (last.liquid().unwrap().liquid_volume - v0).abs() <= 0.005 * v0,
        "liquid volume drifted"
    );
}

/// A one-cell step on half the pool's surface starts it sloshing. The liquid is inviscid and
/// FLIP damps its waves only a little (that is the point of it), so the pool is not at rest
/// after 10 s; what must hold is that the volume correction and the free surface add no
/// energy, and that the layer under the surface never compacts: its mean within 20% of the
/// rest density, every column within 30% (the correction leaves +-20% alone). With a
/// viscosity the same pool comes to rest (`viscous_disturbed_pool_comes_to_rest`).
#[test]
fn disturbed_pool_sloshes_without_gaining_energy_or_compacting() {
    let depth = 0.375;
    let scene = pool(depth, true);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let frames = (10.0 / scene.frame_dt).round() as usize;
    let mut first_second = 0.0f64;
    let mut last_second = 0.0f64;
    let mut worst_layer = (f32::MAX, f32::MIN);
    let mut worst_mean = 1.0f32;
    let mut v0 = 0.0;
    let mut last = None;
    for f in 0..frames {
        let st = sim.step_frame().unwrap();
        if f == 0 {
            v0 = st.liquid().unwrap().liquid_volume;
        }
        if f < 60 {
            first_second = first_second.max(st.kinetic_energy);
        }
        if f >= frames - 60 {
            last_second = last_second.max(st.kinetic_energy);
        }
        if f % 60 == 59 {
            let (mean, lo, hi) = layer_under_surface(&sim);
            worst_layer = (worst_layer.0.min(lo), worst_layer.1.max(hi));
            if (mean - 1.0).abs() > (worst_mean - 1.0).abs() {
                worst_mean = mean;
            }
        }
        last = Some(st);
    }
    let last = last.unwrap();
    println!(
        "kinetic energy: first second {first_second:.3e} J, last second {last_second:.3e} J; \
         layer under the surface: worst mean {worst_mean:.3}, columns {:.3}..{:.3}; liquid \
         volume {v0:.5} -> {:.5}; max speed at 10 s {:.3} m/s",
        worst_layer.0,
        worst_layer.1,
        last.liquid().unwrap().liquid_volume,
        last.max_speed
    );
    assert!(first_second > 1e-3, "the step did not disturb the pool");
    assert!(
        last_second < first_second,
        "the pool gained energy: {first_second} J -> {last_second} J"
    );
    assert!(
        (0.8..=1.2).contains(&worst_mean) && worst_layer.0 >= 0.7 && worst_layer.1 <= 1.3,
        "layer under the surface at {worst_mean:.2} ({:.2}..{:.2}) of the rest density",
        worst_layer.0,
        worst_layer.1
    );
    // The level set's volume of a sloshing surface carries the waves' sampling error.
    assert!(
        (last.liquid().unwrap().liquid_volume - v0).abs() <= 0.03 * v0,
        "liquid volume {v0} -> {}",
        last.liquid().unwrap().liquid_volume
    );
}

/// The same disturbed pool with a viscous liquid (nu = 0.01 m^2/s, 10^4 times water's)
/// comes to rest: its max speed falls below 1% of sqrt(g h) and stays there for a second,
/// well within 10 s (measured: from 4.8 s; at 0.05 m^2/s from about 3 s), and the layer under
/// its surface stays within 20% of the rest density. Once the waves have died there is no
/// residual stirring: particle noise and compaction kept the first round's pool at 5% of
/// sqrt(g h) for good.
#[test]
fn viscous_disturbed_pool_comes_to_rest() {
    let depth = 0.375;
    let mut scene = pool(depth, true);
    scene.viscosity = 0.01;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    let limit = 0.01 * (9.81 * depth).sqrt();
    let frames = (10.0 / scene.frame_dt).round() as usize;
    let second = (1.0 / scene.frame_dt).round() as usize;
    let (mut quiet, mut first_speed, mut rested_at) = (0usize, 0.0f64, None);
    for _ in 0..frames {
        let st = sim.step_frame().unwrap();
        first_speed = first_speed.max(st.max_speed);
        quiet = if st.max_speed < limit { quiet + 1 } else { 0 };
        if quiet == second {
            rested_at = Some(sim.time - 1.0);
            break;
        }
    }
    let (mean, lo, hi) = layer_under_surface(&sim);
    let rested = rested_at.map_or("never".to_string(), |t| format!("{t:.2} s"));
    println!(
        "max speed {first_speed:.3} m/s at first; below {limit:.4} m/s for a second from \
         {rested}; layer under the surface {mean:.3} ({lo:.3}..{hi:.3})"
    );
    assert!(
        first_speed > 10.0 * limit,
        "the step did not disturb the pool"
    );
    assert!(
        rested_at.is_some(),
        "the viscous pool was still moving after 10 s"
    );
    assert!(
        (0.8..=1.2).contains(&mean),
        "layer under the surface at {mean:.2} ({lo:.2}..{hi:.2}) of the rest density"
    );
}

/// Worst errors of the ghost-fluid pressure in a still pool whose surface lies `frac` into
/// its cell: (relative, two cells down and deeper; relative, in the second cell; in units of
/// rho g h, in the top cells), with the depth measured from the seeded surface, and the
/// worst relative error at any depth measured from the surface the level set puts in each
/// column (where the solve imposes p = 0). `lattice`: particles on a regular 2 x 2 x 2
/// lattice per cell instead of the scene's jittered seeding.
fn hydrostatic_errors(frac: f64, lattice: bool) -> ((f64, f64, f64), f64) {
    let h = 1.0 / 16.0;
    {
        let mut scene = pool(6.0 * h, false);
        scene.volume_correction = false;
        let depth = (6.0 + frac) * h;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        let init = scene.initial_state();
        let stretch = (depth / (6.0 * h)) as f32;
        let mut pos: Vec<[f32; 4]> = init
            .positions
            .iter()
            .map(|p| [p[0], p[1] * stretch, p[2], 0.0])
            .collect();
        if lattice {
            // Each particle to the centre of its sub-cell (the seeding puts one in each).
            let sub = (h / 2.0) as f32;
            for p in pos.iter_mut() {
                let y = p[1] / stretch;
                for (a, v) in [(0, p[0]), (1, y), (2, p[2])] {
                    p[a] = ((v / sub).floor() + 0.5) * sub;
                }
                p[1] *= stretch;
            }
        }
        sim.upload_particles(&pos, &init.velocities).unwrap();
        sim.fields.params.rest_weight = scene.particles_per_cell as f32 / stretch;
        sim.substep(scene.frame_dt, Stage::Pressure).unwrap();
        let [nx, ny, nz] = sim.fields.params.n;
        let types = cells(&sim, Field::CellType);
        let p = cells(&sim, Field::Pressure);
        let filtered: Vec<f64> = cells(&sim, Field::LevelSet)
            .iter()
            .map(|&x| 0.5 - x as f64)
            .collect();
        let rho_g_h = eddy::sim::DENSITY * 9.81 * h;
        let (mut deep, mut near, mut top, mut own) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut checked = 0;
        let at = |i: u32, j: u32, k: u32| (i + nx * (j + ny * k)) as usize;
        let fluid = eddy::scene::FLUID as f32;
        for k in 0..nz {
            for i in 0..nx {
                // The column's surface as the solve sees it: theta of the way from the top
                // FLUID cell's centre to the AIR cell's above (Field::LevelSet holds 0.5 -
                // the filtered density; surface_theta takes the filtered density).
                let Some(jt) = (0..ny).rev().find(|&j| types[at(i, j, k)] == fluid) else {
                    continue;
                };
                let theta =
                    eddy::reference::surface_theta(Some(&filtered), at(i, jt, k), at(i, jt + 1, k));
                let surface = jt as f64 + 0.5 + theta;
                for j in 0..=jt {
                    let c = at(i, j, k);
                    // Depth in cells and the pressure in units of rho g h.
                    let d = depth / h - (j as f64 + 0.5);
                    let err = (p[c] as f64 / rho_g_h - d).abs();
                    if d >= 2.0 {
                        deep = deep.max(err / d);
                    } else if d >= 1.0 {
                        near = near.max(err / d);
                    } else {
                        top = top.max(err);
                    }
                    let d_own = surface - (j as f64 + 0.5);
                    own = own.max((p[c] as f64 / rho_g_h - d_own).abs() / d_own);
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000);
        ((deep, near, top), own)
    }
}

/// In a still pool the ghost-fluid pressure is rho g d at depth d below the surface (the
/// first-order boundary puts p = 0 at the first AIR cell's centre: 0.5 rho g h too high
/// everywhere, off by 100% in the top cell). Surfaces inside a cell come from a 6-cell pool
/// whose particles are stretched upward, with the rest density lowered to match. The
/// level set from jittered particles places the surface within a few hundredths of a cell
/// per column, so the top cells carry that much pressure noise; the solve averages it out
/// below. The same pools with the particles moved to a regular lattice separate the
/// boundary condition from that noise: measured from the surface the level set places,
/// the pressure is exact (1e-6) at every depth for all three fractions; measured from the
/// seeded surface, exact with the surface on a face and within 1.2% (0.014 rho g h at the
/// top) where the level set of the stretched lattice sits up to 0.014 cells off it.
#[test]
fn hydrostatic_pressure_starts_at_the_surface() {
    for frac in [0.0, 0.3, 0.7] {
        let ((deep, near, top), own) = hydrostatic_errors(frac, false);
        println!(
            "surface {frac} into its cell: relative error {deep:.2e} from two cells down, \
             {near:.2e} in the second cell, {top:.3} rho g h in the top cells; from the \
             level set's surface {own:.2e} at worst"
        );
        assert!(
            deep <= 0.01,
            "surface {frac} into its cell: pressure off by {:.2}% two cells down and deeper",
            deep * 100.0
        );
        assert!(
            near <= 0.04,
            "surface {frac} into its cell: pressure off by {:.2}% in the second cell",
            near * 100.0
        );
        assert!(
            top <= 0.06,
            "surface {frac} into its cell: top-cell pressure off by {top:.3} rho g h"
        );
        // Without the jitter's noise: exact when the surface lies on a face; a fraction
        // into the cell, the stretched lattice no longer lines up with the cells and the
        // density (so the surface) it gives wobbles by about a hundredth of a cell.
        let ((deep, near, top), own) = hydrostatic_errors(frac, true);
        println!(
            "  on a lattice: {deep:.2e} from two cells down, {near:.2e} in the second cell, \
             {top:.4} rho g h in the top cells; from the level set's surface {own:.2e} at worst"
        );
        // Measured from the surface the level set gives (every column the same on the
        // lattice), the pressure is rho g d at every depth, top cells included: the ghost
        // fluid boundary is exact for hydrostatics wherever the surface lies in its cell.
        assert!(
            own <= 1e-4,
            "surface {frac} into its cell, particles on a lattice: pressure off by {own:.2e} \
             of rho g d below the level set's surface"
        );
        let exact = if frac == 0.0 { 1e-4 } else { f64::INFINITY };
        assert!(
            deep <= 0.01f64.min(exact) && near <= 0.015f64.min(exact) && top <= 0.02f64.min(exact),
            "surface {frac} into its cell, particles on a lattice: {deep:.2e}, {near:.2e}, {top:.4}"
        );
    }
}
