"""One push-recovery trial in physics (the recovery_trials command's loop): a seeded push knocks the crawl over, the
sequencer aborts the Crawl with "fell: ...", and a Recover goal brings the robot back to a crawl stance that holds."""
import pytest

from atlas_crawl_mujoco.recovery_trials import main, trial


def test_one_push_fall_and_recovery():
    r = trial(1)                          # seed 1: 117 N·s push at a crawl phase that tips the robot over
    assert r["fell"] and r["sequencer_abort_fell"], r
    assert r["crawl_status"] == "aborted" and r["crawl_reason"].startswith("fell: ")
    assert r["posture_before"] != "crawl"
    assert r["recover_status"] == "succeeded" and r["recovered"], r
    assert r["stages"] and r["stages"][-1].endswith("init_crawl_stance_from_prone")
    assert 0 < r["time_to_recover_s"] < 240


@pytest.mark.parametrize("argv", [["--trials", "0"], ["--impulse", "100", "50"], ["--lie", "-1"]])
def test_cli_rejects_bad_arguments(argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
