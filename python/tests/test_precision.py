"""Your own precision matrix (Model.from_precision and `--precision`) against dense inverses of matrices written here
with scipy and networkx: a proper CAR model, a matrix with couplings of both signs, an H-matrix that is diagonally
dominant only after scaling, an SPDE (alpha = 1) mesh without obtuse pairs, and an SPD matrix that is not an H-matrix."""
import json

import numpy as np
import networkx as nx
import pytest
import scipy.io as sio
import scipy.sparse as sp
from scipy.spatial import Delaunay

import dualgibbs as dg
from conftest import run_cli


def car_matrix():
    """A proper CAR model tau (D - rho A) on the Les Miserables co-appearance graph (networkx's copy of Knuth's data),
    tau = 2, rho = 0.9: diagonally dominant."""
    G = nx.les_miserables_graph()
    A = nx.to_scipy_sparse_array(G, format="csr", weight=None).astype(float)
    D = sp.diags(np.asarray(A.sum(axis=1)).ravel())
    return sp.csr_matrix(2.0 * (D - 0.9 * A))


def signed_matrix(n=60, seed=3):
    """Couplings of both signs on a random 3-regular graph, diagonal 1.1 times the row's absolute sum plus 0.1."""
    rng = np.random.default_rng(seed)
    G = nx.random_regular_graph(3, n, seed=seed)
    rows, cols, vals = [], [], []
    for u, v in G.edges():
        w = rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.5)
        rows += [u, v]
        cols += [v, u]
        vals += [w, w]
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    d = 1.1 * np.asarray(abs(A).sum(axis=1)).ravel() + 0.1
    return sp.csr_matrix(sp.diags(d) + A)


def scaled_h_matrix():
    """S M S with M a signed diagonally dominant matrix and S far from constant: an H-matrix, not dominant itself."""
    M = signed_matrix(50, seed=8)
    M = sp.csr_matrix(M - sp.diags(0.06 * M.diagonal()))  # closer to the edge of dominance
    S = sp.diags(np.exp(1.5 * np.sin(1.7 * np.arange(50))))
    return sp.csr_matrix(S @ M @ S)


def spde_matrix(kappa=8.0, seed=4, jitter=0.3, n=22):
    """kappa^2 C + G of the SPDE alpha = 1 on a mesh of the unit disk: Delaunay triangles of a jittered triangular
    lattice, keeping those whose largest angle is below 90 degrees (no obtuse pair: every coupling is negative, so Q
    is diagonally dominant); P1 elements, C the lumped mass matrix, G the stiffness matrix, assembled here."""
    rng = np.random.default_rng(seed)
    h = 2.0 / n
    pts = []
    for i in range(-n, n + 1):
        for k in range(-n, n + 1):
            p = np.array([i * h + (k % 2) * h / 2, k * h * np.sqrt(3) / 2])
            if p @ p < 1:
                pts.append(p + jitter * h * rng.uniform(-1, 1, 2))
    pts = np.array(pts)

    def largest_angle(P):
        cos = [(P[(q + 1) % 3] - P[q]) @ (P[(q + 2) % 3] - P[q])
               / np.linalg.norm(P[(q + 1) % 3] - P[q]) / np.linalg.norm(P[(q + 2) % 3] - P[q]) for q in range(3)]
        return np.degrees(np.arccos(min(cos)))

    tri = np.array([t for t in Delaunay(pts).simplices if largest_angle(pts[t]) < 90])
    used = np.unique(tri)
    index = -np.ones(len(pts), dtype=int)
    index[used] = np.arange(len(used))
    pts, tri = pts[used], index[tri]
    n = len(pts)
    rows, cols, vals = [], [], []
    mass = np.zeros(n)
    for t in tri:
        P = pts[t]
        area = 0.5 * abs(np.cross(P[1] - P[0], P[2] - P[0]))
        grads = np.linalg.inv(np.c_[np.ones(3), P])[1:].T  # gradient of each barycentric function
        K = area * grads @ grads.T
        for i in range(3):
            mass[t[i]] += area / 3
            for j in range(3):
                rows.append(t[i])
                cols.append(t[j])
                vals.append(K[i, j])
    G = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    Q = sp.csr_matrix(kappa**2 * sp.diags(mass) + G)
    Q.eliminate_zeros()
    return sp.csr_matrix((Q + Q.T) / 2)


def triangle_ring(coupling=0.6):
    """Three triangles with three positive couplings each, joined in a ring: SPD, comparison matrix not."""
    Q = np.eye(9)
    for t in range(3):
        for a in range(3):
            for b in range(a + 1, 3):
                Q[3 * t + a, 3 * t + b] = Q[3 * t + b, 3 * t + a] = coupling
        u, v = 3 * t + 2, (3 * t + 3) % 9
        Q[u, v] = Q[v, u] = -0.05
    return sp.csr_matrix(Q)


MODELS = {"car": car_matrix, "signed": signed_matrix, "scaled": scaled_h_matrix, "spde": spde_matrix}


@pytest.mark.parametrize("name", list(MODELS))
def test_exact_variances_and_the_dual_reconstruction_equal_a_dense_inverse(name):
    Q = MODELS[name]()
    want = np.diag(np.linalg.inv(Q.toarray()))
    m = dg.Model.from_precision(Q)
    assert m.has_dual and m.given_precision
    np.testing.assert_allclose(dg.marginal_variances(m), want, rtol=1e-9, atol=0)
    # Woodbury [eq:cov_woodbury3]: Var(X_v) = s_v^2 - s_v^4 Var(x~_v), x~ = B y~, from the dual's exact marginals.
    s2 = m.s**2
    np.testing.assert_allclose(s2 - s2**2 * dg.dual_node_variances(m), want, rtol=1e-9, atol=0)
    # The split reassembles Q: D_s^-1 + B D_sigma^-1 B^T.
    B = m.B
    rebuilt = sp.diags(1 / s2) + B @ sp.diags(1 / m.sigma**2) @ B.T
    assert abs(rebuilt - Q).max() <= 1e-12 * abs(Q).max()


def test_the_kinds_of_matrix_are_told_apart():
    assert dg.Model.from_precision(car_matrix()).factor_width["diagonally_dominant"]
    assert dg.Model.from_precision(signed_matrix()).factor_width["positive_couplings"] > 0
    f = dg.Model.from_precision(scaled_h_matrix()).factor_width
    assert f["factor_width_two"] and not f["diagonally_dominant"] and f["d_max"] > f["d_min"] > 0


def test_an_spd_matrix_without_factor_width_two_runs_the_primal_and_refuses_the_dual():
    Q = triangle_ring()
    m = dg.Model.from_precision(Q)
    assert not m.has_dual
    row = m.factor_width["failing_row"]
    assert 0 <= row < 9
    np.testing.assert_allclose(dg.marginal_variances(m), np.diag(np.linalg.inv(Q.toarray())), rtol=1e-12)
    x = dg.sample(m, domain="primal", chains=2000, sweeps=60, seed=2)
    assert dg.validate_draws(m, x, "primal", alpha=1e-6)["consistent"]
    with pytest.raises(ValueError, match=f"row {row}"):
        dg.sample(m, domain="dual", chains=10, sweeps=2)
    with pytest.raises(ValueError, match=f"row {row}"):
        dg.marginals(m, method="dual-cv")
    # primal-cv: the Dirichlet lower bound holds on every node and the estimate is within its error (9 nodes,
    # |z| < 4.5 with 64 chains: Student's t, 63 degrees of freedom, a false-failure probability below 9 x 3e-5).
    exact = np.diag(np.linalg.inv(Q.toarray()))
    r = dg.marginals(m, method="primal-cv", chains=64, seed=4)
    assert np.all(r["lower"] <= exact * (1 + 1e-12)) and np.all(np.isnan(r["upper"]))
    assert np.all(np.abs((r["estimate"] - exact) / r["std_error"]) < 4.5)
    c = dg.run_convergence(m, chains=200, sweeps=10)
    assert "Eu_primal" in c["table"] and "Eu_dual" not in c["table"]
    with pytest.raises(ValueError, match=f"row {row}"):
        dg.run_convergence(m, chains=200, sweeps=10, control_variate=True)
    with pytest.raises(ValueError, match="not positive definite.*row"):
        dg.Model.from_precision(triangle_ring(1.2))


@pytest.mark.parametrize("name", ["signed", "scaled", "spde"])
def test_both_samplers_draw_what_validate_accepts_and_a_flipped_sign_is_flagged(name):
    """validate_draws at alpha = 1e-6 (Bonferroni over its tests): a correct sampler fails with probability at most
    1e-6 per call, 3 calls per model; fixed seeds. The flipped sampler draws from Q with every coupling's sign
    reversed (the model a sampler with wrong edge signs targets): its covariances are off by many standard errors."""
    Q = MODELS[name]()
    m = dg.Model.from_precision(Q)
    primal = dg.sample(m, domain="primal", chains=4000, sweeps=500, seed=11)
    dual = dg.sample(m, domain="dual", chains=4000, sweeps=500, seed=12)
    assert dg.validate_draws(m, primal, "primal", alpha=1e-6)["consistent"]
    assert dg.validate_draws(m, dual, "dual-x", alpha=1e-6)["consistent"]
    off = sp.triu(Q, 1)
    flipped = dg.Model.from_precision(sp.diags(Q.diagonal()) - off - off.T)
    wrong = dg.sample(flipped, domain="dual", chains=4000, sweeps=500, seed=13)
    assert not dg.validate_draws(m, wrong, "dual-x", alpha=1e-6)["consistent"]


def test_a_canonical_vector_gives_the_mean():
    Q = signed_matrix()
    h = np.cos(np.arange(Q.shape[0]))
    m = dg.Model.from_precision(Q, canonical_vector=h)
    np.testing.assert_allclose(dg.posterior_mean(m), np.linalg.solve(Q.toarray(), h), rtol=1e-10)
    with pytest.raises(ValueError, match="canonical vector of length 5"):
        dg.Model.from_precision(Q, canonical_vector=h[:5])


def test_the_command_reads_matrix_market_and_agrees_with_python(tmp_path, cli):
    Q = scaled_h_matrix()
    path = tmp_path / "q.mtx"
    sio.mmwrite(str(path), Q, symmetry="symmetric")
    code, out, err = run_cli(cli, "--quiet", "--precision", path, "exact", "--marginals", tmp_path / "v.csv")
    assert code == 0, err
    got = np.loadtxt(tmp_path / "v.csv", delimiter=",", skiprows=1)[:, 1]
    np.testing.assert_allclose(got, dg.marginal_variances(dg.Model.from_precision(Q)), rtol=1e-15)
    code, out, err = run_cli(cli, "--quiet", "--precision", path, "info", "--json")
    assert code == 0, err
    p = json.loads(out)["precision"]
    assert p["has_dual"] and p["factor_width"] == "2" and not p["diagonally_dominant"]
    ring = tmp_path / "ring.mtx"
    sio.mmwrite(str(ring), triangle_ring(), symmetry="general")
    code, out, err = run_cli(cli, "--precision", ring, "sample", "--domain", "dual", "--chains", "4", "-o", "-")
    assert code == 2 and "no dual domain" in err and err.count("\n") == 1, err
    code, out, err = run_cli(cli, "--precision", ring, "--obs-file", path, "exact")
    assert code == 2 and "--canonical" in err, err
    for args in (["marginals", "--method", "dual-cv"], []):
        code, out, err = run_cli(cli, "--quiet", "--precision", ring, *args)
        assert code == 2 and "has no dual domain" in err and "row" in err and err.count("\n") == 1, (args, err)
    # The primal methods run: primal-cv (its CSV's upper bracket empty: no flow energy without D_s) and converge
    # (the primal columns alone).
    code, out, err = run_cli(cli, "--quiet", "--precision", ring, "marginals", "--method", "primal-cv", "-o",
                             tmp_path / "m.csv")
    assert code == 0, err
    rows = (tmp_path / "m.csv").read_text().splitlines()
    assert rows[0] == "v,estimate,std_error,lower,upper" and rows[1].endswith(","), rows[:2]
    code, out, err = run_cli(cli, "--quiet", "--precision", ring, "converge", "--chains", "200", "--sweeps", "10",
                             "--json")
    assert code == 0, err
    record = json.loads(out)
    assert "Eu_primal" in record["columns"] and "Eu_dual" not in record["columns"], record["columns"]
    code, out, err = run_cli(cli, "--precision", ring, "info", "--json")
    assert code == 0 and "unit_incidence" not in json.loads(out)["precision"], err
    code, out, err = run_cli(cli, "--precision", path, "--graph", "torus:5", "exact")
    assert code == 2 and "--graph does not apply with --precision" in err and err.count("\n") == 1, err
    code, out, err = run_cli(cli, "--precision", path, "exact", "--sigma", "0.3")
    assert code == 2 and "--sigma does not apply" in err, err


@pytest.mark.parametrize("domain", ["primal", "dual"])
def test_the_measured_decay_on_the_spde_mesh_matches_the_computed_rate(domain):
    """Started on the slowest mode of the random-scan Gibbs chain (z0 = D^-1/2 u, u the eigenvector of the smallest
    eigenvalue of D^-1/2 M D^-1/2, M = Q or R), the mean over chains of w^T z_k / w^T z0 (w = D z0) decays as r^k with
    r the rate convergence_rates computes. The slope of its logarithm over 40 sweeps, 4000 chains, is within 10% of
    -ln r: its standard error is far below 1% (fixed seeds), so a correct sampler and rate fail with negligible
    probability, and a rate off by 10% fails."""
    m = dg.Model.from_precision(spde_matrix())
    M = (m.Q if domain == "primal" else m.R).toarray()
    d = np.diag(M)
    lam, vec = np.linalg.eigh(M / np.sqrt(np.outer(d, d)))
    z0 = vec[:, 0] / np.sqrt(d)
    w = d * z0
    # Scaled so that the stationary sd of w^T z is 1e-3 of w^T z0: the noise (1e-3 / sqrt(4000) relative at the
    # start, e^{40 |ln r|} times more by the end, at most 0.5% here) cannot reach the signal.
    scale = 1e3 * np.sqrt(w @ np.linalg.solve(M, w)) / (w @ z0)
    z0, w = scale * z0, scale * w
    rates = dg.convergence_rates(m)
    r = rates["rate_primal" if domain == "primal" else "rate_dual"]
    z = dg.sample(m, domain=domain, chains=4000, sweeps=40, every=1, init="given", initial_state=z0, seed=21,
                  draws="x" if domain == "primal" else "y")
    ratio = (z @ w).mean(axis=1) / (w @ z0)  # checkpoints 0..40
    k = np.arange(len(ratio))
    slope = np.polyfit(k[1:], np.log(ratio[1:]), 1)[0]
    assert abs(slope / np.log(r) - 1) < 0.10, (slope, np.log(r))


@pytest.mark.parametrize("scheme,scan", [("ssor", "random"), ("cheby-ssor", "random"), ("gibbs", "colored")])
def test_every_sweep_scheme_runs_the_weighted_dual(scheme, scan):
    """The dual sweep schemes on a signed model (weighted incidence): SSOR and Chebyshev-SSOR (the relaxed update
    through conditional_mean and set_site) and the coloured sweep, judged by validate_draws at alpha = 1e-6 per call
    (three calls; fixed seeds)."""
    m = dg.Model.from_precision(signed_matrix())
    assert not m.unit_incidence
    x = dg.sample(m, domain="dual", chains=4000, sweeps=120, seed=31, scheme=scheme, scan=scan)
    report = dg.validate_draws(m, x, "dual-x", alpha=1e-6)
    assert report["consistent"], report["worst"][:3]
