"""Interactive widgets, for every document: rendered fully on the server, then driven in the browser.

A widget's numbers, sentences and SVG scene come from its module's view (``widgetkit.run_view``),
the same function the browser's Pyodide worker runs, so this blueprint only gathers the data the
view declares (from the document's server hooks), renders the document's template for it, and serves:

    /<document>/widgets/                  the document's widgets, with their embed snippets (for teachers)
    /<document>/widgets/<name>?<state>    one widget on a page of its own
    /embed/<document>/<name>?<state>      the widget alone, for an <iframe> on any site
    POST to either of those two        a live widget's form (below)
    /embed/<name>?<state>              an older embed address: redirects to the first document with that widget
    /oembed?url=<widget URL>           oEmbed (type "rich") for those URLs
    /api/widgets/<document>/<name>?<state>  the widget's view as JSON (widgets drawn by the server use it)
    /<document>/assets/<file>             a widget's own script or style sheet, from the document's widgets/ folder

A live widget (it shows the server's changing state) is drawn by its document's ``live_widget`` hook
each time a page holding it is served, never from a cached copy: cached pages keep a marker in its
place (see ``caching.cached_page``). A live widget whose document defines ``live_widget_form`` also
takes its form as a POST to its page and embed addresses, so the form works without JavaScript and
inside another site's frame (the answer is drawn for that request alone, never cached).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    send_from_directory,
    url_for,
)
from markupsafe import Markup
from werkzeug.exceptions import MethodNotAllowed

from widgetkit import Widget, run_view
from widgetkit.context import server_object
from widgetkit.layout import NARROW_WIDTH
from widgetkit.settings import LOG_STEP, in_percent, query_names

from .caching import ONE_YEAR, cached_page, canonical_url, static_version
from .documents import Document
from .markdown_ext import fill_widget_slots
from .packages import MARKER as PACKAGES_MARKER
from .security import require_same_origin

bp = Blueprint("widgets", __name__)

ASSET_TYPES = {".js": "text/javascript", ".css": "text/css"}
_LIVE = re.compile(r"<!--live-widget:(?P<slug>[a-z0-9-]+)/(?P<name>[a-z0-9-]+)/(?P<mode>inline|page|embed)-->")


def documents() -> dict[str, Document]:
    return current_app.extensions["documents"]


def document_of(slug: str) -> Document:
    document = documents().get(slug)
    if document is None:
        abort(404, description=f"There is no document at /{slug}/. The list of documents is on the home page.")
    return document


def widget_of(document: Document, name: str) -> Widget:
    widget = document.widgets.get(name)
    if widget is None:
        abort(404, description=f"There is no widget called “{name}”. The list of widgets is at /{document.slug}/widgets/.")
    return widget


def document_context(document: Document) -> dict:
    """The data the document's widgets may declare (its server hook's ``widget_context``), made once per app."""
    made = current_app.extensions["widget_contexts"]
    if document.slug not in made:
        hook = document.hooks.widget_context
        made[document.slug] = hook(current_app) if hook else {}
    return made[document.slug]


def context_for(document: Document, widget: Widget) -> dict:
    """Only the keys this widget declares."""
    context = document_context(document)
    return {key: context[key] for key in (*widget.needs, *widget.accepts) if key in context}


def raw_state(args) -> dict:
    """Query arguments as a view wants them: a repeated name becomes one comma list."""
    return {key: ",".join(args.getlist(key)) for key in args}


def view_of(document: Document, widget: Widget, raw: dict) -> dict:
    """The widget's view for raw settings (never raises for bad settings)."""
    return run_view(widget, raw, context_for(document, widget))


def asset_url(document: Document, filename: str) -> str:
    """A widget file's URL, with a content hash so it can be cached for a year."""
    path = document.folder / "widgets" / filename
    return url_for("widgets.asset", slug=document.slug, filename=filename, v=static_version(path))


def widget_assets(document: Document, widget: Widget) -> dict:
    """The widget's own script and style sheet, where it has them (<name>.js, <name>.css)."""
    return {
        "script": asset_url(document, f"{widget.name}.js") if widget.script else None,
        "style": asset_url(document, f"{widget.name}.css") if widget.style else None,
    }



def iframe_snippet(src: str, title: str, width: str, height: int, max_height: int | None = None) -> Markup:
    """The <iframe> a teacher pastes (one template, which the page's script also fills in).
    ``max_height``: the tallest the frame may grow (embed-resize.js stops there; the frame scrolls)."""
    return Markup(render_template("widgets/_iframe.html", src=src, title=title, width=width, height=height,
                                  max_height=max_height).strip())


def share_links(document: Document, widget: Widget, query: str, width: str = "100%", height: int | None = None,
                max_height: int | None = None) -> dict:
    """The plain link and the <iframe> snippet that reproduce the widget in its current state."""
    suffix = f"?{query}" if query else ""
    page = url_for("widgets.page", slug=document.slug, name=widget.name, _external=True) + suffix
    embed = url_for("widgets.embed", slug=document.slug, name=widget.name, _external=True) + suffix
    # Without the ?v= cache-busting version: a teacher's copy must keep working as the file changes.
    script = url_for("static", filename="js/embed-resize.js", _external=True).split("?")[0]
    return {
        "page": page, "embed": embed,
        # Plain text (escaped where a page shows it), and the same snippet with "{src}" for the page's script.
        "iframe": str(iframe_snippet(embed, widget.title, width, height or widget.height, max_height)),
        "iframe_template": str(iframe_snippet("{src}", widget.title, width, height or widget.height, max_height)),
        "script": f'<script src="{script}" async></script>',
        # Where the links to the widget's packages go: engine/export.py writes them in, and on the live
        # site engine/site_packages.py each time the page is served (they may be built meanwhile).
        "packages": PACKAGES_MARKER.format(slug=document.slug, name=widget.name) if widget.driver == "worker" else "",
    }


def browser_context(widget: Widget, context: dict) -> dict | None:
    """The context the page gives the worker: a worker widget's; in a static export also a server
    widget's whose script fetches what its view needs there (``shipped``), less what only the server holds."""
    if widget.driver == "worker":
        return context
    if current_app.config["STATIC_EXPORT"] and widget.script:
        return {key: value for key, value in context.items()
                if {**widget.accepts, **widget.needs}.get(key) is not server_object}
    return None


def render_widget(document: Document, widget: Widget, raw: dict, mode: str) -> Markup:
    """The widget's HTML: ``mode`` is "inline" (inside the document), "page" or "embed"."""
    if widget.driver == "live":
        return Markup(f"<!--live-widget:{document.slug}/{widget.name}/{mode}-->")
    context = context_for(document, widget)
    view = run_view(widget, raw, context)
    if not raw.get("width"):  # the reader's width is not known yet: a phone starts with a picture drawn for it
        narrow = run_view(widget, {**raw, "width": NARROW_WIDTH}, context)["figure"]
        view = {**view, "first_figures": {"wide": view["figure"], "narrow": narrow}}
    return Markup(render_template(
        document.widget_template(widget.name), widget=widget, view=view, mode=mode, document=document,
        params={p["name"]: p for p in widget.param_dicts(context)},
        context=browser_context(widget, context),
        share=share_links(document, widget, view["query"]),
        # A widget drawn by the server, in a static export: its form goes to the live site, if named.
        action=(widget.driver == "server" and live_site_url(document, widget))
        or url_for("widgets.page", slug=document.slug, name=widget.name),
        assets=widget_assets(document, widget),
    ))


def render_live(document: Document, widget: Widget, mode: str, variables: dict | None = None) -> Markup:
    """A live widget as it is now: with ``variables`` from its document's ``live_widget_form`` hook (a
    posted form), else from its ``live_widget`` hook."""
    if variables is None:
        variables = document.hooks.live_widget(widget, mode)
    return Markup(render_template(
        document.widget_template(widget.name), widget=widget, mode=mode, document=document,
        share=share_links(document, widget, ""), assets=widget_assets(document, widget), **variables,
    ))


def fill_slots(document: Document, html: Markup) -> Markup:
    """A rendered section with each ``[[widget name]]`` slot filled (default state, inline)."""
    return fill_widget_slots(html, lambda name: render_widget(document, document.widgets[name], {}, "inline"))


def live_site_url(document: Document, widget: Widget) -> str | None:
    """In a static export made with --live-server: the widget's page on the live site."""
    live_server = (current_app.config["STATIC_EXPORT"] or {}).get("live_server")
    if not live_server:
        return None
    return live_server.rstrip("/") + url_for("widgets.page", slug=document.slug, name=widget.name)


def render_live_elsewhere(document: Document, widget: Widget, mode: str) -> Markup:
    """A live widget in a static export: its document's version for files (``static_live_widget``),
    or else what it does and that it needs the live site."""
    hook = document.hooks.static_live_widget
    found = hook(widget, mode) if hook else None
    if found is None:
        return Markup(render_template("widgets/live_elsewhere.html", widget=widget, document=document, mode=mode,
                                      live_url=live_site_url(document, widget)))
    template, variables = found
    return Markup(render_template(document.template(template), widget=widget, document=document, mode=mode,
                                  live_url=live_site_url(document, widget), share=share_links(document, widget, ""),
                                  assets=widget_assets(document, widget), **variables))


def fill_live(marker: dict) -> str:
    """A live-widget marker in a served page (engine/caching.py's finishers): the widget as it is
    now (in a static export, with a note that it needs the live site)."""
    document = documents()[marker["slug"]]
    widget, mode = document.widgets[marker["name"]], marker["mode"]
    if current_app.config["STATIC_EXPORT"]:
        return str(render_live_elsewhere(document, widget, mode))
    return str(render_live(document, widget, mode))


def _page_template(document: Document, widget: Widget, mode: str, html: Markup):
    if mode == "embed":
        return render_template("embed.html", widget=widget, html=html, document=document)
    exporting = current_app.config["STATIC_EXPORT"]
    if not exporting:
        oembed = url_for("oembed.oembed", url=canonical_url(), format="json", _external=True)
    elif exporting["base_url"]:  # written by engine/export.py beside the pages
        oembed = f"{exporting['base_url']}oembed/{document.slug}/{widget.name}.json"
    else:  # no address to answer with: no oEmbed
        oembed = None
    return render_template("widgets/page.html", widget=widget, html=html, oembed=oembed, document=document)


def settings_read(slug: str, name: str) -> tuple[str, ...]:
    """The query parameters a widget's page or view reads: its settings (a percent setting's box's
    name too, as a form sent without JavaScript gives it), and the width it is drawn for."""
    document = document_of(slug)
    widget = widget_of(document, name)
    return (*query_names(widget.params(context_for(document, widget))), "width")


def _widget_page(slug: str, name: str, mode: str):
    document = document_of(slug)
    widget = widget_of(document, name)
    return _page_template(document, widget, mode, render_widget(document, widget, raw_state(request.args), mode))


@bp.get("/<slug>/widgets/")
@cached_page
def gallery(slug: str):
    document = document_of(slug)
    widgets = [(w, share_links(document, w, "")) for w in document.widgets.values()]
    return render_template("widgets/gallery.html", widgets=widgets, document=document)


@bp.get("/<slug>/widgets/<name>")
@cached_page(state=settings_read)
def page(slug: str, name: str):
    return _widget_page(slug, name, "page")


@bp.get("/embed/<slug>/<name>")
@cached_page(state=settings_read)
def embed(slug: str, name: str):
    return _widget_page(slug, name, "embed")


def _live_form(slug: str, name: str, mode: str):
    """A live widget's form, posted to the address that shows the widget: its document's
    ``live_widget_form(widget, mode, whole_page)`` reads the request and answers it (the whole page,
    or for a script only the widget's results), drawing the page with ``whole_page(variables)``: the
    widget with those template variables, in its page or its embed."""
    document = document_of(slug)
    widget = widget_of(document, name)
    hook = document.hooks.live_widget_form
    if widget.driver != "live" or hook is None:
        raise MethodNotAllowed(["GET", "HEAD"], description=f"{name} takes nothing by POST; its settings are in its address.")
    require_same_origin()  # a page of another site may not spend this server's work

    def whole_page(variables: dict) -> str:
        return _page_template(document, widget, mode, render_live(document, widget, mode, variables))

    response = make_response(hook(widget, mode, whole_page))
    response.cache_control.no_store = True  # this reader's answer, with this reader's form token
    return response


@bp.post("/<slug>/widgets/<name>")
def page_form(slug: str, name: str):
    return _live_form(slug, name, "page")


@bp.post("/embed/<slug>/<name>")
def embed_form(slug: str, name: str):
    return _live_form(slug, name, "embed")


@bp.get("/embed/<name>")
def embed_by_name(name: str):
    """Embed addresses from before documents had their own (/embed/<name>): teachers have pasted them."""
    for document in documents().values():
        if name in document.widgets:
            query = request.query_string.decode("latin-1")
            target = url_for("widgets.embed", slug=document.slug, name=name) + (f"?{query}" if query else "")
            return redirect(target, 301)
    abort(404, description=f"There is no widget called “{name}”. The documents' widget lists are linked from the home page.")


@bp.get("/<slug>/assets/<filename>")
def asset(slug: str, filename: str):
    document = document_of(slug)
    kind = ASSET_TYPES.get(Path(filename).suffix)
    folder = document.folder / "widgets"
    try:
        present = kind is not None and "/" not in filename and (folder / filename).is_file()
    except OSError:  # a name longer than the file system allows
        present = False
    if not present:
        abort(404, description=f"No widget file {filename} in {slug}.")
    response = send_from_directory(folder, filename, mimetype=kind)
    response.cache_control.no_cache = False
    response.cache_control.public = True
    if request.args.get("v") == static_version(folder / filename):  # this URL's bytes never change
        response.cache_control.max_age = ONE_YEAR
        response.cache_control.immutable = True
    else:
        response.cache_control.max_age = 300
    return response


@bp.get("/api/widgets/<slug>/<name>")
# The view depends only on its settings and the content (the two-run gate's took 0.23 CPU-s a request,
# drawn afresh each time).
@cached_page(mimetype="application/json", state=settings_read)
def view_json(slug: str, name: str):
    document = document_of(slug)
    widget = widget_of(document, name)
    if widget.driver == "live":
        abort(404, description=f"{name} shows the server's state and is not drawn by this API.")
    return current_app.json.response(view_of(document, widget, raw_state(request.args))).get_data()


def _log10(value: float) -> str:
    """A log-scale slider's position for ``value`` (templates: {{ value|log10 }})."""
    return f"{math.log10(value):.4f}"


def init_app(app: Flask) -> None:
    for document in app.extensions["documents"].values():
        app.extensions["caching"].index(document.folder / "widgets", tuple(ASSET_TYPES))
    app.extensions["widget_contexts"] = {}
    app.extensions["caching"].finishers.append((_LIVE, fill_live))
    app.jinja_env.filters["log10"] = _log10
    app.jinja_env.filters["in_percent"] = in_percent  # a share as its percent box shows it: 0.3 → 30
    app.jinja_env.globals["log_step"] = LOG_STEP
    app.register_blueprint(bp)
    from .oembed import bp as oembed_bp  # here, not at the top: oembed.py reads this module's helpers

    app.register_blueprint(oembed_bp)
