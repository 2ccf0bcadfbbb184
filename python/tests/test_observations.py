"""Observations from Python: the model with a mean, posterior_mean against scipy, the samplers of
N(mu, Q^-1) against the exact mean, the command's bits and --obs-file, bad input."""
import numpy as np
import pytest
import scipy.sparse.linalg
import scipy.stats

import dualgibbs as dg

from conftest import run_cli
from test_sample_cli import read_binary


def hetero_posterior(spec="grid:7x6", seed=3):
    g = dg.Graph.from_spec(spec)
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.2, 0.5, g.num_nodes)
    sigma = rng.uniform(0.1, 0.3, g.num_edges)
    z = rng.normal(1.0, 0.5, g.num_nodes)
    return dg.Model(g, s=s, sigma=sigma, observations=z), s, z


def test_model_with_observations():
    m, s, z = hetero_posterior()
    assert m.has_mean
    np.testing.assert_array_equal(m.observations, z)
    np.testing.assert_allclose(m.canonical_vector, z / s**2, rtol=1e-15)
    prior = m.without_mean()
    assert not prior.has_mean and prior.observations is None and prior.canonical_vector is None
    assert abs(prior.Q - m.Q).max() == 0  # the mean does not change Q
    h = np.arange(m.num_nodes, dtype=float)
    m2 = dg.Model(m.graph, s=s, sigma=m.sigma, canonical_vector=h)
    assert m2.observations is None
    np.testing.assert_array_equal(m2.canonical_vector, h)
    m3 = m2.with_observations(z)
    assert m2.observations is None  # with_* returns a copy: a Model is immutable from Python
    np.testing.assert_array_equal(m3.canonical_vector, m.canonical_vector)
    np.testing.assert_array_equal(m.without_mean().with_canonical_vector(h).canonical_vector, h)


@pytest.mark.parametrize("spec", ["grid:7x6", "ws:40,4,0.3,2", "path:30"])
def test_posterior_mean_against_scipy(spec):
    m, s, z = hetero_posterior(spec)
    exact = scipy.sparse.linalg.spsolve(m.Q.tocsc(), z / s**2)
    np.testing.assert_allclose(dg.posterior_mean(m), exact, rtol=1e-10, atol=1e-12)
    mu, info = dg.posterior_mean(m, solver="cg", tolerance=1e-12, return_info=True)
    assert info["solver"] == "cg" and info["iterations"] > 0 and info["relative_residual"] <= 1e-12
    # error <= cond(Q) * tolerance (docs/observations.md); cond(Q) of these models is below 1e3
    assert np.linalg.norm(mu - exact) <= 1e3 * 1e-12 * np.linalg.norm(exact)
    mu_c, info_c = dg.posterior_mean(m, return_info=True)
    assert info_c["solver"] == "cholesky" and info_c["iterations"] == 0 and info_c["relative_residual"] < 1e-12
    np.testing.assert_array_equal(dg.posterior_mean(m.without_mean()), np.zeros(m.num_nodes))


def test_canonical_vector_mean():
    m, s, z = hetero_posterior()
    h = np.random.default_rng(9).normal(size=m.num_nodes)
    m = m.with_canonical_vector(h)
    np.testing.assert_allclose(dg.posterior_mean(m), scipy.sparse.linalg.spsolve(m.Q.tocsc(), h), rtol=1e-10)


def test_obs_file_as_the_command_reads_it(tmp_path):
    z = np.random.default_rng(4).normal(size=25)
    f = tmp_path / "z.txt"
    f.write_text("# observations\n" + "".join(f"{v} {z[v]!r}\n" for v in range(25) if v != 7))
    m = dg.Model.from_spec("torus:5", 0.5, 0.2, obs_file=str(f))
    expect = z.copy()
    expect[7] = 0.0  # a node without a line observes 0
    np.testing.assert_array_equal(m.observations, expect)


def test_sampled_mean_against_exact():
    # Primal chains of N(mu, Q^-1), 4000 independent chains from the constant start 1.0. After `sweeps` the mean's
    # remaining bias is below rate^sweeps * max|mu - 1| (rate: the random sweep's predicted per-sweep contraction,
    # from convergence_rates), which the sweeps make < 1e-3 standard errors. Each node's chain mean is then normal
    # with variance Var(X_v) / chains (exact, selected inversion): |z| <= 5.85 for all 42 nodes fails with
    # probability <= 42 * 2 * Phi(-5.85) < 1e-6 (Bonferroni). A mean off by 0.1 sd at a node gives z ~ 6.3.
    m, s, z = hetero_posterior()
    mu = dg.posterior_mean(m)
    var = dg.marginal_variances(m)
    chains = 4000
    rate = dg.convergence_rates(m)["rate_primal"]
    bias_bound_target = 1e-3 * np.sqrt(var.min() / chains)
    sweeps = int(np.ceil(np.log(bias_bound_target / np.abs(mu - 1).max()) / np.log(rate)))
    x, stats = dg.sample(m, domain="primal", chains=chains, sweeps=sweeps, seed=11, return_stats=True)
    np.testing.assert_allclose(stats["mean"], mu, rtol=1e-12)
    zscore = (x.mean(axis=0) - mu) / np.sqrt(var / chains)
    assert np.abs(zscore).max() <= 5.85, (np.abs(zscore).max(), sweeps)
    # and the variances are those of the prior's Q: chi^2 per node, Bonferroni over 42 nodes at 1e-6
    dof = chains - 1
    ratio = x.var(axis=0, ddof=1) * dof / var
    lo, hi = scipy.stats.chi2.ppf([1e-6 / 84, 1 - 1e-6 / 84], dof)
    assert ((ratio > lo) & (ratio < hi)).all()


def test_dual_samples_the_fluctuation():
    # The dual chains of a model with a mean are those of the model without it (the dual has no data term): the
    # same bits for the same seed, and stats['mean'] carries mu.
    m, s, z = hetero_posterior()
    x, stats = dg.sample(m, domain="dual", chains=20, sweeps=30, seed=5, return_stats=True)
    np.testing.assert_array_equal(x, dg.sample(m.without_mean(), domain="dual", chains=20, sweeps=30, seed=5))
    np.testing.assert_allclose(stats["mean"], dg.posterior_mean(m), rtol=1e-12)
    _, stats0 = dg.sample(m.without_mean(), chains=2, sweeps=1, return_stats=True)
    assert "mean" not in stats0


def test_primal_draws_equal_the_command(cli, tmp_path):
    z = np.random.default_rng(8).normal(2.0, 1.0, 36)
    f = tmp_path / "z.txt"
    f.write_text("".join(f"{v} {z[v]!r}\n" for v in range(36)))
    m = dg.Model.from_spec("torus:6", 0.5, 0.3, obs_file=str(f))
    x = dg.sample(m, domain="primal", chains=7, sweeps=13, seed=21)
    out = tmp_path / "draws.bin"
    code, _, err = run_cli(cli, "sample", "--graph", "torus:6", "--s", 0.5, "--sigma", 0.3, "--obs-file", f,
                           "--domain", "primal", "--chains", 7, "--sweeps", 13, "--seed", 21, "--format", "binary",
                           "-o", out, "--quiet")
    assert code == 0, err
    blocks, sweeps = read_binary(out)
    assert sweeps == [13]
    np.testing.assert_array_equal(blocks[0], x)
    assert abs(x.mean() - 2.0) < 0.5  # the draws are around the data, not around 0


def test_bad_input(tmp_path):
    m, s, z = hetero_posterior()
    g = m.graph
    with pytest.raises(ValueError, match="41 observations given for 42"):
        dg.Model(g, s=0.3, sigma=0.2, observations=z[:-1])
    bad = z.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="node 5 = nan is not finite"):
        dg.Model(g, s=0.3, sigma=0.2, observations=bad)
    with pytest.raises(ValueError, match="not both"):
        dg.Model(g, observations=z, canonical_vector=z)
    with pytest.raises(ValueError, match="one-dimensional"):
        dg.Model(g, observations=z.reshape(7, 6))
    with pytest.raises(ValueError, match="canonical vector"):
        dg.Model(g, canonical_vector=np.ones(3))
    with pytest.raises(TypeError):
        dg.Model(g, observations="abc")
    with pytest.raises(TypeError, match="not None"):
        m.with_observations(None)
    with pytest.raises(ValueError, match="tolerance = 1.5 is not in"):
        dg.posterior_mean(m, solver="cg", tolerance=1.5)
    with pytest.raises(ValueError, match="unknown mean solver .lu."):
        dg.posterior_mean(m, solver="lu")
    with pytest.raises(dg.SolverNotConvergedError, match="conjugate gradients"):
        dg.posterior_mean(m, solver="cg", tolerance=1e-14, max_iterations=1)
    assert issubclass(dg.SolverNotConvergedError, dg.NumericalError)
    f = tmp_path / "z.txt"
    f.write_text("0 1.0\n99 2.0\n")
    with pytest.raises(ValueError, match="99"):
        dg.Model.from_spec("torus:5", 0.5, 0.2, obs_file=str(f))
    with pytest.raises(ValueError):
        dg.Model.from_spec("torus:5", 0.5, 0.2, obs_file=str(tmp_path / "missing.txt"))
