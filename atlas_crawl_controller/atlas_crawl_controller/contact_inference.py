"""Contact (stance) inference for the four crawling contacts LW, RW, LK, RK — plain Python, no ROS.

Three estimators, selectable by the ``method`` parameter (config/contact_inference_parameters.yaml):

* :class:`HeightEstimator` — thesis §3.4.1: a contact point is in stance when its height above the ground is below a
  threshold (with hysteresis so a limb hovering at the threshold does not chatter).
* :class:`VelocityEstimator` — thesis §4.3.2: a limb is in stance when its horizontal speed is below
  ``ratio`` (0.1) × the maximum horizontal speed that limb reached over a sliding window.  If the maximum itself is
  tiny (robot at rest) every limb is in stance.
* :class:`FusionEstimator` — contact-model fusion (Bledt et al. 2018; thesis §5.4): per limb a two-state Bayes
  filter whose prior is the gait phase's expected contact and whose evidence is the limb's ground clearance from its
  collision geometry (atlas_crawl_kinematics.clearance). The default.
* :class:`EffortEstimator` — the thesis' future work: loading inferred from joint efforts.  Per limb one or more
  joints' filtered absolute torques are summed and compared with an on/off threshold pair (hysteresis).  Thresholds
  are per limb; calibrate them with ``contact_inference_eval`` (precision/recall against the simulator's contacts).

All estimators take the same per-sample input: time [s], contact-point positions (4, 3) in the world frame (z up,
ground at ``ground_height_m``), joint efforts (28,) in the team joint order.  They never raise on NaN input: a
non-finite sample leaves the previous decision unchanged and sets confidence to 0 for the affected limb.

:func:`support_from_contacts` turns a decision into the support polygon, CoM projection and signed static
stability margin (atlas_crawl_kinematics.support), and :func:`precision_recall` scores a decision sequence against
ground truth.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Dict, Optional, Sequence

import numpy as np

from atlas_description import JOINT_INDEX, LIMB_NAMES

from .parameters import ParamValues, load_parameter_file

__all__ = [
    "METHODS",
    "ContactEvidence",
    "Evidence",
    "ForceKalmanFilter",
    "make_evidence",
    "ContactEstimate",
    "HeightEstimator",
    "VelocityEstimator",
    "EffortEstimator",
    "FusionEstimator",
    "ContactInference",
    "SupportEstimate",
    "support_from_contacts",
    "precision_recall",
    "default_parameters",
]

METHODS = ("height", "velocity", "effort", "fusion")
PARAMETER_FILE = "contact_inference_parameters.yaml"


def default_parameters() -> ParamValues:
    return load_parameter_file(PARAMETER_FILE).values()


@dataclass
class ContactEstimate:
    in_contact: np.ndarray  # (4,) bool, order LW RW LK RK
    confidence: np.ndarray  # (4,) in [0, 1]
    method: str
    reasons: tuple = ()     # why limbs were held (non-finite inputs); empty when every limb was updated


def _check_inputs(contact_pos, efforts):
    p = np.asarray(contact_pos, dtype=float)
    if p.shape != (4, 3):
        raise ValueError(f"contact positions must have shape (4, 3) (LW RW LK RK × xyz); got {p.shape}")
    e = None
    if efforts is not None:
        e = np.asarray(efforts, dtype=float)
        if e.shape != (28,):
            raise ValueError(f"joint efforts must have shape (28,) in the team order; got {e.shape}")
    return p, e


class HeightEstimator:
    """Thesis §3.4.1: stance while height < threshold; leaves stance above threshold + hysteresis."""

    name = "height"

    def __init__(self, threshold_m: float, hysteresis_m: float, ground_height_m: float = 0.0):
        self.threshold_m = float(threshold_m)
        self.hysteresis_m = float(hysteresis_m)
        self.ground_height_m = float(ground_height_m)
        self.reset()

    def reset(self):
        self.state = np.ones(4, dtype=bool)

    def update(self, t_s: float, contact_pos, efforts=None) -> ContactEstimate:
        p, _ = _check_inputs(contact_pos, efforts)
        h = p[:, 2] - self.ground_height_m
        conf = np.zeros(4)
        for i in range(4):
            if not np.isfinite(h[i]):
                continue
            if self.state[i]:
                self.state[i] = h[i] < self.threshold_m + self.hysteresis_m
            else:
                self.state[i] = h[i] < self.threshold_m
            # Confidence: distance from the switching threshold, saturating at one threshold width.
            conf[i] = float(np.clip(abs(h[i] - self.threshold_m) / max(self.threshold_m, 1e-6), 0.0, 1.0))
        return ContactEstimate(self.state.copy(), conf, self.name)


class VelocityEstimator:
    """Thesis §4.3.2: stance when horizontal speed < ratio × the limb's max horizontal speed over a window."""

    name = "velocity"

    def __init__(self, window_s: float, ratio: float, min_max_speed_mps: float, filter_tau_s: float):
        self.window_s = float(window_s)
        self.ratio = float(ratio)
        self.min_max_speed_mps = float(min_max_speed_mps)
        self.filter_tau_s = float(filter_tau_s)
        self.reset()

    def reset(self):
        self._last_t: Optional[float] = None
        self._last_p: Optional[np.ndarray] = None
        self._speed = np.zeros(4)
        self._hist: deque = deque()  # (t, speeds(4,))
        self.state = np.ones(4, dtype=bool)

    def update(self, t_s: float, contact_pos, efforts=None) -> ContactEstimate:
        p, _ = _check_inputs(contact_pos, efforts)
        t = float(t_s)
        conf = np.zeros(4)
        finite = np.all(np.isfinite(p), axis=1)
        if self._last_t is None or not np.isfinite(t) or t <= self._last_t or self._last_p is None:
            if np.isfinite(t) and (self._last_t is None or t < self._last_t):
                # first sample or time went backwards (sim reset): restart the history
                self._hist.clear()
                self._last_t = t
                self._last_p = np.where(finite[:, None], p, np.nan)
            return ContactEstimate(self.state.copy(), conf, self.name)
        dt = t - self._last_t
        v = np.linalg.norm((p[:, :2] - self._last_p[:, :2]) / dt, axis=1)
        ok = np.isfinite(v)
        a = dt / (self.filter_tau_s + dt) if self.filter_tau_s > 0 else 1.0
        self._speed[ok] = (1 - a) * self._speed[ok] + a * v[ok]
        self._last_t = t
        self._last_p = np.where(finite[:, None], p, self._last_p)
        self._hist.append((t, self._speed.copy()))
        while self._hist and self._hist[0][0] < t - self.window_s:
            self._hist.popleft()
        vmax = np.max(np.stack([s for _, s in self._hist]), axis=0)
        for i in range(4):
            if not ok[i]:
                continue
            if vmax[i] < self.min_max_speed_mps:
                self.state[i] = True
                conf[i] = 1.0
                continue
            thr = self.ratio * vmax[i]
            self.state[i] = self._speed[i] < thr
            conf[i] = float(np.clip(abs(self._speed[i] - thr) / thr, 0.0, 1.0))
        return ContactEstimate(self.state.copy(), conf, self.name)


class EffortEstimator:
    """Loading from joint efforts: Σ filtered |τ_j| over each limb's joints vs per-limb on/off thresholds."""

    name = "effort"

    def __init__(self, joints: Sequence[Sequence[str]], on_threshold_nm: Sequence[float],
                 off_threshold_nm: Sequence[float], filter_tau_s: float):
        if len(joints) != 4 or len(on_threshold_nm) != 4 or len(off_threshold_nm) != 4:
            raise ValueError("effort estimator needs 4 joint groups and 4 on/off thresholds (LW RW LK RK)")
        self.indices = []
        for group in joints:
            idx = []
            for j in group:
                if j not in JOINT_INDEX:
                    raise ValueError(f"unknown joint {j!r}")
                idx.append(JOINT_INDEX[j])
            if not idx:
                raise ValueError("every limb needs at least one joint")
            self.indices.append(np.array(idx))
        self.on = np.asarray(on_threshold_nm, dtype=float)
        self.off = np.asarray(off_threshold_nm, dtype=float)
        if np.any(self.off > self.on):
            raise ValueError("effort off thresholds must be <= on thresholds (hysteresis)")
        self.filter_tau_s = float(filter_tau_s)
        self.reset()

    def reset(self):
        self._last_t: Optional[float] = None
        self._load = np.zeros(4)
        self.state = np.ones(4, dtype=bool)

    def load(self, efforts) -> np.ndarray:
        e = np.asarray(efforts, dtype=float)
        return np.array([np.sum(np.abs(e[idx])) for idx in self.indices])

    def update(self, t_s: float, contact_pos, efforts=None) -> ContactEstimate:
        _check_inputs(np.zeros((4, 3)) if contact_pos is None else contact_pos, efforts)
        conf = np.zeros(4)
        if efforts is None:
            return ContactEstimate(self.state.copy(), conf, self.name)
        raw = self.load(efforts)
        t = float(t_s)
        ok = np.isfinite(raw)
        if self._last_t is None or not np.isfinite(t) or t < self._last_t:
            self._load[ok] = raw[ok]
        else:
            dt = t - self._last_t
            a = dt / (self.filter_tau_s + dt) if self.filter_tau_s > 0 else 1.0
            self._load[ok] = (1 - a) * self._load[ok] + a * raw[ok]
        if np.isfinite(t):
            self._last_t = t
        for i in range(4):
            if not ok[i]:
                continue
            if self.state[i]:
                self.state[i] = self._load[i] >= self.off[i]
            else:
                self.state[i] = self._load[i] >= self.on[i]
            mid = 0.5 * (self.on[i] + self.off[i])
            conf[i] = float(np.clip(abs(self._load[i] - mid) / max(mid, 1e-6), 0.0, 1.0))
        return ContactEstimate(self.state.copy(), conf, self.name)


def _logit_normal_cdf(z: np.ndarray) -> np.ndarray:
    """``log Φ(z) − log(1 − Φ(z))`` for the standard normal CDF Φ, stable for |z| ≤ 8 (z is clipped there)."""
    zc = np.clip(np.asarray(z, dtype=float), -8.0, 8.0)
    up = np.array([math.erfc(-v / math.sqrt(2.0)) for v in zc.reshape(-1)]).reshape(zc.shape)
    dn = np.array([math.erfc(v / math.sqrt(2.0)) for v in zc.reshape(-1)]).reshape(zc.shape)
    return np.log(up) - np.log(dn)


class ForceKalmanFilter:
    """Per limb, a Kalman filter on the limb's contact force ``f`` (3,) [N, world] from joint torques (thesis §5.4):

    * model ``b_i = J_iᵀ f_i + v``, ``v ~ N(0, σ_τ,i² I)``: the static torque residual of the limb's own joints
      (atlas_crawl_kinematics.limb_contact; unmodelled limb inertia and damping are in σ_τ);
    * process: f decays to 0 with time constant ``tau_s`` and stationary standard deviation ``sigma0_n``
      (Ornstein–Uhlenbeck: ``f ← a f``, ``P ← a² P + σ0² (1 − a²) I``, ``a = exp(−Δt/τ)``), so a direction the
      joints cannot sense (a knee force through the hip centre) returns to the prior and its variance stays bounded;
    * update: ``S = Jᵀ P J + R``, ``K = P J S⁻¹``, ``f ← f + K (b − Jᵀ f)``, ``P ← (I − K Jᵀ) P``.

    Non-finite Jacobian or residual of a limb: that limb is not updated (prediction only) and the reason is returned.
    """

    def __init__(self, torque_noise_nm: Sequence[float], sigma0_n: float, tau_s: float, n_limbs: int = 4):
        sig = np.asarray(torque_noise_nm, dtype=float).reshape(-1)
        if sig.shape != (n_limbs,) or not np.all(np.isfinite(sig)) or np.any(sig <= 0):
            raise ValueError(f"force filter: torque_noise_nm must be {n_limbs} positive numbers, got {sig}")
        if not (math.isfinite(sigma0_n) and sigma0_n > 0 and math.isfinite(tau_s) and tau_s > 0):
            raise ValueError(f"force filter: sigma0_n and tau_s must be > 0, got {sigma0_n}, {tau_s}")
        self.sigma_tau = sig
        self.sigma0 = float(sigma0_n)
        self.tau = float(tau_s)
        self.n = n_limbs
        self.reset()

    def reset(self):
        self.f = np.zeros((self.n, 3))
        self.P = np.tile(np.eye(3) * self.sigma0 ** 2, (self.n, 1, 1))
        self._t: Optional[float] = None

    def update(self, t_s: float, jacobians, residuals):
        """One step; ``jacobians[i]`` (3, n_i) world rows, ``residuals[i]`` (n_i,). Returns (f (L,3), P (L,3,3),
        reasons list)."""
        reasons = []
        t = float(t_s)
        if not math.isfinite(t):
            return self.f.copy(), self.P.copy(), ["force filter: non-finite time, held"]
        dt = 0.0 if self._t is None or t <= self._t else t - self._t
        self._t = t if self._t is None or t > self._t else self._t
        a = math.exp(-dt / self.tau)
        self.f *= a
        self.P = a * a * self.P + (1.0 - a * a) * self.sigma0 ** 2 * np.eye(3)
        for i in range(self.n):
            J = np.asarray(jacobians[i], dtype=float)
            b = np.asarray(residuals[i], dtype=float).reshape(-1)
            if J.ndim != 2 or J.shape[0] != 3 or J.shape[1] != b.size:
                raise ValueError(f"force filter: limb {i}: Jacobian {J.shape} does not match residual {b.shape}")
            if not (np.all(np.isfinite(J)) and np.all(np.isfinite(b))):
                reasons.append(f"{LIMB_NAMES[i]}: non-finite joint torque or Jacobian, force prediction only")
                continue
            P = self.P[i]
            S = J.T @ P @ J + self.sigma_tau[i] ** 2 * np.eye(b.size)
            K = np.linalg.solve(S, J.T @ P).T                  # P J S⁻¹ (S symmetric)
            self.f[i] = self.f[i] + K @ (b - J.T @ self.f[i])
            P = P - K @ J.T @ P
            self.P[i] = 0.5 * (P + P.T)
        return self.f.copy(), self.P.copy(), reasons


class FusionEstimator:
    """Contact-model fusion (Bledt et al. 2018), per limb a two-state (swing/stance) Bayes filter in log-odds ℓ:

    * predict: ``P ← P(1 − ε) + (1 − P) ε`` (``ε = switch_probability`` per sample), ``ℓ = logit P``;
    * gait-phase prior: ``+ phase_logodds`` if the running step expects the limb down, ``−`` if lifted (none: 0);
    * height: ``+ clip((clearance_threshold_m − h) / clearance_scale_m, ±max_evidence_logodds)``, h the clearance
      of the limb's lowest collision point above the ground;
    * velocity: ``+ clip((speed_threshold_mps − v) / speed_scale_mps, ±max_speed_logodds)``, v the speed of the
      contact material point (it stands still in stance, thesis §4.3.2);
    * force: ``+ clip(logit Φ((f_z − force_threshold_n) / √(force_scale_n² + P_zz)), ±max_force_logodds)``, f_z the
      torque-based vertical contact force and P_zz its variance (:class:`ForceKalmanFilter`; an unobservable
      force gives ≈ 0 evidence, Bledt's force model ``P(c | f) = Φ((f − μ)/σ)``);
    * decide with hysteresis: stance above ``0.5 + hysteresis``, swing below ``0.5 − hysteresis``.

    Cues passed as None are not used. A non-finite cue of a limb (or a non-finite clearance): the limb's filter
    holds (no update), confidence 0, and the reason is reported in ``ContactEstimate.reasons``.
    """

    name = "fusion"

    def __init__(self, switch_probability: float, phase_logodds: float, clearance_threshold_m: float,
                 clearance_scale_m: float, max_evidence_logodds: float, hysteresis: float,
                 speed_threshold_mps: float = 0.05, speed_scale_mps: float = 0.02, max_speed_logodds: float = 0.0,
                 force_threshold_n: float = 50.0, force_scale_n: float = 30.0, max_force_logodds: float = 0.0):
        if not 0.0 < switch_probability < 0.5:
            raise ValueError(f"fusion.switch_probability must be in (0, 0.5), got {switch_probability}")
        if not clearance_scale_m > 0.0:
            raise ValueError(f"fusion.clearance_scale_m must be > 0, got {clearance_scale_m}")
        if not 0.0 <= hysteresis < 0.5:
            raise ValueError(f"fusion.hysteresis must be in [0, 0.5), got {hysteresis}")
        if not (speed_scale_mps > 0.0 and force_scale_n > 0.0):
            raise ValueError(f"fusion.speed_scale_mps and force_scale_n must be > 0, got {speed_scale_mps}, "
                             f"{force_scale_n}")
        if min(max_evidence_logodds, max_speed_logodds, max_force_logodds) < 0.0:
            raise ValueError("fusion.max_*_logodds must be >= 0")
        self.eps = float(switch_probability)
        self.phase_logodds = float(phase_logodds)
        self.d0 = float(clearance_threshold_m)
        self.scale = float(clearance_scale_m)
        self.lmax = float(max_evidence_logodds)
        self.hyst = float(hysteresis)
        self.v0, self.vs, self.vmax = float(speed_threshold_mps), float(speed_scale_mps), float(max_speed_logodds)
        self.f0, self.fs, self.fmax = float(force_threshold_n), float(force_scale_n), float(max_force_logodds)
        self.reset()

    def reset(self):
        self.p = np.full(4, 0.9)
        self.state = np.ones(4, dtype=bool)
        self.evidence = np.zeros((4, 4))   # last (prior, height, velocity, force) log-odds per limb (diagnostics)

    def evidence_logodds(self, clearance, expected=None, speed=None, force=None, force_var=None):
        """(4, 4) log-odds per limb of (gait prior, height, velocity, force) and the (4,) mask of limbs whose given
        cues are all finite. Pure function of the inputs."""
        d = np.asarray(clearance, dtype=float).reshape(4)
        ok = np.isfinite(d)
        ev = np.zeros((4, 4))
        if expected is not None:
            ev[:, 0] = np.where(np.asarray(expected, dtype=bool).reshape(4), self.phase_logodds, -self.phase_logodds)
        ev[:, 1] = np.clip((self.d0 - np.where(ok, d, self.d0)) / self.scale, -self.lmax, self.lmax)
        if speed is not None and self.vmax > 0:
            v = np.asarray(speed, dtype=float).reshape(4)
            ok &= np.isfinite(v)
            ev[:, 2] = np.clip((self.v0 - np.where(np.isfinite(v), v, self.v0)) / self.vs, -self.vmax, self.vmax)
        if force is not None and self.fmax > 0:
            f = np.asarray(force, dtype=float).reshape(4)
            var = np.zeros(4) if force_var is None else np.asarray(force_var, dtype=float).reshape(4)
            fin = np.isfinite(f) & np.isfinite(var) & (var >= 0)
            ok &= fin
            z = (np.where(fin, f, self.f0) - self.f0) / np.sqrt(self.fs ** 2 + np.where(fin, var, 0.0))
            ev[:, 3] = np.clip(_logit_normal_cdf(z), -self.fmax, self.fmax)
        return ev, ok

    def update(self, t_s: float, contact_pos, efforts=None, clearance=None, expected=None, speed=None, force=None,
               force_var=None) -> ContactEstimate:
        _check_inputs(np.zeros((4, 3)) if contact_pos is None else contact_pos, efforts)
        conf = np.zeros(4)
        if clearance is None:
            return ContactEstimate(self.state.copy(), conf, self.name, ("no clearance: all limbs held",))
        ev, ok = self.evidence_logodds(clearance, expected, speed, force, force_var)
        pred = self.p * (1.0 - self.eps) + (1.0 - self.p) * self.eps
        logit = np.log(pred / (1.0 - pred)) + ev.sum(axis=1)
        post = 1.0 / (1.0 + np.exp(-np.clip(logit, -30.0, 30.0)))
        self.p = np.where(ok, np.clip(post, 1e-6, 1 - 1e-6), self.p)
        self.evidence = np.where(ok[:, None], ev, self.evidence)
        self.state = np.where(ok & (self.p > 0.5 + self.hyst), True,
                              np.where(ok & (self.p < 0.5 - self.hyst), False, self.state))
        conf[ok] = np.abs(2.0 * self.p[ok] - 1.0)
        reasons = tuple(f"{LIMB_NAMES[i]}: non-finite contact measurement, held" for i in np.flatnonzero(~ok))
        return ContactEstimate(self.state.copy(), conf, self.name, reasons)


@dataclass
class Evidence:
    """Per-sample fusion measurements (limb order LW RW LK RK); NaN where a quantity is not available."""
    clearance: np.ndarray   # (4,) [m] lowest collision point above the ground
    point: np.ndarray       # (4, 3) [m] that point, world
    speed: np.ndarray       # (4,) [m/s] low-pass speed of the contact material point
    force: np.ndarray       # (4,) [N] torque-based vertical contact force (Kalman filter mean); NaN without efforts
    force_var: np.ndarray   # (4,) [N²] its variance
    reasons: tuple = ()


class ContactEvidence:
    """Measurement front end of the fusion: joints, pelvis pose and joint efforts → :class:`Evidence`.

    Kinematics (atlas_crawl_kinematics.limb_contact.LimbContactModel on our URDF model) give each limb's lowest
    collision point and clearance; the material point's velocity v is the backward difference against the previous
    sample, its speed ``|v|_k = √(v_z² + (k |v_xy|)²)`` (``k = horizontal_speed_weight``: a stance limb that slides
    along the floor is still in contact, a swing limb leaves it vertically), low-passed with ``speed_filter_tau_s``
    (``v̄ ← v̄ + a (|v|_k − v̄)``, ``a = Δt / (τ + Δt)``); the vertical
    contact force is :class:`ForceKalmanFilter`'s (``None``: no force cue). The clearance is taken above the ground
    under the lowest point: the height map's (``ground_source`` "map", :meth:`set_ground_map`, bilinear) where it is
    fresh and known, else the plane at ``ground_height_m`` (:attr:`ground_reason` says why).

    Defined behaviour on bad input: non-finite joints or pose → every quantity NaN (the fusion then holds) and a
    reason; non-finite efforts → force NaN and a reason; the first sample and a time step ≤ 0 give no speed (NaN,
    a later sample recovers); time going backwards (simulator reset) restarts the history.
    """

    def __init__(self, limb_model, ground_height_m: float = 0.0, speed_filter_tau_s: float = 0.0,
                 force_filter: Optional[ForceKalmanFilter] = None, ground_source: str = "flat",
                 map_max_age_s: float = 2.0, horizontal_speed_weight: float = 1.0):
        if not (math.isfinite(speed_filter_tau_s) and speed_filter_tau_s >= 0):
            raise ValueError(f"speed_filter_tau_s must be >= 0, got {speed_filter_tau_s}")
        if ground_source not in ("map", "flat"):
            raise ValueError(f"ground_source must be map or flat, got {ground_source!r}")
        if not (math.isfinite(map_max_age_s) and map_max_age_s > 0):
            raise ValueError(f"map_max_age_s must be > 0, got {map_max_age_s}")
        if not (math.isfinite(horizontal_speed_weight) and 0.0 <= horizontal_speed_weight <= 1.0):
            raise ValueError(f"horizontal_speed_weight must be in [0, 1], got {horizontal_speed_weight}")
        self.limb_model = limb_model
        self.k_h = float(horizontal_speed_weight)
        self.ground_height_m = float(ground_height_m)
        self.tau_v = float(speed_filter_tau_s)
        self.force_filter = force_filter
        self.ground_source = ground_source
        self.map_max_age_s = float(map_max_age_s)
        self._map = None
        #: "" while the clearance is taken above the map, else why the plane at ground_height_m is used
        self.ground_reason = "flat ground (ground_height_source flat)" if ground_source == "flat" else "no height map"
        self.reset()

    def set_ground_map(self, height_map) -> None:
        """The latest height map: an object with ``heights_at(xy)`` (NaN off the map / unknown) and ``stamp_s``,
        e.g. :class:`atlas_crawl_controller.height_map.HeightMap`. None forgets it."""
        self._map = height_map

    @property
    def ground_map(self):
        """The map :meth:`set_ground_map` gave last (None: none)."""
        return self._map

    def _ground(self, t: float, point: np.ndarray) -> np.ndarray:
        """(4,) ground height under each limb's lowest point (see the class doc)."""
        g = np.full(4, self.ground_height_m)
        if self.ground_source != "map":
            return g
        m = self._map
        if m is None or not (0.0 <= t - m.stamp_s <= self.map_max_age_s):
            self.ground_reason = "no height map" if m is None else "height map stale"
            return g
        h = m.heights_at(point[:, :2])
        ok = np.isfinite(h)
        g[ok] = h[ok]
        self.ground_reason = "" if ok.all() else "height map unknown under a limb"
        return g

    def reset(self):
        self._prev = None
        self._t: Optional[float] = None
        self._speed = np.full(4, np.nan)
        if self.force_filter is not None:
            self.force_filter.reset()

    def update(self, t_s: float, q, pose7, efforts=None) -> Evidence:
        from atlas_crawl_kinematics.rotations import quat_xyzw_to_R
        nan4 = np.full(4, np.nan)
        q = np.asarray(q, dtype=float).reshape(-1)
        pose = np.asarray(pose7, dtype=float).reshape(-1)
        if q.shape != (self.limb_model.model.n_joints,) or pose.shape != (7,):
            raise ValueError(f"contact evidence: q must be ({self.limb_model.model.n_joints},) and the pose (7,); "
                             f"got {q.shape}, {pose.shape}")
        t = float(t_s)
        qn = float(np.linalg.norm(pose[3:])) if np.all(np.isfinite(pose)) else float("nan")
        if not (np.all(np.isfinite(q)) and math.isfinite(t) and 0.5 < qn < 1.5):
            return Evidence(nan4, np.full((4, 3), np.nan), nan4.copy(), nan4.copy(), nan4.copy(),
                            ("non-finite joints, pose or time: no contact measurement",))
        if self._t is not None and t < self._t:
            self.reset()
        s = self.limb_model.evaluate(q, quat_xyzw_to_R(pose[3:] / qn), pose[:3], 0.0)
        s.clearance = s.point[:, 2] - self._ground(t, s.point)
        reasons = []
        if self._prev is not None and t > self._t:
            dt = t - self._t
            vel = s.material_velocity(self._prev, dt)
            v = np.hypot(vel[:, 2], self.k_h * np.linalg.norm(vel[:, :2], axis=1))
            a = dt / (self.tau_v + dt) if self.tau_v > 0 else 1.0
            self._speed = np.where(np.isfinite(self._speed), self._speed + a * (v - self._speed), v)
        if self._t is None or t > self._t:
            self._prev, self._t = s, t
        force, var = nan4.copy(), nan4.copy()
        if self.force_filter is not None and efforts is not None:
            e = np.asarray(efforts, dtype=float).reshape(-1)
            if e.shape != q.shape:
                raise ValueError(f"contact evidence: efforts must be {q.shape}, got {e.shape}")
            if np.all(np.isfinite(e)):
                f, P, why = self.force_filter.update(t, s.jacobians, self.limb_model.force_residuals(s, e))
                force, var = f[:, 2], P[:, 2, 2]
                reasons += why
            else:
                reasons.append("non-finite joint efforts: no force cue")
        return Evidence(s.clearance.copy(), s.point.copy(), self._speed.copy(), force, var, tuple(reasons))


def make_evidence(p: ParamValues, model, urdf: str) -> ContactEvidence:
    """The :class:`ContactEvidence` the parameters ``p`` describe, on robot ``model`` built from ``urdf``."""
    from atlas_crawl_kinematics.limb_contact import LimbContactModel
    from atlas_description import LIMB_LINKS
    kf = ForceKalmanFilter(p["fusion.torque_noise_nm"], p["fusion.force_prior_std_n"],
                           p["fusion.force_time_constant_s"])
    return ContactEvidence(LimbContactModel(model, urdf, LIMB_LINKS), p["ground_height_m"],
                           p["fusion.speed_filter_tau_s"], kf, p["ground_height_source"], p["ground_map_max_age_s"],
                           p["fusion.horizontal_speed_weight"])


def make_estimator(method: str, p: ParamValues):
    if method == "height":
        return HeightEstimator(p["height.threshold_m"], p["height.hysteresis_m"], p["ground_height_m"])
    if method == "velocity":
        return VelocityEstimator(p["velocity.window_s"], p["velocity.ratio"], p["velocity.min_max_speed_mps"],
                                 p["velocity.filter_tau_s"])
    if method == "effort":
        groups = [p[f"effort.joints_{limb.lower()}"] for limb in LIMB_NAMES]
        return EffortEstimator(groups, p["effort.on_threshold_nm"], p["effort.off_threshold_nm"],
                               p["effort.filter_tau_s"])
    if method == "fusion":
        return FusionEstimator(p["fusion.switch_probability"], p["fusion.phase_logodds"],
                               p["fusion.clearance_threshold_m"], p["fusion.clearance_scale_m"],
                               p["fusion.max_evidence_logodds"], p["fusion.hysteresis"],
                               p["fusion.speed_threshold_mps"], p["fusion.speed_scale_mps"],
                               p["fusion.max_speed_logodds"], p["fusion.force_threshold_n"],
                               p["fusion.force_scale_n"], p["fusion.max_force_logodds"])
    raise ValueError(f"unknown contact inference method {method!r} (known: {METHODS})")


class ContactInference:
    """Runs the estimator selected by ``params.method``; :meth:`set_params` validates by building, then swaps."""

    def __init__(self, params: Optional[ParamValues] = None):
        self.params = params if params is not None else default_parameters()
        self.estimator = make_estimator(self.params["method"], self.params)

    @property
    def method(self) -> str:
        return self.estimator.name

    def set_params(self, params: ParamValues) -> Optional[str]:
        """Apply new parameters; returns None on success or a reason (and changes nothing)."""
        try:
            for m in METHODS:          # validate every estimator's settings, not only the selected one
                if m != params["method"]:
                    make_estimator(m, params)
            est = make_estimator(params["method"], params)
        except (ValueError, KeyError) as e:
            return str(e)
        # Keep the estimator's state when only thresholds of the same method change.
        if est.name == self.estimator.name and hasattr(self.estimator, "state"):
            est.state = self.estimator.state.copy()
        self.params = params
        self.estimator = est
        return None

    def reset(self):
        self.estimator.reset()

    def update(self, t_s: float, contact_pos, efforts=None, clearance=None, expected=None, speed=None, force=None,
               force_var=None) -> ContactEstimate:
        """``clearance`` (4,) [m], ``expected`` (4,) bool, ``speed`` (4,) [m/s], ``force`` (4,) [N] and
        ``force_var`` (4,) [N²] (see :class:`ContactEvidence`) feed the fusion estimator; the others ignore them."""
        if self.estimator.name == "fusion":
            return self.estimator.update(t_s, contact_pos, efforts, clearance=clearance, expected=expected,
                                         speed=speed, force=force, force_var=force_var)
        return self.estimator.update(t_s, contact_pos, efforts)


@dataclass
class SupportEstimate:
    polygon_xy: np.ndarray          # (k, 2) CCW, k = 0 if no contact
    com_xy: np.ndarray              # (2,)
    margin_m: float                 # signed, + inside; -inf if no contact
    statically_stable: bool         # >= 3 stance contacts and margin > min_margin_m


def support_from_contacts(in_contact, contact_pos, com_pos, min_margin_m: float = 0.0) -> SupportEstimate:
    """Support polygon of the stance contacts, CoM projection and signed margin (thesis §2.3, §4.3.1).

    ``contact_pos`` (4, 3) and ``com_pos`` (3,) must be in the same frame with z along gravity (world or spatial).
    """
    from atlas_crawl_kinematics.support import stability_margin, support_polygon
    c = np.asarray(in_contact, dtype=bool).reshape(4)
    p = np.asarray(contact_pos, dtype=float).reshape(4, 3)
    com = np.asarray(com_pos, dtype=float).reshape(-1)[:2]
    pts = p[c & np.all(np.isfinite(p), axis=1), :2]
    if pts.shape[0] == 0 or not np.all(np.isfinite(com)):
        return SupportEstimate(np.zeros((0, 2)), com, float("-inf"), False)
    poly = support_polygon(pts)
    m = stability_margin(com, poly)
    return SupportEstimate(poly, com, m, bool(pts.shape[0] >= 3 and m > min_margin_m))


def precision_recall(pred, truth) -> Dict[str, Dict[str, float]]:
    """Per-limb and overall precision/recall/F1/accuracy/MCC of stance decisions (True = stance = positive class).

    pred, truth: (N, 4) bool.  Precision = TP/(TP+FP), recall = TP/(TP+FN); NaN when undefined.
    """
    pr = np.asarray(pred, dtype=bool)
    tr = np.asarray(truth, dtype=bool)
    if pr.shape != tr.shape or pr.ndim != 2 or pr.shape[1] != 4:
        raise ValueError(f"pred and truth must both be (N, 4); got {pr.shape} and {tr.shape}")

    def score(a, b):
        tp = int(np.sum(a & b))
        fp = int(np.sum(a & ~b))
        fn = int(np.sum(~a & b))
        tn = int(np.sum(~a & ~b))
        prec = tp / (tp + fp) if tp + fp else float("nan")
        rec = tp / (tp + fn) if tp + fn else float("nan")
        f1 = 2 * prec * rec / (prec + rec) if (tp and prec + rec) else float("nan")
        acc = (tp + tn) / max(a.size, 1)
        # Matthews correlation: 0 for any constant or random predictor (e.g. "always stance", whose F1 is high
        # when limbs are mostly in stance), 1 for a perfect one.
        den = math.sqrt(float(tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = (tp * tn - fp * fn) / den if den > 0 else 0.0
        return {"precision": prec, "recall": rec, "f1": f1, "accuracy": acc, "mcc": mcc, "tp": tp, "fp": fp,
                "fn": fn, "tn": tn}

    out = {limb: score(pr[:, i], tr[:, i]) for i, limb in enumerate(LIMB_NAMES)}
    out["all"] = score(pr.reshape(-1), tr.reshape(-1))
    return out
