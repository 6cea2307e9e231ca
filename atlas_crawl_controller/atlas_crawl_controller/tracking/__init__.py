"""The closed-loop Cartesian crawl law as plain classes (no ROS, no simulator): :class:`CrawlTracker` and its
policies, one small object per job (see each module)."""
from .com_gate import CoMGate
from .com_integral import CoMIntegral
from .com_rate_limit import CoMRateLimit
from .crawl_tracker import CrawlTracker, SolveRecord, parameter_set
from .errors import TrackerError
from .ground_seek import GroundSeek
from .lift_lookahead import LiftLookahead
from .orientation_holds import OrientationHolds
from .press import Press
from .seed_source import InternalSeed, SensedSeed, seed_source
from .servo_sag import ServoSagIntegral
from .stance_hold import PlannedHold, TouchdownHold, stance_hold
from .support_source import SensedSupport, TargetSupport, support_source
from .world_drift import WorldDrift

__all__ = ["CrawlTracker", "SolveRecord", "parameter_set", "TrackerError", "CoMGate", "CoMIntegral", "CoMRateLimit",
           "GroundSeek", "LiftLookahead", "OrientationHolds", "Press", "InternalSeed", "SensedSeed", "seed_source",
           "ServoSagIntegral", "PlannedHold", "TouchdownHold", "stance_hold", "SensedSupport", "TargetSupport",
           "support_source", "WorldDrift"]
