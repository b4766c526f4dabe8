"""The criterion of craft(m="auto") on designs where the right budget is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sparseclust import craft
from sparseclust._craft import core
from sparseclust._craft.select_m import (
    COARSE,
    TIE,
    _lowest,
    bic,
    n_parameters,
    neg_loglik,
    search_budgets,
)

RESTARTS = dict(n_init=5, n_seeded=2)


def design(share: float, seed: int = 0, n_per: int = 60, P: int = 10) -> pd.DataFrame:
    """3 clusters of ``n_per`` rows on ``P`` numeric features; each cluster differs from
    the others on its own ``round(share P)`` features (mean 2.5, sd 0.3; the sets
    overlap), every other cell is N(0, 1). The right budget is ``share``."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(3), n_per)
    X = rng.normal(size=(g.size, P))
    s = round(share * P)
    for k in range(3):
        feats = (np.arange(s) + 3 * k) % P
        rows = g == k
        X[np.ix_(rows, feats)] = 2.5 + 0.3 * rng.normal(size=(rows.sum(), s))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])


@pytest.mark.parametrize(("share", "seed"), [(0.3, 0), (0.3, 1), (0.5, 0)])
def test_the_known_budget_is_chosen(share, seed):
    """Each cluster differs on 3 (or 5) of 10 features: m = 0.3 (0.5) is chosen, and a
    larger budget loses. A background fitted to the whole data (every cluster's cells)
    chose m = 0.9 on these designs: a feature separating one cluster has an inflated
    whole-data sd, so every other cluster gained by selecting it too."""
    fit = craft(design(share, seed), k=3, rng=seed, **RESTARTS)
    tab = fit.m_selection.set_index("m")
    assert fit.m == share
    assert tab.loc[0.8, "bic"] > tab.loc[share, "bic"] + 10  # fitted by the search
    assert tab.loc[round(share - 0.1, 1), "bic"] > tab.loc[share, "bic"] + 10


def test_equal_models_tie_to_the_smaller_budget():
    """7 of 10 features per cluster: from m = 0.6 on, every budget leaves each feature
    unselected in at most one cluster or in all, i.e. describes the same distribution (a
    background fitted to one cluster's cells is that cluster's): the BICs tie and the
    smallest of those budgets is kept."""
    fit = craft(design(0.7), k=3, rng=0, **RESTARTS)
    tab = fit.m_selection.set_index("m")
    top = tab.loc[[0.6, 0.7, 0.8, 0.9], "bic"]
    assert float(top.max() - top.min()) <= TIE * abs(float(top.min()))
    assert fit.m == 0.6


def test_background_is_fitted_to_the_unselected_cells():
    """On a hand-made state: the background of a feature is the mean and sd (ddof 0) of
    the cells its clusters leave it unselected in; proportions enter the likelihood."""
    x = np.array([[0.0], [1.0], [2.0], [10.0], [14.0]])
    d = core.prepare(x.copy(), np.zeros((5, 0), dtype=np.int64), [], alpha=0.01)
    labels = np.array([0, 0, 1, 1, 2])
    v = np.array([[False], [True], [False]])
    st, lab = core.update(d, labels, 3, v, 0.05)
    fit = core.Fit(1.0, lab, None, st, np.zeros(1), 1, True, False, None, 0, np.ones(3))
    back = np.array([0.0, 1.0, 14.0])  # clusters 0 and 2
    sd_b = back.std()
    want = ((back - back.mean()) ** 2 / (2 * sd_b**2) + np.log(sd_b)).sum()
    sd_1 = np.array([2.0, 10.0]).std()
    want += ((np.array([2.0, 10.0]) - 6.0) ** 2 / (2 * sd_1**2) + np.log(sd_1)).sum()
    want -= 2 * np.log(2 / 5) * 2 + np.log(1 / 5)
    assert neg_loglik(d, fit) == pytest.approx(want, rel=1e-12)
    assert n_parameters(d, st) == 2 + 2 + 2  # cluster 1, background, K - 1
    assert bic(d, fit) == pytest.approx(2 * want + 6 * np.log(5), rel=1e-12)
    every = core.State(st.zeta, st.sigma, st.log_eta, st.counts, np.ones((3, 1), bool))
    assert n_parameters(d, every) == 3 * 2 + 2  # no background left


@pytest.mark.filterwarnings("ignore::sparseclust.exceptions.PerformanceWarning")
def test_dask_budgets_on_all_rows_match_memory():
    """With calibrate="full" on Dask the budgets are compared on the blocks (their
    statistics read from copies of the fits' states): the same table as in memory."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    df = design(0.3)
    ref = craft(df, k=3, rng=0, **RESTARTS)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            dd.from_pandas(df, npartitions=3),
            k=3,
            rng=0,
            backend="dask",
            calibrate="full",
            **RESTARTS,
        )
    assert got.m == ref.m
    np.testing.assert_allclose(got.m_selection["bic"], ref.m_selection["bic"], rtol=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_search_reaches_a_local_minimum(seed):
    """The budget search fits the candidates nearest 0.2, 0.5 and 0.8, then the best
    one's neighbours until none is better: the best budget fitted is no worse than
    both its neighbours, and at least as good as the three spread ones."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    cands = [round(0.2 + 0.1 * i, 1) for i in sorted(rng.choice(8, n, replace=False))]
    score = dict(zip(cands, rng.normal(size=n).round(1)))  # rounded: ties happen
    fitted = []

    def fit(m):
        assert m not in fitted  # each budget once
        fitted.append(m)

    def best(ms):
        return ms[_lowest(np.array([score[m] for m in ms]))]

    order = search_budgets(cands, fit, best)
    assert order == fitted
    if n <= 3:
        assert sorted(fitted) == cands
        return
    coarse = [min(cands, key=lambda m, c=c: (abs(m - c), m)) for c in COARSE]
    assert fitted[: len(set(coarse))] == list(dict.fromkeys(coarse))
    chosen = best(sorted(fitted))
    i = cands.index(chosen)
    for j in (i - 1, i + 1):
        if 0 <= j < n:
            assert cands[j] in fitted and score[cands[j]] >= score[chosen]
    assert all(score[chosen] <= score[m] for m in coarse)
