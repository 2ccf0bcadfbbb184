"""The exact functions against dense numpy/scipy linear algebra on the same matrices, and the samplers' moments
against the exact marginal variances."""
import math

import networkx as nx
import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse.linalg as spla
import scipy.stats as st

import dualgibbs as dg


def hetero_model():
    rng = np.random.default_rng(3)
    g = dg.Graph.from_networkx(nx.connected_watts_strogatz_graph(24, 4, 0.3, seed=8))
    return dg.Model(g, rng.uniform(0.6, 1.4, g.num_nodes), rng.uniform(0.2, 0.6, g.num_edges))


MODELS = {"torus": lambda: dg.Model("torus:6x5", 1.0, 0.3), "hetero ws": hetero_model}


@pytest.mark.parametrize("name", MODELS)
def test_exact_against_dense(name):
    model = MODELS[name]()
    Q, R = model.Q.toarray(), model.R.toarray()
    Qi, Ri = np.linalg.inv(Q), np.linalg.inv(R)
    assert dg.log_det(model) == pytest.approx(np.linalg.slogdet(Q)[1], rel=1e-12)
    assert dg.log_det(model, "dual") == pytest.approx(np.linalg.slogdet(R)[1], rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(dg.marginal_variances(model), np.diag(Qi), rtol=1e-11)
    np.testing.assert_allclose(dg.marginal_variances(model, "dual"), np.diag(Ri), rtol=1e-11)
    B = model.B.toarray()
    np.testing.assert_allclose(dg.dual_node_variances(model), np.diag(B @ Ri @ B.T), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dg.covariance(model), Qi, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(dg.covariance(model, "dual"), Ri, rtol=1e-10, atol=1e-14)
    e = dg.entropy(model)
    n = model.num_nodes
    assert e["primal"] == pytest.approx(n / 2 * math.log(2 * math.pi * math.e) - np.linalg.slogdet(Q)[1] / 2)


def test_cholesky_factor():
    model = hetero_model()
    Q = model.Q
    f = dg.CholeskyFactor(Q, ordering="metis")
    b = np.linspace(-1, 1, Q.shape[0])
    x = f.solve(b)
    assert x.shape == b.shape
    np.testing.assert_allclose(x, spla.spsolve(Q.tocsc(), b), rtol=1e-11)
    X = f.solve(np.stack([b, 2 * b], axis=1))
    np.testing.assert_allclose(X[:, 1], 2 * x, rtol=1e-12)
    Qi = np.linalg.inv(Q.toarray())
    np.testing.assert_allclose(f.marginal_variances(), np.diag(Qi), rtol=1e-11)
    Z = f.selected_inverse(Q)
    rows, cols = Q.nonzero()
    np.testing.assert_allclose(np.asarray(Z[rows, cols]).ravel(), Qi[rows, cols], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(f.inverse(), Qi, rtol=1e-11, atol=1e-14)
    draws = f.sample(5, seed=2)
    assert draws.shape == (5, Q.shape[0])
    np.testing.assert_array_equal(draws, f.sample(5, seed=2))
    assert f.log_determinant() == pytest.approx(np.linalg.slogdet(Q.toarray())[1], rel=1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_spectra_and_rates_against_dense(name):
    model = MODELS[name]()
    L = model.L.toarray()
    lam2 = np.linalg.eigvalsh(L)[1]
    assert dg.algebraic_connectivity(model.graph) == pytest.approx(lam2, rel=1e-9)
    r = dg.convergence_rates(model)
    for domain, M in (("primal", model.Q.toarray()), ("dual", model.R.toarray())):
        d = 1 / np.sqrt(np.diag(M))
        lmax = 1 - np.linalg.eigvalsh(d[:, None] * M * d[None, :])[0]  # A = I - D^-1 M  [eqn:AGen]
        assert dg.lambda_max_A(model, domain) == pytest.approx(lmax, rel=1e-9)
        assert r[f"lambda_max_A_{domain}"] == pytest.approx(lmax, rel=1e-9)
        n = M.shape[0]
        assert r[f"rate_{domain}"] == pytest.approx(((n - 1 + lmax) / n) ** n, rel=1e-9)  # [eqn:primalrate]
    assert dg.torus_marginal_variance(6, 5, 1.0, 0.3) == pytest.approx(dg.marginal_variances(MODELS["torus"]())[0])


# ---- moments of the samplers against the exact truth ---------------------------------------------------------------

def sweeps_to_converge(rate):
    """Sweeps after which the initial error of the second moments (order 1) has decayed below 1e-9: rate^(2t)."""
    return int(math.ceil(math.log(1e-9) / (2 * math.log(rate))))


@pytest.mark.parametrize("domain,draws", [("primal", "x"), ("dual", "x"), ("dual", "y")])
def test_sample_moments_match_exact(domain, draws):
    """Independent chains (lockstep 1) run to convergence: each coordinate's sample mean and variance against the
    exact mean 0 and the exact variance. Per coordinate the mean's z is N(0, 1) and (n-1) S^2 / var is chi^2_{n-1}
    exactly (independent Gaussian draws); the remaining initial error is below 1e-9, far under the 1/sqrt(n) noise.
    Bonferroni over the 2 x dim tests at a total false-failure probability of 1e-6."""
    model = hetero_model()
    rates = dg.convergence_rates(model)
    rate = rates["rate_primal"] if domain == "primal" else rates["rate_dual"]
    n = 4000
    x = dg.sample(model, domain=domain, draws=draws, chains=n, sweeps=sweeps_to_converge(rate), seed=2024,
                  init="random")
    if domain == "primal":
        exact = dg.marginal_variances(model)
    elif draws == "y":
        exact = dg.marginal_variances(model, "dual")
    else:
        exact = dg.dual_node_variances(model)
    dim = x.shape[1]
    p_each = 1e-6 / (2 * dim)
    z_mean = x.mean(axis=0) / np.sqrt(exact / n)
    assert np.abs(z_mean).max() < st.norm.isf(p_each / 2), f"mean z {np.abs(z_mean).max()}"
    stat = (n - 1) * x.var(axis=0, ddof=1) / exact
    assert (stat > st.chi2.ppf(p_each / 2, n - 1)).all() and (stat < st.chi2.isf(p_each / 2, n - 1)).all()


def test_validate_draws_accepts_exact_draws_and_rejects_scaled_ones():
    """validate_draws (docs/validate.md) on exact CHOLMOD draws: consistent with probability >= 1 - alpha = 1 - 1e-6
    by its Bonferroni rule; the same draws scaled by 1.5 (variances x 2.25, n = 2000) fail every variance test."""
    model = hetero_model()
    draws = dg.CholeskyFactor(model.Q).sample(2000, seed=4)
    ok = dg.validate_draws(model, draws, "primal", alpha=1e-6)
    assert ok["consistent"] and ok["tests"] > 0
    bad = dg.validate_draws(model, 1.5 * draws, "primal", alpha=1e-6)
    assert not bad["consistent"]
    assert bad["worst"][0]["test"] in ("variance", "edge", "global")


def test_marginals_exact_and_bracket():
    model = hetero_model()
    exact = np.diag(np.linalg.inv(model.Q.toarray()))
    r = dg.marginals(model, method="exact")
    np.testing.assert_allclose(r["estimate"], exact, rtol=1e-11)
    cv = dg.marginals(model, method="dual-cv", rel_rmse=0.02, seed=3, threads=1)
    assert cv["method"] == "dual-cv" and cv["reached_target"] and cv["gap_ratio_rms"] > 0
    # The control variate's bracket is certified (docs/accuracy.md): l_v <= V_v <= E_v, no sampling involved.
    assert (cv["lower"] <= exact * (1 + 1e-10)).all() and (exact <= cv["upper"] * (1 + 1e-10)).all()
    # The estimate against the exact values with its own standard errors, which come from 16 independent chains: a
    # Student-t bound with 15 degrees of freedom, Bonferroni over the nodes (false-failure probability <= 1e-6 for
    # normal estimates, as tests/test_marginals.cpp; the per-chain means of u_v^2 are skewed, so it is approximate).
    # The earlier bound |z| < 6 ignored the estimated standard errors' 15 degrees of freedom: over 40 seeds of this
    # model with a fixed degree 5 and burn-ins of 84, 112 or 300 sweeps the largest |z| was 8.3, 8.5 and 6.6.
    z_max = st.t.isf(1e-6 / (2 * len(exact)), cv["chains"] - 1)
    assert (np.abs(cv["estimate"] - exact) < z_max * cv["std_error"]).all()
    # Rao-Blackwellized Monte Carlo: the certified lower bound 1/Q_vv, no upper bound, the same z-test (100 draws per
    # batch: the 15-degree threshold above is conservative for it).
    rb = dg.marginals(model, method="rbmc", rel_rmse=0.02, seed=3, threads=1)
    np.testing.assert_array_equal(rb["lower"], 1.0 / model.Q.diagonal())
    assert np.isnan(rb["upper"]).all() and (rb["lower"] < exact).all()
    assert (np.abs(rb["estimate"] - exact) < z_max * rb["std_error"]).all()


def test_quick_figure_runs():
    assert list(dg.figures()) == ["fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "accuracy", "rates", "accel"]
    stages = []
    r = dg.run_experiment("fig10", quick=True, threads=1, progress=lambda s, f: stages.append(f))
    assert r["name"] == "fig10" and r["table"] and stages
    cols = list(r["table"].values())
    assert all(len(c) == len(cols[0]) for c in cols)


def test_closed_forms_against_the_papers_formulas():
    s, sigma, n = 1.0, 0.3, 8
    model = dg.Model(f"torus:{n}", s, sigma)
    c = dg.closed_forms(model, f"torus:{n}")
    assert c["lambda2_L"][0] == pytest.approx(4 * math.sin(math.pi / n) ** 2, rel=1e-14)  # Table I
    assert c["lambda_max_A_dual"][0] == pytest.approx(2 * s**2 / (sigma**2 + 2 * s**2), rel=1e-14)  # Prop. 4
    assert c["lambda_max_A_primal"][0] == pytest.approx(4 * s**2 / (sigma**2 + 4 * s**2), rel=1e-14)  # Prop. 1
    assert c["marginal_variance"][0] == pytest.approx(dg.marginal_variances(model)[0], rel=1e-10)
    assert "Prop. 4" in c["lambda_max_A_dual"][1]
    assert "lambda2_L" not in dg.closed_forms(model)  # no family without the spec
    hetero = dg.Model(f"torus:{n}", np.full(n * n, 1.0), np.linspace(0.2, 0.4, 2 * n * n))
    assert set(dg.closed_forms(hetero)) <= {"lambda2_L"}


def test_run_convergence_equals_the_command(cli, tmp_path):
    """run_convergence and `dualgibbs converge` on the same model and seed: the same error table (the command's CSV
    carries 10 significant digits; the time columns differ run to run)."""
    from conftest import run_cli
    code, _, err = run_cli(cli, "converge", "--graph", "torus:6", "--s", 1, "--sigma", 0.3, "--seed", 5,
                           "--chains", 60, "--sweeps", 12, "--every", 3, "--threads", 2, "--out", tmp_path,
                           "--no-plot", "--quiet")
    assert code == 0, err
    ref = np.genfromtxt(tmp_path / "converge.csv", delimiter=",", names=True)
    r = dg.run_convergence(dg.Model.from_spec("torus:6", 1.0, 0.3, seed=5), chains=60, sweeps=12, every=3, seed=5,
                           threads=1, graph="torus:6")
    table = r["table"]
    assert list(table) == list(ref.dtype.names)
    for col in table:
        if not col.startswith("time"):
            np.testing.assert_allclose(table[col], ref[col], rtol=1e-9, atol=1e-300, err_msg=col)


def test_exact_report_is_the_commands(cli, tmp_path):
    """dg.exact gives the fields of `dualgibbs exact --json` (timings aside) and the columns of its CSV files. A model
    does not remember how many nodes its observation file named: Python counts every node of a model with a mean."""
    import json

    from conftest import run_cli

    (tmp_path / "obs.txt").write_text("0 1.5\n3 -0.5\n7 2.0\n")
    for spec, sigma, obs in (("torus:8", 0.3, None), ("grid:6x5", 0.1, str(tmp_path / "obs.txt"))):
        args = ["exact", "--graph", spec, "--sigma", sigma, "--json", "--marginals", tmp_path / "n.csv",
                "--edge-marginals", tmp_path / "e.csv"] + (["--obs-file", obs] if obs else [])
        code, out, err = run_cli(cli, *args)
        assert code == 0, err
        report = json.loads(out)
        model = dg.Model.from_spec(spec, 1.0, sigma, obs_file=obs)
        mine = dg.exact(model, spec=spec, edge_variances=True)
        for key, value in report.items():
            if "seconds" not in key and key != "observed_nodes":
                assert mine[key] == value, key
        nodes = np.loadtxt(tmp_path / "n.csv", delimiter=",", skiprows=1)
        edges = np.loadtxt(tmp_path / "e.csv", delimiter=",", skiprows=1)
        np.testing.assert_array_equal(mine["variance"], nodes[:, 1])
        if obs:
            np.testing.assert_array_equal(mine["mean"], nodes[:, 2])
        np.testing.assert_array_equal(mine["variance_Y"], edges[:, 3])
        np.testing.assert_array_equal(mine["variance_dual"], edges[:, 4])
    assert "torus_marginal_variance" in dg.exact(dg.Model("torus:5"), spec="torus:5")
    assert "torus_marginal_variance" not in dg.exact(dg.Model("torus:5"))
