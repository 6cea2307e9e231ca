import pickle, sys, numpy as np
from design_init import build
from writeyaml import write_script
from atlas_crawl_controller.keyframes import named_pose
HEADER = """# Designed with whole-body IK + physics iterations: the quasi-static reverse of init_crawl_stance_from_prone
# (chest lowered on bent arms with hands and knees fixed, knees slid back one at a time, hands lifted, arms swept
# back along the body). Verify: python -m atlas_crawl_mujoco.run_sequence lie_down --trials 20 --noise 0.02"""
META = dict(name='lie_down', description=sys.argv[2], fall_check='none', start_quat_wxyz=[0.78756, 0.01755, 0.61587, 0.01222])
L = pickle.load(open('/tmp/pw/lowered.pkl', 'rb'))
kw = eval(sys.argv[3]) if len(sys.argv) > 3 else {}
NECK_END_ = kw.pop('neck_end', None)
scale = kw.pop('scale', 1.0)
kfs, qp = build(L, **kw)
n = len(kfs)
NECK_END = kw.pop('neck_end', None) if False else NECK_END_
rev = []
RN = {'sphinx': 'chest_down', 'hands_down': 'hands_up', 'fold_elbows': 'unfold_elbows', 'arms_out': 'prone', 'crawl_stance': 'lower_0'}
poses = [kfs[i] for i in reversed(range(n - 1))] + [dict(name='prone', q=qp)]
for j, i in enumerate(reversed(range(n))):
    nm = kfs[i]['name']
    name = nm.replace('knee_up', 'knee_back') if 'knee_up' in nm else RN.get(nm, nm.replace('push_up', 'lower'))
    q = np.array(poses[j]['q'], float)
    if name == 'prone' and NECK_END_ is not None:
        q[0 + 3] = NECK_END_
    rev.append(dict(name=name, q=q, duration_s=round(kfs[i]['duration_s'] * scale, 3), comment=None))
c = 0
for k in rev:
    if k['name'].startswith('lower'):
        c += 1; k['name'] = f'lower_{c}'
rev[0]['comment'] = 'chest lowered on bending arms, hands and knees stay (reverse of the push-up IK path)'
rev[-1]['comment'] = 'arms back along the body: the prone pose'
kfs0 = [dict(kfs[-1], name='crawl_stance', duration_s=1.0, comment='start: the crawl stance (crawl_forward key-frame 0)', stance=['LW', 'RW', 'LK', 'RK'], full=True)]
write_script(sys.argv[1], HEADER, META, kfs0 + rev, kfs[-1]['q'])
