"""The documentation site builds with warnings as errors, and reads as promised: a page for
every public name, every vignette's figures on its gallery page, no broken internal
link. The build runs the vignettes in fast mode (``docs/_ext/vignette_gallery.py``)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PUBLIC_MODULES = [
    "sparseclust",
    "sparseclust.metrics",
    "sparseclust.plotting",
    "sparseclust.datasets",
    "sparseclust.simulate",
    "sparseclust.sklearn",
    "sparseclust.exceptions",
]

pytestmark = pytest.mark.docs


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx", reason="pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-20000:]
    return out / "html"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _public_objects() -> dict[str, object]:
    names = {}
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            if not name.startswith("__"):
                names[f"{module}.{name}"] = getattr(mod, name)
    return names


def test_every_public_name_has_a_page(site):
    pages = sorted((site / "api" / "generated").glob("*.html"))
    documented = {}
    for page in pages:
        module, _, name = page.stem.rpartition(".")
        documented[id(getattr(importlib.import_module(module), name))] = page
    missing = [name for name, obj in _public_objects().items() if id(obj) not in documented]
    assert not missing, f"no API page for {missing}"
    assert (site / "api" / "cli.html").exists()
    cli = (site / "api" / "cli.html").read_text()
    # generated from the parser: every sub-command and a few of their options
    for text in ["craft", "sparse-kmeans", "kmeans-permute", "sparse-hclust", "--plot-out"]:
        assert text in cli, text


def _search_objects(site: Path) -> dict[str, str]:
    """``module.name`` -> the page (docname) of every object in the site's search index."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return {
        f"{prefix}.{entry[4]}": index["docnames"][entry[0]]
        for prefix, entries in index["objects"].items()
        for entry in entries
    }


def test_every_public_name_is_found_by_the_search(site):
    """Issue 34.5: each name of every public module's ``__all__`` is an object of the
    search index, aliases and ``__version__`` included; an alias sits on its target's
    page, and the reference index links to it."""
    found = {name.rpartition(".")[2] for name in _search_objects(site)}
    missing = [
        f"{module}.{name}"
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
        if name not in found
    ]
    assert not missing, f"not in the search index: {missing}"
    objects = _search_objects(site)
    assert objects["sparseclust.__version__"] == "api/index"
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    for module, alias, target in [
        ("sparseclust", "sparse_kmeans_permute", "kmeans_sparse_permute"),
        ("sparseclust", "sparse_hclust_permute", "hclust_sparse_permute"),
        ("sparseclust.metrics", "ami", "adjusted_nmi"),
    ]:
        assert objects[f"{module}.{alias}"] == f"api/generated/{module}.{target}"
        assert f'href="generated/{module}.{target}.html#{module}.{alias}"' in index, alias


def test_api_pages_show_an_example(site):
    for name in ["sparseclust.craft", "sparseclust.CraftResult", "sparseclust.metrics.purity"]:
        html = (site / "api" / "generated" / f"{name}.html").read_text()
        assert "Examples" in html and "&gt;&gt;&gt;" in html, name


def _declared_figures() -> dict[str, list[str]]:
    spec = importlib.util.spec_from_file_location(
        "_vignette_tests", ROOT / "tests/test_vignettes.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FIGURES


def test_every_vignette_is_a_gallery_page_with_its_figures(site):
    scripts = sorted((ROOT / "vignettes").glob("[0-9][0-9]_*.py"))
    figures = _declared_figures()
    assert {s.name for s in scripts} == set(figures)
    index = (site / "gallery" / "index.html").read_text()
    for script in scripts:
        page = site / "gallery" / f"{script.stem}.html"
        assert page.exists(), page
        assert f'href="{script.stem}.html"' in index, script.name
        parsed = _parse(page)
        shown = {Path(unquote(src)).name for src in parsed.images}
        for name in figures[script.name]:
            assert name in shown, f"{script.name}: figure {name} not on its page"
            src = next(s for s in parsed.images if Path(unquote(s)).name == name)
            assert (page.parent / unquote(src)).stat().st_size > 10_000, name
        assert "vignette-output" in page.read_text(), f"{script.name}: no printed output"


def test_internal_links_resolve(site):
    parsed = {path: _parse(path) for path in site.rglob("*.html")}
    broken = []
    for path, page in parsed.items():
        for ref in page.links + page.images:
            url = urlsplit(ref)
            if url.scheme or ref.startswith(("mailto:", "//")):
                continue
            target = (path.parent / unquote(url.path)).resolve() if url.path else path
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: {ref}")
            elif url.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(url.fragment) not in ids:
                    broken.append(f"{path.relative_to(site)}: {ref} (no such anchor)")
    assert not broken, "\n".join(broken[:50])


def test_site_index_shows_what_the_readme_prints():
    """The landing page repeats the README's 30-second output: the two stay equal."""
    readme = (ROOT / "README.md").read_text()
    shown = re.search(r"```python\n.*?```\n\n```\n(.*?)```", readme, re.S).group(1)
    index = (DOCS / "index.md").read_text()
    block = re.search(r"```\{code-block\} none\n:class: wrap-output\n\n(.*?)```", index, re.S)
    assert block.group(1) == shown


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(python|none)\n(.*?)^```", text, re.S | re.M)


@pytest.mark.parametrize("page", sorted((DOCS / "guide").glob("*.md")), ids=lambda p: p.stem)
def test_guide_snippets_run_and_print_what_the_page_shows(page, capsys):
    """Every Python block of a guide page runs (in order, one namespace per page) and
    prints exactly the output block that follows it, if any. The Dask scripts start
    clusters and are run by tests/test_readme.py. The covariate example's warning (sigma
    on the edge of its grid) is what the page says it shows."""
    import warnings

    import matplotlib.pyplot as plt

    from sparseclust import CalibrationWarning

    namespace: dict = {}
    blocks = _blocks(page.read_text())
    for i, (kind, code) in enumerate(blocks):
        if kind != "python" or "LocalCluster" in code:
            continue
        capsys.readouterr()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            exec(compile(code, str(page), "exec"), namespace)  # noqa: S102
        printed = capsys.readouterr().out
        if i + 1 < len(blocks) and blocks[i + 1][0] == "none":
            assert printed == blocks[i + 1][1], f"{page.name}, block {i}"
    plt.close("all")
