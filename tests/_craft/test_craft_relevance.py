"""Per-variable relevance of a CRAFT fit (``CraftResult.relevance``) and its plot.

References, none of them the code under test: the model's negative log-likelihood
(``core.neg_loglik``) and the CAF cost (``core.costs``) recomputed with the one
selection cell flipped, for every cluster and variable; the Kullback-Leibler
divergence of the cluster's normal from the whole data's, from pandas groupby on the
raw (unscaled) columns; the between-cluster sum of squares of DP-RF's one-hot design.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

import sparseclust._craft.core as core
from sparseclust import craft, dp_rf, entropy_clustering
from sparseclust.plotting import plot_subspaces
from sparseclust.simulate import craft_fig2a


def _mixed(n: int = 90, seed: int = 3) -> pd.DataFrame:
    """Three groups on two of three numeric and two of three categorical columns,
    with missing cells in both kinds; the column kinds interleaved."""
    rng = np.random.default_rng(seed)
    g = np.repeat([0, 1, 2], n // 3)
    df = pd.DataFrame(
        {
            "x1": rng.normal(3.0 * g, 1.0),
            "c1": pd.Categorical(np.where(rng.random(n) < 0.8, np.array(list("abc"))[g], "a")),
            "x2": rng.normal(10.0 * (g == 1), 2.0) * 100.0,
            "c2": pd.Categorical(rng.choice(list("uvw"), n)),
            "x3": rng.normal(0.0, 5.0, n),
            "c3": pd.Categorical(np.where(g == 2, "z", rng.choice(list("yz"), n))),
        }
    )
    df.loc[[4, 50], "x1"] = np.nan
    df.loc[[7, 61], "c2"] = np.nan
    return df


@pytest.fixture(scope="module", params=[0.5, 1 / 3], ids=["m=0.5", "m=1/3"])
def mixed_fit(request):
    return craft(_mixed(), m=request.param, k=3, n_init=4, rng=0)


def _flipped(st: core.State, k: int, d: int, value: bool) -> core.State:
    v = st.v.copy()
    v[k, d] = value
    return core.State(st.zeta, st.sigma, st.log_eta, st.counts, v)


def test_relevance_is_the_objective_drop_of_flipping_one_cell(mixed_fit):
    fit = mixed_fit
    data, st = fit._prep.data, fit._state
    lab = fit.labels.to_numpy(dtype=np.int64)
    internal = fit._prep.table.numeric_names + fit._prep.table.categorical_names
    rel = fit.relevance[internal].to_numpy()
    for k in range(st.K):
        for d in range(st.v.shape[1]):
            off = core.neg_loglik(data, _flipped(st, k, d, False), lab)
            on = core.neg_loglik(data, _flipped(st, k, d, True), lab)
            # the objective adds F_delta once for the selected cell
            assert rel[k, d] == pytest.approx(off - on - fit.F_delta, rel=1e-9, abs=1e-9)


def test_categorical_relevance_is_the_caf_cost_drop(mixed_fit):
    fit = mixed_fit
    data, st = fit._prep.data, fit._state
    lab = fit.labels.to_numpy(dtype=np.int64)
    rel = fit.relevance
    for k in range(st.K):
        rows = lab == k
        for j, name in enumerate(fit._prep.table.categorical_names):
            d = data.P + j
            off = core.costs(data, _flipped(st, k, d, False), fit.F_delta)[rows, k].sum()
            on = core.costs(data, _flipped(st, k, d, True), fit.F_delta)[rows, k].sum()
            # the cost d_nk charges F_delta on every row; the objective once
            expected = off - on + (rows.sum() - 1) * fit.F_delta
            assert rel.loc[k, name] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_numeric_relevance_is_n_times_kl_in_any_units():
    rng = np.random.default_rng(5)
    g = np.repeat([0, 1, 2], 40)
    df = pd.DataFrame(
        {
            "x1": rng.normal(6.0 * g, 1.0),
            "x2": rng.normal(8.0 * (g == 1), 1.5) * 100.0,
            "x3": rng.normal(0.0, 5.0, g.size),
        }
    )
    # standardised (scale=True); 5 restarts reach the classes (ARI 1; 4 reach a partition
    # of ARI 0.65-0.73 that depends on which restarts the calibration brings to k)
    fit = craft(df, m=0.5, k=3, n_init=5, rng=0)
    lab = fit.labels.to_numpy(dtype=np.int64)
    g = df.groupby(lab)
    mu_k, sd_k, n_k = g.mean(), g.std(ddof=0), g.size().to_numpy()[:, None]
    mu, sd = df.mean(), df.std(ddof=1)
    kl = np.log(sd / sd_k) + (sd_k**2 + (mu_k - mu) ** 2) / (2 * sd**2) - 0.5
    # no sigma floor reached here (the floor is 5 % of the global sd)
    assert (sd_k > 0.05 * sd).all().all()
    expected = n_k * kl.to_numpy() - fit.F_delta
    np.testing.assert_allclose(fit.relevance[df.columns].to_numpy(), expected, rtol=1e-8)
    assert fit.relevance["x1"].min() > 10  # the separating columns
    assert fit.relevance["x3"].max() < 5  # noise


def test_relevance_labelled_like_the_selection(mixed_fit):
    fit = mixed_fit
    rel = fit.relevance
    assert rel.index.equals(fit.selected.index) and rel.columns.equals(fit.selected.columns)
    assert list(rel.columns) == ["x1", "c1", "x2", "c2", "x3", "c3"]
    assert rel.dtypes.map(lambda t: t == np.float64).all()
    # the signal columns separate every cluster more than the noise columns do
    assert rel[["x1", "c1"]].sum().min() > rel[["c2", "x3"]].sum().max()


def test_summary_has_the_relevance_table(mixed_fit):
    tables = mixed_fit.summary().tables
    pd.testing.assert_frame_equal(tables["relevance"], mixed_fit.relevance)
    assert "Relevance" in str(mixed_fit.summary())


def test_dp_rf_relevance_is_between_cluster_sum_of_squares():
    sim = craft_fig2a(n_per_cluster=30, rng=0)
    fit = dp_rf(sim.data, m=1 / 3, k=3, rng=0)
    lab = fit.labels.to_numpy(dtype=np.int64)
    X = pd.concat(
        {c: pd.get_dummies(sim.data[c].astype(str)).astype(float) for c in sim.data}, axis=1
    )
    X.columns = [f"{a}[{b}]" for a, b in X.columns]
    bss = (X.groupby(lab).mean() - X.mean()) ** 2 * np.bincount(lab)[:, None]
    expected = bss[fit.relevance.columns].to_numpy() - fit.F_delta
    np.testing.assert_allclose(fit.relevance.to_numpy(), expected, rtol=1e-9, atol=1e-9)


def test_entropy_relevance_ranks_the_true_subspaces():
    sim = craft_fig2a(n_per_cluster=30, rng=0)
    fit = entropy_clustering(sim.data, k=3, rng=0)
    rel = fit.relevance
    for k in rel.index:  # each cluster's top 8 are one true block of 8 features
        top = set(rel.loc[k].nlargest(8).index)
        assert any(top == set(sim.subspaces.columns[row]) for row in sim.subspaces.to_numpy())


# ---------------------------------------------------------------------------- plot
def _image(ax) -> np.ndarray:
    return np.asarray(ax.images[0].get_array())


def test_plot_relevance_shades_and_outlines(mixed_fit):
    fit = mixed_fit
    fig = fit.plot_subspaces(relevance=True)
    ax, cbar = fig.axes
    np.testing.assert_allclose(_image(ax), fit.relevance.to_numpy())
    assert ax.images[0].get_cmap().name == "YlOrBr"
    assert ax.images[0].norm.vmin == 0 and ax.images[0].norm.vmax == fit.relevance.max().max()
    assert cbar.get_ylabel() == "relevance (nats)"
    assert len(ax.patches) == int(fit.selected.to_numpy().sum())
    centres = {(round(p.get_x() + p.get_width() / 2), round(p.get_y() + 0.42)) for p in ax.patches}
    assert centres == {(int(j), int(i)) for i, j in zip(*np.nonzero(fit.selected.to_numpy()))}
    assert ax.get_xlabel() == "feature (outlined = selected)"


def _cell_texts(ax) -> dict[tuple[int, int], str]:
    return {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }


def test_plot_relevance_reads_on_a_heavy_tail(mixed_fit):
    rel = mixed_fit.relevance
    fig = mixed_fit.plot_subspaces(relevance=True)
    ax, cbar = fig.axes
    im = ax.images[0]
    # square-root scale: a quarter of the largest value is half-way up the colours
    assert type(im.norm).__name__ == "PowerNorm" and im.norm.gamma == 0.5
    top = rel.max().max()
    assert float(im.norm(top / 4)) == pytest.approx(0.5)
    # the outlines carry a white edge (visible on the darkest cells)
    for patch in ax.patches:
        (halo,) = patch.get_path_effects()
        assert halo._gc["foreground"] == "white"
    # a small matrix gets its values written in, one per cell, white on dark cells
    texts = _cell_texts(ax)
    assert set(texts) == {(i, j) for i in range(rel.shape[0]) for j in range(rel.shape[1])}
    digits = 0 if rel.abs().max().max() >= 10 else 1
    for (i, j), text in texts.items():
        assert text == f"{rel.iat[i, j]:.{digits}f}"
    colours = {t.get_color() for t in ax.texts if float(t.get_text()) >= top * 0.9}
    assert colours == {"white"}
    assert fig.get_size_inches()[0] == pytest.approx(max(3.5, 1.6 + 0.34 * rel.shape[1]) + 1.2)


def test_plot_relevance_annotate_and_scale_options(mixed_fit):
    rel = mixed_fit.relevance
    fig = mixed_fit.plot_subspaces(relevance=True, annotate=False)
    assert not fig.axes[0].texts
    assert fig.get_size_inches()[0] == pytest.approx(max(3.5, 1.6 + 0.17 * rel.shape[1]) + 1.2)
    fig = mixed_fit.plot_subspaces(relevance=True, vmax=2 * rel.max().max())
    assert fig.axes[0].images[0].norm.vmax == 2 * rel.max().max()
    from matplotlib.colors import Normalize

    fig = mixed_fit.plot_subspaces(relevance=True, norm=Normalize(0, 1))
    assert type(fig.axes[0].images[0].norm) is Normalize
    big = pd.DataFrame(np.ones((2, 31)), columns=[f"f{j}" for j in range(31)])
    fig = plot_subspaces(big > 0, relevance=big)  # too many columns to write values in
    assert not fig.axes[0].texts
    fig = plot_subspaces(big > 0, relevance=big, annotate=True)
    assert len(fig.axes[0].texts) == big.size
    assert not plot_subspaces(big > 0, annotate=True).axes[0].texts  # black and white
    with pytest.raises(TypeError, match="annotate must be True or False"):
        plot_subspaces(big > 0, relevance=big, annotate="yes")


def test_plot_default_unchanged(mixed_fit):
    fig = mixed_fit.plot_subspaces()
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.images[0].get_cmap().name == "Greys" and not ax.patches
    np.testing.assert_array_equal(_image(ax), mixed_fit.selected.to_numpy(dtype=float))
    assert ax.get_xlabel() == "feature (dark = selected)"
    assert tuple(fig.get_size_inches()) == pytest.approx((3.5, 1.7 + 0.3 * 3))


def test_plot_relevance_with_truth_follows_the_matched_rows():
    sim = craft_fig2a(n_per_cluster=30, rng=0)
    fit = craft(sim.data, m=1 / 3, k=3, n_init=4, rng=0)
    fig = fit.plot_subspaces(sim.subspaces, relevance=True)
    true_ax, rec_ax, cbar = fig.axes
    assert true_ax.images[0].get_cmap().name == "Greys"
    order = [int(t.get_text().split()[-1]) for t in rec_ax.get_yticklabels()]
    np.testing.assert_allclose(_image(rec_ax), fit.relevance.loc[order].to_numpy())
    assert cbar.get_ylabel() == "relevance (nats)"


def test_plot_relevance_frame_and_errors(mixed_fit):
    sel = mixed_fit.selected
    rel = mixed_fit.relevance
    fig = plot_subspaces(sel, relevance=rel[list(reversed(rel.columns))])
    np.testing.assert_allclose(_image(fig.axes[0]), rel.to_numpy())
    with pytest.raises(TypeError, match="relevance=True takes the relevance from a fit"):
        plot_subspaces(sel, relevance=True)
    with pytest.raises(
        ValueError, match="relevance must have the clusters and features of selected"
    ):
        plot_subspaces(sel, relevance=rel.iloc[:, :3])
    with pytest.raises(TypeError, match="relevance must be True, False, None or a DataFrame"):
        plot_subspaces(sel, relevance="yes")
    with pytest.raises(TypeError, match="relevance must be True or False"):
        mixed_fit.plot_subspaces(relevance="yes")
    with pytest.raises(TypeError, match="numbers without missing values"):
        plot_subspaces(sel, relevance=rel.where(sel))


@pytest.mark.filterwarnings("ignore::sparseclust.exceptions.PerformanceWarning")
def test_dask_fit_says_relevance_needs_memory():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    df = _mixed(n=300).dropna().reset_index(drop=True)
    ddf = dd.from_pandas(df, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        fit = craft(ddf, m=0.5, k=3, n_init=2, rng=0)
    with pytest.raises(ValueError, match="relevance needs the fit's rows in memory"):
        _ = fit.relevance
    assert "relevance" not in fit.summary().tables
    assert fit.tidy()["relevance"].isna().all()
