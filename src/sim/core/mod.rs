//! What both modes share: the step runner, the grid fields and parameters, the solid
//! boundary, the divergence, the pressure solve, the projection and the implicit diffusion.

pub mod boundary;
pub mod clock;
pub mod diffusion;
pub mod divergence;
pub mod fields;
pub mod limits;
pub mod params;
pub mod pressure;
pub mod probes;
pub mod project;
pub mod recorder;
pub mod split;
pub mod tension;
