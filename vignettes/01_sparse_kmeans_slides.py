# %% [markdown]
# # Sparse k-means, the slides' story (Witten & Tibshirani 2010)
#
# The motivating example (two correlated 2-D Gaussians), the simulation (3 clusters x
# 20 observations, p = 100, q = 50 informative features with means 0 / 0.6 / 1.2):
# Rand index against the L1 bound s and against p, the permutation tuning plot and the
# weights. The slides' own R calls are quoted next to ours.
# Run as a script (`python vignettes/01_sparse_kmeans_slides.py`); figures go to
# `vignettes/_build/` (or `$SPARSECLUST_OUT`). `SPARSECLUST_FAST=1` uses fewer seeds,
# permutations and sizes.

# %%
import os
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
from sklearn.cluster import KMeans

from sparseclust import kmeans_sparse_permute, sparse_kmeans, sparse_kmeans_path
from sparseclust.exceptions import ConvergenceWarning
from sparseclust.metrics import rand_index
from sparseclust.simulate import sparse_motivating, sparse_sim

FAST = os.environ.get("SPARSECLUST_FAST") == "1"
OUT = Path(os.environ.get("SPARSECLUST_OUT", Path(__file__).parent / "_build"))
OUT.mkdir(parents=True, exist_ok=True)
SEEDS = range(3 if FAST else 20)
warnings.simplefilter("ignore", ConvergenceWarning)  # sparcl's max_iter = 6, as the slides


def plain_log_ticks(ax) -> None:
    """Log x axis labelled 1, 2, 5, 10, 20, ... (no overlapping minor labels)."""
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())


# %% [markdown]
# ## The motivating example
# Slides (R):
# ```r
# cl <- kmeans(x, 2)
# km.perm <- KMeansSparseCluster.permute(x, K=2, wbounds=seq(3, 7, len=15), nperms=5)
# km.out <- KMeansSparseCluster(x, K=2, wbounds=km.perm$bestw)
# ```
# With p = 2 any bound >= sqrt(2) keeps both features, so the slides' grid 3..7 cannot
# select; the bounds that can lie in (1, sqrt(2)). Ours:

# %%
sim = sparse_motivating(rng=7)
truth = sim.labels.to_numpy()
cl = KMeans(2, n_init=20, random_state=0).fit(sim.data)
perm = kmeans_sparse_permute(sim.data, 2, wbounds=np.linspace(1.01, 1.4, 15), nperms=5, rng=1)
km_out = perm.best  # the fit at the chosen bound (sparcl refits; we return it)
print(perm)
print(km_out)
fig, axs = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained", sharey=True)
for ax, lab, title in (
    (axs[0], cl.labels_, f"Standard k-means (Rand {rand_index(truth, cl.labels_):.2f})"),
    (
        axs[1],
        km_out.labels.to_numpy(dtype=int),
        f"Sparse k-means, s = {perm.best_wbound:.2f} "
        f"(Rand {rand_index(truth, km_out.labels.to_numpy(dtype=int)):.2f})",
    ),
):
    ax.scatter(sim.data["f1"], sim.data["f2"], c=lab, cmap="coolwarm", s=12)
    ax.set_title(title)
    ax.set_xlabel("f1 (the clusters differ here)")
axs[0].set_ylabel("f2 (correlated noise)")
fig.savefig(OUT / "sparse_motivating.png", dpi=100)

# %% [markdown]
# ## The simulation: Rand index against the bound s
# `KMeansSparseCluster(x, K=3, wbounds=s)` over s, 3 x 20 observations, p = 100.

# %%
bounds = np.linspace(1.1, 10, 8 if FAST else 15)
rows = []
for seed in SEEDS:
    sim = sparse_sim(rng=seed)
    truth = sim.labels.to_numpy()
    path = sparse_kmeans_path(sim.data, 3, wbounds=bounds, warm_start=False, rng=seed)
    for fit in path:
        rows.append(
            {
                "seed": seed,
                "s": fit.wbound,
                "rand": rand_index(truth, fit.labels.to_numpy(dtype=int)),
                "nonzero": fit.n_nonzero,
            }
        )
by_s = pd.DataFrame(rows).groupby("s")[["rand", "nonzero"]].mean()
print(by_s.round(3))

# %% [markdown]
# ## Rand index against p: sparse vs standard k-means
# q = 50 informative features; the rest is noise. s is chosen by the permutation gap
# for sparse k-means (`KMeansSparseCluster.permute`, nperms 5 here).

# %%
ps = [50, 100, 200] if FAST else [50, 100, 200, 500, 1000]
rows = []
for p in ps:
    for seed in SEEDS:
        sim = sparse_sim(p=p, q=min(50, p), rng=100 + seed)
        truth = sim.labels.to_numpy()
        perm_p = kmeans_sparse_permute(sim.data, 3, nperms=3 if FAST else 5, rng=seed)
        km = KMeans(3, n_init=20, random_state=seed).fit(sim.data)
        rows.append(
            {
                "p": p,
                "sparse": rand_index(truth, perm_p.best.labels.to_numpy(dtype=int)),
                "standard": rand_index(truth, km.labels_),
            }
        )
by_p = pd.DataFrame(rows).groupby("p").mean()
print(by_p.round(3))

fig, axs = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
axs[0].plot(by_s.index, by_s["rand"], marker="o")
axs[0].set_xlabel("L1 bound s")
axs[0].set_ylabel("mean Rand index")
axs[0].set_title("Sparse k-means: Rand index against s (p = 100)")
axs[1].plot(by_p.index, by_p["sparse"], marker="o", label="sparse k-means (s by gap)")
axs[1].plot(by_p.index, by_p["standard"], marker="s", label="standard k-means")
axs[1].set_xscale("log")
axs[1].set_xlabel("number of features p (q = 50 informative)")
axs[1].set_ylabel("mean Rand index")
axs[1].set_title("Rand index against p")
axs[1].legend()
fig.savefig(OUT / "sparse_simulation.png", dpi=100)

# %% [markdown]
# ## Permutation tuning and the weights
# Slides (R): `k.perm <- SparseKMeansTuning(x, K=3, wbounds=seq(3, 10, len=15), nperm=10)`
# — in sparcl, `KMeansSparseCluster.permute(x, K=3, wbounds=seq(3, 10, len=15), nperms=10)`.

# %%
sim = sparse_sim(rng=1)
perm = kmeans_sparse_permute(
    sim.data, 3, wbounds=np.linspace(3, 10, 15), nperms=5 if FAST else 10, n_jobs=2, rng=1
)
print(perm)
print(perm.summary().tables["chosen"])
fig, axs = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
perm.plot(ax=axs[0])
plain_log_ticks(axs[0])
perm.best.plot_weights(ax=axs[1], label_top=0)
axs[1].set_ylim(top=axs[1].get_ylim()[1] * 1.15)  # room for the labels
axs[1].axvline(50.5, color="grey", linestyle="--", linewidth=1)
for x, text in ((25, "informative (f1-f50)"), (75, "noise (f51-f100)")):
    axs[1].text(x, 0.98, text, transform=axs[1].get_xaxis_transform(), ha="center", va="top")
axs[1].legend(loc="center right", fontsize="small")
fig.savefig(OUT / "sparse_tuning.png", dpi=100)
one = sparse_kmeans(sim.data, 3, wbound=perm.best_wbound, rng=1)
print(one.summary().tables["weights"].head(10))
