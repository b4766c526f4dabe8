"""The package's shape holds: imports run one way, no cycles, short functions, a light import.

The folder rule is the table of ``docs/architecture.md``: a unit (a folder or a public
module under ``sparseclust/``) imports only the units listed for it. Imports are read
from the source (``ast``), those inside functions included, so a cycle hidden behind a
late import is still a cycle.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "sparseclust"

DOC = PKG.parent / "docs" / "architecture.md"


def _folder_rule() -> dict[str, set[str]]:
    """unit -> the units it may import (besides itself), read from the table of
    ``docs/architecture.md`` ("| `unit` | `a`, `b` |")."""
    rule: dict[str, set[str]] = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`") and cells[0].endswith("`"):
            rule[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", cells[1]))
    return rule


#: unit -> the units it may import (besides itself)
ALLOWED: dict[str, set[str]] = _folder_rule()

#: Libraries ``import sparseclust`` must not load (they load when a function needs them).
HEAVY = (
    "sklearn",
    "statsmodels",
    "matplotlib",
    "patsy",
    "joblib",
    "dask",
    "distributed",
    "numba",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{mod}.{a.name}" for a in node.names] + [mod]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                if t in modules and t != name:
                    deps.add(t)
                    break
        graph[name] = deps
    return graph


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "sparseclust"


def test_every_unit_has_a_rule():
    units = {_unit(m) for m in _graph()}
    assert len(ALLOWED) >= 15, "the folder-rule table of docs/architecture.md was not read"
    assert units <= set(ALLOWED), f"units without a rule: {sorted(units - set(ALLOWED))}"
    named = set().union(*ALLOWED.values())
    assert named <= set(ALLOWED), f"rule names unknown units: {sorted(named - set(ALLOWED))}"


def test_imports_follow_the_folder_rule():
    bad = [
        f"{m} imports {d}"
        for m, deps in _graph().items()
        for d in sorted(deps)
        if _unit(d) != _unit(m) and _unit(d) not in ALLOWED[_unit(m)]
    ]
    assert not bad, "imports against the folder rule:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph = _graph()
    # the package's __init__ re-exports everything; an import *of* the package from a
    # module it imports would be the cycle, so it stays in the graph
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _code_lines(lines: list[str], node: ast.AST) -> int:
    doc: set[int] = set()
    body = node.body  # type: ignore[attr-defined]
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        doc = set(range(body[0].lineno, body[0].end_lineno + 1))
    count = 0
    for i in range(node.lineno, node.end_lineno + 1):  # type: ignore[attr-defined]
        text = lines[i - 1].strip()
        if text and not text.startswith("#") and i not in doc:
            count += 1
    return count


def test_no_function_over_100_code_lines():
    long = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = _code_lines(lines, node)
                if n > 100:
                    long.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}: {n}")
    assert not long, "functions over 100 code lines:\n" + "\n".join(long)


def test_import_loads_no_heavy_library():
    code = (
        "import sys, sparseclust; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("module", ["sparseclust.datasets", "sparseclust.metrics"])
def test_public_modules_import_light(module):
    code = (
        f"import sys, {module}; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_tests_mirror_the_folders():
    """``tests/_<name>/`` holds the tests of ``sparseclust/_<name>/`` (the underscore
    keeps a folder such as ``tests/_sparse`` from shadowing an installed package named
    ``sparse`` on ``sys.path``); package-wide tests (public modules, the architecture,
    pinned fits, the README) stay in ``tests/``."""
    tests = Path(__file__).resolve().parent
    folders = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    package = {p.name for p in PKG.iterdir() if p.is_dir() and p.name.startswith("_")}
    assert folders <= package, f"test folders without a package folder: {folders - package}"
    for unit in ("_data", "_results", "_engine", "_craft", "_dpmeans", "_sparse", "_covariate"):
        assert unit in folders, f"no tests/{unit}/ for sparseclust/{unit}/"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "test module basenames must be unique"


def test_nothing_reads_outside_the_repository():
    """Issue 34.4: the package, vignettes, benchmarks and tests read only what the
    repository holds (data sets not shipped come through their loaders' documented
    sources: ``load_banknote`` reads ``$SPARSECLUST_BANKNOTE`` or the user cache), never
    the project's sibling ``shared`` directory next to a checkout."""
    root = PKG.parent
    up, name = "..", "shared"  # built here, so that this file does not match itself
    pattern = re.compile(
        rf"{re.escape(up)}[/\\]{name}\b|/work/{name}\b|[\"']{name}[\"']\s*[/)]"
        rf"|parents\[\d\]\s*/\s*[\"']{name}[\"']"
    )
    hits = []
    for folder in ("sparseclust", "vignettes", "benchmarks", "tests"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in {".py", ".md", ".R", ".txt", ".json", ".csv", ".toml", ".cfg"}:
                continue
            if path.suffix == ".csv" and path.stat().st_size > 2**20:
                continue
            text = path.read_text(errors="replace")
            hits += [
                f"{path.relative_to(root)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                for m in pattern.finditer(text)
            ]
    assert not hits, "\n".join(hits)


#: A call per public method, on a small shipped data set: its first call in a process
#: must import nothing (each method's module imports what its calls need, so the first
#: call is like any other; issue 33's "later process" target).
FIRST_CALLS = {
    "craft": (
        "from sparseclust import craft; from sparseclust.datasets import load_zoo\n"
        "X = load_zoo().drop(columns='type')",
        "craft(X, k=3, m=0.5, n_init=2, rng=1)",
    ),
    "sparse_kmeans": (
        "from sparseclust import sparse_kmeans; from sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "sparse_kmeans(X, k=3, wbound=3, scale=True, rng=1)",
    ),
    "sparse_hclust": (
        "from sparseclust import sparse_hclust; from sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "sparse_hclust(X, wbound=3, scale=True, weights='sparcl'); "
        "sparse_hclust(X, wbound=3, scale=True)",
    ),
    "dpmeans": (
        "from sparseclust import dpmeans; from sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "dpmeans(X, k=3, scale=True, rng=1)",
    ),
    "covariate_clustering": (
        "from sparseclust import covariate_clustering\n"
        "from sparseclust.simulate import covariate_sim\nsim = covariate_sim(20, m=4, rng=0)",
        "covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)",
    ),
}


@pytest.mark.parametrize("method", sorted(FIRST_CALLS))
def test_first_call_imports_nothing(method):
    setup, call = FIRST_CALLS[method]
    code = (
        f"import sys, warnings\nwarnings.simplefilter('ignore')\n{setup}\n"
        f"before = set(sys.modules)\n{call}\nprint(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_public_names_load_on_first_use():
    """``import sparseclust`` loads no method; a method's name loads its own modules
    (sparse k-means not the hierarchical clustering's scipy.spatial, CRAFT not the
    covariate clustering's scipy.optimize); every public name and module resolves."""
    code = (
        "import sys, sparseclust\n"
        "methods = ('_craft', '_sparse', '_covariate', '_dpmeans')\n"
        "loaded = lambda: sorted({m.split('.')[1] for m in sys.modules\n"
        "    if m.count('.') == 2 and m.split('.')[:2] in [['sparseclust', f] for f in methods]})\n"
        "print(loaded())\n"
        "from sparseclust import sparse_kmeans\n"
        "print(loaded(), 'scipy.spatial' in sys.modules, 'scipy.optimize' in sys.modules)\n"
        "from sparseclust import craft\n"
        "print('scipy.optimize' in sys.modules)\n"
        "print(all(getattr(sparseclust, n) is not None for n in sparseclust.__all__))\n"
        "print(sparseclust.datasets.load_wine().shape, set(sparseclust.__all__) <= set(dir(sparseclust)))\n"
        "print(sparseclust.sparse_kmeans_permute is sparseclust.kmeans_sparse_permute)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "[]",
        "['_sparse'] False False",
        "False",
        "True",
        "(178, 14) True",
        "True",
    ]
    import sparseclust

    with pytest.raises(AttributeError, match="no attribute 'sparse_kmean'"):
        sparseclust.sparse_kmean  # noqa: B018
    # every public name is either loaded on first use or defined at import
    eager = {n for n in sparseclust.__all__ if n not in sparseclust._LAZY}
    assert eager == {"__version__"} | {n for n in eager if n.endswith(("Warning", "Error"))}
    assert set(sparseclust._LAZY) <= set(sparseclust.__all__)


def test_unknown_keyword_names_other_methods_in_a_fresh_process():
    """The message lists the other public functions taking the keyword, though none of
    them was imported before the mistaken call (they load for the message)."""
    code = (
        "from sparseclust import sparse_kmeans\n"
        "try:\n    sparse_kmeans([[0.0, 1.0]] * 4, k=2, wbounds=[2])\n"
        "except TypeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "kmeans_sparse_permute" in out.stdout and "hclust_sparse_permute" in out.stdout
