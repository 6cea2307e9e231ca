"""Iterative inverse kinematics (thesis §4.2.1, Eq. 4.8–4.11, Algorithm 2) and its CoM-modulated extension
(thesis §4.3.1, Eq. 4.13–4.14; DESIGN §6 floating-base form).

One step (thesis Eq. 4.9 with the 12×12 pseudo-inverse of Eq. 4.10)::

    Δq = J♯ e + (I − J♯ J) k_h (q_home − q),     J♯ = W⁻¹ Jᵀ (J W⁻¹ Jᵀ + C⁻¹)⁻¹,

scaled so ``max|Δq| ≤ 0.4 rad`` (locality threshold), repeated until ``max_i ‖e_i‖ < 0.01 m`` (per contact point,
Euclidean) or the error improved by less than 0.001 m in each of the last 3 iterations (Algorithm 2, line 15).

Beyond the thesis:

* **Joint limits inside the solve** (not only clamped afterwards): a joint that would leave ``[lower, upper]`` is
  moved exactly to its limit, removed from the free set (its ``W⁻¹`` entry zeroed) and the step is re-solved for the
  remaining joints with the task error corrected by the locked joints' motion (a clamping loop, ≤ ``limit_passes``);
* **per-limb task weights** ``c_i`` (stance above swing): ``C⁻¹ = diag(c_inv / c_i)``;
* **optional orientation** of chosen frames (e.g. the wrist contact): rows ``ω``-Jacobian, error = rotation vector
  of ``R* Rᵀ``, scaled by ``orientation_weight_m_per_rad`` so it is commensurate with metres;
* **CoM modulation**: a horizontal CoM task (the z component along gravity removed, thesis §4.3.1) towards a target
  point (e.g. the support centroid or a margin-respecting point of the support polygon);
* **root choice**: ``mode="pelvis"`` (thesis IIK), ``mode="root"`` with a support limb frame as root (thesis
  Eq. 4.13: everything expressed in that frame, the support limb cannot move), or ``mode="floating"``: 6 virtual base
  DOF + 28 joints, targets in the world frame, stance contacts held as tasks (DESIGN §6);
* **robustness**: NaN/inf targets or seeds raise :class:`InvalidTargetError` and nothing changes; for an unreachable
  target the solver returns the lowest-error finite, in-limit configuration it visited, with a status saying so.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from atlas_description import CONTACT_FRAMES

from . import iik_fast, iik_fast_floating
from .model import Kinematics, RobotModel
from .pinv import THESIS_C_INV, inverse_mass_weights

__all__ = ["IIKParams", "IIKSolver", "IIKResult", "IIKStatus", "InvalidTargetError", "four_point_stance"]


#: physical input bounds, checked before either backend runs (issue 11: a target of ±1.8e308 made the compiled
#: kernel return NaN with status CONVERGED): coordinates within ±MAX_COORD_M, task weights in [MIN_WEIGHT, MAX_WEIGHT]
MAX_COORD_M = 1.0e3
MIN_WEIGHT, MAX_WEIGHT = 1.0e-6, 1.0e6
_I3 = np.eye(3)
_ORTHO_TOL = 1e-6 + 1e-5 * _I3   #: np.allclose's atol + rtol·|I|


class InvalidTargetError(ValueError):
    """A target, seed configuration, weight or option is invalid (NaN/inf, wrong shape, unknown frame)."""


class IIKStatus(enum.Enum):
    CONVERGED = "converged"  #: max contact error below the convergence threshold
    NO_PROGRESS = "no_progress"  #: error stopped improving (Algorithm 2 guard): target likely unreachable
    MAX_ITERATIONS = "max_iterations"  #: iteration budget exhausted


@dataclass
class IIKParams:
    """Solver parameters; defaults are the thesis values (§4.2.1, Algorithm 2) where the thesis gives one."""

    locality_threshold_rad: float = 0.4  #: LOCALT: max |Δq| per iteration
    convergence_m: float = 0.01  #: CONVT: stop when max per-point error < this
    no_progress_m: float = 0.001  #: NCT: minimum improvement per iteration ...
    no_progress_iterations: int = 3  #: ... over the last m iterations
    max_iterations: int = 200
    c_inv: float = THESIS_C_INV  #: C⁻¹ = c_inv · I (per-row scaled by the task weights)
    weighting: str = "inverse_mass"  #: "inverse_mass" (thesis §4.2.1) or "identity"
    nullspace_gain: float = 0.1  #: k_h of the home-pose term (0 disables it; thesis Eq. 4.11 is k_h = 0)
    limit_passes: int = 4  #: clamping-loop passes for joint limits inside the solve (0 = clamp afterwards only)
    orientation_weight_m_per_rad: float = 0.1
    com_weight: float = 1.0  #: task weight of the CoM rows relative to a contact with weight 1
    #: Beyond the thesis (off by default): anneal C⁻¹ towards ``c_inv_min`` as the error shrinks,
    #: ``c_eff = max(c_inv_min, c_inv · min(1, err / anneal_scale_m))`` (Levenberg–Marquardt-like; the thesis'
    #: fixed 1e-3 damps the small singular directions of J W⁻¹ Jᵀ (~1e-4) and stalls at ~1–2 cm).
    c_inv_min: float = THESIS_C_INV
    anneal_scale_m: float = 0.05
    #: Beyond the thesis (off by default): project the home-pose term with the *unregularised* null space
    #: ``N = I − W⁻¹Jᵀ(JW⁻¹Jᵀ + εI)⁻¹J`` so the posture does not leak into the task.
    exact_nullspace: bool = False
    #: Implementation: "auto" (compiled numba kernel, :mod:`.iik_fast`, when numba is installed and the call is
    #: pelvis/root mode without orientation tasks; else numpy), "numba" (same, error if unavailable), "numpy".
    backend: str = "auto"

    @classmethod
    def improved(cls, **overrides) -> IIKParams:
        """Our recommended settings: annealed damping down to 1e-6, exact null-space projection, 5 mm target,
        no-progress guard at 10 µm/iteration (the thesis' 1 mm stops short of a 5 mm goal)."""
        kw = dict(c_inv_min=1e-6, exact_nullspace=True, convergence_m=0.005, no_progress_m=1e-5)
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def tuned(cls, **overrides) -> IIKParams:
        """:meth:`improved` with less damping (C⁻¹ = 1e-4 annealed over 0.5 m): on 1000 random reachable
        4-contact + CoM targets 1000/1000 converge to 5 mm in median 4 iterations (``iik_benchmark``), and the
        crucify → four-point solve converges in 6 iterations (``iik_experiments``)."""
        kw = dict(c_inv=1e-4, anneal_scale_m=0.5)
        kw.update(overrides)
        return cls.improved(**kw)

    def validate(self) -> None:
        for name in ("locality_threshold_rad", "convergence_m", "c_inv", "orientation_weight_m_per_rad",
                     "com_weight"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise InvalidTargetError(f"IIKParams.{name} must be finite and > 0, got {v!r}")
        if not (np.isfinite(self.nullspace_gain) and self.nullspace_gain >= 0):
            raise InvalidTargetError("IIKParams.nullspace_gain must be finite and >= 0")
        if self.weighting not in ("inverse_mass", "identity"):
            raise InvalidTargetError("IIKParams.weighting must be 'inverse_mass' or 'identity'")
        if self.backend not in ("auto", "numba", "numpy"):
            raise InvalidTargetError("IIKParams.backend must be 'auto', 'numba' or 'numpy'")
        if self.backend == "numba" and not iik_fast.HAVE_NUMBA:
            raise InvalidTargetError("IIKParams.backend='numba' but numba is not installed")
        if self.max_iterations < 1 or self.no_progress_iterations < 1 or self.limit_passes < 0:
            raise InvalidTargetError("iteration counts must be positive")


@dataclass
class IIKResult:
    q: NDArray[np.float64]  #: final joint configuration (finite, within limits)
    status: IIKStatus
    error_m: float  #: max per-point position error of the returned configuration
    iterations: int
    errors: list[float] = field(default_factory=list)  #: max per-point error per iteration
    com_error_m: float = 0.0  #: horizontal CoM error (if a CoM target was given)
    base_pos: NDArray[np.float64] | None = None  #: floating mode: world pelvis position
    base_rot: NDArray[np.float64] | None = None  #: floating mode: world←pelvis rotation

    @property
    def converged(self) -> bool:
        return self.status is IIKStatus.CONVERGED


def four_point_stance(model: RobotModel) -> NDArray[np.float64]:
    """The home pose: the four-point (hands-and-knees) stance of /work/shared/reference/README.md (a probe that
    rested stably in MuJoCo): legs lhy −1.5, kny 2.0, uay 0.6; arms usy −1.3, shx ∓0.5; neck −0.6; rest 0."""
    q = np.zeros(model.n_joints)
    vals = {"l_leg_lhy": -1.5, "r_leg_lhy": -1.5, "l_leg_kny": 2.0, "r_leg_kny": 2.0, "l_leg_uay": 0.6,
            "r_leg_uay": 0.6, "l_arm_usy": -1.3, "r_arm_usy": -1.3, "l_arm_shx": -0.5, "r_arm_shx": 0.5,
            "neck_ay": -0.6}
    for n, v in vals.items():
        if n in model.joint_names:
            q[model.joint_index(n)] = v
    return model.clip_to_limits(q)


def _finite(x: ArrayLike, shape: tuple[int, ...] | None, what: str) -> NDArray[np.float64]:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidTargetError(f"{what} is not numeric: {exc}") from None
    if shape is not None and a.shape != shape:
        raise InvalidTargetError(f"{what} must have shape {shape}, got {a.shape}")
    if not math.isfinite(a.sum()):  # NaN/inf propagate into the sum (cheaper than np.all(np.isfinite(a)))
        if np.all(np.isfinite(a)):  # only a float overflow of the sum: values are finite
            return a
        raise InvalidTargetError(f"{what} contains NaN/inf: refused (nothing changed)")
    return a


def _bounded(a: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    if a.size and float(np.max(np.abs(a))) > MAX_COORD_M:
        raise InvalidTargetError(f"{what} beyond ±{MAX_COORD_M:g} m (not a physical target): refused")
    return a


class IIKSolver:
    """Iterative IK for the contact points (thesis Algorithm 2) with optional CoM modulation.

    Args:
        model: the robot model.
        frames: task frames (default the four contacts LW, RW, LK, RK).
        params: :class:`IIKParams` (thesis defaults).
        home_q: null-space home pose (default :func:`four_point_stance`).
        mode: ``"pelvis"`` (targets in the pelvis frame), ``"root"`` (targets in frame ``root``, which is held
            fixed — thesis Eq. 4.13) or ``"floating"`` (targets in the world frame, 6 virtual base DOF).
        root: the support frame for ``mode="root"``.
    """

    def __init__(
        self,
        model: RobotModel,
        frames: Sequence[str] = CONTACT_FRAMES,
        params: IIKParams | None = None,
        home_q: ArrayLike | None = None,
        mode: str = "pelvis",
        root: str | None = None,
    ) -> None:
        self.model = model
        self.frames = tuple(frames)
        for f in self.frames:
            model.frame_index(f)
        self.params = params or IIKParams()
        self.params.validate()
        if mode not in ("pelvis", "root", "floating"):
            raise InvalidTargetError(f"mode must be pelvis/root/floating, got {mode!r}")
        if mode == "root":
            if root is None:
                raise InvalidTargetError("mode='root' needs a root frame")
            model.frame_index(root)
        self.mode = mode
        self.root = root if mode == "root" else None
        self.home_q = model.clip_to_limits(
            four_point_stance(model) if home_q is None else _finite(home_q, (model.n_joints,), "home_q"))
        nj = model.n_joints
        if self.params.weighting == "identity":
            w = np.ones(nj + (6 if mode == "floating" else 0))
            self.w_inv = w / w.sum()
        else:
            mm = model.mass_moved(self.root)
            if mode == "floating":
                mm = np.r_[np.full(6, model.total_mass), mm]
            self.w_inv = inverse_mass_weights(mm)
        self._fast: iik_fast.FastModel | None = None
        self._c_cache: dict = {}
        self._root_idx = -1 if self.root is None else int(model.frame_index(self.root))
        self._up_cache: dict = {}
        self._frame_idx = np.array([model.frame_index(f) for f in self.frames], dtype=np.int64)
        self._o_idx: dict = {}

    # ------------------------------------------------------------------ helpers
    def _points(self, k: Kinematics, base_pos, base_rot) -> NDArray:
        if self.mode == "floating":
            return k.positions(self.frames) @ base_rot.T + base_pos
        return k.positions(self.frames, root=self.root)

    def _point_jac(self, k: Kinematics, base_rot) -> NDArray:
        if self.mode == "floating":
            return k.point_jacobians(self.frames, floating_base=True, base_rot=base_rot)
        return k.point_jacobians(self.frames, root=self.root)

    def _com(self, k: Kinematics, base_pos, base_rot) -> NDArray:
        if self.mode == "floating":
            return base_rot @ k.com() + base_pos
        return k.com(root=self.root)

    def _com_jac(self, k: Kinematics, base_rot) -> NDArray:
        if self.mode == "floating":
            return k.com_jacobian(floating_base=True, base_rot=base_rot)
        return k.com_jacobian(root=self.root)

    def _rot(self, k: Kinematics, f: str, base_rot) -> NDArray:
        if self.mode == "floating":
            return base_rot @ k.rotation(f)
        return k.rotation(f, root=self.root)

    def _rot_jac(self, k: Kinematics, f: str, base_rot) -> NDArray:
        if self.mode == "floating":
            Jr = k.rotation_jacobian(f)
            out = np.zeros((3, 6 + self.model.n_joints))
            out[:, 3:6] = np.eye(3)
            out[:, 6:] = base_rot @ Jr
            return out
        return k.rotation_jacobian(f, root=self.root)

    # ------------------------------------------------------------------ solve
    def solve(self, *args, **kwargs) -> IIKResult:
        """Solve for the configuration that puts ``frames`` at ``targets``: :meth:`solve_steps` (same arguments) run
        to its end."""
        return iik_fast_floating.drain(self.solve_steps(*args, **kwargs))

    def solve_steps(
        self,
        q0: ArrayLike,
        targets: ArrayLike,
        weights: ArrayLike | None = None,
        orientations: Mapping[str, ArrayLike] | None = None,
        com_target: ArrayLike | None = None,
        up: ArrayLike = (0.0, 0.0, 1.0),
        base_pos: ArrayLike | None = None,
        base_rot: ArrayLike | None = None,
        budget: int = 0,
    ) -> Generator[None, None, IIKResult]:
        """Solve for the configuration that puts ``frames`` at ``targets``, as a generator: it yields while a
        compiled floating-base solve (``backend="numba"``) has run ``budget`` iterations (≤ 0: never) without
        ending, and returns the :class:`IIKResult`; the result is the same whatever ``budget`` is. Other paths
        return without yielding.

        Args:
            q0: (n_joints,) seed (clipped into the limits).
            targets: (k, 3) target positions (pelvis / root / world frame depending on ``mode``).
            weights: (k,) task weights per point (default 1; e.g. stance 10, swing 1).
            orientations: optional ``{frame: 3×3 target rotation}`` in the task frame.
            com_target: optional target for the CoM; only its horizontal part (orthogonal to ``up``) is used.
            up: unit vector opposite to gravity in the task frame (pelvis/root mode: from the IMU).
            base_pos, base_rot: floating mode: initial world pose of the pelvis (required there).
        """
        m, P = self.model, self.params
        nj = m.n_joints
        q = _finite(q0, (nj,), "q0")
        q = np.minimum(np.maximum(q, m.lower), m.upper)
        nk = len(self.frames)
        x_star = _bounded(_finite(targets, (nk, 3), "targets"), "targets")
        if weights is None:
            w_task = None
        else:
            w_task = _finite(weights, (nk,), "weights")
            if not (w_task > 0).all():
                raise InvalidTargetError("task weights must be > 0")
            if not ((w_task >= MIN_WEIGHT) & (w_task <= MAX_WEIGHT)).all():
                raise InvalidTargetError(f"task weights must lie in [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]: refused")
        ori = {}
        if orientations:
            for f in orientations:
                if f not in self.frames and f not in m.frame_names:
                    raise InvalidTargetError(f"unknown orientation frame {f!r}")
            try:    # one batched check (the per-frame loop below only names the culprit)
                O = np.asarray(list(orientations.values()), dtype=float)
                ok = O.shape == (len(orientations), 3, 3) and math.isfinite(O.sum()) and \
                    bool((np.abs(O.transpose(0, 2, 1) @ O - _I3) <= _ORTHO_TOL).all())
            except (TypeError, ValueError):
                ok = False
            if ok:
                ori = dict(zip(orientations, O))
            else:
                for f, R in orientations.items():
                    Rm = _finite(R, (3, 3), f"orientation target of {f}")
                    if not (np.abs(Rm.T @ Rm - _I3) <= _ORTHO_TOL).all():   # = np.allclose(RᵀR, I, atol=1e-6)
                        raise InvalidTargetError(f"orientation target of {f} is not a rotation matrix")
                    ori[f] = Rm
        c_star = None if com_target is None else _bounded(_finite(com_target, (3,), "com_target"), "com_target")
        u, u1, u2 = self._up_basis(up)
        floating = self.mode == "floating"
        if floating:
            if base_pos is None or base_rot is None:
                raise InvalidTargetError("floating mode needs base_pos and base_rot")
            bp = _bounded(_finite(base_pos, (3,), "base_pos"), "base_pos").copy()
            bR = _finite(base_rot, (3, 3), "base_rot").copy()
        else:
            bp, bR = np.zeros(3), np.eye(3)

        # Constant task weighting C⁻¹ (diagonal).
        key = (None if w_task is None else w_task.tobytes(), len(ori), c_star is not None)
        c_inv = self._c_cache.get(key)
        if c_inv is None:
            c_rows = [np.repeat(P.c_inv / (np.ones(nk) if w_task is None else w_task), 3)]
            for _f in ori:
                c_rows.append(np.full(3, P.c_inv))
            if c_star is not None:
                c_rows.append(np.full(3, P.c_inv / P.com_weight))
            c_inv = np.concatenate(c_rows)
            if len(self._c_cache) > 64:
                self._c_cache.clear()
            self._c_cache[key] = c_inv
        if not floating and not ori and P.backend != "numpy" and iik_fast.HAVE_NUMBA:
            return self._solve_fast(q, x_star, c_inv, c_star, (u1, u2))
        if floating and P.backend == "numba" and iik_fast.HAVE_NUMBA:
            return (yield from self._solve_fast_floating_steps(q, bp, bR, x_star, c_inv, ori, c_star, (u1, u2),
                                                               budget))
        Ph = np.eye(3) - np.outer(u, u)  # horizontal projector (thesis §4.3.1: z of Δc set to 0)
        ow = P.orientation_weight_m_per_rad
        nv = nj + (6 if floating else 0)

        best = (np.inf, q.copy(), bp.copy(), bR.copy(), 0.0)
        errors: list[float] = []
        stalled = 0
        status = IIKStatus.MAX_ITERATIONS
        it = 0
        for it in range(1, P.max_iterations + 1):
            k = m.forward(q, check=False)
            x = self._points(k, bp, bR)
            e_pts = x_star - x
            err = float(np.sqrt((e_pts**2).sum(axis=1)).max())
            e_list = [e_pts.reshape(-1)]
            J_list = [self._point_jac(k, bR)]
            ori_err = 0.0
            for f, Rt in ori.items():
                Rc = self._rot(k, f, bR)
                eo = ow * Rotation.from_matrix(Rt @ Rc.T).as_rotvec()
                ori_err = max(ori_err, float(np.linalg.norm(eo)))  # metres-equivalent
                e_list.append(eo)
                J_list.append(ow * self._rot_jac(k, f, bR))
            com_err = 0.0
            if c_star is not None:
                ec = Ph @ (c_star - self._com(k, bp, bR))
                com_err = float(np.linalg.norm(ec))
                e_list.append(ec)
                J_list.append(Ph @ self._com_jac(k, bR))
            score = max(err, com_err, ori_err)
            errors.append(score)
            if score < best[0]:
                best = (score, q.copy(), bp.copy(), bR.copy(), com_err)
            if score < P.convergence_m:
                status = IIKStatus.CONVERGED
                break
            if len(errors) >= 2 and errors[-2] - errors[-1] < P.no_progress_m:
                stalled += 1
                if stalled >= P.no_progress_iterations:
                    status = IIKStatus.NO_PROGRESS
                    break
            else:
                stalled = 0
            e = np.concatenate(e_list)
            J = np.vstack(J_list) if len(J_list) > 1 else J_list[0]
            scale = max(P.c_inv_min / P.c_inv, min(1.0, score / P.anneal_scale_m))
            dv = self._step(J, e, c_inv * scale, q, nv, floating)
            # Locality threshold (Algorithm 2 lines 7–11).
            amax = float(np.abs(dv[-nj:]).max()) if dv.size else 0.0
            if amax > P.locality_threshold_rad:
                dv *= P.locality_threshold_rad / amax
            q = np.clip(q + dv[-nj:], m.lower, m.upper)
            if floating:
                bp = bp + dv[0:3]
                bR = Rotation.from_rotvec(dv[3:6]).as_matrix() @ bR
        else:
            it = P.max_iterations
        # Re-evaluate the last iterate if the loop ended by exhausting iterations after a step.
        if status is not IIKStatus.CONVERGED:
            k = m.forward(q, check=False)
            e_last = float(np.sqrt(((x_star - self._points(k, bp, bR)) ** 2).sum(axis=1)).max())
            com_last = 0.0
            if c_star is not None:
                com_last = float(np.linalg.norm(Ph @ (c_star - self._com(k, bp, bR))))
            ori_last = max([ow * float(np.linalg.norm(Rotation.from_matrix(Rt @ self._rot(k, f, bR).T).as_rotvec()))
                            for f, Rt in ori.items()] or [0.0])
            if max(e_last, com_last, ori_last) < best[0]:
                best = (max(e_last, com_last, ori_last), q.copy(), bp.copy(), bR.copy(), com_last)
            if best[0] < P.convergence_m:
                status = IIKStatus.CONVERGED
        score, q_best, bp_best, bR_best, com_best = best
        k = m.forward(q_best, check=False)
        pos_err = float(np.sqrt(((x_star - self._points(k, bp_best, bR_best)) ** 2).sum(axis=1)).max())
        return IIKResult(
            q=q_best, status=status, error_m=pos_err, iterations=it, errors=errors, com_error_m=com_best,
            base_pos=bp_best if floating else None, base_rot=bR_best if floating else None,
        )

    def _up_basis(self, up: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        """Unit ``up`` and an orthonormal basis (u1, u2) of the horizontal plane (cached for tuple inputs)."""
        key = up if isinstance(up, tuple) else None
        hit = self._up_cache.get(key) if key is not None else None
        if hit is not None:
            return hit
        u = _finite(up, (3,), "up")
        n = math.sqrt(float(u @ u))
        if n == 0:
            raise InvalidTargetError("up must be non-zero")
        u = u / n
        a = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u1 = a - u * (a @ u)
        u1 /= math.sqrt(float(u1 @ u1))
        u2 = np.array([u[1] * u1[2] - u[2] * u1[1], u[2] * u1[0] - u[0] * u1[2], u[0] * u1[1] - u[1] * u1[0]])
        out = (u, u1, u2)
        if key is not None:
            if len(self._up_cache) > 64:
                self._up_cache.clear()
            self._up_cache[key] = out
        return out

    def _solve_fast(self, q: NDArray, x_star: NDArray, c_inv: NDArray, c_star: NDArray | None,
                    basis: tuple[NDArray, NDArray]) -> IIKResult:
        """The same algorithm as the numpy loop, compiled (:mod:`.iik_fast`); CoM as 2 rows (basis ⟂ up)."""
        m = self.model
        if self._fast is None:
            self._fast = iik_fast.FastModel.of(m)
            self._w_inv_int = np.ascontiguousarray(self.w_inv[m._q_perm])
            self._home_int = np.ascontiguousarray(self.home_q[m._q_perm])
        c_row = c_inv[:-1] if c_star is not None else c_inv  # CoM: 3 entries → 2 rows (contiguous slice)
        root = self._root_idx
        qb, st, it, errors, pos_err, com_err = iik_fast.solve_fast(
            self._fast, q, x_star, c_row, c_star, basis, self._frame_idx, root, self._w_inv_int, self._home_int,
            self.params)
        status = (IIKStatus.CONVERGED, IIKStatus.NO_PROGRESS, IIKStatus.MAX_ITERATIONS)[st]
        if not (np.all(np.isfinite(qb)) and np.all(qb >= m.lower) and np.all(qb <= m.upper)
                and math.isfinite(pos_err)):
            # output guard: never report a non-finite or out-of-limit configuration (let alone as CONVERGED)
            x = self._points(m.forward(q, check=False), np.zeros(3), np.eye(3))
            err = float(np.max(np.linalg.norm(x - x_star, axis=1)))
            return IIKResult(q=q.copy(), status=IIKStatus.NO_PROGRESS, error_m=err, iterations=int(it),
                             errors=[err], com_error_m=0.0)
        return IIKResult(q=qb, status=status, error_m=float(pos_err), iterations=int(it), errors=errors,
                         com_error_m=float(com_err))

    def _solve_fast_floating_steps(self, q: NDArray, bp: NDArray, bR: NDArray, x_star: NDArray, c_inv: NDArray,
                                   ori: dict, c_star: NDArray | None, basis: tuple[NDArray, NDArray],
                                   budget: int = 0) -> Generator[None, None, IIKResult]:
        """Floating base, orientations and CoM compiled (:mod:`.iik_fast_floating`, ``backend="numba"`` only)."""
        m = self.model
        if self._fast is None:
            self._fast = iik_fast.FastModel.of(m)
            self._w_inv_int = np.ascontiguousarray(self.w_inv[m._q_perm])
            self._home_int = np.ascontiguousarray(self.home_q[m._q_perm])
        if getattr(self, "_w_inv_aug", None) is None:
            self._w_inv_aug = np.ascontiguousarray(np.r_[self.w_inv[:6], self.w_inv[6:][m._q_perm]])
        c_row = np.ascontiguousarray(c_inv)
        okey = tuple(ori)
        o_idx = self._o_idx.get(okey)
        if o_idx is None:
            o_idx = self._o_idx[okey] = np.array([m.frame_index(f) for f in ori], dtype=np.int64)
        o_star = np.empty((len(ori), 3, 3))
        for i, R in enumerate(ori.values()):
            o_star[i] = R
        qb, bpb, bRb, st, it, errors, com_err, pos_err = yield from iik_fast_floating.solve_fast_floating_steps(
            self._fast, q, bp, bR, x_star, c_row, o_idx, o_star, self.params.orientation_weight_m_per_rad, c_star,
            basis, self._frame_idx, self._w_inv_aug, self._home_int, self.params, budget)
        status = (IIKStatus.CONVERGED, IIKStatus.NO_PROGRESS, IIKStatus.MAX_ITERATIONS)[st]
        if not (np.all(np.isfinite(qb)) and np.all(qb >= m.lower) and np.all(qb <= m.upper)
                and np.all(np.isfinite(bpb)) and np.all(np.isfinite(bRb)) and math.isfinite(pos_err)):
            # output guard: never report a non-finite or out-of-limit configuration
            x = self._points(m.forward(q, check=False), bp, bR)
            err = float(np.max(np.linalg.norm(x - x_star, axis=1)))
            return IIKResult(q=q.copy(), status=IIKStatus.NO_PROGRESS, error_m=err, iterations=int(it),
                             errors=[err], com_error_m=0.0, base_pos=bp.copy(), base_rot=bR.copy())
        return IIKResult(q=qb, status=status, error_m=float(pos_err), iterations=int(it), errors=errors,
                         com_error_m=float(com_err), base_pos=bpb, base_rot=bRb)

    def _step(self, J: NDArray, e: NDArray, c_inv: NDArray, q: NDArray, nv: int, floating: bool) -> NDArray:
        """One regularised step with the home pose in the null space and joint limits inside the solve.

        ``Δ = J♯ e + N h`` with ``J♯ = W⁻¹Jᵀ(JW⁻¹Jᵀ + C⁻¹)⁻¹`` (Eq. 4.10, m×m solve, no explicit inverse) and
        ``N = I − J♯J`` (thesis Eq. 4.9) or the unregularised projector (``exact_nullspace``).  Joints that would
        leave their limits are locked at the limit (``W⁻¹_j = 0``) and the step is re-solved for the others.
        """
        m, P = self.model, self.params
        nj = m.n_joints
        off = nv - nj
        w = self.w_inv.copy()
        h = np.zeros(nv)
        if P.nullspace_gain > 0:
            h[off:] = P.nullspace_gain * (self.home_q - q)
        locked = np.zeros(nj, dtype=bool)
        fixed_dq = np.zeros(nv)
        e_eff = e
        nrow = J.shape[0]
        diag = np.arange(nrow) * (nrow + 1)
        for _pass in range(P.limit_passes + 1):
            JW = J * w
            A = JW @ J.T
            if P.exact_nullspace and P.nullspace_gain > 0:
                hw = h * (w > 0)
                A0 = A.copy()
                A0.flat[diag] += 1e-9 * (np.trace(A) / nrow + 1e-12)
                nh = hw - JW.T @ np.linalg.solve(A0, J @ hw)  # exact null-space motion
                A.flat[diag] += c_inv
                dv = JW.T @ np.linalg.solve(A, e_eff) + nh
            else:
                A.flat[diag] += c_inv
                hw = h * (w > 0)
                # Δ = W⁻¹Jᵀ A⁻¹ (e − J h) + h   (= J♯ e + (I − J♯J) h on the free joints)
                dv = JW.T @ np.linalg.solve(A, e_eff - J @ hw) + hw
            dv += fixed_dq
            qn = q + dv[off:]
            viol = ((qn < m.lower) | (qn > m.upper)) & ~locked
            if _pass == P.limit_passes or not viol.any():
                return dv
            # Lock violating joints exactly at their limit and re-solve for the others.
            newly = np.nonzero(viol)[0]
            locked[newly] = True
            fixed_dq[off + newly] = np.clip(qn[newly], m.lower[newly], m.upper[newly]) - q[newly]
            w[off + newly] = 0.0
            e_eff = e - J @ fixed_dq
        return dv  # pragma: no cover
