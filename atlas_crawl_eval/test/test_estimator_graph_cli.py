"""estimator_graph's command line: node parameter overrides (--set) are parsed or refused before any graph starts."""
import pytest

from atlas_crawl_eval import estimator_graph as eg


def test_set_overrides_are_parsed_as_yaml_per_node():
    assert eg.parse_sets(["gait_sequencer:wait_for_support=false", "gait_sequencer:pipeline_lead_s=0.0",
                          "mujoco_sim:physics.scene=slope:angle_deg=5"]) == {
        "gait_sequencer": {"wait_for_support": False, "pipeline_lead_s": 0.0},
        "mujoco_sim": {"physics.scene": "slope:angle_deg=5"}}
    assert eg.parse_sets([]) == {}


@pytest.mark.parametrize("bad", ["wait_for_support=false", "gait_sequencer:wait_for_support", ":x=1",
                                 "gait_sequencer:=1", "a:b={"])
def test_bad_set_is_refused_with_the_reason_and_exit_2(bad, capsys):
    with pytest.raises(ValueError, match="--set"):
        eg.parse_sets([bad])
    with pytest.raises(SystemExit) as e:
        eg.main(["--set", bad])
    assert e.value.code == 2 and "--set" in capsys.readouterr().err
