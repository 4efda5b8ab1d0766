//! APIC: the GPU transfers against the f64 reference on random particles, velocities and
//! affine matrices; the live switch; and the angular momentum of a rotating blob.

use crate::common;

use common::{mac_max, max_abs, max_abs_diff, to_f64};
use eddy::bench::transfer::{relative_change, rotating_blob, Variant};
use eddy::reference as cpu;
use eddy::scene::{Scene, Shape, SplitMix64, TransferKind};
use eddy::sim::{liquid::views::Field, Simulation, Stage};

struct Case {
    sim: Simulation,
    grid: cpu::Grid,
    pos: Vec<[f32; 4]>,
    vel: Vec<[f32; 4]>,
    affine: Vec<[f32; 4]>,
}

/// A 12 x 10 x nz tank, particles at random positions in its lower 3/4 with random
/// velocities up to 1 m/s and random affine matrices up to 5 1/s per entry.
fn case(nz: u32) -> Case {
    let h = 0.1;
    let scene = Scene {
        name: "apic".into(),
        domain: (1.2, 1.0, nz as f64 * h),
        resolution: (12, 10, nz),
        fluid: vec![Shape::Box {
            min: (0.0, 0.0, 0.0),
            max: (0.9, 0.6, nz as f64 * h),
            velocity: (0.0, 0.0, 0.0),
        }],
        transfer: TransferKind::Apic,
        // G2P is compared at the uploaded positions; the correction would move them first
        // (tests/integration/stages.rs checks it).
        volume_correction: false,
        ..Scene::default()
    };
    scene.validate().unwrap();
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    // The P2G weights are read (a view's field).
    sim.keep_grid_views();
    let [nx, ny, _] = scene.dims();
    let mut rng = SplitMix64(23);
    let mut r = |scale: f64| ((rng.next_f64() * 2.0 - 1.0) * scale) as f32;
    let n = sim.mode.particles.count as usize;
    let mut pos = Vec::with_capacity(n);
    let mut vel = Vec::with_capacity(n);
    let mut affine = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let x = [
            (r(0.5) + 0.5) * (nx as f32 * h as f32),
            (r(0.5) + 0.5) * (ny as f32 * h as f32 * 0.75),
            (r(0.5) + 0.5) * (nz as f32 * h as f32),
        ];
        pos.push([x[0], x[1], x[2], 0.0]);
        let flat = nz == 1;
        vel.push([r(1.0), r(1.0), if flat { 0.0 } else { r(1.0) }, 0.0]);
        for _ in 0..3 {
            affine.push([r(5.0), r(5.0), if flat { 0.0 } else { r(5.0) }, 0.0]);
        }
    }
    let grid = cpu::Grid {
        nx: nx as usize,
        ny: ny as usize,
        nz: nz as usize,
        h,
    };
    Case {
        sim,
        grid,
        pos,
        vel,
        affine,
    }
}

fn v3(p: &[[f32; 4]]) -> Vec<[f64; 3]> {
    p.iter()
        .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
        .collect()
}

fn matrices(rows: &[[f32; 4]]) -> Vec<cpu::Affine> {
    rows.chunks_exact(3)
        .map(|m| [0, 1, 2].map(|r| [0, 1, 2].map(|c| m[r][c] as f64)))
        .collect()
}

impl Case {
    fn run_to(&mut self, last: Stage) {
        self.sim.upload_particles(&self.pos, &self.vel).unwrap();
        self.sim.upload_affine(&self.affine).unwrap();
        self.sim.substep(0.01, last).unwrap();
    }

    fn faces(&self, f: [Field; 3]) -> cpu::MacField {
        let r = |x| to_f64(&self.sim.read_field(x).unwrap().values);
        cpu::MacField {
            u: r(f[0]),
            v: r(f[1]),
            w: r(f[2]),
        }
    }
}

fn check_transfers(nz: u32) {
    let mut c = case(nz);
    let g = c.grid;
    let (pos, vel, affine) = (v3(&c.pos), v3(&c.vel), matrices(&c.affine));

    // P2G. Fixed point quantises each contribution's momentum to 2^-15 m/s, as for FLIP
    // (the affine term only changes the velocity contributed), so the stage test's
    // tolerances apply.
    c.run_to(Stage::P2g);
    let gpu_vel = c.faces([Field::U, Field::V, Field::W]);
    let gpu_w = c.faces([Field::WeightU, Field::WeightV, Field::WeightW]);
    let r = cpu::p2g_apic(&g, &pos, &vel, &affine);
    let plain = cpu::p2g(&g, &pos, &vel);
    assert!(mac_max(&r.vel) > 0.3, "P2G input is trivial");
    let (mut e_mom, mut e_vel, mut affine_part) = (0.0f64, 0.0f64, 0.0f64);
    for comp in 0..3 {
        let (gv, rv, w) = (gpu_vel.comp(comp), r.vel.comp(comp), r.weight.comp(comp));
        for i in 0..w.len() {
            e_mom = e_mom.max((gv[i] - rv[i]).abs() * w[i]);
            if w[i] >= 0.1 {
                e_vel = e_vel.max((gv[i] - rv[i]).abs());
                affine_part = affine_part.max((rv[i] - plain.vel.comp(comp)[i]).abs());
            }
        }
    }
    assert!(
        affine_part > 0.05,
        "the affine term changes the grid by only {affine_part}"
    );
    assert!(e_mom < 2e-4, "APIC P2G momentum differs by {e_mom}");
    assert!(e_vel < 1e-3, "APIC P2G velocity differs by {e_vel}");
    assert!(common::mac_diff(&gpu_w, &r.weight) < 1e-4, "weights differ");
    // Integer atomics: the same input gives the same bits.
    c.run_to(Stage::P2g);
    let again = c.faces([Field::U, Field::V, Field::W]);
    for comp in 0..3 {
        let same = gpu_vel
            .comp(comp)
            .iter()
            .zip(again.comp(comp))
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "APIC P2G is not deterministic (component {comp})");
    }

    // G2P from the GPU's own grid after extrapolation (the grid G2P reads).
    c.run_to(Stage::G2p);
    let grid = c.faces([Field::U, Field::V, Field::W]);
    let (_, gvel) = c.sim.read_particles().unwrap();
    let gaff = matrices(&c.sim.read_affine().unwrap());
    let (evel, eaff) = cpu::g2p_apic(&g, &pos, &grid);
    let e = max_abs_diff(&v3(&gvel).concat(), &evel.concat());
    assert!(e < 1e-4, "APIC G2P velocity differs by {e}");
    let flat = |m: &[cpu::Affine]| -> Vec<f64> { m.iter().flatten().flatten().copied().collect() };
    let (ga, ea) = (flat(&gaff), flat(&eaff));
    let largest = max_abs(&ea);
    assert!(largest > 1.0, "affine matrices are trivial ({largest})");
    let e = max_abs_diff(&ga, &ea);
    // Sums of eight u/h-sized terms in f32: a few ulps of the largest entry.
    assert!(
        e < 1e-5 * largest.max(1.0),
        "APIC G2P matrix differs by {e}"
    );
    // The matrices G2P wrote are not the ones uploaded.
    assert!(max_abs_diff(&ga, &flat(&affine)) > 0.1);
}

#[test]
fn apic_transfers_match_the_reference_3d() {
    check_transfers(8);
}

#[test]
fn apic_transfers_match_the_reference_on_one_slice() {
    check_transfers(1);
}

#[test]
fn transfer_switches_live_and_apic_starts_from_zero_matrices() {
    let scene = eddy::bench::transfer::blob_scene(16, Variant::Flip);
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    assert!(!sim.mode.particles.has_affine());
    assert!(sim.read_affine().unwrap().is_empty());
    let (pos, _) = sim.read_particles().unwrap();
    let vel: Vec<[f32; 4]> = pos
        .iter()
        .map(|p| [-(p[1] - 0.5), p[0] - 0.5, 0.0, 0.0])
        .collect();
    sim.upload_particles(&pos, &vel).unwrap();
    let mut apic = scene.clone();
    apic.transfer = TransferKind::Apic;
    sim.apply_live_settings(&apic).unwrap();
    assert!(sim.mode.particles.has_affine());
    let zero = sim.read_affine().unwrap();
    assert_eq!(zero.len(), 3 * pos.len());
    assert!(zero.iter().all(|r| *r == [0.0; 4]));
    sim.substep(0.01, Stage::Advect).unwrap();
    // A rigid rotation about z at 1 rad/s: G2P's matrices carry it (c_u . y = -1, c_v . x
    // = 1) in the middle of the blob, two cells and more from its surface.
    let rows = sim.read_affine().unwrap();
    let (pos, _) = sim.read_particles().unwrap();
    let inner: Vec<usize> = (0..pos.len())
        .filter(|i| {
            let p = pos[*i];
            (p[0] - 0.5).hypot(p[1] - 0.5).hypot(p[2] - 0.5) < 0.08
        })
        .collect();
    assert!(inner.len() > 20);
    // The first step starts from C = 0 (a PIC transfer), whose face averages carry the
    // particles' sampling noise, so the mean is compared.
    let mean =
        |f: &dyn Fn(usize) -> f32| inner.iter().map(|i| f(*i)).sum::<f32>() / inner.len() as f32;
    let (cuy, cvx) = (mean(&|i| rows[3 * i][1]), mean(&|i| rows[3 * i + 1][0]));
    assert!((cuy + 1.0).abs() < 0.05, "mean c_u . y = {cuy}");
    assert!((cvx - 1.0).abs() < 0.05, "mean c_v . x = {cvx}");
    // Back to FLIP and to APIC again: the matrices restart from zero.
    sim.apply_live_settings(&scene).unwrap();
    assert_eq!(sim.transfer(), TransferKind::Flip);
    sim.apply_live_settings(&apic).unwrap();
    assert!(sim.read_affine().unwrap().iter().all(|r| *r == [0.0; 4]));
}

/// A rotating blob of liquid in zero gravity keeps the angular momentum of its particles
/// within 1% at every one of 100 substeps with APIC; PIC (the same grid and steps, no
/// affine matrices) loses more than a tenth of it in 20.
#[test]
fn apic_keeps_the_angular_momentum_of_a_rotating_blob() {
    let n = 24;
    let apic = rotating_blob(common::gpu(), n, Variant::Apic, 100).unwrap();
    let (end, worst) = relative_change(&apic.particle_l);
    assert!(
        worst < 1.0,
        "APIC: L_z deviates by up to {worst:.3}% (ends at {end:+.3}%)"
    );
    let pic = rotating_blob(common::gpu(), n, Variant::Pic, 20).unwrap();
    let (pic_end, _) = relative_change(&pic.particle_l);
    assert!(
        pic_end < -10.0,
        "PIC: L_z changes by only {pic_end:.3}% in 20 substeps"
    );
}

/// `eddy check` names the transfer and counts the matrices; `eddy run` dumps them.
#[test]
fn check_and_particle_dumps_follow_the_transfer() {
    let dir = std::env::temp_dir().join(format!("eddy-apic-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = "domain: (1.0, 0.5, 0.5), resolution: (8, 4, 4), \
                fluid: [Box(min: (0,0,0), max: (0.5,0.25,0.5), velocity: (0.5, 0, 0))]";
    let eddy = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args(args)
            .output()
            .unwrap()
    };
    for transfer in ["flip", "apic"] {
        let scene = dir.join(format!("{transfer}.ron"));
        std::fs::write(&scene, format!("({base}, transfer: {transfer})")).unwrap();
        let out = eddy(&["check", scene.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&format!("transfer    {transfer}")), "{text}");
        let out_dir = dir.join(format!("out_{transfer}"));
        let out = eddy(&[
            "run",
            scene.to_str().unwrap(),
            "--frames",
            "2",
            "--out",
            out_dir.to_str().unwrap(),
            "--dump-particles",
            "2",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (names, rows) =
            eddy::output::read_ply_properties(&out_dir.join("particles_00002.ply")).unwrap();
        assert_eq!(rows.len(), 4 * 2 * 4 * 8, "one row per particle");
        if transfer == "flip" {
            assert_eq!(names.len(), 6);
        } else {
            assert_eq!(
                names[6..],
                eddy::output::AFFINE_PLY_PROPERTIES.map(String::from)
            );
            // After two frames of a sliding box under gravity, G2P wrote non-zero gradients.
            assert!(rows.iter().any(|r| r[6..].iter().any(|c| c.abs() > 1e-3)));
        }
    }
    // The memory estimate counts 48 bytes of matrices per particle.
    let scene = Scene::parse(
        &format!("({base}, transfer: apic)"),
        std::path::Path::new("apic.ron"),
    )
    .unwrap();
    let flip = Scene {
        transfer: TransferKind::Flip,
        ..scene.clone()
    };
    let (a, f) = (
        eddy::sim::memory_estimate(&scene, 1_000_000),
        eddy::sim::memory_estimate(&flip, 1_000_000),
    );
    assert_eq!(a.total - f.total, 48_000_000);
    assert!(a.largest_name.contains("APIC"), "{}", a.largest_name);
}

/// The first sloshing mode of a tank 48 cells across keeps at least 95% of its amplitude
/// per period with APIC over three periods, and its period within 3% of linear theory
/// (omega^2 = g k tanh(k d)). `eddy bench --transfer` reports FLIP and PIC beside it.
#[test]
fn apic_keeps_the_first_sloshing_mode() {
    let row = eddy::bench::transfer::sloshing(common::gpu(), 48, Variant::Apic, 3).unwrap();
    println!(
        "period {:.4} s (theory {:.4} s, {:+.2}%), kept per period {:.4}",
        row.period_s, row.theory_s, row.period_error_percent, row.amplitude_per_period
    );
    assert!(
        row.extrema_m.len() >= 5,
        "too few extrema: {:?}",
        row.extrema_m
    );
    assert!(
        row.period_error_percent.abs() < 3.0,
        "period off by {:.2}%",
        row.period_error_percent
    );
    assert!(
        row.amplitude_per_period >= 0.95,
        "keeps {:.4} of its amplitude per period",
        row.amplitude_per_period
    );
}
