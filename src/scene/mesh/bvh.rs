//! The bounding-volume hierarchy over a mesh's triangles: exact closest points and the
//! fast generalised winding number (see the module's head for the method).

use super::*;

/// A node of the tree: its box, what the winding number's far field needs, and its
/// triangles (a leaf) or its children (`first` and `first + 1`).
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    lo: DVec3,
    hi: DVec3,
    /// Area-weighted centre of the triangles, the sum of their area vectors (n A), their
    /// total area, and the largest distance from `centre` to any of their points.
    centre: DVec3,
    area_normal: DVec3,
    area: f64,
    radius: f64,
    first: u32,
    /// Triangles of a leaf; 0 for an inner node.
    count: u32,
}

/// An AABB tree over a mesh's triangles, with each node's dipole moment.
#[derive(Clone, Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// The triangles' corners, in leaf order.
    tris: Vec<[DVec3; 3]>,
}

/// Deepest tree the fixed query stacks hold: a median split halves the triangles at each
/// level, so [`MAX_MESH_TRIANGLES`] needs about 20.
const MAX_DEPTH: usize = 64;

impl Bvh {
    pub fn new(mesh: &TriMesh) -> Self {
        let corners: Vec<[DVec3; 3]> = mesh.corners().collect();
        let centroids: Vec<DVec3> = corners.iter().map(|t| (t[0] + t[1] + t[2]) / 3.0).collect();
        let mut order: Vec<u32> = (0..corners.len() as u32).collect();
        let mut nodes = vec![Node::default()];
        let mut stack = vec![(0usize, 0usize, corners.len())];
        while let Some((ni, s, e)) = stack.pop() {
            let items = &mut order[s..e];
            let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
            for &i in items.iter() {
                lo = lo.min(centroids[i as usize]);
                hi = hi.max(centroids[i as usize]);
            }
            let extent = hi - lo;
            let axis = if extent.x >= extent.y && extent.x >= extent.z {
                0
            } else if extent.y >= extent.z {
                1
            } else {
                2
            };
            if e - s <= LEAF_SIZE || extent[axis] <= 0.0 {
                nodes[ni].first = s as u32;
                nodes[ni].count = (e - s) as u32;
                continue;
            }
            let mid = (e - s) / 2;
            items.select_nth_unstable_by(mid, |a, b| {
                centroids[*a as usize][axis]
                    .total_cmp(&centroids[*b as usize][axis])
                    .then(a.cmp(b))
            });
            let left = nodes.len();
            nodes.push(Node::default());
            nodes.push(Node::default());
            nodes[ni].first = left as u32;
            stack.push((left, s, s + mid));
            stack.push((left + 1, s + mid, e));
        }
        let tris: Vec<[DVec3; 3]> = order.iter().map(|&i| corners[i as usize]).collect();
        // Children come after their parent: fill the nodes from the last one back.
        for ni in (0..nodes.len()).rev() {
            let n = nodes[ni];
            let filled = if n.count > 0 {
                leaf_node(&tris[n.first as usize..(n.first + n.count) as usize], n)
            } else {
                let (a, b) = (nodes[n.first as usize], nodes[n.first as usize + 1]);
                let area = a.area + b.area;
                let centre = if area > 0.0 {
                    (a.centre * a.area + b.centre * b.area) / area
                } else {
                    0.5 * (a.centre + b.centre)
                };
                Node {
                    lo: a.lo.min(b.lo),
                    hi: a.hi.max(b.hi),
                    centre,
                    area_normal: a.area_normal + b.area_normal,
                    area,
                    radius: (a.radius + (a.centre - centre).length())
                        .max(b.radius + (b.centre - centre).length()),
                    ..n
                }
            };
            nodes[ni] = filled;
        }
        Self { nodes, tris }
    }

    /// Distance from `p` to the nearest point of the triangles.
    pub fn distance(&self, p: [f64; 3]) -> f64 {
        self.closest_sq(DVec3::from(p), f64::INFINITY).sqrt()
    }

    /// Whether `p` lies on a triangle (distance exactly 0).
    fn touches(&self, p: DVec3) -> bool {
        self.closest_sq(p, f64::MIN_POSITIVE) == 0.0
    }

    /// The squared distance to the nearest triangle, or `bound` when none is nearer than
    /// its square root. Nearest child first, boxes no nearer than the best so far skipped.
    fn closest_sq(&self, p: DVec3, bound: f64) -> f64 {
        let mut best = bound;
        let mut stack = [0u32; MAX_DEPTH];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = &self.nodes[stack[top] as usize];
            if box_distance_sq(n, p) >= best {
                continue;
            }
            if n.count > 0 {
                for t in &self.tris[n.first as usize..(n.first + n.count) as usize] {
                    best = best.min((closest_point_on_triangle(p, t) - p).length_squared());
                }
                continue;
            }
            let (a, b) = (n.first, n.first + 1);
            let da = box_distance_sq(&self.nodes[a as usize], p);
            let db = box_distance_sq(&self.nodes[b as usize], p);
            let (near, far, dnear, dfar) = if da <= db {
                (a, b, da, db)
            } else {
                (b, a, db, da)
            };
            if dfar < best {
                stack[top] = far;
                top += 1;
            }
            if dnear < best {
                stack[top] = near;
                top += 1;
            }
        }
        best
    }

    /// The generalised winding number at `p`, nodes farther than `beta` radii taken by their
    /// dipole term (`beta = f64::INFINITY` sums every triangle exactly).
    pub fn winding_number_with(&self, p: [f64; 3], beta: f64) -> f64 {
        let q = DVec3::from(p);
        let mut sum = 0.0;
        let mut stack = [0u32; MAX_DEPTH];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = &self.nodes[stack[top] as usize];
            let d = n.centre - q;
            let d2 = d.length_squared();
            let far = beta * n.radius;
            if d2 > far * far {
                sum += d.dot(n.area_normal) / (d2 * d2.sqrt());
            } else if n.count > 0 {
                for t in &self.tris[n.first as usize..(n.first + n.count) as usize] {
                    sum += solid_angle(t, q);
                }
            } else {
                stack[top] = n.first;
                stack[top + 1] = n.first + 1;
                top += 2;
            }
        }
        sum / (4.0 * std::f64::consts::PI)
    }

    /// The winding number as the inside test uses it: fast, refined near 1/2.
    pub fn winding_number(&self, p: [f64; 3]) -> f64 {
        let w = self.winding_number_with(p, BETA);
        if (w.abs() - 0.5).abs() > AMBIGUOUS {
            return w;
        }
        let w = self.winding_number_with(p, FINE_BETA);
        if (w.abs() - 0.5).abs() > STILL_AMBIGUOUS {
            return w;
        }
        self.winding_number_with(p, f64::INFINITY)
    }

    fn bounds(&self) -> (DVec3, DVec3) {
        (self.nodes[0].lo, self.nodes[0].hi)
    }

    /// Inside: within the bounding box and |w| > 1/2.
    pub fn inside(&self, p: [f64; 3]) -> bool {
        let (lo, hi) = self.bounds();
        let q = DVec3::from(p);
        q.cmpge(lo).all() && q.cmple(hi).all() && self.winding_number(p).abs() > 0.5
    }

    /// Signed distance: -d inside, +d outside.
    pub fn sdf(&self, p: [f64; 3]) -> f64 {
        let d = self.distance(p);
        if self.inside(p) {
            -d
        } else {
            d
        }
    }

    /// `sdf(p) < 0` without the full distance query.
    pub fn contains(&self, p: [f64; 3]) -> bool {
        self.inside(p) && !self.touches(DVec3::from(p))
    }
}

fn leaf_node(tris: &[[DVec3; 3]], n: Node) -> Node {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let mut area_normal = DVec3::ZERO;
    let mut weighted = DVec3::ZERO;
    let mut area = 0.0;
    for t in tris {
        for v in t {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let an = 0.5 * (t[1] - t[0]).cross(t[2] - t[0]);
        let a = an.length();
        area_normal += an;
        area += a;
        weighted += a * (t[0] + t[1] + t[2]) / 3.0;
    }
    let centre = if area > 0.0 {
        weighted / area
    } else {
        0.5 * (lo + hi)
    };
    let radius = tris
        .iter()
        .flatten()
        .map(|v| (*v - centre).length())
        .fold(0.0, f64::max);
    Node {
        lo,
        hi,
        centre,
        area_normal,
        area,
        radius,
        ..n
    }
}

fn box_distance_sq(n: &Node, p: DVec3) -> f64 {
    let d = (n.lo - p).max(p - n.hi).max(DVec3::ZERO);
    d.length_squared()
}

/// The signed solid angle triangle `t` subtends at `q` (Van Oosterom and Strackee 1983):
/// positive when `q` is behind it (on the side its counter-clockwise normal points away
/// from).
fn solid_angle(t: &[DVec3; 3], q: DVec3) -> f64 {
    let (a, b, c) = (t[0] - q, t[1] - q, t[2] - q);
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let det = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    2.0 * det.atan2(den)
}

/// The point of triangle `t` nearest `p`, by the region of the triangle's plane `p`
/// projects into (a vertex, an edge, or the face).
fn closest_point_on_triangle(p: DVec3, t: &[DVec3; 3]) -> DVec3 {
    let [a, b, c] = *t;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}
