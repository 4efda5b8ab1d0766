//! probes.csv: the probes' time series (src/scene/probes.rs), a row per substep (or per
//! frame with `probe_every: frame`): the frame, the time, and one column per probe and
//! quantity. The units are in probes_units.csv beside it, one row per column.

use crate::scene::Scene;
use crate::sim::core::probes::ProbeRow;

/// The header row of `scene`'s probes.csv.
pub fn csv_header(scene: &Scene) -> String {
    let mut h = String::from("frame,time_s");
    for (name, _) in scene.probe_columns() {
        h.push(',');
        h.push_str(&name);
    }
    h
}

/// probes_units.csv: each column of probes.csv and its unit ("1" for a ratio).
pub fn units_csv(scene: &Scene) -> String {
    let mut s = String::from("column,unit\nframe,\ntime_s,s\n");
    for (name, unit) in scene.probe_columns() {
        s.push_str(&format!("{name},{unit}\n"));
    }
    s
}

/// probes.csv rows of frame `frame`.
pub fn csv_rows(frame: u64, rows: &[ProbeRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let mut line = format!("{frame},{:.9}", r.time);
            for v in &r.values {
                line.push_str(&format!(",{v:.6e}"));
            }
            line
        })
        .collect()
}
