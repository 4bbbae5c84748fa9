"""Interactive widgets: server-rendered first, then driven by the math core in the browser.

(Placeholder until the widgets land: ``render_inline`` marks the slot.)
"""
from __future__ import annotations

from markupsafe import Markup, escape


def render_inline(name: str) -> Markup:
    """The HTML of widget ``name`` for its place in an annotated page."""
    return Markup(f'<div class="widget-slot" data-widget="{escape(name)}"></div>')
