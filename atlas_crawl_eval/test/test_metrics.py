"""Metric functions on synthetic trajectories with analytically known answers (thesis §4.1.2-4.1.3)."""

import numpy as np
import pytest

from atlas_crawl_eval import metrics as m
from atlas_crawl_eval import synthetic as syn
from atlas_crawl_eval.trial_log import TrialLog, TrialLogError

SIGMA_S = m.SIGMA_SAMPLES * 0.01  # σ in seconds at 100 Hz


# ------------------------------------------------------------------------------------------------ smoothing
def test_kernel_is_thesis_gaussian():
    w = m.gaussian_kernel()
    assert w.shape == (401,)
    assert w.sum() == pytest.approx(1.0)
    assert np.argmax(w) == 200
    # σ = 50 samples: value ratio at ±50 samples is exp(-1/2)
    assert w[250] / w[200] == pytest.approx(np.exp(-0.5))


def test_smoothing_preserves_constant_and_interior_ramp():
    n = 1000
    const = np.full((n, 2), 3.7)
    assert np.allclose(m.smooth(const), 3.7)
    ramp = np.linspace(0.0, 9.99, n)
    s = m.smooth(ramp)
    interior = slice(200, n - 200)
    assert np.allclose(s[interior], ramp[interior], atol=1e-12)
    # 'nearest' edge: the ramp is pulled towards the interior by ≈ slope·σ/√(2π) at the ends (honest bias)
    slope = ramp[1] - ramp[0]
    assert s[0] - ramp[0] == pytest.approx(slope * 50 / np.sqrt(2 * np.pi), rel=1e-3)
    v = m.smooth(ramp, mode="valid")
    assert np.all(np.isnan(v[:200])) and np.all(np.isnan(v[-200:]))
    assert np.allclose(v[interior], ramp[interior])


def test_smoothing_removes_noise_and_rejects_bad_input():
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, 5000)
    assert np.std(m.smooth(x)[300:-300]) < 0.1
    with pytest.raises(ValueError):
        m.smooth([1.0, np.nan, 2.0])
    with pytest.raises(ValueError):
        m.smooth(x, mode="reflect-ish")


# ------------------------------------------------------------------------------------------------ heading
@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.5, 3.0])
def test_heading_sources_agree_on_a_crawling_pose(yaw):
    log = syn.straight_crawl(heading_rad=yaw, n_cycles=2, cycle_s=2.0, rest_s=2.5)
    for src in ("pelvis_z", "pelvis_x", "limbs"):
        h = m.raw_heading_rad(log, src)
        assert np.allclose(np.angle(np.exp(1j * (h - yaw))), 0.0, atol=1e-9), src


def test_pelvis_z_is_forward_on_all_fours_and_x_is_not_when_pitched_past_90():
    # pitch 1.8 rad (> 90°): pelvis +z still projects forward; pelvis +x projects backward
    log = syn.straight_crawl(heading_rad=0.4, n_cycles=1, cycle_s=2.0, rest_s=2.5, pitch_rad=1.8)
    assert np.allclose(m.raw_heading_rad(log, "pelvis_z"), 0.4)
    assert np.allclose(np.angle(np.exp(1j * (m.raw_heading_rad(log, "pelvis_x") - 0.4 - np.pi))), 0.0)
    with pytest.raises(ValueError):
        m.raw_heading_rad(log, "pelvis_y")


# ------------------------------------------------------------------------------------------------ crawling
def test_straight_line_known_speed_and_lateral_offset():
    v, lat, cyc_s, n = 0.3, 0.02, 4.0, 4
    log = syn.straight_crawl(speed_m_s=v, lateral_m_s=lat, heading_rad=0.9, n_cycles=n, cycle_s=cyc_s)
    r = m.crawl_metrics(log)
    speed = np.hypot(v, lat)
    assert r.n_cycles == n
    assert r.velocity_m_s == pytest.approx(speed, rel=1e-9)
    assert r.distance_per_gait_m == pytest.approx(speed * cyc_s, rel=1e-9)
    assert r.drift_per_gait_m == pytest.approx(lat * cyc_s, rel=1e-9)
    assert r.total_lateral_drift_m == pytest.approx(lat * cyc_s * n, rel=1e-9)
    assert r.progress_per_gait_m == pytest.approx(v * cyc_s, rel=1e-9)
    assert r.turn_per_gait_deg == pytest.approx(0.0, abs=1e-9)
    assert r.edge_samples == 0


def test_backward_crawl_same_magnitudes():
    log = syn.straight_crawl(speed_m_s=-0.2, lateral_m_s=-0.01, n_cycles=3, cycle_s=3.0)
    r = m.crawl_metrics(log)
    assert r.velocity_m_s == pytest.approx(np.hypot(0.2, 0.01))
    assert r.progress_per_gait_m == pytest.approx(-0.2 * 3.0)  # signed: backward
    assert r.drift_per_gait_m == pytest.approx(0.03)


def test_turn_per_gait_from_constant_yaw_rate():
    rate = np.radians(2.0) / 4.0  # 2° per 4 s cycle, CCW
    log = syn.straight_crawl(speed_m_s=0.0, n_cycles=3, cycle_s=4.0, yaw_rate_rad_s=rate)
    r = m.crawl_metrics(log)
    assert r.turn_per_gait_deg == pytest.approx(2.0, rel=1e-6)
    assert r.abs_turn_per_gait_deg == pytest.approx(2.0, rel=1e-6)
    assert r.turn_per_gait_limbs_deg == pytest.approx(2.0, rel=1e-6)


def test_rest_margins_show_the_documented_smoothing_bias():
    # robot at rest before/after the gait: smoothed start/end points are pulled inwards by v·σ/√(2π) each
    v, cyc_s, n = 0.3, 4.0, 4
    log = syn.straight_crawl(speed_m_s=v, n_cycles=n, cycle_s=cyc_s, margins="rest")
    r = m.crawl_metrics(log)
    expect = (v * cyc_s * n - 2 * v * SIGMA_S / np.sqrt(2 * np.pi)) / n
    assert r.distance_per_gait_m == pytest.approx(expect, rel=2e-3)
    assert r.distance_per_gait_m < v * cyc_s


def test_no_cycle_raises():
    log = syn.straight_crawl(n_cycles=1, cycle_s=2.0, rest_s=2.5)
    log.cycle_index[:] = -1
    with pytest.raises(m.MetricError):
        m.crawl_metrics(log)
    with pytest.raises(m.MetricError):
        m.turning_metrics(log)


# ------------------------------------------------------------------------------------------------ turning
@pytest.mark.parametrize("direction", [1, -1])
def test_circle_known_radius_and_period(direction):
    R, period, cyc_s = 0.5, 40.0, 4.0
    log = syn.circle_turn(radius_m=R, period_s=period, n_cycles=12, cycle_s=cyc_s, direction=direction)
    r = m.turning_metrics(log)
    omega = 2 * np.pi / period
    assert r.n_circles == 1
    assert r.turn_direction == direction
    assert r.time_per_circle_s == pytest.approx(period, abs=0.011)
    assert r.drift_per_circle_m == pytest.approx(0.0, abs=1e-3)
    # Gaussian smoothing shrinks a circle by exp(-(σω)²/2) (truncation at 4σ is negligible)
    assert r.radius_m == pytest.approx(R * np.exp(-0.5 * (SIGMA_S * omega) ** 2), rel=1e-4)
    assert r.cycles_per_circle == pytest.approx(period / cyc_s, abs=0.01)
    # 11 cycle starts on the circle (10 evenly spaced + the repeat of the first): radius ≈ shrunk R
    assert r.radius_cycle_starts_m == pytest.approx(R * np.exp(-0.5 * (SIGMA_S * omega) ** 2), rel=0.1)
    assert r.time_per_circle_extrapolated_s == pytest.approx(period, rel=1e-6)
    assert r.turn_per_cycle_deg == pytest.approx(direction * 360.0 * cyc_s / period, rel=1e-6)


def test_partial_circle_has_no_complete_circle_but_extrapolates():
    log = syn.circle_turn(radius_m=0.3, period_s=40.0, n_cycles=5, cycle_s=4.0)
    r = m.turning_metrics(log)
    assert r.n_circles == 0
    assert np.isnan(r.radius_m) and np.isnan(r.time_per_circle_s)
    assert r.time_per_circle_extrapolated_s == pytest.approx(40.0, rel=1e-6)


def test_circle_with_drift_measures_drift():
    # spiral: centre drifting at 1 cm/s along x -> drift/circle = 0.01 * period (the smoothing is linear in x)
    log = syn.circle_turn(radius_m=0.5, period_s=30.0, n_cycles=10, cycle_s=4.0)
    log.com_pos_m[:, 0] += 0.01 * log.time_s
    r = m.turning_metrics(log)
    assert r.drift_per_circle_m == pytest.approx(0.30, abs=2e-3)


# ------------------------------------------------------------------------------------------------ slip
def _stationary_contacts_log(n_cycles=2, cycle_s=2.0):
    log = syn.straight_crawl(speed_m_s=0.0, n_cycles=n_cycles, cycle_s=cycle_s, rest_s=2.5)
    return log


def test_slip_zero_for_fixed_contacts_and_measured_for_a_slipping_one():
    log = _stationary_contacts_log()
    s0 = m.slip_metrics(log)
    assert s0.n_intervals > 0
    assert s0.max_mm == pytest.approx(0.0, abs=1e-9)
    # make the right knee (RK) skate at 5 mm/s in +y during all its stance intervals; swing motion is ignored
    rk = 3
    runs = [(a, b) for a, b in m.true_runs(log.contact_in_touch[:, rk] & log.planned_stance[:, rk])]
    for a, b in runs:
        tt = log.time_s[a: b + 1] - log.time_s[a]
        log.contact_pos_m[a: b + 1, rk, 1] += 0.005 * tt
    s = m.slip_metrics(log)
    longest = max(log.time_s[b] - log.time_s[a] for a, b in runs)
    assert s.max_mm == pytest.approx(5.0 * longest, rel=1e-9)
    assert s.per_limb_max_mm["RK"] == pytest.approx(5.0 * longest, rel=1e-9)
    assert s.per_limb_max_mm["LW"] == pytest.approx(0.0, abs=1e-9)
    # an excursion that comes back has net 0 but a positive max excursion
    a, b = runs[0]
    log.contact_pos_m[:, rk, 1] = 0.0 + log.contact_pos_m[0, rk, 1]
    mid = (a + b) // 2
    log.contact_pos_m[mid, rk, 0] += 0.004
    s2 = m.slip_metrics(log)
    assert s2.max_mm == pytest.approx(0.0, abs=1e-9)
    assert s2.max_excursion_mm == pytest.approx(4.0, rel=1e-9)


def test_true_runs():
    assert m.true_runs([0, 1, 1, 0, 1]) == [(1, 2), (4, 4)]
    assert m.true_runs([1, 1, 1]) == [(0, 2)]
    assert m.true_runs([0, 0]) == []


# ------------------------------------------------------------------------------------------------ stability
def test_stability_margin_known_triangle():
    log = _stationary_contacts_log()
    # contacts rigid around the CoM at (0,0): LW (0.35, 0.25), RW (0.35,-0.25), LK (-0.35, 0.2), RK (-0.35,-0.2)
    # move the CoM 10 cm forward: with LW swinging the triangle RW-LK-RK leaves it 'outside' by the RW-LK edge.
    log.com_pos_m[:, 0] += 0.10
    st = m.stability_metrics(log)
    assert st.n_tripod_samples > 0
    assert st.tripod_in_touch_fraction == 1.0
    # expected per swinging limb, closed form: signed distance of (0.1, 0) to the remaining triangle
    from atlas_crawl_eval import _support
    expect = {}
    for limb in range(4):
        tri = np.delete(syn.LIMB_OFFSETS, limb, axis=0)
        expect[limb] = _support.stability_margin([0.1, 0.0], _support.support_polygon(tri))
    assert st.min_m == pytest.approx(min(expect.values()), abs=1e-9)
    # the line LK(-0.35,0.2)-RW(0.35,-0.25) passes near the origin: swinging LW puts (0.1, 0) outside
    assert expect[0] < 0 < expect[2]
    assert st.ground_min_m == pytest.approx(st.min_m, abs=1e-9)


def test_stability_counts_lost_contacts():
    log = _stationary_contacts_log()
    tri = np.flatnonzero(log.planned_stance.sum(axis=1) == 3)
    log.contact_in_touch[tri[:10]] = False  # all four lose touch for 10 tripod samples
    st = m.stability_metrics(log)
    assert st.unsupported_samples == 10
    assert st.tripod_in_touch_fraction == pytest.approx(1 - 10 / len(tri))


def test_planned_polygon_margin_ignores_touch_but_strict_margin_does_not():
    st0 = m.stability_metrics(_stationary_contacts_log())  # (margins are cached per log object)
    log = _stationary_contacts_log()
    # all planned contacts in touch: the thesis-style planned polygon equals the strict planned∩touch polygon
    assert st0.planned_positions_min_m == pytest.approx(st0.min_m, abs=1e-12)
    tri = np.flatnonzero(log.planned_stance.sum(axis=1) == 3)
    lifted = tri[:20]
    for i in lifted:  # one planned stance limb leaves the floor: strict hull degenerates to a segment (<= 0)
        log.contact_in_touch[i, np.flatnonzero(log.planned_stance[i])[0]] = False
    st = m.stability_metrics(log)
    assert st.mean_m < st0.mean_m  # the strict margin sees the lost contact
    assert st.planned_positions_min_m == pytest.approx(st0.planned_positions_min_m, abs=1e-12)
    assert st.planned_positions_mean_m == pytest.approx(st0.planned_positions_mean_m, abs=1e-12)


# ------------------------------------------------------------------------------------------------ log contract
def test_log_roundtrip_and_validation(tmp_path):
    log = syn.straight_crawl(n_cycles=1, cycle_s=2.0, rest_s=2.5, meta_seed=7, meta_gait="crawl_forward")
    p = log.save(tmp_path / "t.npz")
    back = TrialLog.load(p)
    assert back.meta_seed == 7 and back.meta_gait == "crawl_forward"
    assert np.array_equal(back.com_pos_m, log.com_pos_m)
    z = dict(np.load(p))
    del z["com_pos_m"]
    np.savez(tmp_path / "bad.npz", **z)
    with pytest.raises(TrialLogError, match="com_pos_m"):
        TrialLog.load(tmp_path / "bad.npz")
    with pytest.raises(TrialLogError):
        TrialLog(**{**{k: getattr(log, k) for k in z if not k.startswith("meta")},
                    "com_pos_m": log.com_pos_m[:-1]})


def test_roll_success():
    log = syn.straight_crawl(n_cycles=1, cycle_s=2.0, rest_s=2.5, pitch_rad=1.2)
    assert not m.roll_success(log)  # on all fours the pelvis front points down
    log2 = syn.straight_crawl(n_cycles=1, cycle_s=2.0, rest_s=2.5, pitch_rad=-1.4)
    assert m.roll_success(log2)  # pitched back by 80°: lying on the back
