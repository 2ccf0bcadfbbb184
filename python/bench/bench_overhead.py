"""Python overhead of dualgibbs: import time and sample() against the command line for the same 10^7 updates.

Usage (from the source tree, after the build):
    PYTHONPATH=build/python /usr/bin/python3 python/bench/bench_overhead.py [--cli build/bin/dualgibbs] [--repeats 7]

Prints JSON. Every figure is a median over interleaved repeats, next to its baseline from the same run:
  - import: `import dualgibbs` in a fresh interpreter, against `import numpy, scipy.sparse` alone (which the package
    imports anyway) and against an empty interpreter start;
  - sample: the dual sampler on the 100 x 100 torus, 50 chains x 10 sweeps x 20000 edges = 10^7 updates, one thread;
    the wall time of the whole sample() call (array allocation, the run, copying the draws into the array) against
    the sampling time the command reports for the same run (`dualgibbs sample --json`: "seconds", the run without
    writing), and the library's own sampling time inside sample() (stats["seconds"]) against the same; and
    end to end: building the model and calling sample() against the command's whole process (start-up, model,
    the run, writing the draws to /dev/null). The run's set-up (sampler blocks, initial states), about 40 ms here,
    is outside both tools' "seconds" and inside both end-to-end times.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def fresh_import_seconds(code):
    """Wall time of `code` in a fresh interpreter, measured inside it (interpreter start-up excluded)."""
    prog = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True, env=os.environ)
    return float(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(SOURCE, "build", "bin", "dualgibbs"))
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    imports = {"dualgibbs": [], "numpy+scipy.sparse": [], "nothing": []}
    for _ in range(args.repeats):
        imports["dualgibbs"].append(fresh_import_seconds("import dualgibbs"))
        imports["numpy+scipy.sparse"].append(fresh_import_seconds("import numpy, scipy.sparse"))
        imports["nothing"].append(fresh_import_seconds("pass"))

    import dualgibbs as dg

    graph, s, sigma, chains, sweeps, seed = "torus:100", 1.0, 0.25, 50, 10, 1
    model = dg.Model.from_spec(graph, s, sigma, seed=seed)
    updates = chains * sweeps * model.num_edges
    py_call, py_lib, cli_sampling, cli_process, py_end_to_end = [], [], [], [], []
    dg.sample(model, domain="dual", chains=chains, sweeps=sweeps, seed=seed, threads=1)  # warm-up
    for _ in range(args.repeats):
        t = time.perf_counter()
        out = subprocess.run([args.cli, "sample", "--graph", graph, "--s", str(s), "--sigma", str(sigma), "--seed",
                              str(seed), "--domain", "dual", "--chains", str(chains), "--sweeps", str(sweeps),
                              "--threads", "1", "--format", "binary", "-o", "/dev/null", "--json"],
                             capture_output=True, text=True, check=True)
        cli_process.append(time.perf_counter() - t)
        cli_sampling.append(json.loads(out.stdout)["seconds"])
        t = time.perf_counter()
        fresh = dg.Model.from_spec(graph, s, sigma, seed=seed)
        dg.sample(fresh, domain="dual", chains=chains, sweeps=sweeps, seed=seed, threads=1)
        py_end_to_end.append(time.perf_counter() - t)
        t = time.perf_counter()
        _, st = dg.sample(model, domain="dual", chains=chains, sweeps=sweeps, seed=seed, threads=1, return_stats=True)
        py_call.append(time.perf_counter() - t)
        py_lib.append(st["seconds"])

    med = statistics.median
    print(json.dumps({
        "loadavg": os.getloadavg(),
        "repeats": args.repeats,
        "import_seconds_median": {k: med(v) for k, v in imports.items()},
        "import_dualgibbs_minus_numpy_scipy": med(imports["dualgibbs"]) - med(imports["numpy+scipy.sparse"]),
        "sample": {
            "graph": graph, "domain": "dual", "chains": chains, "sweeps": sweeps, "updates": updates, "threads": 1,
            "python_call_seconds_median": med(py_call),
            "python_library_seconds_median": med(py_lib),
            "cli_sampling_seconds_median": med(cli_sampling),
            "ratio_python_call_to_cli": med(py_call) / med(cli_sampling),
            "ratio_python_library_to_cli": med(py_lib) / med(cli_sampling),
            "cli_process_seconds_median": med(cli_process),
            "python_model_and_call_seconds_median": med(py_end_to_end),
            "ratio_python_model_and_call_to_cli_process": med(py_end_to_end) / med(cli_process),
            "python_call_seconds": py_call, "cli_sampling_seconds": cli_sampling,
        },
    }, indent=2))


if __name__ == "__main__":
    main()
