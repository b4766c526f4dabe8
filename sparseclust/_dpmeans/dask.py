"""DP-means on a Dask DataFrame: its typed partitions turned into design blocks."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.dask import (
    DaskPrepared,
    TypedPart,
    block_executor,
    prepared,
    read_dask,
    scaled_blocks,
)

__all__ = ["prepare_dask_dp"]


def _dp_block(raw: TypedPart, center, sd, n_levels: list[int]) -> np.ndarray:
    """The DP-means design of one partition: numeric block (standardised when asked)
    then a full one-hot block per categorical (as ``ColumnTable.to_numeric``)."""
    num = raw.num
    if center is not None:
        num = (num - center) / sd
    blocks = [np.asarray(num, dtype=np.float64)]
    codes = raw.codes
    for j, L in enumerate(n_levels):
        c = codes[:, j]
        b = np.zeros((c.size, L))
        ok = c >= 0
        b[np.flatnonzero(ok), c[ok]] = 1.0
        b[~ok] = np.nan
        blocks.append(b)
    return np.ascontiguousarray(np.hstack(blocks) if len(blocks) > 1 else blocks[0])


def prepare_dask_dp(
    x: Any, data: Any, *, categorical: Any, numeric: Any, missing: str, scale: bool
) -> DaskPrepared:
    """Read a Dask DataFrame into persisted DP-means design blocks (one per partition);
    ``names``: the design's columns (the front wraps the executor as its data)."""
    rd = read_dask(x, data, categorical=categorical, numeric=numeric, missing=missing)
    spec = rd.spec
    rd, blocks, center, sd = scaled_blocks(rd, _dp_block, scale, rd.n_levels)
    executor = block_executor(rd, blocks)
    names = list(spec.numeric_names) + [
        f"{c}[{lv}]" for c in spec.categorical_names for lv in spec.levels[c]
    ]
    return prepared(rd, executor, center, sd, names=names)
