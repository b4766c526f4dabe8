"""sparseclust: clustering with feature selection, for analysts who live in pandas.

Public functions are re-exported here; plotting lives in :mod:`sparseclust.plotting`,
data sets in :mod:`sparseclust.datasets`, metrics in :mod:`sparseclust.metrics`.
Importing the package is light: no pyplot, no statsmodels.api.
"""

from ._covariate.front import CovariateClusteringResult, covariate_clustering
from ._craft.front import craft, craft_lambda
from ._craft.result import CraftResult
from ._craft.variants import DPRFResult, EntropyResult, dp_rf, entropy_clustering
from ._data.params import declare_public
from ._data.preview import preview_columns
from ._data.table import ColumnTable, VariableSpec, build_table
from ._dpmeans.front import dpmeans, farthest_first_lambda
from ._dpmeans.result import DPMeansResult
from ._plot.dendrogram import color_dendrogram
from ._results.summary import Summary
from ._sparse.hclust import SparseHClustResult, hclust_sparse_permute, sparse_hclust
from ._sparse.kmeans import (
    SparseKMeansPath,
    SparseKMeansResult,
    kmeans_sparse_permute,
    sparse_kmeans,
    sparse_kmeans_path,
    sparse_weights,
)
from ._sparse.permute import PermuteResult
from .exceptions import (
    CalibrationWarning,
    ConvergenceWarning,
    DataWarning,
    FormulaError,
    PerformanceWarning,
    SparseclustWarning,
)

__version__ = "0.1.0"

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

#: Alias of :func:`kmeans_sparse_permute` (STYLE: both spellings are accepted).
sparse_kmeans_permute = kmeans_sparse_permute
#: Alias of :func:`hclust_sparse_permute`.
sparse_hclust_permute = hclust_sparse_permute

# The message of an unknown keyword names the public functions that take it.
declare_public(f for f in map(globals().get, __all__) if hasattr(f, "__rules__"))


def _kernels_of_the_installed_copy() -> None:
    """Running from a source checkout after ``pip install .`` (the repository's root
    first on ``sys.path``, as ``python -m sparseclust`` and ``python -m pytest`` put it
    there), the compiled kernels are in the installed copy, not next to these files: the
    package and its folders of compiled kernels then extend into the installed copy's
    (:func:`pkgutil.extend_path`), where Python finds the modules missing here. An
    installed package has no ``meson.build`` and is left as it is; so is an editable
    install (its import hook finds every module: the package's path is the hook's)."""
    import os
    import sys
    from pkgutil import extend_path

    global __path__
    here = os.path.dirname(__file__)
    if __path__ != [here] or not os.path.exists(os.path.join(here, "meson.build")):
        return
    __path__ = extend_path(__path__, __name__)
    for folder in ("_sparse", "_craft"):  # the folders with compiled kernels (meson.build)
        module = sys.modules[f"{__name__}.{folder}"]
        module.__path__ = extend_path(module.__path__, module.__name__)


_kernels_of_the_installed_copy()
