from ex import *
from ik import IK, fmt_q, kf
from atlas_crawl_mujoco.kin import support_margin
import pickle
sim = AtlasSim(); sim.fall_check = 'none'; sim.reset('stand'); sim.step(2000)
qs = sim.data.qpos.copy()
print('stand settled pelvis', qs[:7].round(3), 'com', sim.com().round(3), 'fallen', sim.fallen())
ik = IK(sim.model)
feetpts = []
for f in ('l_foot', 'r_foot'):
    for p in [(0, 0, 0), (0.15, 0, 0), (0, 0.05, 0)]:
        feetpts.append((f, p, ik.bpoint(qs, f, p), 50))
Rp = sim.data.xmat[sim.map.pelvis].reshape(3, 3).copy()
fc = np.mean([ik.bpoint(qs, f, (0.05, 0, 0)) for f in ('l_foot', 'r_foot')], axis=0)
z0 = qs[2]
qp = qs.copy(); S = {}
JI = {n: i for i, n in enumerate(JOINT_NAMES)}
for sd in 'lr':
    qp[ik.qadr[JI[sd + '_leg_kny']]] = 0.3; qp[ik.qadr[JI[sd + '_leg_lhy']]] = -0.15; qp[ik.qadr[JI[sd + '_leg_uay']]] = -0.15
qref = np.zeros(28)
wv = np.ones(28)
for n in ('back_lbz', 'back_mby', 'back_ubx'): wv[JI[n]] = 30.0
ARMS = {'l_arm_usy': -1.2, 'r_arm_usy': -1.2, 'l_arm_shx': -0.3, 'r_arm_shx': 0.3}
for n, v in ARMS.items(): qp[ik.qadr[JI[n]]] = v
for k in range(0, 56):
    dz = -0.01 * k
    qp = ik.solve(qp, points=feetpts + [('pelvis', (0, 0, 0), (np.nan, 0, z0 + dz), 20)], com_xy=fc[:2], w_com=30,
                  pelvis_R=Rp, w_prot=5.0, q_ref=qp[ik.qadr].copy(), w_post=0.3, w_post_vec=wv, iters=100)
    S[round(dz, 2)] = qp.copy()
    if k % 5 == 0:
        q = qp[ik.qadr]; com = ik.ik.forward(qp).subtree_com[0]
        print(f'dz={dz:+.2f} pz={qp[2]:.3f} com=({com[0]:+.3f},{com[1]:+.3f}) fc=({fc[0]:+.3f}) ', fmt_q(q, {'l_leg_lhy', 'l_leg_kny', 'l_leg_uay', 'back_mby', 'l_arm_usy'}))
pickle.dump(S, open('/tmp/pw/squat2.pkl', 'wb'))
