"""Shared progress display for long commands (evaluate, run_sequence, robustness matrices, searches).

    with Progress(total=20, desc="evaluate", unit="trial", quiet=args.quiet) as bar:
        for i in range(20):
            ...
            bar.write(f"trial {i} done")     # a log line that does not break the bar
            bar.update(1, info="crawl_forward seed 3")

Modes: ``"bar"`` = a tqdm bar (runs done/total, remaining, elapsed, ETA) redrawn in place; ``"off"`` = no bar.
:func:`track` wraps a loop over a list (e.g. a robustness matrix's cells). ``mode="auto"`` (default) draws the bar only when the stream is a terminal, so CI logs get no redraws; the
environment variable ``ATLAS_CRAWL_PROGRESS`` = bar/off overrides auto. ``quiet=True`` = no bar and
:meth:`write` prints nothing (the command's final summary is its own business).
:meth:`status` gives "3/10 done, 7 left, ETA 1m05s" for plain log lines.
"""
from __future__ import annotations

import io
import os
import sys
import time

MODES = ("auto", "bar", "off")


def _fmt_s(s: float) -> str:
    if not (s == s) or s < 0:  # NaN
        return "?"
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """Progress over ``total`` runs (see module doc). ``total`` must be a positive number."""

    def __init__(self, total: float, desc: str = "", unit: str = "run", quiet: bool = False, mode: str = "auto",
                 stream=None):
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {MODES}, got {mode!r}")
        if not (total > 0):
            raise ValueError(f"progress total must be > 0, got {total!r}")
        self.total, self.desc, self.unit, self.quiet = total, desc, unit, bool(quiet)
        self.stream = stream if stream is not None else sys.stdout
        env = os.environ.get("ATLAS_CRAWL_PROGRESS", "")
        if mode == "auto" and env in ("bar", "off"):
            mode = env
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            mode = "bar" if (isatty is not None and isatty()) else "off"
        self.mode = "off" if self.quiet else mode
        self.n = 0.0
        self.t0 = time.monotonic()
        self._bar = None
        if self.mode == "bar":
            from tqdm import tqdm
            try:   # a terminal that reports a 0x0 size (some ptys) would get no bar at all: assume 100x30
                size = os.get_terminal_size(self.stream.fileno())
                sized = size.columns > 0 and size.lines > 0
            except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
                sized = True
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream, dynamic_ncols=sized,
                             ncols=None if sized else 100, nrows=None if sized else 30, leave=True,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit}s "
                                        "[{elapsed} elapsed, ETA {remaining}{postfix}]")

    # ------------------------------------------------------------------ figures
    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.t0

    def eta_s(self) -> float:
        """Remaining seconds at the mean rate so far (NaN before the first run is done)."""
        if self.n <= 0:
            return float("nan")
        return self.elapsed_s / self.n * max(self.total - self.n, 0.0)

    def status(self) -> str:
        left = max(self.total - self.n, 0)
        return (f"{self.n:g}/{self.total:g} {self.unit}s done, {left:g} left, elapsed {_fmt_s(self.elapsed_s)}, "
                f"ETA {_fmt_s(self.eta_s())}")

    # ------------------------------------------------------------------ output
    def update(self, n: float = 1, info: str = ""):
        self.n += n
        if self._bar is not None:
            if info:
                self._bar.set_postfix_str(info, refresh=False)
            self._bar.update(n)

    def set_info(self, info: str):
        """Text after the bar (e.g. the run in progress)."""
        if self._bar is not None:
            self._bar.set_postfix_str(info)

    def write(self, msg: str):
        """Print a log line (above the bar when one is drawn); nothing when quiet."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.write(msg, file=self.stream)
        else:
            print(msg, file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def track(items, desc: str = "", unit: str = "run", quiet: bool = False, info=None, stream=None):
    """Iterate over ``items`` (a sized collection) with a :class:`Progress`; ``info(item)`` is shown while an item
    runs. E.g. a robustness matrix: ``for cell in track(cells, "robustness", "cell", info=str): ...``"""
    items = list(items)
    if not items:
        return
    with Progress(len(items), desc=desc, unit=unit, quiet=quiet, stream=stream) as bar:
        for it in items:
            if info is not None:
                bar.set_info(str(info(it)))
            yield it
            bar.update(1)


__all__ = ["Progress", "MODES", "track"]
