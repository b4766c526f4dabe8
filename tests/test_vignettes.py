"""Every vignette runs as a script (fast mode) and writes the figures it declares."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

VIGNETTES = sorted((Path(__file__).resolve().parents[1] / "vignettes").glob("[0-9]*.py"))
FIGURES = {
    "00_dpmeans_tour.py": ["dpmeans_penguins.png"],
    "01_sparse_kmeans_slides.py": [
        "sparse_motivating.png",
        "sparse_simulation.png",
        "sparse_tuning.png",
    ],
    "02_sparse_hclust.py": [
        "sparse_hclust_fit.png",
        "sparse_hclust_colored.png",
        "sparse_hclust_uorth.png",
        "sparse_hclust_gap.png",
    ],
    "03_craft_synthetic.py": [
        "craft_fig2.png",
        "craft_fig3.png",
        "craft_fig4.png",
        "craft_fig4_grid.png",
        "craft_rho.png",
    ],
    "04_craft_real.py": [
        "craft_tables.png",
        "craft_fig5_splice.png",
        "craft_k_selection.png",
        "craft_adult_subspaces.png",
        "craft_adult_profiles.png",
        "craft_penguins_relevance.png",
    ],
    "05_covariate_clustering.py": [
        "covariate_path.png",
        "covariate_hierarchy.png",
        "covariate_runtime.png",
    ],
}


@pytest.mark.vignette
@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_vignette_runs(path, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARSECLUST_FAST", "1")
    monkeypatch.setenv("SPARSECLUST_OUT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(path), run_name="__main__")
    for name in FIGURES.get(path.name, []):
        assert (tmp_path / name).stat().st_size > 10_000, name
    assert capsys.readouterr().out  # it printed its tables
    assert os.environ["SPARSECLUST_FAST"] == "1"
