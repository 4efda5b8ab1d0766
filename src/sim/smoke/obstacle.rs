//! The smoke's moving obstacle: a box or a disc that moves on its own velocity, bounces off
//! the walls, and follows the mouse while the user drags it.

use super::params::{SmokeParams, OBSTACLE_BOX, OBSTACLE_DISC};
use crate::scene::Shape;

/// The moving obstacle's current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obstacle {
    /// Box: min corner; disc: centre (m).
    pub lo: [f64; 2],
    /// Box: max corner (m).
    pub hi: [f64; 2],
    /// Disc radius (m), 0 for a box.
    pub radius: f64,
    pub velocity: [f64; 2],
    /// While the user drags it, the obstacle follows the mouse instead of moving itself.
    pub held: bool,
}

impl Obstacle {
    pub fn from_shape(s: &Shape) -> Self {
        let v = s.velocity();
        match s {
            Shape::Box { min, max, .. } => Obstacle {
                lo: [min.0, min.1],
                hi: [max.0, max.1],
                radius: 0.0,
                velocity: [v[0], v[1]],
                held: false,
            },
            Shape::Sphere { center, radius, .. } => Obstacle {
                lo: [center.0, center.1],
                hi: [center.0, center.1],
                radius: *radius,
                velocity: [v[0], v[1]],
                held: false,
            },
        }
    }

    /// Centre of the obstacle (m).
    pub fn centre(&self) -> [f64; 2] {
        [
            0.5 * (self.lo[0] + self.hi[0]),
            0.5 * (self.lo[1] + self.hi[1]),
        ]
    }

    /// Half extents (m) in x and y.
    pub fn half(&self) -> [f64; 2] {
        if self.radius > 0.0 {
            [self.radius; 2]
        } else {
            [
                0.5 * (self.hi[0] - self.lo[0]),
                0.5 * (self.hi[1] - self.lo[1]),
            ]
        }
    }

    /// Moves the centre to `c`, keeping the obstacle inside `domain`.
    pub fn set_centre(&mut self, c: [f64; 2], domain: [f64; 2]) {
        let half = self.half();
        let mut centre = [0.0; 2];
        for a in 0..2 {
            centre[a] = c[a].clamp(half[a], (domain[a] - half[a]).max(half[a]));
        }
        if self.radius > 0.0 {
            self.lo = centre;
            self.hi = centre;
        } else {
            self.lo = [centre[0] - half[0], centre[1] - half[1]];
            self.hi = [centre[0] + half[0], centre[1] + half[1]];
        }
    }

    /// Moves by velocity * dt and bounces off the domain walls.
    pub fn advance(&mut self, dt: f64, domain: [f64; 2]) {
        let half = self.half();
        let c = self.centre();
        let mut next = [0.0; 2];
        for a in 0..2 {
            next[a] = c[a] + self.velocity[a] * dt;
            if next[a] - half[a] < 0.0 && self.velocity[a] < 0.0
                || next[a] + half[a] > domain[a] && self.velocity[a] > 0.0
            {
                self.velocity[a] = -self.velocity[a];
            }
        }
        self.set_centre(next, domain);
    }

    pub(crate) fn write(&self, p: &mut SmokeParams) {
        if self.radius > 0.0 {
            p.obstacle_kind = OBSTACLE_DISC;
            p.obstacle_lo = [self.lo[0] as f32, self.lo[1] as f32, 0.0, 0.0];
            p.obstacle_hi = [0.0, 0.0, 0.0, self.radius as f32];
        } else {
            p.obstacle_kind = OBSTACLE_BOX;
            p.obstacle_lo = [self.lo[0] as f32, self.lo[1] as f32, 0.0, 0.0];
            p.obstacle_hi = [self.hi[0] as f32, self.hi[1] as f32, 0.0, 0.0];
        }
        p.obstacle_vel = [self.velocity[0] as f32, self.velocity[1] as f32, 0.0, 0.0];
    }
}
