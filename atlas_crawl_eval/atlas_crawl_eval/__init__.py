"""atlas_crawl_eval: the thesis' evaluation harness (§4.1.2-4.1.3) for the crawling DRC Atlas. No ROS imports."""

from .trial_log import LIMB_NAMES, TrialLog, TrialLogError  # noqa: F401

__all__ = ["TrialLog", "TrialLogError", "LIMB_NAMES"]
