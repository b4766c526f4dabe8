# %% [markdown]
# # CRAFT on synthetic data (Garg, Rudin & Jaakkola, AISTATS 2016, section 4)
#
# The paper's "Exact Subspace Recovery on Synthetic Data": the binary designs of
# Fig. 2, the numeric designs of Fig. 3 (fixed budget, m = 1/3) and the approximate
# budget of Fig. 4 (`eps_c` for binary data, `eps_v` for numeric data, over a range
# of m), followed by the paper's claim that one parameter, rho, moves CRAFT from
# global to cluster-specific feature selection.
#
# Every design comes from `sparseclust.simulate` (`craft_fig2a` ... `craft_fig4c`).
# Each returns the data, the true labels and the true cluster x feature subspaces.
# The paper gives exact layouts only for Figs. 2(a) and 3(a). The layouts of 2(c),
# 3(c), 4(a) and 4(c) are the package's reading of the text and are listed in the
# simulators' docstrings. Clusters are numbered from 0 here, so the paper's
# "cluster 3" is our cluster 2.
#
# The paper gives no lambda for these experiments. We ask for `k=3`, and `craft`
# runs its default restarts: 40 calibrated ones on data this small (`n_init="auto"`;
# lambda bisected until the converged clustering has exactly 3 clusters) and 10
# seeded ones (`n_seeded="auto"`; 3 clusters seeded k-means++-style under the CRAFT
# cost, then CAF passes without the new-cluster rule), and keeps the run with the
# lowest negative log-likelihood. The tables say on how many seeds that was a seeded
# run. rho is left at the paper's default m(1-m) - 0.01. Numeric designs use
# `scale=False` because the paper's `eps_v` is in the data's raw variance units.
#
# Every table repeats the experiment over several seeds (each seed draws new data
# and a new CRAFT start), so you can see how robust the result is. A subspace is
# "exact" when, after matching each true cluster to the recovered cluster that
# holds most of its points, every cluster selects exactly its true features.
# "missed" counts true features that were not selected; "extra" counts selected
# features outside the truth.
#
# Run as a script (`python vignettes/03_craft_synthetic.py`). Figures go to
# `vignettes/_build/` (or `$SPARSECLUST_OUT`). `SPARSECLUST_FAST=1` uses 2 seeds and
# smaller grids; the full run uses 10 seeds.

# %%
import os
import time
import warnings
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle
from scipy.optimize import linear_sum_assignment

from sparseclust import craft
from sparseclust.exceptions import CalibrationWarning
from sparseclust.metrics import ari, contingency_table, purity
from sparseclust.plotting import plot_subspaces
from sparseclust.simulate import (
    craft_fig2a,
    craft_fig2c,
    craft_fig3a,
    craft_fig3c,
    craft_fig4a,
    craft_fig4c,
)

FAST = os.environ.get("SPARSECLUST_FAST") == "1"
OUT = Path(os.environ.get("SPARSECLUST_OUT", Path(__file__).parent / "_build"))
OUT.mkdir(parents=True, exist_ok=True)
SEEDS = range(2 if FAST else 10)
M = 1 / 3  # the paper's m for Figs. 2 and 3
T0 = time.perf_counter()
pd.set_option("display.width", 160)
pd.set_option("display.max_colwidth", 60)


# %% [markdown]
# ## Helpers: score one fit against the truth, repeat over seeds, draw the data
# A true cluster is matched to a recovered cluster by the Hungarian assignment on the
# contingency table of points. A true cluster left unmatched (fewer clusters found)
# counts all of its features as missed, and the selected features of a recovered
# cluster left unmatched count as extra.


# %%
def score(fit, sim) -> dict:
    """Clusters, purity, ARI and the subspace errors of one fit."""
    truth = sim.subspaces
    sel = fit.selected[truth.columns]
    tab = contingency_table(sim.labels, fit.labels)
    rows, cols = linear_sum_assignment(tab.to_numpy(), maximize=True)
    pairs = {int(tab.index[i]): int(tab.columns[j]) for i, j in zip(rows, cols)}
    missed = extra = 0
    wrong_names = []  # "-f23 (c2)": f23 of true cluster 2 missed; "+": selected wrongly
    for k in truth.index:
        t = truth.loc[k].to_numpy()
        s = sel.loc[pairs[k]].to_numpy() if k in pairs else np.zeros_like(t)
        missed += int((t & ~s).sum())
        extra += int((s & ~t).sum())
        wrong_names += [f"-{name} (c{k})" for name in truth.columns[t & ~s]]
        wrong_names += [f"+{name} (c{k})" for name in truth.columns[s & ~t]]
    unmatched = [j for j in sel.index if int(j) not in pairs.values()]
    extra += int(sel.loc[unmatched].to_numpy().sum())
    return {
        "K": fit.n_clusters,
        "purity": purity(sim.labels, fit.labels),
        "ARI": ari(sim.labels, fit.labels),
        "exact": fit.n_clusters == len(truth) and missed == 0 and extra == 0,
        "missed": missed,
        "extra": extra,
        "wrong_names": wrong_names,
        "lam": fit.lam,
        "seeded": bool(fit.restarts["kind"][fit.restarts["chosen"]].eq("seeded").any()),
    }


_CACHE: dict = {}


def repeat(design, seeds=SEEDS, **kw) -> tuple[pd.DataFrame, object, object]:
    """Fit CRAFT (k=3) on fresh data for each seed; return per-seed scores and the
    first seed's simulation and fit (for the figures). Cached: the Fig. 4 grids reuse
    the fits of the Fig. 4 tables."""
    key = (design.__name__, tuple(seeds), tuple(sorted(kw.items())))
    if key not in _CACHE:
        _CACHE[key] = _repeat(design, seeds, **kw)
    return _CACHE[key]


def _repeat(design, seeds, **kw) -> tuple[pd.DataFrame, object, object]:
    rows, first = [], None
    for seed in seeds:
        sim = design(rng=seed)
        fit = craft(sim.data, k=3, rng=seed, **kw)
        rows.append({"seed": seed, **score(fit, sim)})
        if first is None:
            first = (sim, fit)
    return pd.DataFrame(rows), *first


def summarise(per_seed: pd.DataFrame, figure: str, setting: str, paper: str) -> dict:
    """One row of an ours-vs-paper table."""
    n = len(per_seed)
    wrong = Counter(name for lst in per_seed["wrong_names"] for name in lst)
    shown = ", ".join(f"{k} x{v}" for k, v in wrong.most_common(3))
    failed = per_seed.loc[~per_seed["exact"], "seed"].tolist()
    return {
        "figure": figure,
        "setting": setting,
        "paper": paper,
        "K=3": f"{int((per_seed['K'] == 3).sum())}/{n}",
        "purity mean/min": f"{per_seed['purity'].mean():.3f}/{per_seed['purity'].min():.3f}",
        "ARI mean/min": f"{per_seed['ARI'].mean():.3f}/{per_seed['ARI'].min():.3f}",
        "exact": f"{int(per_seed['exact'].sum())}/{n}",
        "wrong cells/seed": round(float((per_seed["missed"] + per_seed["extra"]).mean()), 2),
        "missed/extra": f"{per_seed['missed'].sum()}/{per_seed['extra'].sum()}",
        "not exact on seeds": "all" if len(failed) == n else ", ".join(map(str, failed)) or "-",
        "most frequent wrong cells": (shown + (", ..." if len(wrong) > 3 else "")) or "-",
        "seeded run chosen": f"{int(per_seed['seeded'].sum())}/{n}",
    }


def show(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows).set_index(["figure", "setting"])
    print(table.to_string())
    return table


def plot_data(ax, sim, title: str) -> None:
    """The data as an image: points (rows, grouped by true cluster) x features."""
    X = sim.data.to_numpy(dtype=float)
    binary = bool(sim.data.dtypes.eq(bool).all())
    cmap = ListedColormap(["white", "black"]) if binary else "viridis"
    im = ax.imshow(X, aspect="auto", interpolation="nearest", cmap=cmap)
    lab = sim.labels.to_numpy()
    for b in np.flatnonzero(np.diff(lab)) + 0.5:
        ax.axhline(b, color="tab:red", linewidth=1.5)
    ks = np.unique(lab)
    centres = [np.flatnonzero(lab == k).mean() for k in ks]
    ax.set_yticks(centres, [f"cluster {k}\n(n={int((lab == k).sum())})" for k in ks], fontsize=8)
    D = X.shape[1]
    ax.set_xticks(range(D), sim.data.columns, rotation=90, fontsize=7)
    ax.set_xlabel("feature")
    ax.set_ylabel("point (grouped by true cluster)")
    ax.set_title(title)
    cb = ax.figure.colorbar(im, ax=ax, fraction=0.05, pad=0.02)
    if binary:
        cb.set_ticks([0.25, 0.75], labels=["False", "True"])
    else:
        cb.set_label("value")


def figure_pair(panels, path: Path) -> None:
    """Two rows (designs), each: data | true subspaces | recovered subspaces."""
    fig = plt.figure(figsize=(17, 9.5), layout="constrained")
    for sub, (sim, fit, data_title, fit_title, row_title) in zip(
        fig.subfigures(len(panels), 1), panels
    ):
        axs = sub.subplots(1, 3, width_ratios=[1.25, 1, 1])
        plot_data(axs[0], sim, data_title)
        fit.plot_subspaces(truth=sim.subspaces, ax=axs[1:])
        axs[1].set_title("True subspaces")
        axs[2].set_title(fit_title)
        axs[1].set_ylabel("true cluster")
        axs[2].set_ylabel("recovered cluster (its own label)")
        sub.suptitle(row_title, fontsize=12, fontweight="bold")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def fit_title(label: str, s: dict) -> str:
    verdict = "exact" if s["exact"] else f"{s['missed']} missed, {s['extra']} extra"
    return f"{label} recovered (seed 0): {verdict}, purity {s['purity']:.2f}"


# %% [markdown]
# ## Fig. 2: binary data, fixed budget, m = 1/3
# Paper (section 4, "Fixed Budget Setting"): "Fig. 2(a) shows a binary dataset
# comprising 300 24-feature points, evenly split between 3 clusters that have disjoint
# subspaces of 8 features each. We sampled the remaining features independently from
# a Bernoulli distribution with parameter 0.1. Fig. 2(b) shows that CRAFT recovered
# the subspaces with m = 1/3, as we would expect." Fig. 2(c) adds unequal cluster
# sizes, fragmented subspaces for clusters 1 and 3, a completely noisy feature and an
# overlap between clusters 2 and 3: "As shown in Fig. 2(d), CRAFT again identified the
# subspaces accurately." Caption of Fig. 2: "(Fixed budget) CRAFT recovered the
# subspaces on categorical datasets."
#
# Ours: `craft(sim.data, m=1/3, k=3)`. The fixed budget selects round(24/3) = 8
# features per cluster, which is the true subspace size in both designs.

# %%
per2a, sim2a, fit2a = repeat(craft_fig2a, m=M)
per2c, sim2c, fit2c = repeat(craft_fig2c, m=M)
print(fit2a)
rows2 = [
    summarise(per2a, "2(a)/(b)", "fixed, m=1/3", "recovers the subspaces"),
    summarise(per2c, "2(c)/(d)", "fixed, m=1/3", "identifies the subspaces accurately"),
]
table2 = show(rows2)
figure_pair(
    [
        (
            sim2a,
            fit2a,
            "Fig. 2(a) data: 300 x 24 binary",
            fit_title("Fig. 2(b)", score(fit2a, sim2a)),
            "Fig. 2(a)/(b): disjoint 8-feature subspaces, Bernoulli(0.1) noise, m = 1/3",
        ),
        (
            sim2c,
            fit2c,
            "Fig. 2(c) data: clusters of 120 / 80 / 100",
            fit_title("Fig. 2(d)", score(fit2c, sim2c)),
            "Fig. 2(c)/(d): fragmented subspaces, f12 shared by clusters 1 and 2, "
            "f18 pure noise, m = 1/3",
        ),
    ],
    OUT / "craft_fig2.png",
)

# %% [markdown]
# Fig. 2(a) is recovered on every seed. Fig. 2(c) is not: in the full run (10
# seeds) it failed on 2 (seeds 5 and 6, listed in the table's "not exact on seeds").
# On those seeds the clustering is still perfect (purity 1), and one cluster's
# budget of 8 features swaps one true feature for a wrong one. Both times it is
# cluster 1. It drops f12, the feature it shares with cluster 2, and takes f3 or f4
# instead: the *absence* of cluster 0's block scores higher than the shared
# feature. The `craft_fig2c` docstring measured this even with the true labels: the
# fixed-budget rule misses a subspace on about a fifth of the seeds. So these
# failures come from the selection rule on this layout, not from the clustering. The
# paper shows a single run.

# %% [markdown]
# ## Fig. 3: numeric data, fixed budget, m = 1/3
# Paper: "Fig. 3(a) shows the second dataset comprising 300 36-feature points, evenly
# split across 3 clusters, drawn from independent Gaussians having unit variance and
# means 1, 5 and 10 respectively. We designed clusters to comprise features 1-12,
# 13-24, and 22-34 respectively [...] We added isotropic noise by sampling the
# remaining features from a Gaussian distribution having mean 0 and standard
# deviation 3. Fig. 3(b) shows that CRAFT recovered the subspaces with m = 1/3." In
# Fig. 3(c) cluster 2 spans a non-contiguous subspace that overlaps cluster 1 and
# lies partly inside cluster 3, with extraneous features: "CRAFT recovered the
# subspaces on these data too (Fig. 3(d))."
#
# Fig. 3(a) cannot be recovered exactly with the fixed budget. Cluster 3 (our
# cluster 2) has 13 features (f22-f34), but m|Num| = 36/3 = 12 features are selected
# per cluster. The best a fixed budget can do is 12 of the 13 with nothing extra. We
# also run the approximate budget (`eps_v=5`, the middle of the paper's Fig. 4
# range), which lets cluster 2 keep all 13 features.

# %%
per3a, sim3a, fit3a = repeat(craft_fig3a, m=M, scale=False)
per3a_ap, _, _ = repeat(craft_fig3a, m=M, scale=False, budget="approximate", eps_v=5.0)
per3c, sim3c, fit3c = repeat(craft_fig3c, m=M, scale=False)
rows3 = [
    summarise(per3a, "3(a)/(b)", "fixed, m=1/3", "recovers the subspaces"),
    summarise(per3a_ap, "3(a)/(b)", "approximate, eps_v=5, m=1/3", "(not run in the paper)"),
    summarise(per3c, "3(c)/(d)", "fixed, m=1/3", "recovers the subspaces too"),
]
table3 = show(rows3)
figure_pair(
    [
        (
            sim3a,
            fit3a,
            "Fig. 3(a) data: 300 x 36 numeric",
            fit_title("Fig. 3(b)", score(fit3a, sim3a)),
            "Fig. 3(a)/(b): subspaces f1-f12, f13-f24, f22-f34 (13 features), N(0, 3^2) "
            "noise, m = 1/3",
        ),
        (
            sim3c,
            fit3c,
            "Fig. 3(c) data: 300 x 36 numeric",
            fit_title("Fig. 3(d)", score(fit3c, sim3c)),
            "Fig. 3(c)/(d): cluster 1 = f9-f14 + f25-f30 (overlap, containment), "
            "10 extraneous features, m = 1/3",
        ),
    ],
    OUT / "craft_fig3.png",
)

# %% [markdown]
# On every seed the clustering of Fig. 3(a) is perfect and clusters 0 and 1 are
# exact. Cluster 2 selects 12 of its 13 features and nothing extra, so the table
# shows 1 missed cell per seed. The dropped feature is whichever of the 13 has the
# largest sample sd in that draw, so it changes from seed to seed. We therefore do
# not reproduce the paper's "recovered the subspaces" for Fig. 3(a) exactly. The
# limit is the budget the paper itself chose (m = 1/3 of 36 is 12 < 13). It is not
# a failure of the clustering. With the approximate budget (`eps_v=5`) all 13
# features are recovered on every seed. Fig. 3(c) has subspaces of exactly 12
# features and is recovered exactly.

# %% [markdown]
# ## Fig. 4: approximate budget (eps_c for binary data, eps_v for numeric data)
# Paper ("Approximate Budget Setting"): cluster 3 of the binary design is split into
# two halves of 4 features; one half overlaps cluster 1 and the other lies inside
# cluster 2's 16 features, with cluster 1 at 9 features. "We observed (Fig. 4(b))
# that for eps_c in [0.76, 1), the CRAFT algorithm for the approximate budget setting
# recovered the subspace exactly for a wide range of m, more specifically for all
# values, when m was varied in increments of 0.1 from 0.2 to 0.9." For the numeric
# analogue (Fig. 4(c)): "We observed that for eps_v in [4, 6], the recovery was robust
# to selection of m in [0.1, 0.9] [...] we searched for eps_v in increments of 0.5
# from 1 to 9, since empirically the global variance was found to be close to 9."
# Caption: "The subspaces were recovered with minimal tuning even when m was
# incorrectly specified."
#
# Ours: `craft(sim.data, m=0.5, k=3, budget="approximate", eps_c=...)` and
# `craft(sim.data, m=0.5, k=3, budget="approximate", eps_v=..., scale=False)`. Each
# range is tested at its ends (eps_c = 0.76 and 0.9, plus 0.8 in the full run;
# eps_v = 4 and 6). A grid over m follows.

# %%
EPS_C = (0.76, 0.9) if FAST else (0.76, 0.8, 0.9)
per4a = {e: repeat(craft_fig4a, m=0.5, budget="approximate", eps_c=e) for e in EPS_C}
per4c = {
    e: repeat(craft_fig4c, m=0.5, budget="approximate", eps_v=e, scale=False) for e in (4.0, 6.0)
}
rows4 = [
    summarise(per4a[e][0], "4(a)/(b)", f"approx., eps_c={e}, m=0.5", "exact for eps_c in [0.76, 1)")
    for e in per4a
] + [
    summarise(per4c[e][0], "4(c)/(d)", f"approx., eps_v={e:g}, m=0.5", "exact for eps_v in [4, 6]")
    for e in per4c
]
table4 = show(rows4)
_, sim4a, fit4a = per4a[0.9]
_, sim4c, fit4c = per4c[4.0]
figure_pair(
    [
        (
            sim4a,
            fit4a,
            "Fig. 4(a) data: 300 x 30 binary",
            fit_title("Fig. 4(b)", score(fit4a, sim4a)),
            "Fig. 4(a)/(b): subspaces of 9 / 16 / 8 features, approximate budget "
            "eps_c = 0.9, m = 0.5",
        ),
        (
            sim4c,
            fit4c,
            "Fig. 4(c) data: 300 x 30 numeric",
            fit_title("Fig. 4(d)", score(fit4c, sim4c)),
            "Fig. 4(c)/(d): the same layout, numeric, approximate budget eps_v = 4, m = 0.5",
        ),
    ],
    OUT / "craft_fig4.png",
)

# %% [markdown]
# ### Robustness to m: the grids behind Figs. 4(b) and 4(d)
# Each cell is the share of seeds on which the subspaces were recovered exactly.
# The dashed box marks the region where the paper reports exact recovery.

# %%
if FAST:
    grid_a = {"m": [0.2, 0.5], "eps": [0.76, 0.9]}
    grid_c = {"m": [0.1, 0.5], "eps": [4.0, 7.0]}
else:
    # every m of the paper would be 850 fits; five values each, 10 seeds, suffice to
    # show that the outcome does not move with m (a few minutes on 2 cores)
    grid_a = {"m": [0.2, 0.4, 0.5, 0.7, 0.9], "eps": [0.76, 0.8, 0.9, 0.99]}
    grid_c = {"m": [0.1, 0.3, 0.5, 0.7, 0.9], "eps": [3.0, 4.0, 5.0, 6.0, 7.0]}


def grid(design, spec, key, **kw) -> pd.DataFrame:
    out = {}
    for e in spec["eps"]:
        for m in spec["m"]:
            per, _, _ = repeat(design, m=m, budget="approximate", **{key: e}, **kw)
            out[(e, m)] = per["exact"].mean()
    s = pd.Series(out)
    s.index.names = [key, "m"]
    return s.unstack("m")


exact_a = grid(craft_fig4a, grid_a, "eps_c")
exact_c = grid(craft_fig4c, grid_c, "eps_v", scale=False)
print("Fig. 4(b): share of seeds with exact recovery (rows eps_c, columns m)")
print(exact_a.round(2).to_string())
print("Fig. 4(d): share of seeds with exact recovery (rows eps_v, columns m)")
print(exact_c.round(2).to_string())

fig, axs = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
for ax, tab, key, claim, title in (
    (axs[0], exact_a, "eps_c", (0.76, 0.999), "Fig. 4(b) grid: binary design, eps_c x m"),
    (axs[1], exact_c, "eps_v", (4.0, 6.0), "Fig. 4(d) grid: numeric design, eps_v x m"),
):
    im = ax.imshow(tab.to_numpy(), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(tab.shape[1]), [f"{m:g}" for m in tab.columns])
    ax.set_yticks(range(tab.shape[0]), [f"{e:g}" for e in tab.index])
    for i in range(tab.shape[0]):
        for j in range(tab.shape[1]):
            ax.text(j, i, f"{tab.iloc[i, j]:.1f}", ha="center", va="center", fontsize=9)
    inside = [i for i, e in enumerate(tab.index) if claim[0] <= e <= claim[1]]
    if inside:
        ax.add_patch(
            Rectangle(
                (-0.5, min(inside) - 0.5),
                tab.shape[1],
                len(inside),
                fill=False,
                linestyle="--",
                linewidth=2,
                edgecolor="black",
                label="paper: exact recovery",
            )
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8)
    ax.set_xlabel("m (prior fraction of features per cluster)")
    ax.set_ylabel(key)
    ax.set_title(f"{title}\n(share of {len(SEEDS)} seeds recovered exactly)")
    fig.colorbar(im, ax=ax, label="share of seeds exact")
fig.savefig(OUT / "craft_fig4_grid.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# Each row is constant across m, so the data draw decides recovery and m does not.
# This supports the paper's point that m needs no tuning in the approximate budget.
# The range of eps_c is where we differ. In the full run (10 seeds):
#
# * eps_c = 0.76, the paper's lower end, recovers Fig. 4(a) on only 5 of 10 seeds.
#   On each of the others cluster 0 also selects one or two of f20-f23, features
#   that the two other clusters share (True in about 70% of all points), so that
#   cluster 0's low share of them is informative. On seed 7 cluster 1 also selects
#   f8-f9, which clusters 0 and 2 share;
# * eps_c = 0.8 fails on 1 seed (seed 7: cluster 1 also selects f8, which clusters 0
#   and 2 share);
# * eps_c = 0.9 and 0.99 recover every seed at every m.
#
# So on this layout the safe range is about [0.9, 1), narrower than the paper's
# [0.76, 1). The `craft_fig4a` docstring tells the same story with the true labels
# (25% of seeds at 0.76, 71% at 0.8, 98% at 0.9).
#
# For the numeric design, eps_v from 4 to 6 recovers every seed at every m from 0.1
# to 0.9, as the paper reports, and so does 3, just outside the paper's range.
# eps_v = 7 fails on every seed, and always by selecting extra noise features. A fit
# has about 57 cells (cluster x feature) outside the subspaces, with variance 9. In
# a cluster of 100 points about 6% of those sample variances fall below 7, so a
# few cells always get through.

# %% [markdown]
# ## The rho slider: from global to cluster-specific selection
# Paper (section 3, "Unifying Global and Local Feature Selection"): the point
# estimate of the selection probability is m + (v_kd - m) rho / (m(1-m)), "Thus,
# using a single parameter rho, we can interpolate between cluster specific
# selection, rho -> m(1-m), and global selection, rho -> 0." The paper runs no
# experiment with this; every result above uses rho = m(1-m) - 0.01. Here rho moves
# from near 0 to that default on the Fig. 2(a) design (m = 1/3, so m(1-m) = 0.222),
# still asking for k = 3, twice: with the calibrated restarts alone (`n_seeded=0`,
# Algorithm 1 with lambda calibrated, as in earlier versions of the package) and with
# the default restarts (calibrated + seeded).
#
# For each rho the table counts the features selected by every recovered cluster
# ("shared by all") and by exactly one cluster ("one cluster only"; counted only when
# K >= 2). The truth has 0 shared and 24 one-cluster features. When no lambda
# reaches 3 clusters, `craft` says so with a `CalibrationWarning` and returns the
# nearest K. Those warnings are expected here and are silenced for this cell only,
# because the table reports K.

# %%
default_rho = M * (1 - M) - 0.01
rhos = [0.01, 0.05, default_rho] if FAST else [0.01, 0.03, 0.05, 0.07, 0.1, 0.15, default_rho]
RESTARTS = {  # label -> extra craft() arguments
    "calibrated only (n_seeded=0)": {"n_seeded": 0},
    "default (calibrated + seeded)": {},
}
rho_rows, rho_fits = [], {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", CalibrationWarning)  # K = 3 unreachable at small rho
    for restarts, kw in RESTARTS.items():
        for rho in rhos:
            for seed in SEEDS:
                sim = craft_fig2a(rng=seed)
                fit = craft(sim.data, m=M, rho=rho, k=3, rng=seed, **kw)
                counts = fit.selected.sum(axis=0)
                K = fit.n_clusters
                rho_rows.append(
                    {
                        "restarts": restarts,
                        "rho": rho,
                        "seed": seed,
                        "D*F0": sim.data.shape[1] * fit.F0,
                        "F_delta": fit.F_delta,
                        **score(fit, sim),
                        "shared by all": int(((counts == K) & (counts > 0)).sum()),
                        "one cluster only": int((counts == 1).sum()) if K >= 2 else 0,
                    }
                )
                if seed == SEEDS[0]:
                    rho_fits[restarts, rho] = fit
per_rho = pd.DataFrame(rho_rows)
rho_table = per_rho.groupby(["restarts", "rho"], sort=False).agg(
    **{
        "D*F0": ("D*F0", "first"),
        "F_delta": ("F_delta", "first"),
        "mean lambda": ("lam", "mean"),
        "mean K": ("K", "mean"),
        "shared by all": ("shared by all", "mean"),
        "one cluster only": ("one cluster only", "mean"),
        "purity": ("purity", "mean"),
        "exact": ("exact", "mean"),
        "seeded run chosen": ("seeded", "mean"),
    }
)
rho_table.index = rho_table.index.set_levels(
    [f"{r:.3f}" for r in rho_table.index.levels[1]], level="rho"
)
print("Fig. 2(a) design, m = 1/3, k = 3 asked; means over seeds (truth: 0 shared, 24 one-cluster)")
print(rho_table.round(3).to_string())

PANELS = "calibrated only (n_seeded=0)"  # the restarts whose subspaces the panels show
n_panels = len(rhos) + 1
ncols = min(4, n_panels)
nrows = -(-n_panels // ncols)
fig = plt.figure(figsize=(17, 3.2 * nrows + 4.4), layout="constrained")
top, bottom = fig.subfigures(2, 1, height_ratios=[3.2 * nrows, 4.4])
axs = np.atleast_1d(top.subplots(nrows, ncols)).ravel()
plot_subspaces(sim2a.subspaces, ax=axs[0])
axs[0].set_title("Truth (Fig. 2(a))")
for ax, rho in zip(axs[1:], rhos):
    fit = rho_fits[PANELS, rho]
    plot_subspaces(fit.selected, ax=ax)
    ax.set_title(f"rho = {rho:.3f}: K = {fit.n_clusters}")
for ax in axs[n_panels:]:
    ax.set_visible(False)
for ax in axs[:n_panels]:
    ax.set_ylabel("cluster")
top.suptitle(
    "Selected subspaces along the rho slider, calibrated restarts only (n_seeded=0; seed 0;"
    " dark = selected)",
    fontsize=12,
    fontweight="bold",
)
b1, b2 = bottom.subplots(1, 2)
b1b = b1.twinx()
for restarts, ls in zip(RESTARTS, ("-", "--")):
    x = per_rho[per_rho["restarts"] == restarts].groupby("rho").mean(numeric_only=True)
    for ax, col, marker, color, what in (
        (b1, "K", "o", "tab:blue", "mean K"),
        (b1b, "purity", "s", "tab:orange", "mean purity"),
        (b2, "shared by all", "o", "tab:blue", "shared by all clusters"),
        (b2, "one cluster only", "s", "tab:orange", "of one cluster only"),
    ):
        ax.plot(x.index, x[col], marker=marker, ls=ls, color=color, label=f"{what}, {restarts}")
b1.set_xlabel("rho (0 = global, m(1-m) = 0.222 = cluster-specific)")
b1.set_ylabel("number of clusters K (3 asked)")
b1b.set_ylabel("purity")
b1b.set_ylim(0, 1.05)
b1.set_ylim(0, 3.5)
h1, l1 = b1.get_legend_handles_labels()
h2, l2 = b1b.get_legend_handles_labels()
b1.legend(h1 + h2, l1 + l2, loc="lower right", fontsize=8)
b1.set_title("Clusters found and purity against rho")
b2.axhline(24, color="0.5", linestyle=":", label="truth: 24 of one cluster, 0 shared")
b2.set_xlabel("rho (0 = global, m(1-m) = 0.222 = cluster-specific)")
b2.set_ylabel("number of features (of 24)")
b2.set_ylim(-1, 26)
b2.legend(loc="center right", fontsize=8)
b2.set_title("Shared vs cluster-specific features against rho")
fig.savefig(OUT / "craft_rho.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# With the calibrated restarts alone the slider does move the fit from shared to
# cluster-specific selection, but not in the way the paper's sentence suggests.
# Algorithm 1 never uses rho in the selection step: the fixed budget always takes
# the round(m D) features with the largest G_d - G_kd, for any rho. rho enters only
# through the constants F0 and F_delta and through the Bernoulli draw for a new
# cluster. Opening a cluster costs lambda + D F0, and D F0 grows without bound as
# rho -> 0 (the D*F0 column). Below some rho no lambda > 0 reaches 3 clusters, and
# what changes is K (the panels, `n_seeded=0`):
#
# * at the smallest rho the data stay in one cluster. Its 8 features are then
#   "shared by all" only trivially. With a single cluster every G_d - G_kd is 0, so
#   the 8 features are a tie, broken by the package's "earlier feature" rule: f1-f8
#   on every seed (the panels), which only happen to be cluster 0's block;
# * in between, two clusters form: one true cluster, and the other two merged. Both
#   select the same 8 features, the block of the lone true cluster (all True in one
#   cluster, mostly False in the other). This is the only genuinely global selection
#   on the slider;
# * from about rho = 0.07 up to the default, CRAFT finds the 3 clusters and their
#   disjoint subspaces exactly.
#
# With the default restarts the slider changes nothing here: every rho gives the 3
# clusters and their subspaces exactly (dashed lines). The seeded restarts start from
# 3 points and never open a cluster, so the price lambda + D F0 does not stop them;
# at rho = 0.01-0.05, where no calibrated restart reaches 3 clusters, a seeded one is
# kept on every seed, and from rho = 0.07 up a calibrated one. A seeded run reports
# the smallest lambda >= 0 at which it is a fixed point of Algorithm 1,
# max(max_n min_k d_nk - D F0, 0): 0 when D F0 is this large (rho = 0.01-0.05), i.e.
# "any lambda", not a penalty the fit was given.
#
# So with this algorithm "global selection" arrives as a collapse of the clustering,
# not as a shared selection among the same clusters, and with `k=` given the seeded
# restarts undo the collapse. If you want one feature set shared by all clusters, use
# a method built for it (sparse k-means, `sparseclust.sparse_kmeans`) and keep CRAFT
# at its default rho.

# %% [markdown]
# ## Ours next to the paper, all figures

# %%
summary = pd.concat([table2, table3, table4])
print(summary.to_string())
print(f"\nseeds per row: {len(SEEDS)}; total time {time.perf_counter() - T0:.0f} s")

# %% [markdown]
# In short, in the full run (10 seeds per row):
#
# * **reproduced**: Fig. 2(a)/(b) and Fig. 3(c)/(d) are recovered exactly on every
#   seed, and Fig. 4(c)/(d) on every seed for eps_v from 4 to 6 at every m tested;
# * **mostly reproduced**: Fig. 2(c)/(d) is exact on 8 of 10 seeds (cluster 1 swaps
#   the shared f12 for a feature of cluster 0's block), and Fig. 4(a)/(b) needs
#   eps_c >= 0.9 on our layout (0.76: 5/10 seeds, 0.8: 9/10);
# * **not reproducible as stated**: Fig. 3(a)/(b) with the fixed budget. m = 1/3
#   selects 12 features and cluster 3 has 13, so on every seed 1 cell is missed and
#   none is extra. The approximate budget recovers it exactly;
# * **the rho slider**: lowering rho does not share features among the same
#   clusters. With the calibrated restarts alone it raises the cost of a cluster
#   (D F0) until fewer clusters form; with the default seeded restarts and `k=3`,
#   every rho recovers the subspaces exactly.
#
# The clustering itself (purity, ARI) is perfect or nearly so in every setting
# above; every miss is in the feature selection. In Figs. 2-4 the run kept is always a
# calibrated restart ("seeded run chosen" 0/10 in every row), so the seeded restarts
# change none of these results.
