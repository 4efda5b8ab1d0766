//! The debug views of the multigrid preconditioner's levels: every level's vectors read
//! back with the level's own grid, and clear errors for levels a grid does not have.

use crate::common;

use eddy::render::slice::{Range, SliceImage, SliceSpec};
use eddy::scene::{PreconditionerKind, StandardProblem, AIR, FLUID, SOLID};
use eddy::sim::{
    core::pressure::multigrid::MgPlan,
    liquid::views::{Field, MgField, MgVector},
    SimError, Simulation, Stage,
};

fn mg(level: usize, vector: MgVector) -> Field {
    Field::Mg(MgField {
        level: level as u8,
        vector,
    })
}

fn unsupported(r: Result<eddy::sim::liquid::views::FieldData, SimError>) -> String {
    match r {
        Err(SimError::Unsupported(m)) => m,
        Err(e) => panic!("expected a clear error, got {e}"),
        Ok(d) => panic!("expected an error, read {:?}", d.dims),
    }
}

#[test]
fn every_level_of_a_dam_break_solve_can_be_viewed() {
    let mut scene = StandardProblem::DamBreak.scene(24);
    scene.pressure.preconditioner = PreconditionerKind::Mg;
    let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
    sim.substep(scene.frame_dt, Stage::Pressure).unwrap();

    let levels = sim.mg_levels();
    assert_eq!(levels, MgPlan::new(scene.dims()).dims);
    assert!(levels.len() >= 3, "{levels:?}");
    let last = levels.len() - 1;
    // Every vector of every level but the coarsest level's residual.
    let listed = MgField::list(&levels);
    assert_eq!(listed.len(), 4 * levels.len() - 1);

    let read = |f: Field| sim.read_field(f).unwrap();
    let mut finer_types: Option<Vec<f32>> = None;
    for (l, &dims) in levels.iter().enumerate() {
        let types = read(mg(l, MgVector::CellType));
        assert_eq!(types.dims, dims);
        // Level l's cells are 2^l grid cells wide along every axis (24 halves evenly).
        assert_eq!(types.spacing, [1 << l; 3]);
        if let Some(fine) = &finer_types {
            // A coarse cell is AIR if any of its cells is, else FLUID if any is.
            let n = levels[l - 1];
            for (c, &t) in types.values.iter().enumerate() {
                let c = c as u32;
                let q = [
                    c % dims[0],
                    (c / dims[0]) % dims[1],
                    c / (dims[0] * dims[1]),
                ];
                let kids: Vec<u32> = (0..8)
                    .map(|k| {
                        [
                            2 * q[0] + (k & 1),
                            2 * q[1] + (k >> 1 & 1),
                            2 * q[2] + (k >> 2),
                        ]
                    })
                    .filter(|p| (0..3).all(|a| p[a] < n[a]))
                    .map(|p| fine[(p[0] + n[0] * (p[1] + n[1] * p[2])) as usize] as u32)
                    .collect();
                let want = if kids.contains(&AIR) {
                    AIR
                } else if kids.contains(&FLUID) {
                    FLUID
                } else {
                    SOLID
                };
                assert_eq!(t as u32, want, "level {l} cell {q:?}");
            }
        }
        let fluid: Vec<bool> = types.values.iter().map(|&t| t as u32 == FLUID).collect();
        assert!(fluid.iter().any(|&f| f), "level {l} has no FLUID cell");

        for v in [MgVector::Rhs, MgVector::Residual, MgVector::Correction] {
            if v == MgVector::Residual && l == last {
                continue;
            }
            let f = mg(l, v);
            let d = read(f);
            assert_eq!(d.dims, dims, "{}", f.id());
            assert_eq!(d.values.len(), dims.iter().product::<u32>() as usize);
            assert!(d.values.iter().all(|x| x.is_finite()), "{}", f.id());
            // The solve is done, but its last V-cycle's vectors are still there.
            assert!(d.values.iter().any(|&x| x != 0.0), "{} is all zero", f.id());
            // Each level's vectors live on its FLUID cells only: the values and the types
            // come from the same level.
            for (c, x) in d.values.iter().enumerate() {
                assert!(fluid[c] || *x == 0.0, "{} = {x} off FLUID cell {c}", f.id());
            }
            // The ids round-trip through the command line's parser.
            assert_eq!(f.id().parse::<Field>().unwrap(), f);
        }
        finer_types = Some(types.values);
    }

    // The coarsest level is solved in place (24 symmetric red-black pairs on 6^3 cells),
    // so its correction nearly solves its own Poisson system with its right-hand side:
    // the views pair the right buffers with the right level.
    let n = levels[last];
    let t = read(mg(last, MgVector::CellType)).values;
    let (b, x) = (
        read(mg(last, MgVector::Rhs)).values,
        read(mg(last, MgVector::Correction)).values,
    );
    let at = |p: [i64; 3]| -> Option<usize> {
        (0..3)
            .all(|a| p[a] >= 0 && p[a] < n[a] as i64)
            .then(|| (p[0] + n[0] as i64 * (p[1] + n[1] as i64 * p[2])) as usize)
    };
    let mut worst = 0.0f64;
    for c in 0..x.len() {
        if t[c] as u32 != FLUID {
            continue;
        }
        let q = [
            (c as u32 % n[0]) as i64,
            (c as u32 / n[0] % n[1]) as i64,
            (c as u32 / (n[0] * n[1])) as i64,
        ];
        let mut ax = 0.0f64;
        for a in 0..3 {
            for s in [-1, 1] {
                let mut p = q;
                p[a] += s;
                match at(p).map(|m| t[m] as u32) {
                    Some(FLUID) => ax += x[c] as f64 - x[at(p).unwrap()] as f64,
                    Some(AIR) => ax += x[c] as f64,
                    _ => {}
                }
            }
        }
        worst = worst.max((ax - b[c] as f64).abs());
    }
    let bmax = b.iter().fold(0.0f64, |m, v| m.max(v.abs() as f64));
    assert!(
        worst < 1e-2 * bmax,
        "coarsest level: max|A x - b| = {worst:e}, max|b| = {bmax:e}"
    );

    // Level 0 is PCG's own vectors: r in, z = M^-1 r out.
    assert_eq!(
        read(mg(0, MgVector::Rhs)).values,
        read(Field::Residual).values
    );
    assert_eq!(
        read(mg(0, MgVector::Correction)).values,
        read(Field::Preconditioned).values
    );

    // A coarse level's slice covers the same domain as the grid, and the slice index
    // counts grid layers: grid layer 13 lies in level 1's layer 6.
    let h = scene.h() as f32;
    let img = SliceImage::build(
        &read(mg(1, MgVector::Correction)),
        h,
        SliceSpec {
            field: mg(1, MgVector::Correction),
            axis: 2,
            index: 13,
            range: Range::Auto,
        },
    );
    assert_eq!((img.width, img.height), (levels[1][0], levels[1][1]));
    assert_eq!(img.spec.index, 6);
    let far = img.corners[3];
    assert!((far.x - 24.0 * h).abs() < 1e-5 && (far.y - 24.0 * h).abs() < 1e-5);
    assert!((far.z - 13.0 * h).abs() < 1e-5, "plane at {}", far.z);

    // Levels the grid does not have are clear errors.
    let m = unsupported(sim.read_field(mg(levels.len(), MgVector::Correction)));
    assert!(
        m.contains(&format!("{} multigrid levels", levels.len())),
        "{m}"
    );
    let m = unsupported(sim.read_field(mg(last, MgVector::Residual)));
    assert!(m.contains("coarsest"), "{m}");

    // With another preconditioner the level buffers hold nothing of the solve.
    let mut ic = scene.clone();
    ic.pressure.preconditioner = PreconditionerKind::Ip;
    sim.apply_live_settings(&ic).unwrap();
    assert!(sim.mg_levels().is_empty());
    let m = unsupported(sim.read_field(mg(0, MgVector::Correction)));
    assert!(m.contains("mg preconditioner"), "{m}");
}

#[test]
fn multigrid_field_names_parse_and_bad_ones_are_listed() {
    let f: Field = "mg_residual_1".parse().unwrap();
    assert_eq!(f, mg(1, MgVector::Residual));
    assert_eq!(f.label(), "MG level 1 residual after pre-smoothing");
    assert_eq!(
        "mg_cell_type_0".parse::<Field>().unwrap(),
        mg(0, MgVector::CellType)
    );
    assert!(!mg(2, MgVector::CellType).signed());
    assert!(mg(2, MgVector::Correction).signed());
    for bad in [
        "mg_residual",
        "mg_residual_x",
        "mg_foo_1",
        "mg_residual_1_2",
    ] {
        let e = bad.parse::<Field>().unwrap_err();
        assert!(e.contains("mg_residual_L"), "{bad}: {e}");
    }
    assert_eq!(
        MgField {
            level: 1,
            vector: MgVector::Rhs
        }
        .describe(&[[24, 24, 24], [12, 12, 12]]),
        "MG level 1 right-hand side b (12x12x12)"
    );
}

/// PCG's b, r, z, d, q and t live in P2G's accumulators (24 bytes per cell saved). Keeping
/// a copy of them after each solve (the viewer's) changes no result, with and without
/// bodies in the solve; without it their views and the system's export are refused once a
/// later stage has used their room, and the copy holds what the solve left, bit for bit.
#[test]
fn solver_vectors_in_the_accumulators_change_no_result() {
    for (name, resolution) in [("dam_break", 16), ("floating_bodies", 12)] {
        let scene = common::shipped(name, resolution);
        assert!(
            scene.particle_spacing > 0.0,
            "{name}: the spacing reuses the room too"
        );
        let mut shared = Simulation::new(common::gpu(), &scene).unwrap();
        let mut kept = Simulation::new(common::gpu(), &scene).unwrap();
        kept.keep_solver_vectors();
        // The views' own fields (P2G's weights, the divergence) change no result either.
        kept.keep_grid_views();
        assert!(!shared.fields.has_views() && kept.fields.has_views());
        // A warm-started solve freezes with its initial guess.
        kept.keep_initial_guess(true);
        assert!(!shared.keeps_solver_vectors() && kept.keeps_solver_vectors());
        for sim in [&shared, &kept] {
            assert_eq!(sim.pcg.b.buffer, sim.fields.acc, "{name}");
            assert_eq!(sim.pcg.t.buffer, sim.fields.acc, "{name}");
        }
        assert_eq!(shared.core.bodies.is_some(), name == "floating_bodies");
        let bits = |s: &eddy::sim::ParticleState| -> Vec<u32> {
            s.0.iter()
                .chain(&s.1)
                .flatten()
                .map(|x| x.to_bits())
                .collect()
        };
        for frame in 0..3 {
            shared.step_frame().unwrap();
            kept.step_frame().unwrap();
            let (a, b) = (
                shared.read_particles().unwrap(),
                kept.read_particles().unwrap(),
            );
            assert_eq!(
                bits(&a),
                bits(&b),
                "{name}: particles differ after frame {frame}"
            );
            // The spacing's sums waited in the fourth words; they are zero again.
            assert!(a.0.iter().chain(&a.1).all(|p| p[3] == 0.0), "{name}");
            if let (Some(x), Some(y)) = (&shared.core.bodies, &kept.core.bodies) {
                for (p, q) in x.set.bodies.iter().zip(&y.set.bodies) {
                    assert_eq!(p.position, q.position, "{name}: a body differs");
                    assert_eq!(p.momentum, q.momentum, "{name}: a body differs");
                    assert_eq!(p.orientation, q.orientation, "{name}: a body differs");
                }
            }
        }
        let message = unsupported(shared.read_field(Field::Residual));
        assert!(message.contains("accumulator"), "{message}");
        unsupported(shared.read_field(Field::Rhs));
        unsupported(shared.read_field(mg(0, MgVector::Correction)));
        assert!(shared.freeze_system().is_err() && shared.export_system().is_err());
        kept.freeze_system().unwrap();
        kept.export_system().unwrap();
        for field in [Field::WeightV, Field::Divergence, Field::DivergenceAfter] {
            let message = unsupported(shared.read_field(field));
            assert!(message.contains("keeps no"), "{message}");
            let values = kept.read_field(field).unwrap().values;
            assert!(
                values.iter().any(|v| *v != 0.0),
                "{name}: {} is all zeros",
                field.id()
            );
        }
        // The faces' weight bits, which the forces and the extrapolation read, say which
        // faces have weight.
        let weight: Vec<f32> = eddy::gpu::read_buffer(&kept.ctx, &kept.fields.weight).unwrap();
        let bits: Vec<u32> = eddy::gpu::read_buffer(&kept.ctx, &kept.fields.weighted).unwrap();
        let weighted = weight.iter().filter(|w| **w > 0.0).count();
        assert!(
            weighted > 0 && weighted < weight.len(),
            "{name}: {weighted} faces"
        );
        for (f, w) in weight.iter().enumerate() {
            let bit = bits[f / 32] >> (f % 32) & 1 == 1;
            assert_eq!(bit, *w > 0.0, "{name}: face {f} of weight {w}");
        }
        // The same substep on both: stopped at its solve, `shared` is read where the
        // vectors live; run through, `kept` is read from its copy.
        let dt = scene.frame_dt / 8.0;
        shared.substep(dt, Stage::Pressure).unwrap();
        kept.substep(dt, Stage::Advect).unwrap();
        for field in [
            Field::Rhs,
            Field::Residual,
            Field::Preconditioned,
            Field::SearchDirection,
            Field::ASearchDirection,
            mg(0, MgVector::Rhs),
            mg(0, MgVector::Residual),
            mg(0, MgVector::Correction),
        ] {
            let (a, b) = (
                shared.read_field(field).unwrap(),
                kept.read_field(field).unwrap(),
            );
            // (z and d may be all zero: with bodies z ends as the term's K p, for the true
            // residual.)
            if matches!(
                field,
                Field::Rhs | Field::Residual | Field::ASearchDirection
            ) {
                let nonzero = a.values.iter().filter(|v| **v != 0.0).count();
                assert!(nonzero > 0, "{name}: {field:?} is all zero");
            }
            assert!(
                a.values
                    .iter()
                    .zip(&b.values)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{name}: the kept {field:?} differs from the solve's"
            );
        }
    }
}
