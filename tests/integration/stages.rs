//! Every GPU stage against the f64 CPU reference, on random non-trivial input.
//!
//! Each stage is fed the GPU's own output of the stage before it (read back), so a
//! mismatch points at one stage. Tolerances are stated per stage with the reason.
//!
//! One substep is run up to each stage once per case (the 3D tank and its one-cell slice)
//! and every buffer a check needs is read back once ([`Outputs`], shared by the tests of
//! this binary); each stage's test then compares those outputs with the reference.

use crate::common;

use common::{mac_diff, mac_max, max_abs, max_abs_diff, to_f64};
use eddy::reference as cpu;
use eddy::scene::{PreconditionerKind, Scene, Shape, SplitMix64};
use eddy::sim::{liquid::views::Field, LiquidSubstep, Simulation, Stage};

type SubstepReport = eddy::sim::SubstepReport<LiquidSubstep>;
use std::sync::OnceLock;

struct Case {
    scene: Scene,
    sim: Simulation,
    grid: cpu::Grid,
    pos: Vec<[f32; 4]>,
    vel: Vec<[f32; 4]>,
    solid: Vec<bool>,
    dt: f64,
}

/// A 14 x 12 x 10 tank with a solid block and a moving sphere in the liquid, both cutting
/// faces (neither lies on the grid's lines), liquid in a box, particles moved to random
/// positions (outside solids) with random velocities up to 1 m/s.
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
                max: (1.2, 0.33, nz as f64 * 0.05),
                velocity: (0.0, 0.0, 0.0),
            },
            Shape::Sphere {
                center: (0.5, 0.35, nz as f64 * 0.05),
                radius: 0.17,
                velocity: (0.3, -0.2, 0.0),
            },
        ],
        ..Scene::default()
    };
    scene.pressure.tolerance = 1e-5;
    scene.validate().unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    // The solves' vectors are read after later stages (the volume correction's right-hand
    // side after its gradient took their room), as the viewer reads them.
    sim.keep_solver_vectors();
    // The P2G weights and the divergence are read too, as the viewer reads them.
    sim.keep_grid_views();
    let init = scene.initial_state();
    let solid: Vec<bool> = init.solid.iter().map(|s| *s != 0).collect();
    let [nx, ny, nz_] = scene.dims();
    let h = scene.h();
    let mut rng = SplitMix64(7);
    let n = sim.mode.particles.count as usize;
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
    fn run_to(&mut self, last: Stage) -> SubstepReport {
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

    /// A cell field, read once.
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
}

/// What the GPU left after a substep run up to each stage, read back once, with the input
/// it started from. Later stages run without the volume correction (which moves the
/// particles after G2P), so they see the uploaded positions.
struct Outputs {
    scene: Scene,
    grid: cpu::Grid,
    pos: Vec<[f32; 4]>,
    vel: Vec<[f32; 4]>,
    solid: Vec<bool>,
    solid_vel: Vec<[f64; 3]>,
    /// The static solids' cut faces (the sphere cuts some).
    cut: Option<cpu::Cut>,
    dt: f64,
    /// P2G: face velocities, face weights and particles per cell.
    p2g_vel: cpu::MacField,
    p2g_weight: cpu::MacField,
    p2g_count: Vec<f64>,
    /// Marking: cell types, relative density and the free surface's level set.
    types: Vec<u8>,
    density: Vec<f64>,
    level_set: Vec<f64>,
    /// Volume correction: its right-hand side, its pressure-scaled potential and the
    /// particles it moved.
    correction: SubstepReport,
    correction_rhs: Vec<f64>,
    correction_pressure: Vec<f64>,
    /// The particles after the correction's stage (not moved yet), and after G2P with the
    /// correction on: moved, with the velocities they gathered before.
    before_g2p: Vec<[f32; 4]>,
    corrected_pos: Vec<[f32; 4]>,
    corrected_g2p_vel: Vec<[f32; 4]>,
    after_forces: cpu::MacField,
    after_boundary: cpu::MacField,
    /// Pressure: divergence, right-hand side, the packed matrix's four entries per cell
    /// and the solution.
    pressure_report: SubstepReport,
    divergence: Vec<f64>,
    rhs: Vec<f64>,
    matrix: Vec<[f64; 4]>,
    pressure: Vec<f64>,
    project_report: SubstepReport,
    after_project: cpu::MacField,
    after_extrapolate: cpu::MacField,
    /// G2P: the particle velocities and the grid velocities it took the FLIP change from.
    g2p_vel: Vec<[f32; 4]>,
    before_forces: cpu::MacField,
    /// Spacing: the positions after the push-apart.
    spaced_pos: Vec<[f32; 4]>,
    /// Advection, and the particle statistics recorded after it: the substep's max speed
    /// and front, and the kinetic-energy partial sums per 64-particle workgroup.
    advect_report: SubstepReport,
    advected_pos: Vec<[f32; 4]>,
    advected_vel: Vec<[f32; 4]>,
    energy: Vec<f32>,
}

impl Outputs {
    fn run(nz: u32) -> Self {
        let mut c = case(nz);
        c.run_to(Stage::P2g);
        let p2g_vel = c.vel_grid();
        let p2g_weight = c.faces([Field::WeightU, Field::WeightV, Field::WeightW]);
        let p2g_count = c.cells(Field::ParticleCount);

        c.run_to(Stage::MarkCells);
        let types = c.types();
        let density = c.cells(Field::Density);
        let level_set = c.cells(Field::LevelSet);

        let correction = c.run_to(Stage::VolumeCorrection);
        let correction_rhs = c.cells(Field::Rhs);
        let correction_pressure = c.cells(Field::Pressure);
        let (before_g2p, _) = c.sim.read_particles().unwrap();
        // The particles move after G2P (volume_correction.rs), which gathers where they were.
        c.run_to(Stage::G2p);
        let (corrected_pos, corrected_g2p_vel) = c.sim.read_particles().unwrap();
        c.sim.scene.volume_correction = false;

        c.run_to(Stage::Forces);
        let after_forces = c.vel_grid();

        c.run_to(Stage::Boundary);
        let after_boundary = c.vel_grid();

        let pressure_report = c.run_to(Stage::Pressure);
        let divergence = c.cells(Field::Divergence);
        let rhs = c.cells(Field::Rhs);
        let [diag, plus_x, plus_y, plus_z] =
            [Field::ADiag, Field::APlusX, Field::APlusY, Field::APlusZ].map(|f| c.cells(f));
        let matrix = (0..diag.len())
            .map(|i| [diag[i], plus_x[i], plus_y[i], plus_z[i]])
            .collect();
        let pressure = c.cells(Field::Pressure);

        let project_report = c.run_to(Stage::Project);
        let after_project = c.vel_grid();

        c.run_to(Stage::Extrapolate);
        let after_extrapolate = c.vel_grid();

        c.run_to(Stage::G2p);
        let (_, g2p_vel) = c.sim.read_particles().unwrap();
        let before_forces = c.faces([Field::UOld, Field::VOld, Field::WOld]);

        c.run_to(Stage::Spacing);
        let (spaced_pos, _) = c.sim.read_particles().unwrap();

        let advect_report = c.run_to(Stage::Advect);
        let (advected_pos, advected_vel) = c.sim.read_particles().unwrap();
        let energy = eddy::gpu::read_buffer(&c.sim.ctx, &c.sim.mode.particles.energy).unwrap();

        Outputs {
            solid_vel: c.solid_vel(),
            cut: cpu::Cut::of_scene(&c.grid, &c.scene),
            scene: c.scene,
            grid: c.grid,
            pos: c.pos,
            vel: c.vel,
            solid: c.solid,
            dt: c.dt,
            p2g_vel,
            p2g_weight,
            p2g_count,
            types,
            density,
            level_set,
            correction,
            correction_rhs,
            correction_pressure,
            before_g2p,
            corrected_pos,
            corrected_g2p_vel,
            after_forces,
            after_boundary,
            pressure_report,
            divergence,
            rhs,
            matrix,
            pressure,
            project_report,
            after_project,
            after_extrapolate,
            g2p_vel,
            before_forces,
            spaced_pos,
            advect_report,
            advected_pos,
            advected_vel,
            energy,
        }
    }

    /// The reference's spacing of the uploaded particles with the GPU's cell types.
    fn spacing_reference(&self) -> Vec<[f64; 3]> {
        cpu::push_apart(
            &self.grid,
            &self.solid,
            &self.types,
            &pos64(&self.pos),
            eddy::sim::liquid::spacing::min_distance(
                self.grid.h,
                self.scene.particles_per_cell,
                self.scene.particle_spacing,
            ),
            eddy::sim::liquid::spacing::STRENGTH as f64,
        )
    }

    /// The filtered density at the free surface (from the GPU's level set).
    fn surface(&self) -> Vec<f64> {
        self.level_set.iter().map(|l| 0.5 - l).collect()
    }

    /// The GPU's pressure as the potential phi = p dt / rho.
    fn phi(&self) -> Vec<f64> {
        let scale = self.dt / eddy::sim::DENSITY;
        self.pressure.iter().map(|x| x * scale).collect()
    }

    /// The reference's P2G of the uploaded particles.
    fn p2g_reference(&self) -> cpu::P2gResult {
        cpu::p2g(&self.grid, &pos64(&self.pos), &pos64(&self.vel))
    }

    /// The reference's G2P of the uploaded particles through the GPU's grids.
    fn g2p_reference(&self) -> Vec<[f64; 3]> {
        cpu::g2p(
            &self.grid,
            &pos64(&self.pos),
            &pos64(&self.vel),
            &self.after_extrapolate,
            &self.before_forces,
            self.scene.pic_ratio,
        )
    }
}

/// The outputs of the 3D tank (`nz` 10) or of its one-cell slice (`nz` 1), run once per
/// test binary.
fn outputs(nz: u32) -> &'static Outputs {
    static THREE_D: OnceLock<Outputs> = OnceLock::new();
    static SLICE: OnceLock<Outputs> = OnceLock::new();
    let cell = match nz {
        10 => &THREE_D,
        1 => &SLICE,
        _ => unreachable!("no fixture for nz = {nz}"),
    };
    cell.get_or_init(|| Outputs::run(nz))
}

fn pos64(p: &[[f32; 4]]) -> Vec<[f64; 3]> {
    p.iter()
        .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
        .collect()
}

/// P2G. Fixed point: momentum quantised to 2^-15 per particle contribution, so with ~30
/// contributions per face the velocity error stays below 1e-4 m/s.
fn check_p2g(o: &Outputs) {
    let r = o.p2g_reference();
    assert!(mac_max(&r.vel) > 0.3, "P2G input is trivial");
    // Fixed point quantises each contribution's momentum to 2^-16 m/s; a face's velocity
    // error is that over its weight, so compare momentum (w*u) everywhere and velocity on
    // faces with at least a tenth of a particle's weight.
    let (mut e_mom, mut e_vel) = (0.0f64, 0.0f64);
    for comp in 0..3 {
        let (gv, rv, w) = (o.p2g_vel.comp(comp), r.vel.comp(comp), r.weight.comp(comp));
        for i in 0..w.len() {
            e_mom = e_mom.max((gv[i] * w[i] - rv[i] * w[i]).abs());
            if w[i] >= 0.1 {
                e_vel = e_vel.max((gv[i] - rv[i]).abs());
            }
        }
    }
    assert!(e_mom < 2e-4, "P2G momentum differs by {e_mom}");
    assert!(e_vel < 1e-3, "P2G velocity differs by {e_vel}");
    let e = mac_diff(&o.p2g_weight, &r.weight);
    assert!(e < 1e-4, "P2G weight differs by {e}");
    let counts: Vec<f64> = r.count.iter().map(|x| *x as f64).collect();
    assert_eq!(o.p2g_count, counts, "particle counts differ");
}

/// Marking: exact, except cells whose density sits within float noise of the threshold.
fn check_mark_cells(o: &Outputs) {
    let g = &o.grid;
    let r = o.p2g_reference();
    let ppc = o.scene.particles_per_cell as f64;
    let expect = cpu::mark_cells_cut(g, &r.count, &o.p2g_weight, &o.solid, ppc, o.cut.as_ref());
    let density = &o.density;
    let expect_density = cpu::relative_density(g, &o.p2g_weight, &o.solid, ppc);
    let e = max_abs_diff(density, &expect_density);
    assert!(e < 1e-5, "density differs by {e}");
    assert!(
        density.iter().any(|d| *d > 1.2) && density.iter().any(|d| *d > 0.0 && *d < 0.5),
        "density input is trivial"
    );
    // The free surface's filtered density; later stages get the GPU's own.
    let expect_surface = cpu::surface_density(g, density, &o.solid);
    let e = max_abs_diff(
        &o.level_set,
        &expect_surface.iter().map(|s| 0.5 - s).collect::<Vec<_>>(),
    );
    assert!(e < 1e-5, "level set differs by {e}");
    let types = &o.types;
    let mut mismatches = 0;
    for (i, (a, b)) in types.iter().zip(&expect).enumerate() {
        if a != b {
            mismatches += 1;
            assert!(mismatches < 3, "cell {i}: GPU type {a}, reference {b}");
        }
    }
    // (On the slice the block covers half the cells' depth: it cuts them all, none is SOLID.)
    let kinds: &[u32] = if g.nz > 1 {
        &[eddy::scene::AIR, eddy::scene::FLUID, eddy::scene::SOLID]
    } else {
        &[eddy::scene::AIR, eddy::scene::FLUID]
    };
    for &t in kinds {
        assert!(types.iter().any(|x| *x as u32 == t), "no cell of type {t}");
    }
    // Cut cells next to the liquid are FLUID, others AIR.
    let cut = o.cut.as_ref().expect("the solids cut faces");
    let cut_types: Vec<u8> = (0..g.cells())
        .filter(|&c| cut.is_partial(c))
        .map(|c| types[c])
        .collect();
    assert!(
        cut_types.contains(&eddy::reference::FLUID),
        "no wet cut cell"
    );
}

/// Volume correction: its right-hand side, the solve with the free-surface matrix, and the
/// particles moved by the gradient of its solution.
fn check_volume_correction(o: &Outputs) {
    let g = &o.grid;
    let types = &o.types;
    let surface = o.surface();
    let b = &o.correction_rhs;
    let rhs = cpu::volume_correction_rhs_cut(g, types, &o.density, o.cut.as_ref());
    assert!(max_abs(&rhs) > 0.0, "no over-dense cell");
    assert!(
        max_abs_diff(b, &rhs) < 1e-5 * max_abs(&rhs),
        "volume rhs differs"
    );
    let a_ref = cpu::build_matrix_cut(g, types, Some(&surface), o.cut.as_ref());
    let psi = cpu::direct_solve(g, &a_ref, b);
    let psi_gpu: Vec<f64> = {
        let scale = o.dt / eddy::sim::DENSITY;
        o.correction_pressure.iter().map(|x| x * scale).collect()
    };
    // A solve cut short at CORRECTION_ITERATIONS: its f64 residual must be what the GPU
    // reported, and the potential near the exact one.
    let report = o.correction.extra.correction.as_ref().unwrap();
    let ap = cpu::apply_packed(g, &a_ref, &psi_gpu);
    let res: Vec<f64> = b.iter().zip(&ap).map(|(x, y)| x - y).collect();
    let rel = max_abs(&res) / max_abs(b);
    assert!(
        rel <= 1.01 * report.residual.max(1e-6) && rel < 0.3,
        "volume correction: f64 residual {rel}, reported {}",
        report.residual
    );
    assert!(
        report.iterations >= 1
            && report.iterations <= eddy::sim::liquid::volume_correction::CORRECTION_ITERATIONS,
        "{report:?}"
    );
    let err = max_abs_diff(&psi_gpu, &psi) / max_abs(&psi);
    assert!(
        err < 0.3,
        "volume correction potential relative error {err}"
    );
    let moved = pos64(&o.corrected_pos);
    let expect = cpu::volume_correction_displace_cut(
        g,
        types,
        &surface,
        o.cut.as_ref(),
        &o.solid,
        &psi_gpu,
        &pos64(&o.pos),
    );
    let e = max_abs_diff(&moved.concat(), &expect.concat());
    assert!(e < 1e-5, "volume correction moves differ by {e}");
    let shift = max_abs_diff(&moved.concat(), &pos64(&o.pos).concat());
    assert!(shift > 1e-3 * g.h, "volume correction moved nothing");
    // They move after G2P: up to the correction's own stage they stay put, and G2P hands
    // them the velocities of the uncorrected run, gathered where P2G found them (the
    // pressure solve weighs each face with those particles).
    assert_eq!(o.before_g2p, o.pos, "the particles moved before G2P");
    let expect = o.g2p_reference();
    let e = max_abs_diff(&pos64(&o.corrected_g2p_vel).concat(), &expect.concat());
    assert!(e < 1e-4, "G2P with the correction on differs by {e}");
}

/// Forces: f32 adds of g*dt, error ~1e-7.
fn check_forces(o: &Outputs) {
    let mut expect = o.p2g_vel.clone();
    let grav = [o.scene.gravity.0, o.scene.gravity.1, o.scene.gravity.2];
    cpu::apply_forces(&o.grid, &o.types, &o.p2g_weight, &mut expect, grav, o.dt);
    let e = mac_diff(&o.after_forces, &expect);
    assert!(e < 1e-5, "forces differ by {e}");
}

/// Boundary: copies of solid velocities, exact up to f32 rounding.
fn check_boundary(o: &Outputs) {
    let mut expect = o.after_forces.clone();
    cpu::apply_boundary_cut(&o.grid, &o.types, &o.solid_vel, o.cut.as_ref(), &mut expect);
    let e = mac_diff(&o.after_boundary, &expect);
    assert!(e < 1e-6, "boundary differs by {e}");
}

/// Pressure: divergence, matrix, and the solve against an f64 solve to 1e-10.
fn check_pressure(o: &Outputs) {
    let g = &o.grid;
    let types = &o.types;
    let cut = o.cut.as_ref();
    let (div, rhs) = cpu::divergence_cut(g, types, &o.after_boundary, cut);
    let e = max_abs_diff(&o.divergence, &div);
    assert!(
        e < 1e-4 * max_abs(&div).max(1.0),
        "divergence differs by {e}"
    );
    let b = &o.rhs;
    assert!(max_abs_diff(b, &rhs) < 1e-4 * max_abs(&rhs), "rhs differs");
    let a_ref = cpu::build_matrix_cut(g, types, Some(&o.surface()), cut);
    assert!(
        a_ref.iter().any(|r| r[0].fract() != 0.0),
        "no free-surface fraction in the matrix"
    );
    // The sphere's cut faces reach the matrix: a fractional coupling between two FLUID cells.
    assert!(
        a_ref
            .iter()
            .any(|r| r[1..].iter().any(|x| *x != 0.0 && x.fract() != 0.0)),
        "no cut face in the matrix"
    );
    let a_gpu = &o.matrix;
    assert_eq!(a_gpu.len(), a_ref.len());
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
    let (csr, rows) = cpu::assemble_csr(g, types, a_gpu);
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
    let exact = cpu::direct_solve(g, &a_ref, b);
    let phi = o.phi();
    let err = max_abs_diff(&phi, &exact) / max_abs(&exact);
    assert!(err < 1e-3, "pressure relative error {err}");
    let solve = o.pressure_report.solve.as_ref().unwrap();
    assert!(solve.residual <= o.scene.pressure.tolerance);
    let ap = cpu::apply_packed(g, &a_ref, &phi);
    let res: Vec<f64> = b.iter().zip(&ap).map(|(x, y)| x - y).collect();
    let rel = max_abs(&res) / max_abs(b);
    assert!(
        rel < 10.0 * o.scene.pressure.tolerance,
        "f64 residual of the GPU pressure {rel}"
    );
}

/// Projection of the GPU's velocities with the GPU's pressure.
fn check_project(o: &Outputs) {
    let g = &o.grid;
    let types = &o.types;
    let mut expect = o.after_boundary.clone();
    let cut = o.cut.as_ref();
    cpu::project_cut(g, types, Some(&o.surface()), cut, &o.phi(), &mut expect);
    let e = mac_diff(&o.after_project, &expect);
    assert!(e < 1e-4, "projection differs by {e}");
    let (div, _) = cpu::divergence_cut(g, types, &o.after_boundary, cut);
    let (div_after, _) = cpu::divergence_cut(g, types, &o.after_project, cut);
    assert!(max_abs(&div_after) <= 2.0 * o.scene.pressure.tolerance * max_abs(&div) + 1e-4);
    assert!((o.project_report.max_divergence as f64 - max_abs(&div_after)).abs() < 1e-3);
}

/// Extrapolation (then the solid boundary again, as the step does).
fn check_extrapolate(o: &Outputs) {
    let mut expect = o.after_project.clone();
    cpu::extrapolate(
        &o.grid,
        &o.types,
        &o.p2g_weight,
        &mut expect,
        o.scene.extrapolation_layers as usize,
    );
    cpu::apply_boundary_cut(&o.grid, &o.types, &o.solid_vel, o.cut.as_ref(), &mut expect);
    let e = mac_diff(&o.after_extrapolate, &expect);
    assert!(e < 1e-5, "extrapolation differs by {e}");
}

/// Grid to particle.
fn check_g2p(o: &Outputs) {
    let expect = o.g2p_reference();
    let e = max_abs_diff(&pos64(&o.g2p_vel).concat(), &expect.concat());
    assert!(e < 1e-4, "G2P differs by {e}");
}

/// Spacing (on by default): particles inside the liquid pushed apart, positions only.
fn check_spacing(o: &Outputs) {
    assert!(o.scene.particle_spacing > 0.0);
    let expect = o.spacing_reference();
    let e = max_abs_diff(&pos64(&o.spaced_pos).concat(), &expect.concat());
    assert!(e < 1e-6, "spacing differs by {e}");
    let moved = max_abs_diff(&pos64(&o.spaced_pos).concat(), &pos64(&o.pos).concat());
    assert!(moved > 1e-4 * o.grid.h, "spacing moved nothing");
}

/// Advection of the spaced particles through the extrapolated grid.
fn check_advect(o: &Outputs) {
    let mut epos = o.spacing_reference();
    let mut evel = o.g2p_reference();
    cpu::advect(
        &o.grid,
        &o.solid,
        &o.after_extrapolate,
        &mut epos,
        &mut evel,
        o.dt,
    );
    let (apos, avel) = (pos64(&o.advected_pos), pos64(&o.advected_vel));
    let e = max_abs_diff(&apos.concat(), &epos.concat());
    assert!(e < 1e-5, "advection positions differ by {e}");
    let e = max_abs_diff(&avel.concat(), &evel.concat());
    assert!(e < 1e-4, "advection velocities differ by {e}");
    let moved = max_abs_diff(&apos.concat(), &pos64(&o.pos).concat());
    assert!(moved > 1e-3, "particles did not move");
}

/// The liquid's particle statistics (src/sim/liquid/stats.wgsl, run after advection) against the
/// reference's `particle_stats` of the advected particles: the max speed (f32 sqrt of an
/// f32 dot, ~1e-7 relative), the front (an integer max over the same f32 values, exact) and
/// the kinetic energy, each workgroup's partial sum (a tree of 64 f32 adds, ~1e-6
/// relative) and their total with the mass per particle that stats.csv uses.
fn check_particle_stats(o: &Outputs) {
    let (pos, vel) = (pos64(&o.advected_pos), pos64(&o.advected_vel));
    let (max_speed, front, _) = cpu::particle_stats(&pos, &vel, 1.0);
    let h = o.grid.h;
    assert!(
        max_speed > 0.5 && front > 0.5 * o.grid.nx as f64 * h,
        "particle statistics input is trivial: max speed {max_speed}, front {front}"
    );
    let r = &o.advect_report;
    let e = (r.max_speed as f64 - max_speed).abs() / max_speed;
    assert!(e < 1e-6, "max speed {} vs {max_speed}", r.max_speed);
    assert_eq!(r.front_x as f64, front, "front");
    // One partial sum per workgroup of 64 particles, the last one partly filled.
    let groups = pos.len().div_ceil(64);
    assert!(groups > 2, "only {groups} workgroups of particles");
    assert!(o.energy.len() >= groups);
    for (k, partial) in o.energy[..groups].iter().enumerate() {
        let chunk = 64 * k..(64 * k + 64).min(pos.len());
        let (_, _, expect) = cpu::particle_stats(&pos[chunk.clone()], &vel[chunk.clone()], 1.0);
        let e = (*partial as f64 - expect).abs() / expect;
        assert!(
            e < 1e-5,
            "kinetic energy of particles {chunk:?}: GPU {partial}, reference {expect}"
        );
    }
    let mass = eddy::sim::DENSITY * h * h * h / o.scene.particles_per_cell as f64;
    let (_, _, ke) = cpu::particle_stats(&pos, &vel, mass);
    let gpu_ke = o.energy[..groups].iter().map(|e| *e as f64).sum::<f64>() * mass;
    let e = (gpu_ke - ke).abs() / ke;
    assert!(e < 1e-5, "kinetic energy: GPU {gpu_ke}, reference {ke}");
}

/// One test per stage and case: `$three_d` on the 14 x 12 x 10 tank, `$slice` on its
/// one-cell-thick slice.
macro_rules! stage_tests {
    ($($check:ident => $three_d:ident, $slice:ident;)*) => {$(
        #[test]
        fn $three_d() {
            $check(outputs(10));
        }

        #[test]
        fn $slice() {
            $check(outputs(1));
        }
    )*};
}

stage_tests! {
    check_p2g => p2g_matches_the_reference_3d, p2g_matches_the_reference_on_one_slice;
    check_mark_cells =>
        mark_cells_matches_the_reference_3d, mark_cells_matches_the_reference_on_one_slice;
    check_volume_correction =>
        volume_correction_matches_the_reference_3d,
        volume_correction_matches_the_reference_on_one_slice;
    check_forces => forces_match_the_reference_3d, forces_match_the_reference_on_one_slice;
    check_boundary =>
        boundary_matches_the_reference_3d, boundary_matches_the_reference_on_one_slice;
    check_pressure =>
        pressure_matches_the_reference_3d, pressure_matches_the_reference_on_one_slice;
    check_project =>
        projection_matches_the_reference_3d, projection_matches_the_reference_on_one_slice;
    check_extrapolate =>
        extrapolation_matches_the_reference_3d,
        extrapolation_matches_the_reference_on_one_slice;
    check_g2p => g2p_matches_the_reference_3d, g2p_matches_the_reference_on_one_slice;
    check_spacing => spacing_matches_the_reference_3d, spacing_matches_the_reference_on_one_slice;
    check_advect => advection_matches_the_reference_3d, advection_matches_the_reference_on_one_slice;
    check_particle_stats =>
        particle_stats_match_the_reference_3d, particle_stats_match_the_reference_on_one_slice;
}

#[test]
fn gpu_preconditioners_match_the_reference_and_are_positive() {
    let mut c = case(10);
    c.run_to(Stage::Pressure);
    let g = c.grid;
    let types = c.types();
    let surface: Vec<f64> = c.cells(Field::LevelSet).iter().map(|l| 0.5 - l).collect();
    let cut = cpu::Cut::of_scene(&g, &c.scene);
    let a = cpu::build_matrix_cut(&g, &types, Some(&surface), cut.as_ref());
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
            let cut = cpu::Cut::of_scene(&g, &scene);
            let a = cpu::build_matrix_cut(&g, &types, Some(&surface), cut.as_ref());
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

/// The cut faces as a field (`eddy view --field open_u`): the fractions of the scene's
/// solids, as the f64 geometry gives them.
#[test]
fn open_face_fields_show_the_scenes_cut_faces() {
    let c = case(10);
    let cut = cpu::Cut::of_scene(&c.grid, &c.scene).expect("the case's solids cut faces");
    for (comp, field) in [Field::OpenU, Field::OpenV, Field::OpenW]
        .into_iter()
        .enumerate()
    {
        let gpu = to_f64(&c.sim.read_field(field).unwrap().values);
        assert_eq!(gpu, *cut.open.comp(comp), "{}", field.id());
    }
    assert!(cut.open.u.iter().any(|f| *f > 0.0 && *f < 1.0));
}
