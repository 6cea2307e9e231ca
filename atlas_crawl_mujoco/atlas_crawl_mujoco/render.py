"""Offscreen video of an AtlasSim (mujoco.Renderer + imageio) that a person can read.

What a frame shows (1280x720 at 30 fps of *sim* time by default; ``size``/``fps`` options):

* the model's visuals (model.py): 0.5 m checker floor with 1 m lines, links coloured by limb (left arm red, right
  arm blue, left leg orange, right leg green, torso light grey);
* drawn on the floor as MuJoCo user scene geoms (:class:`SupportOverlay`): the support polygon of the limbs in
  touch (outline + translucent fill; green when the CoM projection is inside, red outside), the CoM projection
  (disc + drop line), the contact frames in touch (limb-coloured spheres) and the CoM path of the last 20 s;
* a caption band drawn with PIL: behaviour, sim time, speed (CoM, horizontal, over the last 1 s), stability margin
  and the limbs down/up.

The margin is ``atlas_crawl_kinematics.support.stability_margin`` of the CoM projection against
``support_polygon`` of the LW/RW/LK/RK contact frames that touch the floor (ground truth from the simulator).
Cameras (``view``): ``"track"`` = three-quarter side view following the smoothed CoM (azimuth/elevation/distance
options), ``"top"`` = from above, following too; any named model camera works as well. Frames are streamed to the
encoder; :attr:`VideoRecorder.cost` gives the measured ms per frame (scene+render, overlay+caption, encode).

GL backend: MuJoCo picks it from ``MUJOCO_GL`` when it is *imported*. :func:`select_gl_backend` probes ``egl`` then
``osmesa`` in a subprocess and sets ``MUJOCO_GL`` to the first that works; call it before ``import mujoco`` (the
command-line tools do). ``python -m atlas_crawl_mujoco.render --probe`` prints the backend found.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque

import numpy as np

_PROBE = "import mujoco; c = mujoco.GLContext(16, 16); c.make_current(); c.free()"

#: Limb order LW, RW, LK, RK; overlay colours match model.LIMB_RGBA and the report plots.
LIMB_NAMES = ("LW", "RW", "LK", "RK")
LIMB_RGB = ((0.86, 0.24, 0.20), (0.18, 0.42, 0.85), (0.98, 0.62, 0.12), (0.20, 0.68, 0.32))
VIEWS = ("track", "top")
MAX_SIZE = (1920, 1080)   # the model's offscreen buffer (model.py)


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


def parse_size(text: str) -> tuple[int, int]:
    """'1280x720' -> (1280, 720); rejects malformed or out-of-range sizes with the reason."""
    try:
        w, h = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        raise ValueError(f"video size {text!r}: expected WIDTHxHEIGHT, e.g. 1280x720") from None
    if not (16 <= w <= MAX_SIZE[0] and 16 <= h <= MAX_SIZE[1]):
        raise ValueError(f"video size {w}x{h} outside 16x16..{MAX_SIZE[0]}x{MAX_SIZE[1]} (model offscreen buffer)")
    return w, h


class SupportState:
    """What the overlay and the caption show at one instant (computed from the simulator)."""

    def __init__(self, sim):
        from atlas_crawl_kinematics.support import stability_margin, support_polygon
        self.com = sim.com()
        self.contacts = sim.contact_site_pos()
        self.in_touch, _force = sim.limb_contacts()
        self.polygon = None
        self.margin = float("nan")
        if self.in_touch.any():
            self.polygon = support_polygon(self.contacts[self.in_touch, :2])
            self.margin = float(stability_margin(self.com[:2], self.polygon))


class SupportOverlay:
    """Adds the support polygon, CoM projection, contacts and CoM path to an ``mjvScene`` as user geoms."""

    def __init__(self, trail_s: float = 20.0, trail_dt_s: float = 0.2, z_m: float = 0.006):
        self.trail = deque(maxlen=max(2, int(trail_s / trail_dt_s)))
        self.trail_dt_s, self.z = trail_dt_s, z_m
        self._next_trail_t = -np.inf

    def _geom(self, scene, gtype, size, pos, rgba, mat=None):
        import mujoco
        if scene.ngeom >= scene.maxgeom:
            return None
        g = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(g, gtype, np.asarray(size, float), np.asarray(pos, float),
                            np.eye(3).ravel() if mat is None else np.asarray(mat, float).ravel(),
                            np.asarray(rgba, np.float32))
        g.category = mujoco.mjtCatBit.mjCAT_DECOR
        scene.ngeom += 1
        return g

    def _segment(self, scene, a, b, width, rgba):
        import mujoco
        g = self._geom(scene, mujoco.mjtGeom.mjGEOM_CAPSULE, (width, 0, 0), (0, 0, 0), rgba)
        if g is not None:
            mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_CAPSULE, width, np.asarray(a, float), np.asarray(b, float))

    def update_trail(self, t: float, com):
        if t >= self._next_trail_t:
            self.trail.append(np.array([com[0], com[1], self.z]))
            self._next_trail_t = t + self.trail_dt_s

    def add(self, scene, st: SupportState):
        import mujoco
        z = self.z
        inside = np.isfinite(st.margin) and st.margin >= 0.0
        edge_rgb = (0.05, 0.65, 0.15) if inside else (0.85, 0.10, 0.10)
        pts = list(self.trail)
        for a, b in zip(pts[:-1], pts[1:]):
            self._segment(scene, a, b, 0.006, (0.15, 0.15, 0.15, 0.8))
        if st.polygon is not None:
            poly = np.column_stack([st.polygon, np.full(len(st.polygon), z)])
            if len(poly) >= 3:   # translucent fill: triangle fan from the first vertex
                for k in range(1, len(poly) - 1):
                    self._triangle(scene, poly[0], poly[k], poly[k + 1], (*edge_rgb, 0.25))
            if len(poly) >= 2:
                for a, b in zip(poly, np.roll(poly, -1, axis=0)[: len(poly) if len(poly) > 2 else 1]):
                    self._segment(scene, a, b, 0.012, (*edge_rgb, 1.0))
        for j in range(4):
            if st.in_touch[j]:
                self._geom(scene, mujoco.mjtGeom.mjGEOM_SPHERE, (0.045, 0, 0), st.contacts[j], (*LIMB_RGB[j], 1.0))
        c = st.com
        self._geom(scene, mujoco.mjtGeom.mjGEOM_CYLINDER, (0.05, 0.004, 0), (c[0], c[1], z), (*edge_rgb, 1.0))
        self._segment(scene, (c[0], c[1], z), c, 0.006, (0.1, 0.1, 0.1, 0.6))
        self._geom(scene, mujoco.mjtGeom.mjGEOM_SPHERE, (0.03, 0, 0), c, (0.1, 0.1, 0.1, 1.0))

    def _triangle(self, scene, a, b, c, rgba):
        """mjGEOM_TRIANGLE: vertices pos, pos + size0 * mat[:,0], pos + size1 * mat[:,1]."""
        import mujoco
        e1, e2 = np.asarray(b) - a, np.asarray(c) - a
        l1, l2 = np.linalg.norm(e1), np.linalg.norm(e2)
        if l1 < 1e-6 or l2 < 1e-6:
            return
        x, y = e1 / l1, e2 / l2
        n = np.cross(x, y)
        if np.linalg.norm(n) < 1e-9:
            return
        mat = np.column_stack([x, y, n / np.linalg.norm(n)])
        self._geom(scene, mujoco.mjtGeom.mjGEOM_TRIANGLE, (l1, l2, 0), a, rgba, mat)


class Caption:
    """Caption band at the top of the frame (PIL); font from matplotlib's bundled DejaVu Sans."""

    def __init__(self, width: int, height: int):
        self.w = width
        self.scale = max(0.65, height / 720.0)     # text stays >= 16 px high in small videos (README GIF)
        self.size = int(round(24 * self.scale))
        self.band_h = int(round(44 * self.scale))
        self._fonts = {}
        self.font = self._font(self.size)

    def _font(self, size: int):
        """DejaVu Sans Bold of ``size`` px (cached)."""
        from PIL import ImageFont
        if size not in self._fonts:
            try:
                import matplotlib
                path = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans-Bold.ttf")
                self._fonts[size] = ImageFont.truetype(path, size)
            except Exception:  # noqa: BLE001 - any font is better than none
                self._fonts[size] = ImageFont.load_default(size=size)
        return self._fonts[size]

    def _fitting_font(self, text: str, room: float):
        """The caption font, shrunk (down to 60 %) until ``text`` fits in ``room`` pixels."""
        size = self.size
        f = self._font(size)
        while f.getlength(text) > room and size > 0.6 * self.size:
            size -= 1
            f = self._font(size)
        return f

    def draw(self, frame: np.ndarray, text: str, limbs_down) -> None:
        """Caption band at the top; limb legend (filled box = limb down, hollow = in the air) at the bottom right."""
        from PIL import Image, ImageDraw
        sc, pad = self.scale, int(8 * self.scale)
        band = frame[: self.band_h]
        img = Image.fromarray((band * 0.3 + 8).astype(np.uint8))
        ImageDraw.Draw(img).text((pad, pad), text, font=self._fitting_font(text, self.w - 2 * pad),
                                 fill=(255, 255, 255))
        frame[: self.band_h] = np.asarray(img)
        box = int(18 * sc)
        widths = [self.font.getlength(n) for n in LIMB_NAMES]
        head = "on floor:"
        hw = self.font.getlength(head) + 10 * sc
        lw = int(hw + sum(widths) + 4 * (box + 14 * sc) + 2 * pad)
        h, w = frame.shape[:2]
        x0, y0 = max(0, w - lw - pad), max(0, h - self.band_h - pad)
        region = frame[y0: y0 + self.band_h, x0: x0 + lw]
        img = Image.fromarray((region * 0.3 + 8).astype(np.uint8))
        d = ImageDraw.Draw(img)
        d.text((pad, pad), head, font=self.font, fill=(255, 255, 255))
        x = pad + int(hw)
        for j in range(4):
            col = tuple(int(255 * v) for v in LIMB_RGB[j])
            yb = pad + int(4 * sc)
            d.rectangle([x, yb, x + box, yb + box], outline=col, width=max(2, int(3 * sc)),
                        fill=col if limbs_down[j] else None)
            d.text((x + box + int(4 * sc), pad), LIMB_NAMES[j], font=self.font, fill=col)
            x += box + widths[j] + int(14 * sc)
        region[:] = np.asarray(img)[: region.shape[0], : region.shape[1]]


class VideoRecorder:
    """Grab frames at ``fps`` of sim time and stream them to an MP4 (or GIF) file; see module doc.

    Usage: ``rec = VideoRecorder(sim, "out.mp4"); ...; rec.maybe_capture() after each sim.step(); rec.close()``.
    ``rec.label`` is the behaviour text of the caption (callers set it per script). ``rec.n_frames`` counts the
    frames written; :meth:`cost_line` reports the measured cost per frame.
    """

    def __init__(self, sim, path: str, fps: int = 30, width: int = 1280, height: int = 720, view: str = "track",
                 azimuth_deg: float = 135.0, elevation_deg: float = -20.0, distance_m: float = 2.6,
                 overlay: bool = True, caption: bool = True, label: str = "", camera: str | None = None):
        os.environ.setdefault("MUJOCO_GL", "egl")
        import imageio.v2 as imageio
        import mujoco
        if not (16 <= width <= MAX_SIZE[0] and 16 <= height <= MAX_SIZE[1]):
            raise ValueError(f"video size must be within {MAX_SIZE[0]}x{MAX_SIZE[1]} (the model's offscreen buffer)")
        if not (1 <= int(fps) <= 120):
            raise ValueError(f"fps must be 1..120, got {fps}")
        view = camera if camera not in (None, "pelvis") else ("track" if camera == "pelvis" else view)
        self.sim, self.path, self.fps, self.label = sim, str(path), int(fps), label
        m = sim.model
        if m.vis.global_.offwidth < width or m.vis.global_.offheight < height:
            raise ValueError(f"model offscreen buffer {m.vis.global_.offwidth}x{m.vis.global_.offheight} "
                             f"is smaller than {width}x{height}")
        m.vis.quality.shadowsize = 0
        m.vis.quality.offsamples = 0
        self.renderer = mujoco.Renderer(m, height=height, width=width)
        self.opt = mujoco.MjvOption()
        self.scene_flags = {mujoco.mjtRndFlag.mjRND_SHADOW: False, mujoco.mjtRndFlag.mjRND_REFLECTION: False,
                            mujoco.mjtRndFlag.mjRND_SKYBOX: True}
        self.view = view
        if view in VIEWS:
            cam = mujoco.MjvCamera()
            cam.type = mujoco.mjtCamera.mjCAMERA_FREE
            if view == "top":
                cam.azimuth, cam.elevation, cam.distance = 90.0, -89.0, distance_m * 1.15
            else:
                cam.azimuth, cam.elevation, cam.distance = azimuth_deg, elevation_deg, distance_m
            self.camera = cam
            self._look = None
        else:
            self.camera = view   # a named model camera
        self.overlay = SupportOverlay() if overlay else None
        self.caption = Caption(width, height) if caption else None
        self._speed_hist = deque()
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        self.gif = self.path.lower().endswith(".gif")
        if self.gif:
            self.writer = imageio.get_writer(self.path, mode="I", duration=1.0 / self.fps)
        else:
            self.writer = imageio.get_writer(self.path, fps=self.fps, quality=6, macro_block_size=8,
                                             codec="libx264", pixelformat="yuv420p",
                                             output_params=["-preset", "veryfast"])
        self.n_frames = 0
        self.next_t = sim.time
        self.closed = False
        self.cost = {"scene_render_ms": 0.0, "overlay_caption_ms": 0.0, "encode_ms": 0.0}   # wall time
        self.cpu_ms = 0.0   # CPU time of this process in render_frame (the encoder is an ffmpeg subprocess)

    # ------------------------------------------------------------------ frame
    def _follow(self, com):
        """Camera look-at: CoM low-passed with a 0.5 s time constant (no pelvis jitter), at fixed height."""
        target = np.array([com[0], com[1], 0.35])
        if self._look is None:
            self._look = target
        else:
            a = 1.0 - np.exp(-1.0 / (self.fps * 0.5))
            self._look = self._look + a * (target - self._look)
        self.camera.lookat[:] = self._look

    def _speed(self, t, com) -> float:
        h = self._speed_hist
        h.append((t, com[0], com[1]))
        while len(h) > 2 and t - h[0][0] > 1.0:
            h.popleft()
        dt = h[-1][0] - h[0][0]
        return float(np.hypot(h[-1][1] - h[0][1], h[-1][2] - h[0][2]) / dt) if dt > 0.2 else float("nan")

    def render_frame(self) -> np.ndarray:
        """One RGB frame (height, width, 3) of the current state with overlay and caption."""
        c0 = time.process_time()
        t0 = time.perf_counter()
        st = SupportState(self.sim) if (self.overlay or self.caption) else None
        if self.view in VIEWS:
            self._follow(st.com if st is not None else self.sim.com())
        self.renderer.update_scene(self.sim.data, camera=self.camera, scene_option=self.opt)
        scn = self.renderer.scene
        for f, v in self.scene_flags.items():
            scn.flags[f] = v
        t1 = time.perf_counter()
        if self.overlay is not None:
            self.overlay.update_trail(self.sim.time, st.com)
            self.overlay.add(scn, st)
        t2 = time.perf_counter()
        img = self.renderer.render()
        t3 = time.perf_counter()
        if self.caption is not None:
            img = np.array(img)   # writable copy
            v = self._speed(self.sim.time, st.com)
            mg = f"{st.margin * 100:+.1f} cm" if np.isfinite(st.margin) else "n/a"
            sp = f"{v:.3f} m/s" if np.isfinite(v) else "... m/s"
            text = f"{self.label or 'sim'} · t {self.sim.time:.1f} s · speed {sp} · margin {mg}"
            self.caption.draw(img, text, st.in_touch)
        t4 = time.perf_counter()
        self.cost["scene_render_ms"] += 1e3 * ((t1 - t0) + (t3 - t2))
        self.cost["overlay_caption_ms"] += 1e3 * ((t2 - t1) + (t4 - t3))
        self.cpu_ms += 1e3 * (time.process_time() - c0)
        return img

    def capture(self):
        img = self.render_frame()
        t0 = time.perf_counter()
        self.writer.append_data(img[::2, ::2] if self.gif else img)
        self.cost["encode_ms"] += 1e3 * (time.perf_counter() - t0)
        self.n_frames += 1

    def maybe_capture(self):
        if self.sim.time + 1e-6 >= self.next_t:
            self.capture()
            self.next_t += 1.0 / self.fps

    def cost_per_frame_ms(self) -> dict:
        n = max(self.n_frames, 1)
        return {k: v / n for k, v in self.cost.items()}

    def cost_line(self) -> str:
        c = self.cost_per_frame_ms()
        w, h = self.renderer.width, self.renderer.height
        return (f"video {self.path}: {self.n_frames} frames {w}x{h} @ {self.fps} fps, per frame "
                f"{sum(c.values()):.1f} ms wall (scene+render {c['scene_render_ms']:.1f}, overlay+caption "
                f"{c['overlay_caption_ms']:.1f}, encode {c['encode_ms']:.1f}), "
                f"{self.cpu_ms / max(self.n_frames, 1):.1f} ms CPU of this process to render; "
                f"MUJOCO_GL={os.environ.get('MUJOCO_GL')}")

    def close(self):
        if not self.closed:
            self.writer.close()
            self.renderer.close()
            self.closed = True
        return self.path


def add_video_args(ap, default_size: str = "1280x720", default_fps: int = 30) -> None:
    """--video-size/--video-fps/--video-view options shared by the commands that film."""
    ap.add_argument("--video-size", default=default_size, help="WIDTHxHEIGHT (default %(default)s, max 1920x1080)")
    ap.add_argument("--video-fps", type=int, default=default_fps, help="frames per second of sim time (%(default)s)")
    ap.add_argument("--video-view", default="track", choices=VIEWS,
                    help="track = three-quarter side view following the robot, top = from above (%(default)s)")


def video_kwargs(args) -> dict:
    """VideoRecorder keyword arguments from the options of :func:`add_video_args` (bad size -> ValueError)."""
    w, h = parse_size(args.video_size)
    return dict(width=w, height=h, fps=args.video_fps, view=args.video_view)


def mp4_to_gif(src: str, dst: str, start_s: float = 0.0, duration_s: float | None = None, speed: float = 1.0,
               fps: int = 8, width: int | None = None, colors: int = 64) -> int:
    """GIF from a video with the ffmpeg bundled by imageio-ffmpeg (one palette for the clip, no dithering, only
    changed rectangles re-encoded). Returns the GIF size in bytes."""
    import imageio_ffmpeg
    if not (speed > 0 and fps > 0 and 2 <= colors <= 256):
        raise ValueError("gif: speed and fps must be > 0, colors 2..256")
    scale = f",scale={int(width)}:-1:flags=lanczos" if width else ""
    vf = (f"setpts=PTS/{speed},fps={fps}{scale},split[a][b];[a]palettegen=max_colors={colors}:stats_mode=diff[p];"
          "[b][p]paletteuse=dither=none:diff_mode=rectangle")
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-loglevel", "error", "-ss", str(start_s)]
    if duration_s:
        cmd += ["-t", str(duration_s)]
    cmd += ["-i", str(src), "-vf", vf, "-loop", "0", str(dst)]
    subprocess.run(cmd, check=True)
    return os.path.getsize(dst)


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", action="store_true", help="print the working GL backend (egl/osmesa) or 'none'")
    ap.add_argument("--gif", nargs=2, metavar=("VIDEO", "GIF"), help="convert a video to a GIF (options below)")
    ap.add_argument("--start", type=float, default=0.0, help="gif: start, s of video")
    ap.add_argument("--duration", type=float, default=None, help="gif: length, s of video (default: to the end)")
    ap.add_argument("--speed", type=float, default=1.0, help="gif: playback speed factor")
    ap.add_argument("--fps", type=int, default=8, help="gif: frames per second")
    ap.add_argument("--width", type=int, default=None, help="gif: width in pixels (default: the video's)")
    ap.add_argument("--colors", type=int, default=64, help="gif: palette size")
    a = ap.parse_args(argv)
    if a.probe:
        b = select_gl_backend()
        print(b or "none")
        return 0 if b else 1
    if a.gif:
        n = mp4_to_gif(a.gif[0], a.gif[1], a.start, a.duration, a.speed, a.fps, a.width, a.colors)
        print(f"{a.gif[1]}: {n / 1e6:.2f} MB")
        return 0
    ap.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
