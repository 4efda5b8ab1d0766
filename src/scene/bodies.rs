//! The rigid bodies of a scene: shape, density, initial motion, contact coefficients, and
//! their validation.

use super::*;

/// Most rigid bodies in a scene (the GPU's body slots).
pub use crate::gpu::constants::MAX_BODIES;
/// Range of a body's density, kg/m^3.
pub const MIN_BODY_DENSITY: f64 = 1e-3;
pub const MAX_BODY_DENSITY: f64 = 1e6;

/// The shape of a rigid body, in its own frame (centred on its centre of mass).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BodyShape {
    /// A box with half extents along its own x, y, z (m). In a smoke slice a box is a
    /// rectangle across the slice's depth (its z extent is the slice's).
    Box { half_extents: (f64, f64, f64) },
    /// A sphere (m); in a smoke slice a disc across the slice's depth.
    Sphere { radius: f64 },
}

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyMotion {
    /// Moved by the fluid, gravity and contacts.
    #[default]
    Dynamic,
    /// Never moves (an obstacle that other bodies hit).
    Fixed,
    /// Follows its prescribed velocity and angular velocity, bouncing off the domain walls;
    /// pushes the fluid and other bodies, is pushed by nothing.
    Kinematic,
}

/// How the bodies and the fluid push each other (the scene's `body_coupling`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CouplingScheme {
    /// The pressure solve includes the bodies' motion (src/sim/bodies/strong.wgsl): stable
    /// at any density ratio, at a few more iterations per solve.
    #[default]
    Strong,
    /// The fluid's force of one substep moves the body after the solve, with an estimate of
    /// the added mass to keep it stable: cheaper per iteration, stable only for bodies
    /// denser than about half the fluid (docs/guide/07-rigid-bodies.md).
    Weak,
}

impl CouplingScheme {
    pub fn is_strong(&self) -> bool {
        *self == CouplingScheme::Strong
    }
}

/// One rigid body of a scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    pub shape: BodyShape,
    /// Centre of mass, m.
    pub center: (f64, f64, f64),
    /// kg/m^3 (water is 1000).
    #[serde(default = "default_body_density")]
    pub density: f64,
    /// m/s.
    #[serde(default)]
    pub velocity: (f64, f64, f64),
    /// rad/s, about the centre, world axes.
    #[serde(default)]
    pub angular_velocity: (f64, f64, f64),
    /// Rotation in degrees about the world x, y, then z axes (a slice body turns about z
    /// only).
    #[serde(default)]
    pub rotation_deg: (f64, f64, f64),
    /// Coefficient of restitution of its contacts, 0..=1.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// Coulomb friction coefficient of its contacts, >= 0.
    #[serde(default = "default_friction")]
    pub friction: f64,
    #[serde(default)]
    pub motion: BodyMotion,
}

fn default_body_density() -> f64 {
    500.0
}
fn default_restitution() -> f64 {
    0.3
}
fn default_friction() -> f64 {
    0.4
}

impl BodySpec {
    /// A dynamic body of `shape` at `center` (m) and `density` (kg/m^3), at rest and
    /// unturned, with a scene file's defaults for the rest (restitution, friction).
    pub fn at_rest(shape: BodyShape, center: (f64, f64, f64), density: f64) -> Self {
        Self {
            shape,
            center,
            density,
            velocity: (0.0, 0.0, 0.0),
            angular_velocity: (0.0, 0.0, 0.0),
            rotation_deg: (0.0, 0.0, 0.0),
            restitution: default_restitution(),
            friction: default_friction(),
            motion: BodyMotion::Dynamic,
        }
    }

    /// Checks one body against the domain; each message names the field at fault.
    pub fn validate(&self, domain: [f64; 3], slice: bool) -> Result<(), String> {
        let finite = |name: &str, v: (f64, f64, f64), bound: f64| {
            let a = [v.0, v.1, v.2];
            if a.iter().all(|x| x.is_finite() && x.abs() <= bound) {
                Ok(())
            } else {
                Err(format!("{name} {v:?} must be finite and at most {bound:e}"))
            }
        };
        let extent = match &self.shape {
            BodyShape::Box { half_extents: e } => {
                finite("box half_extents", *e, MAX_COORDINATE)?;
                let z_ok = slice || e.2 > 0.0;
                if e.0 <= 0.0 || e.1 <= 0.0 || !z_ok {
                    return Err(format!(
                        "box half_extents {e:?} must be positive on every axis"
                    ));
                }
                (e.0 * e.0 + e.1 * e.1 + if slice { 0.0 } else { e.2 * e.2 }).sqrt()
            }
            BodyShape::Sphere { radius } => {
                if !(radius.is_finite() && *radius > 0.0 && *radius <= MAX_COORDINATE) {
                    return Err(format!(
                        "sphere radius must be positive and finite, got {radius}"
                    ));
                }
                *radius
            }
        };
        finite("center", self.center, MAX_COORDINATE)?;
        let c = [self.center.0, self.center.1, self.center.2];
        let axes = if slice { 2 } else { 3 };
        for a in 0..axes {
            if c[a] <= 0.0 || c[a] >= domain[a] {
                return Err(format!(
                    "center {:?} lies outside the domain [0, {domain:?}]",
                    self.center
                ));
            }
            if 2.0 * extent >= domain[a] {
                return Err(format!(
                    "the body spans {:.3} m, too large for the domain's {:.3} m along axis {a}",
                    2.0 * extent,
                    domain[a]
                ));
            }
        }
        if !(MIN_BODY_DENSITY..=MAX_BODY_DENSITY).contains(&self.density) {
            return Err(format!(
                "density must be in [{MIN_BODY_DENSITY:e}, {MAX_BODY_DENSITY:e}] kg/m^3, got {}",
                self.density
            ));
        }
        validate::check_speed([self.velocity.0, self.velocity.1, self.velocity.2])
            .map_err(|m| format!("velocity {:?}: {m}", self.velocity))?;
        finite("angular_velocity", self.angular_velocity, MAX_SPEED)?;
        finite("rotation_deg", self.rotation_deg, 1e6)?;
        if slice
            && (self.rotation_deg.0 != 0.0
                || self.rotation_deg.1 != 0.0
                || self.angular_velocity.0 != 0.0
                || self.angular_velocity.1 != 0.0)
        {
            return Err(
                "a body in a smoke slice turns about z only: rotation_deg and angular_velocity \
                 must have zero x and y"
                    .into(),
            );
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(format!(
                "restitution must be in [0, 1], got {}",
                self.restitution
            ));
        }
        if !(self.friction.is_finite() && (0.0..=100.0).contains(&self.friction)) {
            return Err(format!(
                "friction must be in [0, 100], got {}",
                self.friction
            ));
        }
        Ok(())
    }
}

/// A body with `shape`'s own extent (a box between its corners, a sphere of its radius),
/// at rest, with the default density and material: what a scene's shapes become when they
/// take part as bodies.
pub fn shape_body(shape: &Shape, motion: BodyMotion) -> BodySpec {
    let (shape, center) = match shape {
        Shape::Box { min, max, .. } => (
            BodyShape::Box {
                half_extents: (
                    0.5 * (max.0 - min.0),
                    0.5 * (max.1 - min.1),
                    0.5 * (max.2 - min.2),
                ),
            },
            (
                0.5 * (min.0 + max.0),
                0.5 * (min.1 + max.1),
                0.5 * (min.2 + max.2),
            ),
        ),
        Shape::Sphere { center, radius, .. } => (BodyShape::Sphere { radius: *radius }, *center),
        // Validation keeps other shapes out of `smoke.obstacle`; were one to come here it
        // would be the box of its bounds.
        other => {
            let (lo, hi) = other.bounds();
            return shape_body(
                &Shape::Box {
                    min: (lo[0], lo[1], lo[2]),
                    max: (hi[0], hi[1], hi[2]),
                    velocity: (0.0, 0.0, 0.0),
                },
                motion,
            );
        }
    };
    BodySpec {
        shape,
        center,
        density: default_body_density(),
        velocity: (0.0, 0.0, 0.0),
        angular_velocity: (0.0, 0.0, 0.0),
        rotation_deg: (0.0, 0.0, 0.0),
        restitution: default_restitution(),
        friction: default_friction(),
        motion,
    }
}

/// The kinematic body a smoke scene's `smoke.obstacle` stands for: a box keeps its x-y
/// extents across the slice's `depth`, a sphere is the disc of its radius, both centred
/// in the slice and moving on the shape's x-y velocity (a slice body does not move in z).
pub fn obstacle_body(shape: &Shape, depth: f64) -> BodySpec {
    let v = shape.velocity();
    let mut body = shape_body(shape, BodyMotion::Kinematic);
    if let BodyShape::Box { half_extents } = &mut body.shape {
        half_extents.2 = 0.5 * depth;
    }
    body.center.2 = 0.5 * depth;
    body.velocity = (v[0], v[1], 0.0);
    body
}
