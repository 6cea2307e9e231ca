"""Velocity command of the crawl (body frame: x forward, y left, z up; REP 103)."""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["CommandError", "CommandLimits", "CrawlCommand"]


class CommandError(ValueError):
    """A command the generator cannot run; the message says why. Nothing is changed."""


@dataclass(frozen=True)
class CommandLimits:
    """Largest |vx| (m/s), |vy| (m/s), |wz| (rad/s) a command may ask."""
    vx_m_per_s: float = 0.2
    vy_m_per_s: float = 0.1
    wz_rad_per_s: float = 0.3


@dataclass(frozen=True)
class CrawlCommand:
    """(vx, vy, wz): body-frame velocity of the contact pattern. ``vx < 0`` crawls backward, ``wz`` alone turns on
    the spot, any mix is a blend (an arc of radius vx / wz)."""
    vx_m_per_s: float = 0.0
    vy_m_per_s: float = 0.0
    wz_rad_per_s: float = 0.0

    def validated(self, limits: CommandLimits) -> "CrawlCommand":
        """``self`` if finite and within ``limits``, else :class:`CommandError` with the reason."""
        for name, v, lim in (("vx", self.vx_m_per_s, limits.vx_m_per_s), ("vy", self.vy_m_per_s, limits.vy_m_per_s),
                             ("wz", self.wz_rad_per_s, limits.wz_rad_per_s)):
            if not math.isfinite(v):
                raise CommandError(f"command {name} = {v!r} is not finite")
            if abs(v) > lim + 1e-12:
                raise CommandError(f"command |{name}| = {abs(v):.3g} exceeds the limit {lim:.3g}")
        return self

    @property
    def turns_on_the_spot(self) -> bool:
        """Only a yaw rate (vx = vy = 0, wz != 0)."""
        return self.vx_m_per_s == 0.0 and self.vy_m_per_s == 0.0 and self.wz_rad_per_s != 0.0

    @property
    def turns_right_on_the_spot(self) -> bool:
        """Only a clockwise yaw rate (vx = vy = 0, wz < 0)."""
        return self.turns_on_the_spot and self.wz_rad_per_s < 0.0

    @property
    def goes_straight(self) -> bool:
        """A translation without a turn (vx or vy != 0, wz = 0)."""
        return (self.vx_m_per_s != 0.0 or self.vy_m_per_s != 0.0) and self.wz_rad_per_s == 0.0

    @property
    def is_zero(self) -> bool:
        return self.vx_m_per_s == 0.0 and self.vy_m_per_s == 0.0 and self.wz_rad_per_s == 0.0
