"""CRAFT against the mixed-data clustering tools analysts use, on every shipped labelled set.

The panel of issue 17: the 11 shipped data sets with a class column and Banknote
(``load_banknote()``: the UCI file from ``$SPARSECLUST_BANKNOTE`` or the user cache,
``load_banknote(download=True)`` fetches it once; skipped with a note without it),
``K`` = the number of classes, ``--seeds`` seeds (default 3; ``rng=seed`` /
``random_state=seed`` / ``set.seed(seed)``), medians over seeds. Methods, one after the other for each seed
(alternating, so a change of load hits all of them alike):

* ``CRAFT k=K`` - ``craft(X, k=K, m=M, rng=seed)`` with ``M = "auto"`` (the budget
  chosen from the data) when ``craft`` accepts it, else the paper's ``m = 0.5`` (the
  row then is the same call as ``CRAFT m=.5``, run once; the table says so). The
  switch is ``M_CHOSEN`` below (``--m-fixed`` forces 0.5);
* ``CRAFT auto`` - ``craft(X, m=M, k_max=KMAX, rng=seed)``: K and m chosen
  (``KMAX`` = ``--kmax``, 8 = craft's default, so this is ``craft(X, rng=seed)``);
* ``CRAFT m=.5`` - the paper's fixed budget ``craft(X, m=0.5, k=K, rng=seed)``;
* ``KPrototypes`` - kmodes' ``KPrototypes(n_clusters=K, init="Cao",
  random_state=seed)`` (n_init its default, 10) on the mixed sets, categorical
  columns (category / bool dtypes) given by index. KPrototypes refuses data without
  a categorical column and is k-modes without a numeric one, so the all-categorical
  sets run kmodes' ``KModes`` (same arguments) and the all-numeric ones
  scikit-learn's ``KMeans(n_clusters=K, random_state=seed)``; the method column
  names which ran. Inputs: numeric columns standardised, their missing cells set to
  the column mean (0); a missing categorical cell is a level of its own;
* ``Gower + average`` - the Gower distance (``gower_distance``: range-normalised
  absolute difference for numeric, mismatch for categorical, averaged over the
  features both rows have) and scipy's ``linkage(method="average")`` cut at K
  clusters (deterministic: one seed). Not run above ``--gower-max-rows`` rows (Adult:
  1.19e9 distances, 9.5 GB);
* ``VarSelLCM k=K`` - R's ``VarSelCluster(x, gvals=K, vbleSelec=TRUE,
  crit.varsel="BIC", nbcores=1)`` and ``VarSelLCM auto`` with ``gvals=1:KMAX``;
  features used = its relevant variables;
* ``clustMixType`` - R's ``kproto(x, k=K, na.rm="no")`` (rows with missing cells
  kept; its default ``na.rm="yes"`` drops them), mixed sets only (kproto refuses
  data without a numeric or without a factor column).

R reads the same data from CSV with the column types kept (``factor`` for
categorical, ``numeric`` for numeric, integer counts included, so VarSelLCM models
them as Gaussian as CRAFT does, not as Poisson). Every R call is an ``Rscript`` child
process timed inside (``system.time`` around the call, after reading the data and
loading the package) with a time limit (``--timeout``); a call past it is recorded
as "timeout" and the later seeds of that method on that set are not started. The
Python calls run in this process, timed around the call (``time.perf_counter``,
and CPU ``time.process_time``), with BLAS / OpenMP limited to one thread
(threadpoolctl), as the R calls run on one core (``nbcores=1``).

Columns: ARI, NMI, purity (``sparseclust.metrics``), time (s, median wall time of
the call), ``CRAFT/this`` = CRAFT k=K's median time over this method's (CRAFT auto:
over VarSelLCM auto's), features used (CRAFT: selected by at least one cluster /
all), K given and K chosen (median over seeds). The verdict against the issue's
targets follows the table. ``benchmarks/mixed_panel.md`` gets the table and verdict
(the docs quote it) and ``mixed_panel.json`` the numbers, with their date, machine
and load average; a run updates the rows it measured.

Install R, VarSelLCM and clustMixType (Debian/Ubuntu, as root)::

    apt-get install r-base-core r-base-dev r-cran-rcpp r-cran-rcpparmadillo \\
        r-cran-ggplot2 r-cran-shiny r-cran-mclust r-cran-rcolorbrewer r-cran-tibble \\
        r-cran-combinat r-cran-dplyr r-cran-rlang
    git clone https://github.com/cran/VarSelLCM /tmp/VarSelLCM      # GPL-2 or later
    git clone https://github.com/cran/clustMixType /tmp/clustMixType  # GPL-2 or later
    R CMD INSTALL /tmp/VarSelLCM && R CMD INSTALL /tmp/clustMixType

and kmodes with ``pip install sparseclust[bench]`` (or ``pip install kmodes``).
Without ``Rscript`` or those packages (or with ``--skip-r``) the R rows are the last
recorded ones from ``mixed_panel.json``, shown with their date.

Run: python benchmarks/mixed_panel.py [--sets wine,zoo] [--seeds 3] [--quick]
[--skip-r] [--timeout 600] [--kmax 8] [--m-fixed] [--methods craft,peers,r] [--table-only] (``--quick``: 1 seed, the sets
under 1,000 rows, nothing written).
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from sparseclust import craft
from sparseclust import datasets as ds
from sparseclust.metrics import ari, nmi, purity

HERE = Path(__file__).resolve().parent
RECORD = HERE / "mixed_panel.json"
TABLE = HERE / "mixed_panel.md"

SETS = [
    "adult",
    "banknote",
    "heart_disease_cleveland",
    "house_votes_84",
    "monk3",
    "mushroom_complete",
    "penguins",
    "soybean_large",
    "spambase",
    "splice",
    "wine",
    "zoo",
]
METHODS = {  # key: (label, runs in R, K chosen by the method)
    "craft_k": ("CRAFT k=K", False, False),
    "craft_auto": ("CRAFT auto (K, m chosen)", False, True),
    "craft_m05": ("CRAFT m=.5 k=K (paper)", False, False),
    "peer_kp": ("KPrototypes", False, False),
    "gower": ("Gower + average", False, False),
    "vslcm_k": ("VarSelLCM k=K", True, False),
    "vslcm_auto": ("VarSelLCM auto (K chosen)", True, True),
    "kproto_r": ("clustMixType kproto", True, False),
}
PEERS = ["peer_kp", "gower", "vslcm_k", "kproto_r"]  # K given, against CRAFT k=K


def craft_takes_m_auto() -> bool:
    """Whether ``craft`` has the budget chosen from the data (``m="auto"``)."""
    param = inspect.signature(craft).parameters["m"]
    return param.default == "auto" or "str" in str(param.annotation)


M_CHOSEN: float | str = "auto" if craft_takes_m_auto() else 0.5  # the one-line switch


# ----------------------------------------------------------------------------- data


def load_set(name: str) -> tuple[pd.DataFrame, pd.Series] | str:
    """(X, y) of a panel set, or why it is skipped."""
    if name == "banknote":
        try:  # the UCI file: $SPARSECLUST_BANKNOTE or the user cache
            return ds.load_banknote(as_frame=False)
        except FileNotFoundError:
            return (
                "skipped: not found (Banknote is not shipped; set SPARSECLUST_BANKNOTE to "
                "the UCI file, or run load_banknote(download=True) once)"
            )
    return ds.load_dataset(name, as_frame=False)


def column_kinds(X: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(numeric, categorical) column names by dtype: bool, category and object are
    categorical, the other numeric dtypes numeric (as craft detects them)."""
    cat = [
        c
        for c in X.columns
        if isinstance(X[c].dtype, pd.CategoricalDtype)
        or pd.api.types.is_bool_dtype(X[c])
        or pd.api.types.is_object_dtype(X[c])
    ]
    return [c for c in X.columns if c not in cat], cat


def gower_distance(X: pd.DataFrame) -> np.ndarray:
    """Condensed Gower distance (the order of ``scipy.spatial.distance.pdist``).

    Numeric: ``|x_i - x_j| / range`` (range over the observed values; a constant
    column contributes 0); categorical: 0 if equal, 1 if not. Averaged over the
    features observed in both rows; a pair sharing no observed feature gets 1.
    """
    num, cat = column_kinds(X)
    n = len(X)
    total = np.zeros(n * (n - 1) // 2)
    count = np.zeros(n * (n - 1) // 2)
    for c in X.columns:
        if c in num:
            v = X[c].to_numpy(dtype=float, na_value=np.nan)
            span = np.nanmax(v) - np.nanmin(v) if np.isfinite(v).any() else 0.0
            d = pdist(v[:, None], "cityblock") / (span if span > 0 else 1.0)
        else:
            codes = pd.Series(X[c]).astype("category").cat.codes.to_numpy().astype(float)
            codes[codes < 0] = np.nan
            d = pdist(codes[:, None], "cityblock")
            d = np.where(np.isnan(d), np.nan, (d > 0).astype(float))
        seen = ~np.isnan(d)
        total[seen] += d[seen]
        count += seen
    out = np.ones_like(total)
    np.divide(total, count, out=out, where=count > 0)
    return out


def gower_average(X: pd.DataFrame, k: int) -> np.ndarray:
    """Labels 1..k: average linkage on the Gower distance, cut at ``k`` clusters."""
    return fcluster(linkage(gower_distance(X), method="average"), k, criterion="maxclust")


def peer_inputs(X: pd.DataFrame) -> tuple[np.ndarray, list[int], str]:
    """The kmodes / KMeans input: standardised numeric columns (missing -> 0, the
    mean), categorical as strings (missing -> "<NA>"); categorical indices; which
    method fits the column kinds."""
    num, cat = column_kinds(X)
    cols = []
    for c in X.columns:
        if c in num:
            v = X[c].to_numpy(dtype=float, na_value=np.nan)
            sd = np.nanstd(v)
            z = (v - np.nanmean(v)) / (sd if sd > 0 else 1.0)
            cols.append(np.where(np.isnan(z), 0.0, z).astype(object))
        else:
            cols.append(X[c].astype(object).where(X[c].notna(), "<NA>").astype(str).to_numpy())
    data = np.column_stack(cols)
    which = "KMeans" if not cat else "KModes" if not num else "KPrototypes"
    return data, [X.columns.get_loc(c) for c in cat], which


# ----------------------------------------------------------------------- Python calls


def _timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def run_craft(X: pd.DataFrame, k: int | None, m, seed: int, kmax: int) -> dict:
    kw = {"k": k} if k is not None else {"k_max": kmax}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, wall, cpu = _timed(lambda: craft(X, m=m, rng=seed, progress=False, **kw))
    used = int(res.selected.to_numpy(dtype=bool).any(axis=0).sum())
    return {
        "labels": res.labels.to_numpy(dtype=float, na_value=-1),
        "time": wall,
        "cpu": cpu,
        "k": int(res.n_clusters),
        "features": used,
        "m": res.m if isinstance(res.m, int | float) else str(res.m),
    }


def run_peer(X: pd.DataFrame, k: int, seed: int) -> dict:
    """KPrototypes, or KModes / KMeans where it does not apply (``method`` says)."""
    data, cat_idx, which = peer_inputs(X)
    if which == "KMeans":
        from sklearn.cluster import KMeans

        fit = KMeans(n_clusters=k, random_state=seed).fit
        arg = (data.astype(float),)
    elif which == "KModes":
        from kmodes.kmodes import KModes

        fit = KModes(n_clusters=k, init="Cao", random_state=seed).fit
        arg = (data,)
    else:
        from kmodes.kprototypes import KPrototypes

        fit = KPrototypes(n_clusters=k, init="Cao", random_state=seed).fit
        arg = (data,)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, wall, cpu = _timed(lambda: fit(*arg, categorical=cat_idx))
        return _peer_out(model.labels_, wall, cpu, X, which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, wall, cpu = _timed(lambda: fit(*arg))
    return _peer_out(model.labels_, wall, cpu, X, which)


def _peer_out(labels, wall, cpu, X, which) -> dict:
    labels = np.asarray(labels, dtype=float)
    k = len(np.unique(labels))
    return {
        "labels": labels,
        "time": wall,
        "cpu": cpu,
        "k": k,
        "features": X.shape[1],
        "method": which,
    }


def run_gower(X: pd.DataFrame, k: int) -> dict:
    labels, wall, cpu = _timed(lambda: gower_average(X, k))
    return _peer_out(labels, wall, cpu, X, "Gower + average")


# ---------------------------------------------------------------------------- R calls

R_CALLS = {
    "vslcm_k": (
        "VarSelLCM",
        "res <- VarSelCluster(x, gvals={k}, vbleSelec=TRUE, crit.varsel='BIC', nbcores=1)",
        "res@model@g",
        "length(res@model@names.relevant)",
        "fitted(res)",
    ),
    "vslcm_auto": (
        "VarSelLCM",
        "res <- VarSelCluster(x, gvals=1:{kmax}, vbleSelec=TRUE, crit.varsel='BIC', nbcores=1)",
        "res@model@g",
        "length(res@model@names.relevant)",
        "fitted(res)",
    ),
    "kproto_r": (
        "clustMixType",
        "res <- kproto(x, k={k}, na.rm='no', verbose=FALSE)",
        "length(unique(res$cluster))",
        "ncol(x)",
        "res$cluster",
    ),
}
R_TEMPLATE = """
suppressPackageStartupMessages(library({pkg}))
x <- read.csv('{path}', colClasses=c({classes}), na.strings='', check.names=FALSE)
set.seed({seed})
invisible(capture.output(t <- system.time({{ {code} }})))
cat(sprintf('TIME %.6f %.6f\\n', t[['elapsed']], t[['user.self']] + t[['sys.self']]))
cat('K', {k_out}, '\\n')
cat('FEATURES', {f_out}, '\\n')
cat('LABELS', {lab_out}, '\\n')
"""


def r_available() -> str:
    """'' when Rscript with VarSelLCM and clustMixType is there, else why not."""
    if shutil.which("Rscript") is None:
        return "no Rscript"
    code = "quit(status = !all(sapply(c('VarSelLCM', 'clustMixType'), requireNamespace, quietly=TRUE)))"
    ok = subprocess.run(["Rscript", "-e", code], capture_output=True)
    return "" if ok.returncode == 0 else "VarSelLCM or clustMixType not installed"


def write_r_csv(X: pd.DataFrame, path: Path) -> str:
    """Write ``X`` for R; returns the colClasses vector's body."""
    num, _ = column_kinds(X)
    out = pd.DataFrame(
        {c: X[c].astype(float) if c in num else X[c].astype(object).astype("string") for c in X}
    )
    out.to_csv(path, index=False, na_rep="")
    return ", ".join("'numeric'" if c in num else "'factor'" for c in X.columns)


def run_r(key: str, path: Path, classes: str, k: int, kmax: int, seed: int, timeout: float):
    """dict of one R call, or a str saying why there is none ("timeout", the error)."""
    pkg, code, k_out, f_out, lab_out = R_CALLS[key]
    script = R_TEMPLATE.format(
        pkg=pkg,
        path=path,
        classes=classes,
        seed=seed,
        code=code.format(k=k, kmax=kmax),
        k_out=k_out,
        f_out=f_out,
        lab_out=lab_out,
    )
    try:
        proc = subprocess.run(
            ["Rscript", "-e", script], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    found = {}
    for line in proc.stdout.splitlines():
        head, _, rest = line.partition(" ")
        found[head] = rest.split()
    if "TIME" not in found:
        return "error: " + ((proc.stderr.strip().splitlines() or ["failed"])[-1])[:80]
    labels = np.array([-1.0 if v == "NA" else float(v) for v in found["LABELS"]])
    if not len(labels):  # VarSelLCM: "All the models got error (degeneracy)"
        return "error: no partition: " + " ".join(proc.stderr.split())[-60:]
    return {
        "labels": labels,
        "time": float(found["TIME"][0]),
        "cpu": float(found["TIME"][1]),
        "k": int(found["K"][0]),
        "features": int(found["FEATURES"][0]),
    }


# ------------------------------------------------------------------------- the panel


def score(y: pd.Series, out: dict | str) -> dict | str:
    """The call's result with ARI, NMI and purity; a failed call (str) or a call that
    did not label every row stays a note ("error: ...")."""
    if isinstance(out, str):
        return out
    lab = out.pop("labels")
    if len(lab) != len(y):
        return f"error: {len(lab)} labels for {len(y)} rows"
    out.update(ari=ari(y, lab), nmi=nmi(y, lab), purity=purity(y, lab))
    return out


def summarise(runs: list, note: str = "") -> dict:
    """Median over seeds of the numeric fields; strings (timeouts, errors) as the note."""
    ok = [r for r in runs if isinstance(r, dict)]
    fails = sorted({r for r in runs if isinstance(r, str)})
    row = {"seeds": len(ok), "note": "; ".join([note, *fails]).strip("; ")}
    for key in ("ari", "nmi", "purity", "time", "cpu", "k", "features"):
        row[key] = float(np.median([r[key] for r in ok])) if ok else None
    for key in ("method", "m"):
        if ok and key in ok[0]:
            row[key] = sorted({str(r[key]) for r in ok}) if key == "m" else ok[0][key]
    return row


def panel_set(name: str, args, tmp: Path, r_why: str) -> dict | str:
    """The methods of ``args.methods`` on one set: {"info", "rows": method -> summary
    row}, or why the set is skipped."""
    data = load_set(name)
    if isinstance(data, str):
        return data
    X, y = data
    k = int(y.nunique())
    num, cat = column_kinds(X)
    runs: dict[str, list] = {key: [] for key in METHODS}
    same_m = M_CHOSEN == 0.5
    r_keys = ["vslcm_k", "vslcm_auto"] + (["kproto_r"] if num and cat else [])
    r_keys = [] if r_why or "r" not in args.methods else r_keys
    classes = write_r_csv(X, tmp / f"{name}.csv") if r_keys else ""
    gower = "peers" in args.methods and len(X) <= args.gower_max_rows
    for seed in range(args.seeds):
        if "craft" in args.methods:
            runs["craft_k"].append(score(y, run_craft(X, k, M_CHOSEN, seed, args.kmax)))
            runs["craft_auto"].append(score(y, run_craft(X, None, M_CHOSEN, seed, args.kmax)))
            if not same_m:
                runs["craft_m05"].append(score(y, run_craft(X, k, 0.5, seed, args.kmax)))
        if "peers" in args.methods:
            runs["peer_kp"].append(score(y, run_peer(X, k, seed)))
        if gower and seed == 0:  # deterministic
            runs["gower"].append(score(y, run_gower(X, k)))
        for key in r_keys:
            if "timeout" in runs[key]:
                continue
            out = run_r(key, tmp / f"{name}.csv", classes, k, args.kmax, seed, args.timeout)
            runs[key].append(score(y, out))
        print(f"  {name} seed {seed} done ({time.strftime('%H:%M:%S')})", flush=True)
    rows = {key: summarise(v) for key, v in runs.items() if v}
    if "peers" in args.methods and not gower:
        pairs = len(X) * (len(X) - 1) // 2
        rows["gower"] = summarise(
            [], f"not run: {pairs:.3g} distances ({8 * pairs / 2**30:.1f} GiB)"
        )
    if same_m and "craft_k" in rows:  # one call serves both rows
        rows["craft_m05"] = dict(rows["craft_k"])
    info = {"n": len(X), "p": X.shape[1], "num": len(num), "cat": len(cat), "k_given": k}
    return {"info": info, "rows": rows}


# --------------------------------------------------------------------- verdict, table


def _get(rows: dict, key: str, field: str):
    return rows.get(key, {}).get(field)


def best_peer(rows: dict) -> tuple[float | None, str]:
    """The best median ARI among the peers with K given, and which peer it is."""
    found = [(_get(rows, p, "ari"), p) for p in PEERS if _get(rows, p, "ari") is not None]
    return max(found) if found else (None, "")


def verdict(sets: dict) -> list[str]:
    """The issue's targets, one line each, from the panel's rows (``sets``: name ->
    {"info", "rows"})."""
    names = [s for s in sets if isinstance(sets[s], dict)]
    n_sets = len(names)
    gap, near, k_ok, vs_k_ok, below, small, ratio_auto, vs_fast = [], [], [], [], [], [], [], []
    vs_ran = 0
    for s in names:
        rows, info = sets[s]["rows"], sets[s]["info"]
        ours, (best, who) = _get(rows, "craft_k", "ari"), best_peer(rows)
        if ours is not None and best is not None:
            gap.append((s, ours - best, METHODS[who][0]))
        kc = _get(rows, "craft_auto", "k")
        if kc is not None and abs(kc - info["k_given"]) <= 1:
            k_ok.append(s)
        vk = _get(rows, "vslcm_auto", "k")
        if vk is not None:
            vs_ran += 1
            vs_k_ok += [s] if abs(vk - info["k_given"]) <= 1 else []
            auto = _get(rows, "craft_auto", "ari")
            if auto is not None and auto < _get(rows, "vslcm_auto", "ari"):
                theirs = _get(rows, "vslcm_auto", "ari")
                below.append((f"{s} ({auto:.3f} < {theirs:.3f})", theirs - auto > 0.02))
        tk, ta = _get(rows, "craft_k", "time"), _get(rows, "craft_auto", "time")
        if tk is not None and info["n"] < 6000:
            small.append((s, tk))
        if tk and ta:
            ratio_auto.append((s, ta / tk))
        for ours_key, vs_key in (("craft_k", "vslcm_k"), ("craft_auto", "vslcm_auto")):
            t_ours, t_vs = _get(rows, ours_key, "time"), _get(rows, vs_key, "time")
            if t_ours and t_vs:
                vs_fast.append((f"{s} {ours_key}", t_vs / t_ours))
    near = [g for g in gap if g[1] >= -0.02]
    lines = [
        _target(
            "ARI(CRAFT k=K) >= best peer - 0.05 on every set",
            all(g[1] >= -0.05 for g in gap) and len(gap) == n_sets,
            f"{sum(g[1] >= -0.05 for g in gap)} of {len(gap)}; misses: "
            + (", ".join(f"{s} {d:+.2f} vs {w}" for s, d, w in gap if d < -0.05) or "none"),
        ),
        _target(
            "best or tied-best (within 0.02) on >= 8 of 12",
            len(near) >= 8,
            f"{len(near)} of {len(gap)}: " + ", ".join(s for s, _, _ in near),
        ),
        _target(
            "CRAFT auto: chosen K within one of the class count on >= 9 of 12",
            len(k_ok) >= 9,
            f"{len(k_ok)} of {n_sets} ({', '.join(k_ok)}); VarSelLCM auto: {len(vs_k_ok)} of {vs_ran}",
        ),
        _target(
            "CRAFT auto ARI below VarSelLCM auto's on <= 2 sets",
            vs_ran > 0 and len(below) <= 2,
            f"{len(below)} of {vs_ran}: "
            + (", ".join(b for b, _ in below) or "none")
            + f"; by more than the 0.02 tie margin: {sum(m for _, m in below)}",
        ),
        _target(
            "craft(k=K) <= 1 s on every set under 6,000 rows (measured under load)",
            all(t <= 1 for _, t in small) and bool(small),
            ", ".join(f"{s} {t:.2f}" for s, t in small),
        ),
        _target(
            "craft() (K, m chosen) <= 5x the k= call",
            all(r <= 5 for _, r in ratio_auto) and bool(ratio_auto),
            ", ".join(f"{s} {r:.1f}x" for s, r in ratio_auto),
        ),
        _target(
            "both CRAFT calls >= 5x faster than VarSelLCM (same K mode) where it ran",
            all(r >= 5 for _, r in vs_fast) and bool(vs_fast),
            ", ".join(f"{s} {r:.1f}x" for s, r in vs_fast),
        ),
    ]
    return lines


def _target(what: str, met: bool, detail: str) -> str:
    return f"- {'MET' if met else 'missed'}: {what}: {detail}"


def _f(v, fmt=".2f") -> str:
    return "-" if v is None else format(v, fmt)


def _run_of(row: dict) -> str:
    return row.get("run", row.get("date", ""))


def _note(key: str, rows: dict, latest: str) -> str:
    """A row's note: m used, CRAFT auto's time over the k=K call's, the run's date when
    the row is older than the table's latest run, and what the run recorded."""
    row, parts = rows[key], []
    if key in ("craft_k", "craft_auto") and row.get("m"):
        parts.append("m " + "/".join(row["m"]))
    t, t_k = row.get("time"), _get(rows, "craft_k", "time")
    if key == "craft_auto" and t and t_k:
        parts.append(f"{t / t_k:.1f}x the k=K call")
    if _run_of(row) and _run_of(row) != latest:
        parts.append(f"run of {_run_of(row)}")
    return "; ".join([*parts, row.get("note", "")]).strip("; ")


def markdown_table(sets: dict) -> str:
    """The panel as one Markdown table (set rows as in ``sets``; skipped sets noted)."""
    head = (
        "| set (n x p: num/cat) | method | K given | K chosen | ARI | NMI | purity "
        "| time (s) | CRAFT / this | features used | note |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    entries = [e for e in sets.values() if isinstance(e, dict)]
    latest = max((_run_of(r) for e in entries for r in e["rows"].values()), default="")
    body = []
    for s, entry in sets.items():
        if isinstance(entry, str):
            body.append(f"| {s} | - | | | | | | | | | {entry} |")
            continue
        info, rows = entry["info"], entry["rows"]
        label = f"{s} ({info['n']} x {info['p']}: {info['num']}/{info['cat']})"
        for key, row in rows.items():
            if key == "craft_m05" and _get(rows, "craft_k", "m") == ["0.5"]:
                continue  # the same call as CRAFT k=K
            name, _, chooses = METHODS[key]
            name = row.get("method", name) if key == "peer_kp" else name
            ref = "craft_auto" if key == "vslcm_auto" else "craft_k"
            t_ref, t = _get(rows, ref, "time"), row.get("time")
            mine = key in ("craft_k", "craft_auto")
            ratio = f"{t_ref / t:.2g}" if t_ref and t and not mine else "-"
            feats = row.get("features")
            feats = "-" if feats is None else f"{feats:.0f}/{info['p']}"
            body.append(
                f"| {label} | {name} | {'-' if chooses else info['k_given']} "
                f"| {_f(row.get('k'), '.0f')} | {_f(row.get('ari'))} | {_f(row.get('nmi'))} "
                f"| {_f(row.get('purity'))} | {_f(t, '.3g')} | {ratio} | {feats} "
                f"| {_note(key, rows, latest)} |"
            )
            label = ""
    return head + "\n".join(body) + "\n"


# ---------------------------------------------------------------------------- record


def machine_line() -> str:
    import sklearn

    try:
        import kmodes

        km = f"kmodes {kmodes.__version__}"
    except ImportError:
        km = "no kmodes"
    r = (
        subprocess.run(["Rscript", "--version"], capture_output=True, text=True)
        if shutil.which("Rscript")
        else None
    )
    rv = (r.stdout or r.stderr).strip().splitlines()[0] if r else "no R"
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, {km}, {rv}"
    )


def merge_record(sets: dict, stamp: dict) -> dict:
    """The stored panel updated with this run's rows; the rows not measured now stay as
    recorded, each with the date of its run."""
    old = json.loads(RECORD.read_text()) if RECORD.exists() else {"sets": {}}
    merged = dict(old["sets"])
    for s, entry in sets.items():
        if isinstance(entry, str):
            merged.setdefault(s, entry)
            continue
        rows = dict(merged[s]["rows"]) if isinstance(merged.get(s), dict) else {}
        rows.update({k: {**v, "run": stamp["run"]} for k, v in entry["rows"].items()})
        merged[s] = {"info": entry["info"], "rows": {k: rows[k] for k in METHODS if k in rows}}
    runs = {**old.get("runs", {}), stamp["run"]: {k: v for k, v in stamp.items() if k != "run"}}
    return {**stamp, "runs": runs, "sets": {s: merged[s] for s in SETS if s in merged}}


def write_record(sets: dict, stamp: dict) -> dict:
    """``merge_record`` and write it, under a lock (two runs may share the record)."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "sparseclust_mixed_panel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = merge_record(sets, stamp)
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
    return record


def panel_text(sets: dict) -> str:
    return (
        markdown_table(sets) + "\nVerdict (issue 17 targets):\n\n" + "\n".join(verdict(sets)) + "\n"
    )


def markdown_page(record: dict, text: str) -> str:
    """``mixed_panel.md``: the runs the rows come from, the table and the verdict."""
    runs = "".join(
        f"* run of {run}: {r['seeds']} seeds, CRAFT m = {r['m']!r}, {r['load']} ({r['date']});"
        f" {r['machine']}\n"
        for run, r in sorted(record.get("runs", {}).items())
        if any(
            _run_of(row) == run
            for e in record["sets"].values()
            if isinstance(e, dict)
            for row in e["rows"].values()
        )
    )
    return (
        f"# Mixed-data panel ({record['date']})\n\nWritten by `benchmarks/mixed_panel.py` "
        "(medians over seeds; Python calls with BLAS / OpenMP at one thread, R calls with "
        "`nbcores=1`; the machine shared with other jobs, so times are inflated alike "
        "within a run). Rows from:\n\n" + runs + "\n" + text
    )


def _stamp(args, load: str, run: str) -> dict:
    return {
        "run": run,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_line(),
        "load": load,
        "seeds": args.seeds,
        "m": M_CHOSEN,
    }


def main(argv: list[str] | None = None) -> None:
    global M_CHOSEN
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--quick", action="store_true", help="1 seed, sets under 1,000 rows, nothing written"
    )
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per R call")
    ap.add_argument("--kmax", type=int, default=8, help="largest K of the own-choice runs")
    ap.add_argument("--gower-max-rows", type=int, default=10_000)
    ap.add_argument(
        "--methods",
        default="craft,peers,r",
        help="which to run (craft, peers = KPrototypes and Gower, r); the other rows stay as recorded",
    )
    ap.add_argument("--m-fixed", action="store_true", help="CRAFT k=K and auto with m = 0.5")
    ap.add_argument(
        "--table-only", action="store_true", help="run nothing: the recorded table and verdict"
    )
    args = ap.parse_args(argv)
    if args.table_only:
        record = json.loads(RECORD.read_text())
        text = panel_text(record["sets"])
        print(text)
        TABLE.write_text(markdown_page(record, text))
        return
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    args.methods = {s.strip() for s in args.methods.split(",")}
    unknown = set(names) - set(SETS)
    if unknown:
        ap.error(f"--sets: unknown {sorted(unknown)}; choose from {SETS}")
    if args.quick:
        args.seeds = 1
        names = [
            s
            for s in names
            if s not in ("adult", "mushroom_complete", "spambase", "splice", "banknote")
        ]
    M_CHOSEN = 0.5 if args.m_fixed else M_CHOSEN
    r_why = "--skip-r" if args.skip_r else r_available()
    print(machine_line())
    print(
        f"load average at the start: {os.getloadavg()[0]:.1f}; CRAFT m = {M_CHOSEN!r}; R: {r_why or 'yes'}"
    )
    from threadpoolctl import threadpool_limits

    start, load0 = time.time(), os.getloadavg()[0]
    run = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    sets: dict = {}
    shown, record = sets, {}
    with threadpool_limits(1), tempfile.TemporaryDirectory() as tmp:
        for s in names:
            sets[s] = panel_set(s, args, Path(tmp), r_why)
            load = (
                f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} after {s}; "
                f"run {time.time() - start:.0f} s"
            )
            print(load, flush=True)
            if not args.quick:  # recorded set by set: a stopped run keeps what it measured
                record = write_record({s: sets[s]}, _stamp(args, load, run))
                shown = record["sets"]
    text = panel_text(shown)
    print(text)
    if not args.quick:
        TABLE.write_text(markdown_page(record, text))


if __name__ == "__main__":
    main()
