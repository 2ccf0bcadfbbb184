"""Bad input: ValueError with the library's own message (the text `dualgibbs` prints after 'dualgibbs: error: ' for
the same input), NumericalError for numerical failures, never a crash."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dualgibbs as dg
from conftest import run_cli

# (command-line arguments, the same request through Python)
SAME_AS_CLI = [
    (["info", "--graph", "torus:2"], lambda: dg.Model.from_spec("torus:2")),
    (["info", "--graph", "torus:5", "--sigma", "-1"], lambda: dg.Model.from_spec("torus:5", sigma=-1.0)),
    (["info", "--graph", "torus:5", "--s", "nan"], lambda: dg.Model.from_spec("torus:5", s=float("nan"))),
    (["info", "--graph", "file:/nonexistent/edges.txt"], lambda: dg.Model.from_spec("file:/nonexistent/edges.txt")),
    (["info", "--graph", "kregular:7,3"], lambda: dg.Graph.from_spec("kregular:7,3")),
    (["sample", "--graph", "torus:5", "--domain", "diag", "-o", "/dev/null"],
     lambda: dg.sample(dg.Model("torus:5"), domain="diag")),
    (["sample", "--graph", "torus:5", "--lockstep", "3", "-o", "/dev/null"],
     lambda: dg.sample(dg.Model("torus:5"), lockstep=3)),
    (["sample", "--graph", "torus:5", "--scan", "zigzag", "-o", "/dev/null"],
     lambda: dg.sample(dg.Model("torus:5"), scan="zigzag")),
    (["sample", "--graph", "torus:5", "--chains", "0", "-o", "/dev/null"],
     lambda: dg.sample(dg.Model("torus:5"), chains=0)),
    (["sample", "--graph", "path:1", "--domain", "dual", "-o", "/dev/null"],
     lambda: dg.sample(dg.Model("path:1"), domain="dual")),
    (["marginals", "--graph", "torus:5", "--method", "magic"], lambda: dg.marginals(dg.Model("torus:5"), method="magic")),
    (["reproduce", "fig99"], lambda: dg.run_experiment("fig99")),
]


@pytest.mark.parametrize("args,call", SAME_AS_CLI, ids=[" ".join(a[:3]) for a, _ in SAME_AS_CLI])
def test_value_error_has_the_commands_message(cli, args, call):
    code, _, err = run_cli(cli, *args)
    assert code == 2
    prefix = "dualgibbs: error: "
    assert err.startswith(prefix)
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == err[len(prefix):].strip()


@pytest.mark.parametrize("call,fragment", [
    (lambda: dg.Graph(3, [[0, 0]]), "self-loop"),
    (lambda: dg.Graph(3, [[0, 1], [1, 0]]), "duplicates"),
    (lambda: dg.Graph(3, [[0, 3]]), "outside 0..2"),
    (lambda: dg.Graph(3, [[0, -1]]), "outside 0..2"),
    (lambda: dg.Graph(0, np.zeros((0, 2), dtype=int)), "empty"),
    (lambda: dg.Graph(3, [[0, 1, 2]]), "shape (m, 2)"),
    (lambda: dg.Graph(2**40, [[0, 1]]), "nodes is outside"),
    (lambda: dg.Model("torus:3", s=np.ones(5)), "5 node standard deviations given for 9"),
    (lambda: dg.Model("torus:3", sigma=np.full(18, -0.1)), "finite positive"),
    (lambda: dg.Model("torus:3", s=np.ones((3, 3))), "one-dimensional"),
    (lambda: dg.Graph.from_adjacency(sp.csr_matrix(np.triu(np.ones((4, 4)), 1))), "not symmetric: entry (0, 1)"),
    (lambda: dg.Graph.from_adjacency(sp.csr_matrix(np.ones((3, 4)))), "not square"),
    (lambda: dg.Graph.from_adjacency(sp.csr_matrix((0, 0))), "empty"),
    (lambda: dg.Graph.from_networkx(nx.DiGraph([(0, 1)])), "directed"),
    (lambda: dg.Graph.from_networkx(nx.MultiGraph([(0, 1), (0, 1)])), "multigraph"),
    (lambda: dg.as_graph(np.array([[0.5, 1.0]])), "integers"),
    (lambda: dg.as_graph(42), "expected a Graph"),
    (lambda: dg.sample(dg.Model("torus:3"), domain="primal", draws="y"), "dual domain only"),
    (lambda: dg.sample(dg.Model("torus:3"), init="given"), "go together"),
    (lambda: dg.sample(dg.Model("torus:3"), domain="primal", init="given", initial_state=np.ones(4)), "given"),
    (lambda: dg.sample(dg.Model("torus:3"), init_scale=2.0), "--init random"),
    (lambda: dg.CholeskyFactor(sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 1.0]]))), "symmetric"),
    (lambda: dg.validate_draws(dg.Model("torus:3"), np.zeros((10, 4)), "primal"), "4 coordinates, expected 9"),
    (lambda: dg.validate_draws(dg.Model("torus:3"), np.zeros(9), "primal"), "(n, dim)"),
    (lambda: dg.marginals(dg.Model("torus:3"), method="primal", chains=1), "chains"),
])
def test_bad_input_raises_value_error(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)


def test_adjacency_with_wrong_index_arrays():
    with pytest.raises(ValueError, match="indptr has 3 entries for 3 rows"):
        dg.Graph._from_csr(3, np.array([0, 1, 2], dtype=np.int32), np.array([1, 0], dtype=np.int32))
    with pytest.raises(ValueError, match="column index 7"):
        dg.Graph._from_csr(2, np.array([0, 1, 2], dtype=np.int64), np.array([7, 0], dtype=np.int64))
    with pytest.raises(ValueError, match="decreases"):
        dg.Graph._from_csr(2, np.array([0, 2, 1], dtype=np.int32), np.array([1], dtype=np.int32))
    with pytest.raises(TypeError):  # float index arrays are not converted
        dg.Graph._from_csr(2, np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0]))


def test_numerical_failures_raise_numerical_error():
    model = dg.Model("torus:4", 1.0, 0.3)
    with pytest.raises(dg.NotPositiveDefiniteError, match="not positive definite") as info:
        dg.CholeskyFactor(-model.Q)
    assert isinstance(info.value, dg.NumericalError) and isinstance(info.value, RuntimeError)
    assert issubclass(dg.FactorizationError, dg.NumericalError) and issubclass(dg.EigensolverError, dg.NumericalError)
    # s / sigma so large that Q is numerically singular (docs/bad_input.md): the factorization refuses it
    singular = dg.Model("torus:4", 1e9, 1e-9)
    with pytest.raises(dg.NumericalError):
        dg.log_det(singular)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        dg.sample("torus:4")
    with pytest.raises(TypeError):
        dg.sample(dg.Model("torus:4"), chains=-1)
    with pytest.raises(TypeError):
        dg.Model("torus:4", s="one")


# ---- no silent coercion: a value numpy would convert with a loss is refused ------------------------------------------

def test_non_integer_or_boolean_edges_are_refused():
    with pytest.raises(TypeError, match="integers"):
        dg.Graph(3, np.array([[0.5, 1.9]]))  # not truncated to (0, 1)
    with pytest.raises(TypeError, match="integers"):
        dg.Graph(3, [[True, False]])
    assert dg.Graph(3, [[0, 1], [1, 2]]).edges.tolist() == [[0, 1], [1, 2]]


@pytest.mark.parametrize("s", [1 + 1j, True, np.ones(5) * (1 + 0j), np.ones(5, dtype=bool)])
def test_complex_or_boolean_parameters_are_refused(s):
    with pytest.raises(TypeError):
        dg.Model(dg.Graph.from_spec("cycle:5"), s, 0.5)


def test_complex_observations_matrices_and_draws_are_refused():
    g = dg.Graph.from_spec("cycle:5")
    with pytest.raises(TypeError, match="real"):
        dg.Model(g, 1.0, 0.5, observations=np.zeros(5, complex))
    m = dg.Model(g, 1.0, 0.5)
    with pytest.raises(TypeError, match="real"):
        dg.CholeskyFactor(m.Q.astype(complex))
    with pytest.raises(TypeError, match="real"):
        dg.validate_draws(m, np.zeros((50, 5), complex))


def test_solve_refuses_a_right_hand_side_that_is_not_finite_or_not_real():
    m = dg.Model(dg.Graph.from_spec("cycle:5"), 1.0, 0.5)
    f = dg.CholeskyFactor(m.Q)
    with pytest.raises(ValueError, match="not finite"):
        f.solve(np.array([np.nan, 0, 0, 0, 0]))
    with pytest.raises(TypeError, match="real"):
        f.solve(np.zeros(5, complex))
    assert np.allclose(m.Q @ f.solve(np.ones(5)), 1)
    assert np.allclose(m.Q @ f.solve(np.ones((5, 2))), 1)
