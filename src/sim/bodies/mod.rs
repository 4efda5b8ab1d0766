//! Rigid bodies: their state and dynamics on the host in f64, and their two-way coupling
//! with the fluid on the GPU ([`coupling`], coupling.wgsl).
//!
//! A scene has at most [`MAX_BODIES`] bodies, so their dynamics costs the host microseconds
//! per substep and keeps f64. Each substep, in order (the default, strong scheme):
//! 1. every dynamic body takes the forces that do not depend on the pressure: gravity, the
//!    smoke's buoyancy, the user's spring ([`BodySet::predict`]), giving v*;
//! 2. the bodies' state goes to the GPU, and every cell whose centre lies inside a body
//!    becomes SOLID with the body's velocity v* + w* x r (the boundary stage then gives the
//!    faces u.n = u_body.n);
//! 3. the pressure solve includes each body's motion ([`strong`], strong.wgsl): it solves
//!    (A + s J^T M^-1 J) phi = b, so the pressure and the bodies' velocities answer each
//!    other in the same solve, stable at any density ratio; the body's cells then take its
//!    new velocity and the projection makes the fluid around it divergence-free with it;
//! 4. the host reads each body's face sums J phi, turns them into the fluid's force and
//!    torque, and integrates every body over the substep ([`BodySet::step`]): the pressure's
//!    impulse, contact impulses with the walls and between bodies, then the position and
//!    orientation with the new velocities; particles are pushed out of the bodies at their
//!    new places.
//!
//! The weak scheme (`body_coupling: weak`) skips 1 and the added term in 3: the fluid's
//! force of one substep moves the body after the solve, with an estimate of the added mass
//! that keeps bodies denser than about half the fluid stable.
//!
//! In a smoke slice a body is the 3D body across the slice's depth (a box a prism, a sphere
//! a cylinder of the slice's depth): it moves in x-y and turns about z only.

pub mod contact;
pub mod coupling;
pub mod push;
pub mod regions;
pub mod strong;
pub mod viscous;

use crate::scene::{BodyMotion, BodyShape, BodySpec, CouplingScheme, Scene, SceneKind};
use crate::sim::SimError;
use glam::{DMat3, DQuat, DVec3};

pub use crate::scene::MAX_BODIES;

/// A body's shape resolved for the simulation: half extents of a box, or a sphere's
/// radius (in a slice, the cylinder's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Solid {
    Box { half: DVec3 },
    Sphere { radius: f64 },
}

/// A user's spring on a body: the body point `local` (body frame, m) is pulled towards
/// `target` (world, m) with stiffness `stiffness` per kg (1/s^2), critically damped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grab {
    pub local: DVec3,
    pub target: DVec3,
    pub stiffness: f64,
    /// The fastest the grab moves a held kinematic body, m/s.
    pub max_speed: f64,
    /// Where `target` was when the current frame began: a held kinematic body's velocity
    /// is the mouse's displacement over the frame ([`BodySet::begin_frame`]).
    pub frame_start: DVec3,
}

/// How a user's grab pulls: the spring's stiffness per kg (1/s^2) and the fastest it moves
/// a held kinematic body (m/s). The viewer chooses them (`ui::picking::MOUSE_SPRING`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrabSpring {
    pub stiffness: f64,
    pub max_speed: f64,
}

impl Grab {
    /// The spring from the point of `body` at world point `at` to `at` itself (so grabbing
    /// does not jerk the body).
    pub fn at(body: &RigidBody, at: DVec3, spring: GrabSpring) -> Grab {
        Grab {
            local: body.orientation.inverse() * (at - body.position),
            target: at,
            stiffness: spring.stiffness,
            max_speed: spring.max_speed,
            frame_start: at,
        }
    }
}

/// One rigid body's state, f64.
#[derive(Clone, Debug)]
pub struct RigidBody {
    pub solid: Solid,
    pub motion: BodyMotion,
    pub density: f64,
    pub mass: f64,
    /// Principal moments of inertia about the body's own axes, kg m^2.
    pub inertia: DVec3,
    pub restitution: f64,
    pub friction: f64,
    /// Centre of mass, m.
    pub position: DVec3,
    /// Body-to-world rotation.
    pub orientation: DQuat,
    /// Linear momentum, kg m/s (dynamic bodies).
    pub momentum: DVec3,
    /// Angular momentum about the centre of mass, world axes, kg m^2/s (dynamic bodies).
    pub angular_momentum: DVec3,
    /// Velocity and angular velocity of a kinematic body (zero for a fixed one).
    pub prescribed_velocity: DVec3,
    pub prescribed_omega: DVec3,
    /// Force and torque (about the centre) the fluid exerted in the last substep, N, N m.
    pub fluid_force: DVec3,
    pub fluid_torque: DVec3,
    /// The part of them from the hydrostatic half cell between the FLUID cells' centres and
    /// the body's faces (the liquid's; [`strong::FluidForce::surface`]). The strong scheme
    /// applies it with gravity before the next solve.
    pub surface_force: DVec3,
    pub surface_torque: DVec3,
    /// Force and torque of the liquid's viscous stress in the last substep (the viscosity
    /// step's change of momentum over dt; not saved: a resumed run shows zero until its
    /// first substep).
    pub viscous_force: DVec3,
    pub viscous_torque: DVec3,
    /// Speed (m/s, the turning part at the bounding radius) the strong scheme's forces
    /// before the solve gave the body this substep ([`BodySet::predict`]).
    pub predicted_gain: f64,
    /// Velocity and angular velocity the grid saw in the last substep (the added-mass
    /// stabilisation in [`BodySet::step`] reads the change since).
    pub seen_velocity: DVec3,
    pub seen_omega: DVec3,
    pub grab: Option<Grab>,
}

impl RigidBody {
    /// The body of `spec`; `slice_depth` is the depth of a smoke slice (None in 3D).
    pub fn new(spec: &BodySpec, slice_depth: Option<f64>) -> Self {
        let rho = spec.density;
        let (solid, mass, inertia) = match (&spec.shape, slice_depth) {
            (BodyShape::Box { half_extents: e }, depth) => {
                let hz = depth.map_or(e.2, |d| 0.5 * d);
                let half = DVec3::new(e.0, e.1, hz);
                let m = rho * 8.0 * half.x * half.y * half.z;
                let sq = half * half;
                let i = DVec3::new(sq.y + sq.z, sq.x + sq.z, sq.x + sq.y) * (m / 3.0);
                (Solid::Box { half }, m, i)
            }
            (BodyShape::Sphere { radius: r }, None) => {
                let m = rho * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                (
                    Solid::Sphere { radius: *r },
                    m,
                    DVec3::splat(0.4 * m * r * r),
                )
            }
            (BodyShape::Sphere { radius: r }, Some(d)) => {
                // A cylinder along z across the slice.
                let m = rho * std::f64::consts::PI * r * r * d;
                let ixy = m * (3.0 * r * r + d * d) / 12.0;
                (
                    Solid::Sphere { radius: *r },
                    m,
                    DVec3::new(ixy, ixy, 0.5 * m * r * r),
                )
            }
        };
        let deg = |a: f64| a.to_radians();
        let r = spec.rotation_deg;
        let orientation = DQuat::from_rotation_z(deg(r.2))
            * DQuat::from_rotation_y(deg(r.1))
            * DQuat::from_rotation_x(deg(r.0));
        let v = DVec3::new(spec.velocity.0, spec.velocity.1, spec.velocity.2);
        let w = DVec3::new(
            spec.angular_velocity.0,
            spec.angular_velocity.1,
            spec.angular_velocity.2,
        );
        let mut body = RigidBody {
            solid,
            motion: spec.motion,
            density: rho,
            mass,
            inertia,
            restitution: spec.restitution,
            friction: spec.friction,
            position: DVec3::new(spec.center.0, spec.center.1, spec.center.2),
            orientation: orientation.normalize(),
            momentum: DVec3::ZERO,
            angular_momentum: DVec3::ZERO,
            prescribed_velocity: DVec3::ZERO,
            prescribed_omega: DVec3::ZERO,
            fluid_force: DVec3::ZERO,
            fluid_torque: DVec3::ZERO,
            surface_force: DVec3::ZERO,
            surface_torque: DVec3::ZERO,
            viscous_force: DVec3::ZERO,
            viscous_torque: DVec3::ZERO,
            predicted_gain: 0.0,
            seen_velocity: DVec3::ZERO,
            seen_omega: DVec3::ZERO,
            grab: None,
        };
        match spec.motion {
            BodyMotion::Dynamic => {
                body.momentum = v * mass;
                body.angular_momentum = body.world_inertia() * w;
            }
            BodyMotion::Kinematic => {
                body.prescribed_velocity = v;
                body.prescribed_omega = w;
            }
            BodyMotion::Fixed => {}
        }
        body.seen_velocity = body.velocity();
        body.seen_omega = body.omega();
        body
    }

    pub fn is_dynamic(&self) -> bool {
        self.motion == BodyMotion::Dynamic
    }

    /// The body's extent across its thinnest side, m.
    pub fn thinnest(&self) -> f64 {
        match self.solid {
            Solid::Sphere { radius } => 2.0 * radius,
            Solid::Box { half } => 2.0 * half.min_element(),
        }
    }

    /// Whether the fluid's pressure can turn the body. Not a sphere: pressure acts along
    /// its normals, all through its centre, so the torque its faces sum to is only the
    /// grid's, and a body at 0.01x water has so little inertia that it spun floating balls
    /// at 2-3.5 rad/s. The solve gives a sphere no spin and its summed torque is dropped;
    /// contacts still turn it.
    pub fn pressure_turns(&self) -> bool {
        !matches!(self.solid, Solid::Sphere { .. })
    }

    /// Volume, m^3 (in a slice, across the slice's depth).
    pub fn volume(&self) -> f64 {
        self.mass / self.density
    }

    pub fn rotation(&self) -> DMat3 {
        DMat3::from_quat(self.orientation)
    }

    /// Inertia tensor in world axes, kg m^2.
    pub fn world_inertia(&self) -> DMat3 {
        let r = self.rotation();
        r * DMat3::from_diagonal(self.inertia) * r.transpose()
    }

    pub fn inverse_mass(&self) -> f64 {
        if self.is_dynamic() {
            1.0 / self.mass
        } else {
            0.0
        }
    }

    /// Inverse world inertia (zero for fixed and kinematic bodies).
    pub fn inverse_inertia(&self) -> DMat3 {
        if !self.is_dynamic() {
            return DMat3::ZERO;
        }
        let r = self.rotation();
        r * DMat3::from_diagonal(self.inertia.recip()) * r.transpose()
    }

    pub fn velocity(&self) -> DVec3 {
        if self.is_dynamic() {
            self.momentum / self.mass
        } else {
            self.prescribed_velocity
        }
    }

    pub fn omega(&self) -> DVec3 {
        if self.is_dynamic() {
            self.inverse_inertia() * self.angular_momentum
        } else {
            self.prescribed_omega
        }
    }

    /// Velocity of the body's material at world point `p`.
    pub fn point_velocity(&self, p: DVec3) -> DVec3 {
        self.velocity() + self.omega().cross(p - self.position)
    }

    /// Longest over shortest extent (1 for a sphere; a slice's depth does not count).
    pub fn aspect(&self, slice: bool) -> f64 {
        match self.solid {
            Solid::Sphere { .. } => 1.0,
            Solid::Box { half } if slice => half.x.max(half.y) / half.x.min(half.y),
            Solid::Box { half } => half.max_element() / half.min_element(),
        }
    }

    /// Half extents of the body's axis-aligned bounding box, m.
    pub fn aabb_half(&self) -> DVec3 {
        match self.solid {
            Solid::Sphere { radius } => DVec3::splat(radius),
            Solid::Box { half } => {
                let r = self.rotation();
                let a = DMat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
                a * half
            }
        }
    }

    /// Whether world point `p` lies inside the body (in a slice, `slice` ignores z).
    pub fn contains(&self, p: DVec3, slice: bool) -> bool {
        let mut d = p - self.position;
        if slice {
            d.z = 0.0;
        }
        match self.solid {
            Solid::Sphere { radius } => d.length_squared() <= radius * radius,
            Solid::Box { half } => {
                let l = self.orientation.inverse() * d;
                l.x.abs() <= half.x && l.y.abs() <= half.y && (slice || l.z.abs() <= half.z)
            }
        }
    }
}

/// Every body of a scene, and what its dynamics needs from the scene.
#[derive(Clone, Debug)]
pub struct BodySet {
    pub bodies: Vec<RigidBody>,
    /// Domain size, m (the walls bodies collide with).
    pub domain: DVec3,
    pub gravity: DVec3,
    /// A smoke slice: motion in x-y, rotation about z.
    pub slice: bool,
    /// Density of the fluid the bodies are in, kg/m^3.
    pub fluid_density: f64,
    /// The smoke's pressure is the deviation from air at rest (Boussinesq: gravity never
    /// acts on the air itself), so its hydrostatic part, the air's buoyancy -rho V g, is
    /// added here. The liquid's pressure includes gravity; its buoyancy comes from the
    /// pressure integral alone.
    pub hydrostatic_buoyancy: bool,
    /// Estimated added mass of a body, as a multiple of the fluid mass it displaces (see
    /// [`BodySet::step`]); 0 for bodies that feel no fluid.
    pub added_mass: f64,
    /// The scene's static solids as fixed bodies the bodies collide with (they are the
    /// grid's static SOLID cells already; they are not stamped, listed or written out).
    pub obstacles: Vec<RigidBody>,
    /// How the fluid's force enters: with the solve ([`BodySet::predict`] before it,
    /// [`BodySet::step`] with the pressure after it), or after it (the weak scheme).
    pub scheme: CouplingScheme,
}

/// Fewest cells a dynamic body in the liquid should span across its thinnest side. Under
/// that its floating is under-resolved. A box at half the water's density (faces cut by
/// the grid), tilted 5 degrees at its waterline in a still pool, 1.6 cells thin at 16^3
/// and centred at (0.75, 0.5, 0.3) m: the liquid's kinetic energy doubled from the first
/// second to the third (0.0052 to 0.0112 J, out of potential energy: the total did not
/// grow), the box rocking at 0.66 and then 0.87 rad/s;
/// at 24^3 (2.4 cells) it kept rocking at 0.4-0.5 rad/s; at 32^3 (3.2 cells) its rocking
/// died down (0.7 to 0.13 rad/s in two seconds). Held fixed, the thin box let the pool
/// calm down. The thin box calmed the pool at three other places, so thin is not always
/// wrong, but nothing then says when it is. A box 4 cells thin calms the pool
/// (tests/integration/bodies.rs, `a_tilted_floating_box_calms_a_still_pool`).
/// `eddy run`, `eddy check` and the viewer's Bodies panel name the bodies under it.
pub const THIN_BODY_CELLS: f64 = 3.0;

/// f64 words of one body's motion in [`BodySet::state_words`].
pub(crate) const BODY_WORDS: usize = 38;

impl BodySet {
    /// Every body's motion as f64 words (a saved state, src/sim/runner/state.rs): position,
    /// orientation, momenta, prescribed motion, the fluid's last forces and what the weak
    /// scheme's correction remembers. What the scene gives (shape, mass, material) is not
    /// saved, nor a grab (the viewer's, never part of a headless run).
    pub fn state_words(&self) -> Vec<f64> {
        let mut w = vec![self.bodies.len() as f64];
        for b in &self.bodies {
            let q = b.orientation;
            w.extend(b.position.to_array());
            w.extend([q.x, q.y, q.z, q.w]);
            for v in [
                b.momentum,
                b.angular_momentum,
                b.prescribed_velocity,
                b.prescribed_omega,
                b.fluid_force,
                b.fluid_torque,
                b.surface_force,
                b.surface_torque,
                b.seen_velocity,
                b.seen_omega,
            ] {
                w.extend(v.to_array());
            }
            w.push(b.predicted_gain);
        }
        w
    }

    /// Restores what [`Self::state_words`] saved into the bodies of the same scene.
    pub fn restore_words(&mut self, w: &[f64]) -> Result<(), SimError> {
        let n = self.bodies.len();
        if w.first().copied() != Some(n as f64) || w.len() != 1 + n * BODY_WORDS {
            return Err(SimError::Unsupported(format!(
                "the saved state holds {} bodies, the scene {n}",
                w.first().copied().unwrap_or(0.0)
            )));
        }
        for (b, w) in self.bodies.iter_mut().zip(w[1..].chunks_exact(BODY_WORDS)) {
            let v = |i: usize| DVec3::new(w[i], w[i + 1], w[i + 2]);
            b.position = v(0);
            b.orientation = DQuat::from_xyzw(w[3], w[4], w[5], w[6]);
            b.momentum = v(7);
            b.angular_momentum = v(10);
            b.prescribed_velocity = v(13);
            b.prescribed_omega = v(16);
            b.fluid_force = v(19);
            b.fluid_torque = v(22);
            b.surface_force = v(25);
            b.surface_torque = v(28);
            b.seen_velocity = v(31);
            b.seen_omega = v(34);
            b.predicted_gain = w[37];
            b.grab = None;
        }
        Ok(())
    }
}

impl BodySet {
    /// Cells of `h` m that `b` spans across its thinnest side, for a dynamic body of a
    /// liquid (what [`THIN_BODY_CELLS`] bounds); None for other bodies and in a slice.
    pub fn cells_across(&self, b: &RigidBody, h: f64) -> Option<f64> {
        (b.is_dynamic() && !self.slice).then(|| b.thinnest() / h)
    }

    /// Body `i`'s settling through the still liquid of viscosity `nu` (m^2/s), a dynamic
    /// body of a liquid only ([`viscous::settling_estimate`]).
    pub fn settling(&self, i: usize, nu: f64) -> Option<viscous::SettlingEstimate> {
        let b = self
            .bodies
            .get(i)
            .filter(|b| b.is_dynamic() && !self.slice)?;
        let g = self.gravity.length();
        viscous::settling_estimate(b.volume(), b.density, self.fluid_density, nu, g)
    }

    /// The bodies under [`THIN_BODY_CELLS`] (see [`BodySet::cells_across`]): each one's
    /// index and the cells it spans.
    pub fn thin_bodies(&self, h: f64) -> Vec<(usize, f64)> {
        self.bodies
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i, self.cells_across(b, h)?)))
            .filter(|(_, cells)| *cells < THIN_BODY_CELLS)
            .collect()
    }

    /// Drops the seeded particles that lie inside a body: a body placed in the liquid
    /// displaces it, so the liquid is the scene's fluid less the bodies. Without this the
    /// first substep pushed those particles out to the body's surface (adding the body's
    /// volume to the liquid) and gave the ones in front of a moving body its velocity
    /// (momentum that nothing took from the body). Returns how many were dropped.
    pub fn displace_seeded(&self, init: &mut crate::scene::InitialState) -> usize {
        let before = init.positions.len();
        let outside = |p: &[f32; 4]| {
            let x = DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
            !self.bodies.iter().any(|b| b.contains(x, self.slice))
        };
        (init.positions, init.velocities) = init
            .positions
            .iter()
            .zip(&init.velocities)
            .filter(|(p, _)| outside(p))
            .unzip();
        before - init.positions.len()
    }
}

impl BodySet {
    /// The bodies of `scene`, or None when it has none (then nothing in a step changes).
    pub fn from_scene(scene: &Scene) -> Option<Self> {
        if scene.bodies.is_empty() {
            return None;
        }
        let slice = scene.kind == SceneKind::Smoke;
        let depth = slice.then_some(scene.domain.2);
        let mut bodies: Vec<RigidBody> = scene
            .bodies
            .iter()
            .map(|b| RigidBody::new(b, depth))
            .collect();
        if slice {
            for b in &mut bodies {
                b.position.z = 0.5 * scene.domain.2;
            }
        }
        let obstacles = scene
            .solids
            .iter()
            .map(|s| {
                // An immovable obstacle for the contacts (they take the body's material).
                let spec = crate::scene::shape_body(s, BodyMotion::Fixed);
                let mut o = RigidBody::new(&spec, depth);
                if slice {
                    o.position.z = 0.5 * scene.domain.2;
                }
                o
            })
            .collect();
        Some(BodySet {
            obstacles,
            bodies,
            domain: DVec3::new(scene.domain.0, scene.domain.1, scene.domain.2),
            gravity: DVec3::new(scene.gravity.0, scene.gravity.1, scene.gravity.2),
            slice,
            fluid_density: if slice {
                super::core::params::AIR_DENSITY
            } else {
                super::core::params::DENSITY
            },
            hydrostatic_buoyancy: slice,
            added_mass: match scene.body_coupling {
                CouplingScheme::Strong => 0.0,
                CouplingScheme::Weak => ADDED_MASS,
            },
            scheme: scene.body_coupling,
        })
    }

    /// Total force on body `i` other than contacts that [`BodySet::step`] applies: in the
    /// weak scheme the fluid's, gravity, buoyancy of the smoke's air, the user's spring; in
    /// the strong scheme only the pressure's part of the fluid's (the rest went in before
    /// the solve, [`BodySet::predict`]).
    fn applied(&self, i: usize) -> (DVec3, DVec3) {
        let b = &self.bodies[i];
        match self.scheme {
            CouplingScheme::Weak => {
                let (f, t) = self.explicit(i);
                (f + b.fluid_force, t + b.fluid_torque)
            }
            CouplingScheme::Strong => (
                b.fluid_force - b.surface_force,
                b.fluid_torque - b.surface_torque,
            ),
        }
    }

    /// The strong scheme's first half of a substep of `dt`: every dynamic body takes the
    /// forces that do not depend on the pressure (gravity, the smoke's buoyancy, the user's
    /// spring, and the last substep's hydrostatic part of the face pressure), so the solve
    /// that follows sees v* and answers with the pressure ([`BodySet::step`]).
    pub fn predict(&mut self, dt: f64) {
        for i in 0..self.bodies.len() {
            if !self.bodies[i].is_dynamic() {
                continue;
            }
            let (mut f, mut t) = self.explicit(i);
            let b = &mut self.bodies[i];
            f += b.surface_force;
            t += b.surface_torque;
            let dv = dt * f / b.mass;
            let dw = b.inverse_inertia() * (dt * t);
            b.momentum += b.mass * dv;
            b.angular_momentum += b.world_inertia() * dw;
            if self.slice {
                b.momentum.z = 0.0;
                b.angular_momentum.x = 0.0;
                b.angular_momentum.y = 0.0;
            }
            b.predicted_gain = dv.length() + dw.length() * b.aabb_half().length();
        }
    }

    /// Force and torque on body `i` that do not come from the fluid's pressure: gravity,
    /// buoyancy of the smoke's air, the user's spring.
    fn explicit(&self, i: usize) -> (DVec3, DVec3) {
        let b = &self.bodies[i];
        let mut f = b.mass * self.gravity;
        let mut t = DVec3::ZERO;
        if self.hydrostatic_buoyancy {
            f -= self.fluid_density * b.volume() * self.gravity;
        }
        if let Some(g) = b.grab {
            let p = b.position + b.orientation * g.local;
            // Critically damped for the body's mass moving linearly.
            let damping = 2.0 * g.stiffness.sqrt();
            let spring = b.mass * (g.stiffness * (g.target - p) - damping * b.point_velocity(p));
            f += spring;
            t += (p - b.position).cross(spring);
        }
        (f, t)
    }

    /// Advances every body by `dt`: momentum from the applied forces, contact impulses,
    /// then position and orientation from the new velocities (symplectic Euler).
    ///
    /// The fluid's force was computed with the body's velocity of this substep on the
    /// grid, against fluid that moved with last substep's: it holds -m_a (v_n - v_n-1) / dt,
    /// the reaction of the fluid's added mass m_a to the body's last change of velocity.
    /// Applied as is, the update v_n+1 - v_n = dt W / m - (m_a / m)(v_n - v_n-1) flips sign
    /// and grows each substep once m_a > m: a light body in a liquid blows up. With an
    /// estimate m_e of the added mass the update solves
    /// (m + m_e)(v_n+1 - v_n) = dt (F + m g) + m_e (v_n - v_n-1),
    /// whose steady acceleration W / (m + m_a) is the true one, and whose error shrinks by
    /// (m_e - m_a) / (m + m_e) per substep: stable for any m_e above (m_a - m) / 2.
    /// m_e is `added_mass` times the displaced fluid's mass (the same ratio for the
    /// inertia), over the whole body (a body half out of the liquid converges a little
    /// slower, at the same steady state).
    pub fn step(&mut self, dt: f64) {
        // Speed each body gains from its forces in this substep (its point speed at the
        // bounding radius for the turning part).
        let mut gained = vec![0.0f64; self.bodies.len()];
        for i in 0..self.bodies.len() {
            if !self.bodies[i].is_dynamic() {
                continue;
            }
            let (f, t) = self.applied(i);
            let k = self.added_mass * self.fluid_density / self.bodies[i].density;
            // A thin body turning sweeps fluid far from its axis: its added inertia over its
            // own grows with its aspect ratio (a plate's as 0.3 rho_f/rho_b times it).
            let k_turn = k * self.bodies[i].aspect(self.slice);
            let b = &mut self.bodies[i];
            let (v, w) = (b.velocity(), b.omega());
            let dv = (dt * f / b.mass + k * (v - b.seen_velocity)) / (1.0 + k);
            let dw =
                (b.inverse_inertia() * (dt * t) + k_turn * (w - b.seen_omega)) / (1.0 + k_turn);
            b.seen_velocity = v;
            b.seen_omega = w;
            gained[i] = dv.length() + dw.length() * b.aabb_half().length() + b.predicted_gain;
            b.predicted_gain = 0.0;
            b.momentum += b.mass * dv;
            b.angular_momentum += b.world_inertia() * dw;
            if self.slice {
                b.momentum.z = 0.0;
                b.angular_momentum.x = 0.0;
                b.angular_momentum.y = 0.0;
            }
        }
        let g = self.gravity.length();
        let rest: Vec<f64> = gained
            .iter()
            .map(|&v| contact::rest_speed(g, v, dt))
            .collect();
        // A body within what it closes at its resting speed in one substep of something is
        // in (speculative) contact with it.
        let margins: Vec<f64> = rest.iter().map(|r| r * dt).collect();
        let contacts = contact::find_contacts_within(self, &margins);
        let before: Vec<(DVec3, DVec3)> = self
            .bodies
            .iter()
            .map(|b| (b.velocity(), b.omega()))
            .collect();
        contact::solve(self, &contacts, dt, &rest);
        // A contact's change of velocity counts as seen: the stabilisation above compensates
        // only the fluid's own reaction. Next to a wall the fluid's added mass is cut short
        // and does not answer a bounce in full; compensating the bounce anyway would add it
        // again, amplified (1 + m_e / m) times over the following substeps.
        for (b, (v, w)) in self.bodies.iter_mut().zip(before) {
            if b.is_dynamic() {
                b.seen_velocity += b.velocity() - v;
                b.seen_omega += b.omega() - w;
            }
        }
        for b in &mut self.bodies {
            match b.motion {
                BodyMotion::Fixed => continue,
                // Held by the user: it stays where the mouse put it
                // ([`BodySet::move_held_kinematic`]).
                BodyMotion::Kinematic if b.grab.is_some() => continue,
                BodyMotion::Kinematic => bounce_kinematic(b, self.domain, self.slice, dt),
                BodyMotion::Dynamic => {}
            }
            let v = b.velocity();
            let w = b.omega();
            b.position += dt * v;
            // Exact rotation by w dt; the angular momentum is kept, so a free body's
            // precession follows from the world inertia changing with the orientation.
            b.orientation = (DQuat::from_scaled_axis(w * dt) * b.orientation).normalize();
        }
    }

    /// Stores the fluid's force and torque on each body, zeroing what a slice body cannot
    /// feel (z force, x and y torque).
    pub fn set_fluid_forces(&mut self, forces: &[strong::FluidForce]) {
        let flat = |v: DVec3, keep_z: bool| match (self.slice, keep_z) {
            (true, true) => DVec3::new(0.0, 0.0, v.z),
            (true, false) => DVec3::new(v.x, v.y, 0.0),
            (false, _) => v,
        };
        for (b, f) in self.bodies.iter_mut().zip(forces) {
            let (force, torque) = f.total();
            let turns = b.pressure_turns();
            let keep = |t: DVec3| if turns { t } else { DVec3::ZERO };
            b.fluid_force = flat(force, false);
            b.fluid_torque = flat(keep(torque), true);
            b.surface_force = flat(f.surface.0, false);
            b.surface_torque = flat(keep(f.surface.1), true);
        }
    }

    /// Total linear momentum of the dynamic bodies, kg m/s.
    pub fn total_momentum(&self) -> DVec3 {
        self.bodies
            .iter()
            .filter(|b| b.is_dynamic())
            .map(|b| b.momentum)
            .sum()
    }

    /// Fastest speed of any point of any body, m/s (the CFL substep counts it: a body may
    /// not cross more cells per substep than the fluid).
    pub fn max_speed(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| b.velocity().length() + b.omega().length() * b.aabb_half().length())
            .fold(0.0, f64::max)
    }

    /// Whether the mouse can take hold of body `i`: dynamic and kinematic bodies can, fixed
    /// ones (and indices past the end) cannot.
    pub fn grabbable(&self, i: usize) -> bool {
        self.bodies
            .get(i)
            .is_some_and(|b| b.motion != BodyMotion::Fixed)
    }

    /// Grabs body `i` at world point `at` with `spring`. Returns false (and
    /// grabs nothing) for a fixed body. A kinematic body stops where it is: held, it moves
    /// only with the mouse.
    pub fn grab(&mut self, i: usize, at: DVec3, spring: GrabSpring) -> bool {
        if !self.grabbable(i) {
            return false;
        }
        let b = &mut self.bodies[i];
        b.grab = Some(Grab::at(b, at, spring));
        if b.motion == BodyMotion::Kinematic {
            b.prescribed_velocity = DVec3::ZERO;
            b.prescribed_omega = DVec3::ZERO;
        }
        true
    }

    /// Moves the mouse's end of body `i`'s grab to `target`. The spring in [`Self::step`]
    /// pulls a dynamic body there; a kinematic body, which no force moves, is placed at once
    /// with its grabbed point on the target ([`Self::move_held_kinematic`]), and its faces
    /// move with the mouse's velocity over the frame ([`Self::begin_frame`]).
    pub fn move_grab(&mut self, i: usize, target: DVec3) {
        if self.move_held_kinematic(i, target) {
            return;
        }
        if let Some(g) = self.bodies.get_mut(i).and_then(|b| b.grab.as_mut()) {
            g.target = target;
        }
    }

    /// While the simulation is paused: the mouse's moves so far are not motion the fluid
    /// should see when it resumes (the body was placed, not swept through the fluid).
    pub fn restart_grab_motion(&mut self) {
        for g in self.bodies.iter_mut().filter_map(|b| b.grab.as_mut()) {
            g.frame_start = g.target;
        }
    }

    /// At the start of each simulated frame: a held kinematic body's velocity becomes the
    /// mouse's displacement since the last frame began over `frame_dt` (at most
    /// the grab's `max_speed`), so the fluid sees it move as far as it moved, however many
    /// cursor events came in between, and sees it at rest once the mouse stops.
    pub fn begin_frame(&mut self, frame_dt: f64) {
        let slice = self.slice;
        for b in &mut self.bodies {
            let Some(g) = b.grab.as_mut() else { continue };
            let moved = g.target - g.frame_start;
            g.frame_start = g.target;
            if b.motion != BodyMotion::Kinematic || frame_dt <= 0.0 {
                continue;
            }
            let mut v = (moved / frame_dt).clamp_length_max(g.max_speed);
            if slice {
                v.z = 0.0;
            }
            b.prescribed_velocity = v;
            b.prescribed_omega = DVec3::ZERO;
        }
    }

    /// Lets go of body `i`; a kinematic one goes back to moving on its own, with the
    /// velocity and angular velocity `scene` gives it, from where it was dropped.
    pub fn release(&mut self, i: usize, scene: &crate::scene::Scene) {
        let Some(b) = self.bodies.get_mut(i) else {
            return;
        };
        b.grab = None;
        if let (BodyMotion::Kinematic, Some(s)) = (b.motion, scene.bodies.get(i)) {
            b.prescribed_velocity = DVec3::from(s.velocity);
            b.prescribed_omega = DVec3::from(s.angular_velocity);
            if self.slice {
                b.prescribed_velocity.z = 0.0;
                b.prescribed_omega.x = 0.0;
                b.prescribed_omega.y = 0.0;
            }
        }
    }
}

impl BodySet {
    /// What stops a run after a substep of `dt` in which no body may move more than
    /// `max_move` m: a body whose state is not finite, whose centre left the domain, or
    /// which moved farther than that (its speed is past what the substep resolves). Returns
    /// the first such body and what went wrong.
    pub fn check(&self, dt: f64, max_move: f64) -> Result<(), (usize, String)> {
        for (i, b) in self.bodies.iter().enumerate() {
            let (v, w) = (b.velocity(), b.omega());
            if !(b.position.is_finite()
                && b.orientation.is_finite()
                && v.is_finite()
                && w.is_finite())
            {
                return Err((
                    i,
                    format!(
                        "left the finite numbers (position {}, velocity {v}, angular velocity \
                         {w})",
                        b.position
                    ),
                ));
            }
            let speed = v.length() + w.length() * b.aabb_half().length();
            if b.motion != BodyMotion::Fixed && speed * dt > max_move {
                return Err((
                    i,
                    format!(
                        "moved up to {:.3e} m in a substep of {dt:.3e} s (speed {speed:.3e} \
                         m/s), more than the {max_move:.3e} m a substep may move it",
                        speed * dt
                    ),
                ));
            }
            let axes = if self.slice { 2 } else { 3 };
            if (0..axes).any(|a| b.position[a] < 0.0 || b.position[a] > self.domain[a]) {
                return Err((
                    i,
                    format!(
                        "has its centre at {:.4?} m, outside the domain {:.4?} m",
                        b.position.to_array(),
                        self.domain.to_array()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a set whose dynamic bodies start inside another body or inside a static solid
    /// (deeper than `tolerance` m), naming them. A kinematic body may start across a solid:
    /// its motion is prescribed and no contact pushes it out.
    pub fn check_start(&self, tolerance: f64) -> Result<(), SimError> {
        let found = contact::overlaps(self, tolerance);
        if found.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = found
            .iter()
            .map(|(i, o, d)| match o {
                contact::Overlap::Body(j) => format!("body {i} and body {j} by {d:.3e} m"),
                contact::Overlap::Solid(k) => format!("body {i} and solid {k} by {d:.3e} m"),
            })
            .collect();
        Err(SimError::BodiesOverlap(list.join(", ")))
    }
}

/// Overlap at t = 0 tolerated as round-off, in cells.
pub const START_OVERLAP_CELLS: f64 = 1e-3;

/// The farthest a body may move in one substep, in cells per unit of the scene's `cfl`: the
/// CFL substep moves it at most `cfl` cells at the speed it had, and twice that leaves room
/// for what it gains within the substep.
pub const MAX_MOVE_CFL: f64 = 2.0;

/// Refuses a scene whose bodies start inside each other or inside a static solid.
pub fn check_scene_start(scene: &Scene) -> Result<(), SimError> {
    match BodySet::from_scene(scene) {
        Some(set) => set.check_start(START_OVERLAP_CELLS * scene.h()),
        None => Ok(()),
    }
}

/// Default estimate of a body's added mass over its displaced fluid mass: a sphere's is
/// 1/2, a cube's about 0.7 moving face on, a thin plate's more, and a body near a wall or
/// in a closed box more again; 2 keeps a body stable up to an added mass of
/// 4 + rho_body / rho_fluid displaced masses (the turning's is scaled by the aspect ratio).
pub const ADDED_MASS: f64 = 2.0;

/// A kinematic body moves on its prescribed velocity and reverses a component when its
/// bounding box crosses the wall it moves towards.
fn bounce_kinematic(b: &mut RigidBody, domain: DVec3, slice: bool, dt: f64) {
    let half = b.aabb_half();
    let axes = if slice { 2 } else { 3 };
    for a in 0..axes {
        // A body that got past a wall (placed there, or faster than a substep resolves)
        // is put back inside before it bounces, not left to bounce outside.
        let (lo, hi) = (half[a], (domain[a] - half[a]).max(half[a]));
        b.position[a] = b.position[a].clamp(lo, hi);
        let next = b.position[a] + b.prescribed_velocity[a] * dt;
        let v = b.prescribed_velocity[a];
        if (next < lo && v < 0.0) || (next > hi && v > 0.0) {
            b.prescribed_velocity[a] = -v;
        }
    }
}

impl BodySet {
    /// Moves kinematic body `i`, held by the user (its `grab` set), so that its grabbed
    /// point lies at `target` (its bounding box kept in the domain). It stays there until
    /// the next move ([`BodySet::step`] leaves a held kinematic body alone); the velocity
    /// its faces give the fluid is set once per frame ([`BodySet::begin_frame`]). Returns
    /// false, changing nothing, when body `i` is not a held kinematic body.
    pub fn move_held_kinematic(&mut self, i: usize, target: DVec3) -> bool {
        let (domain, slice) = (self.domain, self.slice);
        let Some(b) = self.bodies.get_mut(i) else {
            return false;
        };
        let Some(local) = b.grab.map(|g| g.local) else {
            return false;
        };
        if b.motion != BodyMotion::Kinematic {
            return false;
        }
        let half = b.aabb_half();
        let mut p = target - b.orientation * local;
        let axes = if slice { 2 } else { 3 };
        for a in 0..axes {
            p[a] = p[a].clamp(half[a], (domain[a] - half[a]).max(half[a]));
        }
        if slice {
            p.z = b.position.z;
        }
        b.position = p;
        if let Some(g) = b.grab.as_mut() {
            g.target = target;
        }
        true
    }
}

#[cfg(test)]
pub(crate) mod tests;
