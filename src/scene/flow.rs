//! Liquid that flows in and out: emitters (inflow), drains and open domain sides (outflow),
//! and how many particles a scene with them may hold. The GPU side is
//! src/sim/liquid/flow.rs.

use super::*;

/// Most emitters, and most drains, of a scene (the GPU's uniform slots).
pub use crate::gpu::constants::{MAX_DRAINS, MAX_EMITTERS};

/// Seconds an emitter without a `stop` is assumed to run when the default `max_particles`
/// is estimated (the domain's capacity usually bounds it first).
pub const DEFAULT_EMISSION_SECONDS: f64 = 600.0;

/// Headroom over the rest density when the domain's capacity bounds the particles: a
/// liquid compressed by 25% is far outside what the volume correction allows.
pub const DOMAIN_CAPACITY_FACTOR: f64 = 1.25;

/// An inflow: liquid at the rest density and the shape's `velocity` enters through `shape`
/// while `start <= t < stop`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emitter {
    /// A Box, Sphere or Cylinder; its `velocity` is the velocity of the liquid it emits
    /// (particles inside it keep that velocity while it is on).
    pub shape: Shape,
    /// When it starts, s.
    #[serde(default)]
    pub start: f64,
    /// When it stops, s (never, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<f64>,
    /// Volume per second, m^3/s: that many particles' volume is placed at random in the
    /// shape each substep, however full it is. Absent: the shape is kept full (every empty
    /// sub-cell of its cells gets a particle each substep), so the inflow is the liquid
    /// that leaves it, about |velocity| x its cross-section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flux: Option<f64>,
}

/// An outflow: particles inside `shape` are removed while `start <= t < stop`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drain {
    /// A Box, Sphere or Cylinder.
    pub shape: Shape,
    #[serde(default)]
    pub start: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<f64>,
}

/// A side of the domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    XMin,
    XMax,
    YMin,
    YMax,
    ZMin,
    ZMax,
}

impl Side {
    pub const ALL: [Side; 6] = [
        Side::XMin,
        Side::XMax,
        Side::YMin,
        Side::YMax,
        Side::ZMin,
        Side::ZMax,
    ];

    /// Axis (0 = x) and whether it is the far side.
    pub fn axis(self) -> (usize, bool) {
        let i = self as usize;
        (i / 2, i % 2 == 1)
    }

    /// The side as a scene writes it (`x_max`).
    pub fn name(self) -> &'static str {
        ["x_min", "x_max", "y_min", "y_max", "z_min", "z_max"][self as usize]
    }

    /// Bit of this side in `open_mask`.
    pub fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// Whether `start <= t < stop`.
pub fn active(start: f64, stop: Option<f64>, t: f64) -> bool {
    t >= start && stop.is_none_or(|s| t < s)
}

impl Emitter {
    pub fn active(&self, t: f64) -> bool {
        active(self.start, self.stop, t)
    }

    /// The speed of what it emits, m/s.
    pub fn speed(&self) -> f64 {
        let v = self.shape.velocity();
        (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
    }

    /// Volume per second it emits, m^3/s: its `flux`, or for a kept-full emitter its
    /// shape's cross-section across its velocity times its speed (an estimate: the liquid
    /// leaving it may be slowed or sped up by the flow).
    pub fn estimated_flux(&self) -> f64 {
        if let Some(q) = self.flux {
            return q;
        }
        let v = self.shape.velocity();
        let s = self.speed();
        if s == 0.0 {
            return 0.0;
        }
        let d = [v[0] / s, v[1] / s, v[2] / s];
        let area = match &self.shape {
            Shape::Sphere { radius, .. } => std::f64::consts::PI * radius * radius,
            Shape::Cylinder {
                axis,
                radius,
                length,
                ..
            } => {
                let a = unit(*axis);
                let c = (d[0] * a[0] + d[1] * a[1] + d[2] * a[2]).abs();
                std::f64::consts::PI * radius * radius * c
                    + 2.0 * radius * length * (1.0 - c * c).max(0.0).sqrt()
            }
            other => {
                let (lo, hi) = other.bounds();
                let e = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
                d[0].abs() * e[1] * e[2] + d[1].abs() * e[0] * e[2] + d[2].abs() * e[0] * e[1]
            }
        };
        area * s
    }
}

impl Drain {
    pub fn active(&self, t: f64) -> bool {
        active(self.start, self.stop, t)
    }
}

impl Scene {
    /// Whether particles can enter or leave: emitters, drains or open sides.
    pub fn has_flow(&self) -> bool {
        !self.emitters.is_empty() || !self.drains.is_empty() || !self.open_sides.is_empty()
    }

    /// Bits of the open sides ([`Side::bit`]).
    pub fn open_mask(&self) -> u32 {
        self.open_sides.iter().fold(0, |m, s| m | s.bit())
    }

    /// Volume of one particle at the rest density, m^3.
    pub fn particle_volume(&self) -> f64 {
        let h = self.h();
        h * h * (self.domain.2 / self.resolution.2 as f64) / self.particles_per_cell as f64
    }

    /// Particles the buffers hold: `max_particles`, or without emitters the seeded count,
    /// or the seeded count plus what the emitters add while they run (`stop - start`, or
    /// [`DEFAULT_EMISSION_SECONDS`] without a stop), at most what fills the domain's cells
    /// at [`DOMAIN_CAPACITY_FACTOR`] times the rest density. `seeded` is the initial count.
    pub fn particle_capacity(&self, seeded: u64) -> u64 {
        if let Some(m) = self.max_particles {
            return m;
        }
        if self.emitters.is_empty() {
            return seeded;
        }
        let vp = self.particle_volume();
        let added: f64 = self
            .emitters
            .iter()
            .map(|e| {
                let seconds = e.stop.map_or(DEFAULT_EMISSION_SECONDS, |s| s - e.start);
                // A kept-full emitter also holds its own volume.
                let own = if e.flux.is_none() {
                    e.shape.volume()
                } else {
                    0.0
                };
                (e.estimated_flux() * seconds + own) / vp
            })
            .sum();
        let domain = self.cell_count() as f64 * self.particles_per_cell as f64;
        let bound = (DOMAIN_CAPACITY_FACTOR * domain).ceil();
        let want = (seeded as f64 + added.ceil())
            .min(bound)
            .max(seeded as f64 + 1.0);
        (want as u64).min(MAX_PARTICLES)
    }

    /// Checks emitters, drains, open sides and `max_particles`; each message names the
    /// field at fault. `seeded` is the scene's initial particle count.
    pub(super) fn validate_flow(&self) -> Result<(), String> {
        if !self.has_flow() && self.max_particles.is_none() {
            return Ok(());
        }
        if self.kind != SceneKind::Liquid {
            return Err(
                "emitters, drains, open_sides and max_particles apply to liquid scenes only: \
                 smoke scenes inject smoke with `smoke.sources`"
                    .into(),
            );
        }
        if self.emitters.len() > MAX_EMITTERS as usize {
            return Err(format!(
                "emitters has {} entries; at most {MAX_EMITTERS}",
                self.emitters.len()
            ));
        }
        if self.drains.len() > MAX_DRAINS as usize {
            return Err(format!(
                "drains has {} entries; at most {MAX_DRAINS}",
                self.drains.len()
            ));
        }
        let times = |at: &str, start: f64, stop: Option<f64>| -> Result<(), String> {
            if !(start.is_finite() && start >= 0.0) {
                return Err(format!("{at}.start must be finite and >= 0 s, got {start}"));
            }
            if let Some(s) = stop {
                if !(s.is_finite() && s > start) {
                    return Err(format!(
                        "{at}.stop must be finite and after start ({start} s), got {s}"
                    ));
                }
            }
            Ok(())
        };
        for (i, e) in self.emitters.iter().enumerate() {
            let at = format!("emitters[{i}]");
            self.validate_flow_shape(&at, &e.shape)?;
            times(&at, e.start, e.stop)?;
            if let Some(q) = e.flux {
                let most = self.domain.0 * self.domain.1 * self.domain.2 / MIN_FRAME_DT;
                if !(q.is_finite() && q > 0.0 && q <= most) {
                    return Err(format!(
                        "{at}.flux must be a positive volume per second (m^3/s) of at most \
                         {most:e}, got {q}"
                    ));
                }
            } else if self.shape_cells(&e.shape) == 0 {
                return Err(format!(
                    "{at} holds no free cell centre: a kept-full emitter fills the cells whose \
                     centre it holds (make it larger, or give it a `flux`)"
                ));
            }
        }
        for (i, d) in self.drains.iter().enumerate() {
            let at = format!("drains[{i}]");
            self.validate_flow_shape(&at, &d.shape)?;
            times(&at, d.start, d.stop)?;
        }
        let seeded = self.particle_count();
        if let Some(m) = self.max_particles {
            if m > MAX_PARTICLES || m < seeded.max(1) {
                return Err(format!(
                    "max_particles must be in {}..={MAX_PARTICLES} (at least the {seeded} \
                     particles the scene seeds), got {m}",
                    seeded.max(1)
                ));
            }
        }
        Ok(())
    }

    /// An emitter's or drain's shape: a Box, Sphere or Cylinder, valid, reaching into the
    /// domain and not wholly inside the scene's solids.
    fn validate_flow_shape(&self, at: &str, shape: &Shape) -> Result<(), String> {
        match shape {
            Shape::Box { .. } | Shape::Sphere { .. } | Shape::Cylinder { .. } => {}
            #[allow(unreachable_patterns)]
            _ => return Err(format!("{at}.shape must be a Box, Sphere or Cylinder")),
        }
        super::validate::validate_shape(shape).map_err(|m| format!("{at}.shape: {m}"))?;
        let d = self.domain_size();
        let (lo, hi) = shape.bounds();
        if !(0..3).all(|a| hi[a] > 0.0 && lo[a] < d[a]) {
            return Err(format!(
                "{at} lies outside the domain [0, {:?}]: bounds {lo:?} .. {hi:?}",
                self.domain
            ));
        }
        // Sample the shape's bounds on a lattice: some point must lie inside the shape, the
        // domain and no solid.
        let n = 12;
        let mut inside = 0;
        let mut free = 0;
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let f =
                        |t: usize, a: usize| lo[a] + (t as f64 + 0.5) / n as f64 * (hi[a] - lo[a]);
                    let p = [f(i, 0), f(j, 1), f(k, 2)];
                    if !shape.contains(p) || !(0..3).all(|a| p[a] > 0.0 && p[a] < d[a]) {
                        continue;
                    }
                    inside += 1;
                    if !self.solids.iter().any(|s| s.contains(p)) {
                        free += 1;
                    }
                }
            }
        }
        if inside > 0 && free == 0 {
            return Err(format!("{at} lies inside the scene's solids"));
        }
        if inside == 0 {
            return Err(format!(
                "{at} holds no point of the domain (bounds {lo:?} .. {hi:?})"
            ));
        }
        Ok(())
    }

    /// Cells whose centre `shape` holds and no solid does.
    pub fn shape_cells(&self, shape: &Shape) -> u64 {
        let mut n = 0;
        self.for_each_shape_cell(shape, |_| n += 1);
        n
    }

    /// Visits the linear index of each cell whose centre `shape` holds and no solid does,
    /// in index order, walking only the shape's bounds.
    pub fn for_each_shape_cell(&self, shape: &Shape, mut visit: impl FnMut(u32)) {
        let dims = self.dims();
        let h = [
            self.domain.0 / dims[0] as f64,
            self.domain.1 / dims[1] as f64,
            self.domain.2 / dims[2] as f64,
        ];
        let (lo, hi) = shape.bounds();
        let range = |a: usize| {
            let first = (lo[a] / h[a] - 0.5).ceil().max(0.0) as u64;
            let last = ((hi[a] / h[a] - 0.5).floor()).min(dims[a] as f64 - 1.0);
            if last < first as f64 {
                (1, 0)
            } else {
                (first, last as u64)
            }
        };
        let (rx, ry, rz) = (range(0), range(1), range(2));
        for k in rz.0..=rz.1 {
            for j in ry.0..=ry.1 {
                for i in rx.0..=rx.1 {
                    let p = [
                        (i as f64 + 0.5) * h[0],
                        (j as f64 + 0.5) * h[1],
                        (k as f64 + 0.5) * h[2],
                    ];
                    if shape.contains(p) && !self.solids.iter().any(|s| s.contains(p)) {
                        visit((i + dims[0] as u64 * (j + dims[1] as u64 * k)) as u32);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel() -> Scene {
        Scene {
            domain: (1.0, 0.5, 0.25),
            resolution: (16, 8, 4),
            fluid: vec![Shape::Box {
                min: (0.0, 0.0, 0.0),
                max: (0.5, 0.125, 0.25),
                velocity: (0.0, 0.0, 0.0),
            }],
            emitters: vec![Emitter {
                shape: Shape::Box {
                    min: (0.0, 0.0, 0.0),
                    max: (0.125, 0.25, 0.25),
                    velocity: (0.5, 0.0, 0.0),
                },
                start: 0.0,
                stop: Some(2.0),
                flux: None,
            }],
            open_sides: vec![Side::XMax],
            ..Scene::default()
        }
    }

    #[test]
    fn a_kept_full_box_emits_its_cross_section_times_its_speed() {
        let s = channel();
        // 0.25 m x 0.25 m across x at 0.5 m/s.
        assert!((s.emitters[0].estimated_flux() - 0.25 * 0.25 * 0.5).abs() < 1e-12);
        let disc = Emitter {
            shape: Shape::Cylinder {
                center: (0.5, 0.5, 0.5),
                axis: (0.0, 1.0, 0.0),
                radius: 0.1,
                length: 0.02,
                velocity: (0.0, -2.0, 0.0),
            },
            start: 0.0,
            stop: None,
            flux: None,
        };
        let want = std::f64::consts::PI * 0.01 * 2.0;
        assert!((disc.estimated_flux() - want).abs() < 1e-12);
    }

    #[test]
    fn capacity_counts_the_emission_up_to_the_domain() {
        let s = channel();
        let seeded = s.particle_count();
        assert_eq!(seeded, 8 * 2 * 4 * 8);
        let vp = s.particle_volume();
        let want = seeded as f64 + ((0.25 * 0.25 * 0.5 * 2.0 + 0.125 * 0.25 * 0.25) / vp).ceil();
        assert_eq!(s.particle_capacity(seeded), want as u64);
        let mut forever = s.clone();
        forever.emitters[0].stop = None;
        // 512 cells x 8 particles x 1.25.
        assert_eq!(forever.particle_capacity(seeded), 5120);
        let mut set = s.clone();
        set.max_particles = Some(3000);
        assert_eq!(set.particle_capacity(seeded), 3000);
    }

    #[test]
    fn bad_flow_input_names_its_field() {
        let bad = |f: &dyn Fn(&mut Scene), want: &str| {
            let mut s = channel();
            f(&mut s);
            let e = s.validate().unwrap_err();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        };
        bad(&|s| s.emitters[0].flux = Some(-1.0), "emitters[0].flux");
        bad(&|s| s.emitters[0].flux = Some(f64::NAN), "emitters[0].flux");
        bad(&|s| s.emitters[0].stop = Some(0.0), "emitters[0].stop");
        bad(&|s| s.emitters[0].start = f64::NAN, "emitters[0].start");
        bad(
            &|s| {
                s.emitters[0].shape = Shape::Sphere {
                    center: (3.0, 0.2, 0.1),
                    radius: 0.1,
                    velocity: (0.0, 0.0, 0.0),
                }
            },
            "emitters[0] lies outside the domain",
        );
        bad(
            &|s| {
                s.solids = vec![Shape::Box {
                    min: (0.0, 0.0, 0.0),
                    max: (0.2, 0.5, 0.25),
                    velocity: (0.0, 0.0, 0.0),
                }]
            },
            "emitters[0] lies inside the scene's solids",
        );
        bad(&|s| s.max_particles = Some(3), "max_particles");
        bad(
            &|s| {
                s.drains = vec![Drain {
                    shape: Shape::Box {
                        min: (0.5, 0.5, 0.5),
                        max: (0.4, 0.6, 0.6),
                        velocity: (0.0, 0.0, 0.0),
                    },
                    start: 0.0,
                    stop: None,
                }]
            },
            "drains[0].shape",
        );
        bad(
            &|s| {
                s.kind = SceneKind::Smoke;
                s.fluid.clear();
                s.resolution.2 = 1;
            },
            "liquid scenes only",
        );
        assert!(channel().validate().is_ok());
        // An emitter lets a scene start without liquid.
        let mut empty = channel();
        empty.fluid.clear();
        assert!(empty.validate().is_ok(), "{:?}", empty.validate());
    }

    #[test]
    fn the_sides_have_their_axes_and_bits() {
        assert_eq!(Side::XMax.axis(), (0, true));
        assert_eq!(Side::YMin.axis(), (1, false));
        assert_eq!(Side::ZMax.bit(), 32);
        let s: Vec<Side> = ron::from_str("[x_max, y_min]").unwrap();
        assert_eq!(s, vec![Side::XMax, Side::YMin]);
        for side in Side::ALL {
            let text = ron::to_string(&side).unwrap();
            assert_eq!(text, side.name());
        }
    }
}
