"""Design of init_crawl_stance_from_prone (scratch generator)."""
import pickle, sys, numpy as np
from atlas_crawl_controller.keyframes import load_script, named_pose
from atlas_crawl_controller.robot_info import JOINT_NAMES
from atlas_crawl_mujoco.sim import AtlasSim
from writeyaml import write_script
JI = {n: i for i, n in enumerate(JOINT_NAMES)}
def sel(pfx): return [n for n in JOINT_NAMES if any(p in n for p in pfx)]

def build(L, Z=0.4, HD=0.5, NECK=0.0, FR=(0.4, 0.7, 1.0), DT=1.5, up_dt=0.8, interp_back=False, MBY=None, sphinx_dt=2.0):
    adr = AtlasSim().map.qpos_adr
    q0 = load_script('crawl_forward').keyframes[0].q
    ql = L[Z][adr]
    qp = named_pose('prone')[0]
    def upd(q, names, src):
        q = q.copy()
        for n in names: q[JI[n]] = src[JI[n]]
        return q
    out = []
    q = upd(qp, ['l_arm_shx', 'r_arm_shx'], ql)
    out.append(dict(name='arms_out', q=q, duration_s=1.5,
                    comment='arms sweep sideways in the floor plane (shoulder roll; the chest rests on the floor)'))
    q = upd(q, ['l_arm_elx', 'r_arm_elx'], ql)
    out.append(dict(name='fold_elbows', q=q, duration_s=1.5, comment='elbows fold, forearms forward in the air'))
    qa, qb = q.copy(), upd(q, sel(['_arm_']), ql)
    q = qa + HD * (qb - qa); q[JI['neck_ay']] = NECK
    out.append(dict(name='hands_down', q=q, duration_s=2.0,
                    comment='hands come down beside/ahead of the shoulders and lift the chest a little: the head leaves the floor'))
    qhd = q.copy()
    for i, fr in enumerate(FR):
        for side in ('l', 'r'):
            q = upd(q, sel([side + '_leg']), qp + fr * (ql - qp))
            if interp_back and side == 'r':
                q = upd(q, sel(interp_back), qhd + fr * (ql - qhd))
            if MBY is not None:
                q[JI['back_mby']] = MBY[i]
            out.append(dict(name=f'{side}_knee_up_{i + 1}', q=q, duration_s=DT,
                            comment=('knees drawn up under the hips one at a time, in %d steps (legs carry the pelvis up; '
                                     'chest on the hands)' % len(FR)) if i == 0 and side == 'l' else None))
    out.append(dict(name='sphinx', q=ql, duration_s=sphinx_dt,
                    comment='pelvis high on the knees, back flexed, chest low on bent arms (IK pose: hands/knees at the crawl-stance places)'))
    zs = [z for z in sorted(L) if z > Z + 1e-6 and round(z * 100) % 5 == 0]
    for j, z in enumerate(zs):
        out.append(dict(name=f'push_up_{j + 1}', q=L[z][adr], duration_s=up_dt,
                        comment='arms extend and the back straightens: IK path with hands and knees fixed' if j == 0 else None))
    out.append(dict(name='crawl_stance', q=q0, duration_s=1.0, stance=['LW', 'RW', 'LK', 'RK'], full=True,
                    comment="= crawl_forward's first key-frame (test_init_stance_ends_where_crawl_forward_begins)"))
    return out, qp

if __name__ == '__main__':
    L = pickle.load(open('/tmp/pw/lowered.pkl', 'rb'))
    kfs, qp = build(L)
    write_script(sys.argv[1], HEADER, META, kfs, qp)
