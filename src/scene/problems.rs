//! The standard problems benchmarks and solver tests share.

use super::*;

/// The standard problems that benchmarks and solver tests share, on a cubic 1 m domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandardProblem {
    /// Dam break at frame 0: a 0.4 x 0.6 x 1 m column against the x = 0 wall.
    DamBreak,
    /// A pool 0.4 m deep over the whole floor with a block on the floor, measured after
    /// `settle_frames` frames at rest. Without the block the system would be
    /// one-dimensional (b constant over the bottom layer) and plain CG would solve it in as
    /// many iterations as the pool is deep, which says nothing about preconditioners.
    SettledPool,
    /// The settled pool with 16 bodies (boxes and spheres of 0.1x to 0.85x water) floating
    /// on it, measured after `settle_frames`: the strong coupling's solve (A plus the
    /// bodies' term).
    FloatingBodies,
    /// The same with the weak coupling: the same grid, the bodies as velocity boundaries
    /// (A alone), what the strong coupling's term costs is the difference.
    FloatingBodiesWeak,
    /// `FloatingBodies` with the deflation of the bodies' modes (`body_deflation` on; off
    /// by default): what the deflation saves or costs is the difference.
    FloatingBodiesDeflated,
    /// `FloatingBodies`' own system with the bodies' term left out: A alone on the same
    /// grid, cells, cut faces and right-hand side (the bodies held still), solved by the
    /// solver lab with the simulation's kernels. What the strong coupling adds to the
    /// pressure solve is `floating_bodies` (or `_deflated`) against this. The weak scheme's
    /// problem is not that measure: it settles on its own and stamps whole cells, so its
    /// system differs (8 `mg` iterations at 64^3 against this one's 10).
    FloatingBodiesAlone,
}

impl StandardProblem {
    /// The default set.
    pub const ALL: [StandardProblem; 2] = [StandardProblem::DamBreak, StandardProblem::SettledPool];
    /// Every problem `eddy bench --problems` knows.
    pub const NAMED: [StandardProblem; 6] = [
        StandardProblem::DamBreak,
        StandardProblem::SettledPool,
        StandardProblem::FloatingBodies,
        StandardProblem::FloatingBodiesWeak,
        StandardProblem::FloatingBodiesDeflated,
        StandardProblem::FloatingBodiesAlone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StandardProblem::DamBreak => "dam_break",
            StandardProblem::SettledPool => "settled_pool",
            StandardProblem::FloatingBodies => "floating_bodies",
            StandardProblem::FloatingBodiesWeak => "floating_bodies_weak",
            StandardProblem::FloatingBodiesDeflated => "floating_bodies_deflated",
            StandardProblem::FloatingBodiesAlone => "floating_bodies_alone",
        }
    }

    /// Frames to simulate before the system is measured.
    pub fn settle_frames(self) -> u32 {
        match self {
            StandardProblem::DamBreak => 0,
            StandardProblem::SettledPool => 30,
            StandardProblem::FloatingBodies
            | StandardProblem::FloatingBodiesWeak
            | StandardProblem::FloatingBodiesDeflated
            | StandardProblem::FloatingBodiesAlone => 5,
        }
    }

    /// Whether the problem's solve leaves the strong coupling's term out of the system its
    /// scene makes (the solver lab solves A alone).
    pub fn leaves_the_term_out(self) -> bool {
        self == StandardProblem::FloatingBodiesAlone
    }

    /// The problem on an n x n x n grid.
    pub fn scene(self, n: u32) -> Scene {
        let fluid = match self {
            StandardProblem::DamBreak => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (0.4, 0.6, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
            _ => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (1.0, 0.4, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
        };
        let solids = match self {
            StandardProblem::DamBreak
            | StandardProblem::FloatingBodies
            | StandardProblem::FloatingBodiesWeak
            | StandardProblem::FloatingBodiesDeflated
            | StandardProblem::FloatingBodiesAlone => vec![],
            // A block on the floor makes the pool's system genuinely 3D.
            StandardProblem::SettledPool => vec![Shape::Box {
                min: (0.55, 0.0, 0.3),
                max: (0.8, 0.25, 0.7),
                velocity: (0.0, 0.0, 0.0),
            }],
        };
        let (bodies, body_coupling) = match self {
            StandardProblem::FloatingBodies
            | StandardProblem::FloatingBodiesDeflated
            | StandardProblem::FloatingBodiesAlone => (floating_bodies(), CouplingScheme::Strong),
            StandardProblem::FloatingBodiesWeak => (floating_bodies(), CouplingScheme::Weak),
            _ => (vec![], CouplingScheme::Strong),
        };
        Scene {
            name: self.name().into(),
            domain: (1.0, 1.0, 1.0),
            resolution: (n, n, n),
            fluid: vec![fluid],
            solids,
            bodies,
            body_coupling,
            body_deflation: (self == StandardProblem::FloatingBodiesDeflated).then_some(true),
            ..Scene::default()
        }
    }
}

/// 16 bodies on a 4 x 4 grid over the pool, alternately boxes and spheres, 0.1x to 0.85x
/// water, each at about the height where it floats.
fn floating_bodies() -> Vec<BodySpec> {
    (0..16)
        .map(|i| {
            let (x, z) = (0.125 + 0.25 * (i % 4) as f64, 0.125 + 0.25 * (i / 4) as f64);
            let ratio = 0.1 + 0.05 * i as f64;
            let (shape, half) = if i % 2 == 0 {
                (
                    BodyShape::Box {
                        half_extents: (0.07, 0.05, 0.07),
                    },
                    0.05,
                )
            } else {
                (BodyShape::Sphere { radius: 0.07 }, 0.07)
            };
            BodySpec {
                shape,
                // The bottom at the waterline's depth for its density (exact for a box).
                center: (x, 0.4 + half - 2.0 * half * ratio, z),
                density: ratio * crate::gpu::constants::DENSITY,
                velocity: (0.0, 0.0, 0.0),
                angular_velocity: (0.0, 0.0, 0.0),
                rotation_deg: (0.0, 0.0, 0.0),
                restitution: 0.2,
                friction: 0.5,
                motion: BodyMotion::Dynamic,
            }
        })
        .collect()
}
