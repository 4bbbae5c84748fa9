"""Interactive widgets: rendered fully on the server, then driven by the math core in the browser.

Every widget's numbers, sentences and SVG geometry come from ``explainers.widget_models.widget_view``
(the same function the browser's Pyodide worker runs), so this module only gathers the data the
math does not own (subject sizes, prompt text), renders templates, and serves the pages:

    /mmlu/widgets/                 all widgets, with their embed snippets (for teachers)
    /mmlu/widgets/<name>?<state>   one widget on a page of its own
    /embed/<name>?<state>          the widget alone, for an <iframe> on any site
    /oembed?url=<widget URL>       oEmbed (type "rich") for those URLs
    /api/widgets/<name>?<state>    the widget's view as JSON (prompt text is data, so the browser
                                   asks here for the prompt anatomy)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from flask import Blueprint, abort, current_app, g, jsonify, render_template, request, url_for
from markupsafe import Markup
from werkzeug.datastructures import MultiDict

from explainers.widget_models import widget_params, widget_view

from .caching import cached_page
from .data import GROUPS
from .prompt import MAX_SHOTS, prompt_parts

bp = Blueprint("widgets", __name__)

PAPER_SLUG = "mmlu"


@dataclass(frozen=True)
class Widget:
    """One embeddable widget: its name in URLs, its title, and how it is driven."""

    name: str
    title: str
    blurb: str
    height: int  # a good first iframe height in pixels; the embed page reports its real height
    driver: str = "worker"  # "worker" (Pyodide), "server" (data from /api/widgets) or "external"


REGISTRY: dict[str, Widget] = {w.name: w for w in (
    Widget("chance-explorer", "Chance explorer: is a score above guessing?",
           "Set a subject's number of questions and a score; the band is the range the score could come from by luck.", 720),
    Widget("calibration-bars", "Calibration bars: claimed confidence against accuracy",
           "Each pair of bars is one confidence group: what the model claimed, and how often it was right.", 980),
    Widget("scaling-plot", "Accuracy against model size",
           "Few-shot GPT-3 sits at chance until 175 billion parameters; UnifiedQA starts above it (Table 1, Appendix A).", 640),
    Widget("group-bars", "Accuracy by group, with error bands",
           "GPT-3 X-Large and UnifiedQA on the four groups of Table 1, and two ways to average them.", 640),
    Widget("subject-bars", "Lopsided knowledge: five named subjects",
           "GPT-3's scores on the subjects Section 4.2 names, each with a band from its real test size.", 560),
    Widget("prompt-anatomy", "Anatomy of an MMLU prompt (Figure 1)",
           "Pick a subject and a number of worked examples; this is the exact text the model reads.", 1100, "server"),
    Widget("release-gate", "Release gate: is a score change real?",
           "A candidate against production, question by question, with a standard error clustered by subject.", 900),
    Widget("live-scoring", "Live scoring", "A small model answers real MMLU questions in front of you.", 700, "external"),
)}

# Words for each part of a prompt, shown beside the highlighted text (Figure 1 of the paper).
PART_EXPLANATIONS = {
    "header": "Names the subject; the same line opens every prompt in this subject.",
    "shot": "Taken from the subject's dev set, with its answer letter filled in.",
    "question": "The test question the model is asked.",
    "option": "Four of them, lettered A to D.",
    "answer_cue": "After “Answer:” the most natural next token is now a letter; its probability is compared across A, B, C, D.",
}


def widget_context() -> dict:
    """Data the math needs but does not own: subject and group sizes from the real MMLU files."""
    cached = current_app.extensions.get("widget_context")
    if cached is None:
        data = current_app.extensions["mmlu_data"]
        subjects = data.subjects
        keys = {"humanities": "humanities", "social sciences": "social_sciences", "STEM": "stem", "other": "other"}
        group_sizes = data.group_sizes("test")
        cached = {
            "subjects": {name: {"title": s.title, "test": s.sizes["test"]} for name, s in subjects.items()},
            "subject_sizes": {name: s.sizes["test"] for name, s in subjects.items()},
            "group_sizes": {keys[g]: group_sizes[g] for g in GROUPS},
        }
        current_app.extensions["widget_context"] = cached
    return cached


def raw_state(args) -> dict:
    """Query arguments as the view model wants them: a repeated name becomes one comma list."""
    return {key: ",".join(args.getlist(key)) for key in args}


def _prompt(view: dict) -> dict:
    """The exact prompt text, in labelled parts, for the prompt anatomy's state."""
    data = current_app.extensions["mmlu_data"]
    state = view["state"]
    subject = state["subject"]
    questions = data.questions(subject, "test")  # the view model has clamped q to this subject's size
    question = questions[state["q"] - 1]
    shots = data.questions(subject, "dev")[: min(state["shots"], MAX_SHOTS)]
    parts = prompt_parts(subject, question.question, question.choices, shots)
    text = "".join(p.text for p in parts)
    view["prompt"] = {
        "parts": [{"kind": p.kind, "text": p.text, "explain": PART_EXPLANATIONS[p.kind]} for p in parts],
        "key": question.answer,
        "questions": len(questions),
        "characters": len(text),
    }
    examples = f"{len(shots)} worked example{'s' if len(shots) != 1 else ''}" if shots else "no worked examples (zero-shot)"
    view["summary"].insert(0, (
        f"Question {state['q']} of {len(questions)} in {subject.replace('_', ' ')}, with {examples}: "
        f"{len(text):,} characters of prompt. The answer key is {question.answer}."
    ))
    return view


def build_view(name: str, raw: dict) -> dict:
    """The view of widget ``name`` for raw settings (never raises for bad settings)."""
    view = widget_view(name, raw, widget_context())
    if name == "prompt-anatomy":
        view = _prompt(view)
    return view


def _external_url(endpoint: str, **values) -> str:
    return url_for(endpoint, _external=True, **values)


def share_links(name: str, query: str, width: str = "100%", height: int | None = None) -> dict:
    """The plain link and the <iframe> snippet that reproduce the widget in its current state."""
    suffix = f"?{query}" if query else ""
    widget = REGISTRY[name]
    page = _external_url("widgets.page", name=name) + suffix
    embed = _external_url("widgets.embed", name=name) + suffix
    # Without the ?v= cache-busting version: a teacher's copy must keep working as the file changes.
    script = _external_url("static", filename="js/embed-resize.js").split("?")[0]
    iframe = (
        f'<iframe src="{Markup.escape(embed)}" title="{Markup.escape(widget.title)}" width="{width}" '
        f'height="{height or widget.height}" loading="lazy" style="border:0;max-width:100%"></iframe>'
    )
    return {"page": page, "embed": embed, "iframe": iframe, "script": f'<script src="{script}" async></script>'}


def render_widget(name: str, raw: dict, mode: str) -> Markup:
    """The widget's HTML: ``mode`` is "inline" (inside the paper), "page" or "embed"."""
    widget = REGISTRY[name]
    if widget.driver == "external":
        return _render_external(widget, mode)
    context = widget_context()
    view = build_view(name, raw)
    return Markup(render_template(
        f"widgets/{name}.html", widget=widget, view=view, mode=mode,
        params={p["name"]: p for p in widget_params(name, context)},
        context=context if widget.driver == "worker" else None,
        share=share_links(name, view["query"]),
        action=url_for("widgets.page", name=name), explanations=PART_EXPLANATIONS,
    ))


def _render_external(widget: Widget, mode: str) -> Markup:
    """Live scoring, drawn from its own package's context. It shows the model's current state,
    so a page holding it is not kept in the page cache."""
    from .scoring import widget_context

    g.page_uncacheable = True
    return Markup(render_template(f"widgets/{widget.name}.html", widget=widget, mode=mode, **widget_context()))


def render_inline(name: str) -> Markup:
    """The HTML of widget ``name`` at its place in an annotated page (its default state)."""
    if name not in REGISTRY:
        return Markup(render_template("widgets/unknown.html", name=name))
    return render_widget(name, {}, "inline")


def _known(name: str) -> Widget:
    widget = REGISTRY.get(name)
    if widget is None:
        abort(404, description=f"There is no widget called “{name}”. The list of widgets is at /{PAPER_SLUG}/widgets/.")
    return widget


@bp.get(f"/{PAPER_SLUG}/widgets/")
@cached_page
def gallery():
    widgets = [(w, share_links(w.name, "")) for w in REGISTRY.values()]
    return render_template("widgets/gallery.html", widgets=widgets)


@bp.get(f"/{PAPER_SLUG}/widgets/<name>")
@cached_page
def page(name: str):
    widget = _known(name)
    html = render_widget(name, raw_state(request.args), "page")
    oembed = url_for("widgets.oembed", url=request.url, format="json", _external=True)
    return render_template("widgets/page.html", widget=widget, html=html, oembed=oembed)


@bp.get("/embed/<name>")
@cached_page
def embed(name: str):
    widget = _known(name)
    html = render_widget(name, raw_state(request.args), "embed")
    return render_template("embed.html", widget=widget, html=html)


@bp.get("/api/widgets/<name>")
def view_json(name: str):
    widget = _known(name)
    if widget.driver == "external":
        abort(404, description=f"{name} is not drawn by this API.")
    return jsonify(build_view(name, raw_state(request.args)))


def _widget_from_url(url: str) -> tuple[Widget, str]:
    """The widget a page or embed URL of this site shows, and the URL's query."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.netloc != urlsplit(request.host_url).netloc:
        abort(404, description="url must be a widget page of this site, e.g. "
                               f"{_external_url('widgets.page', name='chance-explorer')}")
    path = Path(parts.path)
    if path.parent.as_posix() not in (f"/{PAPER_SLUG}/widgets", "/embed") or path.name not in REGISTRY:
        abort(404, description=f"{parts.path} is not a widget URL; widget URLs look like /{PAPER_SLUG}/widgets/<name>.")
    return REGISTRY[path.name], parts.query


@bp.get("/oembed")
def oembed():
    """oEmbed 1.0 for widget URLs: {"type": "rich", "html": "<iframe …>"}; JSON only."""
    url = request.args.get("url", "")
    if not url:
        abort(400, description="url is required: the address of a widget page, e.g. /oembed?url=…&format=json")
    fmt = request.args.get("format", "json")
    if fmt != "json":
        abort(400, description="format must be json (the only oEmbed format offered here)")
    widget, query = _widget_from_url(url)
    clean = "" if widget.driver == "external" else widget_view(
        widget.name, raw_state(MultiDict(parse_qsl(query))), widget_context())["query"]
    width, height = 640, widget.height
    for key, current in (("maxwidth", "width"), ("maxheight", "height")):
        raw = request.args.get(key)
        if raw is None:
            continue
        if not raw.isdigit() or int(raw) < 1:
            abort(400, description=f"{key} must be a positive whole number of pixels, got {raw[:20]!r}")
        if current == "width":
            width = min(width, int(raw))
        else:
            height = min(height, int(raw))
    html = share_links(widget.name, clean, width=str(width), height=height)["iframe"]
    return jsonify(
        version="1.0", type="rich", title=widget.title, provider_name="Annotated papers",
        provider_url=request.host_url, html=html, width=width, height=height, cache_age=86400,
    )

