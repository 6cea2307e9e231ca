"""Headless gz-sim run of the limb contact plugin: a model `atlas` whose LW and LK links rest on the ground, whose RW
link rests on the LW link (a contact inside the robot) and whose RK link floats (gravity off) must publish
atlas_crawl_msgs/SupportState on /atlas/contacts_ground_truth with in_contact [True, False, True, False], sim-time
stamps, ~100 Hz, contact points on the ground for the touching limbs and NaN for the others: a contact between two
links of the robot is not ground contact.

Skipped (reported as skipped) where gz-sim or the plugin is not installed — the embedded default.
"""
import math

from gz_run import plugin_or_skip, run_world


def _link(name, z, gravity=True, x=0.0, size=0.1):
    return f'''<link name="{name}"><pose>{x} 0 {z} 0 0 0</pose><gravity>{str(gravity).lower()}</gravity>
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>{size} {size} 0.1</size></box></geometry></collision></link>'''


WORLD = f"""<?xml version="1.0"?>
<sdf version="1.9">
  <world name="contact_test">
    <physics name="1ms" type="dart"><max_step_size>0.001</max_step_size><real_time_factor>1</real_time_factor></physics>
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry><plane>
      <normal>0 0 1</normal><size>10 10</size></plane></geometry></collision></link></model>
    <model name="atlas">
      <self_collide>true</self_collide>  <!-- so that RW can rest on LW (gz models do not self-collide by default) -->
      {_link("l_hand", 0.05, x=0.0, size=0.6)}
      {_link("r_hand", 0.16, x=0.0, size=0.05)}
      {_link("l_lleg", 0.05, x=1.0)}
      {_link("r_lleg", 1.0, gravity=False, x=2.0)}
      <plugin filename="atlas_crawl_gz_plugins" name="atlas_crawl_gz_plugins::LimbContactPublisher">
        <limb name="l_wrist_contact">l_hand</limb><limb name="r_wrist_contact">r_hand</limb>
        <limb name="l_knee_contact">l_lleg</limb><limb name="r_knee_contact">r_lleg</limb>
      </plugin>
    </model>
  </world>
</sdf>
"""


def test_limb_contacts_published_with_sim_time(tmp_path):
    plugin_or_skip()
    from atlas_crawl_msgs.msg import SupportState
    (msgs,), log = run_world(tmp_path, WORLD, [(SupportState, "/atlas/contacts_ground_truth")])
    assert len(msgs) > 50, f"{len(msgs)} messages (gz log: {log})"
    t = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in msgs]
    assert all(b > a for a, b in zip(t, t[1:])) and t[-1] <= 6.0 + 1e-6      # sim time, increasing
    rate = (len(t) - 1) / (t[-1] - t[0])
    assert 90.0 < rate < 110.0, rate
    last = msgs[-1]
    assert last.header.frame_id == "world"
    assert [c.name for c in last.contacts] == ["l_wrist_contact", "r_wrist_contact", "l_knee_contact",
                                               "r_knee_contact"]
    assert [c.in_contact for c in last.contacts] == [True, False, True, False]
    assert abs(last.contacts[0].position.z) < 0.01 and abs(last.contacts[2].position.x - 1.0) < 0.06
    assert math.isnan(last.contacts[1].position.x) and math.isnan(last.stability_margin_m)
