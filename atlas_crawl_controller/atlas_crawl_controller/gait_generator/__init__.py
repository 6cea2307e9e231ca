"""Closed-loop Cartesian crawl gait generator (issue 12 §1): references for the controller core's Cartesian law,
re-planned every step from the measured pelvis pose.

* :mod:`.command` — the velocity command (vx, vy, wz) and its limits;
* :mod:`.contact_sequence` — which limbs step when (static one-limb-at-a-time crawl, or diagonal pairs);
* :mod:`.placement` — where each contact lands for a command (pattern reference, Raibert-style lead);
* :mod:`.feedback` — heading and lateral correction from the measured pelvis pose;
* :mod:`.com_plan` — support-margin rule (CoM target per tripod, lift gate);
* :mod:`.terrain` — footholds, swing clearance and ground tilt from a height map (issue 13 §2);
* :mod:`.generator` — :class:`CrawlGaitGenerator`, the plan object the tracker samples.
"""
from .command import CommandError, CommandLimits, CrawlCommand
from .com_plan import CoMPlan
from .contact_sequence import ContactSequence
from .feedback import PlacementFeedback
from .generator import CrawlGaitGenerator, PARAMETER_FILE, diagonal_params, parameter_set
from .placement import FootPlacement
from .terrain import Terrain

__all__ = ["CommandError", "CommandLimits", "CrawlCommand", "CoMPlan", "ContactSequence", "PlacementFeedback",
           "CrawlGaitGenerator", "FootPlacement", "PARAMETER_FILE", "Terrain", "diagonal_params",
           "parameter_set"]
