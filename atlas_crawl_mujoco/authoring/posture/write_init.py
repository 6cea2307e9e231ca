import pickle, sys
from design_init import build
from writeyaml import write_script
HEADER = """# Designed with whole-body IK + physics iterations (thesis 4.1 workflow; scratch generator described in the
# description). The last key-frame is crawl_forward's first key-frame (copied; a test checks they stay equal).
# Verify: python -m atlas_crawl_mujoco.run_sequence init_crawl_stance_from_prone --trials 20 --noise 0.02"""
META = dict(name='init_crawl_stance_from_prone', description=sys.argv[2], fall_check='none', start_pose='prone',
            base={'neck_ay': 0.6, '*_arm_shx': -1.3}, end_quat_wxyz=[0.78756, 0.01755, 0.61587, 0.01222])
L = pickle.load(open('/tmp/pw/lowered.pkl', 'rb'))
kw = eval(sys.argv[3]) if len(sys.argv) > 3 else {}
scale = kw.pop('scale', 1.0)
kfs, qp = build(L, **kw)
for k in kfs: k['duration_s'] = round(k['duration_s'] * scale, 3)
write_script(sys.argv[1], HEADER, META, kfs, qp)
