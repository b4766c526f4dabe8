"""Covariate clustering speed: the ADMM path, one nu against CVXPY, the convex-clustering
baseline.

Data: section 4's generator (``sparseclust.simulate.covariate_sim``; c = 4, d = 10 m).

1. The full 301-nu path (``clustering_path``, default grid 2^(-0.1 a) and 0: penalty
   multipliers n 2^(-0.1 a)) at
   d = 40, n = 40 and 400, with S = the true Sigma* and with the Ledoit-Wolf S
   sparsified to 5 nearest neighbours. The authors' scripts on this machine: 149 s
   (n = 40) and 750 s (n = 400). Targets: < 5 s and < 15 s.
2. One cold nu at d = 200, n = 400 (authors ~4 s; target < 0.3 s).
3. One nu against CVXPY (Clarabel and SCS) on the same problem at d = 40, 200, 1000
   (n = 400; S = true Sigma* sparsified to 5 neighbours so that the edge count stays
   moderate at d = 1000), objective values compared. Target: faster at every size, at
   least 10x at d = 1000. Skipped when cvxpy is not installed (``pip install cvxpy``).
4. The convex-clustering baseline path for 200 points in R^400 (k-NN(10) weights,
   phi = 0.5, 100 gammas). CCMM (C++) takes 0.64 s; target within 3x.

Run: python benchmarks/covariate_speed.py [--skip-cvxpy] [--cvxpy-sizes 40,200,1000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from sparseclust._covariate import core as cc
from sparseclust._covariate import select as cs
from sparseclust.simulate import covariate_sim


def problem(n: int, m: int, *, similarity: str = "true", knn: int | None = None, seed: int = 0):
    sim = covariate_sim(n, m=m, rng=seed)
    X = sim.data.to_numpy()
    y = sim.labels.to_numpy()
    S = sim.sigma.to_numpy() if similarity == "true" else cc.ledoit_wolf_similarity(X, y)
    S = S.copy()
    np.fill_diagonal(S, 0.0)
    if knn is not None:
        S = cc.knn_sparsify(S, knn)
    edges, w = cc.edges_from_similarity(S)
    return X, y, edges, w


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def cvxpy_solve(X, y, edges, w, nu, lam, solver):
    import cvxpy as cp

    n, d = X.shape
    c = int(y.max()) + 1
    B = cp.Variable((c, d))
    beta = cp.Variable(c)
    eta = X @ B.T + np.ones((n, 1)) @ cp.reshape(beta, (1, c), order="C")
    Y = np.zeros((n, c))
    Y[np.arange(n), y] = 1.0
    nll = cp.sum(cp.log_sum_exp(eta, axis=1)) - cp.sum(cp.multiply(Y, eta))
    D = B[:, edges[:, 0]] - B[:, edges[:, 1]]
    fuse = cp.sum(cp.multiply(w, cp.norm(D, 2, axis=0)))
    prob = cp.Problem(cp.Minimize(nll + lam * cp.sum_squares(B) + n * nu * fuse))
    t = time.perf_counter()
    prob.solve(solver=solver)
    return time.perf_counter() - t, float(prob.value)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-cvxpy", action="store_true")
    ap.add_argument("--cvxpy-sizes", default="40,200,1000")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("1. full 301-nu path, d = 40")
    for sim_s, knn in (("true", None), ("ledoit_wolf", 5)):
        for n, target, authors in ((40, 5.0, 149.0), (400, 15.0, 750.0)):
            X, y, edges, w = problem(n, 4, similarity=sim_s, knn=knn)
            dt, path = timed(lambda X=X, y=y, e=edges, w=w: cc.clustering_path(X, y, 4, e, w))
            conv = sum(r.converged for r in path)
            label = "true Sigma*" if sim_s == "true" else f"Ledoit-Wolf, {knn}-NN"
            print(
                f"  n={n:4d} S={label:<18} edges={len(edges):5d}: {dt:6.2f} s "
                f"({conv}/{len(path)} nu converged; authors {authors:.0f} s, "
                f"{authors / dt:.0f}x; target < {target:.0f} s: {'met' if dt < target else 'NOT met'})"
            )
    print("\n2. one cold nu, d = 200, n = 400 (target < 0.3 s; authors ~4 s); 5 runs each")
    X, y, edges, w = problem(400, 20)
    for nu in (1e-2, 1e-3, 3e-4):
        walls, cpus = [], []
        for _ in range(5):
            c0 = time.process_time()
            dt, res = timed(lambda nu=nu: cc.admm_fit(X, y, 4, edges, w, nu))
            walls.append(dt)
            cpus.append(time.process_time() - c0)
        plain = cc.admm_fit(X, y, 4, edges, w, nu, certify=False)
        print(
            f"  nu={nu:g}: wall {min(walls):.3f}-{max(walls):.3f} s (median "
            f"{np.median(walls):.3f}), CPU median {np.median(cpus):.3f} s; {res.n_iter} "
            f"iterations ({res.method}; without the certificate {plain.n_iter}), "
            f"{res.n_clusters} clusters"
        )
    if not args.skip_cvxpy:
        try:
            import cvxpy  # noqa: F401
        except ImportError:
            print("\n3. skipped: cvxpy is not installed (pip install cvxpy)")
        else:
            print("\n3. one nu (1e-3), n = 400, S = true Sigma* 5-NN: ADMM vs CVXPY")
            for d in (int(v) for v in args.cvxpy_sizes.split(",")):
                X, y, edges, w = problem(400, d // 10, knn=5)
                nu, lam = 1e-3, 0.1
                t_admm, res = timed(
                    lambda X=X, y=y, e=edges, w=w, nu=nu: cc.admm_fit(X, y, 4, e, w, nu, tol=1e-6)
                )
                obj = cc.objective(X, y, res.B, res.beta, edges, w, 400 * nu, lam)
                line = f"  d={d:5d} edges={len(edges):6d}: ADMM {t_admm:.3f} s"
                for solver in ("CLARABEL", "SCS"):
                    t_cvx, val = cvxpy_solve(X, y, edges, w, nu, lam, solver)
                    line += (
                        f"; {solver} {t_cvx:.3f} s ({t_cvx / t_admm:.1f}x, objective rel diff "
                        f"{(obj - val) / abs(val):+.1e})"
                    )
                print(line)
    print("\n4. convex clustering baseline path, 200 points in R^400 (CCMM 0.64 s)")
    P = np.random.default_rng(0).normal(size=(200, 400))
    P[:100] += 0.5
    dt, runs = timed(lambda: cs.convex_clustering_path(P, k=10, phi=0.5, n_gammas=100))
    print(f"  {dt:.2f} s, {len(runs)} distinct clusterings ({dt / 0.64:.1f}x CCMM; target <= 3x)")


if __name__ == "__main__":
    main()
