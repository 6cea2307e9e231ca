"""lab/make_synthetic_bvh.py regenerates the committed atlas_crawl_kinematics/data/synthetic_human_crawl.bvh exactly."""
from pathlib import Path

import make_synthetic_bvh

DATA = Path(__file__).resolve().parents[2] / "atlas_crawl_kinematics" / "data" / "synthetic_human_crawl.bvh"


def test_regenerates_the_committed_bvh(tmp_path):
    out = tmp_path / "crawl.bvh"
    make_synthetic_bvh.main(["--out", str(out)])
    assert out.read_text(encoding="utf-8") == DATA.read_text(encoding="utf-8")
