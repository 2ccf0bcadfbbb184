"""validate_draws against `dualgibbs validate`: the same truth (with the posterior mean for primal draws of a model
with observations) and the same report fields for the same draws."""
import json

import numpy as np
import pytest

import dualgibbs as dg
from conftest import run_cli

TIMING = ("truth_seconds", "read_seconds", "read_cpu_seconds", "validate_seconds", "validate_cpu_seconds")
# Fields about the file (Python's draws are an array) and the command line.
FILE_FIELDS = ("draws_file", "format", "graph", "files")


def test_posterior_draws_are_consistent_and_zero_mean_draws_are_not():
    """Exact posterior draws x + mu (x from N(0, Q^-1) by CHOLMOD) of a model with observations are judged
    consistent: at alpha = 1e-6 a correct sampler fails with probability at most 1e-6 (Bonferroni), and the seeds
    are fixed. The same draws without mu (the prior's zero mean) are off by |mu_v| / (sd_v / sqrt(2000)), tens of
    standard errors for observations of unit scale, and must be judged inconsistent by the mean tests."""
    z = np.random.default_rng(20).normal(size=100)
    m = dg.Model("grid:10x10", s=0.5, sigma=0.3, observations=z)
    mu = dg.posterior_mean(m)
    x = dg.CholeskyFactor(m.Q).sample(2000, seed=5)
    assert x.shape == (2000, 100) and mu.shape == (100,)
    ok = dg.validate_draws(m, x + mu, "primal", alpha=1e-6)
    assert ok["consistent"], ok["worst"][:3]
    bad = dg.validate_draws(m, x, "primal", alpha=1e-6)
    assert not bad["consistent"]
    assert bad["worst"][0]["test"] in ("mean", "global")


def assert_same(cli_value, py_value, where):
    if isinstance(cli_value, dict):
        assert isinstance(py_value, dict), where
        for key, value in cli_value.items():
            if key in TIMING or key in FILE_FIELDS:
                continue
            assert key in py_value, f"{where}.{key} missing in Python's report"
            assert_same(value, py_value[key], f"{where}.{key}")
    elif isinstance(cli_value, list):
        assert len(cli_value) == len(py_value), where
        for k, (a, b) in enumerate(zip(cli_value, py_value)):
            assert_same(a, b, f"{where}[{k}]")
    else:
        assert cli_value == py_value, f"{where}: command {cli_value!r}, Python {py_value!r}"


CASES = [
    # (graph, domain of sample, validate's domain, extra sample options, with observations)
    ("grid:4x5", "primal", "primal", ["--every", "20"], True),
    ("cycle:30", "dual", "dual-x", [], False),
    ("path:12", "dual", "dual-y", ["--draws", "y", "--every", "30"], False),
]


@pytest.mark.parametrize("graph,domain,kind,extra,obs", CASES, ids=[c[2] for c in CASES])
def test_command_and_python_report_the_same_fields(cli, tmp_path, graph, domain, kind, extra, obs):
    obs_args = []
    if obs:
        (tmp_path / "obs.txt").write_text("0 1.5\n3 -0.5\n7 2.0\n")
        obs_args = ["--obs-file", tmp_path / "obs.txt"]
    draws_path = tmp_path / "draws.csv"
    code, _, err = run_cli(cli, "sample", "--graph", graph, "--domain", domain, "--chains", 300, "--sweeps", 60,
                           "--seed", 3, "-o", draws_path, "--quiet", *obs_args, *extra)
    assert code == 0, err
    code, out, err = run_cli(cli, "validate", "--graph", graph, "--draws", draws_path, "--domain", kind, "--json",
                             *obs_args)
    assert code in (0, 3), err
    report = json.loads(out)
    table = np.loadtxt(draws_path, delimiter=",", skiprows=1)
    sweeps = np.unique(table[:, 0])
    draws = table[:, 2:].reshape(len(sweeps), 300, -1)
    model = dg.Model.from_spec(graph, 1.0, 0.1, obs_file=str(tmp_path / "obs.txt") if obs else None)
    mine = dg.validate_draws(model, draws, kind, sweeps=sweeps)
    assert_same(report, mine, "report")
    assert mine["kind"] == kind and mine["format"] == "array"
    assert len(mine["checkpoints"][0]["mean_z_values"]) == draws.shape[2]
