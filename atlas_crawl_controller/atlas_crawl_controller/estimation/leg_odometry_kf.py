"""Pelvis position and velocity from the accelerometer and the stance contacts: the linear Kalman filter of
legged_control's KalmanFilterEstimate (Bloesch et al. 2013, "State estimation for legged robots", in its linear
form with the orientation given), here with the four crawl contacts (wrists, knees) instead of feet.

State (world frame, 18): x = [p, v, c₁, c₂, c₃, c₄] — pelvis position, pelvis velocity, contact positions::

    predict (a_w = R a_m − g e₃, Δt):   p ← p + v Δt + ½ a_w Δt²,  v ← v + a_w Δt,  cᵢ ← cᵢ
        Q = diag(σ_p² Δt I, (σ_a² Δt + (k |a_w| Δt)²) I, σ_cᵢ² Δt I)     σ_cᵢ = stance (slip) or swing (free) contact
        noise; k = accel_relative_noise: an integrated velocity change is uncertain in proportion to its size
        impact (|a_w| > accel_impact_gate, if > 0):   a_w ← 0,  Q_v += (|a_w| Δt)² I
    update (forward kinematics rᵢ, ṙᵢ = Jᵢ q̇ in the pelvis frame; ω from the gyro):
        cᵢ − p = R rᵢ                            (3 per contact, std σ_r, × swing scale when not in stance)
        v = −R (ω × rᵢ + ṙᵢ)                     (3 per contact: the stance contact does not move)
        cᵢ,z = h_ground + h_offset               (optional, flat ground)

A stance contact is "fixed in the world"; a swing contact's state follows the kinematics (large process and
measurement noise), so at touchdown it already holds the right position. Predict/update: filterpy's KalmanFilter.
"""
from __future__ import annotations

import numpy as np
from filterpy.kalman import KalmanFilter

G_E3 = np.array([0.0, 0.0, 1.0])
N_CONTACTS = 4


class LegOdometryKF:
    """See the module doc. ``params``: the ``leg.*`` values of state_estimator_parameters.yaml (without prefix)."""

    def __init__(self, params: dict, gravity: float = 9.81):
        self.p = dict(params)
        self.g = float(gravity)
        self.kf = KalmanFilter(dim_x=6 + 3 * N_CONTACTS, dim_z=3)
        self.F_base = np.eye(18)
        self.impacts = 0            # samples not integrated as impacts (accel_impact_gate_m_per_s2)
        self.profile: dict = {}     # values replacing those of ``params`` meanwhile (the diagonal-support profile)

    def param(self, name: str):
        """The value of parameter ``name`` in use: the profile's if it has one, else that of ``params``."""
        return self.profile.get(name, self.p[name])

    def initialize(self, p0, R0: np.ndarray, r_body: np.ndarray, v0=(0.0, 0.0, 0.0),
                   pos_std: float = 0.01, vel_std: float = 0.05) -> None:
        """Pelvis at ``p0`` with velocity ``v0``; contacts at p0 + R0 rᵢ (``r_body`` (4,3) from kinematics)."""
        x = np.zeros(18)
        x[0:3] = p0
        x[3:6] = v0
        for i in range(N_CONTACTS):
            x[6 + 3 * i: 9 + 3 * i] = np.asarray(p0, float) + R0 @ r_body[i]
        self.kf.x = x.reshape(18, 1)
        P = np.eye(18) * (pos_std ** 2 + self.p["kinematic_position_noise_m"] ** 2)
        P[0:3, 0:3] = np.eye(3) * pos_std ** 2
        P[3:6, 3:6] = np.eye(3) * vel_std ** 2
        self.kf.P = P

    def predict(self, accel_world_specific: np.ndarray, dt: float, stance_weight: np.ndarray) -> None:
        """``accel_world_specific`` = R a_m (specific force in the world); gravity is removed here."""
        a = np.asarray(accel_world_specific, float).reshape(3) - self.g * G_E3
        gate = self.p.get("accel_impact_gate_m_per_s2", 0.0)
        impact = 0.0
        a_norm = float(np.linalg.norm(a))
        if 0 < gate < a_norm:                                 # an impact sample: the kinematics decide
            impact = (a_norm * dt) ** 2
            a = np.zeros(3)
            self.impacts += 1
        F = self.F_base.copy()
        F[0:3, 3:6] = np.eye(3) * dt
        B = np.zeros((18, 3))
        B[0:3] = np.eye(3) * 0.5 * dt * dt
        B[3:6] = np.eye(3) * dt
        q = np.empty(18)
        q[0:3] = self.p["position_process_noise_m_per_sqrt_s"] ** 2 * dt
        q[3:6] = self.p["accel_noise_m_per_s2_sqrt_hz"] ** 2 * dt + impact \
            + (self.param("accel_relative_noise") * a_norm * dt) ** 2
        s, w = self.p["stance_contact_noise_m_per_sqrt_s"], self.p["swing_contact_noise_m_per_sqrt_s"]
        for i in range(N_CONTACTS):
            k = float(np.clip(stance_weight[i], 0.0, 1.0))
            q[6 + 3 * i: 9 + 3 * i] = (k * s + (1.0 - k) * w) ** 2 * dt
        self.kf.predict(u=a.reshape(3, 1), B=B, F=F, Q=np.diag(q))

    def anchor(self, i: int, rel_world: np.ndarray) -> None:
        """(Re)place contact i at p + rel_world (touchdown): cᵢ = p + m, m ~ N(rel_world, σ_r² I), so cᵢ gets p's
        covariance and cross-covariances plus σ_r² (state augmentation)."""
        j = 6 + 3 * i
        x, P = self.kf.x, self.kf.P
        x[j:j + 3, 0] = x[0:3, 0] + np.asarray(rel_world, float).reshape(3)
        P[j:j + 3, :] = P[0:3, :]
        P[:, j:j + 3] = P[:, 0:3]
        P[j:j + 3, j:j + 3] = P[0:3, 0:3] + np.eye(3) * self.p["kinematic_position_noise_m"] ** 2

    def slip_gate(self, R: np.ndarray, r_body: np.ndarray, rdot_body: np.ndarray, omega_body: np.ndarray,
                  stance_weight: np.ndarray, consensus: bool = False) -> np.ndarray:
        """Stance weights with slipping contacts set to 0: contact i's pelvis velocity vᵢ = −R(ω × rᵢ + ṙᵢ) is
        tested against the prediction, d² = (vᵢ − v̂)ᵀ (P_vv + σ_v² I)⁻¹ (vᵢ − v̂) > ``slip_gate_chi2`` → slipping
        (or not really in contact). At least ``min_stance_contacts`` candidates are kept (the most consistent ones).
        Returns the new weights (4,). (Tested against the stance contacts' median velocity instead, the drift was
        3-7x larger on the key-frame crawls: the robot rocks onto a diagonal and planned stance limbs slide together.)
        ``consensus``: the recovery after a long IMU-only stretch (the prediction itself has diverged, so it would
        reject every contact): the contacts are tested against their component-wise median velocity with the
        kinematic noise only; if none passes, all candidates are used."""
        w = np.clip(np.asarray(stance_weight, float), 0.0, 1.0).copy()
        gate = self.param("slip_gate_chi2")
        if gate <= 0:
            return w
        v = np.array([-R @ (np.cross(omega_body, r_body[i]) + rdot_body[i]) for i in range(N_CONTACTS)])
        cand_idx = np.flatnonzero(w > 0)
        if consensus:
            if cand_idx.size == 0:
                return w
            v_hat = np.median(v[cand_idx], axis=0)
            S = np.eye(3) * self.param("kinematic_velocity_noise_m_per_s") ** 2
        else:
            v_hat = self.kf.x[3:6, 0]
            S = self.kf.P[3:6, 3:6] + np.eye(3) * self.param("kinematic_velocity_noise_m_per_s") ** 2
        Si = np.linalg.inv(S)
        d2 = np.full(N_CONTACTS, np.inf)
        for i in cand_idx:
            y = v[i] - v_hat
            d2[i] = float(y @ Si @ y)
        bad = d2 > gate
        cand = w > 0
        keep = int(cand.sum()) if consensus and bool(np.all(bad[cand])) else \
            min(int(self.p["min_stance_contacts"]), int(cand.sum()))
        for i in np.argsort(d2):            # fewer than ``keep`` passed: keep the most consistent candidates
            if int((cand & ~bad).sum()) >= keep:
                break
            bad[i] = False
        w[bad] = 0.0
        self.last_d2 = d2
        return w

    def update(self, R: np.ndarray, r_body: np.ndarray, rdot_body: np.ndarray, omega_body: np.ndarray,
               stance_weight: np.ndarray, height_weight: np.ndarray | None = None,
               ground_z: np.ndarray | None = None) -> None:
        """One kinematic update (see the module doc). ``stance_weight`` (4,) in [0, 1]: 1 = full stance trust;
        ``height_weight`` (4,) for the height measurement (default: stance_weight); ``ground_z`` (4,) the ground
        height under each contact (default: the flat ``ground_height_m``; NaN: no height measurement there)."""
        pr = self.p
        use_h = bool(pr["height_measurement"])
        hw = stance_weight if height_weight is None else height_weight
        nz = 6 * N_CONTACTS + (N_CONTACTS if use_h else 0)
        z = np.zeros(nz)
        H = np.zeros((nz, 18))
        rdiag = np.zeros(nz)
        for i in range(N_CONTACTS):
            k = float(np.clip(stance_weight[i], 0.0, 1.0))
            scale = k * 1.0 + (1.0 - k) * pr["swing_noise_scale"]
            rows = slice(3 * i, 3 * i + 3)
            z[rows] = R @ r_body[i]
            H[rows, 0:3] = -np.eye(3)
            H[rows, 6 + 3 * i: 9 + 3 * i] = np.eye(3)
            rdiag[rows] = (pr["kinematic_position_noise_m"] * scale) ** 2
            rows = slice(12 + 3 * i, 15 + 3 * i)
            z[rows] = -R @ (np.cross(omega_body, r_body[i]) + rdot_body[i])
            H[rows, 3:6] = np.eye(3)
            rdiag[rows] = (self.param("kinematic_velocity_noise_m_per_s") * scale) ** 2
            if use_h:
                j = 24 + i
                g = pr["ground_height_m"] if ground_z is None else float(ground_z[i])
                if not np.isfinite(g):
                    rdiag[j] = 1.0          # an empty row (H = 0, z = 0): no information
                    continue
                z[j] = g + pr["contact_height_offset_m"]
                H[j, 8 + 3 * i] = 1.0
                kh = float(np.clip(hw[i], 0.0, 1.0))
                rdiag[j] = (pr["contact_height_noise_m"] * (kh + (1.0 - kh) * pr["swing_noise_scale"])) ** 2
        self.kf.dim_z = nz
        self.kf.update(z.reshape(nz, 1), R=np.diag(rdiag), H=H)

    @property
    def position(self) -> np.ndarray:
        return self.kf.x[0:3, 0].copy()

    @property
    def velocity(self) -> np.ndarray:
        return self.kf.x[3:6, 0].copy()

    @property
    def contacts(self) -> np.ndarray:
        return self.kf.x[6:18, 0].reshape(4, 3).copy()

    @property
    def P(self) -> np.ndarray:
        return self.kf.P
