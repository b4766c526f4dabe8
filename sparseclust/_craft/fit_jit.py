"""The start of a compiled CRAFT fit (:func:`~sparseclust._craft.core._compiled_passes`).

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). A fit's
first cluster is opened at a random row as the compiled passes open every other
cluster (``loop_jit._singleton``: centre the row, sd 1, one-hot level counts, the log
shares read from the table of numpy's logs), written straight into the loop's buffers:
the same numbers as :func:`~sparseclust._craft.core.singleton`, without its dozen small
numpy calls on each of the hundreds of fits of a calibration.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel
from .loop_jit import _all_costs, _singleton

__all__ = ["final_costs", "open_at"]


@kernel
def open_at(cur, i, v, dat):  # pragma: no cover - compiled
    """Cluster 0 of the buffers ``cur`` (zeta, sigma, log_eta, counts, v) opened at row
    ``i`` with the selection ``v``; ``dat``: the block's loop inputs
    (``core._loop_inputs``). Returns ``i``."""
    _singleton(cur, 0, i, v, dat)
    return i


@kernel
def final_costs(cur, K, dat, fp, masked):  # pragma: no cover - compiled
    """The costs (rows, clusters) of every row of the block to the ``K`` clusters of
    ``cur`` (``loop_jit._all_costs``: the numbers of the loop's passes, those of
    ``core._cost_pieces``); ``fp``: the loop's float parameters (F_delta, sigma_override
    read)."""
    return _all_costs(cur, np.int64(0), K, dat, fp, masked)
