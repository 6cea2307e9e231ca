"""Offscreen video of an AtlasSim (mujoco.Renderer + imageio), fast settings: no shadows/reflections/AA."""
from __future__ import annotations

import os

import mujoco
import numpy as np


def _ensure_gl():
    os.environ.setdefault("MUJOCO_GL", "egl")


class VideoRecorder:
    """Grab frames at ``fps`` of sim time from the tracking camera and write MP4 or GIF on close().

    Usage: ``rec = VideoRecorder(sim, "out.mp4"); ...; rec.maybe_capture(); ...; rec.close()``.
    """

    def __init__(self, sim, path: str, fps: int = 25, width: int = 640, height: int = 480, camera: str = "track"):
        _ensure_gl()
        self.sim, self.path, self.fps = sim, path, int(fps)
        m = sim.model
        m.vis.quality.shadowsize = 0
        m.vis.quality.offsamples = 0
        self.renderer = mujoco.Renderer(m, height=height, width=width)
        self.opt = mujoco.MjvOption()
        self.scene_flags = {mujoco.mjtRndFlag.mjRND_SHADOW: False, mujoco.mjtRndFlag.mjRND_REFLECTION: False,
                            mujoco.mjtRndFlag.mjRND_SKYBOX: False}
        self.camera = camera
        self.frames = []
        self.next_t = 0.0

    def capture(self):
        self.renderer.update_scene(self.sim.data, camera=self.camera, scene_option=self.opt)
        for f, v in self.scene_flags.items():
            self.renderer.scene.flags[f] = v
        self.frames.append(self.renderer.render().copy())

    def maybe_capture(self):
        if self.sim.time + 1e-6 >= self.next_t:
            self.capture()
            self.next_t += 1.0 / self.fps

    def close(self):
        import imageio.v2 as imageio
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        if self.path.lower().endswith(".gif"):
            imageio.mimsave(self.path, [f[::2, ::2] for f in self.frames], duration=1.0 / self.fps)
        else:
            imageio.mimsave(self.path, self.frames, fps=self.fps, quality=6, macro_block_size=8)
        self.renderer.close()
        return self.path
