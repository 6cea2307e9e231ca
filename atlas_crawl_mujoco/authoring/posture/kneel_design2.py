import sys, pickle, yaml, numpy as np
sys.path.insert(0, '/tmp/pw')
from ex import *
from ik import IK, kf
from atlas_crawl_mujoco.kin import support_margin
from atlas_crawl_mujoco.gait_design import com_in_triangle
JI = {n: i for i, n in enumerate(JOINT_NAMES)}
Y = yaml.safe_load(open('/work/main/atlas_crawl_controller/atlas_crawl_controller/gaits/kneel.yaml'))
pre = [k for k in Y['keyframes'] if k['name'] != 'crawl_stance']
sim = play({'fall_check': 'none', 'keyframes': pre}, start='stand', verbose=False, settle=1.0)
qs = sim.data.qpos.copy()
ik = IK(sim.model)
adr = ik.qadr
C0 = ik.centres(qs)
print('hands', C0[:2].round(3), 'knees', C0[2:].round(3), 'com', sim.com().round(3))
# crawl stance geometry
cs = load_script('crawl_stance'); qc = cs.keyframes[0].q
s2 = AtlasSim(); s2.fall_check = 'none'; s2.reset(qc, base_quat_wxyz=cs.start_quat_wxyz); s2.step(1500)
qcs = s2.data.qpos.copy(); Cc = ik.centres(qcs)
print('crawl stance centres rel LW-RW mid', (Cc - Cc[:2].mean(0)).round(3))
hm = C0[:2].mean(0)
# knee targets: crawl stance offsets from the hand midpoint (yaw assumed ~0)
KX = float("x") if False else 0.12
km = Cc[2:].mean(0)
Kt = Cc[2:] - km + np.array([KX, 0, 0]); r = ik.spheres[2][2]; Kt[:, 2] = r
HB = float("x") if False else 0.0
Ht = Cc[:2] - km + np.array([KX - HB, 0, 0]); Ht[:, 2] = C0[0, 2]
print('hand targets', Ht.round(3))
Ft = {f: ik.bpoint(qcs, f) - km + np.array([KX, 0, 0]) for f in ('l_foot', 'r_foot')}
print('foot targets', {f: v.round(3) for f, v in Ft.items()})
print('knee targets', Kt.round(3))
feet = {f: [(f, p, ik.bpoint(qs, f, p), 50) for p in [(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0)]] for f in ('l_foot', 'r_foot')}
FW = float("x") if False else 1000
feet = {f: [(a, b, c, FW) for a, b, c, _w in v] for f, v in feet.items()}
def rep(tag, qp, sup):
    com = ik.ik.forward(qp).subtree_com[0].copy()
    mg = support_margin(com[:2], np.array(sup)[:, :2])
    low = ik.lowest(qp, {'pelvis', 'utorso', 'l_foot', 'r_foot', 'l_lleg', 'r_lleg', 'l_uleg', 'r_uleg', 'head'})
    err = max(np.linalg.norm(ik.bpoint(qp, f, p) - ik.bpoint(qs, f, p)) for f in feet for p in [(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0)]) if feet else 0.0
    print(f'{tag:14s} com=({com[0]:+.3f},{com[1]:+.3f}) mg={mg:+.3f} herr={err:.3f} pz={qp[2]:.3f} px={qp[0]:+.3f} low=' + ' '.join(f'{k}:{v:.2f}' for k, v in low.items()))
    return mg
SPH_BODY = ['l_hand', 'r_hand', 'l_lleg', 'r_lleg']
def cpoints(qp, st):
    d = ik.ik.forward(qp); out = []
    C = ik.centres(qp)
    for x in st:
        if isinstance(x, int):
            out.append((ik.spheres[x][0], C[x] - np.array([0, 0, ik.spheres[x][2]])))
        else:
            b = sim.model.body(x).id
            sid = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_SITE, x.replace('foot', 'sole'))
            sp = d.site_xpos[sid]
            for dx in (-0.05, 0.12):
                for dy in (-0.05, 0.05):
                    out.append((b, sp + np.array([dx, dy, 0])))
    return out
def sagq(qp, st, wt=4.0):
    m = sim.model; d = ik.ik.forward(qp); d.qvel[:] = 0; d.qacc[:] = 0
    bias = np.zeros(m.nv); mujoco.mj_rne(m, d, 0, bias)
    jp = np.zeros((3, m.nv)); J = []
    cps = cpoints(qp, st)
    for b, pw in cps:
        mujoco.mj_jac(m, d, jp, None, pw, b); J.append(jp.copy())
    J = np.vstack(J); A = J[:, :6].T
    w = np.tile([wt, wt, 1.0], len(cps)); Wi = np.diag(1 / w)
    f = Wi @ A.T @ np.linalg.solve(A @ Wi @ A.T + 1e-9 * np.eye(6), bias[:6])
    tau = (bias - J.T @ f)[ik.dof]
    F = f.reshape(-1, 3)
    return qp[adr] + SAG * tau / sim.kp, F
SWW = float("x") if False else 30.0
PZW = float("x") if False else 20.0
SAG = float("x") if False else 1.0
def KF(name, qp, st):
    q, F = sagq(qp, st)
    print(f'   {name} stance={st} fz={F[:,2].sum():.0f} minfz={F[:,2].min():.0f}')
    return kf(name, q, 1.0)
def footc(qp, f): return [ik.bpoint(qp, f, p) for p in [(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0), (0.15, 0.05, 0)]]
wv = np.ones(28)
for n in ('back_lbz', 'back_ubx'): wv[JI[n]] = 10
import os
E = lambda k, d: float(os.environ.get(k, d))
HX, HY = E('HX', 0.45), E('HY', 0.25)
PZ = E('PZ', 0.55); CFX = E('CFX', 0.5); MARG = E('MARG', 0.05); NST = int(E('NST', 3))
LHY, KNY, UAY = E('LHY', 0.0), E('KNY', 1.9), E('UAY', 0.6)
Rv = sim.data.xmat[sim.map.pelvis].reshape(3, 3).copy()
import math
def Rpitch(a): return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
R0 = np.eye(3)
hands = {0: C0[0].copy(), 1: C0[1].copy()}
OUT = []
qp = qs.copy()
pts_c = [p for f in feet for p in feet[f]]
com_f = ik.ik.forward(qp).subtree_com[0][:2].copy()
def S(qp, **kw):
    base = dict(w_com=30, q_ref=qp[adr].copy(), w_post=0.3, w_post_vec=wv, iters=300)
    base.update(kw)
    return ik.solve(qp, **base)
def RES(qp, sph, pts):
    C = ik.centres(qp); e = max([np.linalg.norm(C[i] - t) for i, t in sph.items()] + [0])
    ef = 0
    for b, p, t, w in pts:
        v = ik.bpoint(qp, b, p) - t; v = v[~np.isnan(t)]; ef = max(ef, np.abs(v).max())
    return f'sph_err={e:.3f} pt_err={ef:.3f}'
# 1. hands wider/forward, one at a time, CoM over the feet
for h in (0, 1):
    st = {j: hands[j] for j in hands if j != h}
    h0 = hands[h].copy(); g = np.array([HX, HY if h == 0 else -HY, h0[2]])
    for k, a in ((1, 0.5), (2, 1.0)):
        t = h0 + a * (g - h0); t[2] = h0[2] + (0.06 if k == 1 else -0.005)
        s_ = dict(st); s_[h] = t
        qp = S(qp, sph=s_, points=pts_c, com_xy=com_f)
        OUT.append(KF(f'{"lr"[h]}_hand_{k}', qp, [j for j in st] + ['l_foot', 'r_foot'])); rep(OUT[-1]['name'], qp, [hands[j] for j in st] + footc(qs, 'l_foot') + footc(qs, 'r_foot')); print('   ', RES(qp, s_, pts_c))
    hands[h] = g
# 2. rise (pelvis vertical, up to PZ) and CoM forward into the hands+feet polygon
poly = np.array([hands[0], hands[1]] + footc(qs, 'l_foot') + footc(qs, 'r_foot'))[:, :2]
z0 = qp[2]
for k in range(1, 4):
    a = k / 3
    c = com_f + a * CFX * (poly.mean(0) - com_f)
    pts = pts_c + [('pelvis', (0, 0, 0), (np.nan, np.nan, z0 + a * (PZ - z0)), 20)]
    Rv2 = Rpitch(a * E('PP', 0.4)) @ Rv
    qp = S(qp, sph=dict(hands), points=pts, com_xy=c, pelvis_R=Rv2, w_prot=E('WP', 1.0))
    OUT.append(KF(f'rise_{k}', qp, [0, 1, 'l_foot', 'r_foot'])); rep(OUT[-1]['name'], qp, list(poly) and [np.r_[p, 0] for p in poly]); print('   ', RES(qp, hands, pts))
# 3. knees one at a time
knees = {}
feet_on = ['l_foot', 'r_foot']
for side, li in (('l', 2), ('r', 3)):
    sw = side + '_foot'
    feet_on.remove(sw)
    sup = [hands[0], hands[1]] + [knees[j] for j in knees] + sum([footc(qs, f) for f in feet_on], [])
    P = np.array(sup)[:, :2]
    com = ik.ik.forward(qp).subtree_com[0][:2].copy()
    xs = np.arange(P[:, 0].min(), P[:, 0].max(), 0.005); ys = np.arange(P[:, 1].min(), P[:, 1].max(), 0.005)
    X, Yy = np.meshgrid(xs, ys); PP = np.stack([X.ravel(), Yy.ravel()], 1)
    M = np.array([support_margin(p, P) for p in PP]); ok = M >= MARG
    tgt = PP[ok][np.argmin(np.linalg.norm(PP[ok] - com, axis=1))] if ok.any() else PP[np.argmax(M)]
    tgt = tgt + E('CF2', 0.3) * (P.mean(0) - tgt)
    tgt = tgt + np.array([E('BX', 0.0), -E('BY', 0.0) if side == 'l' else E('BY', 0.0)])
    print('TGT', tgt, 'margin', support_margin(tgt, P))
    pts_st = [p for f in feet_on for p in feet[f]]
    sph = dict(hands); sph.update(knees)
    for k in (1, 2):
        c = com + (tgt - com) * k / 2
        qp = S(qp, sph=sph, points=pts_st + [(sw, p[1], p[2], FW) for p in feet[sw]], com_xy=c, pelvis_R=Rv2, w_prot=E('WP', 1.0))
        OUT.append(KF(f'shift_for_{side}_knee_{k}', qp, [0, 1] + list(knees) + feet_on + [sw])); rep(OUT[-1]['name'], qp, sup); print('   ', RES(qp, sph, pts_st))
    hip = ik.bpoint(qp, side + '_uleg')
    kt = np.array([hip[0] + E('KDX', 0.0), hip[1] + (0.03 if side == 'l' else -0.03), ik.spheres[li][2] - 0.005])
    q0s = qp[adr].copy()
    w2 = np.full(28, E('WREST', 10.0))
    for n in ('leg_uhz', 'leg_mhx', 'leg_lhy', 'leg_kny', 'leg_uay', 'leg_lax'): w2[JI[f'{side}_{n}']] = 0.05
    qref = q0s.copy()
    for n, v in (('leg_kny', KNY), ('leg_uay', UAY)): qref[JI[f'{side}_{n}']] = v
    w2[JI[f'{side}_leg_kny']] = 0.5; w2[JI[f'{side}_leg_uay']] = 0.5
    for k, dz in ((1, E('LIFT', 0.05)), (2, -0.005)):
        t = kt + np.array([0, 0, dz])
        s_ = dict(sph); s_[li] = t
        qp = S(qp, sph=s_, points=pts_st, com_xy=tgt, w_com=E('WC', 5.0), q_ref=qref, w_post_vec=w2, iters=600)
        OUT.append(KF(f'{side}_knee_down_{k}', qp, [0, 1] + list(knees) + feet_on + ([li] if k == 2 else []))); rep(OUT[-1]['name'], qp, sup); print('   ', RES(qp, s_, pts_st))
        print('    low', {k_: round(v, 3) for k_, v in ik.lowest(qp, {'l_foot', 'r_foot', 'l_lleg', 'r_lleg', 'l_uleg', 'r_uleg', 'pelvis'}).items()})
    knees[li] = kt
yaml.safe_dump({'kfs': OUT}, open(os.environ.get('OUTF', '/tmp/kn/kfs2.yaml'), 'w'), sort_keys=False)
