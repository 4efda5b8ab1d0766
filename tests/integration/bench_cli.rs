//! `eddy bench` at tiny sizes: every column for every preconditioner and problem, and
//! iteration counts equal to the solver's own on the same system.

use crate::common;

use eddy::scene::{PreconditionerKind, StandardProblem};
use eddy::sim::{Simulation, Stage};
use std::process::Command;

#[test]
fn bench_json_has_every_column_and_matches_the_solver() {
    let json = std::env::temp_dir().join(format!("eddy-bench-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "bench", "--sizes", "8,12", "--solves", "1", "--steps", "1", "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("ms/iter") && table.contains("mic0"),
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["copy_gb_per_s"].as_f64().unwrap() > 0.0);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * PreconditionerKind::ALL.len());
    let columns = [
        "problem",
        "size",
        "cells",
        "fluid_cells",
        "particles",
        "preconditioner",
        "iterations",
        "status",
        "residual",
        "true_residual",
        "f32_floor",
        "dispatches_per_iteration",
        "ms_per_iteration",
        "ms_per_solve",
        "ms_per_step",
        "steps_per_s",
        "bytes_per_iteration",
        "pcg_gb_per_s",
        "bandwidth_fraction",
        "stage_ms",
    ];
    for problem in StandardProblem::ALL {
        for size in [8u64, 12] {
            for kind in PreconditionerKind::ALL {
                let row = rows
                    .iter()
                    .find(|r| {
                        r["problem"] == problem.name()
                            && r["size"] == size
                            && r["preconditioner"] == kind.name()
                    })
                    .unwrap_or_else(|| panic!("no row for {} {size} {kind}", problem.name()));
                for c in columns {
                    assert!(!row[c].is_null(), "{c} missing in {row}");
                }
                assert_eq!(row["status"], "converged");
                assert!(row["iterations"].as_u64().unwrap() > 0);
                for c in [
                    "ms_per_iteration",
                    "ms_per_solve",
                    "ms_per_step",
                    "steps_per_s",
                    "bandwidth_fraction",
                ] {
                    assert!(row[c].as_f64().unwrap() > 0.0, "{c} in {row}");
                }
                assert_eq!(row["cells"].as_u64().unwrap(), size * size * size);
            }
        }
    }
    // The solver itself, on the same problem and state, takes the same iterations.
    for problem in StandardProblem::ALL {
        let mut scene = problem.scene(12);
        scene.pressure.tolerance = 1e-6;
        scene.pressure.max_iterations = 4000;
        let mut sim = Simulation::new(common::gpu(), &scene).unwrap();
        for _ in 0..problem.settle_frames() {
            sim.step_frame().unwrap();
        }
        sim.substep(scene.frame_dt, Stage::Boundary).unwrap();
        for kind in PreconditionerKind::ALL {
            let mut s = scene.clone();
            s.pressure.preconditioner = kind;
            sim.apply_live_settings(&s).unwrap();
            let it = sim.solve_pressure_again().unwrap().iterations as u64;
            let row = rows
                .iter()
                .find(|r| {
                    r["problem"] == problem.name()
                        && r["size"] == 12
                        && r["preconditioner"] == kind.name()
                })
                .unwrap();
            assert_eq!(
                row["iterations"].as_u64().unwrap(),
                it,
                "{} {kind}",
                problem.name()
            );
        }
    }
}

/// `floating_bodies_alone` solves `floating_bodies`' own system with the bodies' term left
/// out: the same cells and particles, A alone. The deflated strong solve then takes its
/// iterations within one, the undeflated one at least three more; the row has no full steps
/// (JSON null, "-" in the table).
#[test]
fn bench_measures_the_bodies_term_against_a_alone_on_the_same_system() {
    let json = std::env::temp_dir().join(format!("eddy-bench-alone-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "bench",
            "--sizes",
            "16",
            "--problems",
            "floating_bodies_alone,floating_bodies_deflated,floating_bodies",
            "--preconditioners",
            "mg",
            "--solves",
            "1",
            "--steps",
            "1",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let rows = v["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["problem"] == name)
            .unwrap_or_else(|| panic!("no {name} row in {rows:?}"))
    };
    let (alone, deflated, plain) = (
        row("floating_bodies_alone"),
        row("floating_bodies_deflated"),
        row("floating_bodies"),
    );
    for r in [alone, deflated, plain] {
        assert_eq!(r["status"], "converged", "{r}");
        assert!(r["ms_per_solve"].as_f64().unwrap() > 0.0, "{r}");
    }
    // The same system: the same cells and particles.
    for c in ["fluid_cells", "particles"] {
        assert_eq!(alone[c], plain[c], "{c}");
    }
    assert!(
        alone["ms_per_step"].is_null() && alone["steps_per_s"].is_null(),
        "{alone}"
    );
    let it = |r: &serde_json::Value| r["iterations"].as_u64().unwrap();
    let its = (it(alone), it(deflated), it(plain));
    assert!(
        its.0 > 0 && its.1 <= its.0 + 1 && its.2 >= its.0 + 3,
        "A alone, deflated, undeflated: {its:?}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let line = table
        .lines()
        .find(|l| l.starts_with("floating_bodies_alone"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains(" - "), "{line}");
}

#[test]
fn bench_rejects_bad_options() {
    for args in [
        vec!["bench", "--sizes", "2"],
        vec!["bench", "--preconditioners", "amg"],
        vec!["bench", "--problems", "tsunami"],
        vec!["bench", "--tolerance", "0"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Counts and tolerances that would run until killed (or spin to the iteration limit) are
/// refused at once, each with its bound named.
#[test]
fn bench_counts_and_tolerances_are_bounded() {
    for (args, expect) in [
        (
            vec!["bench", "--smoke", "--warmup", "4294967295"],
            "--warmup must be at most 100000",
        ),
        (
            vec!["bench", "--smoke", "--steps", "100001"],
            "--steps must be between 1 and 100000",
        ),
        (
            vec!["bench", "--solves", "1000000"],
            "--solves must be between 1 and 100000",
        ),
        (
            vec!["bench", "--tolerance", "1e-11"],
            "--tolerance must be in [1e-10, 1)",
        ),
        (
            vec!["bench", "--smoke", "--tolerance", "1e-12"],
            "--tolerance must be in [1e-10, 1)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

/// `--json` naming a FIFO (as it could name /dev/null or /dev/full) is refused before the
/// benchmark runs, and the FIFO is left as it was, not renamed over.
#[cfg(unix)]
#[test]
fn bench_json_never_replaces_a_special_file() {
    use std::os::unix::fs::FileTypeExt;
    let dir = std::env::temp_dir().join(format!("eddy-json-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("out.json");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "bench", "--sizes", "8", "--solves", "1", "--steps", "1", "--json",
        ])
        .arg(&fifo)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded: {err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn smoke_bench_json_has_every_column() {
    let json = std::env::temp_dir().join(format!("eddy-bench-smoke-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args([
            "bench",
            "--smoke",
            "--sizes",
            "16,24",
            "--preconditioners",
            "none,mic0",
            "--warmup",
            "3",
            "--steps",
            "2",
            "--viscosity",
            "0.001",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("steps/s") && table.contains("24x24"),
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        for c in [
            "size",
            "cells",
            "preconditioner",
            "advection",
            "pcg_iterations",
            "viscosity_iterations",
            "ms_per_step",
            "steps_per_s",
            "gpu_ms_per_step",
            "stage_ms",
        ] {
            assert!(!row[c].is_null(), "column {c} missing in {row}");
        }
        assert!(row["steps_per_s"].as_f64().unwrap() > 0.0);
        // The plume needs a pressure solve every step.
        assert!(row["pcg_iterations"].as_f64().unwrap() >= 1.0, "{row}");
        // And a viscosity solve.
        assert!(
            row["viscosity_iterations"].as_f64().unwrap() >= 1.0,
            "{row}"
        );
    }
    let _ = std::fs::remove_file(&json);
}

#[test]
fn smoke_bench_rejects_bad_sizes() {
    let out = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["bench", "--smoke", "--sizes", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));
}
