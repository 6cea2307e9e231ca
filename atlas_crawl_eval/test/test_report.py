"""Report writer on synthetic log sets: one table row per metric, thesis column, computed comparisons."""

import json
import math

import pytest

from atlas_crawl_eval import report, synthetic as syn, thesis_values as tv


def _crawl_logs(tmp_path, n=3):
    paths = []
    for i in range(n):
        lg = syn.straight_crawl(speed_m_s=0.1 + 0.01 * i, lateral_m_s=0.002 * i, n_cycles=3, cycle_s=2.0,
                                rest_s=2.5, meta_seed=10 + i, meta_gait="crawl_forward", meta_cycles=3)
        paths.append(lg.save(tmp_path / f"trial_{i}.npz"))
    return paths


def _table_rows(md):
    """Rows of the main table (from its '| Metric' header to the first non-table line)."""
    lines = md.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("| Metric"))
    rows = []
    for ln in lines[i + 2:]:
        if not ln.startswith("| "):
            break
        rows.append(ln)
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in rows]


def test_crawl_report_table(tmp_path):
    paths = _crawl_logs(tmp_path)
    out = report.write_report(paths, "crawl_forward", tmp_path / "rep", loop="full", command="pytest",
                              video="video.mp4", make_plots=False)
    md = out.read_text()
    rows = _table_rows(md)
    labels = [r[0] for r in rows]
    assert labels == [r[1] for r in report.rows_for("crawl_forward")]  # one row per metric, in order
    by = {r[0]: r for r in rows}
    # thesis column (Table 4.2, full loop) beside ours
    assert by["Drift / gait"][3] == "0.2728 ± 0.0370"
    assert by["Velocity"][3] == "0.0791 ± 0.0000"
    assert by["Distance / gait"][3] == "0.6840 ± 0.0070"
    assert by["Drift / gait"][7] == "0.0928 ± 0.0170"  # IIK column, Table 4.6
    # our numbers: mean ± std of the trials' velocities 0.1, 0.11, 0.12 (+ tiny lateral component)
    m, s = (float(x) for x in by["Velocity"][2].split(" (")[0].split(" ± "))
    assert m == pytest.approx(0.11, abs=2e-4)
    assert s == pytest.approx(0.01, abs=2e-4)
    # computed comparisons: we are faster than 0.0791 but drift less -> better; distance/gait 0.22 < 0.684 -> worse
    assert by["Velocity"][4] == "better"
    assert by["Drift / gait"][4] == "better"
    assert by["Distance / gait"][4] == "worse"
    assert by["Velocity"][6] == "not met"  # target ≥ 0.30 m/s
    assert by["Falls (fraction of trials)"][6] == "met"
    assert "pytest" in md and "seeds [10, 11, 12]" in md and "git " in md
    assert "[video.mp4](video.mp4)" in md
    assert "## Static margin per key-frame" in md and "| 0 | " in md
    j = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert len(j["trials"]) == 3 and j["provenance"]["n_trials"] == 3


def test_part_loop_and_backward_use_their_tables(tmp_path):
    paths = _crawl_logs(tmp_path, n=2)
    md = report.write_report(paths, "crawl_backward", tmp_path / "b", loop="part", make_plots=False).read_text()
    by = {r[0]: r for r in _table_rows(md)}
    assert by["Drift / gait"][3] == "0.4049 ± 0.0250"  # Table 4.3 part loop
    assert by["Velocity"][3] == "0.0675 ± 0.0030"


def test_turn_report_with_plots(tmp_path):
    logs = [syn.circle_turn(radius_m=0.2, period_s=10.0, n_cycles=7, cycle_s=1.5, direction=-1, rest_s=2.1,
                            meta_seed=i) for i in range(2)]
    out = report.write_report(logs, "turn_right", tmp_path / "t", command="pytest")
    md = out.read_text()
    by = {r[0]: r for r in _table_rows(md)}
    assert by["Radius"][3] == "0.6735 ± 0.0390"
    shrink = math.exp(-0.5 * (0.5 * 2 * math.pi / 10.0) ** 2)  # Gaussian σ = 0.5 s on a 10 s circle
    assert float(by["Radius"][2].split(" ±")[0]) == pytest.approx(0.2 * shrink, abs=1e-4)
    assert by["Radius"][4] == "better" and by["Radius"][6] == "not met"  # 0.2 > 0.10 target
    assert by["Time / circle"][4] == "better" and by["Time / circle"][6] == "met"
    for f in ("com_path.png", "limb_paths.png", "support_polygons.png", "margin.png"):
        assert (tmp_path / "t" / f).stat().st_size > 5000, f
        assert f"]({f})" in md
    assert "failed" not in md


def test_comparisons_are_computed():
    assert report.compare_to_thesis("velocity_m_s", 0.1, 0.0791) == "better"
    assert report.compare_to_thesis("velocity_m_s", 0.05, 0.0791) == "worse"
    assert report.compare_to_thesis("turn_per_gait_deg", -4.0, 3.4779) == "worse"  # magnitudes
    assert report.compare_to_thesis("drift_per_gait_m", 0.1, 0.2728) == "better"
    assert report.compare_to_thesis("radius_m", math.nan, 0.67) == "n/a"
    assert report.check_target("turn_per_gait_deg", -0.4, ("<=", 0.5)) == "met"
    assert report.check_target("velocity_m_s", 0.29, (">=", 0.30)) == "not met"
    m, s, n = report.mean_std([1.0, 2.0, math.nan, 3.0])
    assert (m, n) == (2.0, 3) and s == pytest.approx(1.0)


def test_thesis_constants():
    assert tv.FORWARD_FULL["velocity_m_s"][0] == 0.0791
    assert tv.FORWARD_PART["distance_per_gait_m"] == (0.7335, 0.008)
    assert tv.BACKWARD_FULL["turn_per_gait_deg"] == (5.197, 1.67)
    assert tv.TURNING["cycles_per_circle"] == (14.38, 0.364)
    assert tv.IIK_CRAWL["drift_per_gait_m"] == (0.0928, 0.017)
    assert tv.PROTOCOL["crawl_forward"] == (10, 10) and tv.PROTOCOL["turn_left"] == (5, 20)
