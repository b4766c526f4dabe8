"""Parameter rules shared by the sparse clustering fronts (k-means and hierarchical),
declared once as data with the rule classes of :mod:`sparseclust._data.params`."""

from __future__ import annotations

import math

from .._data.params import (
    Choice,
    Columns,
    Flag,
    Int,
    Numbers,
    Progress,
    Seed,
    Spelling,
    Workers,
)
from .weights import WEIGHT_MODES

__all__ = [
    "ALGORITHM",
    "BACKEND",
    "COLUMNS",
    "DATA_RULES",
    "DISSIMILARITY",
    "FLAG",
    "GAP_RULE",
    "MAX_ROUNDS",
    "MISSING",
    "N_JOBS",
    "PERMUTE_RULES",
    "SEED",
    "SPARCL_MAX_ITER",
    "SPARCL_NITER",
    "WBOUNDS",
    "WEIGHTS",
    "default_wbound",
]


#: The default cap on the alternation of both sparse methods: sparse k-means' rounds
#: (``max_iter``) and sparse hierarchical clustering's iterations (``niter``). One rule:
#: the default converges on ordinary data, and stopping at the weights' tolerance
#: (relative L1 change ``<= 1e-4``, sparcl's) costs nothing above it. With a cap of 200,
#: every one of 321 sparse k-means fits of simulated (up to 1000 x 1000) and shipped data
#: converged within 18 rounds (sparcl's 6 stopped 22 % of them short); every one of 180
#: hierarchical fits within 41 (sparcl's 15 stopped 14 % short).
MAX_ROUNDS = 50
#: sparcl's caps, one keyword away: ``max_iter=6`` (``KMeansSparseCluster``'s
#: ``maxiter``) and ``niter=15`` (``HierarchicalSparseCluster``'s).
SPARCL_MAX_ITER = 6
SPARCL_NITER = 15

#: ``weights=``: the weight step's mode.
WEIGHTS = Choice(WEIGHT_MODES)
#: ``missing=`` of the numeric-only methods.
MISSING = Choice(("raise", "drop", "native"))
#: ``backend=`` of sparse k-means.
BACKEND = Choice(("auto", "numpy", "dask"))
#: ``algorithm=`` of sparse k-means' partition step (``"auto"`` is resolved in the body:
#: it depends on the backend). R's ``kmeans`` spellings are accepted in any case
#: (``"Hartigan-Wong"``, ``"Lloyd"``, and ``"Forgy"``, R's other name of Lloyd's).
ALGORITHM = Spelling(
    ("auto", "hartigan-wong", "lloyd"),
    {"hartigan_wong": "hartigan-wong", "forgy": "lloyd"},
    lower=True,
)
#: ``dissimilarity=`` of sparse hierarchical clustering (sparcl's spellings accepted).
DISSIMILARITY = Spelling(
    ("squared", "absolute"),
    {
        "squared.distance": "squared",
        "squared_distance": "squared",
        "absolute.value": "absolute",
        "absolute_value": "absolute",
    },
    note="sparcl's 'squared.distance', 'absolute.value' are accepted too",
)
#: ``n_jobs=``: joblib workers.
N_JOBS = Workers()
#: ``numeric=`` / ``categorical=``.
COLUMNS = Columns()
#: ``keep_data=``, ``scale=`` and the other plain flags.
FLAG = Flag()
#: ``rng=``.
SEED = Seed()
#: ``wbounds=`` of the permutation fronts: at least two L1 bounds > 1 (None: the
#: default grid).
WBOUNDS = Numbers(min=1, min_inclusive=False, min_len=2, none=True, example="[1.5, 2.0, 3.0]")
#: ``rule=`` of the permutation fronts: how the gap statistic picks the bound.
GAP_RULE = Choice(("max", "1se"))

#: The rules of the weight step and data parameters every sparse fit front declares.
DATA_RULES = {
    "weights": WEIGHTS,
    "missing": MISSING,
    "scale": FLAG,
    "numeric": COLUMNS,
    "categorical": COLUMNS,
    "keep_data": FLAG,
}

#: The rules of the permutation (gap) fronts' own parameters.
PERMUTE_RULES = {
    "nperms": Int(min=2),
    "rule": GAP_RULE,
    "n_jobs": N_JOBS,
    "progress": Progress(),
    "wbounds": WBOUNDS,
}


def default_wbound(p: int) -> float:
    """The default L1 bound: sparcl's ``0.5 sqrt(p)``, repaired for ``p <= 4``.

    sparcl's default is ``<= 1`` for ``p <= 4`` and then fails its own check
    ("Cannot have wbound <= 1"). There the midpoint ``(1 + sqrt(p)) / 2`` between one
    feature (bound 1) and no sparsity (bound ``sqrt(p)``) is used instead: 1.21, 1.37
    and 1.5 for ``p`` = 2, 3, 4. With ``p = 1`` any bound gives the single weight 1;
    1.5 is returned.

    Examples
    --------
    >>> default_wbound(100), default_wbound(4), round(default_wbound(2), 4), default_wbound(1)
    (5.0, 1.5, 1.2071, 1.5)
    """
    half = 0.5 * math.sqrt(p)
    if half > 1:
        return half
    if p <= 1:
        return 1.5
    return (1.0 + math.sqrt(p)) / 2.0
