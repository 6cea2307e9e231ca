"""Jacobian accuracy harness (issue 2 §4; thesis §4.2.2 Algorithm 3 / Table 4.4 and §4.3.3 / Table 4.7).

The robot lies on its back in MuJoCo physics (free-floating pelvis, floor, position servos) and is driven through a
scripted joint-space motion of arms, legs and back.  The sensed joints ``q_t`` are logged at 1 kHz.  For each loop
rate f ∈ {1, 5, 10, 50, 100} Hz the log is sampled every 1000/f steps and the contact points (pelvis frame) and the
CoM are dead-reckoned with the Jacobian computed at the previous sample (thesis Algorithm 3, line 12):

    y_t = y_{t−1} + J(q_{t−1}) (q_t − q_{t−1}),   y_0 = x_0,

and compared with the true positions ``x_t`` read from MuJoCo (site/body positions relative to the pelvis).
Metrics (thesis §4.2.2): Mean Error ``(1/T) Σ‖y_t − x_t‖``; Final Error = mean of the last 20 samples; Task Error
Rate ``E_fin / Σ‖x_t − x_{t−1}‖``; Joint Error Rate ``E_fin / Σ‖q_t − q_{t−1}‖`` (m per rad).  End-effector
figures are averaged over the four contact points.

Usage::

    python lab/jacobian_accuracy.py [--seconds-per-move S] [--own-model]

Uses ``atlas_crawl_mujoco.model.build_model`` (the project's MuJoCo backend) when importable, else builds an
equivalent model itself (free joint, floor, servos kp 2000 legs/back, 1000 arms, kv = 0.05 kp, armature 0.01).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from atlas_crawl_kinematics.model import RobotModel
from atlas_description import CONTACT_FRAMES, model_urdf

#: Thesis Table 4.4 (End-Effector Jacobian Accuracy Statistics, §4.2.2):
#: loop rate Hz -> (mean error m, final error m, task error rate, joint error rate m/rad)
THESIS_TABLE_4_4 = {
    1: (0.2626, 0.3222, 0.1878, 0.1780),
    5: (0.0623, 0.0791, 0.0451, 0.0350),
    10: (0.0371, 0.0476, 0.0261, 0.0172),
    50: (0.0191, 0.0250, 0.0126, 0.0043),
    100: (0.0154, 0.0206, 0.0101, 0.0021),
}
#: Thesis Table 4.7 (CoM Jacobian Accuracy Statistics, §4.3.3): rate Hz -> (mean error m, max error m, error rate).
#: (The thesis has no 5 Hz row.)
THESIS_TABLE_4_7 = {
    1: (0.0648, 0.0836, 0.1298),
    10: (0.0091, 0.0111, 0.0171),
    50: (0.0048, 0.0062, 0.0090),
    100: (0.0037, 0.0052, 0.0075),
}
LOOP_RATES_HZ = (1, 5, 10, 50, 100)
PHYSICS_HZ = 1000

#: Scripted waypoints (joint name -> rad), applied on top of the lying pose; each is reached by a smooth move.
WAYPOINTS: tuple[dict[str, float], ...] = (
    {"l_arm_shx": -1.0, "r_arm_shx": 1.0, "l_arm_ely": 1.5, "r_arm_ely": 1.5},
    {"l_arm_usy": -1.2, "r_arm_usy": -1.2, "l_arm_elx": 1.5, "r_arm_elx": -1.5, "l_leg_lhy": -1.2,
     "r_leg_lhy": -1.2, "l_leg_kny": 1.8, "r_leg_kny": 1.8},
    {"l_arm_uwy": 1.0, "r_arm_uwy": 1.0, "l_arm_mwx": 0.8, "r_arm_mwx": -0.8, "l_leg_mhx": 0.3,
     "r_leg_mhx": -0.3, "back_lbz": 0.4},
    {"l_arm_shx": -0.3, "r_arm_shx": 0.3, "l_arm_usy": 0.5, "r_arm_usy": 0.5, "l_leg_uhz": 0.5,
     "r_leg_uhz": -0.5, "l_leg_kny": 0.8, "r_leg_kny": 0.8, "back_ubx": 0.3},
    {"l_arm_ely": 0.5, "r_arm_ely": 0.5, "l_arm_elx": 0.5, "r_arm_elx": -0.5, "l_leg_lhy": -0.3,
     "r_leg_lhy": -0.3, "back_lbz": -0.4, "back_mby": 0.3},
    {},  # back to the lying pose
)


def _lying_pose(model: RobotModel) -> np.ndarray:
    q = np.zeros(model.n_joints)
    q[model.joint_index("l_arm_shx")] = -1.3  # arms out to the side (crucify-like)
    q[model.joint_index("r_arm_shx")] = 1.3
    return model.clip_to_limits(q)


def _build_mujoco(own: bool):
    """(MjModel, urdf string used for it, source description)."""
    import mujoco

    if not own:
        try:
            from atlas_crawl_mujoco.model import build_model, prepared_urdf  # type: ignore[import-not-found]

            return build_model(), prepared_urdf(), "atlas_crawl_mujoco.model.build_model"
        except Exception as exc:  # the backend is optional here; fall back to our own model build
            print(f"(atlas_crawl_mujoco unavailable: {type(exc).__name__}: {exc}; building the model here)")
    from atlas_crawl_mujoco.mj_oracle import ensure_mujoco_tag

    urdf = ensure_mujoco_tag(model_urdf(sim="mujoco"))
    spec = mujoco.MjSpec.from_string(urdf)
    spec.option.timestep = 1.0 / PHYSICS_HZ
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.body("pelvis").add_freejoint(name="floating_base")
    for g in spec.geoms:
        g.contype, g.conaffinity = 1, 0
    floor = spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
    floor.contype, floor.conaffinity = 0, 1
    tmp = RobotModel.from_urdf_string(urdf)
    for i, name in enumerate(tmp.joint_names):
        j = spec.joint(name)
        j.armature = 0.01
        kp = 1000.0 if "_arm_" in name else (100.0 if name == "neck_ay" else 2000.0)
        a = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        a.set_to_position(kp=kp, kv=0.05 * kp)
        a.forcelimited = True
        a.forcerange = [-tmp.effort_limit[i], tmp.effort_limit[i]]
    return spec.compile(), urdf, "own MjSpec build (freejoint, floor, servos)"


def simulate(seconds_per_move: float = 2.0, own_model: bool = False, settle_s: float = 2.0) -> dict:
    """Run the scripted motion; return the 1 kHz log (q, contact points and CoM in the pelvis frame)."""
    import mujoco

    m, urdf, source = _build_mujoco(own_model)
    model = RobotModel.from_urdf_string(urdf)
    d = mujoco.MjData(m)
    qadr = np.array([m.joint(n).qposadr[0] for n in model.joint_names])
    act = np.array([m.actuator(n).id for n in model.joint_names])
    free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE][0]
    fadr = m.jnt_qposadr[free]
    pelvis = m.body("pelvis").id
    # Truth points: MuJoCo sites if the backend defines them, else the contact bodies.
    pts_body, pts_local, truth = [], [], []
    for f in CONTACT_FRAMES:
        sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f)
        if sid >= 0:
            pts_body.append(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.site_bodyid[sid]))
            pts_local.append(m.site_pos[sid].copy())
            truth.append(("site", sid))
        else:
            pts_body.append(f)
            pts_local.append(np.zeros(3))
            truth.append(("body", m.body(f).id))
    pts_local_arr = np.array(pts_local)

    q0 = _lying_pose(model)
    d.qpos[fadr:fadr + 3] = [0.0, 0.0, 0.25]
    # pelvis rotated -90° about y: pelvis x (belly) points up, spine (pelvis z) along -x: lying on the back
    d.qpos[fadr + 3:fadr + 7] = [np.cos(-np.pi / 4), 0.0, np.sin(-np.pi / 4), 0.0]
    d.qpos[qadr] = q0
    d.ctrl[act] = q0
    mujoco.mj_forward(m, d)
    for _ in range(int(settle_s * PHYSICS_HZ)):
        mujoco.mj_step(m, d)

    targets = [q0]
    for wp in WAYPOINTS:
        q = q0.copy()
        for n, v in wp.items():
            q[model.joint_index(n)] = v
        targets.append(model.clip_to_limits(q))
    steps = int(seconds_per_move * PHYSICS_HZ)
    n = steps * (len(targets) - 1) + 1
    Q = np.empty((n, model.n_joints))
    X = np.empty((n, len(CONTACT_FRAMES), 3))
    C = np.empty((n, 3))
    # subtree CoM of the pelvis = whole robot
    k = 0

    def log():
        nonlocal k
        Rp = d.xmat[pelvis].reshape(3, 3)
        pp = d.xpos[pelvis]
        Q[k] = d.qpos[qadr]
        for i, (kind, idx) in enumerate(truth):
            w = d.site_xpos[idx] if kind == "site" else d.xpos[idx]
            X[k, i] = Rp.T @ (w - pp)
        C[k] = Rp.T @ (d.subtree_com[pelvis] - pp)
        k += 1

    log()
    for a, b in zip(targets[:-1], targets[1:]):
        for s in range(1, steps + 1):
            u = s / steps
            d.ctrl[act] = a + (b - a) * (10 * u**3 - 15 * u**4 + 6 * u**5)  # minimum-jerk blend
            mujoco.mj_step(m, d)
            log()
    return {"q": Q, "x": X, "com": C, "model": model, "pts_body": pts_body, "pts_local": pts_local_arr,
            "source": source}


def evaluate(log: dict, rates_hz=LOOP_RATES_HZ) -> dict[int, dict[str, float]]:
    """Dead-reckon with the Jacobians at each loop rate (thesis Algorithm 3) and compute the metrics."""
    model: RobotModel = log["model"]
    Q, X, Cm = log["q"], log["x"], log["com"]
    out: dict[int, dict[str, float]] = {}
    for f in rates_hz:
        stride = PHYSICS_HZ // f
        idx = np.arange(0, Q.shape[0], stride)
        q, x, c = Q[idx], X[idx], Cm[idx]
        y = np.empty_like(x)
        yc = np.empty_like(c)
        y[0], yc[0] = x[0], c[0]
        for t in range(1, len(idx)):
            k = model.forward(q[t - 1])
            J = k.point_jacobians(log["pts_body"], points_local=log["pts_local"])
            dq = q[t] - q[t - 1]
            y[t] = y[t - 1] + (J @ dq).reshape(-1, 3)
            yc[t] = yc[t - 1] + k.com_jacobian() @ dq
        e = np.linalg.norm(y - x, axis=2).mean(axis=1)  # mean over the 4 contacts
        ec = np.linalg.norm(yc - c, axis=1)
        path = np.linalg.norm(np.diff(x, axis=0), axis=2).sum(axis=0).mean()
        cpath = np.linalg.norm(np.diff(c, axis=0), axis=1).sum()
        jpath = np.linalg.norm(np.diff(q, axis=0), axis=1).sum()
        efin, cfin = e[-20:].mean(), ec[-20:].mean()
        out[f] = {"mean": e.mean(), "final": efin, "ter": efin / path, "jer": efin / jpath,
                  "com_mean": ec.mean(), "com_max": ec.max(), "com_final": cfin, "com_rate": cfin / cpath,
                  "samples": len(idx)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Jacobian accuracy harness (thesis Tables 4.4 and 4.7)")
    ap.add_argument("--seconds-per-move", type=float, default=2.0)
    ap.add_argument("--own-model", action="store_true", help="build the MuJoCo model here, not via the backend")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    log = simulate(a.seconds_per_move, a.own_model)
    res = evaluate(log)
    q = log["q"]
    print(f"MuJoCo model: {log['source']}; robot lying on its back; {len(WAYPOINTS)} scripted moves of "
          f"{a.seconds_per_move:.1f} s; physics {PHYSICS_HZ} Hz; joint path {np.abs(np.diff(q, axis=0)).sum():.1f} rad "
          f"(sum |dq|), contact path {np.linalg.norm(np.diff(log['x'], axis=0), axis=2).sum(axis=0).mean():.2f} m/limb")
    print("\nEnd-effector (4 contact points, pelvis frame) — ours | thesis Table 4.4")
    print(f"{'rate':>5} | {'Mean Err':>9} {'Final Err':>9} {'TER':>7} {'JER m/rad':>9} | "
          f"{'Mean':>7} {'Final':>7} {'TER':>7} {'JER':>7}")
    for f, r in res.items():
        t = THESIS_TABLE_4_4[f]
        print(f"{f:>4}Hz | {r['mean']:9.4f} {r['final']:9.4f} {r['ter']:7.4f} {r['jer']:9.4f} | "
              f"{t[0]:7.4f} {t[1]:7.4f} {t[2]:7.4f} {t[3]:7.4f}")
    print("\nCoM (pelvis frame) — ours | thesis Table 4.7")
    print(f"{'rate':>5} | {'Mean Err':>9} {'Max Err':>9} {'Final':>9} {'Err Rate':>8} | {'Mean':>7} {'Max':>7} {'Rate':>7}")
    for f, r in res.items():
        t = THESIS_TABLE_4_7.get(f)
        ts = f"{t[0]:7.4f} {t[1]:7.4f} {t[2]:7.4f}" if t else f"{'—':>7} {'—':>7} {'—':>7}"
        print(f"{f:>4}Hz | {r['com_mean']:9.4f} {r['com_max']:9.4f} {r['com_final']:9.4f} {r['com_rate']:8.4f} | {ts}")
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
