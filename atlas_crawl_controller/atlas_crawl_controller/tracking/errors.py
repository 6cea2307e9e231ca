"""Exceptions of the crawl tracker."""
from __future__ import annotations

__all__ = ["TrackerError"]


class TrackerError(ValueError):
    """Bad tracker configuration or input (wrong shape, NaN, unknown choice). The message is the reason."""
