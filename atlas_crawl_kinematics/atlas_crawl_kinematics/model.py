"""Robot model from a URDF string: vectorised forward kinematics, point and CoM Jacobians (thesis §3.4.2, §4.2.1,
§4.3.1), w.r.t. the pelvis or any link/frame taken as root (thesis Eq. 4.13), optionally with a floating base.

Notation (all vectors in the pelvis = kinematic-root frame unless said otherwise):

* joint ``j`` (revolute) has unit axis ``a_j`` and lies at ``p_j`` (= origin of its child link frame, URDF);
* ``S(j)`` = set of frames/links moved by joint ``j`` (its subtree in the pelvis-rooted tree), ``s_x(j) = [x ∈ S(j)]``;
* point Jacobian column (thesis Eq. 4.4–4.5): ``J_e[:, j] = s_e(j) · a_j × (p_e − p_j)``;
* CoM ``c = Σ_i m_i c_i / M``; CoM Jacobian column (DESIGN §6; the thesis' printed Eq. 4.12 garbles the
  normaliser): ``J_c[:, j] = (m_sub(j)/M) · a_j × (c_sub(j) − p_j)`` with ``m_sub(j) = Σ_{i∈S(j)} m_i`` and
  ``c_sub(j)`` the CoM of ``S(j)``;
* root change to frame ``r`` (thesis Eq. 4.13: "Jacobian ... in terms of the support limb"): ``r`` is held fixed, so
  a joint ``j`` between ``r`` and the pelvis moves the *pelvis side* (everything not in ``S(j)``) by ``−dq_j`` about
  ``a_j``.  For any point ``e``: ``J^r_e[:, j] = R_rᵀ (s_e(j) − s_r(j)) · a_j × (p_e − p_j)``, and for the CoM
  ``J^r_c[:, j] = R_rᵀ a_j × (Σ_i m_i (s_i(j) − s_r(j)) (c_i − p_j)) / M``; positions are ``R_rᵀ (p − p_r)``.
  Both are verified against finite differences in the tests;
* floating base (DESIGN §6): 6 virtual DOF in front, ``[v_b, ω_b]`` = linear velocity of the pelvis origin and
  angular velocity of the pelvis, both in the *world* frame (``base_rot`` = world←pelvis given) or in pelvis
  coordinates (``base_rot=None``): ``J = [I₃, −[R_b p_e]ₓ, R_b J_e]`` (columns 0–2, 3–5, 6…).

The hot path (:meth:`RobotModel.forward`, :meth:`Kinematics.point_jacobians`, :meth:`Kinematics.com_jacobian`) uses
batched numpy: Rodrigues for all joints at once, then one batched 4×4 product per *depth level* of the movable tree
(fixed frames are folded into constant offsets and computed in one batched product at the end).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from atlas_description import JOINT_NAMES

from .urdf import MOVABLE_TYPES, UrdfError, parse_urdf

__all__ = ["RobotModel", "Kinematics", "KinematicsInputError", "skew"]


class KinematicsInputError(ValueError):
    """Bad input to the kinematics (wrong shape, NaN/inf, unknown frame name)."""


def skew(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """3×3 cross-product matrix ``[v]ₓ`` such that ``[v]ₓ w = v × w``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _cross(a: NDArray, b: NDArray) -> NDArray:
    """Row-wise cross product over the last axis (faster than np.cross for small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


class RobotModel:
    """Static kinematic/inertial model of a tree-structured robot (revolute/continuous/fixed joints).

    Frames: every URDF link is a frame (``frame_names``, pelvis-rooted BFS order; fixed-joint children such as
    ``l_wrist_contact`` included).  Joint vectors ``q`` follow ``joint_names`` (default: the team order
    ``atlas_description.JOINT_NAMES`` when the URDF holds exactly those joints, else URDF document order).

    Attributes (numpy arrays indexed like ``joint_names`` unless noted):
        lower, upper, velocity_limit, effort_limit: joint limits (rad, rad/s, N·m); continuous → ±inf.
        link_mass (n_frames,), link_com (n_frames, 3) in the link frame, link_inertia (n_frames, 3, 3) about the CoM.
        total_mass, subtree_mass: mass moved by each joint with the pelvis as root.
        joint_subtree (n_joints, n_frames) bool: ``S(j)`` membership.
    """

    def __init__(self, urdf: str, joint_names: Sequence[str] | None = None) -> None:
        self.robot_name, links, joints = parse_urdf(urdf)
        children: dict[str, list[str]] = {n: [] for n in links}
        parent_joint: dict[str, str] = {}
        for j in joints.values():
            if j.child in parent_joint:
                raise UrdfError(f"link {j.child!r} has two parent joints")
            parent_joint[j.child] = j.name
            children[j.parent].append(j.child)
        roots = [n for n in links if n not in parent_joint]
        if len(roots) != 1:
            raise UrdfError(f"URDF must be a single tree; roots found: {roots}")
        self.root_name = roots[0]

        # BFS order of all links (used to derive the internal order below).
        bfs: list[str] = [self.root_name]
        for name in bfs:
            bfs.extend(children[name])
        if len(bfs) != len(links):
            raise UrdfError("URDF tree has a cycle or disconnected links")
        nf = len(bfs)

        movable = [j for j in joints.values() if j.type in MOVABLE_TYPES]
        movable_names = [j.name for j in movable]
        if joint_names is None:
            joint_names = JOINT_NAMES if set(movable_names) == set(JOINT_NAMES) else movable_names
        joint_names = tuple(joint_names)
        if sorted(joint_names) != sorted(movable_names) or len(set(joint_names)) != len(joint_names):
            raise UrdfError(f"joint_names must be a permutation of the URDF's movable joints {movable_names}")
        self.joint_names: tuple[str, ...] = joint_names
        self._joint_index = {n: i for i, n in enumerate(joint_names)}
        nj = len(joint_names)
        self.n_joints = nj
        self.n_frames = nf

        # Movable depth of each link (number of movable joints between it and the root).
        depth: dict[str, int] = {self.root_name: 0}
        for name in bfs[1:]:
            j = joints[parent_joint[name]]
            depth[name] = depth[j.parent] + (1 if j.type in MOVABLE_TYPES else 0)
        # Internal frame order: root, then the children of movable joints grouped by depth level (so every level is a
        # contiguous slice), then the fixed frames in BFS order.  Internal joint i ↔ frame 1 + i.
        mov_frames = sorted((n for n in bfs[1:] if joints[parent_joint[n]].type in MOVABLE_TYPES),
                            key=lambda n: (depth[n], bfs.index(n)))
        fixed_frames = [n for n in bfs[1:] if joints[parent_joint[n]].type not in MOVABLE_TYPES]
        order = [self.root_name] + mov_frames + fixed_frames
        self.frame_names: tuple[str, ...] = tuple(order)
        self._frame_index = {n: i for i, n in enumerate(order)}
        int_joint_names = [parent_joint[n] for n in mov_frames]
        #: public joint index of internal joint i
        self._q_perm = np.array([self._joint_index[n] for n in int_joint_names], dtype=np.int64)
        #: internal joint index of public joint p
        self._q_inv = np.argsort(self._q_perm)

        jl = [joints[n] for n in joint_names]
        self.lower = np.array([j.lower for j in jl])
        self.upper = np.array([j.upper for j in jl])
        self.velocity_limit = np.array([j.velocity for j in jl])
        self.effort_limit = np.array([j.effort for j in jl])
        self.joint_axis_local = np.array([j.axis for j in jl])  # in the child (joint) frame, public order

        self.link_mass = np.array([links[n].mass for n in order])
        self.link_com = np.array([links[n].com for n in order])
        self.link_inertia = np.array([links[n].inertia for n in order])
        self.total_mass = float(self.link_mass.sum())
        if self.total_mass <= 0.0:
            raise UrdfError("robot has no mass")

        # Parent frame of each frame; public joint index of each frame's parent joint (-1: fixed/root).
        self.frame_parent = np.full(nf, -1, dtype=np.int64)
        self.frame_joint = np.full(nf, -1, dtype=np.int64)
        origin = np.tile(np.eye(4), (nf, 1, 1))
        for i, name in enumerate(order[1:], start=1):
            j = joints[parent_joint[name]]
            self.frame_parent[i] = self._frame_index[j.parent]
            origin[i] = j.origin
            if j.type in MOVABLE_TYPES:
                self.frame_joint[i] = self._joint_index[j.name]
        #: frame (child link) of each public joint
        self.joint_frame = np.empty(nj, dtype=np.int64)
        self.joint_frame[self._q_perm] = np.arange(1, nj + 1)

        # Fold fixed joints: each frame gets its nearest movable "anchor" (root or a movable joint's child) and a
        # constant offset from it (processed in BFS order so parents come first).
        anchor = np.arange(nf, dtype=np.int64)
        offset = np.tile(np.eye(4), (nf, 1, 1))
        for name in bfs[1:]:
            i = self._frame_index[name]
            if self.frame_joint[i] < 0:
                p = self.frame_parent[i]
                anchor[i] = anchor[p]
                offset[i] = offset[p] @ origin[i]
        # Internal joints: effective origin X = offset(parent) · origin, relative to the parent's anchor.
        jf = np.arange(1, nj + 1)
        par_anchor = anchor[self.frame_parent[jf]]
        eff = offset[self.frame_parent[jf]] @ origin[jf]  # (nj, 4, 4)
        ax = self.joint_axis_local[self._q_perm]
        K = np.zeros((nj, 4, 4))
        K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -ax[:, 2], ax[:, 1], -ax[:, 0]
        K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = ax[:, 2], -ax[:, 1], ax[:, 0]
        # Local transform of joint j: X_j · [Rot(a_j, q_j) 0; 0 1], Rot = I + sin q K + (1 − cos q) K² (Rodrigues).
        # L = (X + X K²) + [sin q, cos q] · [X K ; −X K²]  (one small batched matmul per call).
        EK = eff @ K
        EK2 = eff @ (K @ K)
        self._E2 = eff + EK2
        self._EKK = np.stack([EK.reshape(nj, 16), -EK2.reshape(nj, 16)], axis=1)  # (nj, 2, 16)
        self._sincos_shift = np.array([0.0, np.pi / 2])
        self._I4 = np.eye(4)
        self._axis_int = ax
        jdepth = np.array([depth[order[i]] for i in jf])
        self._levels: list[tuple[slice, NDArray[np.int64]]] = []
        for d in range(1, int(jdepth.max(initial=0)) + 1):
            js = np.nonzero(jdepth == d)[0]
            if js.size:
                assert np.all(np.diff(js) == 1)
                par = par_anchor[js]
                # Parents as a slice when they are contiguous and in order (avoids a gather), else an index array.
                if np.all(par == par[0]):
                    pidx: slice | NDArray[np.int64] = slice(int(par[0]), int(par[0]) + 1)
                elif np.all(np.diff(par) == 1):
                    pidx = slice(int(par[0]), int(par[-1]) + 1)
                else:
                    pidx = par
                self._levels.append((slice(int(js[0]), int(js[-1]) + 1), pidx))
        self._fixed = slice(nj + 1, nf)
        self._fixed_anchor = anchor[nj + 1:]
        self._fixed_offset = offset[nj + 1:]

        # Subtree membership S(j): internal (nj_int × nf) float mask and public bool view.
        sub = np.zeros((nj, nf), dtype=bool)
        for i in range(1, nf):
            k = i
            while k > 0:
                if k <= nj:
                    sub[k - 1, i] = True
                k = int(self.frame_parent[k])
        self._sub_f = sub.astype(float)
        self.joint_subtree = sub[self._q_inv]  # public joint order
        self._sub_mass_int = self._sub_f @ self.link_mass
        self.subtree_mass = self._sub_mass_int[self._q_inv]
        # Constant tensor E with  a @ E  = [a]x flattened row-major.
        E = np.zeros((3, 9))
        E[2, 1], E[1, 2], E[2, 3], E[0, 5], E[1, 6], E[0, 7] = -1, 1, 1, -1, -1, 1
        self._skewE = E
        self._com_h = np.concatenate([self.link_com, np.ones((nf, 1))], axis=1)[:, :, None]  # (nf, 4, 1)
        self._mcom_h = self._com_h * self.link_mass[:, None, None]  # m_i [c_i; 1]
        # G @ (m_i c_i) = [c (whole-body CoM); Σ_{i∈S(j)} m_i c_i / M for every internal joint j]
        self._G = np.vstack([np.ones((1, nf)), self._sub_f]) / self.total_mass
        self._sub_mass_frac = self._sub_mass_int / self.total_mass
        self._idx_cache: dict = {}

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_urdf_string(cls, urdf: str, joint_names: Sequence[str] | None = None) -> RobotModel:
        """Build the model from an expanded URDF string (e.g. ``atlas_description.urdf_string()``)."""
        return cls(urdf, joint_names)

    def frame_index(self, name: str) -> int:
        """Index of a frame (link or fixed frame) by name."""
        try:
            return self._frame_index[name]
        except KeyError:
            raise KinematicsInputError(f"unknown frame {name!r}") from None

    def joint_index(self, name: str) -> int:
        try:
            return self._joint_index[name]
        except KeyError:
            raise KinematicsInputError(f"unknown joint {name!r}") from None

    def frame_indices(self, names: Sequence[str] | str | int | Sequence[int]) -> NDArray[np.int64]:
        """Frame indices for a name, an index or a sequence of them (cached for tuples of names)."""
        key = names if isinstance(names, (str, int, np.integer)) else tuple(names)
        hit = self._idx_cache.get(key)
        if hit is not None:
            return hit
        seq = [names] if isinstance(names, (str, int, np.integer)) else list(names)
        out = np.empty(len(seq), dtype=np.int64)
        for i, n in enumerate(seq):
            if isinstance(n, (int, np.integer)):
                if not 0 <= int(n) < self.n_frames:
                    raise KinematicsInputError(f"frame index {n} out of range")
                out[i] = int(n)
            else:
                out[i] = self.frame_index(n)
        self._idx_cache[key] = out
        return out

    def _frame_sel(self, frames: Sequence[str] | Sequence[int] | str) -> tuple[NDArray[np.int64], NDArray]:
        """(frame indices, (nj_int, k) subtree-membership mask), cached per frames key."""
        key = ("sel", frames if isinstance(frames, (str, int, np.integer)) else tuple(frames))
        hit = self._idx_cache.get(key)
        if hit is None:
            idx = self.frame_indices(frames)
            hit = (idx, np.ascontiguousarray(self._sub_f[:, idx]))
            self._idx_cache[key] = hit
        return hit

    def check_q(self, q: ArrayLike) -> NDArray[np.float64]:
        """Validate a joint vector: shape (n_joints,), finite. Returns a float array (no copy if possible)."""
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n_joints,):
            raise KinematicsInputError(f"q must have shape ({self.n_joints},), got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise KinematicsInputError("q contains NaN/inf")
        return q

    def clip_to_limits(self, q: ArrayLike) -> NDArray[np.float64]:
        return np.clip(np.asarray(q, dtype=float), self.lower, self.upper)

    def random_configurations(self, n: int, rng: np.random.Generator | int | None = None) -> NDArray[np.float64]:
        """``n`` configurations uniform inside the limits (continuous joints: uniform in [−π, π])."""
        rng = np.random.default_rng(rng)
        lo = np.where(np.isfinite(self.lower), self.lower, -np.pi)
        hi = np.where(np.isfinite(self.upper), self.upper, np.pi)
        return rng.uniform(lo, hi, size=(n, self.n_joints))

    def mass_moved(self, root: str | int | None = None) -> NDArray[np.float64]:
        """Mass moved by each joint when ``root`` is held fixed (thesis §4.2.1 weighting).

        Pelvis root: ``m_sub(j)``.  Other root ``r``: ``m_sub(j)`` if ``r ∉ S(j)``, else ``M − m_sub(j)`` (the
        pelvis side moves).
        """
        if root is None:
            return self.subtree_mass.copy()
        r = self.frame_indices(root)[0]
        s_r = self.joint_subtree[:, r]
        return np.where(s_r, self.total_mass - self.subtree_mass, self.subtree_mass)

    # ------------------------------------------------------------------ kinematics
    def forward(self, q: ArrayLike, check: bool = True) -> Kinematics:
        """Forward kinematics of every frame (pelvis frame).  Returns a :class:`Kinematics` (lazy Jacobians/CoM).

        Thesis Eq. 2.1 chained over the tree: ``T_i = T_parent(i) · X_origin(i) · Rot(a_i, q_i)``, one batched
        4×4 product per depth level.
        """
        if check:
            q = self.check_q(q)
        nj = self.n_joints
        sc = np.sin(q.take(self._q_perm)[:, None] + self._sincos_shift)  # (nj, 2): sin q, cos q
        L = np.matmul(sc[:, None, :], self._EKK).reshape(nj, 4, 4)
        L += self._E2  # Rodrigues: X (I + sin q K + (1 − cos q) K²)
        T = np.empty((self.n_frames, 4, 4))
        T[0] = self._I4
        for sl, par in self._levels:
            Tp = T[par] if isinstance(par, slice) else T.take(par, axis=0)
            np.matmul(Tp, L[sl], out=T[sl.start + 1:sl.stop + 1])
        if self._fixed_anchor.size:
            np.matmul(T.take(self._fixed_anchor, axis=0), self._fixed_offset, out=T[self._fixed])
        return Kinematics(self, q, T)


class Kinematics:
    """Result of :meth:`RobotModel.forward`: poses of all frames in the pelvis frame, plus Jacobians on demand.

    Attributes:
        T (n_frames, 4, 4): pelvis←frame homogeneous transforms (frame order = ``model.frame_names``).
        rot (n_frames, 3, 3), pos (n_frames, 3): views into ``T``.
    """

    __slots__ = ("model", "q", "T", "rot", "pos", "_A", "_Sk", "_com", "_smc")

    def __init__(self, model: RobotModel, q: NDArray[np.float64], T: NDArray[np.float64]) -> None:
        self.model = model
        self.q = q
        self.T = T
        self.rot = T[:, :3, :3]
        self.pos = T[:, :3, 3]
        self._A: NDArray | None = None
        self._Sk: NDArray | None = None
        self._com: NDArray | None = None
        self._smc: NDArray | None = None

    # --- basic quantities
    def _axes_int(self) -> NDArray[np.float64]:
        if self._A is None:
            nj = self.model.n_joints
            self._A = (self.rot[1:nj + 1] @ self.model._axis_int[:, :, None])[:, :, 0]
            self._Sk = (self._A @ self.model._skewE).reshape(nj, 3, 3)
        return self._A

    @property
    def joint_axes(self) -> NDArray[np.float64]:
        """(n_joints, 3) joint axes ``a_j`` in the pelvis frame (public joint order)."""
        return self._axes_int()[self.model._q_inv]

    @property
    def joint_positions(self) -> NDArray[np.float64]:
        """(n_joints, 3) joint positions ``p_j`` in the pelvis frame (public joint order)."""
        return self.pos[self.model.joint_frame]

    def position(self, frame: str | int, root: str | int | None = None) -> NDArray[np.float64]:
        """Origin of ``frame`` in the pelvis frame, or in frame ``root``: ``R_rᵀ (p − p_r)``."""
        return self.positions([frame] if isinstance(frame, (str, int, np.integer)) else frame, root)[0]

    def positions(self, frames: Sequence[str] | Sequence[int], root: str | int | None = None) -> NDArray[np.float64]:
        """(k, 3) origins of ``frames`` in the pelvis frame or in the frame ``root``."""
        idx = self.model.frame_indices(frames)
        if root is None:
            return self.pos[idx]
        r = self.model.frame_indices(root)[0]
        return (self.pos[idx] - self.pos[r]) @ self.rot[r]

    def rotation(self, frame: str | int, root: str | int | None = None) -> NDArray[np.float64]:
        i = self.model.frame_indices(frame)[0]
        if root is None:
            return self.rot[i].copy()
        r = self.model.frame_indices(root)[0]
        return self.rot[r].T @ self.rot[i]

    def transform(self, frame: str | int, root: str | int | None = None) -> NDArray[np.float64]:
        i = self.model.frame_indices(frame)[0]
        if root is None:
            return self.T[i].copy()
        r = self.model.frame_indices(root)[0]
        out = np.eye(4)
        out[:3, :3] = self.rot[r].T @ self.rot[i]
        out[:3, 3] = self.rot[r].T @ (self.pos[i] - self.pos[r])
        return out

    def link_coms(self) -> NDArray[np.float64]:
        """(n_frames, 3) link CoMs in the pelvis frame."""
        return (self.T @ self.model._com_h)[:, :3, 0]

    def _mass_weighted(self) -> NDArray[np.float64]:
        if self._smc is None:
            m = self.model
            g = m._G @ (self.T @ m._mcom_h)[:, :3, 0]  # (1 + nj, 3)
            self._com = g[0]
            self._smc = g[1:]  # (nj_int, 3): Σ_{i∈S(j)} m_i c_i / M
        return self._smc

    def com(self, root: str | int | None = None) -> NDArray[np.float64]:
        """Whole-body CoM ``Σ m_i c_i / M`` in the pelvis frame or in frame ``root``."""
        self._mass_weighted()
        c = self._com
        if root is None:
            return c.copy()
        r = self.model.frame_indices(root)[0]
        return self.rot[r].T @ (c - self.pos[r])

    # --- Jacobians
    def point_jacobians(
        self,
        frames: Sequence[str] | Sequence[int] | str,
        root: str | int | None = None,
        floating_base: bool = False,
        base_rot: ArrayLike | None = None,
        points_local: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Stacked point Jacobians, 3k × n_joints (or 3k × (6 + n_joints) with ``floating_base``), Eq. 4.4–4.6.

        Args:
            frames: k frame names/indices; rows ``3i:3i+3`` belong to ``frames[i]``.
            root: ``None`` = pelvis; otherwise the frame held fixed, result expressed in it (thesis Eq. 4.13).
            floating_base: prepend the 6 virtual base columns (only with ``root=None``).
            base_rot: world←pelvis rotation; with it the Jacobian rows (and base columns) are in world coordinates.
            points_local: optional (k, 3) offsets of the points in their frames (default: frame origins).
        """
        m = self.model
        idx, sel = m._frame_sel(frames)
        k = idx.shape[0]
        pe = self.pos.take(idx, axis=0)
        if points_local is not None:
            pl = np.asarray(points_local, dtype=float).reshape(k, 3)
            pe = pe + (self.rot[idx] @ pl[:, :, None])[:, :, 0]
        if self._A is None:
            self._axes_int()
        nj = m.n_joints
        P = self.pos[1:nj + 1]
        if root is not None:
            r = m.frame_indices(root)[0]
            sel = sel - m._sub_f[:, r:r + 1]
        D = pe.T[None, :, :] - P[:, :, None]  # (nj, 3, k)
        D *= sel[:, None, :]
        C = self._Sk @ D  # (nj, 3, k):  a_j × (p_e − p_j) · sel
        J = C.take(m._q_inv, axis=0).transpose(2, 1, 0).reshape(3 * k, nj)
        if root is not None:
            if floating_base:
                raise KinematicsInputError("floating_base is defined with the pelvis as root only")
            return (self.rot[r].T @ J.reshape(k, 3, nj)).reshape(3 * k, nj)
        if floating_base:
            return self._add_base(J, pe, base_rot)
        if base_rot is not None:
            Rb = np.asarray(base_rot, dtype=float).reshape(3, 3)
            J = (Rb @ J.reshape(k, 3, nj)).reshape(3 * k, nj)
        return J

    def task_jacobian(self, frames: Sequence[str] | Sequence[int]) -> NDArray[np.float64]:
        """Stacked ``[J_{frame_0}; …; J_{frame_k−1}; J_CoM]`` ((3k + 3) × n_joints, pelvis frame) in one pass.

        Same numbers as :meth:`point_jacobians` followed by :meth:`com_jacobian`; used by the IIK hot path.
        """
        m = self.model
        idx, sel = m._frame_sel(frames)
        k = idx.shape[0]
        if self._A is None:
            self._axes_int()
        smc = self._mass_weighted()
        nj = m.n_joints
        P = self.pos[1:nj + 1]
        D = np.empty((nj, 3, k + 1))
        np.subtract(self.pos.take(idx, axis=0).T[None, :, :], P[:, :, None], out=D[:, :, :k])
        D[:, :, :k] *= sel[:, None, :]
        np.subtract(smc, m._sub_mass_frac[:, None] * P, out=D[:, :, k])
        C = self._Sk @ D
        return C.take(m._q_inv, axis=0).transpose(2, 1, 0).reshape(3 * (k + 1), nj)

    def _add_base(self, J: NDArray, pts: NDArray, base_rot: ArrayLike | None) -> NDArray:
        k = pts.shape[0]
        n = self.model.n_joints
        out = np.zeros((3 * k, 6 + n))
        if base_rot is not None:
            Rb = np.asarray(base_rot, dtype=float).reshape(3, 3)
            pts = pts @ Rb.T
            J = (Rb @ J.reshape(k, 3, n)).reshape(3 * k, n)
        for i in range(k):
            out[3 * i:3 * i + 3, 0:3] = np.eye(3)
            out[3 * i:3 * i + 3, 3:6] = -skew(pts[i])
        out[:, 6:] = J
        return out

    def point_jacobian(self, frame: str | int, root: str | int | None = None, **kw) -> NDArray[np.float64]:
        """3 × n_joints Jacobian of one frame origin (see :meth:`point_jacobians`)."""
        return self.point_jacobians([frame], root=root, **kw)

    def com_jacobian(
        self, root: str | int | None = None, floating_base: bool = False, base_rot: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """3 × n_joints whole-body CoM Jacobian (DESIGN §6, corrected thesis Eq. 4.12), pelvis or ``root`` frame.

        ``J_c[:, j] = a_j × (Σ_{i∈S(j)} m_i c_i − m_sub(j) p_j) / M``; with root ``r`` the pelvis-side term
        ``− s_r(j) a_j × M (c − p_j) / M`` is added and the result rotated into ``r``.
        """
        m = self.model
        smc = self._mass_weighted()
        nj = m.n_joints
        P = self.pos[1:nj + 1]
        v = smc - m._sub_mass_frac[:, None] * P  # (nj, 3): (Σ_{S(j)} m_i c_i − m_sub(j) p_j) / M
        if root is not None:
            r = m.frame_indices(root)[0]
            v = v - m._sub_f[:, r:r + 1] * (self._com[None, :] - P)
        if self._A is None:
            self._axes_int()
        J = (self._Sk @ v[:, :, None])[:, :, 0].take(m._q_inv, axis=0).T  # (3, nj)
        if root is not None:
            if floating_base:
                raise KinematicsInputError("floating_base is defined with the pelvis as root only")
            return self.rot[r].T @ J
        if floating_base:
            return self._add_base(J, self._com[None, :], base_rot)
        if base_rot is not None:
            return np.asarray(base_rot, dtype=float).reshape(3, 3) @ J
        return J

    def rotation_jacobian(self, frame: str | int, root: str | int | None = None) -> NDArray[np.float64]:
        """3 × n_joints angular-velocity Jacobian of a frame: column ``s_e(j) a_j`` (root change as for points)."""
        m = self.model
        i = m.frame_indices(frame)[0]
        sel = m._sub_f[:, i]
        A = self._axes_int()
        if root is not None:
            r = m.frame_indices(root)[0]
            sel = sel - m._sub_f[:, r]
            return self.rot[r].T @ (A * sel[:, None]).take(m._q_inv, axis=0).T
        return (A * sel[:, None]).take(m._q_inv, axis=0).T
