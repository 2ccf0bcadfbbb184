"""info, marginals, bench, run_convergence and run_experiment return the command's record: the keys of
`dualgibbs SUBCOMMAND --json` and, for the same model, seed and threads, the same values (timings, the machine's
load and the description of the model aside: a Model has no graph spec, so Python's `graph` is its summary)."""
import json
import re

import numpy as np
import pytest

import dualgibbs as dg
from conftest import run_cli

TIMING = re.compile(r"(seconds|ns_per_update|_per_second|cpu|wall|^load_average$|^command$)")


def cli_json(cli, *args):
    code, out, err = run_cli(cli, "--quiet", *args, "--json")
    assert code == 0, err
    return json.loads(out.decode().splitlines()[-1])


def comparable(record, drop=()):
    """The record without timings and without `drop`, nested records too; arrays as lists."""
    if isinstance(record, dict):
        return {k: comparable(v) for k, v in record.items() if not TIMING.search(k) and k not in drop}
    if isinstance(record, (list, np.ndarray)):
        return [comparable(v) for v in record]
    return record


@pytest.mark.parametrize("extra", [[], ["--no-spectra"], ["--method", "lanczos"]])
def test_info_is_the_commands_record(cli, extra):
    ref = cli_json(cli, "info", "--graph", "torus:8", "--sigma", "0.25", *extra)
    model = dg.Model.from_spec("torus:8", 1.0, 0.25)
    kwargs = {"spectra": "--no-spectra" not in extra}
    if "--method" in extra:
        kwargs["method"] = "lanczos"
    r = dg.info(model, "torus:8", **kwargs)
    assert set(r) == set(ref)
    assert comparable(r) == comparable(ref)


def test_info_without_spec_has_no_family_closed_forms():
    model = dg.Model.from_spec("torus:8", 1.0, 0.25)
    assert "lambda2_L" in dg.info(model, "torus:8")["closed_forms"]
    assert "lambda2_L" not in dg.info(model)["closed_forms"]  # Table I needs the family
    with pytest.raises(ValueError, match="unknown spectral method"):
        dg.info(model, method="qr")


@pytest.mark.parametrize("method,extra", [("dual-cv", []), ("primal-cv", ["--scheme", "ssor"]), ("exact", []),
                                          ("rbmc", []), ("rbmc-gibbs", ["--scheme", "ssor"]), ("probing", []),
                                          ("auto", [])])
def test_marginals_is_the_commands_record(cli, method, extra):
    ref = cli_json(cli, "marginals", "--graph", "torus:8", "--sigma", "0.25", "--seed", "3", "--threads", "1",
                   "--method", method, "--rel-rmse", "0.05", *extra)
    model = dg.Model.from_spec("torus:8", 1.0, 0.25)
    r = dg.marginals(model, method=method, rel_rmse=0.05, seed=3, threads=1, scheme="ssor" if extra else "gibbs")
    arrays = {"estimate", "std_error", "lower", "upper"}
    assert set(r) == set(ref) | arrays
    assert comparable(r, drop=arrays | {"graph"}) == comparable(ref, drop={"graph"})
    assert r["estimate"].shape == (64,) and r["estimate"].mean() == pytest.approx(ref["estimate_mean"], rel=1e-14)


def test_marginals_with_observations_records_the_mean(cli, tmp_path):
    obs = tmp_path / "obs.txt"
    obs.write_text("0 1.5\n3 -0.5\n")
    ref = cli_json(cli, "marginals", "--graph", "grid:5x5", "--obs-file", obs, "--method", "exact")
    model = dg.Model.from_spec("grid:5x5", obs_file=str(obs))
    r = dg.marginals(model, method="exact")
    # The command counts the file's lines as observed nodes and records the file; a Python model observes every node.
    assert set(r) == (set(ref) - {"obs_file"}) | {"estimate", "std_error", "lower", "upper", "mean"}
    assert r["observed_nodes"] == 25 and ref["observed_nodes"] == 2
    np.testing.assert_allclose(r["mean"], dg.posterior_mean(model), rtol=1e-12)
    assert r["posterior_mean_max"] == pytest.approx(ref["posterior_mean_max"], rel=1e-12)


def test_marginals_defaults_and_checks_are_the_commands():
    model = dg.Model.from_spec("cycle:12")
    assert dg.marginals(model, method="exact")["target_rel_rmse"] == 0.01
    default = dg.marginals(model)  # auto: a cycle's factor costs less than any sampling
    assert default["method"] == "exact" and default["auto_reason"].startswith("exact: predicted")
    assert default["auto_exact_seconds"] < default["auto_sampling_seconds"] and default["auto_probing_seconds"] is None
    budget = dg.marginals(model, method="dual", seconds=0.5, threads=1)
    assert budget["target_rel_rmse"] == 0 and budget["budget_seconds"] == 0.5  # a budget alone has no target
    with pytest.raises(ValueError, match="--rel-rmse"):
        dg.marginals(model, rel_rmse=0)
    with pytest.raises(ValueError, match="apply to --method primal, primal-cv and rbmc-gibbs, not dual-cv"):
        dg.marginals(model, method="dual-cv", scheme="ssor")
    cheby = dg.marginals(model, method="primal", scheme="cheby-ssor", rel_rmse=0.05, every=1, threads=1)
    assert cheby["scheme"] == "cheby-ssor" and 0 < cheby["rate_cheby_ssor"] < 1


def test_bench_is_the_commands_record(cli):
    ref = cli_json(cli, "bench", "--graph", "torus:6", "--sweeps", "3", "--repeat", "1", "--scheme", "ssor")
    r = dg.bench(dg.Model.from_spec("torus:6"), sweeps=3, repeat=1, scheme="ssor")
    assert set(r) == set(ref)
    assert comparable(r, drop={"graph"}) == comparable(ref, drop={"graph"})
    assert r["chains"] == 2 * 16 * 1 and r["updates"] == r["chains"] * 3 * r["site_updates_per_iteration"]
    with pytest.raises(ValueError, match="--repeat must be at least 1"):
        dg.bench(dg.Model.from_spec("torus:6"), repeat=0)


def test_run_convergence_is_the_commands_record(cli):
    ref = cli_json(cli, "converge", "--graph", "torus:5", "--sigma", "0.3", "--seed", "4", "--chains", "60",
                   "--sweeps", "8", "--every", "2", "--threads", "1")
    stages = []
    r = dg.run_convergence(dg.Model.from_spec("torus:5", 1.0, 0.3), chains=60, sweeps=8, every=2, seed=4, threads=1,
                           graph="torus:5", progress=lambda stage, fraction: stages.append(fraction))
    assert stages and all(0 <= f <= 1 for f in stages)  # called back with the GIL held, from the calling thread
    assert set(r) == set(ref) | {"name", "table", "extra_tables"}
    assert comparable(r, drop={"name", "table", "extra_tables"}) == comparable(ref)
    assert list(r["table"]) == ref["columns"] and r["name"] == ref["figure"] == "converge"
    with pytest.raises(ValueError, match="--lambda-min and --lambda-max would apply to both domains"):
        dg.run_convergence(dg.Model("torus:5"), scheme="cheby-ssor", omega=1.2, lambda_min=0.1, lambda_max=1.0)
    with pytest.raises(ValueError, match="--full-max must be at least 1"):
        dg.run_convergence(dg.Model("torus:5"), full_max=0)


def test_run_experiment_is_the_commands_record(cli, tmp_path):
    ref = cli_json(cli, "reproduce", "fig10", "--quick", "--threads", "1", "--out", tmp_path, "--no-plot",
                   "--init", "random", "--init-scale", "2")
    r = dg.run_experiment("fig10", quick=True, threads=1, init="random", init_scale=2.0)
    assert set(r) == set(ref) | {"name", "table", "extra_tables"}
    assert comparable(r, drop={"name", "table", "extra_tables"}) == comparable(ref)
    assert r["command"] == "dualgibbs reproduce fig10 --quick --seed 1 --threads 1 --init random --init-scale 2"
    with pytest.raises(ValueError, match="--init-value applies only with --init constant"):
        dg.run_experiment("fig10", quick=True, init_value=2.0)
