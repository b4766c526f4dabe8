"""Independent fits (restarts, permutations, wbounds) run in parallel with a progress bar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["run_parallel"]


def run_parallel(
    func: Callable[..., Any],
    tasks: Sequence[tuple],
    *,
    n_jobs: int | None = None,
    progress: bool = False,
    desc: str = "",
) -> list[Any]:
    """``[func(*args) for args in tasks]``, in parallel with joblib when ``n_jobs`` is not 1/None.

    Results come back in task order whatever the scheduling, so seeded tasks are
    reproducible for any ``n_jobs``. ``progress=True`` shows a tqdm bar.
    """
    tasks = list(tasks)
    if not tasks:
        return []
    if n_jobs in (None, 1) or len(tasks) == 1:
        if not progress:
            return [func(*a) for a in tasks]
        from tqdm.auto import tqdm

        return [func(*a) for a in tqdm(tasks, desc=desc, leave=False)]
    from joblib import Parallel, delayed

    calls = (delayed(func)(*a) for a in tasks)
    if progress:
        from tqdm.auto import tqdm

        calls = (delayed(func)(*a) for a in tqdm(tasks, desc=desc, leave=False))
    return list(Parallel(n_jobs=n_jobs)(calls))
