from ex import *
from ik import IK
import pickle, sys, itertools
L = pickle.load(open('/tmp/pw/lowered.pkl', 'rb'))
sim = AtlasSim(); sim.fall_check = 'none'; sim.reset('prone'); sim.step(1000)
qp0 = sim.data.qpos.copy(); adr = sim.map.qpos_adr
ik = IK(sim.model)
ql = L[0.4][adr]
JI = {n: i for i, n in enumerate(JOINT_NAMES)}
arm = ['l_arm_usy', 'l_arm_shx', 'l_arm_ely', 'l_arm_elx', 'l_arm_uwy', 'l_arm_mwx']
def lowz(q):
    qp = qp0.copy(); qp[adr] = q
    lo = ik.lowest(qp, {'l_uarm', 'l_larm', 'l_farm', 'l_hand'})
    return min(lo.values()), lo
def path(waypoints, n=10):
    q = qp0[adr].copy(); worst = 9
    for wp in waypoints:
        q1 = q.copy()
        for k, v in wp.items(): q1[JI[k]] = v
        for t in np.linspace(0, 1, n):
            z, _ = lowz(q + t * (q1 - q)); worst = min(worst, z)
        q = q1
    return worst, lowz(q)
tgt = {n: ql[JI[n]] for n in arm}
print('target', {k: round(v, 2) for k, v in tgt.items()})
print('direct', path([tgt]))
for order in itertools.permutations(['l_arm_shx', 'l_arm_usy', 'l_arm_ely', 'l_arm_elx']):
    wps = [{n: tgt[n]} for n in order]
    wps[-1].update({'l_arm_uwy': tgt['l_arm_uwy'], 'l_arm_mwx': tgt['l_arm_mwx']})
    w, (zend, lo) = path(wps)
    print(order, f'worst={w:.3f} end={zend:.3f}', {k: round(v, 2) for k, v in lo.items()})
print('---')
def handpos(q):
    qp = qp0.copy(); qp[adr] = q
    return ik.bpoint(qp, 'l_hand'), ik.bpoint(qp, 'l_scap')
for order in [('l_arm_shx', 'l_arm_elx', 'l_arm_usy', 'l_arm_ely'), ('l_arm_shx', 'l_arm_elx', 'l_arm_ely', 'l_arm_usy'), ('l_arm_elx', 'l_arm_shx', 'l_arm_ely', 'l_arm_usy')]:
    q = qp0[adr].copy()
    for n in order + ('l_arm_uwy', 'l_arm_mwx'):
        q[JI[n]] = tgt[n]
        h, sc = handpos(q)
        print(order, n, 'lowz', round(lowz(q)[0], 3), 'hand', h.round(2), 'scap', sc.round(2))
