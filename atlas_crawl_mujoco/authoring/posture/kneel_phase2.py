import sys, yaml, os, numpy as np
sys.path.insert(0, '/tmp/pw')
from ex import *
from ik import IK, kf
from atlas_crawl_mujoco.kin import support_margin
from atlas_crawl_controller.robot_info import joint_limits
E = lambda k, d: float(os.environ.get(k, d))
JI = {n: i for i, n in enumerate(JOINT_NAMES)}
lo, hi, _, _ = joint_limits()
Y = yaml.safe_load(open('/work/main/atlas_crawl_controller/atlas_crawl_controller/gaits/kneel.yaml'))
pre = [k for k in Y['keyframes'] if k['name'] != 'crawl_stance']
fin = [k for k in Y['keyframes'] if k['name'] == 'crawl_stance']
M1 = yaml.safe_load(open('/tmp/kn/man.yaml'))['kfs']
sim = play({'fall_check': 'none', 'keyframes': pre + M1}, start='stand', verbose=False, settle=1.0)
qs = sim.data.qpos.copy(); ik = IK(sim.model); adr = ik.qadr
C = ik.centres(qs)
print('centres', C.round(3))
fr = [ik.bpoint(qs, 'r_foot', p) for p in [(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0)]]
pts = [('r_foot', p, t, 1000) for p, t in zip([(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0)], fr)]
tri = C[[0, 1, 2], :2]
com = ik.ik.forward(qs).subtree_com[0][:2].copy()
print('com', com, 'margin in LW RW LK', support_margin(com, tri))
# CoM target: centroid of the triangle pulled toward the stance foot? no: into the triangle with margin, bias to the left
xs = np.arange(tri[:, 0].min(), tri[:, 0].max(), 0.005); ys = np.arange(tri[:, 1].min(), tri[:, 1].max(), 0.005)
X, Yy = np.meshgrid(xs, ys); PP = np.stack([X.ravel(), Yy.ravel()], 1)
Mg = np.array([support_margin(p, tri) for p in PP]); ok = Mg >= E('MG', 0.06)
g = PP[ok][np.argmin(np.linalg.norm(PP[ok] - com, axis=1))] + np.array([E('GX', 0.0), E('GY', 0.0)])
print('target', g, 'margin', support_margin(g, tri))
wv = np.ones(28)
def clipq(q): return np.clip(q, lo + 2e-4, hi - 2e-4)
def KFq(name, q, dur): return {'name': name, 'duration_s': dur, 'joints': {n: round(float(v), 4) for n, v in zip(JOINT_NAMES, clipq(q))}}
OUT = []
qp = qs.copy()
for k in (1, 2):
    c = com + (g - com) * k / 2
    qp = ik.solve(qp, sph={0: C[0], 1: C[1], 2: C[2] - np.array([0, 0, 0.005])}, points=pts, com_xy=c, w_com=30, q_ref=qp[adr].copy(), w_post=0.3, w_post_vec=wv, iters=400)
    print('shift', k, 'sph err', np.linalg.norm(ik.centres(qp)[:3] - C[:3], axis=1).max().round(3), 'com', ik.ik.forward(qp).subtree_com[0][:2].round(3))
    OUT.append(KFq(f'shift_for_r_knee_{k}', qp[adr], 1.0))
base = dict(OUT[-1]['joints'])
def kfm(name, upd, dur):
    global base
    base = dict(base); base.update(upd); return {'name': name, 'duration_s': dur, 'joints': dict(base)}
OUT.append(kfm('r_foot_up', {'r_leg_kny': 2.449, 'r_leg_uay': E('UUP', -0.6)}, 1.5))
OUT.append(kfm('r_thigh_down_1', {'r_leg_lhy': E('LHY', -1.0)}, 1.0))
OUT.append(kfm('r_thigh_down_2', {'r_leg_lhy': E('LHY2', -0.4), 'r_leg_kny': E('KNY', 2.0), 'r_leg_uay': 0.5}, 1.0))
OUT.append(kfm('r_knee_down', {'r_leg_lhy': E('LHY3', -0.2), 'r_leg_kny': E('KNY3', 1.7)}, 1.0))
yaml.safe_dump({'kfs': M1 + OUT}, open('/tmp/kn/man2.yaml', 'w'), sort_keys=False)
