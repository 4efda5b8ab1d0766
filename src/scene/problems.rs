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
}

impl StandardProblem {
    pub const ALL: [StandardProblem; 2] = [StandardProblem::DamBreak, StandardProblem::SettledPool];

    pub fn name(self) -> &'static str {
        match self {
            StandardProblem::DamBreak => "dam_break",
            StandardProblem::SettledPool => "settled_pool",
        }
    }

    /// Frames to simulate before the system is measured.
    pub fn settle_frames(self) -> u32 {
        match self {
            StandardProblem::DamBreak => 0,
            StandardProblem::SettledPool => 30,
        }
    }

    /// The problem on an n x n x n grid.
    pub fn scene(self, n: u32) -> Scene {
        let fluid = match self {
            StandardProblem::DamBreak => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (0.4, 0.6, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
            StandardProblem::SettledPool => Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (1.0, 0.4, 1.0),
                velocity: (0.0, 0.0, 0.0),
            },
        };
        let solids = match self {
            StandardProblem::DamBreak => vec![],
            // A block on the floor makes the pool's system genuinely 3D.
            StandardProblem::SettledPool => vec![Shape::Box {
                min: (0.55, 0.0, 0.3),
                max: (0.8, 0.25, 0.7),
                velocity: (0.0, 0.0, 0.0),
            }],
        };
        Scene {
            name: self.name().into(),
            domain: (1.0, 1.0, 1.0),
            resolution: (n, n, n),
            fluid: vec![fluid],
            solids,
            ..Scene::default()
        }
    }
}
