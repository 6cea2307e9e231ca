"""The storm (issue 11) on the real embedded graph, short form: no graph death, no goal wrongly aborted, no
non-finite joint command, every case followed by a 1-cycle Crawl that succeeds. The probe latencies (target
≤ 0.2 s) are printed, not asserted: wall-clock figures are benchmark output (python -m atlas_crawl_bringup.storm)."""
from atlas_crawl_bringup.storm import run_storm
from ros_fixtures import stack  # noqa: F401


def test_storm_short(stack):  # noqa: F811
    s = run_storm(stack, long=False)
    bad = [r for r in s["results"] if not r["ok"]]
    assert not bad, bad
    assert s["graph_deaths"] == 0 and s["goals_wrongly_aborted"] == 0 and s["nonfinite_commands"] == 0, s
    assert s["cases"] == 8 and all(r["follow_up_crawl"] == "succeeded" for r in s["results"])
    print(f"probes within 0.2 s: {s['probes_within_0.2s']}/{s['probes']}, worst {s['worst_latency_s']:.3f} s")
