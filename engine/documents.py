"""The documents the site serves: every folder under CONTENT_DIR that holds a ``paper.toml``.

A document folder is named as it is served (``content/some-paper/`` is ``/some-paper/``)::

    content/<slug>/paper.toml        title, authors, …, ``widgets = [...]`` (the gallery's order)
    content/<slug>/sections/         NN-slug.md
    content/<slug>/glossary.toml     its terms; numbers.toml, the ledger behind its numbers
    content/<slug>/diagrams/         *.svg
    content/<slug>/widgets/<w>.py    one module per widget (``WIDGET``), found from its file
    content/<slug>/hooks.py          optional: ``HOOKS = DocumentHooks(...)``, its server side

Its Python is imported from the folder itself, as the package ``documents.<slug with _>``
(:mod:`widgetkit.registry`), whatever folder CONTENT_DIR names: a copy of a document elsewhere
runs its own code, on the server as in the browser's wheel (which packs the same files).
"""
from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from widgetkit import Widget
from widgetkit.registry import UnknownWidget, document_package, find_widget, mount_document

from .content_records import ContentError

SLUG = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
WIDGET_FILE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*\.py$")
# What a document is (paper.toml ``kind``, "paper" when absent): how pages label and cite it.
KINDS = {
    "paper": {"kicker": "Annotated paper", "noun": "annotated paper", "suffix": ", annotated", "cite": "Cite the paper"},
    "lesson": {"kicker": "Lesson", "noun": "lesson", "suffix": " · a lesson", "cite": "Cite this lesson"},
}
# The shared frame: a widget without a template of its own is drawn in it.
DEFAULT_WIDGET_TEMPLATE = "widgets/default.html"


@dataclass(frozen=True)
class Command:
    """A command of ``python -m engine <document> <name>``: a module with ``add_arguments(parser)``
    and ``run(args) -> exit status``, named by its import path."""

    module: str
    help: str


@dataclass(frozen=True)
class DocumentHooks:
    """What a document's server side adds to the site: its one typed extension point.

    ``init_app(app, document)`` registers its routes and data (the benchmarks it scores, say);
    ``widget_context(app) -> dict`` is the data its widgets declare they need; ``live_widget(widget,
    mode) -> dict`` the template variables of its live widgets; ``live_widget_form(widget, mode,
    whole_page) -> response`` answers a live widget's form, posted to the widget's page or embed
    address (``whole_page(variables)`` draws that page with the widget's template variables);
    ``math_examples() -> [(function, arguments, source)]`` its rows of ``/math-core``;
    ``commands`` its command lines; ``unavailable`` the errors that mean "its data is not here" (a
    503 with their message; the rest of the site keeps working). For the static export
    (engine/export.py): ``static_files(app) -> {path: bytes}`` the files it adds under its own folder
    there, and ``static_live_widget(widget, mode) -> (template, variables) | None`` what a live
    widget is there (a template in its folder), where no server answers; None: a note that it needs
    the live site.
    """

    init_app: Callable | None = None
    widget_context: Callable | None = None
    live_widget: Callable | None = None
    live_widget_form: Callable | None = None
    math_examples: Callable | None = None
    static_files: Callable | None = None
    static_live_widget: Callable | None = None
    commands: dict[str, Command] = field(default_factory=dict)
    unavailable: tuple[type[Exception], ...] = ()

    def __post_init__(self):
        for name in ("init_app", "widget_context", "live_widget", "live_widget_form", "math_examples",
                     "static_files", "static_live_widget"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"DocumentHooks.{name} must be a function, not {type(value).__name__}")
        if not isinstance(self.commands, dict) or not all(
                isinstance(k, str) and isinstance(v, Command) for k, v in self.commands.items()):
            raise TypeError("DocumentHooks.commands maps a command's name to a Command(module, help)")
        if not all(isinstance(k, type) and issubclass(k, Exception) for k in self.unavailable):
            raise TypeError("DocumentHooks.unavailable is a tuple of exception classes")


NO_HOOKS = DocumentHooks()


@dataclass(frozen=True)
class Document:
    """One document folder, loaded: its metadata, its widgets and its hooks."""

    slug: str
    folder: Path
    package: str
    meta: dict
    widgets: dict[str, Widget]
    hooks: DocumentHooks

    @property
    def kind(self) -> dict:
        """How pages label this document: KINDS[paper.toml's ``kind``]."""
        return KINDS[self.meta.get("kind", "paper")]

    @property
    def sections_dir(self) -> Path:
        return self.folder / "sections"

    @property
    def diagrams_dir(self) -> Path:
        return self.folder / "diagrams"

    @property
    def glossary_file(self) -> Path:
        return self.folder / "glossary.toml"

    @property
    def numbers_file(self) -> Path:
        return self.folder / "numbers.toml"

    def template(self, relative: str) -> str:
        """The Jinja name of a template inside this document's folder."""
        return f"{self.slug}/{relative}"

    def widget_template(self, name: str) -> str:
        """A widget's own template (``widgets/<name>.html``) or else the shared frame."""
        own = self.folder / "widgets" / f"{name}.html"
        return self.template(f"widgets/{name}.html") if own.is_file() else DEFAULT_WIDGET_TEMPLATE


def read_toml(path: Path) -> dict:
    """A TOML file's data; a missing or malformed file is a ContentError naming it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ContentError(f"{path}: {error}") from None


def widget_names(folder: Path, order: object) -> list[str]:
    """The widgets found in ``folder/widgets/`` (one module each), in the order ``paper.toml`` lists
    them; a file it does not list comes after, by name."""
    found = sorted(p.stem.replace("_", "-") for p in (folder / "widgets").glob("*.py") if WIDGET_FILE.match(p.name))
    if not isinstance(order, list) or not all(isinstance(name, str) for name in order):
        raise ContentError(f"{folder / 'paper.toml'}: widgets is a list of widget names")
    missing = [name for name in order if name not in found]
    if missing:
        raise ContentError(f"{folder / 'paper.toml'}: widgets lists {missing[0]!r}, but there is no "
                           f"widgets/{missing[0].replace('-', '_')}.py")
    return [*order, *(name for name in found if name not in order)]


def _hooks(folder: Path, package: str) -> DocumentHooks:
    if not (folder / "hooks.py").is_file():
        return NO_HOOKS
    hooks = getattr(importlib.import_module(f"{package}.hooks"), "HOOKS", None)
    if not isinstance(hooks, DocumentHooks):
        raise ContentError(f"{folder / 'hooks.py'} must define HOOKS = DocumentHooks(...)")
    return hooks


def load_document(folder: Path) -> Document:
    """Import one document folder as ``documents.<slug>`` and load its widgets and hooks."""
    slug = folder.name
    if not SLUG.match(slug):
        raise ContentError(f"{folder}: a document folder is named as it is served: lower case, digits and dashes")
    meta = read_toml(folder / "paper.toml")
    if meta.get("kind", "paper") not in KINDS:
        raise ContentError(f"{folder / 'paper.toml'}: kind is one of {sorted(KINDS)}, not {meta['kind']!r}")
    package = mount_document(slug, folder)
    widgets = {}
    for name in widget_names(folder, meta.get("widgets", [])):
        try:
            widgets[name] = find_widget(slug, name)
        except UnknownWidget as error:
            raise ContentError(f"{folder}: {error}") from None
    return Document(slug, folder, package, meta, widgets, _hooks(folder, package))


def load_documents(content_dir: Path) -> dict[str, Document]:
    """Every document under ``content_dir``, by slug, in folder order."""
    found = {}
    for toml in sorted(Path(content_dir).resolve().glob("*/paper.toml")):
        document = load_document(toml.parent)
        found[document.slug] = document
    return found


__all__ = ["KINDS", "Command", "Document", "DocumentHooks", "document_package", "load_document", "load_documents", "read_toml"]
