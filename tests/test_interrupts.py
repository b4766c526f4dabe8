"""Ctrl-C during long runs: the call stops promptly, raises KeyboardInterrupt and leaves
no worker process behind.

Each case runs in a subprocess of its own session (a process group, as a terminal's
foreground job): once the script says it is about to start the long call, SIGINT goes
to the whole group (what Ctrl-C does in a terminal: workers get it too) or to the
script's process alone (what a notebook's "interrupt kernel" does). The script catches
the KeyboardInterrupt, counts its live child processes (multiprocessing's and loky's
resource trackers aside: one per interpreter, they exit with it) and reports; the test
then checks that nothing of the group is left once the script has exited. The bound on the time from the signal to the
report is generous (a loaded 2-core machine); it measures 0.1-0.5 s on a quiet one,
against runs of minutes that the signal cuts short.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="reads /proc and signals a process group"
)

#: Seconds from the signal to the KeyboardInterrupt report (generous: loaded CI).
BOUND = 15.0

PRELUDE = """
import os, signal, sys, time, warnings
# Python's own Ctrl-C handler, as in a terminal: a runner that starts the suite in the
# background without job control passes SIGINT ignored, and Python then keeps it so
signal.signal(signal.SIGINT, signal.default_int_handler)
warnings.simplefilter("ignore")
import numpy as np
import sparseclust as sc

def children():
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    rest = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(rest[1]) == me and rest[0] != "Z":
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read().replace(bytes([0]), b" ").decode()
                if "resource_tracker" not in cmd:  # housekeeping: exits with us
                    out.append(cmd[:200])
    return out
"""

RUN = """
print("READY", flush=True)
try:
    CALL
    print("FINISHED", flush=True)
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    CLEANUP
    time.sleep(0.5)
    print("CHILDREN", len(children()), children(), flush=True)
"""

CASES = {
    "kmeans_sparse_permute_n_jobs_2": (
        "X = np.random.default_rng(0).normal(size=(300, 400))",
        "sc.kmeans_sparse_permute(X, 3, nperms=400, n_jobs=2, progress=False, rng=0)",
    ),
    "hclust_sparse_permute": (
        "X = np.random.default_rng(0).normal(size=(150, 300))",
        "sc.hclust_sparse_permute(X, nperms=400, progress=False, rng=0)",
    ),
    "hclust_sparse_permute_n_jobs_2": (
        "X = np.random.default_rng(0).normal(size=(150, 300))",
        "sc.hclust_sparse_permute(X, nperms=400, n_jobs=2, progress=False, rng=0)",
    ),
    "craft_restarts": (
        "X = np.random.default_rng(0).normal(size=(3000, 10))",
        "sc.craft(X, k=4, n_init=400, progress=False, rng=0)",
    ),
    "craft_restarts_n_jobs_2": (
        "X = np.random.default_rng(0).normal(size=(3000, 10))",
        "sc.craft(X, k=4, n_init=400, n_jobs=2, progress=False, rng=0)",
    ),
}

DASK = (
    "import dask.dataframe as dd, pandas as pd\n"
    "from distributed import Client, LocalCluster\n"
    "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,"
    " dashboard_address=None)\n"
    "client = Client(cluster)\n"
    "X = pd.DataFrame(np.random.default_rng(0).normal(size=(20000, 8)),"
    " columns=list('abcdefgh'))\n"
    "ddf = dd.from_pandas(X, npartitions=4)",
    "sc.craft(ddf, k=4, n_init=400, progress=False, rng=0)",
)
#: The Dask workers are the user's cluster, not the fit's: once the fit has stopped,
#: nothing of it runs on them any more, and closing the cluster leaves no process.
DASK_CLEANUP = (
    "time.sleep(1.0); print('PROCESSING', sum(map(len, client.processing().values())));"
    " client.close(); cluster.close()"
)


def _group_left(pgid: int) -> list[int]:
    """Live (not zombie) processes of the process group ``pgid``."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(rest[2]) == pgid and rest[0] != "Z":
            out.append(int(d))
    return out


def _line_within(p: subprocess.Popen, seconds: float) -> str:
    """The child's next stdout line, or "" when none comes within ``seconds``."""
    ready, _, _ = select.select([p.stdout], [], [], seconds)
    return p.stdout.readline() if ready else ""


def _interrupt(
    setup: str, call: str, *, group: bool, settle: float = 2.0, cleanup: str = "pass"
) -> tuple[float, str]:
    run = textwrap.dedent(RUN).replace("CALL", call).replace("CLEANUP", cleanup)
    code = PRELUDE + setup + "\n" + run
    p = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = p.stdout.readline()
        assert line.strip() == "READY", (line, p.stderr.read())
        time.sleep(settle)  # inside the long call, its workers started
        t0 = time.perf_counter()
        (os.killpg if group else os.kill)(p.pid, signal.SIGINT)
        line = _line_within(p, 120.0)  # a hang fails the test instead of stalling the suite
        elapsed = time.perf_counter() - t0
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert line.strip() == "INTERRUPTED", (line, out, err)
    assert "CHILDREN 0" in out, (out, err)
    time.sleep(0.5)
    assert not _group_left(p.pid), "worker processes left behind"
    return elapsed, err


@pytest.mark.parametrize("group", [True, False], ids=["ctrl_c_group", "signal_to_main"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_interrupt_stops_promptly(case, group):
    setup, call = CASES[case]
    elapsed, _ = _interrupt(setup, call, group=group)
    assert elapsed < BOUND


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("group", [True, False], ids=["ctrl_c_group", "signal_to_main"])
def test_interrupt_dask_fit(group):
    pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    elapsed, _ = _interrupt(*DASK, group=group, settle=4.0, cleanup=DASK_CLEANUP)
    assert elapsed < BOUND
