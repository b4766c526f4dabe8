"""sparseclust: clustering with feature selection, for analysts who live in pandas.

Public functions are re-exported here; plotting lives in :mod:`sparseclust.plotting`,
data sets in :mod:`sparseclust.datasets`, metrics in :mod:`sparseclust.metrics`.
Importing the package is light: each public name loads its method on first use
(``from sparseclust import craft`` loads CRAFT, not the hierarchical clustering's
scipy modules), and a method's first call then imports nothing: it is like any other.
"""

import importlib as _importlib

from ._data.params import declare_public
from .exceptions import (
    CalibrationWarning,
    ConvergenceWarning,
    DataWarning,
    FormulaError,
    PerformanceWarning,
    SparseclustWarning,
)

__version__ = "0.1.0"

#: Where each public name lives: ``name -> (module, attribute)``. A name is imported on
#: first use (PEP 562), so ``from sparseclust import craft`` loads CRAFT and what its
#: calls need, not the hierarchical clustering's or the covariate clustering's scipy
#: modules; each method's module imports those at its top, and its first call is then
#: like any other (no import inside the call).
_LAZY = {
    "CovariateClusteringResult": ("._covariate.front", "CovariateClusteringResult"),
    "covariate_clustering": ("._covariate.front", "covariate_clustering"),
    "craft": ("._craft.front", "craft"),
    "craft_lambda": ("._craft.front", "craft_lambda"),
    "CraftResult": ("._craft.result", "CraftResult"),
    "DPRFResult": ("._craft.variants", "DPRFResult"),
    "EntropyResult": ("._craft.variants", "EntropyResult"),
    "dp_rf": ("._craft.variants", "dp_rf"),
    "entropy_clustering": ("._craft.variants", "entropy_clustering"),
    "preview_columns": ("._data.preview", "preview_columns"),
    "ColumnTable": ("._data.table", "ColumnTable"),
    "VariableSpec": ("._data.table", "VariableSpec"),
    "build_table": ("._data.table", "build_table"),
    "dpmeans": ("._dpmeans.front", "dpmeans"),
    "farthest_first_lambda": ("._dpmeans.front", "farthest_first_lambda"),
    "DPMeansResult": ("._dpmeans.result", "DPMeansResult"),
    "color_dendrogram": ("._plot.dendrogram", "color_dendrogram"),
    "Summary": ("._results.summary", "Summary"),
    "SparseHClustResult": ("._sparse.hclust", "SparseHClustResult"),
    "hclust_sparse_permute": ("._sparse.hclust", "hclust_sparse_permute"),
    "sparse_hclust": ("._sparse.hclust", "sparse_hclust"),
    #: Alias of :func:`hclust_sparse_permute`.
    "sparse_hclust_permute": ("._sparse.hclust", "hclust_sparse_permute"),
    "SparseKMeansPath": ("._sparse.kmeans", "SparseKMeansPath"),
    "SparseKMeansResult": ("._sparse.kmeans", "SparseKMeansResult"),
    "kmeans_sparse_permute": ("._sparse.kmeans", "kmeans_sparse_permute"),
    #: Alias of :func:`kmeans_sparse_permute` (STYLE: both spellings are accepted).
    "sparse_kmeans_permute": ("._sparse.kmeans", "kmeans_sparse_permute"),
    "sparse_kmeans": ("._sparse.kmeans", "sparse_kmeans"),
    "sparse_kmeans_path": ("._sparse.kmeans", "sparse_kmeans_path"),
    "sparse_weights": ("._sparse.kmeans", "sparse_weights"),
    "PermuteResult": ("._sparse.permute", "PermuteResult"),
}

#: The public modules, imported on first use as attributes (``sparseclust.datasets``)
#: as well as by ``import sparseclust.datasets``.
_SUBMODULES = frozenset({"datasets", "metrics", "plotting", "simulate", "sklearn"})

__all__ = [
    "CalibrationWarning",
    "ColumnTable",
    "ConvergenceWarning",
    "CovariateClusteringResult",
    "CraftResult",
    "DPMeansResult",
    "DPRFResult",
    "DataWarning",
    "EntropyResult",
    "FormulaError",
    "PermuteResult",
    "SparseHClustResult",
    "SparseKMeansPath",
    "SparseKMeansResult",
    "PerformanceWarning",
    "SparseclustWarning",
    "Summary",
    "VariableSpec",
    "__version__",
    "build_table",
    "color_dendrogram",
    "covariate_clustering",
    "craft",
    "craft_lambda",
    "dp_rf",
    "dpmeans",
    "entropy_clustering",
    "farthest_first_lambda",
    "hclust_sparse_permute",
    "kmeans_sparse_permute",
    "preview_columns",
    "sparse_hclust",
    "sparse_hclust_permute",
    "sparse_kmeans",
    "sparse_kmeans_path",
    "sparse_kmeans_permute",
    "sparse_weights",
]


def __getattr__(name: str):  # PEP 562: the public names load on first use
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(_importlib.import_module(module, __name__), attribute)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later uses are a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)


def _public_functions() -> list:
    """The public functions, each loaded (for the message of an unknown keyword, which
    names the public functions that take it: built only when one is given)."""
    return [f for f in map(__getattr__, _LAZY) if hasattr(f, "__rules__")]


declare_public(_public_functions)


def _kernels_of_the_installed_copy() -> None:
    """Running from a source checkout after ``pip install .`` (the repository's root
    first on ``sys.path``, as ``python -m sparseclust`` and ``python -m pytest`` put it
    there), the compiled kernels are in the installed copy, not next to these files: the
    package and its folders of compiled kernels then extend into the installed copy's
    (:func:`pkgutil.extend_path`), where Python finds the modules missing here. An
    installed package has no ``meson.build`` and is left as it is; so is an editable
    install (its import hook finds every module: the package's path is the hook's)."""
    import os
    from pkgutil import extend_path

    global __path__
    here = os.path.dirname(__file__)
    if __path__ != [here] or not os.path.exists(os.path.join(here, "meson.build")):
        return
    __path__ = extend_path(__path__, __name__)
    for folder in ("_sparse", "_craft"):  # the folders with compiled kernels (meson.build)
        module = _importlib.import_module(f".{folder}", __name__)
        module.__path__ = extend_path(module.__path__, module.__name__)


_kernels_of_the_installed_copy()
