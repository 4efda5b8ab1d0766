"""eddy: a GPU PIC/FLIP liquid and smoke simulator, from Python.

Every array is a new numpy array (a copy of the GPU's data). Grid fields are shaped
(nz, ny, nx), x fastest in memory; a smoke slice has nz = 1. Steps hold the GIL.
"""

from os import PathLike
from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

SceneLike = Union[str, "PathLike[str]", dict]

class SceneError(ValueError):
    """A scene eddy cannot run: unreadable, malformed (the message names the field), or
    invalid (the message names the setting and its allowed range)."""

class SimulationError(RuntimeError):
    """A simulation that could not go on: the GPU, a blow-up, a bad or foreign state, a
    closed simulation."""

def adapter() -> str:
    """The GPU adapter eddy runs on, opened once per process and shared (Mesa's software
    adapter where there is no GPU; the environment variable WGPU_ADAPTER_NAME picks one)."""

def shipped_scenes() -> list[str]:
    """The names of the scenes shipped with eddy (`eddy scenes`)."""

def scene(name: Union[str, "PathLike[str]"]) -> dict[str, Any]:
    """A scene (a shipped scene's name or a scene file) as a dict of its fields, to edit
    and hand to `Simulation`. Settings at their defaults are left out; add any by its name
    (docs/guide/05-scenes.md). Enum values are lower-case strings or single-key dicts
    ({"Box": {...}}), as in JSON."""

def race(
    system: FrozenSystem,
    preconditioners: Optional[Sequence[str]] = None,
    tolerance: Optional[float] = None,
    max_iterations: int = 4000,
) -> list[dict[str, Any]]:
    """Solves `system` once per preconditioner (all six by default: none, jacobi, ip,
    mic0, mic0_tiled, mg) at `tolerance` (the simulation's when None). Each dict holds
    preconditioner, iterations, status, residual, true_residual, history (the residual
    before the first and after each iteration), dispatches_per_iteration, time_ms,
    setup_ms, timer ("gpu" or "wall"), wall_ms and spectrum (a Lanczos estimate)."""

class Simulation:
    """A liquid or smoke simulation of one scene, on the GPU."""

    def __init__(
        self,
        scene: SceneLike,
        resolution: Optional[int] = None,
        preconditioner: Optional[str] = None,
    ) -> None:
        """`scene`: a shipped scene's name, a scene file's path, or a dict from `eddy.scene`.
        `resolution` (cells along the longest axis) and `preconditioner` override the
        scene as `eddy run --resolution/--preconditioner` do. Raises SceneError."""
    @property
    def kind(self) -> str:
        """"liquid" or "smoke"."""
    @property
    def time(self) -> float:
        """Simulated time, s."""
    @property
    def frame(self) -> int:
        """Frames simulated (stats.csv's frame number of the last row)."""
    @property
    def dims(self) -> tuple[int, int, int]:
        """Cells along x, y, z."""
    @property
    def h(self) -> float:
        """Cell size, m."""
    def scene(self) -> dict[str, Any]:
        """The scene it runs, as a dict."""
    def step(self, frames: int = 1) -> dict[str, float]:
        """Runs `frames` frames; returns the last one's stats (stats.csv's columns).
        Raises SimulationError if the simulation blows up."""
    def run(self, until: float) -> int:
        """Steps whole frames until the time reaches `until` s; returns the frames run."""
    def stats(self) -> dict[str, npt.NDArray[np.float64]]:
        """stats.csv's columns over the frames stepped by this object (since it was made or
        last restored)."""
    def stats_rows(self) -> list[str]:
        """The same rows as text, exactly as `eddy run` writes them to stats.csv."""
    def probes(self) -> dict[str, npt.NDArray[np.float64]]:
        """The scene's probes over the frames stepped here: probes.csv's columns (frame,
        time_s, then PROBE.QUANTITY), a row per substep or per frame."""
    def probe_units(self) -> dict[str, str]:
        """Each probe column's unit."""
    def field_names(self) -> list[str]:
        """The names `field` takes in this mode (the viewer's debug views)."""
    def field(self, name: str) -> npt.NDArray[np.float32]:
        """A grid field, shaped (nz, ny, nx); the MAC faces u, v, w have one more sample
        along their own axis; a multigrid level's view is over that level's grid. Raises
        KeyError for an unknown name (the message lists the names)."""
    def velocity(self) -> npt.NDArray[np.float32]:
        """The cell-centred velocity, shaped (nz, ny, nx, 3), m/s."""
    def particles(
        self,
    ) -> tuple[npt.NDArray[np.float32], Optional[npt.NDArray[np.float32]]]:
        """Liquid: particle positions and velocities, each (N, 3). Smoke: the tracers'
        positions and None."""
    def faces(
        self,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The MAC face velocities u, v, w (m/s), each with one more sample along its own
        axis; a smoke slice's w is empty."""
    def set_particle_velocities(self, velocities: npt.NDArray[np.float32]) -> None:
        """Liquid: sets every particle's velocity, (N, 3) in `particles()` order."""
    def set_faces(self, u: npt.NDArray[np.float32], v: npt.NDArray[np.float32]) -> None:
        """Smoke: sets the face velocities, u (1, ny, nx + 1) and v (1, ny + 1, nx)."""
    def set_dye(
        self,
        rgb: Optional[npt.NDArray[np.float32]] = None,
        temperature: Optional[npt.NDArray[np.float32]] = None,
    ) -> None:
        """Smoke: sets the dye (1, ny, nx, 3) and/or the temperature (1, ny, nx)."""
    def bodies(self) -> dict[str, npt.NDArray[np.float64]]:
        """The rigid bodies now: bodies.csv's columns, one entry per body."""
    def write_vdb(self, path: Union[str, "PathLike[str]"]) -> int:
        """Writes the frame as an OpenVDB volume, as `eddy run --dump-vdb` does; returns its
        size in bytes."""
    def state(self) -> bytes:
        """The whole state after the last frame, as a checkpoint file's bytes."""
    def restore(self, state: Union[bytes, str, "PathLike[str]"]) -> None:
        """Continues from `state()` bytes or a checkpoint file of the same scene, bit for
        bit. Raises SimulationError for another scene's state or a damaged one."""
    def freeze(self) -> FrozenSystem:
        """The last pressure solve's system, for the solver lab (after a frame)."""
    def close(self) -> None:
        """Frees the GPU memory now (also done when the object goes)."""
    def __enter__(self) -> Simulation: ...
    def __exit__(self, *args: object) -> None: ...

class FrozenSystem:
    """A pressure system: A (packed), b, the cell types and the simulation's solution."""

    @staticmethod
    def load(dir: Union[str, "PathLike[str]"]) -> FrozenSystem:
        """A system `eddy run --export-system DIR` or `save` wrote."""
    def save(self, dir: Union[str, "PathLike[str]"]) -> None:
        """Writes it for `eddy bench --system` and `eddy view --system`."""
    @property
    def dims(self) -> tuple[int, int, int]: ...
    @property
    def fluid_cells(self) -> int: ...
    @property
    def origin(self) -> str:
        """Scene, frame and time it was frozen at."""
    @property
    def a(self) -> npt.NDArray[np.float32]:
        """(nz, ny, nx, 4): each cell's diagonal and +x, +y, +z couplings."""
    @property
    def b(self) -> npt.NDArray[np.float32]: ...
    @property
    def solution(self) -> npt.NDArray[np.float32]: ...
    @property
    def cell_type(self) -> npt.NDArray[np.uint32]:
        """AIR 0, FLUID 1, SOLID 2."""
    def true_residual(self, x: Sequence[float]) -> float:
        """max|b - A x| / max|b|, in f64."""

class SolverLab:
    """PCG on a frozen system, one iteration at a time."""

    def __init__(
        self,
        system: FrozenSystem,
        preconditioner: str = "mg",
        tolerance: Optional[float] = None,
    ) -> None: ...
    def step(self) -> bool:
        """One iteration; True once the solve has ended."""
    def run(self, max_iterations: int = 4000) -> int:
        """Iterates to the end; returns the iteration reached."""
    @property
    def iteration(self) -> int: ...
    @property
    def done(self) -> bool: ...
    @property
    def status(self) -> str:
        """Converged, Running, IterationLimit, ..."""
    @property
    def dispatches_per_iteration(self) -> int: ...
    def residuals(self) -> npt.NDArray[np.float64]:
        """max|r| / max|b| before the first iteration and after each one."""
    def mg_levels(self) -> list[dict[str, Any]]:
        """With mg: each level's dict of level, dims, rhs, residual (empty on the coarsest)
        and correction (arrays over that level's grid), finest first."""
    def vectors(self) -> dict[str, npt.NDArray[np.float32]]:
        """p (the iterate), r, z = M^-1 r, d (the direction) and q = A d, each (nz, ny, nx)."""
