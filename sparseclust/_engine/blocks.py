"""Row blocks and where they live: one map/reduce interface for the iterative cores.

A core written against :class:`LocalBlocks` runs unchanged on a Dask cluster
(:class:`sparseclust._engine.dask.FutureBlocks`): the data are a sequence of row blocks,
each block keeps a small *state* next to it (its rows' labels, per-pass caches), and
the driver calls ``map(kernel, states, *args)``: ``kernel(block, offset, state,
*args) -> (new_state, result)`` runs on every block, new states stay with the
blocks, the (small) results come back to the driver in block order. Reductions are
done by the driver, in block order, so results do not depend on the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["BLOCK_ROWS", "LocalBlocks", "block_bounds", "call_on_row", "call_on_sample"]

#: Rows per block of the in-memory path (16k rows kept the per-block temporaries in
#: cache and measured faster than whole-array products on 1,000,000 rows).
BLOCK_ROWS = 16_384


def block_bounds(n: int, block_rows: int = BLOCK_ROWS) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(n)`` in blocks of ``block_rows``."""
    if n == 0:
        return [(0, 0)]
    return [(s, min(s + block_rows, n)) for s in range(0, n, block_rows)]


class LocalBlocks:
    """Blocks held in this process; ``map`` is a loop in block order."""

    def __init__(self, blocks: Sequence[Any], sizes: Sequence[int]) -> None:
        self.blocks = list(blocks)
        self.sizes = [int(s) for s in sizes]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64).tolist()
        self.n = int(sum(self.sizes))

    def __len__(self) -> int:
        return len(self.blocks)

    def initial_states(self) -> list[Any]:
        return [None] * len(self.blocks)

    def map(
        self, kernel: Callable[..., tuple[Any, Any]], states: Sequence[Any], *args: Any
    ) -> tuple[list[Any], list[Any]]:
        new_states, results = [], []
        for b, off, s in zip(self.blocks, self.offsets, states):
            ns, r = kernel(b, off, s, *args)
            new_states.append(ns)
            results.append(r)
        return new_states, results

    def call(
        self, j: int, kernel: Callable[..., tuple[Any, Any]], state: Any, *args: Any
    ) -> tuple[Any, Any]:
        """``kernel`` on block ``j`` only."""
        return kernel(self.blocks[j], self.offsets[j], state, *args)

    def call_many(self, calls: Sequence[tuple]) -> list[tuple[Any, Any]]:
        """``[call(*c) for c in calls]``: ``(j, kernel, state, *args)`` each."""
        return [self.call(*c) for c in calls]

    def fetch(self, states: Sequence[Any]) -> list[Any]:
        """The states themselves (they already live here)."""
        return list(states)

    def copy(self, states: Sequence[Any]) -> list[Any]:
        """The same states: kernels return new states and never change one in place."""
        return list(states)


def call_on_row(ex: Any, i: int, kernel: Callable[..., tuple[Any, Any]]) -> Any:
    """``kernel(block, offset, None, i)``'s result on the block holding global row ``i``."""
    j = int(np.searchsorted(np.asarray(ex.offsets), i, side="right") - 1)
    while ex.sizes[j] == 0 or i >= ex.offsets[j] + ex.sizes[j]:
        j += 1
    return ex.call(j, kernel, None, i)[1]


def call_on_sample(
    ex: Any, n_rows: int, rng: np.random.Generator, kernel: Callable[..., tuple[Any, Any]]
) -> list[Any]:
    """A uniform random sample of ``n_rows`` rows (without replacement, in data order):
    ``kernel(block, offset, None, local_rows)``'s results, block by block."""
    rows = np.sort(rng.choice(ex.n, size=min(n_rows, ex.n), replace=False))
    calls = []
    for j, (off, size) in enumerate(zip(ex.offsets, ex.sizes)):
        mine = rows[(rows >= off) & (rows < off + size)] - off
        if mine.size:
            calls.append((j, kernel, None, mine))
    return [r for _, r in ex.call_many(calls)]
