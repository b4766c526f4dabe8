"""Stages of the data front (checks that do not fit one dtype or frame test)."""

import numpy as np


def test_spread_screen_never_hides_the_warning():
    """When the columns' ranges rule the spread warning out (``_spread_bounded``), the
    sds' ratio is within SPREAD_RATIO: the screen skips only sds that would not warn."""
    from sparseclust._data.stages import SPREAD_RATIO, _spread_bounded

    g = np.random.default_rng(5)
    screened = 0
    for _ in range(400):
        n, p = int(g.integers(2, 60)), int(g.integers(2, 6))
        x = g.standard_normal((n, p)) * 10.0 ** g.uniform(-3, 3, p)
        if g.random() < 0.3:  # extreme shapes: two-point columns, one outlier
            x[:, 0] = 0.0
            x[0, 0], x[1, 0] = 1.0, -1.0
        sd = x.std(axis=0, ddof=1)
        sd = sd[sd > 0]
        if _spread_bounded(x):
            screened += 1
            assert sd.size < 2 or sd.max() / sd.min() <= SPREAD_RATIO
    assert screened > 50  # the screen does decide
