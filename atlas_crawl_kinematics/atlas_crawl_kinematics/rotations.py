"""The project's one quaternion / rotation-matrix module (numpy only; checked against scipy in the tests).

Quaternions are unit (w, x, y, z) ("wxyz", MuJoCo's order) or (x, y, z, w) ("xyzw", ROS messages and scipy);
every function names its order. Matrices rotate body coordinates into the world (R @ v_body = v_world).
Batch-capable: a (..., 4) array of quaternions gives (..., 3, 3) matrices. Inputs are normalised; a zero or
non-finite quaternion raises ValueError.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["quat_wxyz_to_R", "quat_xyzw_to_R", "R_to_quat_wxyz", "R_to_quat_xyzw", "quat_wxyz_to_rpy",
           "quat_mul_wxyz", "wxyz_to_xyzw", "xyzw_to_wxyz", "rotvec_to_R", "R_between"]


def _unit(q: ArrayLike) -> NDArray[np.float64]:
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (4,):
        raise ValueError(f"a quaternion has 4 components, got shape {q.shape}")
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if not np.all(np.isfinite(q)) or np.any(n == 0.0):
        raise ValueError(f"not a rotation quaternion (zero or non-finite): {q!r}")
    return q / n


def wxyz_to_xyzw(q: ArrayLike) -> NDArray[np.float64]:
    return np.roll(np.asarray(q, dtype=float), -1, axis=-1)


def xyzw_to_wxyz(q: ArrayLike) -> NDArray[np.float64]:
    return np.roll(np.asarray(q, dtype=float), 1, axis=-1)


def quat_wxyz_to_R(q: ArrayLike) -> NDArray[np.float64]:
    """(..., 4) quaternions (w, x, y, z) -> (..., 3, 3) rotation matrices."""
    w, x, y, z = np.moveaxis(_unit(q), -1, 0)
    r = np.empty(np.shape(w) + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def quat_xyzw_to_R(q: ArrayLike) -> NDArray[np.float64]:
    """(..., 4) quaternions (x, y, z, w) -> (..., 3, 3) rotation matrices."""
    return quat_wxyz_to_R(xyzw_to_wxyz(q))


def R_to_quat_wxyz(R: ArrayLike) -> NDArray[np.float64]:
    """(..., 3, 3) rotation matrices -> (..., 4) unit quaternions (w, x, y, z) with w >= 0 (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    if R.shape[-2:] != (3, 3):
        raise ValueError(f"a rotation matrix is 3x3, got shape {R.shape}")
    m = R.reshape(-1, 3, 3)
    out = np.empty((len(m), 4))
    for i, a in enumerate(m):
        tr = a[0, 0] + a[1, 1] + a[2, 2]
        k = int(np.argmax([tr, a[0, 0], a[1, 1], a[2, 2]]))
        if k == 0:
            s = 2.0 * np.sqrt(1.0 + tr)
            q = (0.25 * s, (a[2, 1] - a[1, 2]) / s, (a[0, 2] - a[2, 0]) / s, (a[1, 0] - a[0, 1]) / s)
        elif k == 1:
            s = 2.0 * np.sqrt(1.0 + a[0, 0] - a[1, 1] - a[2, 2])
            q = ((a[2, 1] - a[1, 2]) / s, 0.25 * s, (a[0, 1] + a[1, 0]) / s, (a[0, 2] + a[2, 0]) / s)
        elif k == 2:
            s = 2.0 * np.sqrt(1.0 + a[1, 1] - a[0, 0] - a[2, 2])
            q = ((a[0, 2] - a[2, 0]) / s, (a[0, 1] + a[1, 0]) / s, 0.25 * s, (a[1, 2] + a[2, 1]) / s)
        else:
            s = 2.0 * np.sqrt(1.0 + a[2, 2] - a[0, 0] - a[1, 1])
            q = ((a[1, 0] - a[0, 1]) / s, (a[0, 2] + a[2, 0]) / s, (a[1, 2] + a[2, 1]) / s, 0.25 * s)
        q = np.asarray(q) / np.linalg.norm(q)
        out[i] = -q if q[0] < 0 else q
    return out.reshape(R.shape[:-2] + (4,))


def R_to_quat_xyzw(R: ArrayLike) -> NDArray[np.float64]:
    return wxyz_to_xyzw(R_to_quat_wxyz(R))


def quat_wxyz_to_rpy(q: ArrayLike) -> NDArray[np.float64]:
    """(..., 4) quaternions (w, x, y, z) -> (..., 3) ZYX Euler angles (roll, pitch, yaw) [rad], R = Rz Ry Rx."""
    w, x, y, z = np.moveaxis(_unit(q), -1, 0)
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def quat_mul_wxyz(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Hamilton product a ⊗ b of (w, x, y, z) quaternions (the rotation b first, then a)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=float), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def rotvec_to_R(v: ArrayLike) -> NDArray[np.float64]:
    """Rotation vector (3,) [rad] (axis × angle) -> 3×3 matrix, the SO(3) exponential map (Rodrigues' formula;
    second-order series below 1e-8 rad)."""
    v = np.asarray(v, dtype=float).reshape(3)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"not a finite rotation vector: {v!r}")
    th2 = float(v @ v)
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    if th2 < 1e-16:
        return np.eye(3) + K + 0.5 * (K @ K)
    th = np.sqrt(th2)
    return np.eye(3) + (np.sin(th) / th) * K + ((1.0 - np.cos(th)) / th2) * (K @ K)


def R_between(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """The smallest rotation taking direction ``a`` (3,) to direction ``b`` (3,): about ``a × b`` by their angle
    (identity for parallel vectors; antiparallel ones have no unique answer and raise ValueError)."""
    a = np.asarray(a, dtype=float).reshape(3)
    b = np.asarray(b, dtype=float).reshape(3)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if not (np.isfinite(na) and np.isfinite(nb) and na > 0 and nb > 0):
        raise ValueError("R_between: needs finite non-zero vectors")
    a, b = a / na, b / nb
    v = np.cross(a, b)
    s, c = float(np.linalg.norm(v)), float(a @ b)
    if s < 1e-12:
        if c > 0:
            return np.eye(3)
        raise ValueError("R_between: antiparallel vectors")
    return rotvec_to_R(v / s * np.arctan2(s, c))
