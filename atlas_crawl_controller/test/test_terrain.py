"""The gait generator on a height map (gait_generator/terrain.py, issue 13 §2): footholds, swing clearance, tilt,
blind fallback with a reason."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from atlas_crawl_controller.gait_generator import CrawlCommand, CrawlGaitGenerator, parameter_set
from atlas_crawl_controller.gait_generator.terrain import Terrain
from atlas_crawl_controller.height_map import HeightMap

C0 = np.array([[0.66, 0.22, 0.0], [0.66, -0.22, 0.0], [0.0, 0.26, 0.035], [0.0, -0.26, 0.035]])
COM0 = np.array([0.35, 0.0])
RES = 0.02


def grid_map(f, stamp=0.0, lo=(-1.0, -1.0), n=150):
    """HeightMap sampling z = f(X, Y) on an n x n grid from ``lo``."""
    xs = lo[0] + RES * np.arange(n)
    ys = lo[1] + RES * np.arange(n)
    X, Y = np.meshgrid(xs, ys)
    return HeightMap.from_fields(stamp, RES, n, n, lo[0], lo[1], np.asarray(f(X, Y), float).ravel())


def params(**kw):
    return parameter_set().values({f"terrain.{k}": v for k, v in kw.items()})


def step_up(x0=0.8, h=0.1):
    return lambda X, Y: np.where(X >= x0, h, 0.0)


def gen(hm=None, cycles=3, vx=0.035, now=0.0, **p):
    g = CrawlGaitGenerator(C0, COM0, 0.0, CrawlCommand(vx, 0, 0), cycles, {f"terrain.{k}": v for k, v in p.items()})
    why = g.use_map(hm, now) if hm is not None else None
    return g, why


def test_flat_map_changes_nothing_but_carries_no_tilt():
    blind, _ = gen()
    g, why = gen(grid_map(lambda X, Y: 0 * X))
    assert why == ""
    for k in range(g.n_steps + 1):
        assert np.allclose(g.contacts[k], blind.contacts[k], atol=1e-12)
    assert np.array_equal(g.lift, blind.lift)
    assert np.allclose(g.sample(3.0).extra["tilt_R"], np.eye(3))


def test_landing_heights_follow_the_ground_with_the_start_offsets():
    c0 = C0.copy()
    c0[:, 2] += 0.1 * c0[:, 0]            # standing on a 5.7 deg slope: wrists 0, knees 0.035 m above the ground
    g = CrawlGaitGenerator(c0, COM0, 0.0, CrawlCommand(0.035, 0, 0), 2)
    assert g.use_map(grid_map(lambda X, Y: 0.1 * X), 0.0) == ""
    moved = 0
    for k in range(1, g.n_steps + 1):
        for i, c in enumerate(g.contacts[k]):
            if not np.allclose(c, c0[i]):
                moved += 1
                assert c[2] == pytest.approx(0.1 * c[0] + (0.035 if i >= 2 else 0.0), abs=1e-9)
    assert moved > 0


def test_no_foothold_on_an_edge_and_onto_the_platform():
    t = Terrain(grid_map(step_up(0.8)), parameter_set().values({}))
    for limb, r in ((0, 0.05), (2, 0.10)):
        for x in np.arange(0.6, 1.0, 0.01):
            xy, z = t.foothold([x, 0.0], limb)
            assert abs(xy[0] - 0.8) >= r - RES - 1e-9, (limb, x, xy)     # the patch is sampled on the grid
            assert z == pytest.approx(0.1 if xy[0] >= 0.8 else 0.0, abs=1e-9)
            assert np.linalg.norm(xy - [x, 0.0]) <= t.search_radius_m + 1e-9


def test_swing_clears_a_step_and_not_more_on_flat():
    t = Terrain(grid_map(step_up(0.8)), parameter_set().values({}))
    # a wrist from the floor at 0.6 to the platform at 1.0: the nominal 0.08 m arc would hit the edge
    extra = t.extra_lift([0.6, 0, 0.0], [1.0, 0, 0.1], 0.0, 0.08)
    assert extra > 0
    a = 0.08 + extra
    from atlas_crawl_kinematics.cartesian_gait import swing_arc
    for tau in np.linspace(0, 1, 201):
        p = swing_arc(np.array([0.6, 0, 0.0]), np.array([1.0, 0, 0.1]), a, tau)
        ground = 0.1 if p[0] >= 0.8 else 0.0
        assert p[2] >= ground - 1e-9, (tau, p)
    flat = Terrain(grid_map(lambda X, Y: 0 * X), parameter_set().values({}))
    assert flat.extra_lift([0.0, 0, 0.0], [0.2, 0, 0.0], 0.0, 0.08) == 0.0     # clearance 0.04 < lift 0.08


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.25, 0.25), st.floats(-0.25, 0.25))
def test_normal_of_a_plane(a, b):
    t = Terrain(grid_map(lambda X, Y: a * X + b * Y), params(max_tilt_deg=45.0))
    n = t.normal(C0[:, :2])
    assert np.allclose(n, np.array([-a, -b, 1.0]) / math.sqrt(a * a + b * b + 1), atol=1e-9)


def test_tilt_is_clamped():
    t = Terrain(grid_map(lambda X, Y: 0.5 * X), params(max_tilt_deg=10.0))
    assert math.degrees(math.acos(t.normal(C0[:, :2])[2])) == pytest.approx(10.0)


@pytest.mark.parametrize("hm,now,needle", [
    (None, 0.0, "no height map"),
    (grid_map(lambda X, Y: 0 * X, stamp=0.0), 5.0, "stale"),
    (grid_map(lambda X, Y: 0 * X, stamp=1.0), 0.0, "stale"),        # stamped in the future
    (grid_map(lambda X, Y: 0 * X), float("nan"), "stale"),
])
def test_missing_or_stale_map_is_blind_with_a_reason(hm, now, needle):
    blind, _ = gen()
    g = CrawlGaitGenerator(C0, COM0, 0.0, CrawlCommand(0.035, 0, 0), 3)
    why = g.use_map(hm, now)
    assert needle in why and why.startswith("blind") and g.terrain_reason == why and g.terrain is None
    for k in range(g.n_steps + 1):
        assert np.allclose(g.contacts[k], blind.contacts[k])


def test_disabled_terrain_is_blind():
    g, why = gen(grid_map(step_up(0.7)), enabled=False)
    assert "terrain.enabled is false" in why and g.lift[0][0] == pytest.approx(0.08)


def test_a_map_going_stale_keeps_the_placed_heights_and_plans_blind_after():
    hm = grid_map(lambda X, Y: 0.1 * X)
    g, _ = gen(hm, cycles=3)
    g.observed = 3
    z_before = g.contacts[4][:, 2].copy()
    why = g.use_map(hm, 10.0)
    assert why.startswith("blind")
    assert np.allclose(g.contacts[4][:, 2], z_before)              # as placed before
    assert np.allclose(g.contacts[8][:, 2], g.contacts[4][:, 2])   # later steps keep the heights they stand on


def test_a_contact_rests_on_the_highest_ground_under_it():
    t = Terrain(grid_map(step_up(0.8)), params(contact_radius_m=0.03))
    assert t.height([0.775, 0.0]) == pytest.approx(0.1)         # the platform 2.5 cm ahead is under the knee
    assert t.height([0.70, 0.0]) == pytest.approx(0.0)
    assert math.isnan(t.height([5.0, 0.0]))                       # off the map


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_speed_scales_down_on_a_slope_along_the_travel_only(sign):
    """Up or down a 10 deg slope the command is scaled to slowest_speed_scale; across it, and on the flat, not."""
    kw = dict(slow_from_slope_deg=3.0, slowest_slope_deg=10.0, slowest_speed_scale=0.33)
    t10 = math.tan(math.radians(10.0))
    along, _ = gen(grid_map(lambda X, Y: sign * t10 * X), **kw)
    across, _ = gen(grid_map(lambda X, Y: t10 * Y), **kw)
    flat, _ = gen(grid_map(lambda X, Y: 0 * X), **kw)
    assert np.allclose(along.speed_scale[1:6], 0.33, atol=0.02)
    assert np.allclose(across.speed_scale, 1.0) and np.allclose(flat.speed_scale, 1.0)
    d = lambda g: g.ref[6][0][0] - g.ref[1][0][0]     # noqa: E731 - reference advance over 5 steps
    assert d(along) == pytest.approx(0.33 * d(flat), rel=0.06)
    ter = Terrain(grid_map(lambda X, Y: 0 * X), params(**kw))
    n6 = np.array([math.sin(math.radians(6.5)), 0.0, math.cos(math.radians(6.5))])
    assert ter.speed_scale(n6, 0.0) == pytest.approx(1.0 + 0.5 * (0.33 - 1.0), abs=1e-6)   # halfway: linear
    assert ter.speed_scale(None, 0.0) == 1.0
    blind, _ = gen(**kw)
    assert np.allclose(blind.speed_scale, 1.0)          # blind: no slope known, the command as given


def test_default_static_crawl_keeps_its_speed_on_slopes():
    g, _ = gen(grid_map(lambda X, Y: math.tan(math.radians(10.0)) * X))
    assert np.allclose(g.speed_scale, 1.0)


def test_speed_scales_down_before_a_step_ahead_but_not_on_a_plain_slope():
    """A 10 cm step 0.3 m ahead of the hands is met at slowest_speed_scale (the dynamic crawl fell there at full
    speed); a 10 deg slope leaves the contact plane by nothing, the flat floor too; behind the robot (travelling
    backward, away from it) the step is not ahead; the check off (1.0) never scales."""
    kw = dict(slow_from_step_m=0.04, slowest_step_m=0.07, slowest_speed_scale=0.33, lookahead_m=0.4)
    ter = Terrain(grid_map(step_up(x0=0.96)), params(**kw))
    assert ter.step_ahead_m(C0[:, :2], 0.0) == pytest.approx(0.1, abs=1e-9)
    assert ter.step_scale(C0[:, :2], 0.0) == pytest.approx(0.33)
    assert ter.step_scale(C0[:, :2], math.pi) == 1.0              # backward: the corridor runs the other way
    slope = Terrain(grid_map(lambda X, Y: math.tan(math.radians(10.0)) * X), params(**kw))
    assert slope.step_ahead_m(C0[:, :2], 0.0) == pytest.approx(0.0, abs=1e-9)
    assert slope.step_scale(C0[:, :2], 0.0) == 1.0
    half = Terrain(grid_map(step_up(x0=0.96, h=0.055)), params(**kw))
    assert half.step_scale(C0[:, :2], 0.0) == pytest.approx(1.0 + 0.5 * (0.33 - 1.0), abs=1e-6)   # linear
    off = Terrain(grid_map(step_up(x0=0.96)), params(slow_from_step_m=1.0))
    assert off.step_scale(C0[:, :2], 0.0) == 1.0
    g, _ = gen(grid_map(step_up(x0=0.96)), **kw)
    flat, _ = gen(grid_map(lambda X, Y: 0 * X), **kw)
    assert g.speed_scale[0] == pytest.approx(0.33) and np.allclose(flat.speed_scale, 1.0)


def test_across_slope_weight_counts_a_side_slope_in_the_slope_rule():
    """A 10 deg side slope is not slowed for with the default weight 0; with 1 the whole tilt counts (10 deg: the
    slowest scale); the slope along the travel counts the same either way."""
    kw = dict(slow_from_slope_deg=3.0, slowest_slope_deg=10.0, slowest_speed_scale=0.33)
    side = np.array([0.0, math.sin(math.radians(10.0)), math.cos(math.radians(10.0))])
    along = np.array([math.sin(math.radians(10.0)), 0.0, math.cos(math.radians(10.0))])
    flat_map = grid_map(lambda X, Y: 0 * X)
    t0, t1 = Terrain(flat_map, params(**kw)), Terrain(flat_map, params(across_slope_weight=1.0, **kw))
    assert t0.speed_scale(side, 0.0) == 1.0
    assert t1.speed_scale(side, 0.0) == pytest.approx(0.33)
    assert t0.speed_scale(along, 0.0) == pytest.approx(0.33) and t1.speed_scale(along, 0.0) == pytest.approx(0.33)
    half = Terrain(flat_map, params(across_slope_weight=0.5, **kw)).speed_scale(side, 0.0)
    assert 0.33 < half < 1.0


def test_the_slope_scale_slows_a_turn_and_keeps_an_arc_s_radius():
    """The whole command is scaled: a turn on the spot yaws slower on a 10 deg slope (across_slope_weight 1: the
    ground's whole tilt counts, whichever way the pattern faces), and an arc keeps its radius (distance per yaw)."""
    kw = {"terrain.slow_from_slope_deg": 3.0, "terrain.slowest_slope_deg": 10.0, "terrain.slowest_speed_scale": 0.5,
          "terrain.across_slope_weight": 1.0}
    t10 = math.tan(math.radians(10.0))

    def run(hm, cmd):
        g = CrawlGaitGenerator(C0, COM0, 0.0, cmd, 3, kw)
        g.use_map(hm, 0.0)
        (r1, th1), (r6, th6) = g.ref[1], g.ref[6]
        return float(np.linalg.norm(np.asarray(r6) - r1)), th6 - th1, g

    flat = grid_map(lambda X, Y: 0 * X)
    for slope in (grid_map(lambda X, Y: t10 * X), grid_map(lambda X, Y: t10 * Y)):   # rising ahead, across
        _, yaw_s, g = run(slope, CrawlCommand(0.0, 0.0, 0.1))
        _, yaw_f, _ = run(flat, CrawlCommand(0.0, 0.0, 0.1))
        assert np.allclose(g.speed_scale[1:6], 0.5, atol=0.03)
        assert yaw_s == pytest.approx(0.5 * yaw_f, rel=0.06)
    d_s, yaw_s, _ = run(grid_map(lambda X, Y: t10 * X), CrawlCommand(0.035, 0.0, 0.05))
    d_f, yaw_f, _ = run(flat, CrawlCommand(0.035, 0.0, 0.05))
    assert yaw_s < 0.6 * yaw_f and d_s / yaw_s == pytest.approx(d_f / yaw_f, rel=0.08)   # same radius
