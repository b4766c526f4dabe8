"""CRAFT on a Dask DataFrame: its typed partitions turned into CRAFT blocks.

:func:`prepare_dask` reads the frame (:func:`~sparseclust._engine.dask.read_dask`),
standardises the numeric columns with the global means and sds, builds one
:class:`~sparseclust._craft.core.CraftData` block per partition on the workers and
sets the global column statistics on every block; the fit then runs the kernels of
:mod:`sparseclust._craft.core` over them through the executor. :func:`sample_data`
draws an in-memory sample of the prepared rows (lambda calibration on large data, and
the rows the automatic choice of K draws its ``k_sample_rows`` from: one rule with the
in-memory path, :func:`~sparseclust._craft.select_k.k_sample`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.blocks import BLOCK_ROWS, block_bounds, call_on_sample
from .._engine.dask import (
    DaskPrepared,
    block_executor,
    prepared,
    read_dask,
    scaled_blocks,
)
from . import core

__all__ = ["prepare_dask", "sample_data"]


def _scaled_block(raw, center, sd, n_levels, alpha, log_eta0) -> core.CraftData:
    """One partition as a block, its numeric cells scaled and missing ones set to 0 in
    place on a single copy (a worker holds every typed partition at this point); the
    column means and sds are the global ones, set by :func:`_with_globals`."""
    x = np.array(raw.num, dtype=np.float64)
    if center is not None:
        x -= center
        x /= sd
    obs = ~np.isnan(x)
    M = None if obs.all() else obs
    np.copyto(x, 0.0, where=~obs)
    P = x.shape[1]
    return core.prepare_block(
        x,
        M,
        raw.codes,
        n_levels,
        alpha=alpha,
        col_mean=np.zeros(P),
        col_sd=np.ones(P),
        log_eta0=log_eta0,
    )


def _block_moments(block: core.CraftData) -> tuple[np.ndarray, np.ndarray]:
    obs = block.M.sum(axis=0) if block.M is not None else np.full(block.P, block.n)
    return obs, block.X0.sum(axis=0)


def _block_sq_dev(block: core.CraftData, mean: np.ndarray) -> np.ndarray:
    dev = block.X0 - mean
    if block.M is not None:
        dev *= block.M
    return np.multiply(dev, dev, out=dev).sum(axis=0)


def _with_globals(block: core.CraftData, col_mean, col_sd) -> core.CraftData:
    return core.replace(block, col_mean=col_mean, col_sd=col_sd)


def prepare_dask(
    x: Any,
    data: Any,
    *,
    categorical: Any,
    numeric: Any,
    missing: str,
    scale: bool,
    alpha: float,
) -> DaskPrepared:
    """Read a Dask DataFrame into persisted CRAFT blocks.

    Returns ``spec`` (the variable spec, levels fixed over all partitions), ``data``
    (a :class:`~sparseclust._craft.core.Blocked`), ``center`` / ``scale``,
    ``parts`` (index, dropped) per partition, ``sizes``: a :class:`DaskPrepared`.
    """
    rd = read_dask(x, data, categorical=categorical, numeric=numeric, missing=missing)
    spec, run, client = rd.spec, rd.run, rd.client
    n_levels, lv_counts = rd.n_levels, rd.lv_counts
    P, Q = len(spec.numeric_names), len(spec.categorical_names)
    L = np.asarray(n_levels, dtype=np.int64)
    if Q:
        counts = np.concatenate(lv_counts).astype(np.float64)
        level_q = np.repeat(np.arange(Q), L)
        n_obs_q = np.array([c.sum() for c in lv_counts], dtype=np.float64)
        log_eta0 = np.log((counts + alpha) / (n_obs_q[level_q] + alpha * L[level_q]))
    else:
        log_eta0 = np.zeros(0)
    rd, blocks, center, sd = scaled_blocks(rd, _scaled_block, scale, n_levels, alpha, log_eta0)
    # 3. the global mean and sd of the columns as clustered
    if P:
        mom = run.map(_block_moments, blocks)
        c_obs = np.sum([m[0] for m in mom], axis=0)
        col_mean = np.divide(
            np.sum([m[1] for m in mom], axis=0), c_obs, out=np.zeros(P), where=c_obs > 0
        )
        ss = np.sum(run.map(_block_sq_dev, blocks, col_mean), axis=0)
        col_sd = np.sqrt(ss / np.maximum(c_obs - 1, 1))
    else:
        col_mean = col_sd = np.zeros(0)
    blocks = run.map(_with_globals, blocks, col_mean, col_sd, keep=client is not None)
    executor = block_executor(rd, blocks, _craft_pieces)
    header = core.prepare(np.zeros((0, P)), np.zeros((0, Q), dtype=np.int64), n_levels, alpha=alpha)
    header = core.replace(header, n=rd.n, col_mean=col_mean, col_sd=col_sd, log_eta0=log_eta0)
    return prepared(rd, executor, center, sd, data=core.Blocked(header, executor))


def _craft_pieces(blocks):
    """In this process: partitions cut into blocks of the in-memory path's size."""
    pieces, sizes = [], []
    for b in blocks:
        for a, e in block_bounds(b.n, BLOCK_ROWS):
            pieces.append(core.slice_rows(b, a, e))
            sizes.append(e - a)
    return pieces, sizes


def sample_data(prep: DaskPrepared, n_rows: int, rng: np.random.Generator) -> core.CraftData:
    """An in-memory random sample of the prepared rows (same global statistics)."""
    B: core.Blocked = prep.data
    pieces = call_on_sample(B.executor, n_rows, rng, _k_take)
    return _concat(pieces, B.header)


def _k_take(block, offset, state, rows):
    return state, core.take_rows(block, rows)


def _concat(pieces: list[core.CraftData], header: core.CraftData) -> core.CraftData:
    M = (
        None
        if all(p.M is None for p in pieces)
        else np.vstack([p.M if p.M is not None else np.ones(p.X0.shape, bool) for p in pieces])
    )
    return core.replace(
        header,
        n=int(sum(p.n for p in pieces)),
        X0=np.vstack([p.X0 for p in pieces]),
        M=M,
        codes=np.vstack([p.codes for p in pieces]),
        g0=np.concatenate([p.g0 for p in pieces]),
    )
