"""Physics check of the kneel posture script (stand -> crawl stance, gaits/kneel.yaml): one noisy trial ends in
the run_sequence "stance" outcome (all four limbs down, nothing else but the feet, margin >= 0.03 m, at rest),
with the contact layout of the crawl stance. About 10-20 s wall time (two short physics runs)."""
import numpy as np

from atlas_crawl_mujoco.run_sequence import MIN_STANCE_MARGIN_M, run_sequence


def _contacts_in_heading_frame(sim):
    """LW/RW/LK/RK contact sites (x, y) in the pelvis-heading frame (pelvis origin, x = horizontal forward)."""
    c = sim.contact_site_pos()
    R = sim.data.xmat[sim.map.pelvis].reshape(3, 3)
    fx = R[:2, 0] / np.linalg.norm(R[:2, 0])
    fy = np.array([-fx[1], fx[0]])
    d = c[:, :2] - sim.data.xpos[sim.map.pelvis][:2]
    return np.stack([d @ fx, d @ fy], 1)


def test_kneel_reaches_crawl_stance_in_physics():
    res, sim = run_sequence(["kneel"], seed=3, noise_rad=0.02, quiet=True)
    r = res[0]
    assert r.kind == "stance"
    assert r.ok, r.why
    assert r.metrics["touch"] == "1111"
    assert r.metrics["margin_m"] >= MIN_STANCE_MARGIN_M
    forces = [float(f) for f in r.metrics["limb_force_n"].split("/")]
    assert min(forces) > 50.0            # every limb really carries load (measured ~150-340 N)
    got = _contacts_in_heading_frame(sim)
    _, ref_sim = run_sequence(["crawl_stance"], quiet=True)
    ref = _contacts_in_heading_frame(ref_sim)
    # measured max deviation 0.025 m (seed 0)
    assert np.max(np.linalg.norm(got - ref, axis=1)) < 0.06
