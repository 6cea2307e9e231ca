"""support_markers.SupportMarkers (no ROS): frame conversion, closed outline, colours, empty polygon, bad input."""
import math

import numpy as np
import pytest

from atlas_crawl_controller.parameters import load_parameter_file
from atlas_crawl_controller.support_markers import (PARAMETER_FILE, STABLE_RGBA, STANCE_RGBA, SWING_RGBA,
                                                    UNSTABLE_RGBA, SupportInput, SupportMarkerError, SupportMarkers,
                                                    close_polygon, frame_to_world)

NAMES = ("l_wrist_contact", "r_wrist_contact", "l_knee_contact", "r_knee_contact")

# Pelvis at (1, 2, 0.8), yawed +90° about world z, then pitched +60° about its own y:  R = Rz(90°) Ry(60°).
# Quaternion by hand: qz = (0, 0, s45, c45), qy = (0, s30, 0, c30) → q = qz ⊗ qy =
#   w = c45 c30,  xyz = (-s45 s30, c45 s30, s45 c30)  →  xyzw = (-√2/4, √2/4, √6/4, √6/4).
POSE_YAW90_PITCH60 = np.array([1.0, 2.0, 0.8, -math.sqrt(2) / 4, math.sqrt(2) / 4, math.sqrt(6) / 4,
                               math.sqrt(6) / 4])
# Columns of R by hand: pelvis x = Rz90 (c60, 0, -s60) = (0, 0.5, -0.866); pelvis y = Rz90 (0, 1, 0) = (-1, 0, 0);
# pelvis z = Rz90 (s60, 0, c60) = (0, 0.866, 0.5).  Spatial frame (forward = horizontal part of pelvis x):
# x_s = (0, 1, 0), z_s = (0, 0, 1), y_s = z_s × x_s = (-1, 0, 0).
S60 = math.sin(math.radians(60))


def support(frame="world", polygon=None, com=(0.0, 0.0, 0.0), stance=(True, True, True, True), margin=0.05,
            stable=True, contacts=None):
    if contacts is None:
        contacts = [[0.3, 0.2, 0.0], [0.3, -0.2, 0.0], [-0.3, 0.2, 0.0], [-0.3, -0.2, 0.0]]
    if polygon is None:
        polygon = [[0.3, -0.2, 0.0], [0.3, 0.2, 0.0], [-0.3, 0.2, 0.0], [-0.3, -0.2, 0.0]]
    return SupportInput(frame_id=frame, contact_names=NAMES, contact_positions=np.array(contacts, float),
                        in_stance=np.array(stance, bool), polygon=np.array(polygon, float).reshape(-1, 3),
                        com_projection=np.array(com, float), margin_m=margin, statically_stable=stable)


def test_parameter_file_loads_and_documents_units():
    ps = load_parameter_file(PARAMETER_FILE)
    assert {"max_rate_hz", "publish_tf", "marker_scale", "ground_height_m"} <= set(ps.specs)
    for s in ps.specs.values():
        assert s.description
        if s.type == "double":
            assert "[" in s.description, f"{s.name}: state the units"


def test_spatial_frame_point_maps_to_hand_checked_world_point():
    t, R = frame_to_world("spatial", POSE_YAW90_PITCH60)
    np.testing.assert_allclose(t, [1.0, 2.0, 0.8], atol=1e-12)
    # spatial (0.5, 0.2, -0.7) → (1, 2, 0.8) + 0.5 (0,1,0) + 0.2 (-1,0,0) - 0.7 (0,0,1) = (0.8, 2.5, 0.1)
    np.testing.assert_allclose(R @ [0.5, 0.2, -0.7] + t, [0.8, 2.5, 0.1], atol=1e-9)


def test_pelvis_frame_point_maps_to_hand_checked_world_point():
    t, R = frame_to_world("pelvis", POSE_YAW90_PITCH60)
    # pelvis (1, 0, 0) → origin + pelvis x axis = (1, 2, 0.8) + (0, 0.5, -0.866)
    np.testing.assert_allclose(R @ [1.0, 0.0, 0.0] + t, [1.0, 2.5, 0.8 - S60], atol=1e-9)
    # pelvis (0, 0, 1) → origin + pelvis z axis = (1, 2, 0.8) + (0, 0.866, 0.5)
    np.testing.assert_allclose(R @ [0.0, 0.0, 1.0] + t, [1.0, 2.0 + S60, 1.3], atol=1e-9)


def test_geometry_from_spatial_frame():
    sm = SupportMarkers()
    z = sm.params["ground_height_m"] + sm.params["lift_m"]
    g = sm.geometry(support("spatial", contacts=[[0.5, 0.2, -0.7]] * 4, com=(0.5, 0.2, 0.0),
                            polygon=[[0.5, 0.2, 0.0], [0.0, 0.0, 0.0], [0.5, -0.2, 0.0]]), POSE_YAW90_PITCH60)
    assert g.frame_id == "world"
    np.testing.assert_allclose(g.contact_positions, [[0.8, 2.5, 0.1]] * 4, atol=1e-9)   # 3-D, not on the ground
    np.testing.assert_allclose(g.com, [0.8, 2.5, z], atol=1e-9)                         # dropped to the ground
    np.testing.assert_allclose(g.outline, [[0.8, 2.5, z], [1.0, 2.0, z], [1.2, 2.5, z], [0.8, 2.5, z]], atol=1e-9)


def test_world_frame_is_identity_and_outline_closed():
    sm = SupportMarkers()
    s = support("world")
    g = sm.geometry(s, None)                       # world frame needs no pose
    assert g.outline.shape == (5, 3)
    np.testing.assert_allclose(g.outline[0], g.outline[-1])
    np.testing.assert_allclose(g.outline[:4, :2], s.polygon[:, :2])
    np.testing.assert_allclose(g.contact_positions, s.contact_positions)
    g2 = sm.geometry(s, POSE_YAW90_PITCH60)        # a pose does not move world-frame points
    np.testing.assert_allclose(g2.outline, g.outline)


def test_colours_stance_and_text():
    sm = SupportMarkers()
    g = sm.geometry(support(stable=True, margin=0.0423))
    assert g.rgba == STABLE_RGBA and "STABLE" in g.text and "+4.2 cm" in g.text and "4/4 stance" in g.text
    g = sm.geometry(support(stable=False, stance=(True, False, True, True), margin=-0.01))
    assert g.rgba == UNSTABLE_RGBA and "UNSTABLE" in g.text and "-1.0 cm" in g.text and "3/4" in g.text
    assert g.contact_rgba == (STANCE_RGBA, SWING_RGBA, STANCE_RGBA, STANCE_RGBA)
    assert list(g.in_stance) == [True, False, True, True]


def test_empty_polygon_and_no_margin_sentinel():
    sm = SupportMarkers()
    g = sm.geometry(support(polygon=np.zeros((0, 3)), stance=(False,) * 4, margin=-1e9, stable=False))
    assert g.outline.shape == (0, 3)
    assert not g.margin_valid and "margin n/a" in g.text and "0/4" in g.text
    assert close_polygon(np.zeros((0, 3))).shape == (0, 3)
    one = close_polygon(np.array([[1.0, 2.0, 0.0]]))
    assert one.shape == (2, 3)


@pytest.mark.parametrize("field", ["contacts", "polygon", "com", "margin", "pose"])
def test_nan_rejected_with_clear_error(field):
    sm = SupportMarkers()
    kw = {}
    pose = POSE_YAW90_PITCH60.copy()
    if field == "contacts":
        c = np.zeros((4, 3))
        c[2, 1] = np.nan
        kw["contacts"] = c
    elif field == "polygon":
        kw["polygon"] = [[0.0, 0.0, 0.0], [np.nan, 1.0, 0.0], [1.0, 0.0, 0.0]]
    elif field == "com":
        kw["com"] = (np.nan, 0.0, 0.0)
    elif field == "margin":
        kw["margin"] = float("nan")
    else:
        pose[4] = np.nan
    with pytest.raises(SupportMarkerError, match="NaN"):
        sm.geometry(support("spatial", **kw), pose)


@pytest.mark.parametrize("frame,pose,match", [
    ("map", POSE_YAW90_PITCH60, "unsupported frame"),
    ("", POSE_YAW90_PITCH60, "empty"),
    ("spatial", None, "pelvis pose"),
    ("pelvis", [0, 0, 0, 0, 0, 0, 0], "zero norm"),
])
def test_bad_frame_or_pose_rejected(frame, pose, match):
    with pytest.raises(SupportMarkerError, match=match):
        SupportMarkers().geometry(support(frame), pose)


def test_wrong_contact_count_rejected():
    s = support()
    bad = SupportInput(frame_id="world", contact_names=NAMES[:3], contact_positions=s.contact_positions[:3],
                       in_stance=s.in_stance[:3], polygon=s.polygon, com_projection=s.com_projection, margin_m=0.0,
                       statically_stable=False)
    with pytest.raises(SupportMarkerError, match="4 contacts"):
        SupportMarkers().geometry(bad)


def test_set_params_and_scale():
    sm = SupportMarkers()
    ps = load_parameter_file(PARAMETER_FILE)
    assert sm.set_params(ps.values({"marker_scale": 2.0, "ground_height_m": 0.5, "lift_m": 0.0})) is None
    assert sm.scaled("com_diameter_m") == pytest.approx(2 * ps.specs["com_diameter_m"].default)
    assert sm.geometry(support()).com[2] == pytest.approx(0.5)
    reason = sm.set_params(sm.params.replace(marker_scale=-1.0))
    assert reason and "marker_scale" in reason
    assert sm.params["marker_scale"] == 2.0          # nothing changed
