"""What every benchmark's API needs to describe its routes in /api/openapi.json (engine/openapi.py
collects each blueprint's ``openapi``): an answer's entry, and a route's path as the site mounted it
(a benchmark's API lives under whatever prefix the site registers its blueprint at)."""
from __future__ import annotations

import re

from flask import current_app


def described(description: str, schema: dict | None = None) -> dict:
    """A response entry: JSON of ``schema``, by default the shared Error object."""
    return {"description": description,
            "content": {"application/json": {"schema": schema or {"$ref": "#/components/schemas/Error"}}}}


def path_of(endpoint: str) -> str:
    """The OpenAPI path of the app's route for ``endpoint`` (``<category>`` written ``{category}``)."""
    rule = next(current_app.url_map.iter_rules(endpoint)).rule
    return re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule)
