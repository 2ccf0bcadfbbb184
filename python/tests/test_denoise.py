"""examples/denoise.py's building blocks against dense linear algebra: the Laplacian's pseudo-determinant, the
evidence (the restricted likelihood of the contrasts, computed by scipy from the covariance directly), the posterior
mean, the search, bad input. The whole example runs as the ctest test example_denoise (--quick)."""
import importlib.util
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
import scipy.stats

import dualgibbs as dg

from conftest import SOURCE_DIR


@pytest.fixture(scope="module")
def denoise():
    spec = importlib.util.spec_from_file_location("denoise", SOURCE_DIR / "examples" / "denoise.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("spec", ["grid:5x7", "ws:30,4,0.3,2", "path:2", "complete:6"])
def test_log_pseudo_det_laplacian(denoise, spec):
    g = dg.Graph.from_spec(spec)
    L = dg.Model(g).L.toarray()
    eig = np.linalg.eigvalsh(L)
    assert eig[0] == pytest.approx(0, abs=1e-9) and eig[1] > 1e-9  # connected
    assert denoise.log_pseudo_det_laplacian(g) == pytest.approx(np.sum(np.log(eig[1:])), rel=1e-10)


def restricted_log_likelihood(L, s, sigma, z):
    """log N(K^T z; 0, K^T (sigma^2 L^+ + D_s) K), K an orthonormal basis of the complement of the constants."""
    n = len(z)
    K = scipy.linalg.null_space(np.ones((1, n)))
    C = sigma**2 * np.linalg.pinv(L) + np.diag(s**2)
    return scipy.stats.multivariate_normal(np.zeros(n - 1), K.T @ C @ K).logpdf(K.T @ z)


@pytest.mark.parametrize("sigma", [0.03, 0.2, 1.5])
def test_evidence_is_the_restricted_likelihood(denoise, sigma):
    g = dg.Graph.from_spec("grid:6x5")
    rng = np.random.default_rng(5)
    s = rng.uniform(0.1, 0.3, g.num_nodes)  # per-pixel noise sd
    z = rng.normal(0.5, 0.3, g.num_nodes)
    ev = denoise.Evidence(g, s, z)
    value, mu = ev(sigma)
    L = dg.Model(g).L.toarray()
    assert value == pytest.approx(restricted_log_likelihood(L, s, sigma, z), rel=1e-10, abs=1e-9)
    # the posterior mean of the same factorization
    Q = dg.Model(g, s=s, sigma=sigma).Q
    np.testing.assert_allclose(mu, scipy.sparse.linalg.spsolve(Q.tocsc(), z / s**2), rtol=1e-10, atol=1e-12)
    # a constant shift of z changes neither the evidence (flat on the constant) nor mu beyond the shift
    value2, mu2 = ev.__class__(g, s, z + 3.0)(sigma)
    assert value2 == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(mu2, mu + 3.0, rtol=1e-10, atol=1e-10)


def test_maximise_evidence_finds_a_known_maximum(denoise):
    calls = []

    def fake(sigma):  # maximum at sigma = 0.07, a smooth unimodal curve in log sigma
        calls.append(sigma)
        return -(math.log(sigma) - math.log(0.07)) ** 2, np.array([sigma])

    sigma, value, mu, trace = denoise.maximise_evidence(fake, tol=0.01)
    assert abs(math.log(sigma / 0.07)) < 0.01
    assert mu[0] == sigma and value == max(v for _, v, _ in trace)
    assert len(calls) == len(set(calls)) == len(trace)  # no sigma evaluated twice


def test_maximise_evidence_refuses_a_maximum_at_the_end(denoise):
    with pytest.raises(RuntimeError, match="at the end"):
        denoise.maximise_evidence(lambda sg: (-sg, None), lo=0.01, hi=1.0)


def test_evidence_maximum_near_the_generating_sigma(denoise):
    # z from the model itself: a membrane with sigma_true plus noise s. The restricted likelihood is consistent; on
    # this 60x60 grid log(sigma_hat / sigma_true) had mean -0.011 and standard deviation 0.063 over 20 seeds, so a
    # factor 1.6 (0.47 in log) is 7.5 standard deviations: false-failure probability below 1e-12 (normal tails).
    n_side, s, sigma_true = 60, 0.1, 0.05
    g = dg.Graph.from_spec(f"grid:{n_side}x{n_side}")
    rng = np.random.default_rng(11)
    # the membrane drawn exactly (CHOLMOD) from a proper version of the prior:
    prior = dg.Model(g, s=1e3, sigma=sigma_true)  # Q = I / 1e6 + L / sigma^2: the constant's sd is 1e3
    x = dg.CholeskyFactor(prior.Q).sample(1, seed=3)[0]
    z = x + s * rng.standard_normal(g.num_nodes)
    sigma, *_ = denoise.maximise_evidence(denoise.Evidence(g, s, z), lo=0.005, hi=0.5, tol=0.01)
    assert 1 / 1.6 < sigma / sigma_true < 1.6


def test_bad_input(denoise):
    g = dg.Graph.from_spec("grid:4x4")
    with pytest.raises(ValueError, match="15 observations for 16 nodes"):
        denoise.Evidence(g, 0.1, np.zeros(15))
    with pytest.raises(ValueError, match="2 components"):
        denoise.log_pseudo_det_laplacian(dg.Graph(4, np.array([[0, 1], [2, 3]])))
    with pytest.raises(ValueError, match="unknown image"):
        denoise.load_image("lena")
