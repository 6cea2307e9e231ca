"""Report figures (matplotlib Agg, PNG): thesis Figs 4.4, 4.5/4.9, 4.10 styles."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from atlas_crawl_kinematics.rotations import quat_wxyz_to_R  # noqa: E402

from . import _support, metrics  # noqa: E402
from .trial_log import LIMB_NAMES, TrialLog  # noqa: E402

LIMB_COLOURS = ("tab:red", "tab:blue", "tab:orange", "tab:green")


def com_path(logs: list[TrialLog], path, heading_source="pelvis_z", title="") -> Path:
    """CoM projection in the world, raw and smoothed, pelvis heading arrows at each cycle start (Figs 4.5/4.9).
    The first trial is drawn in full; the others' smoothed paths are drawn faint."""
    fig, ax = plt.subplots(figsize=(7, 6))
    for j, log in enumerate(logs[1:], 1):
        xs = metrics.com_xy_smoothed(log)
        ax.plot(xs[:, 0], xs[:, 1], color="0.75", lw=0.8, label="other trials (smoothed)" if j == 1 else None)
    log = logs[0]
    xs = metrics.com_xy_smoothed(log)
    th = metrics.heading_rad(log, heading_source)
    ax.plot(log.com_pos_m[:, 0], log.com_pos_m[:, 1], color="tab:gray", lw=0.6, alpha=0.8, label="CoM raw")
    ax.plot(xs[:, 0], xs[:, 1], color="k", lw=1.6, label="CoM smoothed (σ=50, ±200 samples)")
    cyc = metrics.cycles(log)
    span = np.ptp(xs, axis=0).max() if len(xs) else 1.0
    L = max(0.08 * span, 0.05)
    starts = [c.start for c in cyc] + ([cyc[-1].end] if cyc else [])
    for k, i in enumerate(starts):
        tip = (xs[i, 0] + L * np.cos(th[i]), xs[i, 1] + L * np.sin(th[i]))
        ax.annotate("", xy=tip, xytext=(xs[i, 0], xs[i, 1]),
                    arrowprops=dict(arrowstyle="->", color="tab:blue", lw=1.2))
        ax.plot(*tip, alpha=0.0)  # arrow tips inside the axis limits
    if starts:
        ax.plot(*xs[starts[0]], "o", color="tab:green", label="gait start")
        ax.plot(*xs[starts[-1]], "s", color="tab:red", label="gait end")
    ax.plot([], [], color="tab:blue", label=f"heading ({heading_source}) at cycle starts")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("world x [m]")
    ax.set_ylabel("world y [m]")
    ax.set_title(title or "CoM path (world frame)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return _save(fig, path)


def pelvis_frame_points(log: TrialLog, pts_world) -> np.ndarray:
    """(N, k, 3) world points -> pelvis frame coordinates (N, k, 3)."""
    rot = quat_wxyz_to_R(log.pelvis_quat_wxyz)
    rel = np.asarray(pts_world) - log.pelvis_pos_m[:, None, :]
    return np.einsum("nji,nkj->nki", rot, rel)


def limb_paths(log: TrialLog, path, forward_axis="z", max_cycles=10, title="") -> Path:
    """Contact-frame paths of the four limbs in the pelvis frame over up to ``max_cycles`` cycles (Fig 4.10):
    solid circle = start, diamonds = each loop end. Top row: forward vs lateral (pelvis y); bottom row: forward
    vs the third pelvis axis."""
    fa = {"z": 2, "x": 0}[forward_axis]
    third = 0 if fa == 2 else 2
    cyc = metrics.cycles(log)[:max_cycles]
    if not cyc:
        raise metrics.MetricError("no cycle to plot")
    i0, i1 = cyc[0].start, cyc[-1].end
    p = pelvis_frame_points(log, log.contact_pos_m)[i0: i1 + 1]
    ends = [c.end - i0 for c in cyc]
    fig, axes = plt.subplots(2, 4, figsize=(14, 6.5))
    names = "xyz"
    for j, name in enumerate(LIMB_NAMES):
        for row, other in enumerate((1, third)):
            ax = axes[row, j]
            ax.plot(p[:, j, fa], p[:, j, other], color=LIMB_COLOURS[j], lw=0.8)
            ax.plot(p[0, j, fa], p[0, j, other], "o", color="k", ms=7, label="start")
            ax.plot(p[ends, j, fa], p[ends, j, other], "D", mfc="none", mec="k", ms=5, label="loop ends")
            ax.set_xlabel(f"pelvis {names[fa]} (forward) [m]")
            ax.set_ylabel(f"pelvis {names[other]} [m]")
            ax.set_aspect("equal", adjustable="datalim")
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(name)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(title or f"Limb contact paths in the pelvis frame, {len(cyc)} cycles")
    return _save(fig, path)


def support_polygons(log: TrialLog, path, forward_axis="z", cycle=1, title="") -> Path:
    """One subplot per key-frame phase of one cycle (Fig 4.4): contact points and CoM projection in the spatial
    frame (pelvis origin, z up, x = horizontal pelvis forward axis) at the middle sample of the phase; planned
    in-touch support polygon (solid), ground-truth contact polygon (dashed), signed margin in the title."""
    cyc = metrics.cycles(log)
    if not cyc:
        raise metrics.MetricError("no cycle to plot")
    c = cyc[min(cycle, len(cyc) - 1)]
    idx = np.arange(c.start, c.end)
    kfs = [k for k in dict.fromkeys(log.keyframe_index[idx].tolist())]
    n = len(kfs)
    cols = min(n, 4)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.6 * rows), squeeze=False)
    rot_all = quat_wxyz_to_R(log.pelvis_quat_wxyz)
    for a, k in enumerate(kfs):
        ax = axes.flat[a]
        sel = idx[log.keyframe_index[idx] == k]
        i = int(sel[len(sel) // 2])
        o, R = _support.spatial_frame(log.pelvis_pos_m[i], rot_all[i], forward_axis=forward_axis)
        to_s = lambda w: (np.atleast_2d(w) - o) @ R  # noqa: E731  world -> spatial frame rows
        cp = to_s(log.contact_pos_m[i])
        com = to_s(log.com_pos_m[i])[0]
        sup = log.planned_stance[i] & log.contact_in_touch[i]
        g = log.ground_points_m[i]
        g = to_s(g[np.all(np.isfinite(g), axis=1)]) if np.any(np.all(np.isfinite(g), axis=1)) else np.zeros((0, 3))
        margin = np.nan
        if sup.any():
            poly = _support.support_polygon(cp[sup, :2])
            margin = _support.stability_margin(com[:2], poly)
            closed = np.vstack([poly, poly[:1]])
            ax.fill(closed[:, 0], closed[:, 1], color="tab:cyan", alpha=0.25)
            ax.plot(closed[:, 0], closed[:, 1], color="tab:cyan", lw=1.2, label="planned∩touch support")
        if len(g):
            gp = _support.support_polygon(g[:, :2])
            gc = np.vstack([gp, gp[:1]])
            ax.plot(gc[:, 0], gc[:, 1], "--", color="0.4", lw=0.9, label="ground contacts hull")
            ax.plot(g[:, 0], g[:, 1], ".", color="0.4", ms=3)
        for j, name in enumerate(LIMB_NAMES):
            filled = log.contact_in_touch[i, j]
            ax.plot(cp[j, 0], cp[j, 1], "o", ms=8, color=LIMB_COLOURS[j], mfc=LIMB_COLOURS[j] if filled else "none",
                    label=f"{name}{'' if log.planned_stance[i, j] else ' (swing)'}")
        ax.plot(com[0], com[1], "k*", ms=12, label="CoM")
        ax.set_title(f"key-frame {k}, t={log.time_s[i]:.2f}s\nmargin {margin * 100:+.1f} cm", fontsize=9)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("spatial x (forward) [m]")
        ax.set_ylabel("spatial y [m]")
        ax.grid(alpha=0.3)
        if a == 0:
            handles, labels = ax.get_legend_handles_labels()
    for ax in axes.flat[n:]:
        ax.axis("off")
    fig.suptitle(title or f"Support polygons, cycle {c.index} (robot faces +x; hollow = not in touch)")
    fig.tight_layout(rect=(0, 0.06 if rows > 1 else 0.12, 1, 1))
    fig.legend(handles, [lb.replace(" (swing)", "") for lb in labels], loc="lower center", ncol=7, fontsize=8)
    return _save(fig, path, tight=False)


def margin_timeline(log: TrialLog, path, title="") -> Path:
    """Signed static margin of the raw CoM over time, planned and ground polygons, tripod phases shaded."""
    mp = metrics.margin_series(log, "planned")
    mg = metrics.margin_series(log, "ground")
    tri = log.planned_stance.sum(axis=1) == 3
    fig, ax = plt.subplots(figsize=(10, 3.2))
    t = log.time_s
    ax.fill_between(t, 0, 1, where=tri, transform=ax.get_xaxis_transform(), color="tab:orange", alpha=0.12,
                    label="tripod (3 planned stance)")
    ax.plot(t, mp * 100, lw=0.8, label="planned∩touch polygon")
    ax.plot(t, mg * 100, lw=0.8, alpha=0.7, label="ground-contact polygon")
    ax.axhline(3.0, color="tab:red", ls=":", lw=0.8, label="target 3 cm")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("margin [cm]")
    ax.set_title(title or "Static stability margin of the CoM projection")
    ax.legend(fontsize=7, ncol=4, loc="lower left")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def _save(fig, path, tight=True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
