"""Sphinx configuration of the sparseclust documentation site.

Build (offline, warnings as errors)::

    pip install ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery pages are generated at build time by running the vignettes in fast mode
(``docs/_ext/vignette_gallery.py``); ``SPARSECLUST_DOCS_INTERSPHINX=1`` turns on links
into the Python, numpy, pandas and scikit-learn documentation (needs the network).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "sparseclust"
author = "the sparseclust authors"
copyright = "the sparseclust authors, BSD-3-Clause"  # noqa: A001
# read, not imported: autodoc imports the package after the gallery has run
release = re.search(
    r'__version__ = "([^"]+)"', (HERE.parent / "sparseclust" / "__init__.py").read_text()
).group(1)
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_copybutton",
    "sphinxarg.ext",
    "vignette_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# -- API reference -------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc Parameters sections say the types
add_module_names = False
autodoc_member_order = "bysource"
toc_object_entries_show_parents = "hide"  # "predict()", not "CraftResult.predict()"

# Result types and records are built by the package: their pages show no constructor
# signature (its parameters are the fields, listed under Attributes).
BUILT_BY_THE_PACKAGE = (
    "Result",
    "Path",
    "Summary",
    "VariableSpec",
    "ColumnTable",
    "Simulated",
)


def _no_constructor_signature(app, what, name, obj, options, signature, return_annotation):
    if what == "class" and name.rsplit(".", 1)[-1].endswith(BUILT_BY_THE_PACKAGE):
        return "", None
    return None


def _aliases() -> dict[str, list[str]]:
    """Full name of a public function -> its other public names: a module-level
    ``alias = target`` in a public module whose ``__all__`` lists the alias (e.g.
    ``alias = adjusted_nmi``), or in the package, an entry of its names loaded on first
    use whose attribute is another public name (``_LAZY["sparse_kmeans_permute"] =
    (module, "kmeans_sparse_permute")``). Read from the source, as the version is. The function template gives each alias an entry on its target's page,
    so a search finds it and ``:func:`` links to it."""
    out: dict[str, list[str]] = {}
    package = HERE.parent / "sparseclust"
    for path in [package / "__init__.py", *sorted(package.glob("[a-z]*.py"))]:
        module = "sparseclust" if path.name == "__init__.py" else f"sparseclust.{path.stem}"
        tree = ast.parse(path.read_text())
        public: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and [
                t.id for t in node.targets if isinstance(t, ast.Name)
            ] == ["__all__"]:
                public = set(ast.literal_eval(node.value))
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Name)
                and node.targets[0].id in public
                and node.value.id in public
            ):
                out.setdefault(f"{module}.{node.value.id}", []).append(node.targets[0].id)
            if (
                isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["_LAZY"]
                and isinstance(node.value, ast.Dict)
            ):
                for name, (_, target) in ast.literal_eval(node.value).items():
                    if name != target and {name, target} <= public:
                        out.setdefault(f"{module}.{target}", []).append(name)
    return out


autosummary_context = {"aliases": _aliases()}

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# Every public docstring is validated at build time; with -W an error fails the build.
# Left out: GL01/GL02 (where the summary and closing quotes sit), SS06 (a summary may
# wrap to a second line), ES01 (an extended summary: the short ones are complete),
# SA01 (a See Also section), RT02 (numpydoc's "type only" rule for named returns) and
# PR03 (order: parameters that share a description are documented together).
numpydoc_validation_checks = {"all", "GL01", "GL02", "SS06", "ES01", "SA01", "RT02", "PR03"}
# Result types and records are built by the package, not by users: their fields are
# documented under "Attributes", so the constructor-parameter check (PR01) is skipped
# for a class docstring that has an Attributes section and no Parameters section (and
# for the CRAFT variants' results and VariableSpec, whose docstrings point to them).
numpydoc_validation_overrides = {
    "PR01": [
        r"^(?![\s\S]*\n\s*Parameters\n\s*-+\n)[\s\S]*\n\s*Attributes\n\s*-+\n",
        r"^Result of :func:`\w+` \(a :class:`CraftResult`\)",  # its fields are CraftResult's
        r"^How each variable was read",  # VariableSpec: built by build_table
    ]
}
# DESIGNS is a mapping (data), documented by its module. The methods and properties on
# the class pages are validated like the functions (tests/test_docstrings.py checks the
# same without a build); the data fields autodoc shows from their ``#:`` comments are
# documented by their class's Attributes section (numpydoc would read the field's value).
numpydoc_validation_exclude = {
    r"\._[a-z]",
    r"\.__[a-z]+__$",
    r"^sparseclust\.simulate\.DESIGNS$",
    r"^sparseclust\.[A-Z]\w*\.(lazy_counts|center_|eval_env|inputs|dropped_constant|screening)$",
}

# -- MyST (the guide pages and the gallery are Markdown) -----------------------------
# no dollarmath: "$" is R's accessor in the text, and maths would need MathJax from a CDN
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# -- Gallery: the vignettes, run in fast mode at build time ---------------------------
vignette_gallery_dir = "gallery"
vignette_gallery_source = str(HERE.parent / "vignettes")
vignette_gallery_jobs = int(os.environ.get("SPARSECLUST_DOCS_JOBS", "2"))

# -- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sparseclust {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
html_sidebars = {"gallery/*": []}  # the gallery index links every page; width for code
html_context = {"default_mode": "light"}


def _tolerate_moved_source() -> None:
    """numpydoc looks for the ``def`` line of each object in its source file (for
    ``# numpydoc ignore`` comments); a file edited while the site builds can move it,
    and numpydoc then stops with a bare StopIteration. No such comments are used here,
    so a missing line is simply no line."""
    from numpydoc.validate import Validator

    find = Validator.source_file_def_line.fget

    def source_file_def_line(self):
        try:
            return find(self)
        except StopIteration:
            return None

    Validator.source_file_def_line = property(source_file_def_line)


_tolerate_moved_source()


def setup(app):
    app.connect("autodoc-process-signature", _no_constructor_signature)


# -- Optional: links into other projects' docs (off by default: the build is offline) --
if os.environ.get("SPARSECLUST_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "pandas": ("https://pandas.pydata.org/docs", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }
