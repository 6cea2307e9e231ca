"""The crawl_forward_fast behaviour (dynamic diagonal-pair crawl, Crawl GAIT_DIAGONAL) in the evaluation harness."""

import pytest

from atlas_crawl_eval import metrics, run_trials, thesis_values as tv
from atlas_crawl_eval.evaluate import main


def test_fast_behaviour_maps_to_its_script_and_the_forward_protocol():
    assert run_trials.resolve_script("crawl_forward_fast") == ("crawl_forward_fast", False)
    assert tv.PROTOCOL["crawl_forward_fast"] == tv.PROTOCOL["crawl_forward"] == (10, 10)
    assert tv.thesis_reference("crawl_forward_fast", "part") is tv.FORWARD_PART
    assert "crawl_forward_fast" in metrics.CRAWL_BEHAVIOURS
    # forward targets without the static margin (a two-contact gait has no tripod phase, margins are n/a)
    t = tv.TARGETS["crawl_forward_fast"]
    assert "margin_min_m" not in t and t["velocity_m_s"] == tv.TARGETS["crawl_forward"]["velocity_m_s"]


def test_cli_accepts_the_behaviour():
    # argparse choices come from PROTOCOL: an unknown behaviour exits 2 before any simulation
    with pytest.raises(SystemExit):
        main(["--behaviour", "crawl_forward_faster", "--out", "/tmp/x"])
    with pytest.raises(SystemExit):
        main(["--behaviour", "crawl_forward_fast", "--all", "--out", "/tmp/x"])   # parses, then refuses both


def test_graph_trial_names_the_diagonal_crawl():
    Crawl = pytest.importorskip("atlas_crawl_msgs.action").Crawl
    if not hasattr(Crawl.Goal, "GAIT_DIAGONAL"):
        pytest.fail("atlas_crawl_msgs is stale: colcon build --packages-select atlas_crawl_msgs")
    from atlas_crawl_eval.graph_trial import behaviour_of
    assert behaviour_of("crawl", Crawl.Goal(gait=Crawl.Goal.GAIT_DIAGONAL)) == "crawl_forward_fast"
    assert behaviour_of("crawl", Crawl.Goal()) == "crawl_forward"
    assert behaviour_of("crawl", Crawl.Goal(direction=Crawl.Goal.DIRECTION_BACKWARD)) == "crawl_backward"
