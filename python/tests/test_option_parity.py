"""Every option of the command has the same option in Python, with the same default.

For each subcommand, the options `dualgibbs SUBCOMMAND --help` lists (CLI11 prints `--name TYPE=default`, a flag
without a type) and the options of the top-level command that every subcommand reads (`dualgibbs --help`) are
walked: each must be a parameter of the subcommand's Python function (`--burn-in` is `burn_in`) with the same default
(an option without a printed default is None in Python, a flag False), unless it is in a short explicit list of
options that cannot apply to a Python call (files, --json, --quiet, ...) or is renamed in the subcommand's row.

A subcommand is one row of SUBCOMMANDS; a subcommand that is not there yet is in PENDING with the reason, and a
subcommand in neither fails the test.
"""
import ast
import dataclasses
import inspect
import re
import subprocess

import pytest

import dualgibbs as dg

# Options that no Python call can take, with the reason.
NOT_APPLICABLE = {
    "--help": "Python's help() prints the docstring",
    "--version": "dualgibbs.__version__",
    "--quiet": "Python prints no progress (run_convergence and run_experiment take progress=callable)",
    "--json": "Python returns the record itself",
    "--out": "Python returns the arrays and tables; writing files is the command's",
    "--no-plot": "Python draws no plots",
}
# The top-level options that describe the model: Python takes a Model instead (Model.from_spec reads the same
# graph spec and files, with the seed of random graph families).
MODEL_OPTIONS = {
    "--graph": "the model argument (Model.from_spec(graph, ...))",
    "--s": "the model argument (Model.from_spec(spec, s, ...))",
    "--sigma": "the model argument (Model.from_spec(spec, s, sigma))",
    "--node-file": "the model argument (Model.from_spec(..., node_file=F))",
    "--obs-file": "the model argument (Model.from_spec(..., obs_file=F))",
    "--precision": "the model argument (Model.from_precision(scipy.io.mmread(F)))",
    "--canonical": "the model argument (Model.from_precision(Q, canonical_vector=h) or Model(..., canonical_vector=h))",
}


@dataclasses.dataclass
class Row:
    """How a subcommand maps onto its Python function."""
    function: str  # the name in the dualgibbs package
    renames: dict = dataclasses.field(default_factory=dict)  # option -> Python parameter
    negated: dict = dataclasses.field(default_factory=dict)  # flag --no-X -> Python parameter X (default True)
    not_applicable: dict = dataclasses.field(default_factory=dict)  # option -> reason, beyond the lists above


SUBCOMMANDS = {
    "info": Row("info", negated={"--no-spectra": "spectra"},
                not_applicable={"--seed": "info samples nothing; the seed of a random graph is Model.from_spec's"}),
    "marginals": Row("marginals",
                     not_applicable={"--distribute": "how MPI ranks share the work: Python runs in one process",
                                     "--partition": "how MPI ranks cut the graph: Python runs in one process"}),
    "converge": Row("run_convergence",
                    not_applicable={"--distribute": "how MPI ranks share the work: Python runs in one process",
                                    "--partition": "how MPI ranks cut the graph: Python runs in one process"}),
    "bench": Row("bench"),
    "sample": Row("sample", negated={"--noise-free": "noise"},
                  not_applicable={**{o: "a file: Python returns the draws (and with return_stats=True the posterior "
                                        "mean in stats['mean'] and the sidecar's fields in stats['record'])"
                                     for o in ("--output", "--sidecar", "--format", "--mean-output")},
                                  "--distribute": "how MPI ranks share the work: Python runs in one process",
                                  "--partition": "how MPI ranks cut the graph: Python runs in one process"}),
    "exact": Row("exact", not_applicable={
        "--seed": "exact draws nothing; the seed of a random graph is Model.from_spec's",
        "--marginals": "a file: Python returns the variances (and the mean) as arrays",
        "--edge-marginals": "a file: Python's edge_variances=True returns the edge variances as arrays"}),
    "validate": Row("validate_draws", not_applicable={
        "--seed": "validation draws nothing; the seed of a random graph is Model.from_spec's",
        "--draws": "a file: Python takes the draws array (the `draws` argument)",
        "--domain": "kind= (default 'primal': an array carries no sidecar to read the domain from)",
        "--layout": "an array's axes say it: each checkpoint's rows are independent draws (--layout independent)"}),
    "reproduce": Row("run_experiment", renames={"figure": "name"},
                     not_applicable={o: "each figure builds its own models" for o in MODEL_OPTIONS}),
}
PENDING = {}

_OPTION = re.compile(r"^  (?:-\w,)?(--[a-z][\w-]*)(?: ([A-Z]+)(?::[A-Z]+)*(?:=(\S*))?)?(?:\s|$)")
_POSITIONAL = re.compile(r"^  ([a-z]\w*) ([A-Z]+)")


def help_options(cli, *args):
    """{option: (type or None for a flag, default text or None)} of `dualgibbs ARGS --help`; positionals by name."""
    text = subprocess.run([cli, *args, "--help"], capture_output=True, text=True, check=True).stdout
    options, section = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.rstrip(":")
            continue
        if section == "Positionals" and (m := _POSITIONAL.match(line)):
            options[m.group(1)] = (m.group(2), None)
        elif section == "Options" and (m := _OPTION.match(line)):
            options[m.group(1)] = (m.group(2), m.group(3))
    return options


def subcommands(cli):
    text = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
    names = re.search(r"\nSubcommands:\n(.*)", text, re.S).group(1)
    return [m.group(1) for m in re.finditer(r"^  (\w+) ", names, re.M)]


def signature(function):
    """The parameters of a Python function or of a pybind11 one (from the signature line of its docstring)."""
    try:
        return inspect.signature(function).parameters
    except ValueError:
        head = function.__doc__.splitlines()[0]
        tree = ast.parse("def " + head.split(" -> ")[0] + ": pass").body[0].args
        params = {}
        plain = tree.posonlyargs + tree.args
        for a, d in zip(plain, [None] * (len(plain) - len(tree.defaults)) + tree.defaults):
            params[a.arg] = inspect.Parameter(a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                              default=inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for a, d in zip(tree.kwonlyargs, tree.kw_defaults):
            params[a.arg] = inspect.Parameter(a.arg, inspect.Parameter.KEYWORD_ONLY,
                                              default=inspect.Parameter.empty if d is None else ast.literal_eval(d))
        return params


def expected_default(kind, text):
    """The Python default of an option printed as `--name KIND=text` (no text: None; a flag: False)."""
    if kind is None:
        return False
    if text is None:
        return None
    return {"FLOAT": float, "INT": int, "UINT": int}.get(kind, str)(text)


def test_every_subcommand_has_a_row_or_is_pending(cli):
    names = subcommands(cli)
    assert names, "no subcommands found in `dualgibbs --help`"
    missing = [n for n in names if n not in SUBCOMMANDS and n not in PENDING]
    assert not missing, f"subcommands without a row in SUBCOMMANDS or PENDING: {missing}"
    assert not set(SUBCOMMANDS) & set(PENDING)


@pytest.mark.parametrize("sub", sorted(set(SUBCOMMANDS) | set(PENDING)))
def test_python_takes_every_option_with_its_default(cli, sub):
    if sub in PENDING:
        pytest.skip(PENDING[sub])
    row = SUBCOMMANDS[sub]
    params = signature(getattr(dg, row.function))
    common = {k: v for k, v in help_options(cli).items() if k not in ("--help", "--version")}
    options = {**common, **help_options(cli, sub)}
    skip = {**NOT_APPLICABLE, **MODEL_OPTIONS, **row.not_applicable}
    problems = []
    for option, (kind, text) in options.items():
        if option in skip:
            continue
        name = row.renames.get(option) or row.negated.get(option) or option.lstrip("-").replace("-", "_")
        if name not in params:
            problems.append(f"{option}: dualgibbs.{row.function} has no parameter {name!r}")
            continue
        default = params[name].default
        if kind is not None and text is None and option in row.renames and not option.startswith("-"):
            want = inspect.Parameter.empty  # a required positional is a required parameter
        elif option in row.negated:
            want = True
        else:
            want = expected_default(kind, text)
        if default != want or type(default) is not type(want):
            problems.append(f"{option} (default {text!r}): {name}={default!r} in Python, expected {want!r}")
    assert not problems, f"dualgibbs {sub} against dualgibbs.{row.function}:\n  " + "\n  ".join(problems)


def test_the_parser_sees_typed_defaults_and_flags(cli):
    """The help parser itself: a typed default, an option without one, a flag and a positional."""
    marginals = help_options(cli, "marginals")
    assert marginals["--every"] == ("UINT", "2")
    assert marginals["--mean-solver"] == ("TEXT", "cholesky")
    assert marginals["--method"] == ("TEXT", None)
    assert marginals["--json"] == (None, None)
    assert help_options(cli, "reproduce")["figure"] == ("TEXT", None)
    assert help_options(cli)["--seed"] == ("UINT", "1")
