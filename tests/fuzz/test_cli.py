"""irc-fuzz: a budgeted run with progress, failures shrunk and saved to the corpus, and replayed from it."""

from irc.tools.fuzz import frontdoor
from irc.tools.fuzz.cli import main


def test_a_clean_run_reports_progress_and_exits_0(tmp_path, capsys):
    assert main(["--budget", "2", "--property", "front-door", "--corpus", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "irc-fuzz: properties front-door" in err and "examples" in err and "failures 0" in err
    assert not (tmp_path / "failures").exists()
    # the example that ran last stays on disk: a fault that kills the process leaves its program there
    assert (tmp_path / "running.mlir").read_text().startswith("// irc-opt ")


def test_a_failure_is_shrunk_saved_and_replayed(tmp_path, capsys, monkeypatch):
    real = frontdoor.front_door_problem
    monkeypatch.setattr(
        frontdoor,
        "front_door_problem",
        lambda text, flags=(): "pretend irc-opt crashed on tn.sum" if "tn.sum" in text else real(text, flags),
    )
    args = ["--budget", "3", "--property", "front-door", "--corpus", str(tmp_path), "--seed", "3"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert (
        "FAILURE 1 (first seen after" in err and "pretend irc-opt crashed" in err and "irc-fuzz: failure after" in err
    )
    saved = list((tmp_path / "failures").glob("*.mlir"))
    assert saved and "tn.sum" in saved[0].read_text()
    assert any((tmp_path / "examples").rglob("*"))  # Hypothesis' database keeps the shrunk example
    assert main(args) == 1  # the next run replays it first
