"""The data as CRAFT fits it: the typed table, its arrays and the standardisation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._data.stages import repair_sd
from .._data.table import ColumnTable
from . import core as core

__all__ = ["Prepared", "prepare_table"]


@dataclass(frozen=True)
class Prepared:
    """The data of one fit, as the fronts, the K selection and the result share it.

    Attributes
    ----------
    table : ColumnTable
        The typed input (an empty table with the variables' spec on the Dask backend).
    data : CraftData or Blocked
        The arrays the fits run on (numeric columns standardised when ``scale``).
    center, scale : ndarray or None
        The standardisation of the numeric columns (None: not standardised), to
        report centres and sds in the data's own units and to prepare new data.
    """

    table: ColumnTable
    data: core.CraftData | core.Blocked
    center: np.ndarray | None
    scale: np.ndarray | None


def prepare_table(table: ColumnTable, scale: bool, alpha: float) -> Prepared:
    """The table's arrays for CRAFT, numeric columns standardised with ``scale``
    (mean 0, sd 1; a constant column keeps sd 1; a tiny sd is computed from scaled
    deviations, :func:`~sparseclust._data.stages.repair_sd`), level shares smoothed by
    ``alpha``."""
    num = table.numeric
    center = sd = None
    if scale and num.shape[1]:
        center = np.nanmean(num, axis=0)
        sd = repair_sd(num, center, np.nanstd(num, axis=0, ddof=1))
        sd = np.where(sd > 0, sd, 1.0)
        num = np.subtract(num, center)  # one scratch block, scaled in place
        num /= sd
    else:
        num = num.copy()
    n_levels = [len(table.levels[c]) for c in table.categorical_names]
    data = core.prepare(num, table.codes, n_levels, alpha=alpha, overwrite=True)
    return Prepared(table, data, center, sd)
