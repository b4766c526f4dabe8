# %% [markdown]
# # CRAFT on real data: the paper's Tables 1 and 2, macro-F1, Fig. 5, Adult, relevance
#
# Garg, Rudin & Jaakkola (AISTATS 2016) evaluate CRAFT on five UCI data sets with known
# classes (Bank, Spam, Splice, Wine, Monk-3), against DP-means and DP-means(R), by
# purity and NMI (Tables 1 and 2), by macro-F1 (Wine and Spam, in the text), and
# against DP-means(R) with CRAFT's feature selection ("DP-RF") on binarised Splice
# (Fig. 5). This vignette reruns those comparisons with `sparseclust`, puts the
# paper's numbers beside ours, and ends with the tour an analyst would take on a
# mixed-type data set with missing values (Adult) and with the relevance of each
# variable to each cluster (Penguins).
#
# Run as a script (`python vignettes/04_craft_real.py`); figures go to
# `vignettes/_build/` (or `$SPARSECLUST_OUT`). `SPARSECLUST_FAST=1` runs one seed on
# the small data sets (Wine, Monk-3), a 600-row subsample of Splice for Fig. 5 and
# 4000 rows of Adult, in under 30 seconds. The full mode (10 seeds on every data set,
# the whole of Splice and Adult, two worker processes) took under 5 minutes on our
# two cores (200 s in the last run, about 65 s of it choosing K on five data sets;
# 266 s before that step existed, while another job kept the load average at 3-4).
# The numbers quoted in the text below are those of the full mode.

# %%
import os
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from sparseclust import craft, dp_rf, dpmeans
from sparseclust.datasets import (
    load_adult,
    load_banknote,
    load_monk3,
    load_penguins,
    load_spambase,
    load_splice,
    load_wine,
)
from sparseclust.exceptions import SparseclustWarning
from sparseclust.metrics import ari, macro_f1, nmi, purity

FAST = os.environ.get("SPARSECLUST_FAST") == "1"
OUT = Path(os.environ.get("SPARSECLUST_OUT", Path(__file__).parent / "_build"))
OUT.mkdir(parents=True, exist_ok=True)
SEEDS = range(1 if FAST else 10)
JOBS = 1 if FAST else 2  # worker processes; each fit itself runs on one core
T_START = time.perf_counter()
pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 30)

# %% [markdown]
# ## The paper's numbers
# Table 1 (m = 0.5) and Table 2 (m = 0.8) of the paper, k = number of classes. M =
# MCFS, N = NDFS (global feature selection, not in this package), DR = DP-means(R),
# D = DP-means; DP-means does not select features, so its columns are the same in
# both tables.
#
# | m = 0.5 | purity CRAFT | M | N | DR | D | NMI CRAFT | M | N | DR | D |
# |---|---|---|---|---|---|---|---|---|---|---|
# | Bank   | 0.67 | 0.65 | 0.59 | 0.61 | 0.61 | 0.16 | 0.06 | 0.02 | 0.03 | 0.03 |
# | Spam   | 0.72 | 0.64 | 0.64 | 0.61 | 0.61 | 0.20 | 0.05 | 0.05 | 0.00 | 0.00 |
# | Splice | 0.75 | 0.62 | 0.63 | 0.61 | 0.52 | 0.20 | 0.04 | 0.05 | 0.05 | 0.01 |
# | Wine   | 0.71 | 0.72 | 0.69 | 0.66 | 0.66 | 0.47 | 0.35 | 0.47 | 0.44 | 0.44 |
# | Monk-3 | 0.56 | 0.55 | 0.53 | 0.54 | 0.53 | 0.03 | 0.02 | 0.00 | 0.00 | 0.00 |
#
# | m = 0.8 | purity CRAFT | M | N | DR | D | NMI CRAFT | M | N | DR | D |
# |---|---|---|---|---|---|---|---|---|---|---|
# | Bank   | 0.64 | 0.61 | 0.61 | 0.61 | 0.61 | 0.08 | 0.03 | 0.03 | 0.03 | 0.03 |
# | Spam   | 0.72 | 0.64 | 0.64 | 0.61 | 0.61 | 0.23 | 0.05 | 0.05 | 0.00 | 0.00 |
# | Splice | 0.74 | 0.68 | 0.63 | 0.61 | 0.52 | 0.18 | 0.09 | 0.05 | 0.05 | 0.01 |
# | Wine   | 0.82 | 0.73 | 0.69 | 0.66 | 0.66 | 0.54 | 0.42 | 0.42 | 0.44 | 0.44 |
# | Monk-3 | 0.57 | 0.54 | 0.54 | 0.54 | 0.53 | 0.03 | 0.00 | 0.00 | 0.00 | 0.00 |
#
# Macro-F1 at m = 0.5 (text of section 4): Wine: CRAFT 0.55, MCFS 0.51, NDFS 0.50,
# DP-means(R) 0.29, DP-means 0.19; Spam: CRAFT 0.65, MCFS 0.19, NDFS 0.19,
# DP-means 0.01, DP-means(R) 0.01.

# %%
# (purity, NMI) from the paper
PAPER_CRAFT = {
    0.5: {
        "Bank": (0.67, 0.16),
        "Spam": (0.72, 0.20),
        "Splice": (0.75, 0.20),
        "Wine": (0.71, 0.47),
        "Monk-3": (0.56, 0.03),
    },
    0.8: {
        "Bank": (0.64, 0.08),
        "Spam": (0.72, 0.23),
        "Splice": (0.74, 0.18),
        "Wine": (0.82, 0.54),
        "Monk-3": (0.57, 0.03),
    },
}
PAPER_DP = {
    "D": {
        "Bank": (0.61, 0.03),
        "Spam": (0.61, 0.00),
        "Splice": (0.52, 0.01),
        "Wine": (0.66, 0.44),
        "Monk-3": (0.53, 0.00),
    },
    "DR": {
        "Bank": (0.61, 0.03),
        "Spam": (0.61, 0.00),
        "Splice": (0.61, 0.05),
        "Wine": (0.66, 0.44),
        "Monk-3": (0.54, 0.00),
    },
}
PAPER_F1 = {  # macro-F1 at m = 0.5
    "Wine": {"CRAFT": 0.55, "DR": 0.29, "D": 0.19},
    "Spam": {"CRAFT": 0.65, "DR": 0.01, "D": 0.01},
}
MS = (0.5, 0.8)
NO_M = 0.0  # the "m" of DP-means fits in the results table (they select no features)

# %% [markdown]
# ## The data
# All five come with the classes the paper scores against. Spam, Splice, Wine and
# Monk-3 ship with the package (`sparseclust.datasets`); banknote ("Bank") does not
# (the UCI file's licence is CC BY 4.0, but the copy at hand when the package was built
# could not be traced to it). `load_banknote()` reads the UCI file
# `data_banknote_authentication.txt` from `$SPARSECLUST_BANKNOTE` or from the user
# cache, `~/.cache/sparseclust/`. To get it once, run
#
# ```python
# from sparseclust.datasets import load_banknote
# load_banknote(download=True)  # fetches it from UCI into ~/.cache/sparseclust/
# ```
#
# or download it from https://archive.ics.uci.edu/dataset/267/banknote+authentication
# and point `SPARSECLUST_BANKNOTE` at it. Without the file the vignette skips Bank and
# says so. Splice keeps its four
# nucleotide levels as a categorical variable per position (the 15 rows with ambiguous
# IUPAC codes D/N/S/R keep them as extra levels); Monk-3's six attributes are
# categorical; the others are numeric. CRAFT standardises numeric columns
# (`scale=True`, its default); DP-means runs on the raw features, as in the paper.

# %%
DATA: dict[str, tuple[pd.DataFrame, pd.Series]] = {}
if not FAST:
    try:  # the UCI file: $SPARSECLUST_BANKNOTE or the user cache
        DATA["Bank"] = load_banknote(as_frame=False)
    except FileNotFoundError as err:
        print(f"Bank skipped: {err}")
    spam = load_spambase()
    DATA["Spam"] = (spam.drop(columns="type"), spam["type"])
    splice = load_splice()
    DATA["Splice"] = (splice.drop(columns="class"), splice["class"])
else:
    print("FAST mode: Wine and Monk-3 only, one seed (Bank, Spam, Splice in the full mode).")
wine = load_wine()
DATA["Wine"] = (wine.drop(columns="class"), wine["class"])
monk = load_monk3()
DATA["Monk-3"] = (monk.drop(columns="class"), monk["class"])

overview = pd.DataFrame(
    [
        {
            "data": name,
            "n": X.shape[0],
            "features": X.shape[1],
            "categorical": int(sum(not pd.api.types.is_numeric_dtype(X[c]) for c in X)),
            "k (classes)": y.nunique(),
            "majority share": y.value_counts(normalize=True).max(),
        }
        for name, (X, y) in DATA.items()
    ]
).set_index("data")
print(overview.round(3))

# %% [markdown]
# ## The protocol (as `benchmarks/craft_paper_tables.py`)
# For each data set, m in {0.5, 0.8} and seed (`rng = 0 .. 9`):
#
# * **CRAFT, k calibrated**: `craft(X, m=m, k=k, rng=seed)`: `n_init="auto"`
#   calibrated restarts (lambda bisected until the converged clustering has exactly k
#   clusters) and `n_seeded="auto"` seeded ones (k clusters seeded k-means++-style
#   under the CRAFT cost, then CAF passes without the new-cluster rule); the run with
#   the best likelihood is kept, and the tables count the seeds on which it was a
#   seeded one;
# * **CRAFT, farthest-first lambda** (the paper's own protocol, section 4):
#   `craft(X, m=m, k=k, lam="farthest_first", rng=seed)`: starting from a random
#   point, k times the point farthest (in CRAFT cost) from those already chosen is
#   added, and lambda is the cost of the last one (`craft_lambda`); the algorithm is
#   then free to open as many clusters as that lambda allows, so we report the K it
#   produced;
# * **DP-means (D)**: `dpmeans(X, k=k)` (start at the global mean, deterministic) and
#   `dpmeans(X, lam="farthest_first", k=k)`;
# * **DP-means(R) (DR)**: `dpmeans(X, k=k, init="random", rng=seed)` and the same with
#   `lam="farthest_first"`.
#
# Warnings (a calibration that cannot reach k, a run that hits `max_iter`) are
# recorded per fit and listed after the tables rather than silenced.


# %%
def fit_one(method: str, variant: str, name: str, X, y, m, seed) -> dict:
    """One fit of the tables' protocol and its scores (method: CRAFT, D or DR)."""
    k = int(y.nunique())
    kw = {"lam": "farthest_first"} if variant == "farthest-first" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SparseclustWarning)
        if method == "CRAFT":
            fit = craft(X, m=m, k=k, rng=seed, n_jobs=1, keep_data=False, **kw)
        elif method == "DR":
            fit = dpmeans(X, k=k, init="random", rng=seed, keep_data=False, **kw)
        else:
            fit = dpmeans(X, k=k, keep_data=False, **kw)
    return {
        "method": method,
        "variant": variant,
        "data": name,
        "m": NO_M if m is None else m,
        "seed": seed,
        "purity": purity(y, fit.labels),
        "nmi": nmi(y, fit.labels),
        "f1": macro_f1(y, fit.labels),
        "K": fit.n_clusters,
        "k": k,
        "seeded": method == "CRAFT"
        and bool(fit.restarts["kind"][fit.restarts["chosen"]].eq("seeded").any()),
        "seconds": time.perf_counter() - t0,
        "warnings": [
            f"{w.category.__name__}: {str(w.message)[:90]}"
            for w in caught
            if issubclass(w.category, SparseclustWarning)
        ],
    }


tasks = []
for name in sorted(DATA, key=lambda n: -DATA[n][0].size):  # heavy data sets first
    X, y = DATA[name]
    for variant in ("calibrated", "farthest-first"):
        for m in MS:
            tasks += [("CRAFT", variant, name, X, y, m, s) for s in SEEDS]
        tasks.append(("D", variant, name, X, y, None, None))
        tasks += [("DR", variant, name, X, y, None, s) for s in SEEDS]
t0 = time.perf_counter()
res = pd.DataFrame(Parallel(n_jobs=JOBS)(delayed(fit_one)(*t) for t in tasks))
print(f"{len(tasks)} fits in {time.perf_counter() - t0:.0f} s on {JOBS} worker(s)")


# %%
def sd(s: pd.Series) -> float:
    return float(s.std(ddof=1)) if len(s) > 1 else 0.0


def pm(mean: float, s: float) -> str:
    return f"{mean:.3f} ± {s:.3f}"


S = res.groupby(["method", "variant", "data", "m"]).agg(
    purity=("purity", "mean"),
    purity_sd=("purity", sd),
    nmi=("nmi", "mean"),
    nmi_sd=("nmi", sd),
    f1=("f1", "mean"),
    f1_sd=("f1", sd),
    K=("K", "mean"),
    K_min=("K", "min"),
    K_max=("K", "max"),
    seeds=("K", "size"),
    seeded=("seeded", "sum"),
)


def cell(method: str, variant: str, name: str, m: float = NO_M) -> pd.Series:
    return S.loc[(method, variant, name, m)]


def craft_table(m: float) -> pd.DataFrame:
    rows = []
    for name in DATA:
        for metric, j in (("purity", 0), ("NMI", 1)):
            key = metric.lower()
            paper = PAPER_CRAFT[m][name][j]
            c, f = cell("CRAFT", "calibrated", name, m), cell("CRAFT", "farthest-first", name, m)
            rows.append(
                {
                    "data": name,
                    "metric": metric,
                    "paper": paper,
                    "k-calibrated": pm(c[key], c[f"{key}_sd"]),
                    "diff": round(c[key] - paper, 3),
                    "farthest-first": pm(f[key], f[f"{key}_sd"]),
                    "diff ff": round(f[key] - paper, 3),
                    "ff K mean [range]": f"{f['K']:.1f} [{f['K_min']}-{f['K_max']}]",
                    "seeded chosen": f"{int(c['seeded'])}/{int(c['seeds'])}",
                }
            )
    return pd.DataFrame(rows).set_index(["data", "metric"])


# %% [markdown]
# ## Table 1 (m = 0.5) and Table 2 (m = 0.8): CRAFT, ours beside the paper's
# Mean ± sd over seeds; diff = ours - paper; "ff K" = the number of clusters the
# farthest-first lambda produced (k-calibrated fits always have K = k).

# %%
for m, label in ((0.5, "Table 1"), (0.8, "Table 2")):
    print(f"\n{label}: CRAFT, m = {m}, purity and NMI ({len(SEEDS)} seed(s))")
    print(craft_table(m).to_string())


# %% [markdown]
# ## DP-means and DP-means(R), ours beside the paper's
# D starts at the global mean and is deterministic (one fit); DR starts at a random
# data point (mean ± sd over seeds). "cal" = k calibrated, "ff" = farthest-first lambda;
# K is the number of clusters each produced (mean over seeds for DR).


# %%
def dp_table() -> pd.DataFrame:
    rows = []
    for name in DATA:
        for metric, j in (("purity", 0), ("NMI", 1)):
            key = metric.lower()
            row = {"data": name, "metric": metric}
            for method in ("D", "DR"):
                row[f"paper {method}"] = PAPER_DP[method][name][j]
                for variant, short in (("calibrated", "cal"), ("farthest-first", "ff")):
                    c = cell(method, variant, name)
                    row[f"{method} {short}"] = pm(c[key], c[f"{key}_sd"])
                    row[f"{method} {short} K"] = round(c["K"], 1)
                row[f"diff {method} cal"] = round(
                    cell(method, "calibrated", name)[key] - row[f"paper {method}"], 3
                )
            rows.append(row)
    return pd.DataFrame(rows).set_index(["data", "metric"])


print(dp_table().to_string())

# %%
missed = res[(res["variant"] == "calibrated") & (res["K"] != res["k"])]
print(
    f"k-calibrated fits that did not reach k: {len(missed)} of "
    f"{(res['variant'] == 'calibrated').sum()}"
    + (
        " (" + ", ".join(sorted(set(missed["method"] + " on " + missed["data"]))) + ")"
        if len(missed)
        else ""
    )
)
w = res.explode("warnings").dropna(subset=["warnings"])
if len(w):
    print("Warnings recorded during the fits (count per method, data set and message):")
    print(w.groupby(["method", "variant", "data", "warnings"]).size().to_string())
else:
    print("No warnings were raised by the fits.")

# %% [markdown]
# ### Reading Tables 1 and 2
# What the full run shows (10 seeds; the same picture as
# `benchmarks/craft_paper_tables.py`, see `benchmarks/README.md`):
#
# * **With k calibrated, CRAFT meets or beats the paper on Spam, Splice and Wine, and
#   stays below it on Bank and Monk-3.** Beside its calibrated restarts, `craft(k=)`
#   runs seeded k-cluster restarts (`n_seeded="auto"`, a quarter as many) and keeps the
#   run with the lowest negative log-likelihood. A seeded run is kept on every seed on
#   Spam and Splice, on 8 (m = 0.5) and 10 (m = 0.8) of 10 on Wine, and never on Bank
#   and Monk-3 (the "seeded chosen" column). Purity, m = 0.5 / 0.8: Spam .762 / .809
#   against .72 / .72, Splice .947 / .858 against .75 / .74, Wine .862 / .945 against
#   .71 / .82; NMI rises with it (Spam .237 / .341 against .20 / .23, Splice .779 /
#   .588 against .20 / .18, Wine .683 / .813 against .47 / .54). With the calibrated
#   restarts alone (`n_seeded=0`, the earlier default) these were Spam .656 / .627,
#   Splice .709 / .688 and Wine .835 / .898: on Splice every calibrated restart keeps a
#   one-point cluster (sizes 2200, 989, 1; see `craft()`'s Notes), which the seeded
#   runs do not.
# * **Bank and Monk-3 are unchanged**: .606 / .594 on Bank against .67 / .64, .528 on
#   Monk-3 against .56 / .57, and NMI on Bank far below the paper's (.039 / .031
#   against .16 / .08). Every seed ends in the same calibrated partition (sd 0), so the
#   gap is not noise: at exactly k clusters the partition CRAFT's own objective
#   prefers is less pure than the paper's. Bank at m = 0.8 shows it directly: 9 of the
#   10 farthest-first fits also end with 2 clusters, at purity .683 and NMI .20, but
#   that partition's negative log-likelihood is 1857 against 1056 for the calibrated
#   fit's (purity .594). On Monk-3 the best-likelihood partition has the majority
#   share as its purity (.528) and NMI 0.
# * **With the paper's own protocol (farthest-first lambda; no seeded runs) the paper's
#   numbers are reached or beaten on Bank and Spam, but mostly at K > k**: on Bank (m =
#   0.5) and Spam that lambda opens 2.9-4.1 clusters on average (up to 11 on Bank), and
#   purity rises with the number of clusters (it is not adjusted for K): .713 on Bank
#   and .773 / .796 on Spam. On Splice it gives 3 clusters at .702 / .690, .05 below
#   the paper. The paper's tables say the number of clusters "was chosen to be same as
#   the number of classes", yet its heuristic only targets "an approximate number of
#   desired clusters".
# * **Per-seed spread**: the seeded runs differ from seed to seed, so Spam, which had
#   sd 0 with the calibrated restarts alone, now has sd .06; Wine's falls from .06-.08
#   to .02-.03 (calibrated; .13-.14 farthest-first), while the paper reports "low
#   variance across runs".
# * **Splice** is scored on its four-level encoding here; the binarised encoding the
#   paper describes is in the Fig. 5 section below.
# * **DP-means** reproduces the paper's D column within 0.03 with k calibrated. On
#   Monk-3 no lambda gives 2 clusters (the calibration returns 1, purity = majority
#   share .528, with a `CalibrationWarning`), and with the farthest-first lambda D finds
#   only one cluster on Bank, Spam and Monk-3. DR's purity is within .03 everywhere with
#   k calibrated (Splice .588 against .61, where 3 of 10 seeds reach only 2 clusters);
#   its NMI too, except on Splice (.206 against .05).

# %% [markdown]
# ## Ours against the paper, as a picture
# One row per data set; the paper's CRAFT (black diamond) and DP-means(R) (grey open
# square) beside ours (error bars: ± 1 sd over seeds). Farthest-first points are
# labelled with the mean K they produced when it is not k.

# %%
fig, axs = plt.subplots(2, 2, figsize=(13, 8.5), layout="constrained", sharex="row", sharey=True)
names = list(DATA)
ypos = np.arange(len(names))
for col, m in enumerate(MS):
    for row, (metric, j) in enumerate((("purity", 0), ("nmi", 1))):
        ax = axs[row, col]
        series = [
            ("paper CRAFT", -0.3, [PAPER_CRAFT[m][n][j] for n in names], None, "kD", False),
            (
                "CRAFT, k calibrated",
                -0.15,
                [cell("CRAFT", "calibrated", n, m)[metric] for n in names],
                [cell("CRAFT", "calibrated", n, m)[f"{metric}_sd"] for n in names],
                "C0o",
                True,
            ),
            (
                "CRAFT, farthest-first lambda",
                0.0,
                [cell("CRAFT", "farthest-first", n, m)[metric] for n in names],
                [cell("CRAFT", "farthest-first", n, m)[f"{metric}_sd"] for n in names],
                "C1^",
                True,
            ),
            ("paper DP-means(R)", 0.15, [PAPER_DP["DR"][n][j] for n in names], None, "s", False),
            (
                "DP-means(R), k calibrated",
                0.3,
                [cell("DR", "calibrated", n)[metric] for n in names],
                [cell("DR", "calibrated", n)[f"{metric}_sd"] for n in names],
                "s",
                True,
            ),
        ]
        for label, dy, vals, err, fmt, filled in series:
            color = "0.45" if "DP-means" in label else None
            ax.errorbar(
                vals,
                ypos + dy,
                xerr=err,
                fmt=fmt,
                color=color,
                mfc=None if filled else "none",
                ms=7,
                capsize=3,
                label=label,
            )
        for i, n in enumerate(names):
            c = cell("CRAFT", "farthest-first", n, m)
            if abs(c["K"] - DATA[n][1].nunique()) > 1e-9:
                ax.annotate(
                    f"K={c['K']:.1f}",
                    (c[metric] + c[f"{metric}_sd"], i),
                    xytext=(4, -3),
                    textcoords="offset points",
                    fontsize=8,
                    color="C1",
                )
        for i in ypos[:-1]:
            ax.axhline(i + 0.5, color="0.85", lw=0.8)
        ax.set_yticks(ypos, names)
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel("purity" if metric == "purity" else "NMI")
        table = "Table 1" if m == 0.5 else "Table 2"
        ax.set_title(f"{table} (m = {m}): {'purity' if metric == 'purity' else 'NMI'}")
axs[0, 0].invert_yaxis()  # shared y: first data set on top in every panel
handles, labels = axs[0, 0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=5, frameon=False)
fig.suptitle(f"CRAFT on real data: ours (mean ± sd over {len(SEEDS)} seed(s)) vs the paper")
fig.savefig(OUT / "craft_tables.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# ## Macro-F1 at m = 0.5 (paper: CRAFT .55 on Wine, .65 on Spam)
# `sparseclust.metrics.macro_f1` matches clusters to classes one to one (Hungarian) and
# averages the per-class F1. The paper does not say how it matched. In the full run
# CRAFT with k calibrated beats the paper on Spam (.758 ± .059, against .65; .634 ±
# .098 farthest-first) and on Wine (.864 ± .026 calibrated, .728 ± .184
# farthest-first, against .55). Our DP-means
# scores are far above the paper's: .53 (D) and .58 (DR) on Wine against .19 and .29,
# and .38 on Spam against .01. The paper's .01 is hard to obtain under any one-to-one
# matching at K = 2: DP-means puts nearly every e-mail in one cluster (purity .607, the
# majority share .606), and that still scores F1 near .76 for the majority class and
# near 0 for the other, .38 on average.

# %%
rows = []
for name, paper in PAPER_F1.items():
    if name not in DATA:
        print(f"macro-F1 on {name}: skipped in FAST mode")
        continue
    c = cell("CRAFT", "calibrated", name, 0.5)
    f = cell("CRAFT", "farthest-first", name, 0.5)
    rows.append(
        {
            "data": name,
            "paper CRAFT": paper["CRAFT"],
            "CRAFT k-calibrated": pm(c["f1"], c["f1_sd"]),
            "diff": round(c["f1"] - paper["CRAFT"], 3),
            "CRAFT ff": pm(f["f1"], f["f1_sd"]),
            "diff ff": round(f["f1"] - paper["CRAFT"], 3),
            "paper DR": paper["DR"],
            "DR calibrated": pm(
                cell("DR", "calibrated", name)["f1"], cell("DR", "calibrated", name)["f1_sd"]
            ),
            "paper D": paper["D"],
            "D calibrated": round(cell("D", "calibrated", name)["f1"], 3),
        }
    )
print(pd.DataFrame(rows).set_index("data").to_string())

# %% [markdown]
# ## Fig. 5: CRAFT against DP-RF on binarised Splice
# The paper binarises Splice ("feature values 1 and 2 [A, C] -> 0, 3 and 4 [G, T] ->
# 1"; the 15 rows with ambiguous codes have no binary value and are dropped, leaving
# 3175) and compares CRAFT with DP-RF, DP-means(R) with CRAFT's feature-selection term
# and the squared Euclidean distance kept (`sparseclust.dp_rf`). Its caption reads
# "Purity (a-c) and NMI (d-f) results on Splice", "for different values of m", and the
# text says results were included "only up to 10 clusters". We read this as: each of
# the three columns is one value of m, with the number of clusters on the x-axis,
# purity on top and NMI below. The sub-captions giving the three values of m are not
# in our copy of the paper, so the panels use m = 0.2, 0.5 and 0.8 (the two values of
# Tables 1-2 and a low one). A fourth column shows the same scores against m at K = 3
# (the number of classes), m = 0.2 to 0.8.
#
# Protocol: k calibrated for both methods (so each point sits at the K its fits
# have), K = 2, 3, 4, 6, 8, 10, and the same number of restarts for both (`n_init=5`;
# calibrating CRAFT on the 3175 x 60 binary data costs 1-26 s per fit with 10
# restarts on our two shared cores, most at low m and large K). CRAFT runs on the
# bool columns (categorical, entropy cost), DP-RF on the same columns as 0/1 numbers.
# Mean ± sd over 3 seeds (FAST: a 600-row subsample, K = 2-4, one seed, 3 restarts).


# %%
def binarised_splice() -> tuple[pd.DataFrame, pd.Series]:
    """Splice as in the paper's Fig. 5: A,C -> False, G,T -> True (rows with D/N/S/R dropped)."""
    df = load_splice()
    X = df.drop(columns="class")
    code = {"A": False, "C": False, "G": True, "T": True}
    ok = X.apply(lambda s: s.astype(str).isin(list(code))).all(axis=1)
    Xb = X[ok].apply(lambda s: s.astype(str).map(code).astype(bool)).reset_index(drop=True)
    return Xb, df.loc[ok, "class"].reset_index(drop=True)


Xb, yb = binarised_splice()
if FAST:
    keep = Xb.sample(600, random_state=0).index
    Xb, yb = Xb.loc[keep], yb.loc[keep]
print(f"binarised Splice: {Xb.shape[0]} rows x {Xb.shape[1]} bool columns")
M_PANELS = (0.2, 0.5, 0.8)
M_CURVE = M_PANELS if FAST else (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
KS = (2, 3, 4) if FAST else (2, 3, 4, 6, 8, 10)
SEEDS5 = range(1 if FAST else 3)
N_INIT5 = 3 if FAST else 5


def fig5_one(method: str, m: float, k: int, seed: int, X: pd.DataFrame, y: pd.Series) -> dict:
    """One CRAFT or DP-RF fit on binarised Splice."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SparseclustWarning)
        if method == "CRAFT":
            fit = craft(X, m=m, k=k, n_init=N_INIT5, rng=seed, n_jobs=1, keep_data=False)
        else:
            fit = dp_rf(
                X.astype(int), m=m, k=k, n_init=N_INIT5, rng=seed, n_jobs=1, keep_data=False
            )
    return {
        "method": method,
        "m": m,
        "k": k,
        "seed": seed,
        "K": fit.n_clusters,
        "purity": purity(y, fit.labels),
        "nmi": nmi(y, fit.labels),
        "seeded": method == "CRAFT"
        and bool(fit.restarts["kind"][fit.restarts["chosen"]].eq("seeded").any()),
        "seconds": time.perf_counter() - t0,
        "warnings": len([w for w in caught if issubclass(w.category, SparseclustWarning)]),
    }


grid = {(m, k) for m in M_PANELS for k in KS} | {(m, 3) for m in M_CURVE}
tasks5 = [
    (method, m, k, s, Xb, yb)
    for (m, k) in sorted(grid, key=lambda t: -t[1])
    for s in SEEDS5
    for method in ("CRAFT", "DP-RF")
]
t0 = time.perf_counter()
r5 = pd.DataFrame(Parallel(n_jobs=JOBS)(delayed(fig5_one)(*t) for t in tasks5))
print(f"{len(tasks5)} fits in {time.perf_counter() - t0:.0f} s on {JOBS} worker(s)")
F5 = r5.groupby(["method", "m", "k"]).agg(
    purity=("purity", "mean"),
    purity_sd=("purity", sd),
    nmi=("nmi", "mean"),
    nmi_sd=("nmi", sd),
    K=("K", "mean"),
)
miss5 = r5[r5["K"] != r5["k"]]
print(
    f"fits that did not reach k: {len(miss5)} of {len(r5)}"
    + (
        " (" + ", ".join(f"{r.method} m={r.m} k={r.k} -> K={r.K}" for r in miss5.itertuples()) + ")"
        if len(miss5)
        else ""
    )
)
c5 = r5[r5["method"] == "CRAFT"]
print(
    f"CRAFT fits whose chosen run is a seeded k-cluster restart: {int(c5['seeded'].sum())} of {len(c5)}"
)
wide = F5[["purity", "nmi"]].unstack("method").round(3)
wide.columns = [f"{metric} {method}" for metric, method in wide.columns]
print("\nFig. 5 panels (mean over seeds):")
print(wide.loc[[(m, k) for m in M_PANELS for k in KS]].to_string())
print("\nAgainst m at K = 3:")
print(wide.loc[[(m, 3) for m in M_CURVE]].droplevel("k").to_string())

# %%
fig, axs = plt.subplots(2, 4, figsize=(17, 7.5), layout="constrained", sharey="row")
styles = {"CRAFT": ("C0", "o"), "DP-RF": ("C3", "s")}


def curve(ax, d, metric, method, color, marker):
    """One method's mean +- sd of ``metric`` against the frame's index."""
    ax.errorbar(
        d.index,
        d[metric],
        yerr=d[f"{metric}_sd"],
        color=color,
        marker=marker,
        capsize=3,
        label=method,
    )


for row, (metric, ylabel) in enumerate((("purity", "purity"), ("nmi", "NMI"))):
    for col, m in enumerate(M_PANELS):
        ax = axs[row, col]
        for method, (color, marker) in styles.items():
            curve(ax, F5.loc[(method, m)].loc[list(KS)], metric, method, color, marker)
        ax.axvline(3, color="0.6", ls=":", lw=1)
        ax.set_xticks(list(KS))
        ax.set_xlabel("number of clusters K")
        ax.set_title(f"({'abc'[col] if row == 0 else 'def'[col]}) {ylabel}, m = {m}")
        ax.grid(alpha=0.3)
    ax = axs[row, 3]
    for method, (color, marker) in styles.items():
        curve(ax, F5.xs(3, level="k").loc[method].loc[list(M_CURVE)], metric, method, color, marker)
    ax.set_xlabel("m (fraction of features per cluster)")
    ax.set_title(f"{ylabel} against m, K = 3")
    ax.grid(alpha=0.3)
    axs[row, 0].set_ylabel(ylabel)
axs[0, 0].legend(loc="best")
fig.suptitle(
    f"Fig. 5 redone: binarised Splice ({len(Xb)} rows), CRAFT vs DP-RF "
    f"(mean ± sd over {len(SEEDS5)} seed(s); dotted line: K = 3 classes)"
)
fig.savefig(OUT / "craft_fig5_splice.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# ### Reading Fig. 5
# The paper's claim is qualitative: "CRAFT outperforms extended DP-means(R) in terms of
# both purity and NMI". The full run agrees at m = 0.5 and 0.8: CRAFT is above DP-RF
# at every K from 2 to 10 on both scores (e.g. at m = 0.5, K = 3: purity .728 against
# .600, NMI .354 against .191). It does not agree at m = 0.2: there the two are level
# or DP-RF is ahead (purity .52-.62 for CRAFT against .59-.62, NMI lower for CRAFT at
# every K but 6, falling to .05 at K = 10). Against m at K = 3, CRAFT leads from m =
# 0.4 up and ties at 0.2-0.3. With `n_init=5`, each CRAFT fit also runs 2 seeded
# restarts; one of them was kept in 11 of the 66 CRAFT fits.
# (We have not established why a small budget of 12 of the 60 positions per cluster
# hurts CRAFT more than DP-RF here.)
#
# Compared with the paper's single Splice row (CRAFT .75 / .74 purity at m = 0.5 /
# 0.8), binarised Splice at K = 3 gives .728 and .606 here (5 calibrated + 2 seeded
# restarts per fit); the tables' protocol with 20 + 5 restarts gives less at m = 0.5
# (.588 in `benchmarks/README.md`): more restarts find partitions of higher
# likelihood, not of higher purity. The per-seed spread is large (error bars), so
# three seeds give only a rough curve. Two DP-RF fits (m = 0.5, k = 8 and 10) ended
# one cluster below k (no restart reached k, printed above); they are plotted at the k
# asked for.

# %% [markdown]
# ## How many clusters? `craft(df, m=0.5)` without `k`
# The tables above give CRAFT the number of classes. Without `k` (and without `lam`)
# `craft()` chooses K itself: a gap test of K = 1 against K = 2 (the negative
# log-likelihood against column-permuted copies of the data), then, for K = 2..8, how
# well the clustering is reproduced across pairs of 80 % subsamples (the mean
# adjusted Rand index between the two fits' assignments of every row); the most
# stable K wins. Classes need not be clusters, so the class count is a reference
# point here, not a truth. (FAST: Wine and Monk-3, K up to 4, two subsample pairs.)

# %%
K_KW = dict(k_max=4, n_pairs=2, n_init=5) if FAST else {}
auto_rows, auto_fits = [], {}
for name, (X, y) in DATA.items():
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # a flat stability curve: the table's "flat" column
        warnings.filterwarnings("ignore", message="automatic K: ")
        fit = craft(X, m=0.5, rng=0, n_jobs=JOBS, **K_KW)
    auto_fits[name] = fit
    tab = fit.k_selection.set_index("k")
    auto_rows.append(
        {
            "data": name,
            "classes": y.nunique(),
            "K chosen": fit.n_clusters,
            "stability at K": tab["stability"].get(fit.n_clusters, np.nan),
            "flat": bool(fit.k_selection.attrs["flat"]),  # K not beating a neighbour
            "Gap(2) - Gap(1)": tab.loc[2, "gap"] - tab.loc[1, "gap"],
            "purity": purity(y, fit.labels),
            "seconds": time.perf_counter() - t0,
        }
    )
print(pd.DataFrame(auto_rows).set_index("data").round(3))

fig, axes = plt.subplots(1, len(auto_fits), figsize=(3.8 * len(auto_fits), 4.2), sharey=True)
for ax, (name, fit) in zip(np.atleast_1d(axes), auto_fits.items()):
    fit.plot_k_selection(ax=ax)
    ax.set_title(f"{name} ({DATA[name][1].nunique()} classes)")
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.2))
fig.tight_layout()
fig.savefig(OUT / "craft_k_selection.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# In the full run K lands on the class count for Bank (2, stability .96), Splice (3,
# .94: the classes, purity .945) and Spam (2, though its fits agree only to .48), and
# one below it for Wine (2 of 3 classes: fits on 142-row subsamples of its 178 rows
# agree only moderately at every K, .45-.63) and Monk-3 (1 of 2: the gap test finds
# no cluster structure, Gap(2) < Gap(1); the majority share, .528, is also what
# two-cluster fits reach). The gap statistic over every K (`k_method="gap"`) picked 1
# on Splice and 4-6 on Spam (`benchmarks/craft_k_selection.py`, which also shows 10
# of 10 seeds recovering K = 3 on each of the paper's synthetic designs). The choice
# costs about 70 fits on 80 % subsamples: 24 s for Splice here, with two workers.

# %% [markdown]
# ## The analyst's tour: Adult (mixed types, missing values)
# 48,842 census records, 6 numeric and 8 categorical variables; `workclass`,
# `occupation` and `native-country` have missing cells (7.4% of rows). The
# formula leaves out `income`, the answer we score against (columns with a hyphen,
# such as `education-num`, are fine under `.`). We hold out a tenth of the rows (FAST:
# 3000 rows to fit, 1000 held out) to show `predict`.
#
# **Missing values are handled natively** (`missing="native"`, the default): a missing
# cell adds nothing to the point's cost for any cluster, so the point is assigned by
# its observed variables, and it is left out of the cluster statistics (means, sds,
# level shares). No row is dropped and nothing is imputed. `missing="drop"` drops
# incomplete rows (labels `<NA>`), `missing="raise"` refuses them.

# %%
adult = load_adult()
print("missing cells per column:", adult.isna().sum()[lambda s: s > 0].to_dict())
if FAST:
    adult = adult.sample(4000, random_state=0)
train = adult.sample(frac=0.75 if FAST else 0.9, random_state=1)
new = adult.drop(train.index)
print(
    f"fit on {len(train)} rows ({train.isna().any(axis=1).sum()} with a missing cell); {len(new)} held out"
)
t0 = time.perf_counter()
fit = craft("~ . - income", data=train, m=0.5, k=2, rng=0, n_jobs=JOBS)
print(f"craft: {time.perf_counter() - t0:.1f} s")
print(fit)

# %%
print(fit.summary())

# %% [markdown]
# In the full run (43,958 rows) both clusters select marital status, occupation,
# relationship and sex, and the split is the married household against the rest:
# cluster 0 is 91% "Married-civ-spouse" and 81% "Husband", cluster 1 is 61%
# "Never-married" and half women. Cluster 1 also selects `capital-gain` and
# `capital-loss`, because they are almost all zero there: a selected numeric feature
# is one with a small spread in the cluster (the sd is floored at `sigma_floor` =
# 5% of the overall sd). This is the structure CRAFT finds in the census variables,
# and it lines up with income only in part: 43.5% of cluster 0 earns >50K against 4.6%
# of cluster 1, so NMI is about .19, but purity equals the majority share (.762): at
# k = 2 both clusters have a majority of "<=50K", and purity cannot reward the split.
# `predict` on the held-out rows gives the same picture (NMI .19). (On the FAST
# subsample the calibrated fit may settle on another split, led by education and the
# capital columns, with NMI near 0: at k = 2 several partitions have similar
# likelihoods.)

# %%
pred = fit.predict(new)
scores = pd.DataFrame(
    {
        "purity": [purity(train["income"], fit.labels), purity(new["income"], pred)],
        "NMI": [nmi(train["income"], fit.labels), nmi(new["income"], pred)],
        "majority share": [
            train["income"].value_counts(normalize=True).max(),
            new["income"].value_counts(normalize=True).max(),
        ],
    },
    index=[f"fitted rows ({len(train)})", f"held-out rows, predict() ({len(new)})"],
)
print(scores.round(3))
print("\nincome share by cluster (fitted rows):")
print(pd.crosstab(fit.labels, train["income"], normalize="index").round(3))
print(f"\nrows dropped: {fit.n_dropped}; every row has a cluster: {fit.labels.notna().all()}")
print("\nheld-out rows with missing cells, and the cluster predict() gives them:")
show = new[new.isna().any(axis=1)].head(5)
print(
    show[
        [
            "age",
            "workclass",
            "occupation",
            "marital-status",
            "relationship",
            "sex",
            "native-country",
        ]
    ]
    .assign(cluster=pred.loc[show.index])
    .to_string()
)

# %% [markdown]
# For comparison, `missing="drop"` fits on complete rows only; the dropped rows get
# `<NA>` labels (scored here with `dropna=True`). In the full run it drops 3294 of the
# 43,958 rows and finds the same kind of split, married households against the rest,
# but less cleanly: purity .753, NMI .158 on the rows it kept. Here a seeded restart
# has the best likelihood (347,079 against 351,683 for the best calibrated one); with
# the calibrated restarts alone (`n_seeded=0`) NMI is .186. The native handling keeps
# those rows and assigns them by what they show.

# %%
fit_drop = craft("~ . - income", data=train, m=0.5, k=2, rng=0, n_jobs=JOBS, missing="drop")
print(
    f"missing='drop': {fit_drop.n_dropped} rows dropped, purity "
    f"{purity(train['income'], fit_drop.labels, dropna=True):.3f}, NMI "
    f"{nmi(train['income'], fit_drop.labels, dropna=True):.3f} on the complete rows"
)
r = fit_drop.restarts
print(
    f"run kept: {r.loc[r['chosen'], 'kind'].iloc[0]}; best negative log-likelihood by kind: "
    + ", ".join(f"{kind} {v:,.0f}" for kind, v in r.groupby("kind")["neg_loglik"].min().items())
)

# %%
fig, ax = plt.subplots(figsize=(8, 3), layout="constrained")
fit.plot_subspaces(ax=ax)
ax.set_title("Adult: features CRAFT selected per cluster (m = 0.5, k = 2)")
fig.savefig(OUT / "craft_adult_subspaces.png", dpi=100, bbox_inches="tight")
plt.close(fig)
# plot_profiles' default figure is too narrow for Adult's long level names (matplotlib
# then warns that constrained layout collapsed); give it an Axes of a sensible size.
fig, ax = plt.subplots(figsize=(7, 6.5), layout="constrained")
fit.plot_profiles(ax=ax)
sizes = fit.labels.value_counts().sort_index()
ax.set_title("Adult: CRAFT cluster profiles\n(cluster sizes " + ", ".join(map(str, sizes)) + ")")
ax.set_xlabel("cluster")
fig.axes[-1].set_ylabel("numeric: mean as z-score; categorical: share of the top level")
fig.savefig(OUT / "craft_adult_profiles.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# ## Which variable separates which cluster: relevance (Penguins)
# The selection matrix above is black and white, and with the fixed budget every
# cluster selects the same number of variables (`round(m x numeric)` numeric ones, those
# with the smallest spread in the cluster, and `round(m x categorical)` categorical
# ones), however much or little they set the cluster apart. `fit.relevance` (also a
# table of `summary()`) grades every cell. For cluster k and variable d it is the **drop
# in the CRAFT cost when d is selected in k**: the cost of the cluster's rows with d
# following the whole data's distribution, minus their cost with d following the
# cluster's own, minus `F_delta`, the objective's price of one selected cell (0 at m =
# 0.5). It is a log-likelihood ratio in nats, about n_k times the Kullback-Leibler
# divergence of the cluster's distribution of d from the whole data's, so numeric and
# categorical variables are on one scale, in any units; unselected cells get one too
# (what selecting them would save). This is VarSelLCM's "discriminative power" read per
# cluster: summed over the clusters it says how much a variable matters to the whole
# clustering. Penguins: 344 birds, four body measurements, island and sex (11 rows with
# missing cells, kept); the species is the answer; k = 3 species, m = 0.5. The data
# are small, so this part is the same in the fast and the full mode.

# %%
penguins = load_penguins()
Xp, yp = penguins.drop(columns=["species", "year"]), penguins["species"]
fit_p = craft(Xp, m=0.5, k=3, rng=0)
print(pd.crosstab(fit_p.labels, [yp, penguins["sex"]]))
print(f"ARI against the species {ari(yp, fit_p.labels):.3f}\n")
rel = fit_p.relevance
ranked = pd.DataFrame(
    [
        {
            "cluster": k,
            "variable": d,
            "relevance": rel.at[k, d],
            "selected": fit_p.selected.at[k, d],
        }
        for k in rel.index
        for d in rel.columns
    ]
).sort_values(["cluster", "relevance"], ascending=[True, False], kind="stable")
ranked["rank"] = ranked.groupby("cluster").cumcount() + 1
top = ranked[ranked["rank"] <= 4].set_index(["cluster", "rank"])
print("Top variables per cluster (relevance in nats; selected = in the cluster's subspace):")
print(top.round(1).to_string())
print("\nRelevance summed over the clusters (the whole clustering):")
print(rel.sum().sort_values(ascending=False).round(1).to_string())

# %% [markdown]
# How the black-and-white selection relates to the grades: categorical variables are
# selected by the largest `G_d - G_kd`, which is their relevance, so among them the
# selection is the top of the relevance ranking. Numeric ones are selected by the
# smallest spread in the cluster, while their relevance also counts how far the
# cluster's mean lies from the whole data's; the two rankings can then differ. The next
# cell checks, cluster by cluster and kind by kind, whether the selected variables are
# the most relevant ones, and lists the unselected cells worth more than a selected one
# of the same cluster.

# %%
numeric = [c for c in rel.columns if pd.api.types.is_numeric_dtype(Xp[c])]
agree = []
for k in rel.index:
    for kind, cols in (("numeric", numeric), ("categorical", [c for c in rel if c not in numeric])):
        chosen = set(fit_p.selected.loc[k, cols][lambda s: s].index)
        best = set(rel.loc[k, cols].nlargest(len(chosen)).index)
        agree.append({"cluster": k, "kind": kind, "selected": len(chosen), "top": chosen == best})
agree = pd.DataFrame(agree)
print(
    f"selected = the most relevant of its kind in {int(agree['top'].sum())} of "
    f"{len(agree)} (cluster, kind) pairs"
)
for k in rel.index:
    floor = rel.loc[k][fit_p.selected.loc[k]].min()
    over = rel.loc[k][~fit_p.selected.loc[k] & (rel.loc[k] > floor)]
    print(
        f"cluster {k}: least relevant selected {floor:.1f}; unselected above it: "
        + (", ".join(f"{d} {v:.1f}" for d, v in over.items()) or "none")
    )

# %%


def who(k) -> str:
    """What cluster k holds: its species (10 % or more of it) and its sex if one dominates."""
    rows = fit_p.labels == k
    share = yp[rows].value_counts(normalize=True)
    sex = penguins.loc[rows, "sex"].value_counts(normalize=True)
    text = " + ".join(share.index[share >= 0.1])
    return f"{k}: {text}" + (f", {sex.index[0]}" if sex.iloc[0] > 0.9 else "")


fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")  # room for the row labels
fit_p.plot_subspaces(relevance=True, ax=ax)
ax.set_yticks(range(len(rel)), [who(k) for k in rel.index], fontsize=8)
ax.set_ylabel("cluster")
ax.set_title("Penguins: relevance per cluster (m = 0.5, k = 3)")
fig.savefig(OUT / "craft_penguins_relevance.png", dpi=100, bbox_inches="tight")
plt.close(fig)

# %% [markdown]
# Read with the species and sex counts above: CRAFT puts all Gentoo birds in one
# cluster and splits the smaller Adelie and Chinstrap birds by sex, not by species.
# The relevance says why. In the Gentoo cluster the four measurements and the island
# (Biscoe only) are worth tens of nats or more, and sex about nothing: Gentoo's sexes
# are as balanced as the whole data's. In the two other clusters sex is among the
# three most relevant variables, and bill length, the measurement that tells
# Chinstrap from Adelie, is worth little: each of those clusters mixes both species,
# so its bill lengths spread about as widely as the whole data's. Summed over the
# clusters, flipper length, body mass and bill depth matter most to this clustering
# and bill length least.
#
# The outlined cells are the black-and-white selection; the shading grades every
# cell, selected or not, on a square-root scale (relevances are heavy-tailed: a
# numeric variable that is nearly constant in a cluster can be worth many times the
# others), with the values written in. Here the selection follows the grades, but the
# fixed budget gives each cluster two numeric and one categorical slot, so a cell
# worth more than a selected one can stay unselected when its cluster's slots of that
# kind are taken (Gentoo's body mass, behind flipper length and bill depth); on other
# data a selected variable can also be worth little, when the cluster has few
# variables that differ from the whole data. Relevance is computed from the fitted
# clusters (no refit), so it explains this clustering; it does not say which
# variables a clustering by species would use.

# %%
print(f"total time: {time.perf_counter() - T_START:.0f} s ({'FAST' if FAST else 'full'} mode)")
