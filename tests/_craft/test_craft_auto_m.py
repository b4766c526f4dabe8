"""craft(m="auto"): the budget chosen by the BIC of the selected-feature model."""

from __future__ import annotations

import math
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from sparseclust import craft  # noqa: E402
from sparseclust._craft.select_m import candidate_budgets  # noqa: E402
from sparseclust.exceptions import DataWarning  # noqa: E402

RESTARTS = dict(n_init=5, n_seeded=2)  # = a candidate's first stage: all restarts


def small(sizes: tuple[int, ...] = (14, 13, 13), shift: float = 4.0) -> pd.DataFrame:
    """3 clusters (40 rows by default): 3 numeric (two informative) and 2 categorical
    columns."""
    rng = np.random.default_rng(3)
    g = np.repeat([0, 1, 2], sizes)
    n = g.size
    return pd.DataFrame(
        {
            "a": rng.normal(size=n) + shift * (g == 1),
            "b": rng.normal(size=n) + shift * (g == 2),
            "noise": rng.normal(size=n),
            "c": pd.Categorical(np.where(rng.random(n) < 0.8, g, rng.integers(0, 3, n))),
            "d": pd.Categorical(rng.integers(0, 2, n)),
        }
    )


def hand_nll_params(df: pd.DataFrame, fit) -> tuple[float, int]:
    """The NLL and parameter count of a fit's model computed from the data, labels and
    selection alone (raw units, ``scale=False``): selected numeric cells Gaussian with
    the cluster's mean and sd (ddof 0, floored at 0.05 global sd); the unselected cells
    of a feature Gaussian with their own mean and sd (ddof 0, same floor); categorical
    cells with the smoothed level shares (alpha = 0.01) of the cluster, or of the
    feature's unselected cells; the rows with the cluster proportions. Parameters: 2
    per selected numeric cell, L - 1 per selected categorical cell, as many for the
    background of each feature unselected somewhere, and K - 1 proportions."""
    lab = fit.labels.to_numpy(dtype=int)
    sel = fit.selected
    n, K = len(df), fit.n_clusters
    nk = np.bincount(lab, minlength=K)
    nll, npar = -float((nk * np.log(nk / n)).sum()), K - 1
    for col in df.columns:
        x = df[col]
        off = ~sel[col].to_numpy()[lab]  # the rows whose cluster leaves col unselected
        if isinstance(x.dtype, pd.CategoricalDtype):
            codes, L = x.cat.codes.to_numpy(), len(x.cat.categories)
            if off.any():
                back = (np.bincount(codes[off], minlength=L) + 0.01) / (off.sum() + 0.01 * L)
                nll -= np.log(back[codes[off]]).sum()
                npar += L - 1
            for k in np.flatnonzero(sel[col].to_numpy()):
                rows = codes[lab == k]
                p = (np.bincount(rows, minlength=L) + 0.01) / (rows.size + 0.01 * L)
                nll -= np.log(p[rows]).sum()
                npar += L - 1
        else:
            v = x.to_numpy(float)
            floor = 0.05 * v.std(ddof=1)  # the package's global sd: ddof 1
            groups = [v[lab == k] for k in np.flatnonzero(sel[col].to_numpy())]
            npar += 2 * len(groups)
            if off.any():
                groups.append(v[off])
                npar += 2
            for rows in groups:
                mu, sd = rows.mean(), max(rows.std(), floor)
                nll += ((rows - mu) ** 2 / (2 * sd * sd) + np.log(sd)).sum()
    return nll, npar


def hand_bic(df: pd.DataFrame, fit) -> float:
    """``2 NLL + p log n`` of :func:`hand_nll_params`."""
    nll, npar = hand_nll_params(df, fit)
    return 2 * nll + npar * math.log(len(df))


def test_bic_choice_matches_brute_force():
    """Every budget's BIC is the hand-computed BIC of craft(m=that budget) with the same
    restarts, and the lowest wins; the result is that fit, bit for bit. The budgets
    fitted are the search's (three spread, then the best one's neighbours): the chosen
    one is no worse than its neighbours among all the candidates."""
    df = small()
    fit = craft(df, k=3, scale=False, rng=0, **RESTARTS)
    tab = fit.m_selection
    cands = candidate_budgets(3, 2)
    assert tab.attrs["candidates"] == tuple(cands) == (0.4, 0.5, 0.8, 0.9)
    assert set(tab["m"]) >= {0.4, 0.5, 0.8} and tab["m"].is_monotonic_increasing
    every = {}
    for m in cands:
        one = craft(df, m=m, k=3, scale=False, rng=0, **RESTARTS)
        assert one.m_selection is None
        every[m] = hand_bic(df, one)
        if m not in set(tab["m"]):
            continue
        row = tab[tab["m"] == m].iloc[0]
        assert row.bic == pytest.approx(every[m], rel=1e-9)
        assert row.neg_loglik == pytest.approx(hand_nll_params(df, one)[0], rel=1e-9)
        assert row.n_params == hand_nll_params(df, one)[1]
        assert row.n_numeric == one.selected[["a", "b", "noise"]].sum(axis=1).max()
    best = tab["bic"].idxmin()
    assert tab["chosen"].tolist() == [i == best for i in range(len(tab))]
    i = cands.index(fit.m)
    for j in (i - 1, i + 1):  # a local minimum over all the candidates
        if 0 <= j < len(cands):
            assert cands[j] in set(tab["m"]) and every[cands[j]] >= every[fit.m]
    assert fit.m == tab.loc[best, "m"]
    same = craft(df, m=fit.m, k=3, scale=False, rng=0, **RESTARTS)
    assert same.labels.equals(fit.labels) and same.neg_loglik == fit.neg_loglik


def test_auto_result_is_the_fixed_fit_with_all_restarts():
    """With the default restarts (more than a candidate's first stage) the result is
    craft(m=<chosen>) with the same seeds, bit for bit (candidates' restarts reused)."""
    df = small()
    fit = craft(df, k=3, rng=1)
    ref = craft(df, m=fit.m, k=3, rng=1)
    assert fit.labels.equals(ref.labels) and fit.neg_loglik == ref.neg_loglik
    assert fit.restarts.equals(ref.restarts) and fit.lam == ref.lam
    assert fit.m_selection.attrs["restarts"] == (5, 2)


def test_larger_data_compare_budgets_on_a_subsample():
    """Above k_sample_rows the budgets are compared on that many rows; the chosen one
    runs on all rows, as craft(m=<chosen>) runs it."""
    df = small((40, 40, 40))
    fit = craft(df, k=3, k_sample_rows=60, rng=2, **RESTARTS)
    assert fit.m_selection.attrs["rows"] == 60
    ref = craft(df, m=fit.m, k=3, rng=2, **RESTARTS)
    assert fit.labels.equals(ref.labels) and fit.neg_loglik == ref.neg_loglik
    assert craft(df, k=3, rng=2, **RESTARTS).m_selection.attrs["rows"] == 120


def test_fixed_m_is_unchanged():
    df = small()
    fit = craft(df, m=0.5, k=3, rng=0)
    assert fit.m == 0.5 and fit.m_selection is None
    assert fit.summary().tables["parameters"].loc["m set by", "value"] == "given"
    assert "chosen by BIC" not in repr(fit)
    with pytest.raises(ValueError, match=r"m was given \(m=0.5\)"):
        fit.plot_m_selection()


def test_print_and_summary_report_the_choice():
    fit = craft(small(), k=3, rng=0, **RESTARTS)
    n, of = len(fit.m_selection), len(fit.m_selection.attrs["candidates"])
    over = f"{n} budgets" if n == of else f"{n} of {of} budgets"
    assert f"m = {fit.m:g} chosen by BIC over {over} (see m_selection)." in repr(fit)
    s = fit.summary()
    assert s.tables["parameters"].loc["m set by", "value"] == f"BIC over {n} budgets"
    assert s.tables["m_selection"] is fit.m_selection
    assert any("chosen by BIC" in note for note in s.notes)


def test_plot_m_selection_structure():
    fit = craft(small(), k=3, rng=0, **RESTARTS)
    ax = fit.plot_m_selection()
    try:
        assert ax.get_xlabel() == "budget m (share of features selected per cluster)"
        assert ax.get_ylabel() == "BIC of the selected-feature model"
        line = ax.get_lines()[0]
        np.testing.assert_array_equal(line.get_xdata(), fit.m_selection["m"])
        np.testing.assert_array_equal(line.get_ydata(), fit.m_selection["bic"])
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["BIC", f"chosen m = {fit.m:g}"]
        assert len(ax.texts) == len(fit.m_selection)  # the counts above the points
    finally:
        plt.close(ax.figure)


def test_auto_k_then_m():
    """Neither k nor m: K is chosen at m = 0.5 (as craft(m=0.5) chooses it), then m at K."""
    df = small((30, 30, 30), 5.0)
    kw = dict(k_max=4, n_pairs=2, n_refs=2, n_init=4, rng=0)
    with warnings.catch_warnings():  # K = 4 of k_max = 4 on a flat curve: warned, not the point
        warnings.simplefilter("ignore", DataWarning)
        fit = craft(df, **kw)
        ref = craft(df, m=0.5, **kw)
    assert fit.k == ref.k and fit.k_selection.equals(ref.k_selection)
    assert fit.k > 1 and fit.m_selection is not None
    assert fit.m == fit.m_selection.loc[fit.m_selection["chosen"], "m"].item()
    assert fit.lam_method == "stability"


def test_one_cluster_keeps_the_reference_budget():
    """At K = 1 every budget is the same one-cluster model: no choice, m = 0.5."""
    fit = craft(small(), k=1, n_init=2, rng=0)
    assert fit.m == 0.5 and fit.m_selection is None


def test_auto_m_with_a_given_lambda():
    df = small()
    fit = craft(df, lam=5.0, rng=0, n_init=6)
    assert fit.lam_method == "given" and fit.lam == 5.0
    ref = craft(df, m=fit.m, lam=5.0, rng=0, n_init=6)
    assert fit.labels.equals(ref.labels)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"m": "x"}, (TypeError, ValueError), r"m must .*'auto'"),
        ({"m": 1.5}, ValueError, r"m must .*'auto'"),
        ({"m": 0.0}, ValueError, r"m must"),
        ({"rho": 0.1}, ValueError, r"rho=0.1 needs a numeric m"),
        ({"lam": "farthest_first"}, ValueError, r"lam='farthest_first' needs a numeric m"),
    ],
)
def test_bad_m(kwargs, err, match):
    with pytest.raises(err, match=match):
        craft(small(), k=3, **kwargs)


def test_approximate_budget_ignores_auto():
    """The approximate budget selects by eps_c / eps_v; m='auto' is the prior mean 0.5."""
    fit = craft(small(), k=3, budget="approximate", n_init=3, rng=0)
    assert fit.m == 0.5 and fit.m_selection is None


def test_cli_and_sklearn_take_auto(capsys):
    from sparseclust._cli import main
    from sparseclust.sklearn import CRAFT

    assert main(["craft", "--dataset", "wine", "--m", "auto", "--k", "3", "--n-init", "5"]) == 0
    assert "chosen by BIC" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["craft", "--dataset", "wine", "--m", "half", "--k", "3"])
    assert "--m takes a number in (0, 1) or 'auto'" in capsys.readouterr().err
    model = CRAFT(n_clusters=3, n_init=5, random_state=0).fit(small())
    assert model.m == "auto" and model.result_.m_selection is not None
