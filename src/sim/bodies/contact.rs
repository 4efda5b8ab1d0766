//! Contacts between bodies and with the domain walls: detection (boxes and spheres; in a
//! slice rectangles and discs) and sequential impulses with restitution and Coulomb
//! friction, then a position projection that removes the penetration without adding
//! velocity (so a resting body stays at rest).
//!
//! Contacts are also found a little before the bodies touch (speculative contacts, within
//! the distance a slowly approaching body closes in one substep): such a contact only
//! keeps the gap from closing past zero, so a body pressed on the floor by more than its
//! weight (a box on the bottom of a pool has liquid above it and none under it) lands
//! softly every substep instead of falling through the slop and bouncing.
//!
//! Box-box contacts are vertex-face: each box's corners inside the other. That is every
//! contact of two rectangles in a slice; in 3D it misses edge-edge crossings (two boxes
//! meeting edge on edge without a corner inside either), which then resolve one substep
//! later, once a corner has entered.

use super::{BodySet, RigidBody, Solid};
use glam::DVec3;

/// One contact point. `normal` points from `b` (or the wall) into `a`: the direction an
/// impulse on `a` pushes it out.
#[derive(Clone, Copy, Debug)]
pub struct Contact {
    pub a: usize,
    pub b: Option<usize>,
    pub point: DVec3,
    pub normal: DVec3,
    /// Penetration depth, m (>= 0).
    pub depth: f64,
}

/// Impulse iterations per substep: enough for a box resting on four corners to converge.
const ITERATIONS: usize = 24;
/// Penetration left in place (m, as a fraction of the smallest body), so resting contacts
/// stay touching from substep to substep instead of separating and falling back.
const SLOP_FRACTION: f64 = 0.01;
/// Fraction of the remaining penetration removed per substep.
const PROJECTION: f64 = 0.8;

fn corners(b: &RigidBody, half: DVec3, slice: bool) -> Vec<DVec3> {
    let r = b.rotation();
    let zs: &[f64] = if slice { &[0.0] } else { &[-1.0, 1.0] };
    let mut out = Vec::with_capacity(8);
    for &sz in zs {
        for sy in [-1.0, 1.0] {
            for sx in [-1.0, 1.0] {
                let l = DVec3::new(sx * half.x, sy * half.y, sz * half.z);
                out.push(b.position + r * l);
            }
        }
    }
    out
}

/// Contacts of body `i` with the walls of the domain [0, domain], and the walls within
/// `margin` (m) of it (negative depth: the gap).
fn wall_contacts(set: &BodySet, i: usize, margin: f64, out: &mut Vec<Contact>) {
    let b = &set.bodies[i];
    let axes = if set.slice { 2 } else { 3 };
    let points: Vec<(DVec3, f64)> = match b.solid {
        Solid::Sphere { radius } => vec![(b.position, radius)],
        Solid::Box { half } => corners(b, half, set.slice)
            .into_iter()
            .map(|p| (p, 0.0))
            .collect(),
    };
    for (p, r) in points {
        for a in 0..axes {
            let mut e = DVec3::ZERO;
            e[a] = 1.0;
            let lo = r - p[a];
            if lo > -margin {
                out.push(Contact {
                    a: i,
                    b: None,
                    point: p - e * r,
                    normal: e,
                    depth: lo,
                });
            }
            let hi = p[a] + r - set.domain[a];
            if hi > -margin {
                out.push(Contact {
                    a: i,
                    b: None,
                    point: p + e * r,
                    normal: -e,
                    depth: hi,
                });
            }
        }
    }
}

/// Point `p` against box body `b`: Some((normal out of the box, depth)) when inside the
/// box grown by `margin` (a negative depth is the gap to the nearest face).
fn point_in_box(
    b: &RigidBody,
    half: DVec3,
    p: DVec3,
    slice: bool,
    margin: f64,
) -> Option<(DVec3, f64)> {
    let r = b.rotation();
    let l = r.transpose() * (p - b.position);
    let axes = if slice { 2 } else { 3 };
    let mut best: Option<(usize, f64)> = None;
    for a in 0..axes {
        let pen = half[a] - l[a].abs();
        if pen <= -margin {
            return None;
        }
        if best.is_none_or(|(_, d)| pen < d) {
            best = Some((a, pen));
        }
    }
    let (a, depth) = best?;
    let mut n = DVec3::ZERO;
    n[a] = if l[a] >= 0.0 { 1.0 } else { -1.0 };
    Some((r * n, depth))
}

/// A contact of a pair of bodies: `on_first` when it pushes the first body out of the
/// second (`normal` points into the first), else the second out of the first.
struct PairContact {
    on_first: bool,
    point: DVec3,
    normal: DVec3,
    depth: f64,
}

/// The contacts of two bodies, whichever of them can move, including the points within
/// `margin` (m) of touching.
fn pair_geometry(
    bi: &RigidBody,
    bj: &RigidBody,
    slice: bool,
    margin: f64,
    out: &mut Vec<PairContact>,
) {
    let flat = |mut v: DVec3| {
        if slice {
            v.z = 0.0;
        }
        v
    };
    match (bi.solid, bj.solid) {
        (Solid::Sphere { radius: ri }, Solid::Sphere { radius: rj }) => {
            let d = flat(bi.position - bj.position);
            let dist = d.length();
            if dist < ri + rj + margin && dist > 1e-12 {
                let n = d / dist;
                out.push(PairContact {
                    on_first: true,
                    point: bj.position + n * (rj - 0.5 * (ri + rj - dist)),
                    normal: n,
                    depth: ri + rj - dist,
                });
            }
        }
        (Solid::Box { half }, Solid::Sphere { radius }) => {
            out.extend(sphere_box(bj, radius, bi, half, slice, margin, false));
        }
        (Solid::Sphere { radius }, Solid::Box { half }) => {
            out.extend(sphere_box(bi, radius, bj, half, slice, margin, true));
        }
        (Solid::Box { half: hi }, Solid::Box { half: hj }) => {
            for (first, (inner, hin), (outer, hout)) in
                [(true, (bi, hi), (bj, hj)), (false, (bj, hj), (bi, hi))]
            {
                for p in corners(inner, hin, slice) {
                    if let Some((normal, depth)) = point_in_box(outer, hout, p, slice, margin) {
                        out.push(PairContact {
                            on_first: first,
                            point: p,
                            normal,
                            depth,
                        });
                    }
                }
            }
            out.extend(edge_contact(bi, hi, bj, hj, margin));
        }
    }
}

/// The contact of two boxes that touch edge on edge (two crossed bars: no corner of either
/// is inside the other, so the corner tests above find nothing): found by separating axes,
/// when the axis of least overlap is the cross product of an edge of each box. Its point
/// is midway between the two edges' closest points, its normal along that axis (into the
/// first box). A face axis that overlaps as little is preferred: the corners handle it.
fn edge_contact(
    a: &RigidBody,
    ha: DVec3,
    b: &RigidBody,
    hb: DVec3,
    margin: f64,
) -> Option<PairContact> {
    let pair = BoxPair::new(a, ha, b, hb);
    let face = pair
        .u
        .iter()
        .flatten()
        .map(|&n| pair.overlap(n))
        .fold(f64::INFINITY, f64::min);
    if face <= -margin {
        return None;
    }
    let mut best: Option<(f64, usize, usize, DVec3)> = None;
    for i in 0..3 {
        for j in 0..3 {
            let Some(n) = pair.edge_axis(i, j) else {
                continue;
            };
            let o = pair.overlap(n);
            if o <= -margin {
                return None;
            }
            if best.is_none_or(|(bo, ..)| o < bo) {
                best = Some((o, i, j, n));
            }
        }
    }
    let (depth, i, j, mut n) = best?;
    // Within round-off of a face axis, the face (and its corners) is the contact.
    if depth >= face - 1e-9 * (ha.length() + hb.length()) {
        return None;
    }
    if n.dot(pair.t) < 0.0 {
        n = -n;
    }
    let (ua, ub) = (pair.u[0], pair.u[1]);
    // The edge of each box parallel to its axis i (j) that lies farthest towards the other.
    let edge = |body: &RigidBody, u: &[DVec3; 3], h: DVec3, k: usize, toward: DVec3| {
        let mut mid = body.position;
        for m in (0..3).filter(|&m| m != k) {
            mid += u[m] * h[m] * u[m].dot(toward).signum();
        }
        (mid, u[k], h[k])
    };
    let (pa, da, la) = edge(a, &ua, ha, i, -n);
    let (pb, db, lb) = edge(b, &ub, hb, j, n);
    // Closest points of the two edges (segments mid +- dir * half length).
    let w = pa - pb;
    let (dd, e, f) = (da.dot(db), da.dot(w), db.dot(w));
    let den = 1.0 - dd * dd;
    let s = if den > 1e-12 { (dd * f - e) / den } else { 0.0 };
    let s = s.clamp(-la, la);
    let u = (f + dd * s).clamp(-lb, lb);
    let s = (dd * u - e).clamp(-la, la);
    let point = 0.5 * ((pa + da * s) + (pb + db * u));
    Some(PairContact {
        on_first: true,
        point,
        normal: n,
        depth,
    })
}

/// Contacts between bodies `i` and `j` (neither both immovable).
fn pair_contacts(set: &BodySet, i: usize, j: usize, margin: f64, out: &mut Vec<Contact>) {
    let mut found = Vec::new();
    pair_geometry(
        &set.bodies[i],
        &set.bodies[j],
        set.slice,
        margin,
        &mut found,
    );
    out.extend(found.into_iter().map(|c| {
        let (a, b) = if c.on_first { (i, j) } else { (j, i) };
        Contact {
            a,
            b: Some(b),
            point: c.point,
            normal: c.normal,
            depth: c.depth,
        }
    }));
}

/// Sphere `bs` (radius `r`) against box `bk`: one contact pushing the sphere out
/// (`on_first` says whether the sphere is the first body of the pair).
fn sphere_box(
    bs: &RigidBody,
    r: f64,
    bk: &RigidBody,
    half: DVec3,
    slice: bool,
    margin: f64,
    on_first: bool,
) -> Option<PairContact> {
    let rot = bk.rotation();
    let mut l = rot.transpose() * (bs.position - bk.position);
    if slice {
        l.z = 0.0;
    }
    let closest = l.clamp(-half, half);
    let d = l - closest;
    let dist = d.length();
    let (n_local, depth) = if dist > 1e-12 {
        if dist >= r + margin {
            return None;
        }
        (d / dist, r - dist)
    } else {
        // Centre inside the box: out through the nearest face.
        let axes = if slice { 2 } else { 3 };
        let mut best = (0, f64::INFINITY);
        for a in 0..axes {
            let pen = half[a] - l[a].abs();
            if pen < best.1 {
                best = (a, pen);
            }
        }
        let mut n = DVec3::ZERO;
        n[best.0] = if l[best.0] >= 0.0 { 1.0 } else { -1.0 };
        (n, best.1 + r)
    };
    Some(PairContact {
        on_first,
        point: bk.position + rot * closest,
        normal: rot * n_local,
        depth,
    })
}

/// Every contact of the set at the bodies' current positions: with the walls, with each
/// other, and with the scene's static solids (as walls: immovable and at rest).
pub fn find_contacts(set: &BodySet) -> Vec<Contact> {
    find_contacts_within(set, &vec![0.0; set.bodies.len()])
}

/// [`find_contacts`], plus the speculative contacts: a pair closer than the sum of the
/// bodies' `margins` (m; a wall or a static solid counts as zero) is a contact with a
/// negative depth, the gap.
pub fn find_contacts_within(set: &BodySet, margins: &[f64]) -> Vec<Contact> {
    let mut out = Vec::new();
    let n = set.bodies.len();
    for i in 0..n {
        if set.bodies[i].is_dynamic() {
            wall_contacts(set, i, margins[i], &mut out);
        }
        for j in i + 1..n {
            if !set.bodies[i].is_dynamic() && !set.bodies[j].is_dynamic() {
                continue;
            }
            let margin = margins[i] + margins[j];
            if near(&set.bodies[i], &set.bodies[j], margin) {
                pair_contacts(set, i, j, margin, &mut out);
            }
        }
    }
    if !set.obstacles.is_empty() {
        obstacle_contacts(set, margins, &mut out);
    }
    out
}

/// What a body overlaps: another body (by index) or a static solid (by its index in the
/// scene's `solids`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    Body(usize),
    Solid(usize),
}

/// Every pair with a dynamic body that overlaps deeper than `tolerance` m (a body with a
/// later body, or with a static solid), with the depth: a scene must not start with one
/// (the contacts would throw the bodies apart). Walls do not count (a body across a wall
/// is pushed back in by the contacts).
pub fn overlaps(set: &BodySet, tolerance: f64) -> Vec<(usize, Overlap, f64)> {
    let mut out = Vec::new();
    let deepest =
        |a: &RigidBody, b: &RigidBody| overlap_depth(a, b, set.slice).filter(|d| *d > tolerance);
    for (i, a) in set.bodies.iter().enumerate() {
        for (j, b) in set.bodies.iter().enumerate().skip(i + 1) {
            if !a.is_dynamic() && !b.is_dynamic() {
                continue;
            }
            if let Some(d) = deepest(a, b) {
                out.push((i, Overlap::Body(j), d));
            }
        }
        if !a.is_dynamic() {
            continue;
        }
        for (k, o) in set.obstacles.iter().enumerate() {
            if let Some(d) = deepest(a, o) {
                out.push((i, Overlap::Solid(k), d));
            }
        }
    }
    out
}

/// How deep two bodies overlap (m; the least translation that separates them), or None
/// when they do not. Exact for every pair of shapes: separating axes for two boxes, the
/// nearest point of the box for a sphere. In a slice a sphere is a cylinder across it.
fn overlap_depth(a: &RigidBody, b: &RigidBody, slice: bool) -> Option<f64> {
    let flat = |v: DVec3| if slice { DVec3::new(v.x, v.y, 0.0) } else { v };
    let d = match (a.solid, b.solid) {
        (Solid::Sphere { radius: ra }, Solid::Sphere { radius: rb }) => {
            ra + rb - flat(b.position - a.position).length()
        }
        (Solid::Box { half }, Solid::Sphere { radius }) => {
            sphere_box_depth(b.position, radius, a, half, slice)
        }
        (Solid::Sphere { radius }, Solid::Box { half }) => {
            sphere_box_depth(a.position, radius, b, half, slice)
        }
        (Solid::Box { half: ha }, Solid::Box { half: hb }) => {
            let s = BoxPair::new(a, ha, b, hb);
            let s = &s;
            let edges = (0..3).flat_map(|i| (0..3).filter_map(move |j| s.edge_axis(i, j)));
            s.u.iter()
                .flatten()
                .copied()
                .chain(edges)
                .map(|n| s.overlap(n))
                .fold(f64::INFINITY, f64::min)
        }
    };
    (d > 0.0).then_some(d)
}

/// Two boxes for the separating-axis test: their axes, half extents, and the offset of the
/// first's centre from the second's.
struct BoxPair {
    u: [[DVec3; 3]; 2],
    h: [DVec3; 2],
    t: DVec3,
}

impl BoxPair {
    fn new(a: &RigidBody, ha: DVec3, b: &RigidBody, hb: DVec3) -> Self {
        let (ra, rb) = (a.rotation(), b.rotation());
        Self {
            u: [
                [ra.x_axis, ra.y_axis, ra.z_axis],
                [rb.x_axis, rb.y_axis, rb.z_axis],
            ],
            h: [ha, hb],
            t: a.position - b.position,
        }
    }

    /// How far the two boxes overlap along unit axis `n` (negative: the gap).
    fn overlap(&self, n: DVec3) -> f64 {
        let extent =
            |u: &[DVec3; 3], h: DVec3| (0..3).map(|k| h[k] * u[k].dot(n).abs()).sum::<f64>();
        extent(&self.u[0], self.h[0]) + extent(&self.u[1], self.h[1]) - self.t.dot(n).abs()
    }

    /// The unit axis across edge `i` of the first box and edge `j` of the second, unless
    /// they are parallel (then the face axes already test it).
    fn edge_axis(&self, i: usize, j: usize) -> Option<DVec3> {
        let c = self.u[0][i].cross(self.u[1][j]);
        (c.length_squared() > 1e-12).then(|| c.normalize())
    }
}

/// Overlap of a sphere (centre `c`, `radius`) with box body `b` of half extents `half`.
fn sphere_box_depth(c: DVec3, radius: f64, b: &RigidBody, half: DVec3, slice: bool) -> f64 {
    let mut local = b.orientation.inverse() * (c - b.position);
    let mut half = half;
    if slice {
        // The cylinder spans the slice as the box's prism does: only x and y count.
        local.z = 0.0;
        half.z = f64::INFINITY;
    }
    let inside = (0..3).all(|k| local[k].abs() <= half[k]);
    if inside {
        let to_face = (0..3)
            .map(|k| half[k] - local[k].abs())
            .fold(f64::INFINITY, f64::min);
        radius + to_face
    } else {
        let nearest = local.clamp(-half, half);
        radius - (local - nearest).length()
    }
}

/// Whether the bounding spheres of two bodies, grown by `margin`, overlap (most pairs are
/// far apart).
fn near(a: &RigidBody, b: &RigidBody, margin: f64) -> bool {
    (a.position - b.position).length() <= a.aabb_half().length() + b.aabb_half().length() + margin
}

/// Contacts of the dynamic bodies with the static solids, kept as wall contacts of the
/// body (the solid is immovable and at rest).
fn obstacle_contacts(set: &BodySet, margins: &[f64], out: &mut Vec<Contact>) {
    let mut found = Vec::new();
    for (i, b) in set
        .bodies
        .iter()
        .enumerate()
        .filter(|(_, b)| b.is_dynamic())
    {
        for o in set.obstacles.iter().filter(|o| near(b, o, margins[i])) {
            found.clear();
            pair_geometry(b, o, set.slice, margins[i], &mut found);
            out.extend(found.iter().map(|c| Contact {
                a: i,
                b: None,
                point: c.point,
                // A corner of the solid inside the body pushes the body the other way.
                normal: if c.on_first { c.normal } else { -c.normal },
                depth: c.depth,
            }));
        }
    }
}

/// Relative velocity of `a` with respect to `b` at the contact point.
fn relative_velocity(set: &BodySet, c: &Contact) -> DVec3 {
    let va = set.bodies[c.a].point_velocity(c.point);
    let vb =
        c.b.map_or(DVec3::ZERO, |b| set.bodies[b].point_velocity(c.point));
    va - vb
}

/// Applies impulse `j` to `a` at the contact point and -j to `b`.
fn apply(set: &mut BodySet, c: &Contact, j: DVec3) {
    let slice = set.slice;
    let mut push = |i: usize, j: DVec3| {
        let b = &mut set.bodies[i];
        if !b.is_dynamic() {
            return;
        }
        b.momentum += j;
        b.angular_momentum += (c.point - b.position).cross(j);
        if slice {
            b.momentum.z = 0.0;
            b.angular_momentum.x = 0.0;
            b.angular_momentum.y = 0.0;
        }
    };
    push(c.a, j);
    if let Some(b) = c.b {
        push(b, -j);
    }
}

/// 1 / (effective mass) of the contact along unit direction `d`.
fn inverse_effective_mass(set: &BodySet, c: &Contact, d: DVec3) -> f64 {
    let term = |i: usize| {
        let b = &set.bodies[i];
        let r = c.point - b.position;
        let rd = r.cross(d);
        b.inverse_mass() + (b.inverse_inertia() * rd).cross(r).dot(d)
    };
    term(c.a) + c.b.map_or(0.0, term)
}

/// Resolves the contacts of one substep of `dt`: impulses on the velocities, then the
/// position projection. `rest_speeds[i]` (m/s) is the approach speed below which body `i`
/// counts as resting on what it touches (no restitution; see [`rest_speed`]).
pub fn solve(set: &mut BodySet, contacts: &[Contact], dt: f64, rest_speeds: &[f64]) {
    if contacts.is_empty() {
        return;
    }
    // Targets of the normal relative velocity: a bounce for a fast approach, zero for a
    // resting contact, and for a speculative one (depth < 0) no faster than closes the gap
    // in this substep. A fast approach to a gap is left to the next substep, where it
    // bounces with its restitution.
    let targets: Vec<Option<(f64, f64)>> = contacts
        .iter()
        .map(|c| {
            let ba = &set.bodies[c.a];
            let (e, mu, rest) = match c.b {
                None => (ba.restitution, ba.friction, rest_speeds[c.a]),
                Some(b) => {
                    let bb = &set.bodies[b];
                    (
                        0.5 * (ba.restitution + bb.restitution),
                        (ba.friction * bb.friction).sqrt(),
                        rest_speeds[c.a].max(rest_speeds[b]),
                    )
                }
            };
            let vn = relative_velocity(set, c).dot(c.normal);
            if c.depth < 0.0 {
                return (vn >= -rest).then_some((c.depth / dt, mu));
            }
            let target = if vn < -rest { -e * vn } else { 0.0 };
            Some((target, mu))
        })
        .collect();
    let mut normal_acc = vec![0.0f64; contacts.len()];
    let mut friction_acc = vec![DVec3::ZERO; contacts.len()];
    for _ in 0..ITERATIONS {
        for (k, c) in contacts.iter().enumerate() {
            let Some((target, mu)) = targets[k] else {
                continue;
            };
            let k_n = inverse_effective_mass(set, c, c.normal);
            if k_n <= 0.0 {
                continue;
            }
            let vn = relative_velocity(set, c).dot(c.normal);
            let dj = (target - vn) / k_n;
            let new = (normal_acc[k] + dj).max(0.0);
            let applied = new - normal_acc[k];
            normal_acc[k] = new;
            apply(set, c, c.normal * applied);
            // Coulomb friction: the tangential impulse opposes sliding, bounded by mu times
            // the normal impulse so far.
            let v = relative_velocity(set, c);
            let vt = v - c.normal * v.dot(c.normal);
            let speed = vt.length();
            if speed > 1e-12 {
                let t = vt / speed;
                let k_t = inverse_effective_mass(set, c, t);
                let mut acc = friction_acc[k] - t * (speed / k_t);
                let limit = mu * normal_acc[k];
                if acc.length() > limit {
                    acc *= limit / acc.length();
                }
                let dj = acc - friction_acc[k];
                friction_acc[k] = acc;
                apply(set, c, dj);
            }
        }
    }
    project(set, contacts);
}

/// The approach speed (m/s) below which a body touching something counts as resting on it:
/// what gravity, or the forces of this substep if larger (a box on the bottom of a pool is
/// pressed down by the liquid above it), add in two substeps. A resting body's
/// micro-collisions then end at rest instead of hopping.
pub fn rest_speed(gravity: f64, gained: f64, dt: f64) -> f64 {
    2.0 * (gravity * dt).max(gained) + 1e-6
}

/// Moves the bodies apart along the contact normals, split by inverse mass, leaving a
/// small slop. The velocities are untouched, so the projection adds no energy.
fn project(set: &mut BodySet, contacts: &[Contact]) {
    let mut moved = vec![DVec3::ZERO; set.bodies.len()];
    for c in contacts {
        let size = |b: &RigidBody| match b.solid {
            Solid::Sphere { radius } => radius,
            Solid::Box { half } => {
                half.x
                    .min(half.y)
                    .min(if set.slice { f64::INFINITY } else { half.z })
            }
        };
        let mut slop = size(&set.bodies[c.a]);
        if let Some(b) = c.b {
            slop = slop.min(size(&set.bodies[b]));
        }
        slop *= SLOP_FRACTION;
        let already = moved[c.a] - c.b.map_or(DVec3::ZERO, |b| moved[b]);
        let depth = c.depth - already.dot(c.normal);
        if depth <= slop {
            continue;
        }
        let ia = set.bodies[c.a].inverse_mass();
        let ib = c.b.map_or(0.0, |b| set.bodies[b].inverse_mass());
        if ia + ib <= 0.0 {
            continue;
        }
        let corr = PROJECTION * (depth - slop) / (ia + ib);
        moved[c.a] += c.normal * corr * ia;
        if let Some(b) = c.b {
            moved[b] -= c.normal * corr * ib;
        }
    }
    for (b, d) in set.bodies.iter_mut().zip(moved) {
        let mut d = d;
        if set.slice {
            d.z = 0.0;
        }
        b.position += d;
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::{find_contacts, Contact};
    use crate::scene::{BodyMotion, BodyShape, BodySpec, Scene};

    fn body(shape: BodyShape, center: (f64, f64, f64), e: f64) -> BodySpec {
        BodySpec {
            shape,
            center,
            density: 700.0,
            velocity: (0.0, 0.0, 0.0),
            angular_velocity: (0.0, 0.0, 0.0),
            rotation_deg: (0.0, 0.0, 0.0),
            restitution: e,
            friction: 0.5,
            motion: BodyMotion::Dynamic,
        }
    }

    /// Bodies alone, with no fluid around them.
    fn set(bodies: Vec<BodySpec>, gravity: f64) -> BodySet {
        let mut s = BodySet::from_scene(&Scene {
            gravity: (0.0, -gravity, 0.0),
            bodies,
            ..Default::default()
        })
        .unwrap();
        s.added_mass = 0.0;
        // Rigid dynamics alone: the forces all apply in `step`.
        s.scheme = crate::scene::CouplingScheme::Weak;
        s
    }

    /// Two cubes turned 45 degrees about different axes, pressed edge on edge (A's edge
    /// along z against B's edge along y) 0.01 m deep: no corner of either is inside the
    /// other, and the contact is the edges' crossing, pushing along x.
    fn crossed_cubes(depth: f64) -> BodySet {
        let half = 0.1;
        let reach = half * 2f64.sqrt();
        let mut a = body(
            BodyShape::Box {
                half_extents: (half, half, half),
            },
            (0.4, 0.5, 0.5),
            0.0,
        );
        a.rotation_deg = (0.0, 0.0, 45.0);
        let mut b = body(
            BodyShape::Box {
                half_extents: (half, half, half),
            },
            (0.4 + 2.0 * reach - depth, 0.5, 0.5),
            0.0,
        );
        b.rotation_deg = (0.0, 45.0, 0.0);
        set(vec![a, b], 0.0)
    }

    #[test]
    fn crossed_edges_make_a_contact_where_they_cross() {
        let s = crossed_cubes(0.01);
        let c = find_contacts(&s);
        let pair: Vec<&Contact> = c.iter().filter(|c| c.b.is_some()).collect();
        assert_eq!(pair.len(), 1, "{c:?}");
        let c = pair[0];
        assert!((c.depth - 0.01).abs() < 1e-9, "depth {}", c.depth);
        // The normal pushes the first body of the pair away from the second, along x.
        let first = &s.bodies[c.a];
        let second = &s.bodies[c.b.unwrap()];
        assert!(c.normal.x.abs() > 1.0 - 1e-9, "normal {}", c.normal);
        assert!(c.normal.dot(first.position - second.position) > 0.0);
        let expect = DVec3::new(0.4 + 0.1 * 2f64.sqrt() - 0.005, 0.5, 0.5);
        assert!((c.point - expect).length() < 1e-9, "point {}", c.point);
        // Apart by a hair: no contact.
        assert!(find_contacts(&crossed_cubes(-1e-4))
            .iter()
            .all(|c| c.b.is_none()));
    }

    #[test]
    fn crossed_edges_are_pushed_apart() {
        // The first cube driven into the second at 1 m/s for 0.05 s: without the edge
        // contact it would pass 0.05 m further in; with it the two end at most the contact
        // slop (1% of the smaller body, 2 mm) into each other, the second pushed along.
        let mut s = crossed_cubes(0.01);
        s.bodies[0].momentum = DVec3::X * s.bodies[0].mass;
        for _ in 0..50 {
            s.step(1e-3);
        }
        let (a, b) = (&s.bodies[0], &s.bodies[1]);
        let depth = 0.2 * 2f64.sqrt() - (b.position.x - a.position.x);
        assert!(depth <= 0.002 + 1e-9, "still {depth:.4} m into each other");
        assert!(b.velocity().x > 0.1, "the push reached the second cube");
    }

    /// Drops a body on the floor; returns (impact speed, rebound speed).
    fn bounce(shape: BodyShape, e: f64) -> (f64, f64) {
        let mut s = set(vec![body(shape, (0.5, 0.6, 0.5), e)], 9.81);
        let dt = 1e-3;
        let mut impact = 0.0f64;
        for _ in 0..2000 {
            let before = s.bodies[0].velocity().y;
            s.step(dt);
            let after = s.bodies[0].velocity().y;
            if before < 0.0 && after > 0.0 {
                impact = -before;
                // The rebound speed as it leaves: one substep of gravity after the impulse.
                return (impact, after + 9.81 * dt);
            }
        }
        (impact, 0.0)
    }

    #[test]
    fn restitution_sets_the_rebound_speed() {
        for e in [0.2, 0.5, 0.8] {
            for shape in [
                BodyShape::Sphere { radius: 0.1 },
                BodyShape::Box {
                    half_extents: (0.1, 0.05, 0.08),
                },
            ] {
                let (vin, vout) = bounce(shape.clone(), e);
                assert!(vin > 2.0, "{shape:?} never hit the floor");
                let ratio = vout / vin;
                assert!(
                    (ratio / e - 1.0).abs() < 0.1,
                    "{shape:?} e {e}: out {vout} / in {vin} = {ratio}"
                );
            }
        }
    }

    #[test]
    fn colliding_bodies_conserve_momentum() {
        for (sa, sb) in [
            (
                BodyShape::Sphere { radius: 0.08 },
                BodyShape::Sphere { radius: 0.06 },
            ),
            (
                BodyShape::Box {
                    half_extents: (0.08, 0.05, 0.05),
                },
                BodyShape::Sphere { radius: 0.06 },
            ),
            (
                BodyShape::Box {
                    half_extents: (0.08, 0.05, 0.05),
                },
                BodyShape::Box {
                    half_extents: (0.05, 0.07, 0.06),
                },
            ),
        ] {
            let mut a = body(sa.clone(), (0.3, 0.5, 0.5), 0.6);
            a.velocity = (1.5, 0.1, 0.0);
            let mut b = body(sb.clone(), (0.7, 0.52, 0.5), 0.6);
            b.velocity = (-0.5, 0.0, 0.0);
            b.density = 1500.0;
            b.rotation_deg = (0.0, 0.0, 20.0);
            let mut s = set(vec![a, b], 0.0);
            let p0 = s.total_momentum();
            let mut touched = false;
            // Until the collision is over (before either body reaches a wall).
            for _ in 0..400 {
                let now = !find_contacts(&s).is_empty();
                if touched && !now {
                    break;
                }
                touched |= now;
                s.step(1e-3);
            }
            assert!(touched, "{sa:?} and {sb:?} never met");
            let p1 = s.total_momentum();
            assert!(
                (p1 - p0).length() <= 0.01 * p0.length(),
                "{sa:?}/{sb:?}: {p0} -> {p1}"
            );
            // They did exchange momentum.
            assert!(s.bodies[1].velocity().x > -0.4);
        }
    }

    #[test]
    fn resting_box_stays_at_rest() {
        let b = body(
            BodyShape::Box {
                half_extents: (0.1, 0.05, 0.08),
            },
            (0.5, 0.05, 0.5),
            0.5,
        );
        let mut s = set(vec![b], 9.81);
        for _ in 0..2000 {
            s.step(2e-3);
        }
        let b = &s.bodies[0];
        assert!(b.velocity().length() < 1e-3, "v {}", b.velocity());
        assert!(b.omega().length() < 1e-2, "w {}", b.omega());
        assert!((b.position.y - 0.05).abs() < 2e-3, "y {}", b.position.y);
        assert!((b.position.x - 0.5).abs() < 1e-6, "x {}", b.position.x);
        // A tilted box dropped on its corner falls flat and then rests as well.
        let mut tilted = body(
            BodyShape::Box {
                half_extents: (0.1, 0.05, 0.08),
            },
            (0.5, 0.3, 0.5),
            0.3,
        );
        tilted.rotation_deg = (10.0, 0.0, 25.0);
        let mut s = set(vec![tilted], 9.81);
        for _ in 0..4000 {
            s.step(2e-3);
        }
        let b = &s.bodies[0];
        assert!(b.velocity().length() < 1e-2, "v {}", b.velocity());
        assert!((b.position.y - 0.05).abs() < 5e-3, "y {}", b.position.y);
    }

    /// A box on the bottom of a pool is pressed down by the liquid above it and has none
    /// under it: more than its weight. At the frame-sized substeps of a scene it used to
    /// fall through the slop each substep and bounce (5 mm hops at 32 cells per metre);
    /// with speculative contacts it stays put.
    #[test]
    fn box_pressed_onto_the_floor_does_not_hop() {
        let b = body(
            BodyShape::Box {
                half_extents: (0.07, 0.07, 0.07),
            },
            (0.5, 0.07, 0.5),
            0.1,
        );
        let mut s = set(vec![b], 9.81);
        let weight = s.bodies[0].mass * 9.81;
        let (mut lo, mut hi, mut vmax) = (f64::MAX, f64::MIN, 0.0f64);
        for k in 0..300 {
            // The liquid's push wobbles by a fifth from substep to substep.
            let wobble = if k % 2 == 0 { 1.0 } else { 1.4 };
            s.bodies[0].fluid_force = DVec3::new(0.0, -wobble * weight, 0.0);
            s.step(1.0 / 60.0);
            if k >= 10 {
                let b = &s.bodies[0];
                lo = lo.min(b.position.y);
                hi = hi.max(b.position.y);
                vmax = vmax.max(b.velocity().length());
            }
        }
        println!("y {lo:.5}..{hi:.5}, max speed {vmax:.2e}");
        assert!(hi - lo < 2e-4, "the box hops: y {lo}..{hi}");
        assert!(vmax < 1e-3, "the box moves at {vmax} m/s");
        assert!((lo - 0.07).abs() < 2e-3, "y {lo}");
    }

    #[test]
    fn friction_stops_a_sliding_box() {
        let mut b = body(
            BodyShape::Box {
                half_extents: (0.05, 0.05, 0.05),
            },
            (0.3, 0.05, 0.5),
            0.0,
        );
        b.velocity = (1.0, 0.0, 0.0);
        b.friction = 0.5;
        let mut s = set(vec![b], 9.81);
        for _ in 0..1000 {
            s.step(1e-3);
        }
        // Sliding distance v^2 / (2 mu g) = 0.102 m.
        let x = s.bodies[0].position.x;
        assert!((x - 0.3 - 0.102).abs() < 0.015, "x {x}");
        assert!(s.bodies[0].velocity().length() < 1e-3);
    }

    /// A box and a sphere dropped on a static box solid of the scene come to rest on top
    /// of it, not inside it.
    #[test]
    fn bodies_land_on_the_scenes_static_solids() {
        for shape in [
            BodyShape::Box {
                half_extents: (0.05, 0.05, 0.05),
            },
            BodyShape::Sphere { radius: 0.05 },
        ] {
            let mut s = BodySet::from_scene(&Scene {
                gravity: (0.0, -9.81, 0.0),
                bodies: vec![body(shape.clone(), (0.5, 0.8, 0.5), 0.2)],
                solids: vec![crate::scene::Shape::Box {
                    min: (0.3, 0.0, 0.3),
                    max: (0.7, 0.4, 0.7),
                    velocity: (0.0, 0.0, 0.0),
                }],
                ..Default::default()
            })
            .unwrap();
            s.added_mass = 0.0;
            // Rigid dynamics alone: the forces all apply in `step`.
            s.scheme = crate::scene::CouplingScheme::Weak;
            for _ in 0..3000 {
                s.step(1e-3);
            }
            let b = &s.bodies[0];
            // Resting on the solid's top at y = 0.4: the centre half a size above it.
            assert!(
                (b.position.y - 0.45).abs() < 0.01,
                "{shape:?} at y = {}",
                b.position.y
            );
            assert!(
                b.velocity().length() < 0.02,
                "{shape:?} moving at {}",
                b.velocity()
            );
        }
    }
}
