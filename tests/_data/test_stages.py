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


def _extreme_ranges_frame():
    """24 rows: a column of range about 1e-300 beside one of about 1e10 (issue 34.1)."""
    import pandas as pd

    g = np.random.default_rng(0)
    return pd.DataFrame(
        {"tiny": g.random(24) * 1e-300, "big": g.random(24) * 1e10, "unit": g.random(24)}
    )


def test_spread_screen_extreme_ranges_no_overflow():
    """Issue 34.1: ranges of 1e-300 and 1e10 overflowed the screen's quotient
    (``RuntimeWarning: overflow encountered in scalar divide``); it compares in logs."""
    from sparseclust._data.stages import _spread_bounded

    x = _extreme_ranges_frame().to_numpy()
    with np.errstate(all="raise"):
        assert _spread_bounded(x) is False  # no bound: the sds decide
        assert _spread_bounded(x[:, [0, 0]] * [1.0, 2.0]) is True  # 1e-300 and 2e-300


def test_extreme_ranges_only_package_warnings():
    """Issue 34.1, as a user meets it: every numeric method on the frame emits the
    package's own warnings (the spread DataWarning), never numpy's."""
    import warnings

    import sparseclust as sc
    from sparseclust.exceptions import SparseclustWarning

    df = _extreme_ranges_frame()
    calls = [
        lambda: sc.sparse_kmeans(df, k=2, wbound=1.2, nstart=2, rng=0),
        lambda: sc.sparse_hclust(df, wbound=1.2),
        lambda: sc.dpmeans(df, k=2, rng=0),
        lambda: sc.farthest_first_lambda(df, k=2),
        lambda: sc.sparse_weights(df, labels=np.arange(24) % 2, wbound=1.2),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call()
        leaked = [w for w in seen if not issubclass(w.category, SparseclustWarning)]
        assert not leaked, [f"{w.category.__name__}: {w.message}" for w in leaked]
