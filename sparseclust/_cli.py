"""Command line: ``python -m sparseclust <method> (--data FILE.csv | --dataset NAME) ...``.

Each method registers a :class:`Command` (its options and how to call it); the
shared options (input, label column, outputs, seed) are added once here.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMMANDS", "DEFAULT_SEED", "Command", "main"]

#: The command line's seed when ``--seed`` is not given: a command prints the same
#: result every time it is run (the Python functions' ``rng=None`` draws fresh).
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Command:
    """One sub-command: ``add_arguments(parser)`` and ``run(args, x, data) -> result``.

    ``x`` is a DataFrame (``data`` None) or a formula string with its ``data``.
    """

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Any, Any], Any]
    plot: Callable[[Any], Any] = lambda result: result.plot().figure
    #: arguments the ``Call:`` line always shows (the method's main choices), even at
    #: their defaults: the printed call says what was run
    show: tuple[str, ...] = ()
    #: an example command line, listed by ``--help``
    example: str = ""


def _lam(text: str) -> float | str:
    if text == "farthest_first":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lam takes a positive number or 'farthest_first'; got {text!r}"
        ) from None


def _budget(text: str) -> float | str:
    """``--m``: a number in (0, 1) or ``auto`` (chosen from the data by BIC)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--m takes a number in (0, 1) or 'auto'; got {text!r}"
        ) from None


@dataclass(frozen=True)
class _Call:
    """A :class:`Command`'s ``run``: ``sparseclust.<func>(x, data=data, **kwargs)``.

    ``kwargs`` holds every option named in ``options`` under its own name
    (``max_iter=args.max_iter``), the shared ``--categorical``, ``--numeric``,
    ``--screen`` / ``--no-screen`` and ``--lump-min`` (as ``screen=``),
    ``--seed`` as ``rng`` when ``seeded``, and each ``computed`` parameter's value
    derived from the parsed options.
    """

    func: str
    options: tuple[str, ...]
    computed: dict[str, Callable[[argparse.Namespace], Any]] = field(default_factory=dict)
    seeded: bool = True

    def __call__(self, args: argparse.Namespace, x: Any, data: Any, **extra: Any) -> Any:
        import sparseclust

        kwargs = {name: getattr(args, name) for name in self.options}
        kwargs |= {name: value(args) for name, value in self.computed.items()}
        kwargs |= {"categorical": args.categorical, "numeric": args.numeric}
        kwargs["screen"] = (
            {"lump_min": args.lump_min} if args.screen and args.lump_min else bool(args.screen)
        )
        if self.seeded:
            kwargs["rng"] = args.seed
        func = getattr(sparseclust, self.func)
        # pass only what differs from the function's defaults: the Call: line shows the
        # arguments a caller wrote, and the command line's user wrote these options
        defaults = {n: p.default for n, p in inspect.signature(func).parameters.items()}
        kwargs = {
            n: v
            for n, v in kwargs.items()
            if (n in _ON_OFF and v is not None)  # --scale / --no-scale: as written
            or not (_is_default(v, defaults.get(n)) or (v is None and defaults.get(n) is not None))
        }
        if data is not None:
            kwargs["data"] = data
        kwargs = {n: v for n, v in kwargs.items() if n in defaults}
        return func(x, **kwargs, **extra)


def _is_default(value: Any, default: Any) -> bool:
    """``value`` is the function's default (same type and value)."""
    return type(value) is type(default) and value == default


#: Options given as ``--x`` / ``--no-x`` (default None: not written, the method's default).
_ON_OFF = ("scale",)


def _scale_option(g: Any, help: str) -> None:
    """``--scale`` / ``--no-scale``; neither leaves the method's default (and its
    warning about columns of very different spread)."""
    g.add_argument("--scale", action=argparse.BooleanOptionalAction, default=None, help=help)


def _choice(g: Any, flag: str, choices: Sequence[str], help: str | None = None) -> None:
    """An option taking one of ``choices``, the first being the default."""
    g.add_argument(flag, choices=list(choices), default=choices[0], help=help)


def _penalty_args(g: Any, k_help: str) -> None:
    """--k, --lam and --max-iter: the same for every DP-style method."""
    g.add_argument("--k", type=int, default=None, help=k_help)
    g.add_argument(
        "--lam",
        type=_lam,
        default=None,
        help="penalty for a new cluster (number) or 'farthest_first' (needs --k)",
    )
    g.add_argument("--max-iter", type=int, default=100, help="cap on passes (default 100)")


def _dpmeans_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("DP-means")
    _penalty_args(g, "number of clusters: calibrates lambda (alone) or feeds farthest_first")
    _choice(
        g,
        "--init",
        ["mean", "random"],
        "start from the global mean (default) or a random point (DP-means(R))",
    )
    _scale_option(g, "standardise numeric variables first (default: raw, as Kulis & Jordan)")
    _choice(g, "--missing", ["raise", "drop"], "rows with missing values: error (default) or drop")


_dpmeans_run = _Call("dpmeans", ("lam", "k", "init", "scale", "max_iter", "missing"))


def _craft_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("CRAFT")
    g.add_argument(
        "--m",
        type=_budget,
        default="auto",
        help="fraction of features selected per cluster, or 'auto' (default: chosen "
        "from the data by BIC)",
    )
    _penalty_args(
        g,
        "number of clusters (lambda calibrated); omit it and --lam to choose K "
        "automatically (--k-method)",
    )
    _choice(
        g,
        "--k-method",
        ["stability", "gap"],
        "automatic K: subsample stability after a gap test of K = 1 (default), "
        "or the gap statistic",
    )
    g.add_argument("--k-max", type=int, default=8, help="largest automatic K (default 8)")
    g.add_argument(
        "--n-jobs", type=int, default=None, help="parallel restarts and subsample fits (-1: all)"
    )
    g.add_argument(
        "--rho",
        type=float,
        default=None,
        help="prior variance in (0, m(1-m)): near m(1-m) local, near 0 global selection",
    )
    _choice(g, "--budget", ["fixed", "approximate"])
    g.add_argument("--eps-c", type=float, default=None, help="approximate budget: categorical")
    g.add_argument("--eps-v", type=float, default=None, help="approximate budget: numeric")
    _scale_option(g, "standardise numeric columns (default: yes, as the CRAFT paper)")
    g.add_argument("--n-init", type=int, default=None, help="restarts (default: by data size)")
    _choice(
        g,
        "--missing",
        ["native", "drop", "raise"],
        "missing cells: handled natively (default), rows dropped, or an error",
    )


_craft_run = _Call(
    "craft",
    (
        "m",
        "k",
        "lam",
        "rho",
        "budget",
        "eps_c",
        "eps_v",
        "max_iter",
        "k_method",
        "k_max",
        "n_jobs",
        "missing",
        "scale",
    ),
    computed={
        "n_init": lambda args: "auto" if args.n_init is None else args.n_init,
    },
)


def _sparse_common(g: Any) -> None:
    _choice(
        g,
        "--weights",
        ["exact", "sparcl"],
        "exact weight projection (default) or sparcl's BinarySearch replica",
    )
    _scale_option(g, "standardise each feature first (default: raw, as sparcl)")


#: The options of :func:`_kmeans_common`, passed on under their own names.
_KMEANS_OPTIONS = ("k", "weights", "algorithm", "nstart", "max_iter", "scale")


def _kmeans_common(g: Any) -> None:
    from ._sparse.rules import MAX_ROUNDS, SPARCL_MAX_ITER

    g.add_argument("--k", type=int, required=True, help="number of clusters")
    _choice(g, "--algorithm", ["hartigan-wong", "lloyd"])
    g.add_argument("--nstart", type=int, default=20, help="random starts (default 20)")
    g.add_argument(
        "--max-iter",
        type=int,
        default=MAX_ROUNDS,
        help=f"cap on the rounds (default {MAX_ROUNDS}; sparcl's is {SPARCL_MAX_ITER})",
    )
    _sparse_common(g)


def _sparse_kmeans_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sparse k-means")
    g.add_argument(
        "--wbound",
        type=float,
        default=None,
        help="L1 bound on the weights (1 < s <= sqrt(p); default 0.5 sqrt(p), as sparcl)",
    )
    _kmeans_common(g)


_sparse_kmeans_run = _Call("sparse_kmeans", ("wbound", *_KMEANS_OPTIONS))


def _kmeans_permute_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("permutation tuning of sparse k-means")
    g.add_argument(
        "--wbounds", type=float, nargs="+", default=None, help="bounds to try (default: grid)"
    )
    g.add_argument("--nperms", type=int, default=25, help="permutations (default 25)")
    g.add_argument("--nvals", type=int, default=10, help="length of the default grid")
    _choice(g, "--rule", ["max", "1se"])
    g.add_argument("--n-jobs", type=int, default=None, help="parallel permutations (-1: all)")
    _kmeans_common(g)


_kmeans_permute_run = _Call(
    "kmeans_sparse_permute", ("wbounds", "nperms", "nvals", "rule", "n_jobs", *_KMEANS_OPTIONS)
)


def _niter_option(g: Any) -> None:
    """--niter of both hierarchical commands: the functions' cap, sparcl's named."""
    from ._sparse.rules import MAX_ROUNDS, SPARCL_NITER

    g.add_argument(
        "--niter",
        type=int,
        default=MAX_ROUNDS,
        help=f"cap on the iterations (default {MAX_ROUNDS}; sparcl's is {SPARCL_NITER})",
    )


def _sparse_hclust_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sparse hierarchical clustering")
    g.add_argument(
        "--wbound", type=float, default=None, help="L1 bound (default 0.5 sqrt(p), as sparcl)"
    )
    _choice(g, "--method", ["average", "complete", "single", "centroid"])
    _choice(g, "--dissimilarity", ["squared", "absolute"])
    g.add_argument("--k", type=int, default=None, help="cut the tree into k clusters (labels)")
    _niter_option(g)
    g.add_argument(
        "--standardize-arrays", action="store_true", help="standardise each row (sparcl)"
    )
    _sparse_common(g)


_sparse_hclust_run = _Call(
    "sparse_hclust",
    ("wbound", "method", "dissimilarity", "k", "niter", "standardize_arrays", "weights", "scale"),
    seeded=False,
)


def _entropy_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("entropy clustering (binary data)")
    _penalty_args(g, "number of clusters (lambda calibrated)")
    g.add_argument("--n-init", type=int, default=10, help="restarts (default 10)")


_entropy_run = _Call("entropy_clustering", ("lam", "k", "max_iter", "n_init"))


def _dp_rf_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("DP-RF")
    g.add_argument("--m", type=float, default=0.5, help="fraction of features per cluster")
    _penalty_args(g, "number of clusters (lambda calibrated)")
    g.add_argument("--n-init", type=int, default=10, help="restarts (default 10)")
    _scale_option(g, "standardise numeric variables first (default: raw, as DP-means)")


_dp_rf_run = _Call("dp_rf", ("m", "lam", "k", "max_iter", "n_init", "scale"))


def _hclust_permute_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("permutation tuning of sparse hierarchical clustering")
    g.add_argument(
        "--wbounds", type=float, nargs="+", default=None, help="bounds to try (default: grid)"
    )
    g.add_argument("--nperms", type=int, default=10, help="permutations (default 10)")
    _choice(g, "--rule", ["max", "1se"])
    _choice(g, "--method", ["average", "complete", "single", "centroid"])
    g.add_argument("--k", type=int, default=None, help="cut the chosen tree into k clusters")
    _niter_option(g)
    g.add_argument("--n-jobs", type=int, default=None, help="parallel permutations (-1: all)")
    _sparse_common(g)


_hclust_permute_run = _Call(
    "hclust_sparse_permute",
    ("wbounds", "nperms", "rule", "method", "k", "niter", "n_jobs", "weights", "scale"),
)


def _covariate_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("convex covariate clustering (the --label column is the class)")
    _choice(g, "--method", ["convex_fusion", "convex_clustering", "kmeans"])
    _choice(g, "--select", ["marginal_likelihood", "cv"])
    g.add_argument("--knn", type=int, default=None, help="keep each covariate's knn similarities")
    g.add_argument("--sigma", type=float, default=None, help="prior sd (default: chosen by CV)")
    g.add_argument("--n-jobs", type=int, default=None, help="parallel scoring (-1: all)")
    _scale_option(g, "standardise the covariates (default: yes, as the paper)")


def _covariate_run(args: argparse.Namespace, x: Any, data: Any) -> Any:
    """``covariate_clustering`` of ``x`` on the ``--label`` column (the classes)."""
    if args.label_values is None:
        raise ValueError("covariate needs the classes: give --label COLUMN (or a --dataset).")
    if data is not None:  # a formula: the classes stay the --label column
        x = data.drop(columns=[args.label_values.name])
    run = _Call("covariate_clustering", ("method", "select", "knn", "sigma", "n_jobs", "scale"))
    return run(args, x, None, y=args.label_values)


COMMANDS: dict[str, Command] = {
    "craft": Command(
        "CRAFT: clustering with cluster-specific feature selection, numeric and categorical "
        "data (Garg, Rudin & Jaakkola 2016)",
        _craft_args,
        _craft_run,
        lambda r: r.plot_subspaces(),
        show=("m", "budget"),
        example="craft --dataset penguins --drop year --m 0.5 --k 3 --summary-out fit.html",
    ),
    "dpmeans": Command(
        "DP-means clustering (Kulis & Jordan 2012)",
        _dpmeans_args,
        _dpmeans_run,
        example="dpmeans --data survey.parquet --k 4 --scale --labels-out labels.csv",
    ),
    "sparse-kmeans": Command(
        "sparse k-means for one L1 bound (Witten & Tibshirani 2010; sparcl's KMeansSparseCluster)",
        _sparse_kmeans_args,
        _sparse_kmeans_run,
        lambda r: r.plot_weights().figure,
        example="sparse-kmeans --dataset wine --scale --k 3 --wbound 2.5",
    ),
    "kmeans-permute": Command(
        "choose the L1 bound of sparse k-means by the permutation gap statistic "
        "(sparcl's KMeansSparseCluster.permute)",
        _kmeans_permute_args,
        _kmeans_permute_run,
        example="kmeans-permute --data genes.csv --drop id --k 3 --nperms 25 --plot-out gap.png",
    ),
    "sparse-hclust": Command(
        "sparse hierarchical clustering (Witten & Tibshirani 2010; sparcl's "
        "HierarchicalSparseCluster)",
        _sparse_hclust_args,
        _sparse_hclust_run,
        lambda r: r.plot(),
        example="sparse-hclust --dataset wine --scale --k 3 --plot-out tree.png",
    ),
    "hclust-permute": Command(
        "choose the L1 bound of sparse hierarchical clustering by the permutation gap "
        "statistic (sparcl's HierarchicalSparseCluster.permute)",
        _hclust_permute_args,
        _hclust_permute_run,
        example="hclust-permute --dataset wine --scale --nperms 5 --k 3",
    ),
    "dp-rf": Command(
        "DP-RF: DP-means(R) with CRAFT's feature selection (CRAFT paper, Fig. 5)",
        _dp_rf_args,
        _dp_rf_run,
        lambda r: r.plot_subspaces(),
        show=("m",),
        example="dp-rf --dataset penguins --drop year --k 3 --scale",
    ),
    "entropy": Command(
        "entropy clustering of binary data (CRAFT supplementary, Algorithm 3)",
        _entropy_args,
        _entropy_run,
        lambda r: r.plot_objective().figure,
        example="entropy --dataset zoo --drop legs --k 7",
    ),
    "covariate": Command(
        "convex covariate clustering: cluster the covariates of a classification problem "
        "(Andrade, Fukumizu & Okajima); --label names the class column",
        _covariate_args,
        _covariate_run,
        lambda r: r.plot_path(),
        example="covariate --dataset wine --label class --labels-out clusters.csv",
    ),
}


def _parser() -> argparse.ArgumentParser:
    examples = "\n".join(f"  python -m sparseclust {c.example}" for c in COMMANDS.values())
    parser = argparse.ArgumentParser(
        prog="python -m sparseclust",
        description="Clustering with feature selection on a CSV or Parquet file or a shipped "
        "dataset: prints the fit and its summary, writes labels, the summary and a plot.",
        epilog=f"examples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="method", required=True)
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=cmd.help,
            description=cmd.help,
            epilog=f"example:\n  python -m sparseclust {cmd.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        src = p.add_mutually_exclusive_group(required=True)
        src.add_argument(
            "--data",
            metavar="FILE",
            help="CSV file with a header row, or Parquet (.parquet, .pq; needs pyarrow)",
        )
        src.add_argument(
            "--dataset",
            metavar="NAME",
            help="a shipped dataset (see sparseclust.datasets.list_datasets())",
        )
        p.add_argument(
            "--label",
            metavar="COLUMN",
            help="column holding known classes: excluded from clustering and "
            "compared with the clusters (default for --dataset: its label)",
        )
        p.add_argument(
            "--drop", metavar="COLUMN", nargs="+", default=[], help="columns to leave out"
        )
        p.add_argument(
            "--formula",
            metavar="FORMULA",
            help="one-sided formula, e.g. '~ . - id' (overrides --drop)",
        )
        p.add_argument(
            "--categorical",
            metavar="COLUMN",
            nargs="+",
            default=None,
            help="treat these columns as categorical",
        )
        p.add_argument(
            "--numeric",
            metavar="COLUMN",
            nargs="+",
            default=None,
            help="treat these columns as numeric",
        )
        p.add_argument(
            "--screen",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="screen the columns whose kind is detected: identifiers and free text "
            "dropped, numbers stored as text parsed, rare levels lumped (default: yes)",
        )
        p.add_argument(
            "--lump-min",
            type=int,
            default=None,
            metavar="ROWS",
            help="rows a level needs not to be lumped into '(other)' (default: by the rows)",
        )
        p.add_argument(
            "--seed",
            type=int,
            default=DEFAULT_SEED,
            help=f"random seed (default {DEFAULT_SEED}: the same result on every run)",
        )
        p.add_argument(
            "--labels-out",
            metavar="FILE",
            help="write the cluster labels here (CSV; .parquet for Parquet; covariate: "
            "each covariate's cluster)",
        )
        p.add_argument(
            "--summary-out",
            metavar="FILE",
            help="write the summary here: text, or HTML for a .html name",
        )
        p.add_argument("--plot-out", metavar="FILE.png", help="write the result's main plot here")
        cmd.add_arguments(p)
    return parser


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    import pandas as pd

    from . import datasets

    if args.dataset is not None:
        names = list(datasets.list_datasets()["name"])
        if args.dataset not in names:
            raise ValueError(f"unknown dataset {args.dataset!r}; available: {', '.join(names)}")
        df = datasets.load_dataset(args.dataset)
        label = args.label or datasets.list_datasets().set_index("name").loc[args.dataset, "label"]
    else:
        try:
            df = _read_file(args.data)
        except FileNotFoundError:
            raise ValueError(f"--data: no such file {args.data!r}") from None
        except OSError as err:  # a directory, no permission, ...
            raise ValueError(f"--data: cannot open {args.data!r}: {err}") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"--data: cannot read {args.data!r} as CSV: {err}") from None
        label = args.label
    if label is not None and label not in df.columns:
        raise ValueError(f"--label: no column {label!r}; columns are {list(df.columns)}")
    y = df[label] if label is not None else None
    if args.formula:
        if label is not None:
            # --label is excluded from clustering: a formula must not use it (as '~ .' would).
            from ._data.formula import evaluate_formula

            if label in evaluate_formula(args.formula, df).variables.columns:
                name = label if label.isidentifier() else f'Q("{label}")'
                raise ValueError(
                    f"--formula {args.formula!r} clusters on the label column {label!r}, which "
                    f"--label excludes from clustering; remove it, e.g. --formula '~ . - {name}'."
                )
        return (args.formula, df), y
    unknown = [c for c in args.drop if c not in df.columns]
    if unknown:
        raise ValueError(f"--drop: no columns {unknown}; columns are {list(df.columns)}")
    x = df.drop(columns=[*args.drop, *([label] if label is not None else [])])
    return (x, None), y


def _read_file(path: str) -> Any:
    """A CSV file, or Parquet by its extension (pandas with pyarrow)."""
    import pandas as pd

    if path.lower().endswith((".parquet", ".pq")):
        try:
            import pyarrow  # noqa: F401 - the engine pandas needs
        except ImportError:
            raise ValueError(
                f"--data: reading Parquet ({path!r}) needs pyarrow, which is not installed; "
                "pip install pyarrow, or give a CSV file."
            ) from None
        return pd.read_parquet(path)
    return pd.read_csv(path)


def _write_outputs(args: argparse.Namespace, result: Any, cmd: Command) -> None:
    """``--labels-out``, ``--summary-out`` and ``--plot-out``."""
    if args.labels_out:
        labels = getattr(result, "clusters", None)  # covariate clustering: covariates
        frame = (labels if labels is not None else result.labels).rename("cluster").to_frame()
        if args.labels_out.lower().endswith((".parquet", ".pq")):
            frame.to_parquet(args.labels_out)
        else:
            frame.to_csv(args.labels_out)
        print(f"\nLabels written to {args.labels_out}")
    if args.summary_out:
        summary = result.summary()
        html = args.summary_out.lower().endswith((".html", ".htm"))
        with open(args.summary_out, "w", encoding="utf-8") as fh:
            fh.write(summary._repr_html_() if html else str(summary) + "\n")  # noqa: SLF001
        print(f"Summary written to {args.summary_out}")
    if args.plot_out:
        import matplotlib

        matplotlib.use("Agg")
        cmd.plot(result).savefig(args.plot_out, dpi=120)
        print(f"Plot written to {args.plot_out}")


def _data_name(args: argparse.Namespace) -> str:
    """How the ``Call:`` line names the data: the shipped data set or the CSV file."""
    if args.dataset is not None:
        return args.dataset
    reader = "read_parquet" if args.data.lower().endswith((".parquet", ".pq")) else "read_csv"
    return f"{reader}({args.data!r})"


def _as_options(text: str, sub: argparse.ArgumentParser) -> str:
    """A message written for Python (``niter=50``) as its command-line options
    (``--niter 50``), for the options this sub-command has."""
    actions = [a for a in sub._actions if a.option_strings]  # noqa: SLF001
    dests = {a.dest: a.option_strings[-1] for a in actions if a.option_strings[-1].startswith("--")}
    on_off = {a.dest for a in actions if isinstance(a, argparse.BooleanOptionalAction)}
    dests["rng"] = "--seed"

    def swap(match: re.Match) -> str:
        name, value = match.group(1), match.group(2)
        if name in on_off:  # --scale / --no-scale
            if value not in ("True", "False"):
                return match.group(0)
            return f"--{'' if value == 'True' else 'no-'}{name.replace('_', '-')}"
        return f"{dests[name]} {value}" if name in dests else match.group(0)

    if "lump_min" in dests:  # the screen's option, a dict in Python
        text = text.replace("screen={'lump_min': ...}", "--lump-min ROWS")
    return re.sub(r"\b([a-z][a-z0-9_]*)=([^\s,;:)]+)", swap, text)


def _report_warnings(caught: list, sub: argparse.ArgumentParser) -> None:
    """Warnings of the fit, each once, as ``prog: warning: ...`` lines on stderr, in
    the command line's terms (not attributed to a file of the package)."""
    seen = set()
    for w in caught:
        text = _as_options(str(w.message), sub)
        if text in seen:
            continue
        seen.add(text)
        print(f"{sub.prog}: warning ({w.category.__name__}): {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 usage or data error)."""
    from ._results.format import call_context

    parser = _parser()
    args = parser.parse_args(argv)
    sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
    cmd = COMMANDS[args.command]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x, data), y = _load(args)
            args.label_values = y
            with call_context(data_name=_data_name(args), show=cmd.show):
                result = cmd.run(args, x, data)
    except (ValueError, TypeError) as err:
        sub.print_usage(sys.stderr)
        print(f"{sub.prog}: error: {err}", file=sys.stderr)
        return 2
    _report_warnings(caught, sub)
    print(result)
    print(f"Seed: {args.seed} (--seed N for another random start)")
    print()
    print(result.summary())
    if y is not None and args.command != "covariate":  # covariates have no row labels
        from .metrics import cluster_report

        rep = cluster_report(y, result.labels, dropna=True)
        print()
        print(f"Agreement of the clusters with {y.name!r}:")
        print(rep.to_string(float_format=lambda v: f"{v:.4f}"))
    _write_outputs(args, result, cmd)
    return 0
