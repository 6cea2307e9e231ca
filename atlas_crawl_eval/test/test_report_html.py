"""report.html (issue 15): one self-contained page per evaluation with the same numbers as report.md."""
import base64
import re
from html.parser import HTMLParser

import numpy as np

from atlas_crawl_eval import evaluate, report, synthetic as syn


def _logs(tmp_path, n=2):
    return [syn.straight_crawl(speed_m_s=0.1 + 0.01 * i, n_cycles=3, cycle_s=2.0, rest_s=2.5, meta_seed=i,
                               meta_gait="crawl_forward", meta_cycles=3).save(tmp_path / f"trial_{i}.npz")
            for i in range(n)]


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.cells = [], []
        self._td = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href", "poster"):
            if k in a:
                self.refs.append((tag, k, a[k]))
        self._td = tag == "td"

    def handle_data(self, data):
        if self._td:
            self.cells.append(data)
            self._td = False


def _tiny_mp4(path):
    import imageio.v2 as imageio
    w = imageio.get_writer(str(path), fps=10, codec="libx264", pixelformat="yuv420p", macro_block_size=8)
    for k in range(10):
        w.append_data(np.full((64, 96, 3), 20 * k, np.uint8))
    w.close()


def test_html_is_self_contained_and_matches_markdown(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    _tiny_mp4(out / "video.mp4")
    md = report.write_report(_logs(tmp_path), "crawl_forward", out, loop="part", command="pytest",
                             video="video.mp4").read_text()
    html = (out / "report.html").read_text()
    p = _Refs()
    p.feed(html)
    imgs = [v for t, k, v in p.refs if t == "img"]
    assert len(imgs) == len(list(out.glob("*.png"))) == 4            # every plot, embedded
    assert all(v.startswith("data:image/png;base64,") for v in imgs)
    base64.b64decode(imgs[0].split(",", 1)[1], validate=True)
    vids = [v for t, k, v in p.refs if t == "video" and k == "src"]
    assert len(vids) == 1 and vids[0].startswith("data:video/mp4;base64,")
    assert base64.b64decode(vids[0].split(",", 1)[1]) == (out / "video.mp4").read_bytes()
    assert not [r for r in p.refs if not r[2].startswith("data:")]     # nothing outside the page
    # every 'Ours' cell of the Markdown table appears in the page
    ours = [ln.split("|")[3].strip() for ln in md.splitlines() if ln.startswith("| ") and "(n=" in ln]
    assert ours and all(o in p.cells for o in ours)
    assert "report.html" in md


def test_large_video_is_linked_relative(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    _tiny_mp4(out / "video.mp4")
    logs = [report.TrialLog.load(x) for x in _logs(tmp_path, 1)]
    trials = report.evaluate_logs(logs, "crawl_forward")
    rows = report.summary_table(trials, "crawl_forward", "part")
    page = report.write_html(out, "t", {}, "Falls: 0/1", rows, "crawl_forward", "part", trials, [],
                             out / "video.mp4", {}, max_embed_mb=0.0).read_text()
    assert re.search(r"<video[^>]* src='video\.mp4'", page) and "(linked" in page


def test_all_index_page_links_each_behaviour(tmp_path):
    logs = _logs(tmp_path)
    out = tmp_path / "all"
    p = report.write_report(logs, "crawl_forward", out / "crawl_forward_part", loop="part", make_plots=False)
    idx = evaluate.write_index(out, [("crawl_forward", "part", p, ""), ("turn_left", "full", None, "no script")],
                               "pytest")
    page = (out / "report.html").read_text()
    assert idx == out / "report.md"
    assert "href='crawl_forward_part/report.html'" in page and "Not run: no script" in page
    assert page.count("<table>") == 1 and "0.1050 ± 0.0071 (n=2)" in page
