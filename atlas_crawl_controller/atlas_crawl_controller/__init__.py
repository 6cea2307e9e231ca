"""atlas_crawl_controller: SmoothMove, key-frame scripts, player and the gait library (thesis §4.1)."""
from atlas_description import JOINT_NAMES, CONTACT_FRAMES, LIMB_NAMES, joint_limits  # noqa: F401
