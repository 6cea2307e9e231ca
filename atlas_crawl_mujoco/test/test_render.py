"""Readable video (issue 15): model visuals, support overlay as scene geoms, caption, size options, cost."""
import os

import numpy as np
import pytest

from atlas_crawl_mujoco import render
from atlas_crawl_mujoco.model import LIMB_RGBA, body_colour_group, build_model


def _gl_ok():
    return render.gl_backend_works(os.environ.get("MUJOCO_GL", "egl"))


needs_gl = pytest.mark.skipif(not _gl_ok(), reason="no offscreen GL backend (install EGL or libosmesa6)")


@pytest.mark.parametrize("text,ok", [("1280x720", (1280, 720)), ("640X360", (640, 360)), ("1920x1080", (1920, 1080)),
                                     ("1280", None), ("axb", None), ("2000x720", None), ("8x8", None)])
def test_parse_size(text, ok):
    if ok is None:
        with pytest.raises(ValueError):
            render.parse_size(text)
    else:
        assert render.parse_size(text) == ok


def test_model_visuals_checker_floor_and_limb_colours():
    import mujoco
    m = build_model()
    floor = m.geom("floor").id
    mat = m.geom_matid[floor]
    assert mat >= 0 and m.mat_texuniform[mat] and m.ntex >= 2          # checker + sky, not dropped at compile
    assert m.vis.global_.offwidth >= 1920 and m.vis.global_.offheight >= 1080

    def rgba(body):
        g = [i for i in range(m.ngeom) if m.geom_bodyid[i] == m.body(body).id][0]
        return tuple(np.round(m.geom_rgba[g].astype(float), 3))
    assert rgba("l_hand") == tuple(np.round(LIMB_RGBA["l_arm"], 3))
    assert rgba("r_hand") == tuple(np.round(LIMB_RGBA["r_arm"], 3))
    assert rgba("l_lleg") != rgba("r_lleg") and rgba("l_hand") != rgba("r_hand")
    assert body_colour_group("utorso") == "torso" and body_colour_group("r_foot") == "r_leg"
    assert int(m.geom_type[floor]) == int(mujoco.mjtGeom.mjGEOM_PLANE)


@needs_gl
def test_overlay_geoms_and_caption(tmp_path):
    from atlas_crawl_mujoco.sim import AtlasSim
    sim = AtlasSim()
    sim.reset("crawl_stance")
    sim.step(300)
    st = render.SupportState(sim)
    assert st.in_touch.all() and st.polygon.shape == (4, 2) and st.margin > 0.03
    plain = render.VideoRecorder(sim, str(tmp_path / "a.mp4"), width=320, height=180, overlay=False, caption=False)
    img0 = plain.render_frame()
    n0 = plain.renderer.scene.ngeom
    plain.close()
    rec = render.VideoRecorder(sim, str(tmp_path / "b.mp4"), width=320, height=180, label="crawl_stance")
    img1 = rec.render_frame()
    n1 = rec.renderer.scene.ngeom
    rec.close()
    # 4 contact spheres + 4 edges + 2 fill triangles + CoM disc, drop line and ball (+ 0 trail segments so far)
    assert n1 - n0 == 4 + 4 + 2 + 3
    assert img1.shape == (180, 320, 3)
    band = rec.caption.band_h
    assert img1[:band].mean() < img0[:band].mean() - 30          # dark caption band over the sky
    assert (np.abs(img1[band:].astype(int) - img0[band:]).sum(axis=2) > 60).mean() > 0.002   # overlay drawn


@needs_gl
def test_recorder_frames_per_sim_time_and_cost(tmp_path):
    import imageio.v2 as imageio
    from atlas_crawl_mujoco.sim import AtlasSim
    sim = AtlasSim()
    sim.reset("crawl_stance")
    rec = render.VideoRecorder(sim, str(tmp_path / "c.mp4"), width=256, height=144, fps=20, view="top")
    for _ in range(500):            # 0.5 s of sim time at 20 fps -> 10 (or 11) frames
        sim.step(1)
        rec.maybe_capture()
    rec.close()
    frames = imageio.mimread(str(tmp_path / "c.mp4"))
    assert len(frames) == rec.n_frames and rec.n_frames in (10, 11)
    c = rec.cost_per_frame_ms()
    assert set(c) == {"scene_render_ms", "overlay_caption_ms", "encode_ms"} and all(v > 0 for v in c.values())
    assert "frames 256x144 @ 20 fps, per frame" in rec.cost_line() and rec.cpu_ms > 0
    with pytest.raises(ValueError):
        render.VideoRecorder(sim, str(tmp_path / "d.mp4"), width=4000, height=100)
