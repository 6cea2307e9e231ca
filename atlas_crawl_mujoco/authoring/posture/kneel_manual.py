import sys, yaml, os
K = yaml.safe_load(open('/tmp/kn/kfs2_c.yaml'))['kfs']
i = [k['name'] for k in K].index('shift_for_l_knee_2')
base = dict(K[i]['joints'])
E = lambda k, d: float(os.environ.get(k, d))
out = K[:i + 1]
def kf(name, upd, dur):
    global base
    base = dict(base); base.update(upd); return {'name': name, 'duration_s': dur, 'joints': dict(base)}
out.append(kf('l_foot_up', {'l_leg_kny': E('KUP', 2.35), 'l_leg_uay': E('UUP', -0.6)}, E('TUP', 1.5)))
out.append(kf('l_thigh_down_1', {'l_leg_lhy': E('LHY', -1.0)}, 1.0))
out.append(kf('l_thigh_down_2', {'l_leg_lhy': E('LHY2', -0.4), 'l_leg_kny': E('KNY', 2.0), 'l_leg_uay': 0.5}, 1.0))
out.append(kf('l_knee_down', {'l_leg_lhy': E('LHY3', -0.2), 'l_leg_kny': E('KNY3', 1.7)}, 1.0))
yaml.safe_dump({'kfs': out}, open('/tmp/kn/man.yaml', 'w'), sort_keys=False)
