"""Tests of the command line ``python -m sparseclust dpmeans ...``."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sparseclust import dpmeans
from sparseclust._cli import COMMANDS, DEFAULT_SEED, main
from sparseclust.datasets import load_wine
from sparseclust.metrics import purity


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def wine_csv(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("data") / "wine.csv"
    load_wine().to_csv(path, index=False)
    return str(path)


def test_dataset_k3_prints_result_summary_and_agreement(capsys):
    assert main(["dpmeans", "--dataset", "wine", "--k", "3"]) == 0
    out, err = capsys.readouterr()
    # raw Wine: proline's sd is 2,500 times nonflavanoid_phenols' (the default is raw)
    assert err.startswith("python -m sparseclust dpmeans: warning (DataWarning): Numeric")
    assert "Standardise them with --scale; writing --no-scale keeps raw units" in err
    assert out.startswith("DP-means (lambda=")
    assert "calibrated) with 3 clusters on 178 obs, 13 variables (13 numeric, 0 categorical)" in out
    assert "Call: dpmeans(" in out
    assert "DP-means: summary" in out
    assert "Agreement of the clusters with 'class':" in out
    # the same fit through the API, and its purity printed in the table
    ref = dpmeans(load_wine().drop(columns="class"), k=3, scale=False)
    assert f"Cluster sizes: {', '.join(map(str, ref.sizes))}" in out
    p = purity(load_wine()["class"], ref.labels)
    assert f"{p:.4f}" in out


def test_labels_out_and_plot_out(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    png = tmp_path / "plot.png"
    code = main(
        [
            "dpmeans",
            "--dataset",
            "wine",
            "--k",
            "3",
            "--labels-out",
            str(labels),
            "--plot-out",
            str(png),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert f"Labels written to {labels}" in out and f"Plot written to {png}" in out
    df = pd.read_csv(labels, index_col=0)
    assert list(df.columns) == ["cluster"]
    assert df.index.tolist() == list(range(178))
    ref = dpmeans(load_wine().drop(columns="class"), k=3, scale=False)
    np.testing.assert_array_equal(df["cluster"].to_numpy(), ref.labels.to_numpy(dtype=int))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_data_file_with_label(wine_csv, capsys):
    assert main(["dpmeans", "--data", wine_csv, "--label", "class", "--lam", "30000"]) == 0
    out = capsys.readouterr().out
    assert "(lambda=3e+04, given)" in out
    assert "13 variables (13 numeric, 0 categorical)" in out
    assert "Agreement of the clusters with 'class':" in out


def test_data_file_without_label_clusters_every_column(wine_csv, capsys):
    assert main(["dpmeans", "--data", wine_csv, "--lam", "30000"]) == 0
    out = capsys.readouterr().out
    # class is read back from the CSV as integers 1-3: a 14th numeric variable
    assert "14 variables (14 numeric, 0 categorical)" in out
    assert "Agreement" not in out


def test_formula(capsys):
    assert main(["dpmeans", "--dataset", "wine", "--formula", "~ . - class", "--k", "3"]) == 0
    out = capsys.readouterr().out
    assert "13 variables (13 numeric, 0 categorical)" in out
    assert "Agreement of the clusters with 'class':" in out


def test_formula_using_the_label_is_an_error(capsys):
    # --label is excluded from clustering: '~ .' would expand to it
    err = _usage_error(
        capsys, ["dpmeans", "--dataset", "wine", "--formula", "~ .", "--lam", "30000"]
    )
    assert "--formula '~ .' clusters on the label column 'class'" in err
    assert "--formula '~ . - class'" in err
    err = _usage_error(
        capsys, ["dpmeans", "--dataset", "heart_disease_cleveland", "--formula", "~ .", "--k", "2"]
    )
    assert """--formula '~ . - Q("diameter narrowing")'""" in err


def test_formula_with_categorical_term(capsys):
    code = main(
        ["dpmeans", "--dataset", "wine", "--formula", "~ alcohol + C(magnesium)", "--lam", "2"]
    )
    assert code == 0
    assert "2 variables (1 numeric, 1 categorical)" in capsys.readouterr().out


def test_drop(capsys):
    code = main(["dpmeans", "--dataset", "wine", "--drop", "proline", "magnesium", "--lam", "500"])
    assert code == 0
    out = capsys.readouterr().out
    assert "11 variables (11 numeric, 0 categorical)" in out
    assert "proline" not in out


def test_options_reach_dpmeans(capsys):
    code = main(
        [
            "dpmeans",
            "--dataset",
            "wine",
            "--lam",
            "farthest_first",
            "--k",
            "3",
            "--init",
            "random",
            "--seed",
            "1",
            "--scale",
            "--max-iter",
            "50",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "farthest_first)" in out
    assert "init='random'" in out and "scale=True" in out and "max_iter=50" in out


def test_missing_drop_option(tmp_path, capsys):
    df = load_wine()
    df.loc[[0, 5], "alcohol"] = np.nan
    path = tmp_path / "w.csv"
    df.to_csv(path, index=False)
    assert main(["dpmeans", "--data", str(path), "--label", "class", "--k", "3"]) == 2
    err = capsys.readouterr().err
    assert "2 of 178 rows have missing values" in err
    labels = tmp_path / "labels.csv"
    code = main(
        [
            "dpmeans",
            "--data",
            str(path),
            "--label",
            "class",
            "--k",
            "3",
            "--missing",
            "drop",
            "--labels-out",
            str(labels),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "176 obs (2 dropped for missing values)" in out
    got = pd.read_csv(labels, index_col=0)["cluster"]
    assert got.isna().tolist() == [i in (0, 5) for i in range(178)]


def test_convergence_warning_does_not_fail(capsys):
    code = main(
        [
            "dpmeans",
            "--dataset",
            "wine",
            "--lam",
            "farthest_first",
            "--k",
            "3",
            "--max-iter",
            "1",
        ]
    )
    assert code == 0
    out, err = capsys.readouterr()
    assert "Did NOT converge in 1 iterations" in out
    # reported once on stderr, in the command line's terms
    assert err.count("warning (ConvergenceWarning)") == 1
    assert "did not converge in --max-iter 1" in err
    assert "max_iter=" not in err


def test_same_result_on_every_run_and_call_names_data_and_m(capsys):
    """A fixed default seed, printed; the Call: line names the data set and m."""
    argv = ["craft", "--dataset", "wine", "--m", "0.5", "--k", "3"]
    outs = []
    for _ in range(2):
        assert main(argv) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    call = next(line for line in outs[0].splitlines() if line.startswith("Call:"))
    assert call.startswith("Call: craft(wine, m=0.5, k=3")
    assert f"rng={DEFAULT_SEED}" in call
    assert f"Seed: {DEFAULT_SEED}" in outs[0]
    assert main([*argv, "--seed", "5"]) == 0
    assert "Seed: 5" in capsys.readouterr().out


def test_warning_hint_names_the_cli_option(capsys):
    """sparse_hclust's convergence hint reads --niter 100 on the command line (the
    default 50 converges on scaled Wine; sparcl's 15 does not)."""
    argv = ["sparse-hclust", "--dataset", "wine", "--k", "3", "--scale"]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""
    assert main([*argv, "--niter", "15"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("python -m sparseclust sparse-hclust: warning (ConvergenceWarning)")
    assert "--niter 100" in err
    assert "niter=" not in err
    assert "__main__" not in err and ".py" not in err


# ------------------------------------------------------------------------ errors
def _usage_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: python -m sparseclust dpmeans")
    assert "Traceback" not in err
    return err


def test_unknown_dataset(capsys):
    err = _usage_error(capsys, ["dpmeans", "--dataset", "nope", "--k", "3"])
    assert "python -m sparseclust dpmeans: error: unknown dataset 'nope'; available:" in err
    assert "wine" in err


def test_missing_penalty(capsys):
    err = _usage_error(capsys, ["dpmeans", "--dataset", "wine"])
    assert "dpmeans needs the new-cluster penalty: pass lam=<number>, k=<int>" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lam", "-1"], "lam must be a finite number > 0; got lam=-1.0"),
        (["--lam", "inf"], "lam must be a finite number > 0"),
        (["--lam", "farthest_first"], "lam='farthest_first' needs k="),
        (["--lam", "5", "--k", "3"], "not both"),
        (["--k", "0"], "k must be an integer >= 1; got k=0"),
        (["--k", "500"], "k=500 must be <= the number of observations n_obs=178"),
        (["--k", "3", "--max-iter", "0"], "max_iter must be an integer >= 1"),
        (["--k", "3", "--seed", "-4"], "rng must be a non-negative integer seed"),
        (["--k", "3", "--label", "colour"], "--label: no column 'colour'"),
        (["--k", "3", "--drop", "colour"], "--drop: no columns ['colour']"),
        (["--k", "3", "--categorical", "colour"], "categorical= names not in data: ['colour']"),
    ],
)
def test_value_errors_exit_2(capsys, extra, message):
    err = _usage_error(capsys, ["dpmeans", "--dataset", "wine", *extra])
    assert message in err


def test_bad_lam_text_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["dpmeans", "--dataset", "wine", "--lam", "big"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--lam takes a positive number or 'farthest_first'; got 'big'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["dpmeans", "--k", "3"],  # no input
        ["dpmeans", "--dataset", "wine", "--data", "x.csv", "--k", "3"],  # both inputs
        ["dpmeans", "--dataset", "wine", "--k", "three"],
        ["dpmeans", "--dataset", "wine", "--k", "3", "--init", "kmeans"],
        ["kmeans", "--dataset", "wine"],
        [],
    ],
)
def test_argparse_errors(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_nonexistent_data_file(tmp_path, capsys):
    missing = tmp_path / "nope.csv"
    err = _usage_error(capsys, ["dpmeans", "--data", str(missing), "--k", "3"])
    assert f"--data: no such file {str(missing)!r}" in err


def test_data_path_is_a_directory(tmp_path, capsys):
    err = _usage_error(capsys, ["dpmeans", "--data", str(tmp_path), "--k", "3"])
    assert "--data: cannot open" in err


def test_empty_data_file(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("")
    err = _usage_error(capsys, ["dpmeans", "--data", str(path), "--k", "3"])
    assert "cannot read" in err


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["dpmeans", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--lam LAM" in out and "--labels-out" in out


def test_subprocess_module_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "sparseclust", "dpmeans", "--dataset", "wine", "--k", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "with 3 clusters on 178 obs" in proc.stdout
    assert "Agreement of the clusters with 'class':" in proc.stdout


# ------------------------------------------------------------------------ craft
def test_craft_command_prints_selection_and_agreement(tmp_path, capsys):
    png = tmp_path / "subspaces.png"
    labels = tmp_path / "labels.csv"
    args = [
        "craft",
        "--dataset",
        "monk3",
        "--m",
        "0.5",
        "--k",
        "2",
        "--seed",
        "0",
        "--n-init",
        "3",
        "--plot-out",
        str(png),
        "--labels-out",
        str(labels),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("CRAFT (m=0.5, lambda=")
    assert "Features selected per cluster: 3, 3 of 6" in out
    assert "Agreement of the clusters with 'class':" in out
    assert png.stat().st_size > 5_000
    frame = pd.read_csv(labels, index_col=0)
    assert list(frame.columns) == ["cluster"] and len(frame) == 432


def test_craft_command_options_reach_craft(capsys):
    args = [
        "craft",
        "--dataset",
        "wine",
        "--m",
        "0.3",
        "--k",
        "3",
        "--seed",
        "1",
        "--n-init",
        "2",
        "--rho",
        "0.1",
        "--no-scale",
        "--max-iter",
        "300",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "fixed budget" in out.splitlines()[0]
    assert (
        "craft(wine, m=0.3, k=3, rho=0.1, budget='fixed', scale=False, n_init=2, max_iter=300, rng=1)"
        in out
    )


def test_craft_command_automatic_k_options(capsys):
    args = ["craft", "--dataset", "wine", "--k-method", "gap", "--k-max", "3", "--n-init", "2"]
    assert main([*args, "--seed", "0", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "gap" in out.splitlines()[0]
    assert (
        "craft(wine, m='auto', budget='fixed', n_init=2, k_max=3, k_method='gap', n_jobs=1, rng=0)"
        in out
    )


def test_craft_command_bad_m_is_a_usage_error(capsys):
    assert main(["craft", "--dataset", "wine", "--m", "1.5", "--k", "3"]) == 2
    err = capsys.readouterr().err
    assert "m must be a finite number > 0 and < 1" in err and "Traceback" not in err


# ------------------------------------------------------------------ sparse methods
def test_sparse_kmeans_command(tmp_path, capsys):
    labels, plot = tmp_path / "lab.csv", tmp_path / "w.png"
    argv = ["sparse-kmeans", "--dataset", "wine", "--k", "3", "--wbound", "2", "--scale"]
    argv += ["--seed", "1", "--labels-out", str(labels), "--plot-out", str(plot)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "Sparse k-means (k=3, wbound=2)" in out and "Non-zero weights" in out
    assert "Agreement of the clusters with 'class'" in out
    wine = load_wine()
    got = pd.read_csv(labels, index_col=0)["cluster"]
    assert len(got) == len(wine) and purity(wine["class"], got) > 0.85
    assert plot.stat().st_size > 5000


def test_kmeans_permute_command(capsys):
    argv = ["kmeans-permute", "--dataset", "wine", "--k", "3", "--scale", "--nperms", "3"]
    assert main([*argv, "--wbounds", "1.5", "2.5", "--seed", "0"]) == 0
    out, _ = capsys.readouterr()
    assert "Tuning parameter selection results for Sparse K-means Clustering" in out
    assert "# Non-Zero W's" in out


def test_sparse_hclust_command(tmp_path, capsys):
    plot = tmp_path / "tree.png"
    argv = ["sparse-hclust", "--dataset", "wine", "--k", "3", "--scale", "--wbound", "2"]
    argv += ["--niter", "100"]
    assert main([*argv, "--plot-out", str(plot)]) == 0
    out, _ = capsys.readouterr()
    assert "Agreement of the clusters with 'class'" in out
    assert plot.stat().st_size > 5000


def test_sparse_commands_usage_errors(capsys):
    assert main(["sparse-kmeans", "--dataset", "wine", "--k", "3", "--wbound", "0.5"]) == 2
    _, err = capsys.readouterr()
    assert "wbound must be a finite number > 1" in err
    with pytest.raises(SystemExit):
        main(["sparse-kmeans", "--dataset", "wine"])  # --k is required


# ------------------------------------------------------------------ every method
@pytest.mark.parametrize(
    ("argv", "first"),
    [
        (
            ["hclust-permute", "--dataset", "wine", "--scale", "--nperms", "3", "--k", "3"],
            "Tuning parameter selection results for Sparse Hierarchical Clustering:",
        ),
        (["dp-rf", "--dataset", "penguins", "--drop", "year", "--k", "3", "--scale"], "DP-RF ("),
        (["entropy", "--dataset", "zoo", "--drop", "legs", "--k", "4"], "Entropy clustering ("),
        (["covariate", "--dataset", "wine", "--sigma", "0.1"], "Convex covariate clustering: "),
    ],
)
def test_every_method_has_a_command(argv, first, tmp_path, capsys):
    labels, summary = tmp_path / "labels.csv", tmp_path / "summary.txt"
    argv = [*argv, "--labels-out", str(labels), "--summary-out", str(summary)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(first)
    assert f"Labels written to {labels}" in out and f"Summary written to {summary}" in out
    title = summary.read_text().split("\n")[0]
    assert title.endswith(("summary", "permutation tuning")) and "Call: " in summary.read_text()
    table = pd.read_csv(labels, index_col=0)
    assert list(table.columns) == ["cluster"]
    if argv[0] == "covariate":  # one row per covariate
        assert table.index.tolist() == list(load_wine().columns.drop("class"))


def test_parquet_in_and_out_and_html_summary(tmp_path, capsys):
    pq = tmp_path / "wine.parquet"
    load_wine().to_parquet(pq)
    out_labels, html = tmp_path / "labels.parquet", tmp_path / "summary.html"
    argv = ["dpmeans", "--data", str(pq), "--label", "class", "--k", "3", "--scale"]
    assert main([*argv, "--labels-out", str(out_labels), "--summary-out", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"Call: dpmeans(read_parquet({str(pq)!r}), k=3, scale=True, rng=0)" in out
    assert pd.read_parquet(out_labels)["cluster"].notna().all()
    assert html.read_text().startswith("<h4>DP-means: summary</h4>")


def test_parquet_without_pyarrow_says_so(tmp_path, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow":
            raise ImportError("No module named 'pyarrow'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    assert main(["dpmeans", "--data", str(tmp_path / "x.parquet"), "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert "reading Parquet" in err and "needs pyarrow, which is not installed" in err


def test_help_lists_an_example_of_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    examples = [line.split()[3] for line in out.splitlines() if line.startswith("  python -m ")]
    assert examples == list(COMMANDS)
    for name in ("covariate", "dp-rf", "entropy", "hclust-permute"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        assert f"example:\n  python -m sparseclust {name} " in capsys.readouterr().out


def test_messy_csv_is_screened_and_the_options_undo_it(tmp_path, capsys):
    """A CSV with an identifier and numbers exported as text: screened, each decision
    a warning written as command-line options; --no-screen and --lump-min reach the
    method."""
    rng = np.random.default_rng(0)
    n = 120
    seg = rng.integers(0, 2, n)
    df = pd.DataFrame(
        {
            "id": [f"C{i:04d}" for i in range(n)],
            "spend": [
                f"{v:,.2f}" for v in np.array([900.0, 5000.0])[seg] * rng.lognormal(0, 0.1, n)
            ],
            "visits": seg * 5.0 + rng.normal(size=n),
        }
    )
    path = tmp_path / "messy.csv"
    df.to_csv(path, index=False)
    assert main(["dpmeans", "--data", str(path), "--k", "2", "--scale"]) == 0
    err = capsys.readouterr().err
    assert "Columns ['id'] look like identifiers" in err and "--categorical ['id']" in err
    assert "Columns ['spend'] hold numbers stored as text" in err
    assert main(["sparse-kmeans", "--data", str(path), "--k", "2", "--no-screen"]) != 0
    assert "columns ['id', 'spend'] are categorical" in capsys.readouterr().err
    assert main(["sparse-kmeans", "--data", str(path), "--k", "2", "--scale"]) == 0
    assert "Screened out: id (identifier)" in capsys.readouterr().out
