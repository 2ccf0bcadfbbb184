#!/usr/bin/env python3
"""Writes tests/data/published_fig7.txt: the authors' fig7 inputs as networkx 2.8 and numpy produce them
(experiments.py, ws_hetero_builder(mode="both", n=64, k=4, p=0.3)), for tests/test_published.cpp.
Run: /usr/bin/python3 tests/data/make_published_fixtures.py > tests/data/published_fig7.txt"""
import networkx as nx
import numpy as np

print("# networkx %s, numpy %s" % (nx.__version__, np.__version__))
for r in (0, 1, 7, 63):
    g = nx.watts_strogatz_graph(64, 4, 0.3, seed=r)
    edges = list(g.edges())
    print("graph %d %d" % (r, len(edges)))
    for u, v in edges:
        print(u, v)
    np.random.seed(1000 + r)
    s = 0.75 + (1.5 - 0.75) * np.random.beta(1, 1, 64)
    sigma = 0.25 + (0.5 - 0.25) * np.random.beta(1, 1, len(edges))
    print("s %d" % len(s))
    print(" ".join(repr(float(x)) for x in s))
    print("sigma %d" % len(sigma))
    print(" ".join(repr(float(x)) for x in sigma))
