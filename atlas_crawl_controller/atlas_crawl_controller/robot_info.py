"""Robot facts, re-exported from atlas_description (their single source) for modules not yet importing it directly."""
from atlas_description import CONTACT_FRAMES, JOINT_INDEX, JOINT_NAMES, LIMB_NAMES, SOLE_FRAMES  # noqa: F401
from atlas_description import joint_limits  # noqa: F401
from atlas_description import model_urdf as urdf_source  # noqa: F401
