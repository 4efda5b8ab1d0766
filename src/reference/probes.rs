//! f64 reference of the probes' columns (src/sim/core/probes.wgsl), from the same plan
//! (src/scene/probes.rs) and the grid's fields as plain arrays.

use crate::gpu::constants::{FLUID, SOLID, SURFACE_CURVE};
use crate::scene::probes::{ColumnKind, ProbePlan};

/// The fields a substep leaves for its probes.
pub struct ProbeFields<'a> {
    pub n: [u32; 3],
    pub h: f64,
    /// The substep's length (s): p = phi rho / dt.
    pub dt: f64,
    pub gravity: [f64; 3],
    pub cell_type: &'a [u32],
    /// The pressure solve's phi per cell.
    pub phi: &'a [f32],
    /// u, v, w back to back (the MAC faces).
    pub vel: &'a [f32],
    /// The filtered relative density per cell.
    pub surface: &'a [f32],
    /// The smoke's dye (rgb) and temperature (w) per cell; empty in a liquid.
    pub dye: &'a [[f32; 4]],
}

impl ProbeFields<'_> {
    fn index(&self, c: [i64; 3]) -> usize {
        let n = self.n.map(|v| v as i64);
        (c[0] + n[0] * (c[1] + n[1] * c[2])) as usize
    }

    fn pressure(&self, plan: &ProbePlan, i: usize) -> f64 {
        if self.cell_type[i] != FLUID {
            return 0.0;
        }
        self.phi[i] as f64 * plan.rho / self.dt.max(1e-12)
    }

    fn value(&self, plan: &ProbePlan, i: usize, kind: ColumnKind) -> f64 {
        match kind {
            ColumnKind::Pressure => self.pressure(plan, i),
            ColumnKind::Density => self.surface[i] as f64,
            ColumnKind::Level => 0.5 - self.surface[i] as f64,
            ColumnKind::Temperature => self.dye[i][3] as f64,
            _ => {
                let d = self.dye[i];
                d[0] as f64 + d[1] as f64 + d[2] as f64
            }
        }
    }

    /// Trilinear over the cells that are not SOLID, weights renormalised.
    fn cell_sample(&self, plan: &ProbePlan, x: [f64; 3], kind: ColumnKind) -> f64 {
        let g = x.map(|v| v / self.h - 0.5);
        let (mut sum, mut wsum) = (0.0, 0.0);
        for corner in 0..8 {
            let mut c = [0i64; 3];
            let mut w = 1.0;
            for a in 0..3 {
                let up = corner >> a & 1 == 1;
                let f = g[a] - g[a].floor();
                c[a] = (g[a].floor() as i64 + up as i64).clamp(0, self.n[a] as i64 - 1);
                w *= if up { f } else { 1.0 - f };
            }
            let i = self.index(c);
            if self.cell_type[i] == SOLID || w == 0.0 {
                continue;
            }
            sum += w * self.value(plan, i, kind);
            wsum += w;
        }
        if wsum == 0.0 {
            0.0
        } else {
            sum / wsum
        }
    }

    /// A face component at `x` with G2P's stencil (clamped at the face grid's ends).
    fn velocity(&self, x: [f64; 3], comp: usize) -> f64 {
        let n = self.n;
        let mut d = n;
        d[comp] += 1;
        let offset: usize = (0..comp)
            .map(|a| {
                let mut e = n;
                e[a] += 1;
                (e[0] * e[1] * e[2]) as usize
            })
            .sum();
        let mut base = [0i64; 3];
        let mut next = [0i64; 3];
        let mut f = [0.0; 3];
        for a in 0..3 {
            let g = if a == comp {
                x[a] / self.h
            } else {
                x[a] / self.h - 0.5
            };
            let c = g.clamp(0.0, (d[a] - 1) as f64);
            base[a] = (c.floor() as i64).min(d[a] as i64 - 1);
            next[a] = (base[a] + 1).min(d[a] as i64 - 1);
            f[a] = c - base[a] as f64;
        }
        let mut sum = 0.0;
        for corner in 0..8 {
            let mut w = 1.0;
            let mut c = [0i64; 3];
            for a in 0..3 {
                let up = corner >> a & 1 == 1;
                c[a] = if up { next[a] } else { base[a] };
                w *= if up { f[a] } else { 1.0 - f[a] };
            }
            let i = c[0] + d[0] as i64 * (c[1] + d[1] as i64 * c[2]);
            sum += w * self.vel[offset + i as usize] as f64;
        }
        sum
    }

    /// Row `j`'s density at (x, z), bilinear over its cells that are not SOLID; -1 when
    /// all four are.
    fn row_density(&self, x: f64, z: f64, j: i64) -> f64 {
        let (gx, gz) = (x / self.h - 0.5, z / self.h - 0.5);
        let (fx, fz) = (gx - gx.floor(), gz - gz.floor());
        let (mut sum, mut wsum) = (0.0, 0.0);
        for corner in 0..4 {
            let (ux, uz) = (corner & 1 == 1, corner & 2 == 2);
            let cx = (gx.floor() as i64 + ux as i64).clamp(0, self.n[0] as i64 - 1);
            let cz = (gz.floor() as i64 + uz as i64).clamp(0, self.n[2] as i64 - 1);
            let w = if ux { fx } else { 1.0 - fx } * if uz { fz } else { 1.0 - fz };
            let i = self.index([cx, j, cz]);
            if self.cell_type[i] == SOLID || w == 0.0 {
                continue;
            }
            sum += w * self.surface[i] as f64;
            wsum += w;
        }
        if wsum == 0.0 {
            -1.0
        } else {
            sum / wsum
        }
    }

    fn gauge(&self, x: f64, z: f64) -> f64 {
        let ny = self.n[1] as i64;
        let mut j = 0;
        while j < ny && self.row_density(x, z, j) < 0.0 {
            j += 1;
        }
        if j >= ny {
            return 0.0;
        }
        let mut below = self.row_density(x, z, j);
        if below < 0.5 {
            return j as f64 * self.h;
        }
        for k in j + 1..ny {
            let d = self.row_density(x, z, k);
            if d < 0.5 {
                let t = (below - 0.5) / (below - d.max(0.0));
                let tc = t - SURFACE_CURVE * (std::f64::consts::TAU * t).sin();
                return (k as f64 - 0.5 + tc) * self.h;
            }
            below = d;
        }
        ny as f64 * self.h
    }

    fn wall_pressure(&self, plan: &ProbePlan, x: [f64; 3], axis: usize, layer: i64, s: f64) -> f64 {
        let g = x.map(|v| v / self.h - 0.5);
        let step = plan.rho * self.gravity[axis] * (-s * 0.5 * self.h);
        let (mut sum, mut wsum) = (0.0, 0.0);
        for corner in 0..8 {
            if corner >> axis & 1 == 1 {
                continue;
            }
            let mut c = [0i64; 3];
            let mut w = 1.0;
            for a in 0..3 {
                let up = corner >> a & 1 == 1;
                let f = g[a] - g[a].floor();
                c[a] = (g[a].floor() as i64 + up as i64).clamp(0, self.n[a] as i64 - 1);
                if a != axis {
                    w *= if up { f } else { 1.0 - f };
                }
            }
            c[axis] = layer;
            let i = self.index(c);
            if self.cell_type[i] == SOLID || w == 0.0 {
                continue;
            }
            let value = if self.cell_type[i] == FLUID {
                self.pressure(plan, i) + step
            } else {
                0.0
            };
            sum += w * value;
            wsum += w;
        }
        if wsum == 0.0 {
            0.0
        } else {
            sum / wsum
        }
    }

    fn sensor(
        &self,
        plan: &ProbePlan,
        x: [f64; 3],
        axis: usize,
        plane: u32,
        s: i32,
        r: f64,
    ) -> f64 {
        let layer = if s > 0 {
            plane as i64
        } else {
            plane as i64 - 1
        };
        let slice = self.n[2] == 1;
        let (t1, t2) = if slice {
            (1 - axis, 2)
        } else {
            ((axis + 1) % 3, (axis + 2) % 3)
        };
        let (mut sum, mut count) = (0.0, 0.0);
        for a in -2i32..=2 {
            for b in -2i32..=2 {
                if (slice && b != 0) || a * a + b * b > 5 {
                    continue;
                }
                let mut p = x;
                p[t1] += 0.5 * r * a as f64;
                if !slice {
                    p[t2] += 0.5 * r * b as f64;
                }
                sum += self.wall_pressure(plan, p, axis, layer, s as f64);
                count += 1.0;
                if r == 0.0 {
                    return sum;
                }
            }
        }
        sum / count
    }

    fn force(
        &self,
        plan: &ProbePlan,
        column: usize,
        first: u32,
        count: u32,
        centre: [f64; 3],
    ) -> f64 {
        let mut total = 0.0;
        for face in &plan.faces[first as usize..(first + count) as usize] {
            let (cell, axis) = (face[0] as usize, (face[1] & 3) as usize);
            let s = if face[1] & 4 != 0 { 1.0 } else { -1.0 };
            let n = self.n as [u32; 3];
            let c = [
                cell as u32 % n[0],
                cell as u32 / n[0] % n[1],
                cell as u32 / (n[0] * n[1]),
            ];
            let mut x = c.map(|v| (v as f64 + 0.5) * self.h);
            x[axis] -= s * 0.5 * self.h;
            let pf = if self.cell_type[cell] == FLUID {
                self.pressure(plan, cell) + plan.rho * self.gravity[axis] * (-s * 0.5 * self.h)
            } else {
                0.0
            };
            let mut fv = [0.0; 3];
            fv[axis] = -s * pf * plan.face_area;
            total += if column < 3 {
                fv[column]
            } else {
                let r = [0, 1, 2].map(|a| x[a] - centre[a]);
                let m = [
                    r[1] * fv[2] - r[2] * fv[1],
                    r[2] * fv[0] - r[0] * fv[2],
                    r[0] * fv[1] - r[1] * fv[0],
                ];
                m[column - 3]
            };
        }
        total
    }
}

/// Every column of `plan` sampled from `f` (a body's columns, which the host fills, are 0).
pub fn sample(plan: &ProbePlan, f: &ProbeFields) -> Vec<f64> {
    plan.columns
        .iter()
        .map(|c| match c.kind {
            ColumnKind::Velocity(a) => f.velocity(c.at, a),
            ColumnKind::Gauge => f.gauge(c.at[0], c.at[2]),
            ColumnKind::Sensor {
                axis,
                plane,
                sign,
                radius,
            } => f.sensor(plan, c.at, axis, plane, sign, radius),
            ColumnKind::Force {
                column,
                first,
                count,
                centre,
            } => f.force(plan, column, first, count, centre),
            ColumnKind::Body { .. } => 0.0,
            kind => f.cell_sample(plan, c.at, kind),
        })
        .collect()
}
