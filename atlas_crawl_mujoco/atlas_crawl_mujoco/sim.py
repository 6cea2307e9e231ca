"""AtlasSim: a deterministic MuJoCo simulation of the DRC Atlas with team-order joint I/O.

Determinism: MuJoCo is deterministic on one thread for identical inputs; the only randomness is the optional
initial-state noise drawn from ``numpy.random.default_rng(seed)`` in :meth:`AtlasSim.reset`. Same seed + same
inputs → bit-identical trajectory (tested in test/test_sim.py).

Fall definition (used by the crawl/turn gaits, ``fall_check="crawl"``): the controller package's one definition,
``atlas_crawl_controller.fall_detector.FallDetector.check`` (pelvis height, roll about the spine, spine pitch, a
torso/head body touching the floor; thresholds ``fall.*`` in config/gait_sequencer_parameters.yaml), fed with the
simulator's ground truth (pelvis pose and the bodies touching the floor).  :meth:`AtlasSim.fallen` is that
instantaneous check; hosts that need the debounced flag over time (the sim node) feed the same detector's
``update``.  Prone/roll scripts lie on the torso by design, so they use ``fall_check="none"`` (only non-finite
state counts).
"""
from __future__ import annotations

import math
import os
import time

import mujoco
import numpy as np

from atlas_crawl_controller.fall_detector import FallDetector
from atlas_crawl_kinematics.support import crawl_heading_rad

from .model import ModelMap, build_model
from .params import load_params
from .scenes import spawn_frame

MAX_GROUND_POINTS = 16


class AtlasSim:
    """MuJoCo Atlas with the team joint order. See module doc for determinism and the fall definition."""

    def __init__(self, params: dict | None = None, seed: int = 0, model: mujoco.MjModel | None = None):
        self.params = load_params(overrides=params)
        self.model = model if model is not None else build_model(params)
        self.data = mujoco.MjData(self.model)
        self.map = ModelMap(self.model)
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        m = self.model
        self.kp = np.array([m.actuator_gainprm[a, 0] for a in self.map.act_id])
        self.ctrl_lo = m.actuator_ctrlrange[self.map.act_id, 0].copy()
        self.ctrl_hi = m.actuator_ctrlrange[self.map.act_id, 1].copy()
        self.fall_check = "crawl"
        self.fall_detector = FallDetector()   # the controller's fall definition (thresholds: fall.* parameters)
        self._push_end = None                  # sim time at which a push() force ends
        mp = self.map                          # IMU sums over the physics steps since the last imu_mean()
        self._imu_idx = np.r_[mp.imu_gyro_adr:mp.imu_gyro_adr + 3, mp.imu_accel_adr:mp.imu_accel_adr + 3]
        self._imu_sum = np.zeros(6)
        self._imu_n = 0
        self._touch_acc = [False] * 4                # limb touches over the physics steps since touch_period()
        self._geom_code = self.map.geom_limb.tolist()  # plain list: the per-step check costs ~1.4 us, not ~8
        self.spawn_z, self.spawn_quat = spawn_frame(self.model)   # ground under the start pose (scenes.py)
        self._viewer = None
        self._wall0 = None
        self._sim0 = 0.0

    # ------------------------------------------------------------------ state setting
    def reset(self, q=None, base_pos=None, base_quat_wxyz=(1.0, 0.0, 0.0, 0.0), *, drop_clearance_m=0.003,
              noise_rad: float = 0.0, base_xy=(0.0, 0.0), base_yaw_rad: float = 0.0):
        """Reset to joint vector ``q`` (28, team order; or a pose name known to
        ``atlas_crawl_controller.keyframes.named_pose``), servo targets = q, zero velocity.

        If ``base_pos`` is None the pelvis is placed at ``base_xy`` and lowered until the lowest robot geom is
        ``drop_clearance_m`` above the floor (a terrain scene: its spawn plane, and the robot is tilted with it).
        ``base_yaw_rad`` pre-rotates ``base_quat_wxyz`` about world z.
        ``noise_rad`` adds seeded uniform noise (±noise_rad) to the joint angles.
        """
        if isinstance(q, str):
            from atlas_crawl_controller.keyframes import named_pose
            name = q
            q, quat = named_pose(name)
            if base_quat_wxyz == (1.0, 0.0, 0.0, 0.0):
                base_quat_wxyz = quat
        q = np.zeros(28) if q is None else np.asarray(q, dtype=float).copy()
        if q.shape != (28,) or not np.all(np.isfinite(q)):
            raise ValueError("reset: q must be 28 finite joint angles in team order")
        self.rng = np.random.default_rng(self.seed)
        if noise_rad > 0:
            q = q + self.rng.uniform(-noise_rad, noise_rad, 28)
        q = np.clip(q, self.ctrl_lo, self.ctrl_hi)
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self._push_end = None
        self._imu_sum[:] = 0.0
        self._imu_n = 0
        self._touch_acc = [False] * 4
        quat = np.asarray(base_quat_wxyz, dtype=float)
        quat = quat / np.linalg.norm(quat)
        if base_yaw_rad:
            qz = np.array([np.cos(base_yaw_rad / 2), 0, 0, np.sin(base_yaw_rad / 2)])
            out = np.zeros(4)
            mujoco.mju_mulQuat(out, qz, quat)
            quat = out
        if base_pos is None and self.spawn_quat[0] != 1.0:   # sloped scene: start lying on the slope
            out = np.zeros(4)
            mujoco.mju_mulQuat(out, self.spawn_quat, quat)
            quat = out
        d.qpos[0:3] = [base_xy[0], base_xy[1], 2.0] if base_pos is None else base_pos
        d.qpos[3:7] = quat
        d.qpos[self.map.qpos_adr] = q
        mujoco.mj_forward(m, d)
        if base_pos is None:
            n = np.zeros(9)
            mujoco.mju_quat2Mat(n, self.spawn_quat)
            n = n.reshape(3, 3)[:, 2]          # spawn plane normal; the plane holds (0, 0, spawn_z)
            d.qpos[2] += (drop_clearance_m + n[2] * self.spawn_z - self._lowest_point_z(n)) / n[2]   # vertical drop
            mujoco.mj_forward(m, d)
        d.ctrl[self.map.act_id] = q
        self._wall0 = None
        return self

    def _lowest_point_z(self, n=(0.0, 0.0, 1.0)) -> float:
        """Lowest coordinate along unit ``n`` (default z) over all robot collision geoms (exact for
        boxes/capsules/cylinders/spheres)."""
        m, d = self.model, self.data
        n = np.asarray(n, dtype=float)
        zmin = np.inf
        for g in range(m.ngeom):
            if self.map.geom_limb[g] == -2 or m.geom_contype[g] == 0:
                continue
            Rn = n @ d.geom_xmat[g].reshape(3, 3)   # n in the geom frame
            c = float(n @ d.geom_xpos[g])
            s = m.geom_size[g]
            t = m.geom_type[g]
            if t == mujoco.mjtGeom.mjGEOM_SPHERE:
                z = c - s[0]
            elif t == mujoco.mjtGeom.mjGEOM_CAPSULE:
                z = c - abs(Rn[2]) * s[1] - s[0]
            elif t == mujoco.mjtGeom.mjGEOM_CYLINDER:
                z = c - abs(Rn[2]) * s[1] - s[0] * np.sqrt(max(0.0, 1 - Rn[2] ** 2))
            elif t == mujoco.mjtGeom.mjGEOM_BOX:
                z = c - np.sum(np.abs(Rn) * s[:3])
            else:
                z = c - m.geom_rbound[g]
            zmin = min(zmin, z)
        return float(zmin)

    def set_joint_targets(self, q):
        """Servo position targets, (28,) team order, clipped to the joint limits."""
        q = np.asarray(q, dtype=float)
        if q.shape != (28,) or not np.all(np.isfinite(q)):
            raise ValueError("set_joint_targets: need 28 finite values in team order")
        self.data.ctrl[self.map.act_id] = np.clip(q, self.ctrl_lo, self.ctrl_hi)

    def joint_targets(self) -> np.ndarray:
        return self.data.ctrl[self.map.act_id].copy()

    # ------------------------------------------------------------------ stepping
    def step(self, n: int = 1, realtime: bool = False):
        """Advance ``n`` physics steps (1 ms each by default). ``realtime`` paces to the wall clock."""
        m, d = self.model, self.data
        sd, idx, acc = d.sensordata, self._imu_idx, self._imu_sum
        code, touch = self._geom_code, self._touch_acc
        for _ in range(int(n)):
            mujoco.mj_step(m, d)
            acc += sd[idx]
            self._imu_n += 1
            for a, b in d.contact.geom.tolist():      # limb-ground contacts of this step (ModelMap codes)
                ca, cb = code[a], code[b]
                if ca == -2 and 0 <= cb < 4:
                    touch[cb] = True
                elif cb == -2 and 0 <= ca < 4:
                    touch[ca] = True
            if self._push_end is not None and d.time >= self._push_end - 1e-9:
                d.xfrc_applied[self.map.pelvis, :] = 0.0
                self._push_end = None
        if realtime:
            if self._wall0 is None:
                self._wall0, self._sim0 = time.perf_counter(), d.time
            lag = (d.time - self._sim0) - (time.perf_counter() - self._wall0)
            if lag > 0:
                time.sleep(lag)
        if self._viewer is not None:
            if self._viewer.is_running():
                self._viewer.sync()

    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def dt(self) -> float:
        return float(self.model.opt.timestep)

    # ------------------------------------------------------------------ reading
    def joint_q(self) -> np.ndarray:
        return self.data.qpos[self.map.qpos_adr].copy()

    def joint_qd(self) -> np.ndarray:
        return self.data.qvel[self.map.dof_adr].copy()

    def joint_effort(self) -> np.ndarray:
        """Servo torques (N·m), team order."""
        return self.data.actuator_force[self.map.act_id].copy()

    def pelvis_pose(self):
        """(position (3,), quaternion wxyz (4,)) of the pelvis in the world."""
        return self.data.qpos[0:3].copy(), self.data.qpos[3:7].copy()

    def pelvis_twist(self):
        """(linear velocity world (3,), angular velocity world (3,)) of the pelvis origin."""
        v = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self.map.pelvis, v, 0)
        return v[3:6].copy(), v[0:3].copy()

    def imu_true(self):
        """Noise-free IMU at the pelvis origin, pelvis axes: (angular velocity (3,) rad/s, specific force (3,) m/s²;
        +9.81 along the up axis at rest). From the MuJoCo gyro/accelerometer sensors of the last step; noise and bias:
        :class:`atlas_crawl_mujoco.sensors.SensorNoise`."""
        sd, mp = self.data.sensordata, self.map
        return sd[mp.imu_gyro_adr:mp.imu_gyro_adr + 3].copy(), sd[mp.imu_accel_adr:mp.imu_accel_adr + 3].copy()

    def imu_mean(self):
        """The IMU as a real one outputs it: (angular velocity (3,), specific force (3,)), pelvis axes, each the mean
        over the physics steps since the previous call (a MEMS IMU low-pass filters and decimates its internal
        samples; an instantaneous sample of 1 kHz contact-rich physics aliases the contact impulses). Resets the
        sums; with no step since, the instantaneous :meth:`imu_true`."""
        if self._imu_n == 0:
            return self.imu_true()
        mean = self._imu_sum / self._imu_n
        self._imu_sum[:] = 0.0
        self._imu_n = 0
        return mean[:3], mean[3:]

    def com(self) -> np.ndarray:
        """Whole-body centre of mass, world frame."""
        return self.data.subtree_com[0].copy()

    def contact_site_pos(self) -> np.ndarray:
        """(4,3) world positions of LW, RW, LK, RK contact frames."""
        return self.data.site_xpos[self.map.site_contact].copy()

    def sole_pos(self) -> np.ndarray:
        return self.data.site_xpos[self.map.site_sole].copy()

    def heading_rad(self) -> float:
        """Crawl heading: see ``atlas_crawl_kinematics.support.crawl_heading_rad`` (pelvis z projection)."""
        return crawl_heading_rad(self.data.xmat[self.map.pelvis].reshape(3, 3))

    def torso_roll_rad(self) -> float:
        R = self.data.xmat[self.map.utorso].reshape(3, 3)
        return float(np.arcsin(np.clip(R[2, 1], -1, 1)))

    def floor_contacts(self):
        """List of (limb_code, world point (3,), normal force N, geom id) for every robot-floor contact.

        limb_code: 0..3 = LW,RW,LK,RK support geoms, 4/5 = left/right foot, -1 any other robot geom.
        The floor is every ground geom of the scene (ModelMap code -2; a scene's ceiling, -3, is not floor).
        """
        m, d = self.model, self.data
        out = []
        f6 = np.zeros(6)
        code = self.map.geom_limb
        for i in range(d.ncon):
            c = d.contact[i]
            if code[c.geom1] == -2:
                g = c.geom2
            elif code[c.geom2] == -2:
                g = c.geom1
            else:
                continue
            mujoco.mj_contactForce(m, d, i, f6)
            out.append((int(self.map.geom_limb[g]), c.pos.copy(), float(f6[0]), int(g)))
        return out

    def touch_period(self) -> np.ndarray:
        """(4,) bool: each limb touched the ground in at least one physics step since the previous call (or the
        reset). The contacts chatter at the millisecond scale (1-3 ms on/off runs while a limb rocks on the ground),
        so this, not a snapshot, is the ground truth of a sample period (as the contact-inference evaluation's
        ``truth_period``)."""
        out = np.array(self._touch_acc, dtype=bool)
        self._touch_acc[:] = [False] * 4
        return out

    def limb_contacts(self):
        """Ground truth per limb LW,RW,LK,RK: (in_touch (4,) bool, normal force (4,) N)."""
        touch = np.zeros(4, dtype=bool)
        force = np.zeros(4)
        for limb, _p, fn, _g in self.floor_contacts():
            if 0 <= limb < 4:
                touch[limb] = True
                force[limb] += fn
        return touch, force

    def ground_points(self, max_points: int = MAX_GROUND_POINTS) -> np.ndarray:
        """(max_points,3) all robot-floor contact points, padded with NaN (extra points dropped)."""
        pts = np.full((max_points, 3), np.nan)
        cs = self.floor_contacts()
        for k, (_l, p, _f, _g) in enumerate(cs[:max_points]):
            pts[k] = p
        return pts

    def push(self, impulse_ns, duration_s: float = 0.1):
        """Push the pelvis: a constant world force ``impulse_ns / duration_s`` (N) at the pelvis origin for the next
        ``duration_s`` of sim time (cleared inside :meth:`step`). ``impulse_ns``: (3,) N·s, world frame."""
        j = np.asarray(impulse_ns, dtype=float).reshape(3)
        if not np.all(np.isfinite(j)) or not (math.isfinite(duration_s) and duration_s > 0):
            raise ValueError("push: impulse must be 3 finite numbers and duration_s > 0")
        self.data.xfrc_applied[self.map.pelvis, :3] = j / duration_s
        self.data.xfrc_applied[self.map.pelvis, 3:] = 0.0
        self._push_end = self.data.time + duration_s

    def pelvis_pose_xyzw(self) -> np.ndarray:
        """Pelvis pose as [x y z qx qy qz qw] (the ROS / controller convention)."""
        p, q = self.pelvis_pose()
        return np.array([p[0], p[1], p[2], q[1], q[2], q[3], q[0]])

    def floor_bodies(self) -> set:
        """Names of the robot bodies touching the floor (ground truth)."""
        return {mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_BODY, self.model.geom_bodyid[g])
                for _l, _p, _f, g in self.floor_contacts()}

    def fallen(self):
        """(fell: bool, reason: str): FallDetector.check on the ground truth (see the module doc)."""
        d = self.data
        if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
            return True, "non-finite state"
        if self.fall_check == "none":
            return False, ""
        return self.fall_detector.check(self.pelvis_pose_xyzw(), self.floor_bodies())

    # ------------------------------------------------------------------ people
    def launch_viewer(self) -> bool:
        """Passive mujoco.viewer window if a display exists; returns whether one was opened."""
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            return False
        import mujoco.viewer
        self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
        return True

    def close(self):
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None
