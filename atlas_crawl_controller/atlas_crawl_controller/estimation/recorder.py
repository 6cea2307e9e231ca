"""What a hosted estimator was fed, recorded for an offline replay (a debugging aid of the ros2_control bridge:
``estimator_record_path``). One row per control update; the file is rewritten every ``flush_period_s`` of host time
on a thread of its own (the update never writes files), and at :meth:`close`.

Columns (:data:`RECORD_COLUMNS`): ``t`` [s], ``q`` (28) [rad], ``qd`` (28) [rad/s], ``stance`` (4) the expected
stance fed, ``imu`` (6) gyro [rad/s] and specific force [m/s²] in the pelvis frame, ``pose_in`` (7) the pose the host
received (the simulator's ground truth; NaN until one arrived), ``estimate`` (7) the estimator's pose after the
update (NaN while there is none). Poses are [x y z qx qy qz qw]. ``meta``: a JSON object of the host's settings
(e.g. the estimator overrides), so a replay starts from the same parameters."""
from __future__ import annotations

import json
import os
import threading
from typing import Optional

import numpy as np

__all__ = ["InputRecorder", "RECORD_COLUMNS", "load_record"]

RECORD_COLUMNS = (("t", 1), ("q", 28), ("qd", 28), ("stance", 4), ("imu", 6), ("pose_in", 7), ("estimate", 7))
_WIDTH = sum(n for _k, n in RECORD_COLUMNS)
_CHUNK = 2500


class InputRecorder:
    """Rows of :data:`RECORD_COLUMNS` → ``path`` (.npz, one array per column). ``max_rows`` bounds the memory (then
    recording stops, and the file says so in ``truncated``). Raises ValueError for an unusable path (nothing
    recorded)."""

    def __init__(self, path: str, flush_period_s: float = 10.0, max_rows: int = 300_000, meta=None):
        path = os.path.abspath(os.path.expanduser(str(path)))
        if not path.endswith(".npz"):
            raise ValueError(f"record path must end in .npz, got {path!r}")
        d = os.path.dirname(path)
        if not os.path.isdir(d) or not os.access(d, os.W_OK):
            raise ValueError(f"record path's folder {d!r} does not exist or is not writable")
        if not (flush_period_s > 0 and max_rows > 0):
            raise ValueError("flush_period_s and max_rows must be > 0")
        self.path, self.flush_period_s, self.max_rows = path, float(flush_period_s), int(max_rows)
        self._chunks = [np.full((_CHUNK, _WIDTH), np.nan)]
        self._n = 0
        self._last_flush: Optional[float] = None
        self._lock = threading.Lock()
        self._writer: Optional[threading.Thread] = None
        self.truncated = False
        self.errors = 0
        self.meta = json.dumps(meta or {})          # raises TypeError for what JSON cannot hold

    @property
    def rows(self) -> int:
        return self._n

    def append(self, t: float, q, qd, stance, imu, pose_in, estimate) -> None:
        """One update's row (cheap: copies into a preallocated chunk); every ``flush_period_s`` of ``t`` the file is
        rewritten in the background."""
        if self._n >= self.max_rows:
            self.truncated = True
            return
        i = self._n % _CHUNK
        if i == 0 and self._n > 0:
            self._chunks.append(np.full((_CHUNK, _WIDTH), np.nan))
        row = self._chunks[-1][i]
        row[0] = t
        j = 1
        for v, n in ((q, 28), (qd, 28), (stance, 4), (imu, 6), (pose_in, 7), (estimate, 7)):
            row[j:j + n] = np.asarray(v, float).reshape(n)
            j += n
        self._n += 1
        if self._last_flush is None:
            self._last_flush = t
        elif t - self._last_flush >= self.flush_period_s:
            self._last_flush = t
            self._flush_async()

    def _write(self, chunks: list, n: int, truncated: bool) -> None:
        """Rows [0, n) of ``chunks`` → the file. Filled chunks never change and rows below ``n`` of the last one are
        complete, so this runs beside :meth:`append` (the copy happens here, not in the update)."""
        a = np.concatenate(chunks)[:n] if n else np.zeros((0, _WIDTH))
        out, j = {}, 0
        for k, w in RECORD_COLUMNS:
            out[k] = a[:, j] if w == 1 else a[:, j:j + w]
            j += w
        out["truncated"] = np.array(truncated)
        out["meta"] = np.array(self.meta)
        tmp = self.path[:-4] + ".part.npz"
        try:
            with self._lock:
                np.savez(tmp, **out)
                os.replace(tmp, self.path)
        except OSError:
            self.errors += 1

    def _flush_async(self) -> None:
        if self._writer is not None and self._writer.is_alive():
            return                       # the previous write is still going: the next flush catches up
        self._writer = threading.Thread(target=self._write, args=(list(self._chunks), self._n, self.truncated),
                                        name="estimator_record", daemon=True)
        self._writer.start()

    def close(self) -> None:
        """Write everything recorded so far (blocking)."""
        if self._writer is not None:
            self._writer.join()
        self._write(list(self._chunks), self._n, self.truncated)


def load_record(path: str) -> dict:
    """A recorded file as {column: array}; raises ValueError naming what is missing or malformed."""
    with np.load(path) as z:
        out = {k: z[k] for k in z.files}
    for k, n in RECORD_COLUMNS:
        if k not in out:
            raise ValueError(f"{path}: no column {k!r}")
        a = out[k]
        if (n == 1 and a.ndim != 1) or (n > 1 and (a.ndim != 2 or a.shape[1] != n)):
            raise ValueError(f"{path}: column {k!r} has shape {a.shape}, expected (rows, {n})")
    out["meta"] = json.loads(str(out["meta"])) if "meta" in out else {}
    return out
