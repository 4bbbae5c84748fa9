"""The papers the site serves: every folder under PAPERS_DIR that holds a ``paper.toml``.

A paper folder is a Python package (``papers.<folder>``) plus its content::

    papers/<folder>/paper.toml       title, authors, …, and ``widgets = [...]`` (its widget list, in order)
    papers/<folder>/content/         sections (NN-slug.md), glossary.toml, numbers.toml, diagrams/*.svg
    papers/<folder>/widgets/<w>.py   one module per widget (``WIDGET``), beside <w-name>.html and <w-name>.js
    papers/<folder>/server/          optional server hooks (Flask side; see :class:`Paper`)

The URL slug is the folder name with "_" written "-" (``papers/some_paper`` is served at ``/some-paper/``).
A folder outside the repository's ``papers/`` (a test's fixture papers) joins the ``papers``
package's search path, so its modules import the same way.
"""
from __future__ import annotations

import importlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from widgetkit import Widget

from .markdown_ext import ContentError

FOLDER = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Paper:
    """One paper folder, loaded: its metadata, its widgets and its optional server hooks.

    The server hooks module (``papers.<folder>.server``) may define:
    ``init_app(app, paper)`` (register the paper's own routes and data),
    ``widget_context(app) -> dict`` (the data its widgets declare they need, e.g. dataset sizes),
    ``live_widget(widget, mode) -> dict`` (template variables for its live widgets) and
    ``live_widget_form(widget, mode) -> (dict, status, headers)`` (the same for a live widget's
    form, posted to the widget's page or embed address; it reads the request).
    """

    slug: str
    folder: Path
    package: str
    meta: dict
    widgets: dict[str, Widget]
    server: ModuleType | None

    @property
    def content_dir(self) -> Path:
        return self.folder / "content"

    @property
    def diagrams_dir(self) -> Path:
        return self.content_dir / "diagrams"

    def template(self, relative: str) -> str:
        """The Jinja name of a template inside this paper's folder."""
        return f"{self.slug}/{relative}"


def read_toml(path: Path) -> dict:
    """A TOML file's data; a missing or malformed file is a ContentError naming it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ContentError(f"{path}: {error}") from None


def _join_search_path(papers_dir: Path) -> None:
    import papers

    if str(papers_dir) not in [str(Path(p).resolve()) for p in papers.__path__]:
        papers.__path__.append(str(papers_dir))


def _load_widgets(package: str, names: list, path: Path) -> dict[str, Widget]:
    widgets: dict[str, Widget] = {}
    for name in names:
        if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name):
            raise ContentError(f"{path}: widgets lists {name!r}; a widget name is lower case with dashes")
        module_name = f"{package}.widgets.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            raise ContentError(f"{path}: widget {name!r} needs a module {module_name} ({error})") from None
        widget = getattr(module, "WIDGET", None)
        if not isinstance(widget, Widget) or widget.name != name:
            raise ContentError(f"{module_name} must define WIDGET = Widget(name={name!r}, …)")
        widgets[name] = widget
    return widgets


def load_paper(folder: Path) -> Paper:
    """Import one paper folder (which must be on the ``papers`` package's search path)."""
    if not FOLDER.match(folder.name):
        raise ContentError(f"{folder}: a paper folder is named in lower case with underscores (it is a Python package)")
    meta = read_toml(folder / "paper.toml")
    package = f"papers.{folder.name}"
    importlib.import_module(package)
    widgets = _load_widgets(package, meta.get("widgets", []), folder / "paper.toml")
    server = importlib.import_module(f"{package}.server") if (folder / "server" / "__init__.py").is_file() else None
    return Paper(folder.name.replace("_", "-"), folder, package, meta, widgets, server)


def load_papers(papers_dir: Path) -> dict[str, Paper]:
    """Every paper under ``papers_dir``, by slug, in folder order."""
    papers_dir = Path(papers_dir).resolve()
    _join_search_path(papers_dir)
    found = {}
    for toml in sorted(papers_dir.glob("*/paper.toml")):
        paper = load_paper(toml.parent)
        found[paper.slug] = paper
    return found
