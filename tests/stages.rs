//! Every GPU stage against the f64 CPU reference, on random non-trivial input.
//!
//! Each stage is fed the GPU's own output of the stage before it (read back), so a
//! mismatch points at one stage. Tolerances are stated per stage with the reason.

mod common;

use common::{mac_diff, mac_max, max_abs, max_abs_diff, to_f64};
use eddy::reference as cpu;
use eddy::scene::{PreconditionerKind, Scene, Shape, SplitMix64};
use eddy::sim::views::Field;
use eddy::sim::{Simulation, Stage};

struct Case {
    scene: Scene,
    sim: Simulation,
    grid: cpu::Grid,
    pos: Vec<[f32; 4]>,
    vel: Vec<[f32; 4]>,
    solid: Vec<bool>,
    dt: f64,
}

/// A 14 x 12 x 10 tank with a solid block and a sphere, liquid in a box, particles moved to
/// random positions (outside solids) with random velocities up to 1 m/s.
fn case(nz: u32) -> Case {
    let mut scene = Scene {
        name: "stages".into(),
        domain: (1.4, 1.2, nz as f64 * 0.1),
        resolution: (14, 12, nz),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (1.0, 0.7, nz as f64 * 0.1),
            velocity: (0.0, 0.0, 0.0),
        }],
        solids: vec![
            Shape::Box {
                min: (1.0, 0.0, 0.0),
                max: (1.2, 0.3, nz as f64 * 0.05),
                velocity: (0.0, 0.0, 0.0),
            },
            Shape::Sphere {
                center: (0.5, 0.95, nz as f64 * 0.05),
                radius: 0.12,
                velocity: (0.3, -0.2, 0.0),
            },
        ],
        ..Scene::default()
    };
    scene.pressure.tolerance = 1e-5;
    scene.validate().unwrap();
    let sim = Simulation::new(common::gpu(), &scene).unwrap();
    let init = scene.initial_state();
    let solid: Vec<bool> = init.solid.iter().map(|s| *s != 0).collect();
    let [nx, ny, nz_] = scene.dims();
    let h = scene.h();
    let mut rng = SplitMix64(7);
    let n = sim.particles.count as usize;
    let mut pos = Vec::with_capacity(n);
    let mut vel = Vec::with_capacity(n);
    // Particles fill the lower 3/4 of the tank so there are FLUID, AIR and SOLID cells and
    // a ragged free surface, bunched toward the bottom (over-dense cells for the volume
    // correction, under-dense ones near the surface).
    while pos.len() < n {
        let p = [
            rng.next_f64() * nx as f64 * h,
            rng.next_f64().powf(1.5) * ny as f64 * h * 0.75,
            rng.next_f64() * nz_ as f64 * h,
        ];
        let c = |a: usize, n: u32| ((p[a] / h) as u32).min(n - 1);
        let cell = (c(0, nx) + nx * (c(1, ny) + ny * c(2, nz_))) as usize;
        if solid[cell] {
            continue;
        }
        pos.push([p[0] as f32, p[1] as f32, p[2] as f32, 0.0]);
        let mut v = [0f32; 4];
        for x in v.iter_mut().take(3) {
            *x = (rng.next_f64() * 2.0 - 1.0) as f32;
        }
        if nz_ == 1 {
            v[2] = 0.0;
        }
        vel.push(v);
    }
    let grid = cpu::Grid {
        nx: nx as usize,
        ny: ny as usize,
        nz: nz_ as usize,
        h,
    };
    Case {
        scene,
        sim,
        grid,
        pos,
        vel,
        solid,
        dt: 0.01,
    }
}

impl Case {
    /// Runs a fresh substep from the uploaded particles up to `last`.
    fn run_to(&mut self, last: Stage) -> eddy::sim::SubstepReport {
        self.sim.upload_particles(&self.pos, &self.vel).unwrap();
        self.sim.substep(self.dt, last).unwrap()
    }

    fn faces(&self, f: [Field; 3]) -> cpu::MacField {
        let r = |x| to_f64(&self.sim.read_field(x).unwrap().values);
        cpu::MacField {
            u: r(f[0]),
            v: r(f[1]),
            w: r(f[2]),
        }
    }

    fn vel_grid(&self) -> cpu::MacField {
        self.faces([Field::U, Field::V, Field::W])
    }

    fn cells(&self, f: Field) -> Vec<f64> {
        to_f64(&self.sim.read_field(f).unwrap().values)
    }

    fn types(&self) -> Vec<u8> {
        self.cells(Field::CellType)
            .iter()
            .map(|t| *t as u8)
            .collect()
    }

    fn solid_vel(&self) -> Vec<[f64; 3]> {
        self.scene
            .initial_state()
            .solid_velocity
            .iter()
            .map(|v| [v[0] as f64, v[1] as f64, v[2] as f64])
            .collect()
    }

    fn pos64(&self, p: &[[f32; 4]]) -> Vec<[f64; 3]> {
        p.iter()
            .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
            .collect()
    }
}

fn check_all_stages(nz: u32) {
    let mut c = case(nz);
    let g = &c.grid.clone();

    // P2G. Fixed point: momentum quantised to 2^-15 per particle contribution, so with
    // ~30 contributions per face the velocity error stays below 1e-4 m/s.
    c.run_to(Stage::P2g);
    let gpu_vel = c.vel_grid();
    let gpu_w = c.faces([Field::WeightU, Field::WeightV, Field::WeightW]);
    let gpu_count = c.cells(Field::ParticleCount);
    let r = cpu::p2g(g, &c.pos64(&c.pos), &c.pos64(&c.vel));
    assert!(mac_max(&r.vel) > 0.3, "P2G input is trivial");
    // Fixed point quantises each contribution's momentum to 2^-16 m/s; a face's velocity
    // error is that over its weight, so compare momentum (w*u) everywhere and velocity on
    // faces with at least a tenth of a particle's weight.
    let (mut e_mom, mut e_vel) = (0.0f64, 0.0f64);
    for comp in 0..3 {
        let (gv, rv, w) = (gpu_vel.comp(comp), r.vel.comp(comp), r.weight.comp(comp));
        for i in 0..w.len() {
            e_mom = e_mom.max((gv[i] * w[i] - rv[i] * w[i]).abs());
            if w[i] >= 0.1 {
                e_vel = e_vel.max((gv[i] - rv[i]).abs());
            }
        }
    }
    assert!(e_mom < 2e-4, "P2G momentum differs by {e_mom}");
    assert!(e_vel < 1e-3, "P2G velocity differs by {e_vel}");
    let e = mac_diff(&gpu_w, &r.weight);
    assert!(e < 1e-4, "P2G weight differs by {e}");
    let counts: Vec<f64> = r.count.iter().map(|x| *x as f64).collect();
    assert_eq!(gpu_count, counts, "particle counts differ");

    // Marking: exact, except cells whose density sits within float noise of the threshold.
    c.run_to(Stage::MarkCells);
    let types = c.types();
    let ppc = c.scene.particles_per_cell as f64;
    let expect = cpu::mark_cells(g, &r.count, &gpu_w, &c.solid, ppc);
    let density = c.cells(Field::Density);
    let expect_density = cpu::relative_density(g, &gpu_w, &c.solid, ppc);
    let e = max_abs_diff(&density, &expect_density);
    assert!(e < 1e-5, "density differs by {e}");
    assert!(
        density.iter().any(|d| *d > 1.2) && density.iter().any(|d| *d > 0.0 && *d < 0.5),
        "density input is trivial"
    );
    // The free surface's filtered density; later stages get the GPU's own.
    let level_set = c.cells(Field::LevelSet);
    let expect_surface = cpu::surface_density(g, &density, &c.solid);
    let e = max_abs_diff(
        &level_set,
        &expect_surface.iter().map(|s| 0.5 - s).collect::<Vec<_>>(),
    );
    assert!(e < 1e-5, "level set differs by {e}");
    let surface: Vec<f64> = level_set.iter().map(|l| 0.5 - l).collect();
    let mut mismatches = 0;
    for (i, (a, b)) in types.iter().zip(&expect).enumerate() {
        if a != b {
            mismatches += 1;
            assert!(mismatches < 3, "cell {i}: GPU type {a}, reference {b}");
        }
    }
    for t in [eddy::scene::AIR, eddy::scene::FLUID, eddy::scene::SOLID] {
        assert!(types.iter().any(|x| *x as u32 == t), "no cell of type {t}");
    }

    // Volume correction: its right-hand side, the solve with the free-surface matrix, and
    // the particles moved by the gradient of its solution. Later stages run without it so
    // they see the uploaded positions.
    let rep = c.run_to(Stage::VolumeCorrection);
    let b = c.cells(Field::Rhs);
    let rhs = cpu::volume_correction_rhs(g, &types, &density);
    assert!(max_abs(&rhs) > 0.0, "no over-dense cell");
    assert!(
        max_abs_diff(&b, &rhs) < 1e-5 * max_abs(&rhs),
        "volume rhs differs"
    );
    let a_ref = cpu::build_matrix_free_surface(g, &types, Some(&surface));
    let psi = cpu::direct_solve(g, &a_ref, &b);
    let psi_gpu: Vec<f64> = {
        let scale = c.dt / eddy::sim::DENSITY;
        c.cells(Field::Pressure).iter().map(|x| x * scale).collect()
    };
    // A solve cut short at CORRECTION_ITERATIONS: its f64 residual must be what the GPU
    // reported, and the potential near the exact one.
    let report = rep.correction.as_ref().unwrap();
    let ap = cpu::apply_packed(g, &a_ref, &psi_gpu);
    let res: Vec<f64> = b.iter().zip(&ap).map(|(x, y)| x - y).collect();
    let rel = max_abs(&res) / max_abs(&b);
    assert!(
        rel <= 1.01 * report.residual.max(1e-6) && rel < 0.3,
        "volume correction: f64 residual {rel}, reported {}",
        report.residual
    );
    assert!(
        report.iterations >= 1
            && report.iterations <= eddy::sim::volume_correction::CORRECTION_ITERATIONS,
        "{report:?}"
    );
    let err = max_abs_diff(&psi_gpu, &psi) / max_abs(&psi);
    assert!(
        err < 0.3,
        "volume correction potential relative error {err}"
    );
    let (moved, _) = c.sim.read_particles().unwrap();
    let expect =
        cpu::volume_correction_displace(g, &types, &surface, &c.solid, &psi_gpu, &c.pos64(&c.pos));
    let e = max_abs_diff(&c.pos64(&moved).concat(), &expect.concat());
    assert!(e < 1e-5, "volume correction moves differ by {e}");
    let shift = max_abs_diff(&c.pos64(&moved).concat(), &c.pos64(&c.pos).concat());
    assert!(shift > 1e-3 * g.h, "volume correction moved nothing");
    c.sim.scene.volume_correction = false;

    // Forces: f32 adds of g*dt, error ~1e-7.
    c.run_to(Stage::Forces);
    let after_forces = c.vel_grid();
    let mut expect = gpu_vel.clone();
    let grav = [c.scene.gravity.0, c.scene.gravity.1, c.scene.gravity.2];
    cpu::apply_forces(g, &types, &gpu_w, &mut expect, grav, c.dt);
    let e = mac_diff(&after_forces, &expect);
    assert!(e < 1e-5, "forces differ by {e}");

    // Boundary: copies of solid velocities, exact up to f32 rounding.
    c.run_to(Stage::Boundary);
    let after_boundary = c.vel_grid();
    let mut expect = after_forces.clone();
    cpu::apply_boundary(g, &types, &c.solid_vel(), &mut expect);
    let e = mac_diff(&after_boundary, &expect);
    assert!(e < 1e-6, "boundary differs by {e}");

    // Pressure: divergence, matrix, and the solve against an f64 solve to 1e-10.
    let rep = c.run_to(Stage::Pressure);
    let (div, rhs) = cpu::divergence(g, &types, &after_boundary);
    let e = max_abs_diff(&c.cells(Field::Divergence), &div);
    assert!(
        e < 1e-4 * max_abs(&div).max(1.0),
        "divergence differs by {e}"
    );
    let b = c.cells(Field::Rhs);
    assert!(max_abs_diff(&b, &rhs) < 1e-4 * max_abs(&rhs), "rhs differs");
    let a_ref = cpu::build_matrix_free_surface(g, &types, Some(&surface));
    assert!(
        a_ref.iter().any(|r| r[0].fract() != 0.0),
        "no free-surface fraction in the matrix"
    );
    let a_gpu: Vec<[f64; 4]> = (0..a_ref.len())
        .map(|i| {
            let f = |x: Field| c.sim.read_field(x).unwrap().values[i] as f64;
            [
                f(Field::ADiag),
                f(Field::APlusX),
                f(Field::APlusY),
                f(Field::APlusZ),
            ]
        })
        .collect();
    let e = a_gpu
        .iter()
        .zip(&a_ref)
        .map(|(x, y)| {
            (0..4)
                .map(|k| (x[k] - y[k]).abs() / y[k].abs().max(1.0))
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max);
    // 1/theta amplifies the f32 rounding of the level set where theta is small.
    assert!(e < 1e-5, "packed matrix differs by {e} (relative)");
    let (csr, rows) = cpu::assemble_csr(g, &types, &a_gpu);
    for (row, &cell) in rows.iter().enumerate() {
        let diag = csr
            .get_entry(row, row)
            .map(|e| e.into_value())
            .unwrap_or(0.0);
        assert_eq!(diag, a_gpu[cell][0], "CSR diagonal at cell {cell}");
    }
    assert_eq!(
        csr.nnz(),
        a_gpu.iter().filter(|r| r[0] != 0.0).count()
            + 2 * a_gpu
                .iter()
                .map(|r| r[1..].iter().filter(|x| **x != 0.0).count())
                .sum::<usize>()
    );
    let exact = cpu::direct_solve(g, &a_ref, &b);
    let p = c.cells(Field::Pressure);
    let scale = c.dt / eddy::sim::DENSITY;
    let phi: Vec<f64> = p.iter().map(|x| x * scale).collect();
    let err = max_abs_diff(&phi, &exact) / max_abs(&exact);
    assert!(err < 1e-3, "pressure relative error {err}");
    let solve = rep.solve.unwrap();
    assert!(solve.residual <= c.scene.pressure.tolerance);
    let ap = cpu::apply_packed(g, &a_ref, &phi);
    let res: Vec<f64> = b.iter().zip(&ap).map(|(x, y)| x - y).collect();
    let rel = max_abs(&res) / max_abs(&b);
    assert!(
        rel < 10.0 * c.scene.pressure.tolerance,
        "f64 residual of the GPU pressure {rel}"
    );

    // Projection of the GPU's velocities with the GPU's pressure.
    let rep = c.run_to(Stage::Project);
    let after_project = c.vel_grid();
    let mut expect = after_boundary.clone();
    cpu::project_free_surface(g, &types, Some(&surface), &phi, &mut expect);
    let e = mac_diff(&after_project, &expect);
    assert!(e < 1e-4, "projection differs by {e}");
    let (div_after, _) = cpu::divergence(g, &types, &after_project);
    assert!(max_abs(&div_after) <= 2.0 * c.scene.pressure.tolerance * max_abs(&div) + 1e-4);
    assert!((rep.max_divergence as f64 - max_abs(&div_after)).abs() < 1e-3);

    // Extrapolation (then the solid boundary again, as the step does).
    c.run_to(Stage::Extrapolate);
    let after_extrap = c.vel_grid();
    let mut expect = after_project.clone();
    cpu::extrapolate(
        g,
        &types,
        &gpu_w,
        &mut expect,
        c.scene.extrapolation_layers as usize,
    );
    cpu::apply_boundary(g, &types, &c.solid_vel(), &mut expect);
    let e = mac_diff(&after_extrap, &expect);
    assert!(e < 1e-5, "extrapolation differs by {e}");

    // Grid to particle.
    c.run_to(Stage::G2p);
    let (_, gvel) = c.sim.read_particles().unwrap();
    let old = c.faces([Field::UOld, Field::VOld, Field::WOld]);
    let expect = cpu::g2p(
        g,
        &c.pos64(&c.pos),
        &c.pos64(&c.vel),
        &after_extrap,
        &old,
        c.scene.pic_ratio,
    );
    let e = max_abs_diff(&c.pos64(&gvel).concat(), &expect.concat());
    assert!(e < 1e-4, "G2P differs by {e}");

    // Advection of the particles through the extrapolated grid.
    c.run_to(Stage::Advect);
    let (apos, avel) = c.sim.read_particles().unwrap();
    let mut epos = c.pos64(&c.pos);
    let mut evel = expect.clone();
    cpu::advect(g, &c.solid, &after_extrap, &mut epos, &mut evel, c.dt);
    let e = max_abs_diff(&c.pos64(&apos).concat(), &epos.concat());
    assert!(e < 1e-5, "advection positions differ by {e}");
    let e = max_abs_diff(&c.pos64(&avel).concat(), &evel.concat());
    assert!(e < 1e-4, "advection velocities differ by {e}");
    let moved = max_abs_diff(&c.pos64(&apos).concat(), &c.pos64(&c.pos).concat());
    assert!(moved > 1e-3, "particles did not move");
}

#[test]
fn every_stage_matches_the_reference_3d() {
    check_all_stages(10);
}

#[test]
fn every_stage_matches_the_reference_on_one_slice() {
    check_all_stages(1);
}

#[test]
fn gpu_preconditioners_match_the_reference_and_are_positive() {
    let mut c = case(10);
    c.run_to(Stage::Pressure);
    let g = c.grid.clone();
    let types = c.types();
    let surface: Vec<f64> = c.cells(Field::LevelSet).iter().map(|l| 0.5 - l).collect();
    let a = cpu::build_matrix_free_surface(&g, &types, Some(&surface));
    let mut rng = SplitMix64(11);
    let r: Vec<f32> = types
        .iter()
        .map(|t| {
            if *t as u32 == eddy::scene::FLUID {
                (rng.next_f64() * 2.0 - 1.0) as f32
            } else {
                0.0
            }
        })
        .collect();
    let r64 = to_f64(&r);
    for kind in PreconditionerKind::ALL {
        let z = to_f64(&c.sim.apply_preconditioner(kind, &r).unwrap());
        let expect = cpu::Preconditioner::from(kind).apply(&g, &types, &a, &r64);
        let e = max_abs_diff(&z, &expect) / max_abs(&expect);
        assert!(e < 1e-4, "{kind}: GPU z differs from the reference by {e}");
        let zr: f64 = z.iter().zip(&r64).map(|(a, b)| a * b).sum();
        assert!(zr > 0.0, "{kind}: z.r = {zr}");
    }
}

#[test]
fn gpu_pressure_matches_an_f64_solve_for_every_preconditioner() {
    for n in [16, 32] {
        let mut scene = eddy::scene::StandardProblem::SettledPool.scene(n);
        // A moving column over the pool gives a free surface with structure.
        scene.fluid.push(Shape::Box {
            min: (0.1, 0.4, 0.1),
            max: (0.3, 0.7, 0.4),
            velocity: (0.5, -0.5, 0.2),
        });
        scene.pressure.tolerance = 1e-5;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        sim.step_frame().unwrap();
        sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
        let [nx, ny, nz] = scene.dims();
        let g = cpu::Grid {
            nx: nx as usize,
            ny: ny as usize,
            nz: nz as usize,
            h: scene.h(),
        };
        let types: Vec<u8> = sim
            .read_field(Field::CellType)
            .unwrap()
            .values
            .iter()
            .map(|t| *t as u8)
            .collect();
        let surface: Vec<f64> = to_f64(&sim.read_field(Field::LevelSet).unwrap().values)
            .iter()
            .map(|l| 0.5 - l)
            .collect();
        for kind in PreconditionerKind::ALL {
            let mut s = scene.clone();
            s.pressure.preconditioner = kind;
            sim.apply_live_settings(&s).unwrap();
            let rep = sim.solve_pressure_again().unwrap();
            let b = to_f64(&sim.read_field(Field::Rhs).unwrap().values);
            let a = cpu::build_matrix_free_surface(&g, &types, Some(&surface));
            let exact = cpu::direct_solve(&g, &a, &b);
            let dt = sim.fields.params.dt as f64;
            let phi: Vec<f64> = sim
                .read_field(Field::Pressure)
                .unwrap()
                .values
                .iter()
                .map(|p| *p as f64 * dt / eddy::sim::DENSITY)
                .collect();
            let err = max_abs_diff(&phi, &exact) / max_abs(&exact);
            let ap = cpu::apply_packed(&g, &a, &phi);
            let res = b
                .iter()
                .zip(&ap)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
                / max_abs(&b);
            println!(
                "{n}^3 {kind}: {} iterations, relative error {err:.2e}, f64 residual {res:.2e}",
                rep.iterations
            );
            assert!(err < 1e-3, "{n}^3 {kind}: relative error {err}");
            assert!(
                res < 10.0 * s.pressure.tolerance,
                "{n}^3 {kind}: f64 residual {res}"
            );
        }
    }
}
