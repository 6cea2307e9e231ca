"""Shared progress display: a bar only on a terminal (or when asked), plain lines otherwise, nothing when quiet."""
import io
import time

import pytest

from atlas_crawl_kinematics.progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_not_a_terminal_no_redraws(monkeypatch):
    monkeypatch.delenv("ATLAS_CRAWL_PROGRESS", raising=False)
    s = io.StringIO()
    with Progress(4, desc="evaluate", stream=s) as p:
        assert p.mode == "off"
        for i in range(4):
            p.write(f"trial {i}")
            p.update(1, info="x")
    out = s.getvalue()
    assert out == "trial 0\ntrial 1\ntrial 2\ntrial 3\n" and "\r" not in out


def test_terminal_draws_bar_with_counts_and_eta(monkeypatch):
    monkeypatch.delenv("ATLAS_CRAWL_PROGRESS", raising=False)
    s = _Tty()
    with Progress(4, desc="evaluate", unit="trial", stream=s) as p:
        assert p.mode == "bar"
        p.update(3, info="turn_left trial 2/5")
        p.write("a log line")
    out = s.getvalue()
    assert "\r" in out and "3/4 trials" in out and "ETA" in out and "turn_left trial 2/5" in out
    assert "a log line" in out


def test_quiet_prints_nothing_even_on_a_terminal():
    s = _Tty()
    with Progress(3, stream=s, quiet=True) as p:
        p.write("hidden")
        p.update(3)
    assert s.getvalue() == "" and p.mode == "off"


def test_environment_override(monkeypatch):
    monkeypatch.setenv("ATLAS_CRAWL_PROGRESS", "off")
    assert Progress(2, stream=_Tty()).mode == "off"
    monkeypatch.setenv("ATLAS_CRAWL_PROGRESS", "bar")
    p = Progress(2, stream=io.StringIO())
    assert p.mode == "bar"
    p.close()


def test_status_eta_from_mean_rate():
    p = Progress(4, unit="run", stream=io.StringIO())
    assert "ETA ?" in p.status()
    p.t0 = time.monotonic() - 10.0
    p.update(2)
    st = p.status()
    assert st.startswith("2/4 runs done, 2 left") and ("ETA 10s" in st or "ETA 11s" in st)


@pytest.mark.parametrize("kw", [dict(total=0), dict(total=-1), dict(total=3, mode="fancy")])
def test_bad_arguments_rejected(kw):
    with pytest.raises(ValueError):
        Progress(**kw)


def test_track_iterates_and_counts():
    from atlas_crawl_kinematics.progress import track
    s = _Tty()
    seen = list(track(["a", "b", "c"], desc="matrix", unit="cell", info=lambda c: f"cell {c}", stream=s))
    assert seen == ["a", "b", "c"]
    out = s.getvalue()
    assert "3/3 cells" in out and "cell c" in out
    assert list(track([], desc="empty")) == []
