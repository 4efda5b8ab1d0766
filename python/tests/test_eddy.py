"""eddy's Python module against the command line: the same scene stepped from Python
gives `eddy run`'s stats.csv rows and VTK fields bit for bit; state round-trips; the solver
lab agrees with itself; errors are Python exceptions; a dropped Simulation gives its memory
back; the example notebook runs."""

import base64
import json
import os
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import eddy

ROOT = Path(__file__).resolve().parents[2]


def eddy_bin():
    path = Path(os.environ.get("EDDY_BIN", ROOT / "target" / "debug" / "eddy"))
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `cargo build` (scripts/test.sh does)")
    return str(path)


def eddy_run(tmp_path, *args):
    out = tmp_path / "out"
    r = subprocess.run(
        [eddy_bin(), "run", *args, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return out


def stats_rows(out):
    return (out / "stats.csv").read_text().splitlines()[1:]


def vti_arrays(path):
    """A VTK XML image file's arrays by name, read from the text: each DataArray's base64
    block is a UInt64 byte count and little-endian float32 values."""
    text = Path(path).read_text()
    arrays = {}
    for m in re.finditer(r"<DataArray ([^>]*)>\s*([A-Za-z0-9+/=]+)\s*</DataArray>", text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        raw = base64.b64decode(m.group(2))
        (count,) = struct.unpack("<Q", raw[:8])
        arrays[attrs["Name"]] = np.frombuffer(raw[8 : 8 + count], dtype="<f4")
    return arrays


@pytest.mark.parametrize(
    "scene,resolution,frames",
    [("dam_break", "16", 5), ("smoke_plume", "48", 3)],
)
def test_a_stepped_run_equals_eddy_run(tmp_path, scene, resolution, frames):
    out = eddy_run(tmp_path, scene, "--frames", str(frames), "--resolution", resolution)
    sim = eddy.Simulation(scene, resolution=int(resolution))
    last = sim.step(frames)
    assert sim.stats_rows() == stats_rows(out)
    assert last["frame"] == frames
    assert sim.frame == frames
    stats = sim.stats()
    assert list(stats["frame"]) == list(range(1, frames + 1))


def test_fields_equal_the_vtk_caches(tmp_path):
    out = eddy_run(
        tmp_path, "dam_break", "--frames", "3", "--resolution", "16",
        "--dump-fields", "3", "--fields", "cell_type,pressure,level_set,velocity,faces",
    )
    cells = vti_arrays(out / "fields_00003.vti")
    u = vti_arrays(out / "faces_u_00003.vti")["u"]
    sim = eddy.Simulation("dam_break", resolution=16)
    sim.step(3)
    nx, ny, nz = sim.dims
    for name in ["cell_type", "pressure", "level_set"]:
        a = sim.field(name)
        assert a.shape == (nz, ny, nx) and a.dtype == np.float32
        np.testing.assert_array_equal(a.ravel(), cells[name], err_msg=name)
    assert sim.field("u").shape == (nz, ny, nx + 1)
    np.testing.assert_array_equal(sim.field("u").ravel(), u)
    v = sim.velocity()
    assert v.shape == (nz, ny, nx, 3)
    np.testing.assert_array_equal(v.ravel(), cells["velocity"])
    pos, vel = sim.particles()
    assert pos.shape == vel.shape and pos.shape[1] == 3 and pos.shape[0] > 1000


def test_state_restores_bit_for_bit(tmp_path):
    a = eddy.Simulation("dam_break", resolution=16)
    a.step(2)
    state = a.state()
    a.step(3)
    b = eddy.Simulation("dam_break", resolution=16)
    b.restore(state)
    assert b.frame == 2
    b.step(3)
    assert b.stats_rows() == a.stats_rows()[2:]
    # The bytes are a checkpoint file `eddy run --resume` reads.
    path = tmp_path / "checkpoint_00002.eddy"
    path.write_bytes(state)
    c = eddy.Simulation("dam_break", resolution=16)
    c.restore(path)
    c.step(1)
    assert c.stats_rows() == a.stats_rows()[2:3]


def test_a_scene_dict_round_trips_and_edits_apply():
    d = eddy.scene("dam_break")
    assert d["kind"] == "liquid"
    sim = eddy.Simulation(d, resolution=16)
    plain = eddy.Simulation("dam_break", resolution=16)
    sim.step(2)
    plain.step(2)
    assert sim.stats_rows() == plain.stats_rows()
    d["gravity"] = [0.0, 0.0, 0.0]
    still = eddy.Simulation(d, resolution=16)
    still.step(2)
    assert still.stats()["max_speed"][-1] < 1e-6


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(eddy.SceneError, match="no scene shipped with eddy has that name"):
        eddy.Simulation("no_such_scene")
    d = eddy.scene("dam_break")
    d["contact_angle"] = 3.0
    with pytest.raises(eddy.SceneError, match="unknown field `contact_angle`"):
        eddy.Simulation(d)
    d = eddy.scene("dam_break")
    d["cfl"] = -1.0
    with pytest.raises(eddy.SceneError, match="cfl"):
        eddy.Simulation(d)
    with pytest.raises(ValueError, match="resolution"):
        eddy.Simulation("dam_break", resolution=1)
    with pytest.raises(ValueError, match="unknown preconditioner"):
        eddy.Simulation("dam_break", preconditioner="amg")
    with pytest.raises(ValueError, match="a shipped scene's name"):
        eddy.Simulation(42)
    sim = eddy.Simulation("dam_break", resolution=16)
    with pytest.raises(KeyError, match="one of"):
        sim.field("no_such_field")
    with pytest.raises(eddy.SimulationError, match="step a frame first"):
        sim.freeze()
    with pytest.raises(ValueError, match="at least 1"):
        sim.step(0)
    other = eddy.Simulation("dam_break", resolution=20)
    with pytest.raises(eddy.SimulationError, match="another scene"):
        sim.restore(other.state())
    with pytest.raises(eddy.SimulationError):
        sim.restore(b"not a checkpoint")
    sim.close()
    with pytest.raises(eddy.SimulationError, match="closed"):
        sim.step()


def rss_mb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_dropped_simulation_gives_its_memory_back():
    sizes = []
    for _ in range(6):
        sim = eddy.Simulation("dam_break", resolution=40)
        sim.step(1)
        del sim
        sizes.append(rss_mb())
    # The first rounds warm the adapter's caches; after them the process must not grow
    # by anything like a simulation's worth (40x40x20 liquid: tens of MB) per round.
    # (Measured here: about 3 MB a round dropped, 80 MB a round kept alive.)
    assert sizes[-1] - sizes[1] < 40, f"RSS after each round (MB): {sizes}"


def test_the_solver_lab_from_python():
    sim = eddy.Simulation("dam_break", resolution=16)
    sim.step(2)
    system = sim.freeze()
    assert system.dims == sim.dims
    assert system.a.shape == (8, 16, 16, 4)
    rows = eddy.race(system, ["ip", "mg"])
    by_name = {r["preconditioner"]: r for r in rows}
    assert set(by_name) == {"ip", "mg"}
    assert all(r["status"] == "Converged" for r in rows)
    lab = eddy.SolverLab(system, "ip")
    assert lab.iteration == 0
    lab.step()
    assert lab.iteration == 1
    lab.run()
    assert lab.done and lab.status == "Converged"
    # The stepped solve takes the race's iterations (the same kernels).
    assert lab.iteration == by_name["ip"]["iterations"]
    v = lab.vectors()
    assert set(v) == {"p", "r", "z", "d", "q"}
    assert system.true_residual(v["p"].ravel().tolist()) < 10 * lab.residuals()[-1] + 1e-6
    saved = Path(os.environ.get("TMPDIR", "/tmp")) / f"eddy-py-system-{os.getpid()}"
    system.save(saved)
    again = eddy.FrozenSystem.load(saved)
    np.testing.assert_array_equal(again.b, system.b)


def test_the_example_notebook_runs(tmp_path, monkeypatch):
    """Runs the notebook's code cells in order, as Jupyter would (plots to files)."""
    import matplotlib

    matplotlib.use("Agg")
    nb = json.loads((ROOT / "examples" / "python" / "dam_break.ipynb").read_text())
    monkeypatch.chdir(tmp_path)
    env = {"__name__": "__main__"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), "dam_break.ipynb", "exec"), env)
    assert (tmp_path / "pressure_slice.png").exists()
    assert (tmp_path / "race.png").exists()


def test_the_multigrid_levels_from_the_lab():
    sim = eddy.Simulation("dam_break", resolution=16)
    sim.step(1)
    lab = eddy.SolverLab(sim.freeze(), "mg")
    lab.step()
    levels = lab.mg_levels()
    assert len(levels) >= 2
    assert levels[0]["dims"] == sim.dims
    nx, ny, nz = levels[0]["dims"]
    assert levels[0]["rhs"].shape == (nz, ny, nx)
    # Each level is coarser than the one before; the coarsest keeps no residual.
    for fine, coarse in zip(levels, levels[1:]):
        assert coarse["rhs"].size < fine["rhs"].size
    assert levels[-1]["residual"].size == 0


def test_writes_set_particle_velocities_and_smoke_fields():
    # A free block of water (no gravity, away from every wall).
    d = eddy.scene("dam_break")
    d["gravity"] = [0.0, 0.0, 0.0]
    d["fluid"] = [{"Box": {"min": [0.25, 0.25, 0.125], "max": [0.5, 0.5, 0.375],
                           "velocity": [0.0, 0.0, 0.0]}}]
    sim = eddy.Simulation(d, resolution=16)
    sim.step(1)
    pos, vel = sim.particles()
    new = np.zeros_like(vel)
    new[:, 0] = 0.5
    sim.set_particle_velocities(new)
    np.testing.assert_array_equal(sim.particles()[1], new)
    sim.step(1)
    pos2, vel2 = sim.particles()
    # The free block drifts right as a whole at the speed it was given.
    assert abs(vel2[:, 0].mean() - 0.5) < 0.1, vel2[:, 0].mean()
    assert pos2[:, 0].mean() > pos[:, 0].mean() + 0.5 * 0.5 / 60
    with pytest.raises(ValueError, match="shaped"):
        sim.set_particle_velocities(new[:10])
    with pytest.raises(ValueError, match="set_particle_velocities"):
        sim.set_faces(np.zeros((1, 2, 2), np.float32), np.zeros((1, 2, 2), np.float32))

    smoke = eddy.Simulation("smoke_plume", resolution=48)
    smoke.step(2)
    u, v, w = smoke.faces()
    assert w.size == 0 and u.shape[0] == 1
    smoke.set_faces(np.zeros_like(u), np.full_like(v, 0.25))
    u2, v2, _ = smoke.faces()
    assert not u2.any() and (v2 == 0.25).all()
    nx, ny, _ = smoke.dims
    rgb = np.zeros((1, ny, nx, 3), np.float32)
    rgb[0, ny // 2, nx // 2] = [1.0, 0.0, 0.0]
    smoke.set_dye(rgb=rgb, temperature=np.zeros((1, ny, nx), np.float32))
    assert smoke.field("temperature").max() == 0.0
    assert smoke.field("dye").max() > 0.0
    smoke.step(1)
    with pytest.raises(ValueError, match="particles"):
        smoke.set_particle_velocities(np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match="shaped"):
        smoke.set_dye(rgb=rgb[:, :2])


def test_probes_from_python():
    d = eddy.scene("dam_break")
    # Settings at their defaults are left out of the dict; any may be added by name.
    assert "probes" not in d
    d["probes"] = [{"Point": {"name": "floor", "at": [0.1, 0.05, 0.25]}}]
    sim = eddy.Simulation(d, resolution=16)
    sim.step(3)
    p = sim.probes()
    units = sim.probe_units()
    assert units["floor.p"] == "Pa" and units["floor.u"] == "m/s"
    # A row per substep (the default probe_every), frames 1 to 3.
    assert len(p["time_s"]) == int(sim.stats()["substeps"].sum())
    assert p["frame"][-1] == 3
    # Near the floor of the collapsing column: about hydrostatic, rho g (0.6 - 0.05) m.
    assert 0.3 * 1000 * 9.81 * 0.55 < p["floor.p"][-1] < 1.1 * 1000 * 9.81 * 0.55


def test_write_vdb_writes_what_eddy_run_writes(tmp_path):
    out = eddy_run(tmp_path, "dam_break", "--frames", "2", "--resolution", "16", "--dump-vdb", "2")
    sim = eddy.Simulation("dam_break", resolution=16)
    sim.step(2)
    path = tmp_path / "mine.vdb"
    size = sim.write_vdb(path)
    assert size == path.stat().st_size
    # The same file, byte for byte.
    assert path.read_bytes() == (out / "volume_00002.vdb").read_bytes()
    with pytest.raises(eddy.SimulationError, match="cannot write"):
        sim.write_vdb(tmp_path / "no_such_folder" / "x.vdb")
