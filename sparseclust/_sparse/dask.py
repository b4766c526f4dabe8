"""Sparse k-means on a Dask DataFrame: numeric partitions as row blocks."""

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

__all__ = ["prepare_dask_numeric"]


def _numeric_block(raw: TypedPart, center, sd) -> np.ndarray:
    num = raw.num
    if center is not None:
        num = (num - center) / sd
    return np.ascontiguousarray(num, dtype=np.float64)


def _k_unobserved(block, offset, state):
    """Local positions of the rows with no observed value."""
    return state, np.flatnonzero(np.isnan(block).all(axis=1) & (block.shape[1] > 0))


def prepare_dask_numeric(
    x: Any, data: Any, *, categorical: Any, numeric: Any, missing: str, scale: bool
) -> DaskPrepared:
    """Read a Dask DataFrame of numeric columns into persisted blocks (one per partition)
    for sparse k-means; standardised with the global mean and sd when ``scale``.

    Categorical columns raise as in memory (pointing to ``craft()``); constant
    columns are kept (they get weight 0); a row with no observed value raises.
    """
    rd = read_dask(
        x,
        data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        allow_categorical=False,
    )
    rd, blocks, center, sd = scaled_blocks(rd, _numeric_block, scale)
    executor = block_executor(rd, blocks)
    bad = []
    for (idx, dropped), rows in zip(
        rd.parts, executor.map(_k_unobserved, executor.initial_states())[1]
    ):
        bad += idx[np.flatnonzero(~dropped)[rows]].tolist()
    if bad:
        raise ValueError(
            f"rows {bad[:5]} have no observed value; drop them (missing='drop' drops any row "
            "with a missing cell) or impute."
        )
    return prepared(rd, executor, center, sd)
