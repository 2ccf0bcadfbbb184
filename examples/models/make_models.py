#!/usr/bin/env python3
"""Writes four real models as Matrix Market precision matrices for `dualgibbs --precision FILE`:

  us_car.mtx       a proper CAR model tau (D - rho W) on the contiguous United States (48 states and DC, 107 shared
                   borders, states/US_ADJACENCY below), tau = 1, rho = 0.9: diagonally dominant, negative couplings;
  us_car_neg.mtx   the same graph with rho = -0.6: every coupling positive (neighbours pull apart), still of
                   factor width 2, its incidence signed (+1, +1);
  spde_horse.mtx   an SPDE alpha = 1 Matern field (kappa^2 C + G, P1 elements, lumped mass C) on a triangular mesh of
                   the horse silhouette of scikit-image's `data.horse()`: a jittered equilateral lattice, Delaunay
                   triangles inside the smoothed outline, those with an angle of 90 degrees or more dropped (no obtuse
                   pair, so every coupling is negative), kappa = sqrt(8) / range for a chosen practical range;
  spde2_horse.mtx  the SPDE alpha = 2 Matern field (smoothness nu = 1) on the same mesh, K C^-1 K with K = kappa^2 C + G
                   (the lumped mass makes C^-1 diagonal): couplings to neighbours' neighbours, many of them positive,
                   and not of factor width 2 (its comparison matrix is not positive definite), so it has no dual:
                   the primal methods only.

Each file gets a JSON sidecar (FILE.json) with where it comes from and its sizes. Usage:

  examples/models/make_models.py [--out DIR] [--spacing PX] [--range PX] [--quick]

--quick makes the mesh about 100 times coarser (for tests). Needs numpy, scipy, scikit-image and matplotlib.
"""
import argparse
import json
import pathlib

import numpy as np
import scipy.io as sio
import scipy.sparse as sp
from scipy.spatial import Delaunay

# Shared land borders of the contiguous United States and DC (points such as the Four Corners do not count).
US_ADJACENCY = {
    "AL": "FL GA MS TN", "AZ": "CA NM NV UT", "AR": "LA MO MS OK TN TX", "CA": "AZ NV OR",
    "CO": "KS NE NM OK UT WY", "CT": "MA NY RI", "DE": "MD NJ PA", "DC": "MD VA", "FL": "AL GA",
    "GA": "AL FL NC SC TN", "ID": "MT NV OR UT WA WY", "IL": "IA IN KY MO WI", "IN": "IL KY MI OH",
    "IA": "IL MN MO NE SD WI", "KS": "CO MO NE OK", "KY": "IL IN MO OH TN VA WV", "LA": "AR MS TX", "ME": "NH",
    "MD": "DE DC PA VA WV", "MA": "CT NH NY RI VT", "MI": "IN OH WI", "MN": "IA ND SD WI", "MS": "AL AR LA TN",
    "MO": "AR IA IL KS KY NE OK TN", "MT": "ID ND SD WY", "NE": "CO IA KS MO SD WY", "NV": "AZ CA ID OR UT",
    "NH": "MA ME VT", "NJ": "DE NY PA", "NM": "AZ CO OK TX", "NY": "CT MA NJ PA VT", "NC": "GA SC TN VA",
    "ND": "MN MT SD", "OH": "IN KY MI PA WV", "OK": "AR CO KS MO NM TX", "OR": "CA ID NV WA",
    "PA": "DE MD NJ NY OH WV", "RI": "CT MA", "SC": "GA NC", "SD": "IA MN MT ND NE WY",
    "TN": "AL AR GA KY MO MS NC VA", "TX": "AR LA NM OK", "UT": "AZ CO ID NV WY", "VT": "MA NH NY",
    "VA": "DC KY MD NC TN WV", "WA": "ID OR", "WV": "KY MD OH PA VA", "WI": "IA IL MI MN",
    "WY": "CO ID MT NE SD UT",
}


def us_graph():
    """The states (sorted) and the symmetric 0/1 adjacency; checks the list is symmetric with 107 borders."""
    states = sorted(US_ADJACENCY)
    index = {s: i for i, s in enumerate(states)}
    rows, cols = [], []
    for s, nbrs in US_ADJACENCY.items():
        for t in nbrs.split():
            if s not in US_ADJACENCY[t].split():
                raise SystemExit(f"US_ADJACENCY is not symmetric: {s}-{t}")
            rows.append(index[s])
            cols.append(index[t])
    W = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(states),) * 2)
    assert W.nnz == 2 * 107 and len(states) == 49
    return states, W


def car(W, tau, rho):
    """tau (D - rho W): positive definite for |rho| < 1 (diagonally dominant)."""
    D = sp.diags(np.asarray(W.sum(axis=1)).ravel())
    return sp.csr_matrix(tau * (D - rho * W))


def horse_outline():
    """The horse of scikit-image's data.horse() (a 328 x 400 binary silhouette) as a closed polygon in pixel units,
    from a smoothed mask."""
    from skimage import data, filters, measure

    mask = ~data.horse()  # the horse is False (black) on a white background
    smooth = filters.gaussian(mask.astype(float), sigma=1.5)
    contour = max(measure.find_contours(smooth, 0.5), key=len)
    return contour[:, ::-1] * np.array([1.0, -1.0])  # (x, y) with y up


def mesh(outline, spacing, jitter=0.1, seed=1):
    """Vertices and triangles: a jittered equilateral lattice of the given spacing inside the outline, its Delaunay
    triangles whose centroid is inside and whose angles are all below 90 degrees (vertices left without a triangle
    are dropped)."""
    from matplotlib.path import Path

    rng = np.random.default_rng(seed)
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    ys = np.arange(lo[1], hi[1] + spacing, spacing * np.sqrt(3) / 2)
    xs = np.arange(lo[0], hi[0] + spacing, spacing)
    X, Y = np.meshgrid(xs, ys)
    X = X + (np.arange(len(ys))[:, None] % 2) * spacing / 2
    pts = np.c_[X.ravel(), Y.ravel()]
    pts += jitter * spacing * rng.uniform(-1, 1, pts.shape)
    inside = Path(outline)
    pts = pts[inside.contains_points(pts)]
    tri = Delaunay(pts).simplices
    P = pts[tri]  # (t, 3, 2)
    keep = inside.contains_points(P.mean(axis=1))
    for q in range(3):
        u = P[:, (q + 1) % 3] - P[:, q]
        w = P[:, (q + 2) % 3] - P[:, q]
        keep &= np.einsum("ij,ij->i", u, w) > 0  # the angle at vertex q is acute
    tri = tri[keep]
    used = np.unique(tri)
    index = -np.ones(len(pts), dtype=np.int64)
    index[used] = np.arange(len(used))
    return pts[used], index[tri]


def spde(pts, tri, kappa):
    """kappa^2 C + G with P1 elements: G the stiffness matrix, C the lumped (diagonal) mass matrix."""
    P = pts[tri]
    e1, e2 = P[:, 1] - P[:, 0], P[:, 2] - P[:, 0]
    area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0])
    # Gradients of the barycentric functions: for the edge opposite vertex i, rotated by 90 degrees, / (2 area).
    opp = np.stack([P[:, 2] - P[:, 1], P[:, 0] - P[:, 2], P[:, 1] - P[:, 0]], axis=1)
    grad = np.stack([-opp[..., 1], opp[..., 0]], axis=-1) / (2 * area[:, None, None])
    K = area[:, None, None] * np.einsum("tik,tjk->tij", grad, grad)
    rows = np.repeat(tri, 3, axis=1).ravel()
    cols = np.tile(tri, (1, 3)).ravel()
    n = len(pts)
    G = sp.csr_matrix((K.ravel(), (rows, cols)), shape=(n, n))
    mass = np.bincount(tri.ravel(), weights=np.repeat(area / 3, 3), minlength=n)
    Q = sp.csr_matrix(kappa**2 * sp.diags(mass) + G)
    Q = sp.csr_matrix((Q + Q.T) / 2)
    Q.eliminate_zeros()
    return Q, area


def min_angle(pts, tri):
    P = pts[tri]
    worst = np.inf
    for q in range(3):
        u = P[:, (q + 1) % 3] - P[:, q]
        w = P[:, (q + 2) % 3] - P[:, q]
        cos = np.einsum("ij,ij->i", u, w) / np.linalg.norm(u, axis=1) / np.linalg.norm(w, axis=1)
        worst = min(worst, np.degrees(np.arccos(cos.max())))
    return worst


def write(out, name, Q, info):
    path = out / name
    sio.mmwrite(str(path), Q, symmetry="symmetric", precision=17)
    info = {"file": name, "rows": Q.shape[0], "nonzeros": int(Q.nnz), **info}
    (out / (name + ".json")).write_text(json.dumps(info, indent=1) + "\n")
    print(f"{path}: {Q.shape[0]} rows, {Q.nnz} non-zeros")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="models", help="output directory (default: models)")
    ap.add_argument("--spacing", type=float, default=0.62, help="mesh spacing in pixels (default 0.62: ~1.2e5 vertices)")
    ap.add_argument("--range", type=float, default=12.0, help="the Matern field's practical range in pixels")
    ap.add_argument("--quick", action="store_true", help="a mesh 10 times coarser in each direction")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    states, W = us_graph()
    source = "contiguous United States and DC, shared land borders (examples/models/make_models.py)"
    write(out, "us_car.mtx", car(W, 1.0, 0.9),
          {"model": "proper CAR tau (D - rho W)", "tau": 1.0, "rho": 0.9, "graph": source, "nodes": states})
    write(out, "us_car_neg.mtx", car(W, 1.0, -0.6),
          {"model": "proper CAR tau (D - rho W), positive couplings", "tau": 1.0, "rho": -0.6, "graph": source,
           "nodes": states})

    spacing = a.spacing * (10 if a.quick else 1)
    pts, tri = mesh(horse_outline(), spacing)
    kappa = np.sqrt(8.0) / a.range
    Q, area = spde(pts, tri, kappa)
    write(out, "spde_horse.mtx", Q,
          {"model": "SPDE alpha = 1 Matern field kappa^2 C + G (P1, lumped mass)",
           "domain": "horse silhouette of scikit-image data.horse(), pixel units", "kappa": kappa,
           "practical_range": a.range, "spacing": spacing, "vertices": len(pts), "triangles": len(tri),
           "min_angle_degrees": min_angle(pts, tri), "area": float(area.sum())})
    np.savetxt(out / "spde_horse_vertices.csv", pts, delimiter=",", header="x,y", comments="")
    mass = np.bincount(tri.ravel(), weights=np.repeat(area / 3, 3), minlength=len(pts))
    Q2 = sp.csr_matrix(Q @ sp.diags(1.0 / mass) @ Q)
    Q2 = sp.csr_matrix((Q2 + Q2.T) / 2)
    write(out, "spde2_horse.mtx", Q2,
          {"model": "SPDE alpha = 2 Matern field (nu = 1) K C^-1 K, K = kappa^2 C + G (P1, lumped mass)",
           "domain": "horse silhouette of scikit-image data.horse(), pixel units (the mesh of spde_horse.mtx)",
           "kappa": kappa, "practical_range": a.range, "spacing": spacing, "vertices": len(pts),
           "triangles": len(tri)})


if __name__ == "__main__":
    main()
