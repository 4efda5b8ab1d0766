//! The dynamic bodies in the viscosity solve (viscous.wgsl): the liquid's viscous stress
//! acts on the bodies, implicitly, in the same solve that drags the liquid with them.
//!
//! Of the two ways to couple them (a monolithic pressure-viscosity-body solve, or the
//! bodies' six unknowns each in the viscosity solve) eddy takes the second, because it is
//! the pressure's strong coupling again: the bodies' velocities are eliminated, leaving
//! (A - B D^-1 B^T) u = r0 + B D^-1 M q*, a rank-6-per-body term applied matrix-free inside
//! the same PCG and preconditioner the viscosity already uses ([`AddedTerm`]). The two
//! solves stay separate stages with their own preconditioners (the viscous operator is
//! diagonally dominant, the pressure's is not), and each stays symmetric positive definite
//! at any density ratio. viscous.wgsl derives the system; the f64 reference is
//! [`crate::reference::diffusion::diffuse_velocity_coupled`].
//!
//! The step leaves each coupled body's new velocity in the strong coupling's bodies (the
//! pressure solve starts from it), restamps the body's cells with it (the boundary stage
//! then gives the faces), and writes its change into the strong coupling's sums, which the
//! substep reads back: the host adds the same change to its f64 momentum
//! ([`super::coupling::Bodies::finish_substep`]), so the liquid's loss and the body's gain
//! are one number. Kinematic and fixed bodies stay velocity boundaries.

use super::strong::{CoupleBody, StrongCoupling, VISCOUS_AT};
use super::{BodySet, MAX_BODIES};
use crate::gpu::{storage_buffer, uniform_buffer, GpuContext, Kernel};
use crate::sim::core::diffusion::{velocity_coef, VelocityCoupling, VelocityView};
use crate::sim::core::fields::GridFields;
use crate::sim::core::pressure::{AddedTerm, TermOp};
use bytemuck::{Pod, Zeroable};
use std::cell::RefCell;

crate::kernel_entries!(
    /// The entry points of viscous.wgsl.
    ViscousEntries { setup, rhs, sum_d, sum_p, add_q, sub_r, into_z, finish, restamp }
);

/// Mirror of `ViscousParams` in viscous.wgsl (layout checked by tests/integration/shaders.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ViscousParams {
    pub sys_n: [u32; 3],
    pub sys_cells: u32,
    pub block: [u32; 3],
    pub bodies: u32,
    /// nu / h^2, 1/s (diffusion.wgsl's coefficient, the same f32).
    pub k: f32,
    pub slice: u32,
    /// Where the bodies' changes of velocity start in the strong coupling's sums.
    pub out_at: u32,
    /// 1: `cover` holds the bodies' faces.
    pub covered: u32,
}
crate::wgsl_mirror!(viscous_params_layout: ViscousParams = "viscous.wgsl" ViscousParams {
    sys_n: sys_n,
    sys_cells: sys_cells,
    block: block,
    bodies: bodies,
    k: k,
    slice: slice,
    out_at: out_at,
    covered: covered,
});

/// One body as viscous.wgsl reads it (its centre, box and velocities come from the strong
/// coupling's [`CoupleBody`]). Mirror of `ViscousBody` in viscous.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ViscousBody {
    /// x: the body's mass over a face's (`m_face` = rho h A_face); y: 1 when coupled.
    pub mass: [f32; 4],
    /// Columns of the world inertia over m_face h^2.
    pub inertia_x: [f32; 4],
    pub inertia_y: [f32; 4],
    pub inertia_z: [f32; 4],
    /// What the forces before the solve added to the velocity (m/s) and to the angular
    /// velocity times h (m/s) this substep: the step starts from the velocity without them.
    pub forced_v: [f32; 4],
    pub forced_w: [f32; 4],
}
crate::wgsl_mirror!(viscous_body_layout: ViscousBody = "viscous.wgsl" ViscousBody {
    mass: mass,
    inertia_x: inertia_x,
    inertia_y: inertia_y,
    inertia_z: inertia_z,
    forced_v: forced_v,
    forced_w: forced_w,
});

// viscous.wgsl reads the strong coupling's bodies as vec4s: centre, velocity, angular
// velocity first, the box's lo and hi last.
const _: () = assert!(std::mem::size_of::<CoupleBody>() == 9 * 16);
const _: () = assert!(std::mem::offset_of!(CoupleBody, vel) == 16);
const _: () = assert!(std::mem::offset_of!(CoupleBody, omega) == 32);
const _: () = assert!(std::mem::offset_of!(CoupleBody, lo) == 7 * 16);
const _: () = assert!(std::mem::offset_of!(CoupleBody, hi) == 8 * 16);

/// f32 per body of viscous.wgsl's store (VS_STRIDE).
const STORE_STRIDE: usize = 48;

/// The bodies of `set` as viscous.wgsl reads them: mass and world inertia over a face's
/// mass `m_face` (kg) and m_face h^2, and what the forces before the solve gave them
/// (`forced` is `set` after [`BodySet::predict`], or `set` itself); only dynamic bodies
/// are coupled.
///
/// With the incremental pressure correction (`shift`: the substep's dt, src/sim/core/split.rs)
/// the step starts each body from its velocity with this substep's explicit forces and
/// the last substep's fluid force applied, v + dt (F_explicit + F_fluid) / m, as the liquid's
/// faces start from u + dt (g - grad p_last / rho); the finish adds only the step's change
/// to the velocity the solve was handed. Without it, from the velocity before the forces.
pub fn viscous_bodies(
    set: &BodySet,
    forced: &BodySet,
    m_face: f64,
    h: f64,
    shift: Option<f64>,
) -> Vec<ViscousBody> {
    set.bodies
        .iter()
        .zip(&forced.bodies)
        .enumerate()
        .map(|(k, (b, p))| {
            if !b.is_dynamic() {
                return ViscousBody::default();
            }
            let i = b.world_inertia() / (m_face * h * h);
            let col = |c: glam::DVec3| [c.x as f32, c.y as f32, c.z as f32, 0.0];
            let (mut start_v, mut start_w) = (b.velocity(), b.omega());
            if let Some(dt) = shift {
                let (f, t) = set.explicit(k);
                start_v += dt * (f + b.fluid_force) / b.mass;
                let mut dw = b.inverse_inertia() * (dt * (t + b.fluid_torque));
                if set.slice {
                    dw.x = 0.0;
                    dw.y = 0.0;
                    start_v.z = b.velocity().z;
                }
                start_w += dw;
            }
            ViscousBody {
                mass: [(b.mass / m_face) as f32, 1.0, 0.0, 0.0],
                inertia_x: col(i.x_axis),
                inertia_y: col(i.y_axis),
                inertia_z: col(i.z_axis),
                forced_v: col(p.velocity() - start_v),
                forced_w: col((p.omega() - start_w) * h),
            }
        })
        .collect()
}

/// What [`ViscousCoupling::prepare`] binds and reads: the strong coupling (its bodies and
/// sums), the bodies before and after this substep's forces ([`viscous_bodies`]), and
/// the coupling stage's face covers and body shapes.
pub type Inputs<'a> = (
    &'a StrongCoupling,
    (&'a BodySet, &'a BodySet),
    (&'a wgpu::Buffer, &'a wgpu::Buffer),
);

/// The coupling's kernels and buffers; bound to the viscosity system it was last prepared
/// for.
pub struct ViscousCoupling {
    kernel: Kernel,
    e: ViscousEntries,
    params_buffer: wgpu::Buffer,
    bodies: wgpu::Buffer,
    store: wgpu::Buffer,
    bound: RefCell<Option<Bound>>,
}

/// How many a dispatch runs.
enum Launch {
    Groups(u32),
    Threads(u32),
}

/// What the coupling was last prepared with.
struct Bound {
    /// The viscosity system's generation ([`VelocityView::generation`]).
    generation: u64,
    group: wgpu::BindGroup,
    params: ViscousParams,
    /// Cells of the simulation's grid.
    cells: u32,
}

impl ViscousCoupling {
    pub fn new(device: &wgpu::Device) -> Self {
        let kernel = Kernel::new(device, crate::wgsl!("viscous.wgsl"), "Viscous");
        Self {
            e: ViscousEntries::of(&kernel),
            kernel,
            params_buffer: uniform_buffer(
                device,
                "Viscous::params",
                bytemuck::bytes_of(&ViscousParams::default()),
            ),
            bodies: storage_buffer(
                device,
                "Viscous::bodies",
                (MAX_BODIES * std::mem::size_of::<ViscousBody>()) as u64,
            ),
            store: storage_buffer(
                device,
                "Viscous::store",
                (MAX_BODIES * STORE_STRIDE * 4) as u64,
            ),
            bound: RefCell::new(None),
        }
    }

    /// Makes the coupling ready for one viscosity step of `nu` on `sys`: `set`'s bodies
    /// (their masses and inertias; the strong coupling holds their state on the GPU; `shift`
    /// as [`viscous_bodies`] takes it) and the step's parameters are written, and the group is bound anew when the system is.
    pub fn prepare(
        &self,
        ctx: &GpuContext,
        f: &GridFields,
        sys: &VelocityView<'_>,
        (strong, (set, forced), (cover, shapes)): Inputs<'_>,
        nu: f64,
        shift: Option<f64>,
    ) {
        let h = f.params.h as f64;
        let bodies = viscous_bodies(set, forced, strong.scales.s(), h, shift);
        ctx.queue
            .write_buffer(&self.bodies, 0, bytemuck::cast_slice(&bodies));
        let params = ViscousParams {
            sys_n: sys.sys_n,
            sys_cells: sys.sys_n.iter().product(),
            block: sys.block,
            bodies: bodies.len() as u32,
            k: velocity_coef(nu, f.params.h),
            slice: (f.params.n[2] == 1) as u32,
            out_at: VISCOUS_AT as u32,
            covered: 1,
        };
        ctx.queue
            .write_buffer(&self.params_buffer, 0, bytemuck::bytes_of(&params));
        let mut bound = self.bound.borrow_mut();
        if let Some(b) = bound.as_mut().filter(|b| b.generation == sys.generation) {
            b.params = params;
            return;
        }
        let v = sys.vectors;
        let group = self.kernel.bind(
            &ctx.device,
            &[
                ("params", &f.params_buffer),
                ("vp", &self.params_buffer),
                ("cell_type", &f.cell_type),
                ("solid_vel", &f.solid_vel),
                ("vel", &f.vel),
                ("vb", &self.bodies),
                ("vs", &self.store),
                ("a", &v.a),
                ("b", &v.b),
                ("p", &v.p),
                ("d", &v.d),
                ("q", &v.q),
                ("r", &v.r),
                ("z", &v.z),
                ("done", &v.state),
                ("cb", &strong.couple),
                ("dv_out", &strong.sums),
                ("cover", cover),
                ("bodies", shapes),
            ],
        );
        *bound = Some(Bound {
            generation: sys.generation,
            group,
            params,
            cells: f.num_cells(),
        });
    }

    /// Dispatches `entry` as `launch` says for what the coupling is bound to (nothing
    /// before [`Self::prepare`]).
    fn run(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        entry: crate::gpu::Entry,
        launch: impl FnOnce(&Bound) -> Launch,
    ) {
        if let Some(b) = self.bound.borrow().as_ref() {
            match launch(b) {
                Launch::Groups(n) => self.kernel.dispatch_groups(pass, entry, &b.group, &[], n),
                Launch::Threads(n) => self.kernel.dispatch(pass, entry, &b.group, n),
            }
        }
    }

    /// One workgroup per body.
    fn per_body(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        self.run(pass, entry, |b| Launch::Groups(b.params.bodies.max(1)));
    }

    /// One thread per row of the viscosity system.
    fn per_row(&self, pass: &mut wgpu::ComputePass<'_>, entry: crate::gpu::Entry) {
        self.run(pass, entry, |b| Launch::Threads(b.params.sys_cells));
    }
}

impl AddedTerm for ViscousCoupling {
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, op: TermOp) {
        match op {
            TermOp::AddToQ => {
                self.per_body(pass, self.e.sum_d);
                self.per_body(pass, self.e.add_q);
            }
            TermOp::SubtractFromR => {
                self.per_body(pass, self.e.sum_p);
                self.per_row(pass, self.e.sub_r);
            }
            TermOp::IntoZ => {
                self.per_body(pass, self.e.sum_p);
                self.per_row(pass, self.e.into_z);
            }
            TermOp::PrepareDeflation | TermOp::DeflateStart | TermOp::Deflate => {}
        }
    }

    fn dispatches(&self) -> u32 {
        2
    }

    fn deflates(&self) -> bool {
        false
    }

    fn deflation_dispatches(&self) -> u32 {
        0
    }
}

impl VelocityCoupling for ViscousCoupling {
    fn term(&self) -> &dyn AddedTerm {
        self
    }

    fn record_setup(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.per_body(pass, self.e.setup);
        self.per_row(pass, self.e.rhs);
    }

    fn record_finish(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.per_body(pass, self.e.sum_p);
        self.run(pass, self.e.finish, |_| Launch::Groups(1));
        // One thread per cell of the simulation's grid.
        self.run(pass, self.e.restamp, |b| Launch::Threads(b.cells));
    }
}

/// A dynamic body's settling (or rising) through still liquid, estimated as a sphere of
/// its volume on the standard drag curve: Schiller & Naumann (1933),
/// C_d = 24 / Re (1 + 0.15 Re^0.687) up to Re 1000, 0.44 above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettlingEstimate {
    /// The sphere of the body's volume, m.
    pub diameter: f64,
    /// Terminal speed, m/s (downward for a body denser than the liquid).
    pub speed: f64,
    /// U d / nu.
    pub reynolds: f64,
    /// The body's response time over the flow's, (rho_b / rho_f) Re / 18.
    pub stokes: f64,
}

/// The drag coefficient of a sphere at Reynolds number `re` (Schiller & Naumann).
pub fn drag_coefficient(re: f64) -> f64 {
    if re >= 1000.0 {
        0.44
    } else {
        24.0 / re * (1.0 + 0.15 * re.powf(0.687))
    }
}

/// [`SettlingEstimate`] of a body of `volume` (m^3) and `density` in a liquid of
/// `fluid_density` and kinematic viscosity `nu` under gravity `g` (m/s^2); None without
/// viscosity, gravity or a difference of density.
pub fn settling_estimate(
    volume: f64,
    density: f64,
    fluid_density: f64,
    nu: f64,
    g: f64,
) -> Option<SettlingEstimate> {
    let excess = (density - fluid_density).abs();
    if nu <= 0.0 || g <= 0.0 || excess <= 0.0 || volume <= 0.0 || fluid_density <= 0.0 {
        return None;
    }
    let d = (6.0 * volume / std::f64::consts::PI).cbrt();
    let weight = excess * volume * g;
    let area = 0.25 * std::f64::consts::PI * d * d;
    let drag = |u: f64| {
        let re = u * d / nu;
        0.5 * fluid_density * u * u * area * drag_coefficient(re)
    };
    // Stokes drag is the least at any speed: its terminal speed bounds the answer.
    let mut hi = excess * g * d * d / (18.0 * fluid_density * nu);
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if drag(mid) > weight {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let speed = 0.5 * (lo + hi);
    let reynolds = speed * d / nu;
    Some(SettlingEstimate {
        diameter: d,
        speed,
        reynolds,
        stokes: density / fluid_density * reynolds / 18.0,
    })
}

/// Cells across a settling body under which eddy's drag was measured off by more than 5%
/// (`eddy validate`, llvmpipe, speeds as displacements over frames): the `stokes` sphere
/// (Re 0.03) settled 5.1% fast at 8 cells across and 6.8% at 6; the `settling` sphere (ten
/// Cate et al. 2002, E1, Re 1.5) at 0.38 s 19% slow at 6; the `disc` (a slice) 4.0% fast at
/// 12 and 7.0% at 8; a sphere 3 cells across barely moves.
pub const DRAG_CELLS: f64 = 8.0;

/// Cells across the boundary layer (d / sqrt(Re)) under which its shear, most of the drag
/// at moderate Re, is not resolved (eddy's drag is measured from Re 0.02 to 1.5).
pub const LAYER_CELLS: f64 = 2.0;

/// Why a dynamic body's viscous drag is under-resolved on cells of `h`, or None.
pub fn coarse_drag(e: &SettlingEstimate, h: f64) -> Option<String> {
    let across = e.diameter / h;
    let layer = e.diameter / e.reynolds.max(1.0).sqrt();
    if across + 1e-6 < DRAG_CELLS {
        Some(format!(
            "its diameter spans {across:.1} cells: under {DRAG_CELLS} cells a settling \
             body's drag is off by 5% or more (`eddy validate`: a Stokes sphere 5% fast at 8 \
             cells across and 7% at 6, the ten Cate sphere 19% slow at 6, a sphere 3 cells \
             across barely moves)"
        ))
    } else if layer / h < LAYER_CELLS {
        Some(format!(
            "its boundary layer (d / sqrt(Re) = {layer:.2e} m at Re {:.0}) spans {:.1} \
             cells: under {LAYER_CELLS} the shear next to it, most of its drag, is not \
             resolved (eddy's drag is measured from Re 0.02 to 1.5 only)",
            e.reynolds,
            layer / h
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settling_estimates_follow_stokes_and_the_drag_curve() {
        // Creeping flow: Stokes' speed, (rho_b - rho_f) g d^2 / (18 mu), within 1% at
        // Re ~ 1e-4 (the correction 0.15 Re^0.687 is 3e-4).
        let d: f64 = 1e-4;
        let v = std::f64::consts::PI / 6.0 * d.powi(3);
        let e = settling_estimate(v, 2000.0, 1000.0, 1e-3, 9.81).unwrap();
        let stokes = 1000.0 * 9.81 * d * d / (18.0 * 1000.0 * 1e-3);
        assert!(
            (e.speed / stokes - 1.0).abs() < 1e-3,
            "{e:?} against {stokes}"
        );
        assert!((e.diameter - d).abs() < 1e-12);
        // The ten Cate case E1: about 0.041 m/s in open liquid, Re 1.6 (0.038 in its box).
        let r = 0.0075f64;
        let v = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let e = settling_estimate(v, 1120.0, 970.0, 0.373 / 970.0, 9.81).unwrap();
        assert!((0.039..0.043).contains(&e.speed), "{e:?}");
        assert!((1.4..1.8).contains(&e.reynolds), "{e:?}");
        // The drag balances the weight at that speed.
        let cd = drag_coefficient(e.reynolds);
        let drag = 0.5 * 970.0 * e.speed.powi(2) * std::f64::consts::PI * r * r * cd;
        assert!((drag / (150.0 * v * 9.81) - 1.0).abs() < 1e-6);
        // A body as dense as the liquid, or no viscosity: nothing to estimate.
        assert_eq!(settling_estimate(v, 1000.0, 1000.0, 1e-3, 9.81), None);
        assert_eq!(settling_estimate(v, 1200.0, 1000.0, 0.0, 9.81), None);
        // 6 cells across is too coarse; 8 with a thick layer is not.
        assert!(coarse_drag(&e, 0.015 / 6.0).is_some());
        assert!(coarse_drag(&e, 0.015 / 8.0).is_none());
    }
}
