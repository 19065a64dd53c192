"""Bad input to `erahbo dataset ...`, `erahbo benchmark` and `erahbo report` ends in one clear
message naming the file or option and the fix: no traceback, no message that blames another
thing (issue 13's rule, for the data commands)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from erahbo.cli import app

runner = CliRunner()

GOOD = "x,seed_1,seed_2,seed_3\n" + "".join(
    f"{x / 10},{x % 3},{x % 4},{(x * 7) % 5}\n" for x in range(1, 7))
FILES = {
    "good.csv": GOOD.encode(),
    "empty.csv": b"",
    "bin.csv": b"\x00\x01\xff\xfe",
    "fake.parquet": b"not parquet",
    "empty.parquet": b"",
    "norows.csv": b"x,seed_1,seed_2\n",
    "semi.csv": b"x;seed_1;seed_2\n0.1;1;1\n0.2;2;3\n",
    "wrongcols.csv": b"x,y\n1,2\n3,4\n",
    "afile": b"a file, not a folder\n",
    "results/traces/t/m/rep-000.parquet": b"junk",
}
BENCH = ["--repetitions", "1", "--budget", "5", "--methods", "rahbo-k2", "--k-init", "2",
         "--out", "b", "--no-report"]
GEN = ["dataset", "generate", "--task", "ppo_cc_cartpole", "--configs", "2", "--seeds", "2",
       "--out", "gen"]

# (command line, fragments the message must hold); every file is relative to the test folder
CASES = [
    (["dataset", "inspect", "empty.csv"], ["task file empty.csv is an empty file (0 bytes)"]),
    (["dataset", "inspect", "bin.csv"], ["task file bin.csv is not a text CSV file"]),
    (["dataset", "inspect", "fake.parquet"],
     ["task file fake.parquet is not a Parquet file (Parquet magic bytes"]),
    (["dataset", "inspect", "empty.parquet"], ["task file empty.parquet is an empty file"]),
    (["dataset", "inspect", "norows.csv"], ["norows.csv: no configurations (the table has no "
                                            "data rows)"]),
    (["dataset", "inspect", "semi.csv"], ["separates its fields with ';'; save it "
                                          "comma-separated"]),
    (["dataset", "inspect", "missing.csv"], ["missing.csv: no such file or directory"]),
    (["dataset", "inspect", "good.csv", "--alpha", "-1"], ["alpha=-1.0 is negative"]),
    (["dataset", "inspect", "good.csv", "--format", "xyz"], ["format 'xyz' is unknown"]),
    (["dataset", "inspect", "good.csv", "--plot-dir", "afile"], ["--plot-dir afile is an "
                                                                 "existing file"]),
    (["benchmark", "empty.csv", *BENCH], ["task file empty.csv is an empty file"]),
    (["benchmark", "fake.parquet", *BENCH], ["task file fake.parquet is not a Parquet file"]),
    (["benchmark", "wrongcols.csv", *BENCH],
     ["wrongcols.csv: cannot tell which columns hold the per-seed returns"]),
    (["benchmark", "good.csv", *BENCH, "--n-init", "0"], ["'--n-init'", "greater than or equal "
                                                          "to 1"]),
    (["benchmark", "good.csv", *BENCH, "--return-columns", "zz"],
     ["good.csv: missing return column(s) ['zz']"]),
    (["benchmark", "good.csv", *BENCH, "--budget", "0"], ["budget=0 must be an int >= 1"]),
    (["benchmark", "good.csv", *BENCH, "--alpha", "-1"], ["alpha=-1.0 is negative"]),
    (["benchmark", "good.csv", *BENCH, "--methods", "foo"], ["unknown method 'foo'"]),
    (["benchmark", "good.csv", *BENCH, "--out", "afile"], ["--out afile is an existing file"]),
    (["report", "results", "--out", "afile"], ["--out afile is an existing file"]),
    (["report", "results", "--bootstrap-backend", "foo"],
     ["--bootstrap-backend 'foo': use one of auto, rliable, numpy"]),
    (["report", "results"], ["rep-000.parquet: not a readable Parquet file",
                             "delete it and run the same `erahbo benchmark` command again"]),
    (["report", "missing"], ["results_dir missing: not a directory"]),
    (["dataset", "synth", "--out", "afile", "--tasks", "1"], ["--out afile is an existing file"]),
    (["dataset", "status", "--out", "missing"],
     ["no generation plan under --out missing: the folder does not exist"]),
    (["dataset", "status", "--out", "afile"],
     ["no generation plan under --out afile: it is a file, not the --out folder"]),
    (["dataset", "merge-shards", "--task", "foo", "--out", "results"],
     ["--task foo: no generation of it under results/shards"]),
    ([*GEN, "--budget", "0"], ["--budget 0: training timesteps must be >= 1"]),
    ([*GEN, "--workers", "0"], ["--workers 0: use 1 or more"]),
    ([*GEN, "--run-timeout", "0"], ["--run-timeout 0: seconds one run may take, > 0"]),
    ([*GEN[:-1], "afile"], ["--out afile is an existing file"]),
]


@pytest.mark.parametrize(("args", "fragments"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_data_input_gives_one_clear_message(args, fragments, tmp_path, monkeypatch):
    for name, content in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args, env={"COLUMNS": "250"})
    assert res.exit_code not in (0, None), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    text = " ".join(res.output.replace("│", " ").split())
    assert "Traceback" not in text
    for fragment in fragments:
        assert fragment in text, text
    named = [a for a in args if a.endswith((".csv", ".parquet"))]
    for name in named:  # the file is named once, not once per layer
        assert text.count(f"{name}:") <= 1, text
