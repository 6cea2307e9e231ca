"""ControllerReference <-> core Reference round trip (nodes/conversions.py), every field including the
Cartesian shape fields swing_lift_m, com_support, heading_rad and drift_correction_max_m."""
import numpy as np

from atlas_crawl_controller.controller_core import Mode, Reference
from atlas_crawl_controller.nodes.conversions import reference_from_msg, reference_to_msg


def test_cartesian_reference_round_trip_keeps_every_field():
    tg = np.arange(12, dtype=float).reshape(4, 3) / 10.0
    r = Reference(mode=Mode.CARTESIAN, sequence_id=7, duration_s=0.25, contact_targets=tg,
                  stance=[False, True, True, False], com_modulation=True, sender="gait_sequencer", queue=True,
                  swing_lift_m=[0.05, 0.0, 0.0, 0.03], com_support=[False, True, True, False], heading_rad=-2.5,
                  drift_correction_max_m=0.005)
    back = reference_from_msg(reference_to_msg(r))
    assert back.mode == Mode.CARTESIAN and back.sequence_id == 7 and back.duration_s == 0.25
    assert np.allclose(back.contact_targets, tg) and list(back.stance) == [False, True, True, False]
    assert back.com_modulation and back.queue and back.sender == "gait_sequencer"
    assert np.allclose(back.swing_lift_m, [0.05, 0.0, 0.0, 0.03])
    assert list(back.com_support) == [False, True, True, False]
    assert back.heading_rad == -2.5 and back.drift_correction_max_m == 0.005


def test_defaults_mean_straight_moves_and_the_stance_support():
    back = reference_from_msg(reference_to_msg(Reference(mode=Mode.HOLD)))
    assert np.allclose(back.swing_lift_m, 0.0) and not any(back.com_support)
    assert back.heading_rad is None and len(reference_to_msg(Reference(mode=Mode.HOLD)).heading_rad) == 0
    assert back.drift_correction_max_m is None
    assert len(reference_to_msg(Reference(mode=Mode.HOLD)).drift_correction_max_m) == 0
