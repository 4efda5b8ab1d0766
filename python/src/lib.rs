//! `import eddy`: the simulator from Python. A [`Simulation`] runs a scene (a shipped
//! name, a file, or a dict) on the GPU adapter the process opened once, steps it, and hands
//! out every grid field, the particles, the bodies and the stats as numpy arrays; its state
//! saves and restores through the checkpoint format. The solver lab freezes a pressure
//! solve ([`FrozenSystem`]), steps it ([`SolverLab`]) and races the preconditioners
//! ([`race`]). Errors are Python exceptions ([`SceneError`], [`SimulationError`], and
//! `KeyError` / `ValueError` for bad arguments) whose messages are eddy's own.

use eddy::gpu::GpuContext;
use eddy::output::checkpoint;
use eddy::scene::{PreconditionerKind, Scene, SceneKind};
use eddy::sim::handle::Sim;
use eddy::sim::lab::{FrozenSystem as LabSystem, SolverLab as Lab};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArray4};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

create_exception!(
    eddy,
    SceneError,
    PyValueError,
    "A scene eddy cannot run: unreadable, malformed (the message names the field), or invalid."
);
create_exception!(
    eddy,
    SimulationError,
    PyRuntimeError,
    "A simulation that could not go on: the GPU, a blow-up, a broken invariant, a bad state."
);

fn sim_err(e: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(e.to_string())
}

fn scene_err(e: impl std::fmt::Display) -> PyErr {
    SceneError::new_err(e.to_string())
}

/// The process's GPU adapter, opened on first use and shared by every simulation (the
/// same choice as the command line's: the best adapter there is, Mesa's software one
/// where there is no GPU; `WGPU_ADAPTER_NAME` picks one by name).
fn gpu() -> PyResult<Arc<GpuContext>> {
    static CTX: Mutex<Option<Arc<GpuContext>>> = Mutex::new(None);
    let mut ctx = CTX.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = ctx.as_ref() {
        return Ok(c.clone());
    }
    let c = Arc::new(GpuContext::new().map_err(sim_err)?);
    *ctx = Some(c.clone());
    Ok(c)
}

/// The adapter eddy runs on (opening it if need be): its name and backend.
#[pyfunction]
fn adapter() -> PyResult<String> {
    let c = gpu()?;
    let info = c.adapter.get_info();
    Ok(format!("{} ({:?})", info.name, info.backend))
}

/// The names of the scenes shipped with eddy.
#[pyfunction]
fn shipped_scenes() -> Vec<&'static str> {
    eddy::scene::shipped::SHIPPED
        .iter()
        .map(|s| s.name)
        .collect()
}

fn json_to_py(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// A scene from what Python hands in: a dict (the fields [`scene`] returns), or a str or
/// path naming a scene file or a shipped scene.
fn load_scene(py: Python<'_>, scene: &Bound<'_, PyAny>) -> PyResult<Scene> {
    if scene.is_instance_of::<PyDict>() {
        let text: String = py
            .import("json")?
            .call_method1("dumps", (scene,))
            .map_err(|e| scene_err(format!("the scene dict is not plain data: {e}")))?
            .extract()?;
        return Scene::parse_json(&text, Path::new("<dict>")).map_err(scene_err);
    }
    let path: PathBuf = py
        .import("os")?
        .call_method1("fspath", (scene,))
        .map_err(|_| {
            PyValueError::new_err(
                "scene must be a shipped scene's name, a path to a scene file, or a dict",
            )
        })?
        .extract()?;
    Scene::load(&path).map_err(scene_err)
}

/// A scene as a dict of its fields: a shipped scene's name or a scene file's path. Settings
/// at their defaults are left out (add any by its name). Edit it and hand it to
/// `Simulation`.
#[pyfunction]
fn scene(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let s = load_scene(py, name)?;
    json_to_py(py, &s.to_json())
}

fn preconditioner(name: &str) -> PyResult<PreconditionerKind> {
    name.parse().map_err(PyValueError::new_err)
}

/// A liquid or smoke simulation of one scene on the GPU.
#[pyclass(unsendable, module = "eddy")]
struct Simulation {
    sim: Option<Sim>,
    frame: u64,
    /// stats.csv's rows of the frames stepped here, as text (as `eddy run` writes them).
    rows: Vec<String>,
    /// probes.csv's rows of the same frames.
    probe_rows: Vec<String>,
}

impl Simulation {
    fn sim(&self) -> PyResult<&Sim> {
        self.sim
            .as_ref()
            .ok_or_else(|| SimulationError::new_err("the simulation was closed"))
    }

    fn sim_mut(&mut self) -> PyResult<&mut Sim> {
        self.sim
            .as_mut()
            .ok_or_else(|| SimulationError::new_err("the simulation was closed"))
    }

    fn header(&self) -> PyResult<String> {
        Ok(eddy::sim::FrameStats::csv_header_for(self.sim()?.scene()))
    }
}

/// A row of CSV text as floats (integers are exact in f64 below 2^53).
fn parse_row(row: &str) -> Vec<f64> {
    row.split(',')
        .map(|v| v.parse().unwrap_or(f64::NAN))
        .collect()
}

fn columns<'py>(py: Python<'py>, header: &str, rows: &[String]) -> PyResult<Bound<'py, PyDict>> {
    let names: Vec<&str> = header.split(',').collect();
    let parsed: Vec<Vec<f64>> = rows.iter().map(|r| parse_row(r)).collect();
    let d = PyDict::new(py);
    for (c, name) in names.iter().enumerate() {
        let col: Vec<f64> = parsed
            .iter()
            .map(|r| r.get(c).copied().unwrap_or(f64::NAN))
            .collect();
        d.set_item(*name, PyArray1::from_vec(py, col))?;
    }
    Ok(d)
}

/// `values` (x fastest) as an array shaped (nz, ny, nx).
fn grid_array<'py>(
    py: Python<'py>,
    values: Vec<f32>,
    dims: [u32; 3],
) -> PyResult<Bound<'py, PyAny>> {
    let shape = [dims[2] as usize, dims[1] as usize, dims[0] as usize];
    if values.len() != shape.iter().product::<usize>() {
        return Err(SimulationError::new_err(format!(
            "{} values for a grid of {dims:?}",
            values.len()
        )));
    }
    Ok(PyArray1::from_vec(py, values).reshape(shape)?.into_any())
}

fn points<'py>(py: Python<'py>, v: &[[f32; 4]]) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<f32> = v.iter().flat_map(|p| [p[0], p[1], p[2]]).collect();
    Ok(PyArray1::from_vec(py, flat)
        .reshape([v.len(), 3])?
        .into_any())
}

#[pymethods]
impl Simulation {
    /// `Simulation(scene, resolution=None, preconditioner=None)`: `scene` is a shipped
    /// scene's name, a path to a scene file, or a dict (see `eddy.scene`); `resolution`
    /// the cells along the longest axis, `preconditioner` one of none, jacobi, ip, mic0,
    /// mic0_tiled, mg (both override the scene, as `eddy run`'s flags do).
    #[new]
    #[pyo3(signature = (scene, resolution=None, preconditioner=None))]
    fn new(
        py: Python<'_>,
        scene: &Bound<'_, PyAny>,
        resolution: Option<u32>,
        preconditioner: Option<&str>,
    ) -> PyResult<Self> {
        let mut s = load_scene(py, scene)?;
        if let Some(p) = preconditioner {
            s.pressure.preconditioner = self::preconditioner(p)?;
        }
        if let Some(n) = resolution {
            let max = eddy::scene::MAX_AXIS_CELLS;
            if !(2..=max).contains(&n) {
                return Err(PyValueError::new_err(format!(
                    "resolution must be between 2 and {max} cells along the longest axis, got {n}"
                )));
            }
            s = s.with_resolution(n);
            s.validate().map_err(|m| {
                scene_err(format!("resolution {n} gives a grid eddy cannot run: {m}"))
            })?;
        }
        let ctx = gpu()?;
        let mut sim = Sim::new(ctx, &s).map_err(sim_err)?;
        // Every view stays readable and the last solve can be frozen, as in the viewer
        // (buffers of their own; the numbers are the same as `eddy run`'s).
        sim.keep_grid_views();
        sim.keep_solver_vectors();
        Ok(Self {
            sim: Some(sim),
            frame: 0,
            rows: vec![],
            probe_rows: vec![],
        })
    }

    /// "liquid" or "smoke".
    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        Ok(match self.sim()?.scene().kind {
            SceneKind::Liquid => "liquid",
            SceneKind::Smoke => "smoke",
        })
    }

    /// Simulated time, s.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.sim()?.time())
    }

    /// Frames simulated (the frame number of stats.csv's last row).
    #[getter]
    fn frame(&self) -> u64 {
        self.frame
    }

    /// Cells along x, y, z (z is 1 in a smoke slice).
    #[getter]
    fn dims(&self) -> PyResult<(u32, u32, u32)> {
        let d = self.sim()?.scene().dims();
        Ok((d[0], d[1], d[2]))
    }

    /// Cell size, m.
    #[getter]
    fn h(&self) -> PyResult<f64> {
        Ok(self.sim()?.scene().h())
    }

    /// The scene it runs, as a dict.
    fn scene(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        json_to_py(py, &self.sim()?.scene().to_json())
    }

    /// Runs `frames` frames; returns the last frame's stats (stats.csv's columns).
    #[pyo3(signature = (frames=1))]
    fn step<'py>(&mut self, py: Python<'py>, frames: u64) -> PyResult<Bound<'py, PyDict>> {
        if frames == 0 {
            return Err(PyValueError::new_err("frames must be at least 1"));
        }
        for _ in 0..frames {
            let sim = self.sim_mut()?;
            let st = sim.step_frame().map_err(sim_err)?;
            self.frame = st.frame;
            self.rows.push(st.csv_row());
            self.probe_rows
                .extend(eddy::output::probes::csv_rows(st.frame, &st.probes));
            py.check_signals()?;
        }
        let header = self.header()?;
        let d = PyDict::new(py);
        let last = parse_row(self.rows.last().expect("a frame was stepped"));
        for (name, v) in header.split(',').zip(last) {
            d.set_item(name, v)?;
        }
        Ok(d)
    }

    /// Steps whole frames until the simulated time reaches `until` seconds; returns the
    /// frames run.
    fn run(&mut self, py: Python<'_>, until: f64) -> PyResult<u64> {
        if !until.is_finite() {
            return Err(PyValueError::new_err(format!(
                "until must be a time in seconds, got {until}"
            )));
        }
        let mut n = 0;
        while self.sim()?.time() < until - 1e-9 {
            self.step(py, 1)?;
            n += 1;
        }
        Ok(n)
    }

    /// stats.csv's columns over the frames stepped by this object (since it was made or
    /// last restored), each a float64 array.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        columns(py, &self.header()?, &self.rows)
    }

    /// stats.csv's rows of the frames stepped here, as `eddy run` writes them (no header).
    fn stats_rows(&self) -> Vec<String> {
        self.rows.clone()
    }

    /// The scene's probes (`probes: [...]`) over the frames stepped by this object:
    /// probes.csv's columns (frame, time_s, then one per probe and quantity, named
    /// `PROBE.QUANTITY`), a row per substep (or per frame with `probe_every: frame`).
    fn probes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let header = eddy::output::probes::csv_header(self.sim()?.scene());
        columns(py, &header, &self.probe_rows)
    }

    /// The probes' units: column name to unit ("1" for a ratio).
    fn probe_units(&self) -> PyResult<std::collections::BTreeMap<String, String>> {
        Ok(self
            .sim()?
            .scene()
            .probe_columns()
            .into_iter()
            .map(|(name, unit)| (name.to_string(), unit.to_string()))
            .collect())
    }

    /// The names `field` takes in this scene's mode (the viewer's debug views).
    fn field_names(&self) -> PyResult<Vec<String>> {
        Ok(match self.sim()? {
            Sim::Liquid(_) => eddy::sim::liquid::views::Field::ALL
                .iter()
                .map(|f| f.id().to_string())
                .collect(),
            Sim::Smoke(_) => eddy::sim::smoke::views::SmokeField::ALL
                .iter()
                .map(|f| f.name().to_string())
                .collect(),
        })
    }

    /// A grid field by name (`field_names()`), float32, shaped (nz, ny, nx) over the cells;
    /// the MAC faces `u`, `v`, `w` have one more sample along their own axis. A multigrid
    /// level's view is over that level's grid. Smoke views are (1, ny, nx).
    fn field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.sim()? {
            Sim::Liquid(s) => {
                let f: eddy::sim::liquid::views::Field =
                    name.parse().map_err(|e: String| PyKeyError::new_err(e))?;
                let data = s.read_field(f).map_err(sim_err)?;
                grid_array(py, data.values, data.dims)
            }
            Sim::Smoke(s) => {
                let f: eddy::sim::smoke::views::SmokeField =
                    name.parse().map_err(|e: String| PyKeyError::new_err(e))?;
                let data = s.read_view(f).map_err(sim_err)?;
                grid_array(py, data.values, [data.dims[0], data.dims[1], 1])
            }
        }
    }

    /// The cell-centred velocity, float32, shaped (nz, ny, nx, 3) (smoke: w is 0).
    fn velocity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let names = vec!["velocity".to_string()];
        let frame = match self.sim()? {
            Sim::Liquid(s) => s.field_frame(&names),
            Sim::Smoke(s) => s.field_frame(&names),
        }
        .map_err(sim_err)?;
        let d = frame.dims.map(|v| v as usize);
        let values = frame
            .cells
            .into_iter()
            .next()
            .map(|a| a.values)
            .unwrap_or_default();
        Ok(PyArray1::from_vec(py, values)
            .reshape([d[2], d[1], d[0], 3])?
            .into_any())
    }

    /// The liquid's particles (positions and velocities, float32, shaped (N, 3)); for a
    /// smoke, its tracers' positions and None.
    fn particles<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
        match self.sim()? {
            Sim::Liquid(s) => {
                let (p, v) = s.read_particles().map_err(sim_err)?;
                Ok((points(py, &p)?, Some(points(py, &v)?)))
            }
            Sim::Smoke(s) => Ok((points(py, &s.read_tracers().map_err(sim_err)?)?, None)),
        }
    }

    /// The MAC face velocities (u, v, w), m/s, each shaped (nz, ny, nx) plus one along its
    /// own axis; a smoke slice's w is empty.
    fn faces<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let frame = match self.sim()? {
            Sim::Liquid(s) => s.field_frame(&["faces".to_string()]),
            Sim::Smoke(s) => s.field_frame(&["faces".to_string()]),
        }
        .map_err(sim_err)?;
        let faces = frame
            .faces
            .clone()
            .ok_or_else(|| SimulationError::new_err("no face velocities"))?;
        let [u, v, w] = faces;
        let grid = |c: usize, values: Vec<f32>| -> PyResult<Bound<'py, PyAny>> {
            if values.is_empty() {
                return Ok(PyArray1::from_vec(py, values).into_any());
            }
            let mut d = frame.dims;
            d[c] += 1;
            grid_array(py, values, d)
        };
        Ok((grid(0, u)?, grid(1, v)?, grid(2, w)?))
    }

    /// Sets the liquid's particle velocities, (N, 3) m/s for the N particles `particles()`
    /// returns, in that order; the next frame starts from them (the grid is rebuilt from
    /// the particles every substep).
    fn set_particle_velocities(&mut self, velocities: PyReadonlyArray2<'_, f32>) -> PyResult<()> {
        let v = velocities.as_array();
        let sim = self.sim_mut()?;
        let Sim::Liquid(liquid) = &*sim else {
            return Err(PyValueError::new_err(
                "a smoke has no particles to set (its tracers follow the air): set_faces sets its velocity",
            ));
        };
        let n = liquid.mode.particles.count as usize;
        if v.shape() != [n, 3] {
            return Err(PyValueError::new_err(format!(
                "velocities must be shaped ({n}, 3) for the {n} particles, got {:?}",
                v.shape()
            )));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(PyValueError::new_err("velocities must be finite"));
        }
        // Through the saved state, the path checkpoints take: only the velocities change.
        let mut state = sim.save_state().map_err(sim_err)?;
        let section = state
            .sections
            .iter_mut()
            .find(|s| s.name == "particles.vel")
            .ok_or_else(|| SimulationError::new_err("the state holds no particle velocities"))?;
        for (p, row) in section.bytes.chunks_exact_mut(16).zip(v.rows()) {
            for a in 0..3 {
                p[4 * a..4 * a + 4].copy_from_slice(&row[a].to_le_bytes());
            }
        }
        sim.restore_state(&state).map_err(sim_err)
    }

    /// Sets a smoke's face velocities: u shaped (1, ny, nx + 1), v (1, ny + 1, nx), m/s.
    /// The next substep's projection makes them divergence-free and holds the solids'
    /// faces.
    fn set_faces(
        &mut self,
        u: PyReadonlyArray3<'_, f32>,
        v: PyReadonlyArray3<'_, f32>,
    ) -> PyResult<()> {
        let sim = self.sim_mut()?;
        let Sim::Smoke(smoke) = sim else {
            return Err(PyValueError::new_err(
                "a liquid's grid velocity is rebuilt from its particles every substep: use \
                 set_particle_velocities",
            ));
        };
        let [nx, ny, _] = smoke.dims().map(|d| d as usize);
        let (u, v) = (u.as_array(), v.as_array());
        if u.shape() != [1, ny, nx + 1] || v.shape() != [1, ny + 1, nx] {
            return Err(PyValueError::new_err(format!(
                "u must be shaped (1, {ny}, {}) and v (1, {}, {nx}); got {:?} and {:?}",
                nx + 1,
                ny + 1,
                u.shape(),
                v.shape()
            )));
        }
        if u.iter().chain(v.iter()).any(|x| !x.is_finite()) {
            return Err(PyValueError::new_err("velocities must be finite"));
        }
        let mut faces = smoke.read_velocity().map_err(sim_err)?;
        let values: Vec<f32> = u.iter().chain(v.iter()).copied().collect();
        faces[..values.len()].copy_from_slice(&values);
        let dye = smoke.read_dye().map_err(sim_err)?;
        smoke.upload_state(&dye, &faces).map_err(sim_err)
    }

    /// Sets a smoke's dye (rgb, shaped (1, ny, nx, 3)) and/or temperature ((1, ny, nx)).
    #[pyo3(signature = (rgb=None, temperature=None))]
    fn set_dye(
        &mut self,
        rgb: Option<PyReadonlyArray4<'_, f32>>,
        temperature: Option<PyReadonlyArray3<'_, f32>>,
    ) -> PyResult<()> {
        let sim = self.sim_mut()?;
        let Sim::Smoke(smoke) = sim else {
            return Err(PyValueError::new_err(
                "only a smoke carries dye and temperature",
            ));
        };
        let [nx, ny, _] = smoke.dims().map(|d| d as usize);
        let mut dye = smoke.read_dye().map_err(sim_err)?;
        if let Some(rgb) = &rgb {
            let rgb = rgb.as_array();
            if rgb.shape() != [1, ny, nx, 3] || rgb.iter().any(|x| !x.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "rgb must be finite and shaped (1, {ny}, {nx}, 3), got {:?}",
                    rgb.shape()
                )));
            }
            let flat: Vec<f32> = rgb.iter().copied().collect();
            for (d, c) in dye.iter_mut().zip(flat.chunks_exact(3)) {
                d[..3].copy_from_slice(c);
            }
        }
        if let Some(t) = &temperature {
            let t = t.as_array();
            if t.shape() != [1, ny, nx] || t.iter().any(|x| !x.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "temperature must be finite and shaped (1, {ny}, {nx}), got {:?}",
                    t.shape()
                )));
            }
            for (d, &x) in dye.iter_mut().zip(t.iter()) {
                d[3] = x;
            }
        }
        let faces = smoke.read_velocity().map_err(sim_err)?;
        smoke.upload_state(&dye, &faces).map_err(sim_err)
    }

    /// The rigid bodies now: bodies.csv's columns (pose, velocities, forces), one entry
    /// per body; empty arrays without bodies.
    fn bodies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim()?;
        let rows = match sim.bodies() {
            Some(b) => eddy::output::bodies::csv_rows(&b.set, self.frame, sim.time()),
            None => vec![],
        };
        columns(py, eddy::output::bodies::CSV_HEADER, &rows)
    }

    /// Writes the frame as an OpenVDB volume (what `eddy run --dump-vdb` writes: a liquid's
    /// `surface` level set, `density` and `velocity`; a smoke's `density`, `dye`,
    /// `temperature` and `velocity`); returns the file's size in bytes.
    fn write_vdb(&self, path: PathBuf) -> PyResult<u64> {
        let sim = self.sim()?;
        let grids = match sim {
            Sim::Liquid(s) => {
                let (pos, _) = s.read_particles().map_err(sim_err)?;
                let names = eddy::output::vdb::LIQUID_INPUTS.map(String::from);
                let frame = s.field_frame(&names).map_err(sim_err)?;
                eddy::output::vdb::liquid_grids(sim.scene(), &pos, &frame).map_err(sim_err)?
            }
            Sim::Smoke(s) => {
                let names = eddy::output::vdb::SMOKE_INPUTS.map(String::from);
                eddy::output::vdb::smoke_grids(&s.field_frame(&names).map_err(sim_err)?)
            }
        };
        // The creator text `eddy run` writes, so the same frame gives the same bytes.
        let creator = format!(
            "eddy {}, frame {}, t = {:.6} s",
            env!("CARGO_PKG_VERSION"),
            self.frame,
            sim.time()
        );
        eddy::output::vdb::write_vdb(&path, &grids, &creator)
            .map_err(|e| sim_err(format!("cannot write {}: {e}", path.display())))
    }

    /// The whole state after the last frame, as the bytes of a checkpoint file
    /// (`checkpoint_NNNNN.eddy`, which `eddy run --resume` reads too).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let sim = self.sim()?;
        let state = sim.save_state().map_err(sim_err)?;
        Ok(PyBytes::new(py, &checkpoint::encode(sim.scene(), &state)))
    }

    /// Continues from `state` (bytes from `state()`, or a checkpoint file's path), saved
    /// from a simulation of the same scene: the run then goes on bit for bit as the one
    /// that saved it. The stats start over from there.
    fn restore(&mut self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = if let Ok(b) = state.cast::<PyBytes>() {
            checkpoint::decode(b.as_bytes(), Path::new("<bytes>")).map_err(sim_err)?
        } else {
            let path: PathBuf = py
                .import("os")?
                .call_method1("fspath", (state,))
                .map_err(|_| PyValueError::new_err("state must be bytes or a checkpoint's path"))?
                .extract()?;
            checkpoint::read(&path).map_err(sim_err)?
        };
        let sim = self.sim_mut()?;
        if c.scene.to_json() != sim.scene().to_json() {
            return Err(SimulationError::new_err(
                "the state was saved from another scene (or other settings of it); make a \
                 Simulation of its scene to restore it",
            ));
        }
        sim.restore_state(&c.state).map_err(sim_err)?;
        self.frame = c.state.frame;
        self.rows.clear();
        self.probe_rows.clear();
        Ok(())
    }

    /// The last pressure solve's system, frozen for the solver lab (after at least one
    /// frame).
    fn freeze(&self) -> PyResult<FrozenSystem> {
        let sim = self.sim()?;
        if !sim.has_solved() {
            return Err(SimulationError::new_err(
                "no pressure solve has run yet: step a frame first",
            ));
        }
        Ok(FrozenSystem {
            sys: Arc::new(sim.freeze_system().map_err(sim_err)?),
        })
    }

    /// Frees the simulation's GPU memory now (it is also freed when the object goes).
    fn close(&mut self) {
        self.sim = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &mut self,
        _ty: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close();
    }

    fn __repr__(&self) -> String {
        match &self.sim {
            Some(s) => format!(
                "<eddy.Simulation {} {:?} at frame {}, t = {:.4} s>",
                match s.scene().kind {
                    SceneKind::Liquid => "liquid",
                    SceneKind::Smoke => "smoke",
                },
                s.scene().dims(),
                self.frame,
                s.time()
            ),
            None => "<eddy.Simulation (closed)>".into(),
        }
    }
}

/// A pressure system frozen from a simulation's last solve (or loaded from a folder
/// `eddy run --export-system` wrote): A, b, the cell types, the simulation's solution.
#[pyclass(frozen, module = "eddy")]
struct FrozenSystem {
    sys: Arc<LabSystem>,
}

#[pymethods]
impl FrozenSystem {
    /// Loads a system `eddy run --export-system DIR` or `save` wrote.
    #[staticmethod]
    fn load(dir: PathBuf) -> PyResult<Self> {
        let sys = eddy::output::frozen::load_frozen_system(&dir).map_err(sim_err)?;
        Ok(Self { sys: Arc::new(sys) })
    }

    /// Writes the system to folder `dir` (what `eddy bench --system` and `eddy view
    /// --system` read).
    fn save(&self, dir: PathBuf) -> PyResult<()> {
        eddy::output::frozen::save_frozen_system(&dir, &self.sys).map_err(sim_err)
    }

    /// Cells along x, y, z.
    #[getter]
    fn dims(&self) -> (u32, u32, u32) {
        let d = self.sys.dims;
        (d[0], d[1], d[2])
    }

    /// FLUID cells (the system's unknowns).
    #[getter]
    fn fluid_cells(&self) -> usize {
        self.sys.fluid_cells()
    }

    /// Where it came from (scene, frame, time).
    #[getter]
    fn origin(&self) -> String {
        self.sys.origin.clone()
    }

    /// The right-hand side b, shaped (nz, ny, nx).
    #[getter]
    fn b<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        grid_array(py, self.sys.b.clone(), self.sys.dims)
    }

    /// The solution the simulation's solve stored, shaped (nz, ny, nx).
    #[getter]
    fn solution<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        grid_array(py, self.sys.solution.clone(), self.sys.dims)
    }

    /// The packed matrix: (nz, ny, nx, 4) of (diagonal, +x, +y, +z) couplings.
    #[getter]
    fn a<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = self.sys.dims.map(|v| v as usize);
        let flat: Vec<f32> = self.sys.a.iter().flatten().copied().collect();
        Ok(PyArray1::from_vec(py, flat)
            .reshape([d[2], d[1], d[0], 4])?
            .into_any())
    }

    /// AIR (0), FLUID (1) or SOLID (2) per cell, shaped (nz, ny, nx).
    #[getter]
    fn cell_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = self.sys.dims.map(|v| v as usize);
        Ok(PyArray1::from_vec(py, self.sys.cell_type.clone())
            .reshape([d[2], d[1], d[0]])?
            .into_any())
    }

    /// max|b - A x| / max|b| of `x` (shaped like b), in f64.
    fn true_residual(&self, x: Vec<f32>) -> PyResult<f64> {
        if x.len() != self.sys.b.len() {
            return Err(PyValueError::new_err(format!(
                "x has {} values; the system has {} cells",
                x.len(),
                self.sys.b.len()
            )));
        }
        Ok(self.sys.true_residual(&x))
    }

    fn __repr__(&self) -> String {
        format!(
            "<eddy.FrozenSystem {:?}, {} FLUID cells: {}>",
            self.sys.dims,
            self.sys.fluid_cells(),
            self.sys.origin
        )
    }
}

/// PCG on a frozen system one iteration at a time, every vector readable:
/// `SolverLab(system, preconditioner="mg", tolerance=None)` (the simulation's tolerance
/// when None).
#[pyclass(unsendable, module = "eddy")]
struct SolverLab {
    lab: Lab,
}

#[pymethods]
impl SolverLab {
    #[new]
    #[pyo3(signature = (system, preconditioner="mg", tolerance=None))]
    fn new(system: &FrozenSystem, preconditioner: &str, tolerance: Option<f64>) -> PyResult<Self> {
        let kind = self::preconditioner(preconditioner)?;
        let tol = tolerance.unwrap_or(system.sys.settings.tolerance);
        let ctx = gpu()?;
        let sys = system.sys.clone();
        let lab = Lab::new(ctx, &sys, kind, tol).map_err(sim_err)?;
        Ok(Self { lab })
    }

    /// One PCG iteration; returns whether the solve has ended (converged or stopped).
    fn step(&mut self) -> PyResult<bool> {
        self.lab.step().map_err(sim_err)
    }

    /// Iterates until the solve ends or `max_iterations`; returns the iteration reached.
    #[pyo3(signature = (max_iterations=4000))]
    fn run(&mut self, max_iterations: u32) -> PyResult<u32> {
        self.lab.run_to_convergence(max_iterations).map_err(sim_err)
    }

    /// The iteration reached (0: after the set-up).
    #[getter]
    fn iteration(&self) -> u32 {
        self.lab.iteration()
    }

    /// Whether the solve has ended.
    #[getter]
    fn done(&self) -> bool {
        self.lab.done()
    }

    /// How it stands: converged, running, iteration limit, ...
    #[getter]
    fn status(&self) -> String {
        format!("{:?}", self.lab.status())
    }

    /// GPU dispatches per PCG iteration with this preconditioner.
    #[getter]
    fn dispatches_per_iteration(&self) -> u32 {
        self.lab.dispatches_per_iteration()
    }

    /// max|r| / max|b| before the first iteration and after each one.
    fn residuals<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let r: Vec<f64> = self.lab.rows().iter().map(|r| r.residual).collect();
        PyArray1::from_vec(py, r)
    }

    /// With the `mg` preconditioner: each multigrid level's vectors in the V-cycle that
    /// computed z, finest first: a dict of `level`, `dims` (nx, ny, nz), and `rhs`,
    /// `residual` (empty on the coarsest level) and `correction`, each shaped
    /// (nz, ny, nx) over that level's grid.
    fn mg_levels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let levels = self.lab.mg_levels().map_err(sim_err)?;
        let out = PyList::empty(py);
        for l in levels {
            let d = PyDict::new(py);
            d.set_item("level", l.level)?;
            d.set_item("dims", (l.dims[0], l.dims[1], l.dims[2]))?;
            d.set_item("rhs", grid_array(py, l.rhs, l.dims)?)?;
            let residual = if l.residual.is_empty() {
                PyArray1::from_vec(py, Vec::<f32>::new()).into_any()
            } else {
                grid_array(py, l.residual, l.dims)?
            };
            d.set_item("residual", residual)?;
            d.set_item("correction", grid_array(py, l.correction, l.dims)?)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The PCG vectors now: x (`p`), `r`, `z` = M^-1 r, the direction `d` and `q` = A d,
    /// each shaped (nz, ny, nx).
    fn vectors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let v = self.lab.vectors().map_err(sim_err)?;
        let dims = self.lab.system().dims;
        let d = PyDict::new(py);
        for (name, values) in [("p", v.p), ("r", v.r), ("z", v.z), ("d", v.d), ("q", v.q)] {
            d.set_item(name, grid_array(py, values, dims)?)?;
        }
        Ok(d)
    }
}

/// Solves `system` once with each preconditioner (all six by default): a list of dicts of
/// the iterations, status, final and true residual, residual history, dispatches per
/// iteration and times (ms; `timer` says whether GPU timestamps or the wall clock).
#[pyfunction]
#[pyo3(signature = (system, preconditioners=None, tolerance=None, max_iterations=4000))]
fn race<'py>(
    py: Python<'py>,
    system: &FrozenSystem,
    preconditioners: Option<Vec<String>>,
    tolerance: Option<f64>,
    max_iterations: u32,
) -> PyResult<Bound<'py, PyList>> {
    let kinds: Vec<PreconditionerKind> = match preconditioners {
        Some(names) => names
            .iter()
            .map(|n| preconditioner(n))
            .collect::<PyResult<_>>()?,
        None => PreconditionerKind::ALL.to_vec(),
    };
    let tol = tolerance.unwrap_or(system.sys.settings.tolerance);
    let ctx = gpu()?;
    let sys = system.sys.clone();
    let rows = py
        .detach(|| {
            eddy::sim::lab::race_some(ctx, &sys, &kinds, tol, max_iterations, &mut |_, _| {})
        })
        .map_err(sim_err)?;
    let out = PyList::empty(py);
    for r in rows {
        let text = serde_json::to_string(&r).map_err(sim_err)?;
        out.append(json_to_py(py, &text)?)?;
    }
    Ok(out)
}

#[pymodule]
#[pyo3(name = "eddy")]
fn eddy_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SceneError", m.py().get_type::<SceneError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_class::<Simulation>()?;
    m.add_class::<FrozenSystem>()?;
    m.add_class::<SolverLab>()?;
    m.add_function(wrap_pyfunction!(scene, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_scenes, m)?)?;
    m.add_function(wrap_pyfunction!(adapter, m)?)?;
    m.add_function(wrap_pyfunction!(race, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
