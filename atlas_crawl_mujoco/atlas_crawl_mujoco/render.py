"""Offscreen video of an AtlasSim (mujoco.Renderer + imageio), fast settings by default.

Fast settings: no shadows, reflections, skybox or multisampling; 640x480; 25 fps of *sim* time; frames are streamed
to the encoder (an MP4 of a minute needs ~no memory). Camera: by default a MuJoCo tracking camera that follows the
pelvis from a 3/4 side view (``camera="pelvis"``, azimuth/elevation/distance below); any named model camera
(e.g. ``"track"``, the CoM-tracking camera of the model) works too.

GL backend: MuJoCo picks it from ``MUJOCO_GL`` when it is *imported*. :func:`select_gl_backend` probes ``egl`` then
``osmesa`` in a subprocess and sets ``MUJOCO_GL`` to the first that works; call it before ``import mujoco`` (the
command-line tools do). ``python -m atlas_crawl_mujoco.render --probe`` prints the backend found.
"""
from __future__ import annotations

import os
import subprocess
import sys

_PROBE = "import mujoco; c = mujoco.GLContext(16, 16); c.make_current(); c.free()"


def gl_backend_works(backend: str, timeout_s: float = 60.0) -> bool:
    """True if ``MUJOCO_GL=backend`` can create an offscreen GL context (probed in a subprocess)."""
    env = dict(os.environ, MUJOCO_GL=backend)
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def select_gl_backend(candidates=("egl", "osmesa")) -> str | None:
    """Set ``MUJOCO_GL`` to the first working backend (the user's own setting is tried first); None if none works.

    Must run before mujoco is imported to have an effect in this process."""
    own = os.environ.get("MUJOCO_GL")
    order = ([own] if own else []) + [c for c in candidates if c != own]
    for b in order:
        if gl_backend_works(b):
            os.environ["MUJOCO_GL"] = b
            return b
    return None


class VideoRecorder:
    """Grab frames at ``fps`` of sim time and stream them to an MP4 (or GIF) file.

    Usage: ``rec = VideoRecorder(sim, "out.mp4"); ...; rec.maybe_capture() after each sim.step(); rec.close()``.
    ``rec.n_frames`` counts the frames written. ``camera="pelvis"`` = tracking camera on the pelvis (3/4 view).
    """

    def __init__(self, sim, path: str, fps: int = 25, width: int = 640, height: int = 480, camera: str = "pelvis",
                 azimuth_deg: float = 135.0, elevation_deg: float = -22.0, distance_m: float = 3.2):
        os.environ.setdefault("MUJOCO_GL", "egl")
        import imageio.v2 as imageio
        import mujoco
        if not (0 < width <= 1280 and 0 < height <= 960):
            raise ValueError("video size must be within 1280x960 (the model's offscreen buffer)")
        self.sim, self.path, self.fps = sim, str(path), int(fps)
        m = sim.model
        m.vis.quality.shadowsize = 0
        m.vis.quality.offsamples = 0
        self.renderer = mujoco.Renderer(m, height=height, width=width)
        self.opt = mujoco.MjvOption()
        self.scene_flags = {mujoco.mjtRndFlag.mjRND_SHADOW: False, mujoco.mjtRndFlag.mjRND_REFLECTION: False,
                            mujoco.mjtRndFlag.mjRND_SKYBOX: False}
        if camera == "pelvis":
            cam = mujoco.MjvCamera()
            cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            cam.trackbodyid = sim.map.pelvis
            cam.azimuth, cam.elevation, cam.distance = azimuth_deg, elevation_deg, distance_m
            self.camera = cam
        else:
            self.camera = camera
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        self.gif = self.path.lower().endswith(".gif")
        if self.gif:
            self.writer = imageio.get_writer(self.path, mode="I", duration=1.0 / self.fps)
        else:
            self.writer = imageio.get_writer(self.path, fps=self.fps, quality=6, macro_block_size=8,
                                             codec="libx264", pixelformat="yuv420p")
        self.n_frames = 0
        self.next_t = sim.time
        self.closed = False

    def capture(self):
        self.renderer.update_scene(self.sim.data, camera=self.camera, scene_option=self.opt)
        for f, v in self.scene_flags.items():
            self.renderer.scene.flags[f] = v
        img = self.renderer.render()
        self.writer.append_data(img[::2, ::2] if self.gif else img)
        self.n_frames += 1

    def maybe_capture(self):
        if self.sim.time + 1e-6 >= self.next_t:
            self.capture()
            self.next_t += 1.0 / self.fps

    def close(self):
        if not self.closed:
            self.writer.close()
            self.renderer.close()
            self.closed = True
        return self.path


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", action="store_true", help="print the working GL backend (egl/osmesa) or 'none'")
    a = ap.parse_args(argv)
    if a.probe:
        b = select_gl_backend()
        print(b or "none")
        return 0 if b else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
