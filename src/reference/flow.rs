//! f64 reference of the liquid's inflow and outflow stage (src/sim/liquid/flow.wgsl),
//! written from the scene's description, not from the GPU's data structures: which
//! particles stay, in which order, which sub-cells of the kept-full emitters get a
//! particle and where, and the flux emitters' particles appended last.

use crate::scene::Scene;

/// One substep's input: the particles, the cell types after marking, the time, the
/// stage's substep counter and hash seed, the flux particles the host placed (position,
/// emitter), and the buffers' capacity.
pub struct FlowInput<'a> {
    pub pos: &'a [[f64; 3]],
    pub vel: &'a [[f64; 3]],
    pub solid: &'a dyn Fn(usize) -> bool,
    pub t: f64,
    pub substep: u32,
    pub seed: u32,
    pub incoming: &'a [([f64; 3], usize)],
    pub capacity: usize,
}

/// What the stage leaves: the particles, and how many it emitted and removed.
#[derive(Clone, Debug, Default)]
pub struct FlowOutput {
    pub pos: Vec<[f64; 3]>,
    pub vel: Vec<[f64; 3]>,
    pub emitted: usize,
    pub removed: usize,
    pub not_emitted: usize,
}

/// The GPU's integer hash (flow.wgsl `hash`).
pub fn hash(x: u32) -> u32 {
    let s = x.wrapping_mul(747796405).wrapping_add(2891336453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277803737);
    (w >> 22) ^ w
}

/// The fill's jitter in [0, 1) of sub-cell slot `slot` on `axis` (flow.wgsl `jitter`).
pub fn jitter(seed: u32, substep: u32, slot: u32, axis: u32) -> f64 {
    let h = hash(seed ^ hash(substep ^ hash(3u32.wrapping_mul(slot).wrapping_add(axis))));
    (h >> 8) as f64 / 16777216.0
}

fn stays(scene: &Scene, x: [f64; 3], t: f64) -> bool {
    if !x.iter().all(|v| v.is_finite()) {
        return false;
    }
    let h = scene.h();
    let n = scene.dims();
    for side in &scene.open_sides {
        let (a, far) = side.axis();
        let c = (x[a] / h).floor();
        let outer = if far {
            c >= n[a] as f64 - 1.0
        } else {
            c <= 0.0
        };
        if outer {
            return false;
        }
    }
    !scene
        .drains
        .iter()
        .any(|d| d.active(t) && d.shape.contains(x))
}

/// The flow stage on `inp`.
pub fn flow_step(scene: &Scene, inp: &FlowInput<'_>) -> FlowOutput {
    let h = scene.h();
    let n = scene.dims();
    let pa = (scene.particles_per_cell as f64).cbrt().round() as usize;
    let ppc = pa * pa * pa;
    // The kept-full emitters' cells in index order, each with the first emitter holding its
    // centre (static solids excluded, as the scene's seeding does).
    let mut cells: Vec<(usize, usize)> = Vec::new();
    for k in 0..n[2] as usize {
        for j in 0..n[1] as usize {
            for i in 0..n[0] as usize {
                let c = [
                    (i as f64 + 0.5) * h,
                    (j as f64 + 0.5) * h,
                    (k as f64 + 0.5) * h,
                ];
                if scene.solids.iter().any(|s| s.contains(c)) {
                    continue;
                }
                let owner = scene
                    .emitters
                    .iter()
                    .position(|e| e.flux.is_none() && e.shape.contains(c));
                if let Some(e) = owner {
                    cells.push((i + n[0] as usize * (j + n[1] as usize * k), e));
                }
            }
        }
    }
    let cell_of = |x: [f64; 3]| -> [usize; 3] {
        let mut c = [0; 3];
        for a in 0..3 {
            c[a] = ((x[a] / h).floor().max(0.0) as usize).min(n[a] as usize - 1);
        }
        c
    };
    let index = |c: [usize; 3]| c[0] + n[0] as usize * (c[1] + n[1] as usize * c[2]);
    let mut occupied = vec![false; cells.len() * ppc];
    let mut out = FlowOutput::default();
    for (x, v) in inp.pos.iter().zip(inp.vel) {
        if !stays(scene, *x, inp.t) {
            out.removed += 1;
            continue;
        }
        let c = cell_of(*x);
        if let Ok(slot) = cells.binary_search_by_key(&index(c), |&(cell, _)| cell) {
            let mut s = [0; 3];
            for a in 0..3 {
                s[a] = (((x[a] / h - c[a] as f64) * pa as f64).max(0.0) as usize).min(pa - 1);
            }
            occupied[slot * ppc + s[0] + pa * (s[1] + pa * s[2])] = true;
        }
        let mut v = *v;
        if let Some(e) = scene
            .emitters
            .iter()
            .find(|e| e.active(inp.t) && e.shape.contains(*x))
        {
            v = e.shape.velocity();
        }
        out.pos.push(*x);
        out.vel.push(v);
    }
    let kept = out.pos.len();
    let mut wanted = 0;
    for (slot, &(cell, e)) in cells.iter().enumerate() {
        let em = &scene.emitters[e];
        for sub in 0..ppc {
            let s = slot * ppc + sub;
            if !em.active(inp.t) || occupied[s] || (inp.solid)(cell) {
                continue;
            }
            wanted += 1;
            if out.pos.len() >= inp.capacity {
                continue;
            }
            let c = [
                cell % n[0] as usize,
                (cell / n[0] as usize) % n[1] as usize,
                cell / (n[0] as usize * n[1] as usize),
            ];
            let sc = [sub % pa, (sub / pa) % pa, sub / (pa * pa)];
            let mut x = [0.0; 3];
            for a in 0..3 {
                let u = jitter(inp.seed, inp.substep, s as u32, a as u32);
                x[a] = (c[a] as f64 + (sc[a] as f64 + 0.1 + 0.8 * u) / pa as f64) * h;
            }
            out.pos.push(x);
            out.vel.push(em.shape.velocity());
        }
    }
    for (x, e) in inp.incoming {
        wanted += 1;
        if out.pos.len() < inp.capacity {
            out.pos.push(*x);
            out.vel.push(scene.emitters[*e].shape.velocity());
        }
    }
    out.emitted = out.pos.len() - kept;
    out.not_emitted = kept + wanted - out.pos.len();
    out
}
