"""The one widget registry, for the server and the browser's worker alike.

A document's Python is the package ``documents.<slug with _>``; its widget ``<name>`` is the
module ``widgets/<name with _>.py`` inside it, defining ``WIDGET``. On the server the engine mounts
each document's folder as that package (:func:`mount_document`); in the browser the wheel carries
the same files under the same names. Either way :func:`find_widget` is how a widget is found, so
both run the same module.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path

from .spec import Widget

PACKAGE = "documents"
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class UnknownWidget(LookupError):
    """No document has a widget by that name."""


def document_package(slug: str) -> str:
    """The package a document's Python is imported as: ``documents.some_paper`` for ``some-paper``."""
    return f"{PACKAGE}.{slug.replace('-', '_')}"


def _package(name: str, path: list[str]):
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    return module


def mount_document(slug: str, folder: Path) -> str:
    """Make ``folder`` the package of document ``slug`` (server side); a document mounted from
    another folder before is replaced, with every module imported from it. Returns the package name."""
    if PACKAGE not in sys.modules:
        _package(PACKAGE, [])
    name = document_package(slug)
    where = str(Path(folder).resolve())
    mounted = sys.modules.get(name)
    if mounted is None or list(getattr(mounted, "__path__", [])) != [where]:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        setattr(sys.modules[PACKAGE], name.rpartition(".")[2], _package(name, [where]))
    return name


def find_widget(slug: str, name: str) -> Widget:
    """The ``WIDGET`` of document ``slug``'s ``widgets/<name>.py`` (both as in URLs)."""
    if not isinstance(slug, str) or not isinstance(name, str) or not (_NAME.fullmatch(slug) and _NAME.fullmatch(name)):
        raise UnknownWidget("a view is named \"<document>/<widget>\", both in lower case with dashes")
    module_name = f"{document_package(slug)}.widgets.{name.replace('-', '_')}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise UnknownWidget(f"no widget {slug}/{name}") from None
        raise
    widget = getattr(module, "WIDGET", None)
    if not isinstance(widget, Widget) or widget.name != name:
        raise UnknownWidget(f"{module_name} must define WIDGET = Widget(name={name!r}, …)")
    return widget
