"""The Crawl gait selector (GAIT_STATIC / GAIT_DIAGONAL) and the dynamic diagonal-pair script crawl_forward_fast:
script flag, goal validation/mapping, and the sequencer's lift gating for dynamic scripts (plain classes, no ROS)."""
from types import SimpleNamespace

import numpy as np
import pytest

from atlas_crawl_controller.gait_sequencer import (CRAWL_GAITS, GaitSequencer, compose_scripts, parameter_set,
                                                   validate_crawl)
from atlas_crawl_controller.parameters import ParamValues
from atlas_crawl_controller.keyframes import KeyframeScriptError, list_gaits, load_script, parse_script


def crawl_goal(**kw):
    g = dict(cycles=2, distance_m=0.0, direction=0, loop_mode=0, method=0, speed_scale=1.0, gait=0)
    g.update(kw)
    return SimpleNamespace(**g)


# ------------------------------------------------------------------------------------------------ script flag
def test_fast_script_loads_and_is_flagged_dynamic():
    s = load_script("crawl_forward_fast")
    assert s.name == "crawl_forward_fast" and "crawl_forward_fast" in list_gaits()
    assert s.static_stability is False and s.dynamic
    # its swings are diagonal pairs: some key-frames have exactly two planned contacts, never three
    counts = [int(k.stance_mask().sum()) for k in s.keyframes]
    assert 2 in counts and 3 not in counts
    pairs = {k.stance for k in s.keyframes if len(k.stance) == 2}
    assert pairs == {("RW", "LK"), ("LW", "RK")}
    # first key-frame = the crawl stance (everything chained to the stance is unchanged)
    np.testing.assert_allclose(s.keyframes[0].q, load_script("crawl_stance").keyframes[0].q, atol=1e-9)
    # derived copies keep the flag
    assert s.mirrored().dynamic and s.reversed().dynamic


def test_static_scripts_default_to_static_stability():
    for n in ("crawl_forward", "crawl_backward", "turn_left", "turn_right"):
        assert load_script(n).static_stability is True, n
    # a composed expression is dynamic if any part is
    comp = compose_scripts("crawl_stance+crawl_forward_fast", load_script)
    assert comp.static_stability is False
    assert compose_scripts("crawl_stance+crawl_forward", load_script).static_stability is True


def test_static_stability_must_be_boolean():
    raw = {"name": "x", "static_stability": "no", "keyframes": [{"duration_s": 0.5}]}
    with pytest.raises(KeyframeScriptError, match="static_stability"):
        parse_script(raw)
    raw["static_stability"] = False
    assert parse_script(raw).dynamic


# ------------------------------------------------------------------------------------------------ validation
def test_gait_and_direction_map_to_scripts():
    p = parameter_set().values()
    assert p["gaits.crawl_forward_diagonal"] == "crawl_forward_fast"
    g, why = validate_crawl(crawl_goal(gait=1), p)
    assert why == "" and g.script == "crawl_forward_fast" and g.gait == "diagonal" and g.direction == 1
    g, why = validate_crawl(crawl_goal(gait=0), p)
    assert why == "" and g.script == "crawl_forward" and g.gait == "static"
    g, why = validate_crawl(crawl_goal(gait=0, direction=1), p)
    assert why == "" and g.script == "crawl_backward"
    # the mapping is the parameter, not a constant
    p2 = ParamValues({**p.as_dict(), "gaits.crawl_forward_diagonal": "some_other_script"})
    g, _ = validate_crawl(crawl_goal(gait=1), p2)
    assert g.script == "some_other_script"
    # a goal object without the field (older plain-class callers) is the message default, GAIT_STATIC
    legacy = SimpleNamespace(cycles=1, distance_m=0.0, direction=0, loop_mode=0, method=0, speed_scale=1.0)
    assert validate_crawl(legacy, p)[0].script == "crawl_forward"


def test_backward_diagonal_and_unknown_gait_are_rejected_with_reasons():
    p = parameter_set().values()
    g, why = validate_crawl(crawl_goal(gait=1, direction=1), p)
    assert g is None and "backward" in why and "GAIT_DIAGONAL" in why
    g, why = validate_crawl(crawl_goal(gait=7), p)
    assert g is None and "unknown gait 7" in why and "1=diagonal" in why
    assert CRAWL_GAITS == {0: "static", 1: "diagonal"}


@pytest.mark.parametrize("direction", [0, 1])
def test_cartesian_diagonal_goal_is_the_generators_diagonal_pairs_when_enabled(direction):
    """GAIT_DIAGONAL with a Cartesian method (forward or backward) plans the gait generator's diagonal pairs, with
    the experimental generator.diagonal_enabled; else it is rejected with the reason."""
    off = parameter_set().values()
    g, why = validate_crawl(crawl_goal(gait=1, method=1, direction=direction), off, iik_available=True)
    assert g is None and "experimental" in why and "generator.diagonal_enabled" in why
    on = parameter_set().values({"generator.diagonal_enabled": True})
    g, why = validate_crawl(crawl_goal(gait=1, method=1, direction=direction), on, iik_available=True)
    assert why == "" and g.gait == "diagonal" and g.method == "iik" and g.direction == (1, -1)[direction]


def test_gait_constants_match_the_message():
    Crawl = pytest.importorskip("atlas_crawl_msgs.action").Crawl
    if not hasattr(Crawl.Goal, "GAIT_DIAGONAL"):
        pytest.fail("atlas_crawl_msgs is stale: colcon build --packages-select atlas_crawl_msgs")
    assert Crawl.Goal.GAIT_STATIC == 0 and Crawl.Goal.GAIT_DIAGONAL == 1 and Crawl.Goal().gait == 0


# ------------------------------------------------------------------------------------------------ lift gating
def _run_phases(script, support, max_ticks=400):
    """Drive the sequencer with a controller that reaches every key-frame at once; returns the feedback phases and
    the outcome (support state fixed)."""
    # a fixed pelvis pose: the crawl progress check (test_gait_sequencer) is off here
    p = parameter_set().values({"success.min_crawl_progress_m_per_cycle": 0.0})
    seq = GaitSequencer(p)
    g, why = validate_crawl(crawl_goal(cycles=1, gait=1 if script == "crawl_forward_fast" else 0), p)
    assert why == ""
    assert g.script == script
    pose = np.array([0, 0, 0.54, 0.01755, 0.61587, 0.01222, 0.78756])   # crawl stance (not fallen)
    seq.start(g, 0.0, pose)
    t, sid, phases = 0.0, None, []
    for _ in range(max_ticks):
        st = None if sid is None else SimpleNamespace(sequence_id=sid, accepted=True, reached=True, reason="")
        out = seq.tick(t, st, support, pose)
        if out.reference is not None:
            sid = out.reference.sequence_id
        if out.feedback:
            phases.append(out.feedback["phase"])
        if out.outcome:
            return phases, out.outcome
        t += 0.01
    raise AssertionError("no outcome")


def two_contacts(ic=(False, True, True, False)):
    # what the support state shows during a diagonal swing: two contacts, no polygon (NaN margin)
    return SimpleNamespace(in_contact=np.array(ic), stability_margin_m=float("nan"), statically_stable=False,
                           age_s=0.0)


def test_dynamic_gait_does_not_wait_for_a_support_polygon():
    phases, out = _run_phases("crawl_forward_fast", two_contacts())
    assert out.status == "succeeded" and out.support_violations == 0
    assert not any(ph.startswith("waiting_support") for ph in phases)


def test_static_gait_still_waits_for_the_polygon():
    # the same support state makes the tripod crawl wait (and count violations): the gating is per script
    phases, out = _run_phases("crawl_forward", two_contacts(), max_ticks=3000)
    assert any(ph.startswith("waiting_support") for ph in phases)
    assert out.support_violations > 0


def test_dynamic_gait_waits_when_all_contacts_are_lost():
    phases, out = _run_phases("crawl_forward_fast", two_contacts((False, False, False, False)), max_ticks=3000)
    assert any(ph.startswith("waiting_support") for ph in phases)
    assert out.support_violations > 0 and "without a confirmed support state" not in out.reason  # succeeded
