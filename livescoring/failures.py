"""How a request to score or generate ends in an error response, for every paper's routes.

The model service raises its own exceptions (queue full, still loading, unavailable, too slow);
:func:`service_failure` turns each into the one HTTP answer every paper gives for it.
"""
from __future__ import annotations

from flask import jsonify

from .model import ModelUnavailable
from .worker import QueueFull, ScoringTimeout, StillLoading

SERVICE_ERRORS = (QueueFull, StillLoading, ModelUnavailable, ScoringTimeout)


class ScoreFailed(Exception):
    """A request that ends in an error response: status, message, field, extra headers, model state."""

    def __init__(self, status: int, message: str, field: str | None = None, headers: dict | None = None,
                 state: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field, self.headers, self.state = status, message, field, headers or {}, state

    def response(self):
        """The JSON answer: {"error", "status"} and, where known, the field to fix and the model's state."""
        payload = {"error": self.message, "status": self.status}
        if self.field:
            payload["field"] = self.field
        if self.state:
            payload["state"] = self.state
        return jsonify(payload), self.status, self.headers


def service_failure(error: Exception) -> ScoreFailed:
    """The answer for one of SERVICE_ERRORS."""
    if isinstance(error, QueueFull):
        return ScoreFailed(429, str(error), headers={"Retry-After": str(error.retry_after)})
    if isinstance(error, StillLoading):
        return ScoreFailed(503, f"{error} Try again in a few seconds.", headers={"Retry-After": "5"}, state="loading")
    if isinstance(error, ModelUnavailable):
        return ScoreFailed(503, f"Live scoring is unavailable: {error}", state="failed")
    return ScoreFailed(504, str(error))
