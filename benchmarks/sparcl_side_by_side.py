"""R's sparcl and sparseclust side by side: the same CSV files, timed alternately, one run.

Data: the slides' generator (Witten & Tibshirani 2010: 3 equal clusters, q = 50
informative features with means 0 / 0.6 / 1.2, the rest N(0, 1)) at 200 x 1000,
1000 x 1000 and 2000 x 5000, written once as CSV with 17 significant digits (R and
numpy read the same doubles). For each size and call, sparcl (an ``Rscript`` child
process) and sparseclust (a Python child process) run one after the other, ``--repeats``
times; each times its call inside the process (after reading the file and loading the
package; k-means and hierarchical calls after one untimed call on the first 60 rows,
on both sides, so that neither pays first-call costs; k-means and hierarchical calls
below 10^6 cells (200 x 1000) are timed ``INNER`` = 3 times in the child, successive
calls with the next seed, and the child reports their median: a single call of a few
milliseconds varies by a third from process to process), and its peak resident memory
is the child's maximum RSS (``os.wait4``: the interpreter and the data included).
The tables give medians and ratios (sparcl time /
sparseclust time) from this one run, and the load average around it.

Calls (sparcl -> sparseclust):

* k-means: ``KMeansSparseCluster(x, K=3, wbounds=5)`` (nstart 20) ->
  ``sparse_kmeans(x, 3, wbound=5)``;
* permute: ``KMeansSparseCluster.permute(x, K=3, nperms=10)`` (its 10 default bounds) ->
  ``kmeans_sparse_permute(x, 3, nperms=10, n_jobs=2)``;
* hierarchical: ``HierarchicalSparseCluster(x, method="average")`` (wbound 0.5 sqrt(p)) ->
  ``sparse_hclust(x)`` (exact weights) and ``sparse_hclust(x, weights="sparcl")``
  (sparcl's numbers).

sparcl calls that cannot finish here are not started: its hierarchical D needs
12 n(n-1)/2 p bytes at its peak (74.5 GiB for one copy at 2000 x 5000, beyond R's
.Fortran limit), and its permute at 2000 x 5000 is (nperms + 1) x 10 k-means fits of
minutes each. Each sparcl call has a time limit (``--timeout``).

A second table times ``kmeans_sparse_permute`` with ``n_jobs=1`` and ``n_jobs=2``
alternately (each child after one untimed call on the first 60 rows) (issue 18: two workers must be >= 1.6x faster at 1000 x 1000 and never
slower at 200 x 1000).

Install R and sparcl (Debian/Ubuntu, as root)::

    apt-get install r-base-core r-base-dev
    git clone https://github.com/cran/sparcl /tmp/sparcl-src   # sparcl 1.0.4, GPL-2
    R CMD INSTALL /tmp/sparcl-src

Without ``Rscript`` or sparcl the script prints the last recorded run
(``sparcl_side_by_side.json`` next to it, with its date).

Each child also reports its CPU time for the call (R: user + system of
``system.time``; Python: ``time.process_time``), shown next to the wall times: on a
shared machine the wall time includes waiting for a core. ``--tasks`` reruns some
calls only; the record keeps the other rows with the date of their run.

Run: python benchmarks/sparcl_side_by_side.py [--repeats 3] [--sizes 200x1000,1000x1000]
[--tasks kmeans,hclust] [--skip-n-jobs]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RECORD = Path(__file__).with_name("sparcl_side_by_side.json")
SIZES = [(200, 1000), (1000, 1000), (2000, 5000)]
TASKS = ["kmeans", "permute", "hclust"]
#: timed calls per child process (their median) where one call takes under a second
INNER = 3

R_CODE = {
    "kmeans": "out <- KMeansSparseCluster(x, K=3, wbounds=5, silent=TRUE)",
    "permute": "out <- KMeansSparseCluster.permute(x, K=3, nperms=10, silent=TRUE)",
    "hclust": "out <- HierarchicalSparseCluster(x, method='average', silent=TRUE)",
}
R_TEMPLATE = """
suppressPackageStartupMessages(library(sparcl))
x <- as.matrix(read.csv('{path}', header=FALSE)); dimnames(x) <- NULL
set.seed({seed})
if ({warm}) {{ x0 <- x; x <- x0[1:60, ]; invisible(capture.output({{ {code} }})); x <- x0 }}
ts <- c(); cs <- c()
for (i in 1:{inner}) {{
  invisible(capture.output(t <- system.time({{ {code} }})))
  ts <- c(ts, t[['elapsed']]); cs <- c(cs, t[['user.self']] + t[['sys.self']])
}}
cat(sprintf('TIME %.6f %.6f\\n', median(ts), median(cs)))
"""

PY_CODE = {
    "kmeans": "sparse_kmeans(x, 3, wbound=5, rng={seed})",
    "permute": "kmeans_sparse_permute(x, 3, nperms=10, n_jobs={n_jobs}, rng={seed})",
    "hclust": "sparse_hclust(x)",
    "hclust_sparcl": 'sparse_hclust(x, weights="sparcl")',
}
PY_TEMPLATE = """
import time, warnings
import numpy as np
from sparseclust import kmeans_sparse_permute, sparse_hclust, sparse_kmeans
from sparseclust.exceptions import ConvergenceWarning
warnings.simplefilter("ignore", ConvergenceWarning)
x = np.loadtxt('{path}', delimiter=',')
_i = 0
if {warm}:
    x0, x = x, x[:60]
    {code}
    x = x0
ts, cs = [], []
for _i in range({inner}):
    t, c = time.perf_counter(), time.process_time()
    {code}
    ts.append(time.perf_counter() - t)
    cs.append(time.process_time() - c)
print(f"TIME {{np.median(ts):.6f}} {{np.median(cs):.6f}}")
"""


def simulate(n: int, p: int, seed: int = 0) -> np.ndarray:
    """The slides' design: 3 clusters (sizes as equal as n allows), q = 50 informative."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, :50] += np.array([0.0, 0.6, 1.2])[np.arange(n) % 3][:, None]
    return X


def run_child(argv: list[str], timeout: float) -> tuple[float | None, float, str, float | None]:
    """(wall seconds timed inside the child or None, peak RSS in MiB, a note, CPU seconds
    of the child's process for the same call or None)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return None, usage.ru_maxrss / 1024, f"> {timeout:.0f} s (stopped)", None
        time.sleep(0.05)
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for line in out.splitlines():
        if line.startswith("TIME "):
            wall, cpu = (float(v) for v in line.split()[1:3])
            return wall, usage.ru_maxrss / 1024, "", cpu
    last = (err.strip().splitlines() or ["failed"])[-1]
    return None, usage.ru_maxrss / 1024, last[:70], None


def sparcl_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    ok = subprocess.run(
        ["Rscript", "-e", "quit(status = !requireNamespace('sparcl', quietly = TRUE))"],
        capture_output=True,
    )
    return ok.returncode == 0


def sparcl_skip(task: str, n: int, p: int) -> str:
    """Why a sparcl call is not started here ('' when it is)."""
    pairs = n * (n - 1) // 2
    avail = _mem_available()
    if task == "hclust" and (pairs * p >= 2**31 or 12 * pairs * p > avail):
        return f"cannot allocate (D: {8 * pairs * p / 2**30:.1f} GiB per copy)"
    if task == "permute" and n * p > 2_000_000:
        return "not run: 11 x 10 k-means fits of minutes each (hours)"
    return ""


def _mem_available() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float("inf")


def side_by_side(sizes, repeats: int, timeout: float, tmp: Path, tasks=TASKS) -> list[dict]:
    rows = []
    for n, p in sizes:
        path = tmp / f"x_{n}x{p}.csv"
        np.savetxt(path, simulate(n, p), delimiter=",", fmt="%.17g")
        for task in tasks:
            ours = [task] + (["hclust_sparcl"] if task == "hclust" else [])
            reps = repeats if n * p < 10**6 or (task == "kmeans" and n * p <= 10**6) else 1
            reps = 1 if task == "permute" else reps
            warm = task != "permute"  # one untimed call on the first 60 rows, both sides
            # calls under a second: each child times INNER calls (median), both sides
            inner = INNER if task != "permute" and n * p < 10**6 else 1
            skip = sparcl_skip(task, n, p)
            res = {"sparcl": [], **{k: [] for k in ours}}
            note = skip
            for r in range(reps):
                if not skip:
                    code = R_TEMPLATE.format(
                        path=path,
                        seed=r + 1,
                        code=R_CODE[task],
                        warm="TRUE" if warm else "FALSE",
                        inner=inner,
                    )
                    t, mem, why, cpu = run_child(["Rscript", "-e", code], timeout)
                    res["sparcl"].append((t, mem, cpu))
                    note = why or note
                for k in ours:
                    code = PY_CODE[k].format(seed=f"{10 * r} + _i", n_jobs=2)
                    py = PY_TEMPLATE.format(path=path, code=code, warm=warm, inner=inner)
                    t, mem, _, cpu = run_child([sys.executable, "-c", py], 4 * timeout)
                    res[k].append((t, mem, cpu))
            rows.append(_summarise(n, p, task, res, note))
            print(_row_text(rows[-1]), flush=True)
    return rows


def _summarise(n, p, task, res, note) -> dict:
    def med(vals, i=0):
        ts = [v[i] for v in vals if v[i] is not None]
        return float(np.median(ts)) if ts else None

    def summary(vals):  # median wall, peak memory, median CPU
        return med(vals), max((v[1] for v in vals), default=None), med(vals, 2)

    row = {"size": f"{n} x {p}", "task": task, "note": note, "repeats": len(res[task])}
    row["date"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    row["sparcl_s"], row["sparcl_mib"], row["sparcl_cpu_s"] = summary(res["sparcl"])
    row["ours_s"], row["ours_mib"], row["ours_cpu_s"] = summary(res[task])
    if "hclust_sparcl" in res:
        s, m, c = summary(res["hclust_sparcl"])
        row["ours_sparcl_mode_s"], row["ours_sparcl_mode_mib"], row["ours_sparcl_mode_cpu_s"] = (
            s,
            m,
            c,
        )
    return row


def _fmt(v, unit="") -> str:
    return "-" if v is None else f"{v:.3g}{unit}"


def _row_text(r: dict) -> str:
    ratio = r["sparcl_s"] / r["ours_s"] if r["sparcl_s"] and r["ours_s"] else None
    text = (
        f"{r['size']:>12} {r['task']:>8} | sparcl {_fmt(r['sparcl_s'], ' s'):>9} "
        f"{_fmt(r['sparcl_mib'], ' MiB'):>10} | sparseclust {_fmt(r['ours_s'], ' s'):>9} "
        f"{_fmt(r['ours_mib'], ' MiB'):>10} | ratio {_fmt(ratio, 'x'):>7}"
    )
    if r.get("sparcl_cpu_s") and r.get("ours_cpu_s"):
        text += f" | CPU {_fmt(r['sparcl_cpu_s'], ' s')} / {_fmt(r['ours_cpu_s'], ' s')}"
        text += f" = {_fmt(r['sparcl_cpu_s'] / r['ours_cpu_s'], 'x')}"
    if "ours_sparcl_mode_s" in r:
        rel = r["ours_sparcl_mode_s"] / r["ours_s"] if r["ours_s"] else None
        text += (
            f" | weights='sparcl' {_fmt(r['ours_sparcl_mode_s'], ' s')} ({_fmt(rel, 'x')} of exact"
        )
        cpu, cpu0 = r.get("ours_sparcl_mode_cpu_s"), r.get("ours_cpu_s")
        text += f"; CPU {_fmt(cpu, ' s')}, {_fmt(cpu / cpu0, 'x')})" if cpu and cpu0 else ")"
    return text + (f"  [{r['note']}]" if r["note"] else "")


def n_jobs_table(sizes, repeats: int, tmp: Path) -> list[dict]:
    rows = []
    for n, p in sizes:
        path = tmp / f"x_{n}x{p}.csv"
        if not path.exists():
            np.savetxt(path, simulate(n, p), delimiter=",", fmt="%.17g")
        times = {1: [], 2: []}
        for r in range(repeats):
            for jobs in (1, 2):
                code = PY_CODE["permute"].format(seed=f"{10 * r} + _i", n_jobs=jobs)
                # warmed as the k-means and hierarchical calls (one untimed call on the
                # first 60 rows, with the same n_jobs): a process's first call loads the
                # compiled kernels, about 0.45 s at 1000 x 1000, in both modes
                py = PY_TEMPLATE.format(path=path, code=code, warm=True, inner=1)
                t = run_child([sys.executable, "-c", py], 3600)[0]
                times[jobs].append(t)
        row = {"size": f"{n} x {p}", "serial_s": times[1], "n_jobs2_s": times[2]}
        row["speedup"] = float(np.median(times[1]) / np.median(times[2]))
        rows.append(row)
        print(
            f"{row['size']:>12} n_jobs=1 {', '.join(f'{t:.2f}' for t in times[1])} s | "
            f"n_jobs=2 {', '.join(f'{t:.2f}' for t in times[2])} s | speed-up "
            f"{row['speedup']:.2f}x",
            flush=True,
        )
    return rows


def print_record() -> None:
    if not RECORD.exists():
        print("No recorded run (sparcl_side_by_side.json) next to this script.")
        return
    rec = json.loads(RECORD.read_text())
    print(f"Rscript with sparcl not found; the last recorded run, {rec['date']}:")
    print(rec["machine"])
    for r in rec["rows"]:
        when = f"  (run of {r['date']})" if r.get("date", rec["date"]) != rec["date"] else ""
        print(_row_text(r) + when)
    for r in rec.get("n_jobs", []):
        print(
            f"{r['size']:>12} permute n_jobs=1 median {np.median(r['serial_s']):.2f} s, "
            f"n_jobs=2 {np.median(r['n_jobs2_s']):.2f} s: {r['speedup']:.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per sparcl call")
    ap.add_argument("--sizes", default=",".join(f"{n}x{p}" for n, p in SIZES))
    ap.add_argument("--tasks", default=",".join(TASKS), help="a subset of " + ",".join(TASKS))
    ap.add_argument("--skip-n-jobs", action="store_true")
    args = ap.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    tasks = [t for t in args.tasks.split(",") if t]
    if set(tasks) - set(TASKS):
        ap.error(f"--tasks takes {TASKS}; got {args.tasks!r}")
    if not sparcl_available():
        print_record()
        return
    r_version = subprocess.run(
        ["Rscript", "-e", "cat(R.version.string, 'sparcl', format(packageVersion('sparcl')))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    machine = (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, {r_version}; load average "
        f"{os.getloadavg()[0]:.1f} at the start"
    )
    print(machine, flush=True)
    with tempfile.TemporaryDirectory() as d:
        rows = side_by_side(sizes, args.repeats, args.timeout, Path(d), tasks)
        jobs = (
            []
            if args.skip_n_jobs
            else n_jobs_table([s for s in sizes if s[0] * s[1] <= 10**6], args.repeats, Path(d))
        )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    record = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine + f", {load[1]:.1f} at the end (5 min)",
        "rows": rows,
        "n_jobs": jobs,
    }
    RECORD.write_text(json.dumps(_merged(record, args.skip_n_jobs), indent=1) + "\n")


def _merged(record: dict, skip_n_jobs: bool) -> dict:
    """The new record, keeping the recorded rows this run did not repeat (each row has
    its own date) and the recorded n_jobs table when it was skipped."""
    if not RECORD.exists():
        return record
    old = json.loads(RECORD.read_text())
    done = {(r["size"], r["task"]) for r in record["rows"]}
    kept = [r for r in old.get("rows", []) if (r["size"], r["task"]) not in done]
    for r in kept:
        r.setdefault("date", old.get("date"))
        r.setdefault("machine", old.get("machine"))
    record["rows"] = kept + record["rows"]
    if skip_n_jobs:
        record["n_jobs"] = old.get("n_jobs", [])
    return record


if __name__ == "__main__":
    main()
