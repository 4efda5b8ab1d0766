//! bodies.csv: each rigid body's pose, velocities and fluid force per frame: f and t the
//! pressure's force and torque (with the liquid's hydrostatic half cell), fv and tv the
//! viscous stress's (the viscosity step's change of momentum over the substep), both of
//! the frame's last substep.

use crate::sim::bodies::BodySet;

/// The header row of bodies.csv.
pub const CSV_HEADER: &str =
    "frame,time_s,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz,fvx,fvy,fvz,tvx,tvy,tvz";

/// bodies.csv rows of every body for frame `frame` at time `time`.
pub fn csv_rows(set: &BodySet, frame: u64, time: f64) -> Vec<String> {
    set.bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let (p, q, v, w, f, t) = (
                b.position,
                b.orientation,
                b.velocity(),
                b.omega(),
                b.fluid_force,
                b.fluid_torque,
            );
            let (fv, tv) = (b.viscous_force, b.viscous_torque);
            format!(
                "{frame},{time:.6},{i},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e}",
                p.x, p.y, p.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z, f.x, f.y, f.z,
                t.x, t.y, t.z, fv.x, fv.y, fv.z, tv.x, tv.y, tv.z
            )
        })
        .collect()
}
