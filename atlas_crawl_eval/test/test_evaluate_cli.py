"""The evaluate command: report from existing logs (no simulation), and one real short MuJoCo trial if available."""

import numpy as np
import pytest

from atlas_crawl_eval import evaluate, run_trials, synthetic as syn
from atlas_crawl_eval.trial_log import TrialLog


def test_from_logs_writes_report(tmp_path, capsys):
    for i in range(2):
        syn.straight_crawl(speed_m_s=0.2, n_cycles=2, cycle_s=2.0, rest_s=2.1, meta_seed=i).save(
            tmp_path / "logs" / f"trial_{i:02d}.npz")
    rc = evaluate.main(["--behaviour", "crawl_backward", "--loop", "part", "--from-logs",
                        str(tmp_path / "logs" / "*.npz"), "--out", str(tmp_path / "rep")])
    assert rc == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "crawl_backward (part loop)" in md and "0.4049 ± 0.0250" in md
    assert "| Velocity | m/s | 0.2000 ± 0.0000 (n=2) |" in md
    assert "Velocity" in capsys.readouterr().out


def test_cli_rejects_ambiguous_selection(tmp_path):
    with pytest.raises(SystemExit):
        evaluate.main(["--all", "--behaviour", "turn_left", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        evaluate.main(["--out", str(tmp_path)])


def _backend_ready():
    try:
        run_trials.resolve_script("crawl_forward")
        return True
    except run_trials.BackendUnavailable:
        return False


@pytest.mark.skipif(not _backend_ready(), reason="atlas_crawl_mujoco / crawl_forward script not available")
def test_real_trial_log_contract(tmp_path):
    cfg = run_trials.TrialConfig("crawl_forward", "full", cycles=1, seed=3, settle_before_s=2.1,
                                 settle_after_s=2.1)
    log = run_trials.run_trial(cfg, tmp_path / "t.npz")
    assert isinstance(log, TrialLog) and log.meta_seed == 3
    assert log.dt_s == pytest.approx(0.01, abs=1e-6)
    ci = log.cycle_index
    assert ci[0] == -1 and np.sum(ci[:220] == -1) >= 200  # logged rest before the gait
    assert np.any(ci == 0)
    if not log.meta_fell:
        assert ci[-1] == -1 and np.sum(ci[-220:] == -1) >= 200  # and after it
    assert np.all(log.planned_stance[: np.flatnonzero(ci == 0)[0]])  # four-point rest before the gait
