from ex import *
from ik import IK, fmt_q
from atlas_crawl_mujoco.kin import support_margin
from atlas_crawl_mujoco.gait_design import CrawlDesigner
import sys
s = load_script('crawl_forward')
q0 = s.keyframes[0].q; quat = s.start_quat_wxyz
sim = AtlasSim(); sim.fall_check = 'none'; sim.reset(q0, base_quat_wxyz=quat); sim.step(1500)
qpos_st = sim.data.qpos.copy()
ik = IK(sim.model)
cd = CrawlDesigner(AtlasSim())
lim = sim.model.actuator_forcerange[sim.map.act_id, 1]
C = ik.centres(qpos_st)
feet = [ik.bpoint(qpos_st, f) for f in ('l_foot', 'r_foot')]
pel = qpos_st[:3].copy()
qp = qpos_st.copy()
SHOW = {'back_mby', 'back_ubx', 'back_lbz', 'l_arm_usy', 'l_arm_shx', 'l_arm_ely', 'l_arm_elx', 'l_arm_mwx', 'l_leg_lhy', 'l_leg_kny', 'r_arm_usy', 'r_arm_shx', 'r_arm_ely', 'r_arm_elx', 'r_arm_mwx'}
OUT = float(sys.argv[1]) if len(sys.argv) > 1 else 0.25
wv = np.ones(28); 
for i, n in enumerate(JOINT_NAMES):
    if '_arm_' in n: wv[i] = 0.1
sh0 = {b: ik.bpoint(qpos_st, b) for b in ('l_scap', 'r_scap')}
SAVE = {}
for k in range(0, 46):
    zs = 0.70 - 0.01 * k
    frac = min(1.0, k / 30)
    pts = [('l_foot', (0, 0, 0), feet[0], 10), ('r_foot', (0, 0, 0), feet[1], 10), ('pelvis', (0, 0, 0), pel, 10)]
    for side, sg in (('l', 1), ('r', -1)):
        pts.append((f'{side}_scap', (0, 0, 0), (np.nan, np.nan, zs), 30))
        pts.append((f'{side}_larm', (0, 0, 0), (np.nan, sh0[f'{side}_scap'][1] + sg * OUT * frac, np.nan), 5))
    qp = ik.solve(qp, sph={i: C[i] for i in range(4)}, points=pts, q_ref=qp[ik.qadr].copy(), w_post=0.3, w_post_vec=wv, iters=100)
    SAVE[round(zs, 2)] = qp.copy()
    if k % 5: continue
    q = qp[ik.qadr]
    low = ik.lowest(qp, {'utorso', 'head', 'l_larm', 'l_farm', 'l_uarm', 'pelvis', 'l_foot', 'r_foot'})
    com = ik.ik.forward(qp).subtree_com[0]
    mg = support_margin(com[:2], C[:, :2])
    err = np.linalg.norm(ik.centres(qp) - C, axis=1).max()
    tau, f = cd.static_torques(qp, np.ones(4, bool))
    r = np.abs(tau) / lim; top = np.argsort(-r)[:4]
    0 and print(f'zs={zs:.2f} err={err:.3f} pelvis=({qp[0]:.2f},{qp[2]:.3f}) com=({com[0]:.2f},{com[1]:.2f}) mg={mg:+.3f} fz={f[:,2].round(0)} low=' + " ".join(f"{k}:{v:.2f}" for k, v in low.items()))
    0 and print('    tau/lim', " ".join(f"{JOINT_NAMES[j]}={r[j]:.2f}" for j in top))
    0 and print('   ', fmt_q(q, SHOW))
import pickle; pickle.dump(SAVE, open('/tmp/pw/lowered.pkl', 'wb'))
