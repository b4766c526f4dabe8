"""Simulators of the CRAFT paper's synthetic designs, and the subspace / K-selection plots."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

import sparseclust
from sparseclust import simulate
from sparseclust.metrics import ari
from sparseclust.plotting import plot_k_selection, plot_subspaces
from sparseclust.simulate import (
    DESIGNS,
    Simulated,
    craft_fig2a,
    craft_fig2c,
    craft_fig3a,
    craft_fig3c,
    craft_fig4a,
    craft_fig4c,
    list_designs,
    make_customers,
)

BINARY = ["craft_fig2a", "craft_fig2c", "craft_fig4a"]
NUMERIC = ["craft_fig3a", "craft_fig3c", "craft_fig4c"]
SHAPES = {  # (n_obs, D, cluster sizes, subspace sizes) at the defaults
    "craft_fig2a": (300, 24, [100, 100, 100], [8, 8, 8]),
    "craft_fig2c": (300, 24, [120, 80, 100], [8, 8, 8]),
    "craft_fig3a": (300, 36, [100, 100, 100], [12, 12, 13]),
    "craft_fig3c": (300, 36, [100, 100, 100], [12, 12, 12]),
    "craft_fig4a": (300, 30, [100, 100, 100], [9, 16, 8]),
    "craft_fig4c": (300, 30, [100, 100, 100], [9, 16, 8]),
}


def feats(sim: Simulated, k: int) -> list[int]:
    """1-based feature numbers of cluster k's subspace."""
    return [int(c[1:]) for c in sim.subspaces.columns[sim.subspaces.loc[k].to_numpy()]]


def runs(numbers: list[int]) -> list[list[int]]:
    """Split sorted feature numbers into contiguous runs."""
    out: list[list[int]] = []
    for j in numbers:
        if out and j == out[-1][-1] + 1:
            out[-1].append(j)
        else:
            out.append([j])
    return out


def span(a: int, b: int) -> list[int]:
    return list(range(a, b + 1))


# ----------------------------------------------------------------------------- structure
@pytest.mark.parametrize("name", list(SHAPES))
def test_structure(name):
    sim = DESIGNS[name](rng=0)
    n_obs, D, sizes, sub_sizes = SHAPES[name]
    assert isinstance(sim, Simulated) and sim.design == name
    assert sim.data.shape == (n_obs, D)
    assert sim.data.columns.tolist() == [f"f{j}" for j in range(1, D + 1)]
    assert sim.data.index.equals(pd.RangeIndex(n_obs))
    expected = np.dtype(bool) if name in BINARY else np.dtype("float64")
    assert (sim.data.dtypes == expected).all()
    assert sim.labels.name == "cluster" and sim.labels.dtype == np.int64
    assert sim.labels.index.equals(sim.data.index)
    assert sim.labels.value_counts().sort_index().tolist() == sizes
    assert sim.labels.is_monotonic_increasing  # grouped by cluster unless shuffle=True
    assert sim.subspaces.shape == (3, D) and (sim.subspaces.dtypes == np.dtype(bool)).all()
    assert sim.subspaces.index.tolist() == [0, 1, 2]
    assert sim.subspaces.columns.equals(sim.data.columns)
    assert sim.subspaces.sum(axis=1).tolist() == sub_sizes
    assert sim.n_clusters == 3
    assert sim.params["sizes"] == tuple(sizes)
    assert "rng" not in sim.params


@pytest.mark.parametrize("name", list(SHAPES))
def test_frame_and_repr(name):
    sim = DESIGNS[name](rng=0)
    fr = sim.frame()
    assert fr.columns[-1] == "cluster" and fr.shape[1] == sim.data.shape[1] + 1
    pd.testing.assert_series_equal(fr["cluster"], sim.labels)
    fr.iloc[0, 0] = fr.iloc[1, 0]  # a copy: the simulation is untouched
    assert "cluster" not in sim.data.columns
    assert repr(sim).startswith(f"Simulated(design='{name}', n_obs=300")


def test_binary_columns_read_as_categorical():
    spec = sparseclust.build_table(craft_fig2a(n_per_cluster=3, rng=0).data).spec
    assert {c.kind for c in spec.columns} == {"categorical"}
    spec = sparseclust.build_table(craft_fig3a(n_per_cluster=3, rng=0).data).spec
    assert {c.kind for c in spec.columns} == {"numeric"}


def test_frozen():
    sim = craft_fig2a(n_per_cluster=2, rng=0)
    with pytest.raises(AttributeError):
        sim.design = "other"


# ----------------------------------------------------------------------------- layouts
def test_fig2a_layout_is_the_papers():
    sim = craft_fig2a(rng=0)
    assert [feats(sim, k) for k in range(3)] == [span(1, 8), span(9, 16), span(17, 24)]


def test_fig2c_layout():
    sim = craft_fig2c(rng=0)
    f0, f1, f2 = (feats(sim, k) for k in range(3))
    assert len(runs(f0)) >= 2 and len(runs(f2)) >= 2  # fragmented clusters 0 and 2
    assert len(runs(f1)) == 1
    assert set(f1) & set(f2) and not set(f0) & (set(f1) | set(f2))  # only 1 and 2 overlap
    nowhere = sim.subspaces.columns[~sim.subspaces.any()].tolist()
    assert nowhere == ["f18"]  # the completely noisy feature
    assert len(set(sim.labels.value_counts())) == 3  # unequal sizes
    assert round(24 / 3) == 8


def test_fig3a_layout_is_the_papers():
    sim = craft_fig3a(rng=0)
    assert [feats(sim, k) for k in range(3)] == [span(1, 12), span(13, 24), span(22, 34)]


def test_fig3c_layout():
    sim = craft_fig3c(rng=0)
    f0, f1, f2 = (feats(sim, k) for k in range(3))
    first, second = runs(f1)  # cluster 1 is non-contiguous: two parts
    assert set(first) & set(f0) and not set(first) <= set(f0)  # partial overlap with 0
    assert set(second) <= set(f2)  # wholly inside cluster 2
    assert (~sim.subspaces.any()).sum() >= 3  # several extraneous features
    assert round(36 / 3) == 12


def test_fig4a_layout():
    sim = craft_fig4a(rng=0)
    f0, f1, f2 = (feats(sim, k) for k in range(3))
    assert (len(f0), len(f1), len(f2)) == (9, 16, 8)
    first, second = runs(f2)  # cluster 2 in two halves of 4
    assert len(first) == len(second) == 4
    assert set(first) & set(f0) and set(second) <= set(f1)
    pd.testing.assert_frame_equal(sim.subspaces, craft_fig4c(rng=0).subspaces)


# ----------------------------------------------------------------------------- distributions
@pytest.mark.parametrize("name", BINARY)
def test_binary_shares(name):
    sim = DESIGNS[name](rng=1)
    X = sim.data.to_numpy(dtype=float)
    S = sim.subspaces.to_numpy()
    for k in range(3):
        rows = X[sim.labels.to_numpy() == k]
        assert rows[:, S[k]].mean() == 1.0  # p_signal=1: solid blocks
        assert rows[:, ~S[k]].mean() == pytest.approx(0.1, abs=0.03)


def test_binary_probabilities_are_used():
    sim = craft_fig2a(p_signal=0.7, p_noise=0.3, rng=2)
    X = sim.data.to_numpy(dtype=float)
    S = sim.subspaces.to_numpy()[sim.labels.to_numpy()]
    assert X[S].mean() == pytest.approx(0.7, abs=0.04)
    assert X[~S].mean() == pytest.approx(0.3, abs=0.03)


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_moments(name):
    sim = DESIGNS[name](rng=3)
    X = sim.data.to_numpy()
    S = sim.subspaces.to_numpy()
    for k, mean in enumerate((1.0, 5.0, 10.0)):
        rows = X[sim.labels.to_numpy() == k]
        inside, outside = rows[:, S[k]], rows[:, ~S[k]]
        assert inside.mean() == pytest.approx(mean, abs=0.15)
        assert inside.std(axis=0, ddof=1).mean() == pytest.approx(1.0, abs=0.1)
        assert outside.mean() == pytest.approx(0.0, abs=0.3)
        assert outside.std(axis=0, ddof=1).mean() == pytest.approx(3.0, abs=0.2)


def test_fig3a_overlap_has_each_clusters_mean():
    sim = craft_fig3a(rng=4)
    means = sim.data.groupby(sim.labels)[["f22", "f23", "f24"]].mean()
    np.testing.assert_allclose(means.loc[1], 5.0, atol=0.4)
    np.testing.assert_allclose(means.loc[2], 10.0, atol=0.4)


def test_numeric_parameters_are_used():
    sim = craft_fig4c(noise_sd=0.5, means=(-2.0, 0.0, 2.0), rng=5)
    X = sim.data.to_numpy()
    S = sim.subspaces.to_numpy()[sim.labels.to_numpy()]
    assert X[~S].std() == pytest.approx(0.5, abs=0.05)
    assert X[sim.labels.to_numpy() == 0][:, sim.subspaces.loc[0].to_numpy()].mean() == (
        pytest.approx(-2.0, abs=0.15)
    )
    assert sim.params["means"] == (-2.0, 0.0, 2.0) and sim.params["noise_sd"] == 0.5


def test_fig2c_sizes_parameter():
    sim = craft_fig2c(sizes=(5, 6, 7), rng=0)
    assert sim.labels.value_counts().sort_index().tolist() == [5, 6, 7]


# ----------------------------------------------------------------------------- recoverability
def _fixed_budget_categorical(sim: Simulated, budget: int, pseudo: float = 0.01) -> np.ndarray:
    """The spec's fixed-budget rule with the true labels: the ``budget`` features with
    the largest G_d - G_kd per cluster."""
    X = sim.data.to_numpy(dtype=int)
    eta0 = X.mean(axis=0)
    out = np.zeros(sim.subspaces.shape, dtype=bool)
    for k in range(sim.n_clusters):
        Xk = X[sim.labels.to_numpy() == k]
        share = (Xk.sum(axis=0) + pseudo) / (len(Xk) + 2 * pseudo)
        g0 = -np.log(np.where(Xk == 1, eta0, 1 - eta0)).sum(axis=0)
        gk = -np.log(np.where(Xk == 1, share, 1 - share)).sum(axis=0)
        out[k, np.argsort(gk - g0, kind="stable")[:budget]] = True
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fig2a_true_labels_give_the_subspaces(seed):
    sim = craft_fig2a(rng=seed)
    np.testing.assert_array_equal(_fixed_budget_categorical(sim, 8), sim.subspaces.to_numpy())


@pytest.mark.parametrize("name", ["craft_fig3c", "craft_fig4c"])
def test_numeric_true_labels_give_the_subspaces(name):
    """Lowest within-cluster sd (fixed budget, 3c) and variance < 4 (approximate, 4c)."""
    sim = DESIGNS[name](rng=0)
    X, lab = sim.data.to_numpy(), sim.labels.to_numpy()
    var = np.vstack([X[lab == k].var(axis=0, ddof=1) for k in range(3)])
    if name == "craft_fig3c":
        got = np.zeros_like(sim.subspaces.to_numpy())
        for k in range(3):
            got[k, np.argsort(var[k], kind="stable")[:12]] = True
    else:
        got = var < 4.0
    np.testing.assert_array_equal(got, sim.subspaces.to_numpy())


# ----------------------------------------------------------------------------- randomness
@pytest.mark.parametrize("name", list(SHAPES))
def test_reproducible_and_seed_dependent(name):
    a, b = DESIGNS[name](rng=7), DESIGNS[name](rng=7)
    pd.testing.assert_frame_equal(a.data, b.data)
    c = DESIGNS[name](rng=np.random.default_rng(7))
    pd.testing.assert_frame_equal(a.data, c.data)
    assert not a.data.equals(DESIGNS[name](rng=8).data)


def test_generator_is_advanced():
    gen = np.random.default_rng(0)
    first, second = craft_fig2a(rng=gen), craft_fig2a(rng=gen)
    assert not first.data.equals(second.data)


def test_shuffle():
    base, sh = craft_fig3c(rng=0), craft_fig3c(shuffle=True, rng=0)
    assert not sh.labels.is_monotonic_increasing
    assert sh.data.index.equals(pd.RangeIndex(300))
    assert sorted(sh.labels) == sorted(base.labels)
    means = sh.data.groupby(sh.labels)["f1"].mean()  # rows keep their cluster's values
    assert means.loc[0] == pytest.approx(1.0, abs=0.3) and abs(means.loc[2]) < 0.8
    assert sh.params["shuffle"] is True


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: craft_fig2a(0), ValueError, r"n_per_cluster must be an integer >= 1; got n_per_cluster=0"),
        (lambda: craft_fig3a(2.5), TypeError, r"n_per_cluster must be an integer"),
        (lambda: craft_fig2a(p_noise=1.5), ValueError, r"p_noise must be a finite number >= 0.0 and <= 1.0; got p_noise=1.5"),
        (lambda: craft_fig4a(p_signal=-0.1), ValueError, r"p_signal must be a finite number"),
        (lambda: craft_fig2a(p_noise="0.1"), TypeError, r"p_noise must be a finite number"),
        (lambda: craft_fig3a(noise_sd=0), ValueError, r"noise_sd must be a finite number > 0.0; got noise_sd=0"),
        (lambda: craft_fig4c(noise_sd=float("inf")), ValueError, r"noise_sd must be a finite number"),
        (lambda: craft_fig3c(means=(1.0, 5.0)), ValueError, r"means must have 3 entries"),
        (lambda: craft_fig3c(means=5.0), TypeError, r"means must be a sequence of 3 numbers"),
        (lambda: craft_fig3a(means=(1.0, "a", 3.0)), TypeError, r"means\[1\] must be a finite number"),
        (lambda: craft_fig2c(sizes=(10, 20)), ValueError, r"sizes must have 3 entries"),
        (lambda: craft_fig2c(sizes=100), TypeError, r"sizes must be a sequence of 3 positive integers"),
        (lambda: craft_fig2c(sizes=(10, 0, 10)), ValueError, r"sizes\[1\] must be an integer >= 1; got sizes\[1\]=0"),
        (lambda: craft_fig2a(shuffle="yes"), TypeError, r"shuffle must be True or False"),
        (lambda: craft_fig2a(rng="seed"), TypeError, r"rng must be None, an int seed"),
    ],
)  # fmt: skip
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_registry():
    assert (
        list_designs()
        == sorted(DESIGNS)
        == ["covariate_sim", *SHAPES, "sparse_motivating", "sparse_sim"]
    )
    assert set(simulate.__all__) >= {"DESIGNS", "Simulated", "list_designs", *DESIGNS}
    with pytest.raises(TypeError):
        DESIGNS["mine"] = craft_fig2a  # read-only


def test_no_pyplot_at_import():
    code = (
        "import sys, sparseclust, sparseclust.simulate, sparseclust.plotting; "
        "print('matplotlib.pyplot' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- plot_subspaces
@pytest.fixture
def truth() -> pd.DataFrame:
    return craft_fig2c(sizes=(3, 3, 3), rng=0).subspaces


def _image(ax: Axes) -> np.ndarray:
    return np.asarray(ax.get_images()[0].get_array())


def test_plot_subspaces_single(truth):
    fig = plot_subspaces(truth)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    (ax,) = fig.axes
    np.testing.assert_array_equal(_image(ax), truth.to_numpy(dtype=float))
    assert ax.get_title() == "Selected features"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cluster 0", "cluster 1", "cluster 2"]
    xt = ax.get_xticklabels()
    assert [t.get_text() for t in xt] == truth.columns.tolist()
    assert xt[0].get_rotation() == 90
    assert ax.get_images()[0].get_cmap().name == "Greys"  # dark = selected


def test_plot_subspaces_accepts_result_and_01(truth):
    fig = plot_subspaces(SimpleNamespace(selected=truth.astype(int)))
    np.testing.assert_array_equal(_image(fig.axes[0]), truth.to_numpy(dtype=float))


def test_plot_subspaces_with_truth_matches_rows(truth):
    found = truth.iloc[[2, 0, 1]].reset_index(drop=True)  # found 0 = true 2, ...
    found.iloc[0, 0] = True  # one wrong cell does not change the matching
    fig = plot_subspaces(found, truth)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    left, right = fig.axes
    assert (left.get_title(), right.get_title()) == ("True subspaces", "Recovered subspaces")
    np.testing.assert_array_equal(_image(left), truth.to_numpy(dtype=float))
    np.testing.assert_array_equal(_image(right), found.iloc[[1, 2, 0]].to_numpy(dtype=float))
    labels = [t.get_text() for t in right.get_yticklabels()]
    assert labels == ["cluster 1", "cluster 2", "cluster 0"]
    unmatched = plot_subspaces(found, truth, match=False)
    np.testing.assert_array_equal(_image(unmatched.axes[1]), found.to_numpy(dtype=float))


def test_plot_subspaces_extra_and_missing_rows(truth):
    extra = pd.concat([truth.iloc[[1]], truth.iloc[[0]] & False, truth.iloc[[2, 0]]])
    extra.index = [0, 1, 2, 3]  # found 1 is empty, matches no true cluster best
    right = plot_subspaces(extra, truth).axes[1]
    labels = [t.get_text() for t in right.get_yticklabels()]
    assert labels == ["cluster 3", "cluster 0", "cluster 2", "cluster 1"]
    fewer = plot_subspaces(truth.iloc[[2, 1]], truth).axes[1]
    np.testing.assert_array_equal(_image(fewer), truth.iloc[[1, 2]].to_numpy(dtype=float))


def test_plot_subspaces_aligns_columns(truth):
    shuffled = truth[truth.columns[::-1]]
    np.testing.assert_array_equal(
        _image(plot_subspaces(shuffled, truth).axes[1]), truth.to_numpy(dtype=float)
    )


def test_plot_subspaces_ax_and_kwargs(truth):
    fig, axs = plt.subplots(1, 3)
    out = plot_subspaces(truth, ax=axs[1], cmap="viridis")
    assert out is fig and axs[1].get_images() and not axs[0].get_images()
    assert axs[1].get_images()[0].get_cmap().name == "viridis"
    fig2, pair = plt.subplots(1, 2)
    assert plot_subspaces(truth, truth, ax=pair) is fig2
    assert pair[1].get_title() == "Recovered subspaces"


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"selected": "x"}, TypeError, "selected must be a boolean DataFrame"),
        ({"selected": pd.DataFrame({"a": [0.5]})}, TypeError, "selected must hold booleans"),
        ({"selected": pd.DataFrame({"a": [True]}), "truth": pd.DataFrame({"b": [True]})}, ValueError, "same features"),
        ({"selected": pd.DataFrame(index=[0])}, ValueError, "at least one cluster"),
        ({"selected": pd.DataFrame({"a": [True]}), "match": "yes"}, TypeError, "match must be True or False"),
    ],
)  # fmt: skip
def test_plot_subspaces_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        plot_subspaces(**kwargs)


def test_plot_subspaces_truth_needs_two_axes(truth):
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="ax must be a pair of Axes"):
        plot_subspaces(truth, truth, ax=ax)


# ----------------------------------------------------------------------------- plot_k_selection
@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "k": [4, 1, 2, 3],
            "gap": [0.85, 0.2, 0.5, 0.9],
            "sd_gap": [0.05, 0.02, 0.03, 0.04],
            "chosen": [False, False, False, True],
        }
    )


def test_plot_k_selection(table):
    ax = plot_k_selection(table)
    assert isinstance(ax, Axes)
    (cont,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    line, _, (bars,) = cont
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3, 4])  # sorted by k
    np.testing.assert_array_equal(line.get_ydata(), [0.2, 0.5, 0.9, 0.85])
    segs = bars.get_segments()
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segs], [0.04, 0.06, 0.08, 0.1])
    (marker,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("chosen")]
    assert marker.get_xdata().tolist() == [3.0] and marker.get_ydata().tolist() == [0.9]
    assert marker.get_markeredgecolor() == "red" and marker.get_markerfacecolor() == "none"
    assert "chosen K = 3" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_xlabel() == "number of clusters K" and ax.get_ylabel() == "gap statistic"


def test_plot_k_selection_without_chosen_and_ax(table):
    fig, axs = plt.subplots(1, 2)
    out = plot_k_selection(table.drop(columns="chosen"), ax=axs[1], color="C2")
    assert out is axs[1] and out.get_legend() is None and not axs[0].containers
    none_chosen = plot_k_selection(table.assign(chosen=False))
    assert none_chosen.get_legend() is None


def test_plot_k_selection_validation(table):
    with pytest.raises(ValueError, match=r"missing \['sd_gap'\]"):
        plot_k_selection(table.drop(columns="sd_gap"))
    with pytest.raises(TypeError, match="table must be a DataFrame"):
        plot_k_selection(table.to_numpy())
    with pytest.raises(ValueError, match="no rows"):
        plot_k_selection(table.iloc[:0])


def test_sparse_sim_matches_the_slides_design():
    sim = simulate.sparse_sim(rng=3)
    X, lab = sim.data.to_numpy(), sim.labels.to_numpy()
    assert X.shape == (60, 100) and np.bincount(lab).tolist() == [20, 20, 20]
    big = simulate.sparse_sim(n_per_cluster=4000, p=6, q=3, rng=1)
    Xb, lb = big.data.to_numpy(), big.labels.to_numpy()
    means = np.array([Xb[lb == k].mean(axis=0) for k in range(3)])
    np.testing.assert_allclose(means[:, :3], [[0.0] * 3, [0.6] * 3, [1.2] * 3], atol=0.05)
    np.testing.assert_allclose(means[:, 3:], 0.0, atol=0.05)
    np.testing.assert_allclose(Xb[lb == 1].std(axis=0), 1.0, atol=0.05)
    assert simulate.sparse_sim(rng=3).data.equals(sim.data)
    with pytest.raises(ValueError, match="q must be"):
        simulate.sparse_sim(p=5, q=6)


def test_sparse_motivating_correlation():
    sim = simulate.sparse_motivating(n_per_cluster=5000, rng=2)
    X, lab = sim.data.to_numpy(), sim.labels.to_numpy()
    assert abs(np.corrcoef(X[lab == 0].T)[0, 1] - 0.78) < 0.02
    np.testing.assert_allclose(X[lab == 1].mean(axis=0), [0.5, 0.0], atol=0.05)
    with pytest.raises(ValueError, match="rho"):
        simulate.sparse_motivating(rho=1.0)


# ----------------------------------------------------------------------------- make_customers
CLEAN = [
    "spend",
    "visits",
    "channel",
    "plan",
    "age",
    "tenure_years",
    "income_k",
    "basket_avg",
    "region",
    "newsletter",
    "device",
    "payment",
]
KINDS = ["customer_id", "comment", "spend_text", "city400", "city60", "code5"]


def test_customers_structure():
    sim = make_customers(rng=0)
    assert isinstance(sim, Simulated) and sim.design == "customers"
    assert sim.data.shape == (600, 12) and sim.data.columns.tolist() == CLEAN
    assert sim.data.index.equals(pd.RangeIndex(600))
    numeric = ["spend", "visits", "age", "tenure_years", "income_k", "basket_avg"]
    assert (sim.data[numeric].dtypes == np.dtype("float64")).all()
    text = [c for c in CLEAN if c not in numeric]
    assert all(isinstance(sim.data[c].dtype, pd.StringDtype) for c in text)
    assert all(sim.data[c].dtype == "str" for c in text)  # pandas' default, as read_csv
    assert sim.data.notna().all().all()
    assert sim.labels.name == "cluster" and sim.labels.dtype == np.int64
    assert sim.labels.value_counts().sort_index().tolist() == [200, 200, 200]
    assert not sim.labels.is_monotonic_increasing  # shuffled by default
    assert sim.subspaces.shape == (3, 12) and sim.subspaces.columns.equals(sim.data.columns)
    for k in range(3):
        chosen = sim.subspaces.columns[sim.subspaces.loc[k].to_numpy()].tolist()
        assert chosen == ["spend", "visits", "channel", "plan"]
    assert sim.params == {"n_samples": 600, "k": 3, "messy": (), "shuffle": True}
    assert repr(sim).startswith("Simulated(design='customers', n_obs=600, n_features=12")


def test_customers_read_as_six_numeric_six_categorical():
    spec = sparseclust.build_table(make_customers(60, rng=0).data).spec
    kinds = {c.name: c.kind for c in spec.columns}
    assert [c for c in CLEAN if kinds[c] == "numeric"] == CLEAN[:2] + CLEAN[4:8]
    assert [c for c in CLEAN if kinds[c] == "categorical"] == CLEAN[2:4] + CLEAN[8:]


def test_customers_segments_and_noise():
    sim = make_customers(6000, rng=1)
    by = sim.data.groupby(sim.labels)
    np.testing.assert_allclose(by["spend"].mean(), [1200, 3000, 4800], rtol=0.02)
    np.testing.assert_allclose(by["spend"].std(), [350, 450, 550], rtol=0.06)
    np.testing.assert_allclose(by["visits"].mean(), [4.0, 6.75, 9.5], atol=0.1)
    channel = pd.crosstab(sim.labels, sim.data["channel"], normalize="index")
    assert channel.idxmax(axis=1).tolist() == ["store", "web", "app"]
    np.testing.assert_allclose(channel.max(axis=1), 0.6, atol=0.03)
    plan = pd.crosstab(sim.labels, sim.data["plan"], normalize="index")
    assert plan.idxmax(axis=1).tolist() == ["basic", "plus", "premium"]
    for col, centre in [("age", 42), ("tenure_years", 6), ("income_k", 55), ("basket_avg", 45)]:
        np.testing.assert_allclose(by[col].mean(), centre, rtol=0.05)  # same in every segment
    levels = {"region": 4, "newsletter": 2, "device": 3, "payment": 5}
    for col, n_levels in levels.items():
        shares = pd.crosstab(sim.labels, sim.data[col], normalize="index")
        assert shares.shape == (3, n_levels)
        np.testing.assert_allclose(shares, 1 / n_levels, atol=0.04)


def test_customers_craft_finds_the_segments():
    sim = make_customers(rng=0)
    fit = sparseclust.craft(sim.data, k=3, m=0.5, rng=0, progress=False)
    assert ari(sim.labels, fit.labels) > 0.95


def test_customers_k_and_sizes():
    sim = make_customers(7, k=3, shuffle=False, rng=0)
    assert sim.labels.tolist() == [0, 0, 0, 1, 1, 2, 2]  # grouped, sizes differ by <= 1
    five = make_customers(500, k=5, rng=0)
    assert five.n_clusters == 5 and five.labels.value_counts().tolist() == [100] * 5
    means = five.data.groupby(five.labels)["spend"].mean()
    assert means.is_monotonic_increasing and means.iloc[-1] > 8000


def test_customers_messy_kinds():
    sim = make_customers(rng=2, messy=KINDS)
    d = sim.data
    assert d.columns.tolist() == ["spend_text", *CLEAN[1:], *KINDS[:2], *KINDS[3:]]
    assert sim.params["messy"] == tuple(KINDS)
    ids = d["customer_id"]
    assert ids.dtype == "str" and ids.is_unique and ids.str.fullmatch(r"C\d{5}").all()
    assert ids.iloc[16] == "C00017"
    comment = d["comment"]
    assert comment.dtype == "str" and comment.is_unique
    assert (comment.str.split().str.len() >= 4).all()
    words = set(comment.str.lower().str.rstrip(".").str.split().explode())
    assert len(words) <= 41  # a small vocabulary
    assert d["city400"].dtype == "str" and d["city400"].nunique() == 400
    assert d["city60"].dtype == "str" and d["city60"].nunique() == 60
    assert d["code5"].dtype == np.int64 and sorted(d["code5"].unique()) == [1, 2, 3, 4, 5]


def test_customers_spend_text_replaces_spend():
    clean = make_customers(rng=3)
    sim = make_customers(rng=3, messy=["spend_text"])
    assert "spend" not in sim.data and sim.data.columns[0] == "spend_text"
    text = sim.data["spend_text"]
    assert text.dtype == "str"
    big = clean.data["spend"] >= 1000
    assert big.any() and text[big].str.fullmatch(r"\d{1,3}(,\d{3})+\.\d").all()
    assert text.iloc[0] == f"{clean.data['spend'].iloc[0]:,.1f}"
    parsed = text.str.replace(",", "").astype(float)
    pd.testing.assert_series_equal(parsed, clean.data["spend"], check_names=False)
    assert sim.subspaces.columns[sim.subspaces.loc[0].to_numpy()].tolist() == [
        "spend_text",
        "visits",
        "channel",
        "plan",
    ]


def test_customers_levels_scale_with_rows():
    sim = make_customers(300, rng=0, messy=("city400", "city60"))
    assert (sim.data["city400"].nunique(), sim.data["city60"].nunique()) == (200, 30)
    big = make_customers(6000, rng=0, messy="city400")  # one name alone
    assert big.data["city400"].nunique() == 4000 and big.data["city400"].is_unique is False


def test_customers_reproducible_and_streams():
    a, b = make_customers(rng=7, messy=KINDS), make_customers(rng=7, messy=KINDS)
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_series_equal(a.labels, b.labels)
    c = make_customers(rng=np.random.default_rng(7), messy=KINDS)
    pd.testing.assert_frame_equal(a.data, c.data)
    assert not a.data.equals(make_customers(rng=8, messy=KINDS).data)
    gen = np.random.default_rng(0)
    assert not make_customers(rng=gen).data.equals(make_customers(rng=gen).data)
    clean = make_customers(rng=7)
    pd.testing.assert_frame_equal(a.data[CLEAN[1:]], clean.data[CLEAN[1:]])  # clean unchanged
    pd.testing.assert_series_equal(a.labels, clean.labels)
    one = make_customers(rng=7, messy=["city60"])  # a kind does not depend on the others
    pd.testing.assert_series_equal(one.data["city60"], a.data["city60"])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"messy": ["customer_id", "zip"]}, ValueError, r"messy must name column kinds among \['customer_id', 'comment', 'spend_text', 'city400', 'city60', 'code5'\]; got unknown \['zip'\]"),
        ({"messy": ["code5", "code5"]}, ValueError, r"at most once; got \['code5'\]"),
        ({"messy": 5}, TypeError, r"messy must be a sequence of column kinds"),
        ({"messy": {"code5"}}, TypeError, r"messy must be a sequence"),
        ({"k": 1}, ValueError, r"k must be an integer >= 2; got k=1"),
        ({"n_samples": 2}, ValueError, r"n_samples must be an integer >= 3; got n_samples=2"),
        ({"n_samples": 10.5}, TypeError, r"n_samples must be an integer"),
        ({"shuffle": "yes"}, TypeError, r"shuffle must be True or False"),
        ({"rng": "seed"}, TypeError, r"rng must be None, an int seed"),
    ],
)  # fmt: skip
def test_customers_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_customers(**kwargs)
