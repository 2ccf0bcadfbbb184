"""B, L, Q, R of the bindings against the same matrices built here with scipy from the graph's edge list and the
model's parameters (paper, Sections II and V: Q = D_s^-1 + B D_sigma^-1 B^T, R = D_sigma + B^T D_s B)."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dualgibbs as dg


def scipy_matrices(edges, n, s, sigma):
    """The four matrices from the definitions, independently of the library."""
    m = len(edges)
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    vals = np.concatenate([np.ones(m), -np.ones(m)])
    B = sp.csr_matrix((vals, (rows, cols)), shape=(n, m))
    L = B @ B.T
    Q = sp.diags(1 / s**2) + B @ sp.diags(1 / sigma**2) @ B.T
    R = sp.diags(sigma**2) + B.T @ sp.diags(s**2) @ B
    return B, L, Q, R


def graphs():
    rng = np.random.default_rng(5)
    g_ws = nx.connected_watts_strogatz_graph(30, 4, 0.3, seed=3)
    A = nx.to_scipy_sparse_array(nx.random_regular_graph(3, 12, seed=2), format="csr")
    yield "torus:5x4", dg.Graph.from_spec("torus:5x4")
    yield "networkx ws", dg.Graph.from_networkx(g_ws)
    yield "adjacency 3-regular", dg.Graph.from_adjacency(A)
    yield "edge array", dg.Graph(8, np.array([[0, 1], [2, 1], [3, 4], [6, 5], [5, 3]]))  # node 7 isolated
    yield "random edges", dg.Graph(40, _random_edges(rng))


def _random_edges(rng):
    e = np.sort(rng.integers(0, 40, (80, 2)), axis=1)
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(e, axis=0)
    flip = rng.random(len(e)) < 0.5  # both orientations
    e[flip] = e[flip][:, ::-1]
    return e


@pytest.mark.parametrize("name,graph", list(graphs()), ids=[n for n, _ in graphs()])
@pytest.mark.parametrize("homogeneous", [True, False])
def test_matrices_match_scipy(name, graph, homogeneous):
    n, m = graph.num_nodes, graph.num_edges
    rng = np.random.default_rng(11)
    if homogeneous:
        model = dg.Model(graph, 0.7, 0.3)
        s, sigma = np.full(n, 0.7), np.full(m, 0.3)
    else:
        s, sigma = rng.uniform(0.5, 2.0, n), rng.uniform(0.1, 1.0, m)
        model = dg.Model(graph, s, sigma)
    B, L, Q, R = scipy_matrices(np.asarray(graph.edges, dtype=np.int64), n, s, sigma)
    for ours, ref, label in [(model.B, B, "B"), (model.L, L, "L"), (model.Q, Q, "Q"), (model.R, R, "R")]:
        assert isinstance(ours, sp.csr_matrix), label
        assert ours.shape == ref.shape, label
        assert ours.indices.dtype == np.int32, label
        diff = abs(ours - ref).max() if ref.nnz else 0.0
        assert diff <= 1e-12 * max(1.0, abs(ref).max()), f"{label} differs by {diff}"
    np.testing.assert_allclose(model.primal_diagonal, Q.diagonal(), rtol=1e-14)
    np.testing.assert_allclose(model.dual_diagonal, R.diagonal(), rtol=1e-14)
    np.testing.assert_array_equal(model.s, s)
    np.testing.assert_array_equal(model.sigma, sigma)


def test_torus_spec_is_the_documented_torus():
    # generators.hpp: node (i, j) = i*cols + j, the head of its edge to the right and of its edge below.
    g = dg.Graph.from_spec("torus:3x4")
    expected = set()
    for i in range(3):
        for j in range(4):
            expected.add((i * 4 + j, i * 4 + (j + 1) % 4))
            expected.add((i * 4 + j, ((i + 1) % 3) * 4 + j))
    assert set(map(tuple, g.edges.tolist())) == expected
    assert g.num_nodes == 12 and g.num_edges == 24


def test_networkx_order_and_labels():
    G = nx.Graph()
    G.add_edges_from([("c", "a"), ("a", "b"), ("b", "d")])
    g = dg.Graph.from_networkx(G)
    nodes = list(G.nodes())
    assert [(nodes[u], nodes[v]) for u, v in g.edges.tolist()] == list(G.edges())


def test_adjacency_edges_are_the_upper_triangle():
    G = nx.gnp_random_graph(25, 0.2, seed=1)
    A = nx.to_scipy_sparse_array(G, format="csr", dtype=float)
    A = sp.csr_matrix(A + 3.0 * sp.eye(25))  # stored diagonal entries: ignored
    g = dg.Graph.from_adjacency(A)
    expected = sorted(tuple(sorted(e)) for e in G.edges())
    assert g.edges.tolist() == [list(e) for e in expected]
    # int64 indices, COO and dense input give the same graph
    A64 = sp.csr_matrix(A)
    A64.indices = A64.indices.astype(np.int64)
    A64.indptr = A64.indptr.astype(np.int64)
    for other in (A64, A.tocoo(), A.toarray()):
        assert dg.Graph.from_adjacency(other).edges.tolist() == g.edges.tolist()


def test_as_graph_accepts_every_form():
    G = nx.cycle_graph(6)
    forms = ["cycle:6", G, nx.to_scipy_sparse_array(G), np.array([[i, (i + 1) % 6] for i in range(6)])]
    for f in forms:
        g = dg.as_graph(f)
        assert (g.num_nodes, g.num_edges, g.num_components) == (6, 6, 1)
    m = dg.Model(G, 1.0, 0.5)  # the model takes any of them
    assert m.num_edges == 6


def test_outputs_are_views_not_copies():
    model = dg.Model("torus:4", 1.0, 0.3)
    Q = model.Q
    assert Q.data.base is not None and Q.indices.base is not None  # owned by the C++ matrix's capsule
    g = model.graph
    e = g.edges
    assert e.base is not None and not e.flags.writeable
    del g
    assert e.shape == (32, 2) and e[0].tolist() == [0, 1]  # the view keeps its graph alive


def test_spec_model_reads_files_like_the_command(data_dir):
    m = dg.Model.from_spec(f"file:{data_dir / 'hetero_edges.txt'}", s=1.0, sigma=0.25,
                           node_file=str(data_dir / "hetero_nodes.txt"))
    assert m.sigma.tolist()[:3] == [0.5, 0.25, 2.0]
    assert m.s[0] == 2.0 and m.s[4] == 0.5 and m.s[1] == 1.0
    assert not m.is_homogeneous
