#!/usr/bin/env python3
"""`dualgibbs validate` on the array layout of the authors' own sampler.

The authors' code (github Theborna/dual_gibbs, MIT; sampler.py, graphs.py, experiments.py) returns, per chain,
a float64 C-order NumPy array of shape (n_samples, dim): row s is the state *before* the s-th block of `thinning`
sweeps (row 0 is the start), the dual's y over edges in networkx's edge order, oriented as networkx lists each edge
(B[u, e] = +1, B[v, e] = -1 for edge (u, v)); the torus is nx.grid_2d_graph(n, n, periodic=True) relabelled
(i, j) -> i n + j. Fig. 5 drops a burn-in (y[burnin:]) and projects x~ = y B^T, shape (n, |V|); the convergence
experiments stack chains projected to nodes as (chains, checkpoints, |V|). Nothing of theirs is saved as an array,
so a user saves these arrays with np.save: that is what this script writes.

The sampler here is written for this test (not copied): the dual Gibbs update of the paper's conditional,
y_e | rest ~ N(-R_ee^-1 sum_{f != e} R_ef y_f, R_ee^-1) with R = D_sigma + B^T D_s B, the off-diagonal sum taken
through node sums S = B y as a sampler that stores only node sums must (S_u - y_e and S_v + y_e are the sums
without e), with a uniformly random coordinate per step ("random sweep"), and the authors' two starts
(constant 10 / sqrt(|E|), or N(0, R_ee^-1) per coordinate: graphs.py at their commit c3668a5; their earlier
8b8ece7 drew twice that). Model: the 10x10 torus, s = 1, sigma = 0.1.

Checks (each "consistent" check runs at alpha = 1e-6, the report's Bonferroni bound on its false-alarm
probability; the long-chain batch means are calibrated by measurement, docs/validate.md; each "flagged" check is
on a defect measured far beyond the threshold of about 6: |z| = 127 in check 3, 10.8 in check 5, asserted > 10 and
> 8):
  1. one long chain (2-D, successive states, burn-in dropped) projected, x~ = y B^T (fig. 5's array): consistent as
     dual-x;
  2. the same chain's y as dual-y: y mixes slowly (its cycle-space directions), and the report says that its batches
     are too short (the verdict is not asserted);
  3. chains stacked (chains, checkpoints, |V|) from the constant start, checkpoints at sweeps 0..5: after
     np.swapaxes(0, 1) (dualgibbs reads checkpoints x chains x coordinates) not consistent, worst at sweep 0;
  4. the same stack at sweeps 60..63 (converged): consistent;
  5. a broken kernel (conditional noise sd 0.9 x the right one, so every variance is 0.81 x the truth) as a long
     chain projected to x~: not consistent;
  6. float32 and Fortran order of check 2's array (np.save of .astype / np.asfortranarray): the same verdict.

Usage: validate_authors_layout.py PATH/TO/dualgibbs
"""
import json
import os
import subprocess
import sys
import tempfile

import networkx as nx
import numpy as np

EXE = sys.argv[1]
N, S, SIGMA = 10, 1.0, 0.1
MODEL = ["--graph", "torus:%d" % N, "--s", str(S), "--sigma", str(SIGMA), "--quiet"]

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def authors_torus(n):
    """The authors' torus: networkx's periodic grid, nodes relabelled (i, j) -> i n + j, edges in networkx order."""
    g = nx.relabel_nodes(nx.grid_2d_graph(n, n, periodic=True), {(i, j): i * n + j for i in range(n) for j in range(n)})
    return np.array(list(g.edges()), dtype=np.int64), g.number_of_nodes()


EDGES, NODES = authors_torus(N)
M = len(EDGES)
B = np.zeros((NODES, M))
B[EDGES[:, 0], np.arange(M)] = 1.0
B[EDGES[:, 1], np.arange(M)] = -1.0
R = SIGMA ** 2 * np.eye(M) + S ** 2 * B.T @ B  # the dual precision, D_sigma + B^T D_s B
R_DIAG = np.diag(R).copy()
U, V = EDGES[:, 0], EDGES[:, 1]


def dual_gibbs(chains, checkpoints, thinning, start, rng, noise_scale=1.0):
    """Independent chains of the dual random-sweep Gibbs sampler, vectorised over chains. Returns an array
    (chains, checkpoints, |E|): [c, k] is chain c's state before its k-th block of `thinning` sweeps (the
    authors' row convention: [c, 0] is the start)."""
    if start == "constant":
        y = np.full((chains, M), 10.0 / np.sqrt(M))
    else:
        y = rng.standard_normal((chains, M)) / np.sqrt(R_DIAG)
    node_sum = y @ B.T  # S = B y, per chain
    out = np.empty((chains, checkpoints, M))
    rows = np.arange(chains)
    for k in range(checkpoints):
        out[:, k, :] = y
        for _ in range(thinning * M):  # a sweep is |E| single-coordinate updates
            e = rng.integers(0, M, size=chains)
            u, v = U[e], V[e]
            old = y[rows, e]
            su = node_sum[rows, u] - old  # node sums without edge e
            sv = node_sum[rows, v] + old
            interaction = S ** 2 * su - S ** 2 * sv  # sum_{f != e} R_ef y_f
            new = -interaction / R_DIAG[e] + noise_scale * rng.standard_normal(chains) / np.sqrt(R_DIAG[e])
            y[rows, e] = new
            node_sum[rows, u] = su + new
            node_sum[rows, v] = sv - new
    return out


def dual_gibbs_chain(samples, thinning, rng, noise_scale=1.0):
    """One chain of the same sampler in scalar Python (the vectorised form costs a NumPy call per update):
    (samples, |E|), row s the state before the s-th block, from the authors' random start."""
    steps = samples * thinning * M
    picks = rng.integers(0, M, size=steps).tolist()
    noise = (noise_scale * rng.standard_normal(steps)).tolist()
    sd = (1.0 / np.sqrt(R_DIAG)).tolist()
    inv = (1.0 / R_DIAG).tolist()
    u_of, v_of = U.tolist(), V.tolist()
    y = (rng.standard_normal(M) / np.sqrt(R_DIAG)).tolist()
    node_sum = (B @ np.array(y)).tolist()
    s2 = S ** 2
    out = np.empty((samples, M))
    t = 0
    for k in range(samples):
        out[k] = y
        for _ in range(thinning * M):
            e = picks[t]
            u, v = u_of[e], v_of[e]
            old = y[e]
            su = node_sum[u] - old
            sv = node_sum[v] + old
            new = -(s2 * su - s2 * sv) * inv[e] + sd[e] * noise[t]
            y[e] = new
            node_sum[u] = su + new
            node_sum[v] = sv - new
            t += 1
    return out


def validate(path, domain, extra=()):
    p = subprocess.run([EXE, "validate", *MODEL, "--draws", path, "--domain", domain, "--alpha", "1e-6", "--json",
                        *extra], capture_output=True, text=True, timeout=600)
    report = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
    if report is None:
        print(p.stderr)
    return p.returncode, report


def summary(r):
    if r is None:
        return "no report"
    w = r["worst"][0] if r["worst"] else {}
    return "%s, %d checkpoint(s), threshold |z| %.2f, worst %s %s at sweep %s z = %.2f" % (
        r["layout"], len(r["checkpoints"]), r["z_threshold"], w.get("test"), w.get("where"), w.get("sweep"),
        w.get("z", 0.0))


tmp = tempfile.mkdtemp()
rng = np.random.default_rng(20261126)

# 1, 2: one long chain (the authors' fig. 5 design): 400 burn-in blocks dropped, 3000 kept, 2 sweeps per block.
chain = dual_gibbs_chain(3400, 2, rng)[400:]
assert chain.shape == (3000, M) and chain.dtype == np.float64 and chain.flags["C_CONTIGUOUS"]
x_tilde = chain @ B.T  # fig. 5: x~ = y B^T, (n, |V|)
np.save(os.path.join(tmp, "xt_chain.npy"), x_tilde)
rc2, r2 = validate(os.path.join(tmp, "xt_chain.npy"), "dual-x")
check(rc2 == 0 and r2["layout"].startswith("successive states of 1 chain"),
      "1. long chain projected, x~ = y B^T -> exit %d: %s" % (rc2, summary(r2)))
# y itself mixes slowly in the cycle space of the graph (|E| - |V| + 1 = 101 directions where R = sigma^2 I: an
# autocorrelation time of about 100 sweeps at sigma = 0.1), so 3000 draws 2 sweeps apart are too few for batch means:
# the report must say so (effective sample size below 200, the short-batch note) whatever its verdict.
np.save(os.path.join(tmp, "y_chain.npy"), chain)
rc, r = validate(os.path.join(tmp, "y_chain.npy"), "dual-y")
check(rc in (0, 3) and r["checkpoints"][0]["ess_min"] < 200 and any("too short" in n for n in r["notes"]),
      "2. the chain's y -> exit %d, effective sample size %.0f, note: %s" % (
          rc, r["checkpoints"][0]["ess_min"] if r else -1, r["notes"] if r else None))

# 3, 4: chains stacked as (chains, checkpoints, |V|), as the authors' convergence experiments accumulate them.
early = dual_gibbs(2000, 6, 1, "constant", rng) @ B.T
assert early.shape == (2000, 6, NODES)
np.save(os.path.join(tmp, "stack_early.npy"), np.swapaxes(early, 0, 1))
rc, r = validate(os.path.join(tmp, "stack_early.npy"), "dual-x")
check(rc == 3 and len(r["checkpoints"]) == 6 and r["worst"][0]["sweep"] == 0.0 and abs(r["worst"][0]["z"]) > 10,
      "3. stacked chains at sweeps 0..5 from the constant start -> exit %d: %s" % (rc, summary(r)))
late = dual_gibbs(2000, 64, 1, "random", rng)[:, 60:, :] @ B.T
np.save(os.path.join(tmp, "stack_late.npy"), np.swapaxes(late, 0, 1))
rc, r = validate(os.path.join(tmp, "stack_late.npy"), "dual-x")
check(rc == 0 and len(r["checkpoints"]) == 4 and r["layout"].startswith("4 checkpoint(s) of independent draws"),
      "4. stacked chains at sweeps 60..63 -> exit %d: %s" % (rc, summary(r)))

# 5: a broken kernel (noise sd 0.9x): every variance 0.81x the truth; its chain projected as in check 1.
broken = dual_gibbs_chain(2400, 2, rng, noise_scale=0.9)[400:] @ B.T
np.save(os.path.join(tmp, "xt_broken.npy"), broken)
rc, r = validate(os.path.join(tmp, "xt_broken.npy"), "dual-x")
check(rc == 3 and abs(r["worst"][0]["z"]) > 8, "5. broken kernel (noise 0.9x) -> exit %d: %s" % (rc, summary(r)))

# 6: other encodings numpy writes of check 2's array give the same verdict.
np.save(os.path.join(tmp, "xt_f32.npy"), x_tilde.astype(np.float32))
np.save(os.path.join(tmp, "xt_fortran.npy"), np.asfortranarray(x_tilde))
for name in ("xt_f32.npy", "xt_fortran.npy"):
    rc, r = validate(os.path.join(tmp, name), "dual-x")
    same = r is not None and r["consistent"] == r2["consistent"]
    if name == "xt_fortran.npy" and same:  # the same values: the same statistics
        same = abs(r["checkpoints"][0]["global_z"] - r2["checkpoints"][0]["global_z"]) < 1e-9
    check(rc == rc2 and same, "6. %s -> exit %d, the same verdict as the C-order float64 file" % (name, rc))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
