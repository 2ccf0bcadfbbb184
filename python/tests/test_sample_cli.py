"""sample() against the command's bits: the same model, options and seed through `dualgibbs sample --format binary`
must give bit-identical draws (apps/cmd_sample.cpp: "DGSAMPL1", uint64 dim, chains, checkpoints; per checkpoint
uint64 sweep and chains x dim float64, chain after chain)."""
import json
import struct
import threading
import time

import numpy as np
import pytest

import dualgibbs as dg
from conftest import run_cli


def read_binary(path):
    raw = path.read_bytes()
    assert raw[:8] == b"DGSAMPL1"
    dim, chains, checkpoints = struct.unpack_from("<3Q", raw, 8)
    pos, sweeps, blocks = 32, [], []
    for _ in range(checkpoints):
        (sweep,) = struct.unpack_from("<Q", raw, pos)
        pos += 8
        blocks.append(np.frombuffer(raw, dtype="<f8", count=chains * dim, offset=pos).reshape(chains, dim))
        pos += 8 * chains * dim
        sweeps.append(sweep)
    assert pos == len(raw)
    return np.array(blocks), sweeps


CASES = [
    # (graph args for the command, sample options)
    ({"graph": "torus:6", "s": 1.0, "sigma": 0.1}, dict(domain="dual", chains=9, sweeps=17, seed=42)),
    ({"graph": "torus:6", "s": 1.0, "sigma": 0.1}, dict(domain="primal", chains=5, sweeps=30, seed=3)),
    ({"graph": "ws:40,4,0.3", "s": 0.8, "sigma": 0.3}, dict(domain="dual", chains=12, sweeps=25, seed=7, draws="y")),
    ({"graph": "grid:5x7", "s": 2.0, "sigma": 0.5}, dict(domain="dual", chains=16, sweeps=20, seed=11, lockstep=4,
                                                        scan="permutation")),
    ({"graph": "kregular:30,4", "s": 1.0, "sigma": 0.25}, dict(domain="primal", chains=6, sweeps=14, seed=5,
                                                               scan="fixed", every=4, init="random",
                                                               init_scale=2.0)),
    ({"graph": "cycle:20", "s": 1.0, "sigma": 0.2}, dict(domain="dual", chains=4, sweeps=9, seed=9, noise=False,
                                                         scan="fixed", init_value=0.5)),
    ({"graph": "file:HETERO", "s": 1.5, "sigma": 0.3, "node_file": "NODES"},
     dict(domain="dual", chains=8, sweeps=10, seed=13, every=3)),
    # the sweep schemes and the colour-ordered scan (the command's --scheme, --omega, --scan colored)
    ({"graph": "grid:5x6", "s": 1.0, "sigma": 0.1}, dict(domain="dual", chains=4, sweeps=10, seed=1, scheme="ssor")),
    ({"graph": "torus:5", "s": 1.0, "sigma": 0.1}, dict(domain="primal", chains=4, sweeps=10, seed=1,
                                                       scheme="cheby-ssor")),
    ({"graph": "cycle:20", "s": 1.0, "sigma": 0.3}, dict(domain="primal", chains=3, sweeps=9, seed=4, scheme="ssor",
                                                         omega=1.3, every=4)),
    ({"graph": "torus:6", "s": 1.0, "sigma": 0.1}, dict(domain="dual", chains=3, sweeps=8, seed=1, scan="colored")),
]


def cli_args(graph_args, opts, data_dir, out):
    args = ["sample", "--graph", graph_args["graph"].replace("HETERO", str(data_dir / "hetero_edges.txt")),
            "--s", graph_args["s"], "--sigma", graph_args["sigma"], "--seed", opts["seed"],
            "--domain", opts["domain"], "--chains", opts["chains"], "--sweeps", opts["sweeps"],
            "--format", "binary", "-o", out, "--quiet", "--threads", 2]
    if "node_file" in graph_args:
        args += ["--node-file", data_dir / "hetero_nodes.txt"]
    for key, flag in [("scan", "--scan"), ("every", "--every"), ("lockstep", "--lockstep"), ("init", "--init"),
                      ("init_value", "--init-value"), ("init_scale", "--init-scale"), ("draws", "--draws"),
                      ("scheme", "--scheme"), ("omega", "--omega")]:
        if key in opts:
            args += [flag, opts[key]]
    if opts.get("noise") is False:
        args.append("--noise-free")
    return args


@pytest.mark.parametrize("graph_args,opts", CASES,
                         ids=[f"{c[0]['graph']}-{c[1]['domain']}-{c[1].get('scheme', c[1].get('scan', 'gibbs'))}"
                              for c in CASES])
def test_sample_equals_cli_bits(cli, data_dir, tmp_path, graph_args, opts):
    out = tmp_path / "draws.bin"
    code, _, err = run_cli(cli, *cli_args(graph_args, opts, data_dir, out))
    assert code == 0, err
    ref, ref_sweeps = read_binary(out)
    node_file = str(data_dir / "hetero_nodes.txt") if "node_file" in graph_args else None
    model = dg.Model.from_spec(graph_args["graph"].replace("HETERO", str(data_dir / "hetero_edges.txt")),
                               graph_args["s"], graph_args["sigma"], node_file=node_file, seed=opts["seed"])
    for threads in (1, 3):  # the command ran on 2 threads: the draws do not depend on it
        draws, stats = dg.sample(model, threads=threads, return_stats=True, **opts)
        if opts.get("every", 0) == 0:
            assert draws.shape == ref.shape[1:]
            draws = draws[None]
        assert draws.dtype == np.float64 and draws.flags.c_contiguous
        assert stats["sweeps"] == ref_sweeps
        assert draws.tobytes() == ref.tobytes(), "draws differ from the command's"
    # The run's record is the sidecar's (but the fields about files, provenance and timing).
    sidecar = json.loads((tmp_path / "draws.bin.json").read_text())
    record = stats["record"]
    for key, value in record.items():
        if "seconds" not in key and key != "ns_per_update" and key != "threads_per_chain":
            assert sidecar[key] == value, key


def test_sample_shapes_and_defaults():
    m = dg.Model("torus:4", 1.0, 0.3)
    assert dg.sample(m).shape == (10, 16)  # the command's defaults: dual, 10 chains, x~ over nodes
    assert dg.sample(m, draws="y", chains=3, sweeps=2).shape == (3, 32)
    assert dg.sample(m, chains=2, sweeps=10, every=4).shape == (3, 2, 16)
    x0 = np.arange(16.0)
    z = dg.sample(m, domain="primal", chains=2, sweeps=0, init="given", initial_state=x0)
    np.testing.assert_array_equal(z, np.stack([x0, x0]))


def test_gil_is_released_while_sampling():
    """While sample() runs in a thread, the main thread keeps running Python: some of its iterations fall in the
    middle half of the call. With the GIL held for the whole call no Python code could run there."""
    model = dg.Model("torus:40", 1.0, 0.1)
    window = {}

    def worker():
        window["t0"] = time.perf_counter()
        dg.sample(model, domain="dual", chains=64, sweeps=200, threads=1)
        window["t1"] = time.perf_counter()

    t = threading.Thread(target=worker)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    t0, t1 = window["t0"], window["t1"]
    lo, hi = t0 + 0.25 * (t1 - t0), t1 - 0.25 * (t1 - t0)
    assert any(lo < s < hi for s in stamps), "the main thread never ran during sample()"
