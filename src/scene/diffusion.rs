//! The diffusion settings of a scene: the solver of the implicit viscosity, heat and dye
//! systems, and the walls the smoke's temperature and dye are held at.

use super::*;

/// Solver of the implicit diffusion systems (I - k dt L) x = x_old: eddy's PCG on the
/// GPU, warm-started from x_old. The systems are diagonally dominant, so the cheap
/// preconditioners do well; `mg` is built for the pressure's Poisson matrix and is refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiffusionSettings {
    /// `jacobi` (default), `none`, `ip`, `mic0` or `mic0_tiled`.
    pub preconditioner: PreconditionerKind,
    /// Relative residual max|r| / max|b| at which PCG stops.
    pub tolerance: f64,
    pub max_iterations: u32,
}

impl Default for DiffusionSettings {
    fn default() -> Self {
        Self {
            preconditioner: PreconditionerKind::Jacobi,
            tolerance: 1e-6,
            max_iterations: 200,
        }
    }
}

impl DiffusionSettings {
    pub fn validate(&self) -> Result<(), String> {
        if self.preconditioner == PreconditionerKind::Mg {
            return Err(
                "diffusion.preconditioner: mg coarsens the pressure's Poisson matrix \
                        and does not apply to the diffusion systems; use jacobi, ip, mic0, \
                        mic0_tiled or none"
                    .into(),
            );
        }
        if !(self.tolerance >= MIN_TOLERANCE && self.tolerance < 1.0) {
            return Err(format!(
                "diffusion.tolerance must be in [{MIN_TOLERANCE:e}, 1) (relative residual), got {}",
                self.tolerance
            ));
        }
        if !(1..=10_000).contains(&self.max_iterations) {
            return Err(format!(
                "diffusion.max_iterations must be in 1..=10000, got {}",
                self.max_iterations
            ));
        }
        Ok(())
    }

    /// The same settings in the form the PCG host loop takes (a warm start from the old
    /// field, checked every 8 iterations: two checks cover the usual solve).
    pub fn pcg(&self) -> PressureSettings {
        PressureSettings {
            preconditioner: self.preconditioner,
            tolerance: self.tolerance,
            max_iterations: self.max_iterations,
            check_every: 8,
            warm_start: true,
            refine: 0.0,
            pipelined: false,
            margin: 0,
        }
    }
}

/// Largest diffusion coefficient (viscosity, heat, dye), m^2/s: far beyond honey's 1e-2
/// and still far from f32 trouble in k dt / h^2.
pub const MAX_DIFFUSION: f64 = 1e3;
/// Most hot or cold spots per wall field (`smoke.wall_temperature`, `smoke.wall_dye`).
pub const MAX_WALL_SPOTS: usize = 8;

/// A wall of the smoke's slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wall {
    /// x = 0.
    Left,
    /// x = domain.x.
    Right,
    /// y = 0.
    Bottom,
    /// y = domain.y.
    Top,
}

impl Wall {
    pub const ALL: [Wall; 4] = [Wall::Left, Wall::Right, Wall::Bottom, Wall::Top];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A stretch of a wall held at a fixed value: the wall's points whose coordinate along the
/// wall (y for left and right, x for bottom and top, m) lies in [from, to].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSpot {
    pub wall: Wall,
    pub from: f64,
    pub to: f64,
    pub value: f64,
}

/// Fixed values on the walls of the smoke's slice (Dirichlet conditions of a diffusion):
/// a whole wall, or spots on it (a spot wins over its wall's value, the first spot over
/// later ones). Where nothing is given the wall is insulated (zero flux).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WallValues {
    pub left: Option<f64>,
    pub right: Option<f64>,
    pub bottom: Option<f64>,
    pub top: Option<f64>,
    pub spots: Vec<WallSpot>,
}

impl WallValues {
    pub fn wall(&self, w: Wall) -> Option<f64> {
        match w {
            Wall::Left => self.left,
            Wall::Right => self.right,
            Wall::Bottom => self.bottom,
            Wall::Top => self.top,
        }
    }

    /// The fixed value at coordinate `s` (m) along wall `w`, or None where it is insulated.
    pub fn value_at(&self, w: Wall, s: f64) -> Option<f64> {
        self.spots
            .iter()
            .find(|p| p.wall == w && p.from <= s && s <= p.to)
            .map(|p| p.value)
            .or(self.wall(w))
    }

    pub fn is_empty(&self) -> bool {
        Wall::ALL.iter().all(|w| self.wall(*w).is_none()) && self.spots.is_empty()
    }

    pub(super) fn validate(&self, name: &str, domain: [f64; 3]) -> Result<(), String> {
        for w in Wall::ALL {
            if let Some(v) = self.wall(w) {
                if !(v.is_finite() && v.abs() <= MAX_SMOKE_VALUE) {
                    return Err(format!(
                        "{name}.{w:?}: must be finite and at most {MAX_SMOKE_VALUE:e} in magnitude, got {v}"
                    ));
                }
            }
        }
        if self.spots.len() > MAX_WALL_SPOTS {
            return Err(format!(
                "{name}.spots has {} entries; at most {MAX_WALL_SPOTS}",
                self.spots.len()
            ));
        }
        for (i, p) in self.spots.iter().enumerate() {
            let len = match p.wall {
                Wall::Left | Wall::Right => domain[1],
                Wall::Bottom | Wall::Top => domain[0],
            };
            if !(p.from.is_finite() && p.to.is_finite() && p.from <= p.to) {
                return Err(format!(
                    "{name}.spots[{i}]: from {} and to {} must be finite with from <= to",
                    p.from, p.to
                ));
            }
            if p.to < 0.0 || p.from > len {
                return Err(format!(
                    "{name}.spots[{i}]: [{}, {}] misses the {:?} wall, which spans [0, {len}] m",
                    p.from, p.to, p.wall
                ));
            }
            if !(p.value.is_finite() && p.value.abs() <= MAX_SMOKE_VALUE) {
                return Err(format!(
                    "{name}.spots[{i}].value must be finite and at most {MAX_SMOKE_VALUE:e} in magnitude, got {}",
                    p.value
                ));
            }
        }
        Ok(())
    }
}

/// Checks a diffusion coefficient (m^2/s).
pub(super) fn check_diffusion(name: &str, v: f64) -> Result<(), String> {
    if !(v.is_finite() && (0.0..=MAX_DIFFUSION).contains(&v)) {
        return Err(format!(
            "{name} must be in [0, {MAX_DIFFUSION:e}] m^2/s, got {v}"
        ));
    }
    Ok(())
}
