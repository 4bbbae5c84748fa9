"""Settings shared by widgets that draw error bands: the confidence level and the kind of band."""
from __future__ import annotations

from .settings import Param

LEVELS = (("0.8", "80%"), ("0.9", "90%"), ("0.95", "95%"), ("0.99", "99%"))
BANDS = (("normal", "normal (± z standard errors)"), ("wilson", "Wilson score interval"))


def level_param() -> Param:
    return Param("level", "Confidence level", "choice", "0.95", choices=LEVELS)


def interval_params(band_label: str = "Band") -> tuple[Param, ...]:
    """A confidence level and a band method, as two choices."""
    return level_param(), Param("band", band_label, "choice", "normal", choices=BANDS)
