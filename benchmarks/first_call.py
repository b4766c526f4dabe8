"""Time to first result: each public method's first call in a fresh process, against its
warm call, in one run.

For every method below, ``--repeats`` times (medians reported), with the interpreter this
script runs under (the installed package: run it from a directory outside the source
checkout, e.g. ``cd /tmp && python /path/to/benchmarks/first_call.py``):

1. **first call after install**: a fresh process with an empty compiled-code cache (a new
   ``NUMBA_CACHE_DIR``, which a numba build reads first; kernels compiled ahead of time
   have no cache and nothing to compile) imports sparseclust, loads the data, times the
   call, then times the same call again: the **warm** call;
2. **first call in a later process**: a second fresh process with the same cache
   directory (now filled when a JIT build left anything in it) times the call once.

The wall times are taken inside the processes (``time.perf_counter`` around the call;
the import and the data loading are outside it), so interpreter start-up is not
counted. The method's import (``from sparseclust import craft``: the package, the
method's modules and the libraries its calls need) is timed on its own and reported
beside: a first call made light by importing more up front would show there. Targets (issue 33): the first call after install at most the warm call + 1 s,
a later process's first call at most the warm call + 0.1 s.

Run: python benchmarks/first_call.py [--repeats 5] [--only craft,sparse_kmeans]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

#: name -> (setup code, the call timed)
CALLS = {
    "craft(k=3, m=0.5)": (
        "from sparseclust import craft\nfrom sparseclust.datasets import load_penguins\n"
        "X = load_penguins().drop(columns=['species', 'year'])",
        "craft(X, k=3, m=0.5, rng=1)",
    ),
    "craft() (K, m chosen)": (
        "from sparseclust import craft\nfrom sparseclust.datasets import load_penguins\n"
        "X = load_penguins().drop(columns=['species', 'year'])",
        "craft(X, rng=1)",
    ),
    "sparse_kmeans": (
        "from sparseclust import sparse_kmeans\nfrom sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "sparse_kmeans(X, k=3, wbound=3, scale=True, rng=1)",
    ),
    "kmeans_sparse_permute": (
        "from sparseclust import kmeans_sparse_permute\n"
        "from sparseclust.datasets import load_wine\nX = load_wine().drop(columns='class')",
        "kmeans_sparse_permute(X, k=3, nperms=5, scale=True, rng=1)",
    ),
    "sparse_hclust": (
        "from sparseclust import sparse_hclust\nfrom sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "sparse_hclust(X, wbound=3, scale=True)",
    ),
    "sparse_hclust(weights='sparcl')": (
        "from sparseclust import sparse_hclust\nfrom sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "sparse_hclust(X, wbound=3, scale=True, weights='sparcl')",
    ),
    "dpmeans": (
        "from sparseclust import dpmeans\nfrom sparseclust.datasets import load_wine\n"
        "X = load_wine().drop(columns='class')",
        "dpmeans(X, k=3, scale=True, rng=1)",
    ),
    "covariate_clustering": (
        "from sparseclust import covariate_clustering\n"
        "from sparseclust.simulate import covariate_sim\nsim = covariate_sim(40, m=4, rng=0)",
        "covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)",
    ),
}

_CHILD = """
import json, time, warnings
warnings.simplefilter("ignore")
t = time.perf_counter()
{load}
load = time.perf_counter() - t
{setup}
t = time.perf_counter(); {call}; first = time.perf_counter() - t
warm = []
for _ in range({n_warm}):
    t = time.perf_counter(); {call}; warm.append(time.perf_counter() - t)
print(json.dumps({{"load": load, "first": first,
                  "warm": sorted(warm)[len(warm) // 2] if warm else None}}))
"""


def _child(setup: str, call: str, cache: str, n_warm: int) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    load, setup = setup.split("\n", 1)  # the method's import, then its data
    code = _CHILD.format(load=load, setup=setup, call=call, n_warm=n_warm)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warm", type=int, default=5, help="warm calls per process (median)")
    ap.add_argument("--only", default="", help="comma-separated method names (substrings)")
    args = ap.parse_args()
    import sparseclust

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}; sparseclust "
        f"{sparseclust.__version__} from {os.path.dirname(sparseclust.__file__)}"
    )
    names = [n for n in CALLS if not args.only or any(s in n for s in args.only.split(","))]
    rows = []
    for name in names:
        setup, call = CALLS[name]
        first, later, warm, load = [], [], [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as cache:
                a = _child(setup, call, cache, args.warm)
                b = _child(setup, call, cache, 0)
            first.append(a["first"])
            warm.append(a["warm"])
            later.append(b["first"])
            load += [a["load"], b["load"]]
        f, la, w, im = (float(np.median(v)) for v in (first, later, warm, load))
        rows.append((name, w, f, la, im))
        ok = "yes" if f <= w + 1.0 and la <= w + 0.1 else "NO"
        print(
            f"{name:32s} warm {w:8.3f} s | first after install {f:7.3f} s "
            f"(warm + {f - w:6.3f}, {f / w:6.1f}x) | later process {la:7.3f} s "
            f"(warm + {la - w:6.3f}, {la / w:5.1f}x) | its import {im:6.3f} s | targets met: {ok}",
            flush=True,
        )
    print()
    print(
        "| call | warm (s) | first after install (s) | first, later process (s) "
        "| import of the method (s) | targets |"
    )
    print("|---|---|---|---|---|---|")
    for name, w, f, la, im in rows:
        ok = "met" if f <= w + 1.0 and la <= w + 0.1 else "missed"
        print(
            f"| `{name}` | {w:.3f} | {f:.3f} (+{f - w:.2f}) | {la:.3f} (+{la - w:.3f}) "
            f"| {im:.3f} | {ok} |"
        )


if __name__ == "__main__":
    main()
