"""The Atlas URDF and contact frames, re-exported from atlas_description (their single source) for modules not yet
importing it directly."""
from atlas_description import CONTACT_FRAMES, SOLE_FRAMES  # noqa: F401
from atlas_description import model_urdf as atlas_urdf_string  # noqa: F401
