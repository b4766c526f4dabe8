"""Plots under Agg: return types, structure, data plotted, labels, ``ax=`` respected."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes

from sparseclust import dpmeans, plotting
from sparseclust.datasets import load_penguins


@pytest.fixture(scope="module")
def fit():
    return dpmeans("~ . - species - year", data=load_penguins(), k=3, scale=True, missing="drop")


def test_plot_clusters_structure(fit):
    ax = fit.plot()
    assert isinstance(ax, Axes)
    points, centres = ax.collections[:2]
    assert points.get_offsets().shape == (fit.n_obs, 2)
    assert centres.get_offsets().shape == (fit.n_clusters, 2)
    np.testing.assert_array_equal(points.get_array(), fit.labels.dropna().to_numpy(int))
    assert ax.get_xlabel().startswith("PC1 (") and ax.get_ylabel().startswith("PC2 (")
    assert ax.get_title() == "DP-means: 3 clusters"
    assert len(ax.get_legend().get_texts()) == 3


def test_plot_clusters_projection_is_pca(fit):
    """The scatter is the centred data on its first two principal directions."""
    from sklearn.decomposition import PCA

    X = fit._matrix()
    ref = PCA(n_components=2).fit_transform(X)
    got = fit.plot().collections[0].get_offsets()
    for j in range(2):  # principal directions are defined up to sign
        c = np.corrcoef(ref[:, j], got[:, j])[0, 1]
        assert abs(c) == pytest.approx(1.0, abs=1e-9)


def test_plot_respects_ax(fit):
    fig, axs = plt.subplots(1, 2)
    out = fit.plot(ax=axs[1])
    assert out is axs[1]
    assert not axs[0].collections


def test_plot_objective(fit):
    ax = fit.plot_objective(color="C2")
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), fit.objective_path)
    assert ax.get_xlabel() == "iteration" and ax.get_ylabel() == "objective"


def test_plot_calibration(fit):
    ax = plotting.plot_calibration(fit)
    assert ax.get_xscale() == "log"
    step = ax.get_lines()[0]
    assert len(step.get_xdata()) == len(fit.calibration)
    assert ax.get_ylabel() == "number of clusters"


def test_plot_calibration_needs_calibration():
    x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    with pytest.raises(ValueError, match="not calibrated"):
        plotting.plot_calibration(dpmeans(x, lam=1.0))


def test_plot_profiles(fit):
    ax = plotting.plot_profiles(fit)
    img = ax.get_images()[0].get_array()
    assert img.shape == (6, 3)  # 4 numeric + 2 categorical variables, 3 clusters
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "bill_length_mm (z)" and labels[-1].startswith("sex=")


def test_figures_written(tmp_path, fit):
    ax = fit.plot()
    path = tmp_path / "clusters.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 10_000
