#!/usr/bin/env python3
"""Writes the fixtures of the authors' published runs (Theborna/dual_gibbs) into tests/data:

- published_fig7.txt: the authors' fig7 inputs as networkx 2.8 and numpy produce them (experiments.py,
  ws_hetero_builder(mode="both", n=64, k=4, p=0.3)), for tests/test_published.cpp;
- published_torus_edges.txt: the edge list of their torus (graphs.py GMRF_Torus: networkx grid_2d_graph(r, c,
  periodic=True), node (i, j) relabelled i * c + j) in networkx's order, for tests/test_published.cpp;
- published_fig8.txt (only with the authors' repository's git directory as the argument): selected rows of their
  results/scan_torus10.csv at commit c3668a5, for tests/cli_published_fig8_long.sh.

Run: /usr/bin/python3 tests/data/make_published_fixtures.py [AUTHORS_GIT_DIR]"""
import csv
import io
import os
import subprocess
import sys

import networkx as nx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
AUTHORS_COMMIT = "c3668a5"
FIG8_SWEEPS = (0, 1, 2, 3, 4, 5, 10, 20, 50, 100)


def write_fig7(out):
    print("# networkx %s, numpy %s" % (nx.__version__, np.__version__), file=out)
    for r in (0, 1, 7, 63):
        g = nx.watts_strogatz_graph(64, 4, 0.3, seed=r)
        edges = list(g.edges())
        print("graph %d %d" % (r, len(edges)), file=out)
        for u, v in edges:
            print(u, v, file=out)
        np.random.seed(1000 + r)
        s = 0.75 + (1.5 - 0.75) * np.random.beta(1, 1, 64)
        sigma = 0.25 + (0.5 - 0.25) * np.random.beta(1, 1, len(edges))
        print("s %d" % len(s), file=out)
        print(" ".join(repr(float(x)) for x in s), file=out)
        print("sigma %d" % len(sigma), file=out)
        print(" ".join(repr(float(x)) for x in sigma), file=out)


def write_torus_edges(out):
    print("# networkx %s: grid_2d_graph(rows, cols, periodic=True), relabel_nodes (i, j) -> i * cols + j, "
          "then list(G.edges())" % nx.__version__, file=out)
    for rows, cols in ((10, 10), (3, 5), (6, 4)):
        g = nx.relabel_nodes(nx.grid_2d_graph(rows, cols, periodic=True),
                             {(i, j): i * cols + j for i in range(rows) for j in range(cols)})
        edges = list(g.edges())
        print("torus %d %d %d" % (rows, cols, len(edges)), file=out)
        for u, v in edges:
            print(u, v, file=out)


def write_fig8(out, git_dir):
    text = subprocess.run(["git", "--git-dir", git_dir, "show", AUTHORS_COMMIT + ":results/scan_torus10.csv"],
                          check=True, capture_output=True, text=True).stdout
    rows = {int(r["sweep"]): r for r in csv.DictReader(io.StringIO(text))}
    heads = [h for h in next(csv.reader(io.StringIO(text))) if h != "sweep"]
    print("# Theborna/dual_gibbs at %s, results/scan_torus10.csv (experiments.py run_scan_comparison on the 10x10 "
          "torus, s = 1, sigma = 0.3, 10^4 chains, 100 sweeps), the rows of sweeps %s, copied as written"
          % (AUTHORS_COMMIT, ", ".join(str(s) for s in FIG8_SWEEPS)), file=out)
    print("sweep " + " ".join(heads), file=out)
    for s in FIG8_SWEEPS:
        print(str(s) + " " + " ".join(rows[s][h] for h in heads), file=out)


def main():
    with open(os.path.join(HERE, "published_fig7.txt"), "w") as out:
        write_fig7(out)
    with open(os.path.join(HERE, "published_torus_edges.txt"), "w") as out:
        write_torus_edges(out)
    if len(sys.argv) > 1:
        with open(os.path.join(HERE, "published_fig8.txt"), "w") as out:
            write_fig8(out, sys.argv[1])


if __name__ == "__main__":
    main()
