"""Issue 41, item 1 and the first part of item 5: hostile keys cannot grow an in-process cache, and a
NUL in a file's path is a 404, not a traceback.

``CACHES`` names every in-process cache the app and the model server keep, each with what bounds it;
``test_every_cache_is_listed`` finds them in the source, so a new one fails until it is listed here.
A cache whose key a request can choose is walked by ``HOSTILE``: the attack's requests (2,000 spellings
of a vendor path, junk Accept-Encoding values, junk queries) are sent, and after each the cache's
entries and bytes are checked against its bound. On the code before the fix the vendor walk failed at
its second request (a second copy of dist/index.js, kept under the spelling ``dist/0/../index.js``).
"""
from __future__ import annotations

import logging
import re
from types import SimpleNamespace

import pytest

from engine import create_app
from engine.caching import COMPRESSED_CACHE_BYTES, PAGE_CACHE_BYTES, BoundedCache
from engine.vendor import VENDOR_CACHE_BYTES
from livescoring.scorer import ENCODED_CONTEXTS, PREFIX_CACHE_BYTES, PrefixCache, Scorer, _Prefix
from tools.launcher import REPO_ROOT

SCANNED = ("engine", "benchmarks", "widgetkit", "livescoring", "explainers", "content")
# "path:name" of every cache, and what bounds it. Keyed by a request (walked by HOSTILE below): bounded
# by bytes. Keyed by the server's own files, data folder or settings: a request cannot add a key.
CACHES = {
    "engine/vendor.py:vendor_cache": f"request (resolved path of a served file): {VENDOR_CACHE_BYTES:,} bytes",
    "engine/caching.py:self.pages": f"request (the page's URL): {PAGE_CACHE_BYTES:,} bytes, keys counted",
    "engine/caching.py:self.compressed": f"request (the body's ETag): {COMPRESSED_CACHE_BYTES:,} bytes",
    "engine/caching.py:self._items": "BoundedCache's own store (the two above and the vendor cache)",
    "engine/caching.py:_resolved": "request (a static path in its one spelling): only paths of indexed files kept",
    "engine/caching.py:_hashes": "files: the static and widget files indexed at start",
    "livescoring/scorer.py:self.prefixes": f"request (a prompt's shared text): {PREFIX_CACHE_BYTES:,} bytes",
    "livescoring/scorer.py:self.entries": "PrefixCache's own store (the one above)",
    "livescoring/scorer.py:self._encoded": f"request (a prompt): {ENCODED_CONTEXTS} entries, each within the "
                                           "request's size limit (benchmarks/server/budget.py)",
    "livescoring/worker.py:self._per_client": "request (the client): only clients with a job queued or running",
    "livescoring/worker.py:_model_spans": "request (the client): only clients whose work ended lately",
    "livescoring/prompt_reader.py:self.blocks": "request (a prompt's tokens): BlockCache's max_bytes",
    "livescoring/prompt_reader.py:self.next_rows": "request (a prompt's tokens): NEXT_ROWS entries, each one row "
                                                   "of the model's vocabulary",
    "livescoring/client.py:self._encoded": "request (a prompt's text): ENCODED_TEXTS entries, each within the "
                                           "request's size limit (benchmarks/server/budget.py)",
    "livescoring/client.py:self._token_texts": "the model server's answers (token ids): TOKEN_TEXTS entries, "
                                               "each one token's text",
    "engine/caching.py:self.states": f"request (a widget page's state): {PAGE_CACHE_BYTES:,} bytes, keys counted",
    "engine/render_budget.py:self._spent": "request (the client): RenderBudget.MAX_CLIENTS, a key and two floats each",
    "engine/content.py:_RENDERED": "files: a document's rendering per version of its files, 32 at most",
    "engine/content.py:_cache": "files: each paper's glossary, paper and glossary page",
    "engine/widgets.py:widget_contexts": "files: each paper's widget context, made once",
    "engine/openapi.py:_constraints": "no arguments: made once",
    "benchmarks/mmlu/server/data_checks.py:_built_index": "settings: the data folder",
    "benchmarks/mmlu/server/data_checks.py:_test_questions": "settings: the data folder",
    "benchmarks/mmlu/server/data_checks.py:split_counts": "settings: the data folder",
    "benchmarks/mmlu/server/published_runs.py:_answers": "files: the published runs",
    "benchmarks/flips_widget.py:_LAST_LOADED": "request (a reader's files, in the browser's worker: the server's "
                                                "flips view is never sent them): the last pair only",
    "benchmarks/mmlu/server/published_runs.py:_published_answers": "files: a published run and the data folder, "
                                                                   "4 at most",
    "benchmarks/mmlu/server/published_runs.py:_summaries": "files: the published runs",
    "benchmarks/mmlu/server/published_runs.py:_summarised": "files: the published runs and the data folder",
    "benchmarks/mmlu/server/rotation_runs.py:_summarised": "files: the published rotation checks and the test "
                                                           "set's sizes, 4 at most",
    "engine/packages.py:_COMPRESSED": "files: the site's and Pyodide's files a widget package holds, once per "
                                      "content (export only)",
    "benchmarks/mmlu/server/reader.py:_read_subjects": "settings: the data folder",
    "benchmarks/mmlu/server/reader.py:_read_split_file": "files: a subject and split the reader has checked exist",
    "benchmarks/mmlu_pro/server/__init__.py:_published_rows": "files: the published run, read once",
    "benchmarks/mmlu_pro/server/__init__.py:live_run": "files: the published run, read once",
    "benchmarks/mmlu_pro/server/reader.py:_by_category": "settings: the data folder and a split name",
    "benchmarks/mmlu_pro/server/reader.py:_read_split": "settings: the data folder and a split name",
    "benchmarks/registry.py:_found": "no arguments: the benchmarks found, once",
    "benchmarks/registry.py:tasks": "no arguments: the benchmarks found, once",
    "benchmarks/registry.py:harness_prefixes": "no arguments: made once",
    "benchmarks/registry.py:of_group_field": "one of the benchmarks' group fields (a row's others are never asked)",
}
_DECORATED = re.compile(r"^@(?:functools\.)?(?:lru_cache|cache)\b.*\n(?:@.*\n)*def (\w+)", re.M)
_HELD = re.compile(r"^(?:\s*(self\.\w+)|(\w+))(?:: [^=\n]+)? = (?:collections\.)?(?:OrderedDict|BoundedCache|"
                   r"PrefixCache|Counter)\(", re.M)
_MODULE_DICT = re.compile(r"^(\w+)(?:: [^=\n]+)? = \{\}", re.M)
_SELF_DICT = re.compile(r"^\s*self\.(_\w+)(?:: [^=\n]+)? = \{\}", re.M)
_EXTENSION = re.compile(r'extensions\["(\w+)"\] = (?:\{\}|BoundedCache\()')


def test_every_cache_is_listed():
    found = set()
    for folder in SCANNED:
        for path in (REPO_ROOT / folder).rglob("*.py"):
            text, where = path.read_text(encoding="utf-8"), path.relative_to(REPO_ROOT).as_posix()
            names = [*_DECORATED.findall(text), *(a or b for a, b in _HELD.findall(text)),
                     *_MODULE_DICT.findall(text), *_SELF_DICT.findall(text), *_EXTENSION.findall(text)]
            found |= {f"{where}:{name}" for name in names}
    assert found - CACHES.keys() == set(), "a new cache: list it in CACHES with its bound (a request's key: bytes)"


# -- the caches a request can key: the attack's requests, checked after each ----------------------------
@pytest.fixture(scope="module")
def hostile_app():
    """An app of this module's own: the page walk scales its stores down, which no other test may see."""
    app = create_app({"TESTING": True, "SCORER_MODEL": "/nonexistent/model-for-hostile-caches"})
    if not app.extensions["vendor_packages"]:
        pytest.skip("node_modules has no CodeMirror: run `npm ci` (tests/run.sh does)")
    return app


# The attack as filed (dist/$RANDOM/../index.js), and every other way to spell one vendor path.
VENDOR_FORMS = ["dist/{i}/../index.js", "dist/./index.js?{i}", "./dist/{i}/../index.js", "dist/{i}%2F..%2Findex.js",
                "dist%5C{i}%5C..%5Cindex.js", "dist/{i}%00/../index.js", "dist/{i}/.%2E/index.js",
                "dist//{i}/../index.js"]


def _vendor_spellings(app, count: int = 2000):
    base = f"/vendor/@codemirror/view@{app.extensions['vendor_packages']['@codemirror/view']['version']}/"
    yield base + "dist/index.js", {}  # the one spelling: one entry
    for i in range(count):
        yield base + VENDOR_FORMS[i % len(VENDOR_FORMS)].format(i=i), {}


def test_a_vendor_file_has_one_spelling(hostile_app):
    """The fast path's share of the vendor walk below: each form once."""
    client, cache = hostile_app.test_client(), hostile_app.extensions["vendor_cache"]
    (first, _), *others = _vendor_spellings(hostile_app, len(VENDOR_FORMS))
    assert client.get(first).status_code == 200
    held = len(cache)
    for url, _ in others:
        assert client.get(url).status_code in (308, 404), url  # "//" is merged by a redirect first
    assert len(cache) == held


def _junk_encodings(app):
    """One static file, and one vendor file, asked for with 2,000 Accept-Encoding values and queries."""
    vendor = f"/vendor/@codemirror/state@{app.extensions['vendor_packages']['@codemirror/state']['version']}/"
    for i in range(2000):
        encoding = [f"gzip;q=0.{i}", f"x-junk-{i}, gzip", f"br, deflate, gzip, {'z' * (i % 300)}", f"GZIP{i}"][i % 4]
        path = "/static/css/site.css" if i % 2 else vendor + "dist/index.js"
        yield f"{path}?v={i}", {"Accept-Encoding": encoding}


def _junk_queries(app):
    """Junk query parameters and made-up settings on a cached page, each answer gzipped under a junk
    Accept-Encoding. Every byte-bounded store of the app's caches is scaled down to 1 MiB so that 150
    pages (22 KB each) pass the bound."""
    for store in _stores(app):
        store.max_bytes = 2**20
    for i in range(150):
        junk = f"x{i}={'y' * i}" if i % 2 else f"n={100 + i}"
        yield f"/embed/mmlu/chance-explorer?{junk}", {"Accept-Encoding": f"gzip, junk-{i}"}


def _static_spellings(app):
    forms = ["css/{dots}site.css", "css/{i}/../site.css", "css%2Fsite.css?{i}", "css/site.css%00{i}",
             "css%5Csite.css", "./css/site.css?{i}", "css/.%2E/css/site.css?{i}"]
    for i in range(2000):
        yield "/static/" + forms[i % len(forms)].format(i=i, dots="./" * (i % 20)), {}


def _vendor(app):
    return app.extensions["vendor_cache"]


def _compressed(app):
    return app.extensions["caching"].compressed


def _pages(app):
    return app.extensions["caching"].pages


def _resolved(app):
    return app.extensions["caching"]._resolved


def _stores(app) -> list:
    """Every byte-bounded store of the app's caches (pages, compressed bodies, any other)."""
    return [store for store in vars(app.extensions["caching"]).values() if isinstance(store, BoundedCache)]


HOSTILE = {  # name: (the requests, then per cache it walks: the cache, the most entries it may hold after each)
    "vendor spellings": (_vendor_spellings, [(_vendor, lambda app, before: before + 1)]),  # dist/index.js
    # The gzip of site.css and of one vendor file.
    "Accept-Encoding": (_junk_encodings, [(_compressed, lambda app, before: before + 2)]),
    "page queries": (_junk_queries, [(_pages, None), (_compressed, None), (_stores, None)]),  # by bytes alone
    # A plain dict: one entry per indexed file at most, whatever the spelling asked for.
    "static spellings": (_static_spellings, [(_resolved, lambda app, before: len(app.extensions["caching"]._hashes))]),
}


@pytest.mark.parametrize("name", [
    # Each 1 to 2.5 s on the 2-core machine: the fast path has test_a_vendor_file_has_one_spelling.
    pytest.param("vendor spellings", marks=pytest.mark.slow),  # 2,000 requests, the attack's count: 1.1 s
    pytest.param("Accept-Encoding", marks=pytest.mark.slow),  # 2,000 requests: 1.0 s
    pytest.param("page queries", marks=pytest.mark.slow),  # 150 pages rendered: 2.3 s
    pytest.param("static spellings", marks=pytest.mark.slow),  # 2,000 requests: 1.6 s
])
def test_hostile_keys_cannot_grow_a_cache(hostile_app, name):
    requests, walked = HOSTILE[name]
    client = hostile_app.test_client()
    before = {cache_of: len(cache_of(hostile_app)) for cache_of, _ in walked}
    for sent, (url, headers) in enumerate(requests(hostile_app), 1):
        assert client.get(url, headers=headers).status_code < 500, url
        for cache_of, most in walked:
            what = f"{cache_of.__name__} after {sent} requests ({url})"
            found = cache_of(hostile_app)
            for cache in found if isinstance(found, list) else [found]:
                if hasattr(cache, "max_bytes"):
                    assert cache.nbytes <= cache.max_bytes, what
            if most is not None:
                assert len(found) <= most(hostile_app, before[cache_of]), what


def test_the_model_servers_caches_are_bounded_without_a_model():
    assert PREFIX_CACHE_BYTES == 256 * 2**20
    prefixes = PrefixCache(max_bytes=10 * 2**20)  # the same store, scaled down
    for i in range(2000):  # 2,000 hostile shared texts of 1 MiB of keys and values each
        prefixes.put(f"hostile {i}", _Prefix(token_ids=(i,), layers=[], nbytes=2**20))
        assert prefixes.nbytes <= prefixes.max_bytes and len(prefixes.entries) <= 10
    prefixes.put("larger than the bound", _Prefix(token_ids=(), layers=[], nbytes=prefixes.max_bytes + 1))
    assert "larger than the bound" not in prefixes.entries

    tokenizer = lambda text, add_special_tokens: {"input_ids": [len(text)]}  # noqa: E731
    scorer = Scorer(SimpleNamespace(tokenizer=tokenizer), decoder=object())
    assert scorer.prefixes.max_bytes == PREFIX_CACHE_BYTES
    for i in range(2000):
        scorer.encode(f"hostile prompt {i}")
    assert len(scorer._encoded) == ENCODED_CONTEXTS


# -- item 5: a NUL in a file's path ------------------------------------------------------------------
@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
@pytest.mark.parametrize("path", ["/static/x%00y", "/static/css/site.css%00", "/vendor/x%00y.js",
                                  "/vendor/@codemirror/view@{view}/dist/index%00.js"])
def test_a_nul_in_a_file_path_is_a_404_and_logs_nothing(hostile_app, caplog, method, path):
    url = path.format(view=hostile_app.extensions["vendor_packages"]["@codemirror/view"]["version"])
    with caplog.at_level(logging.WARNING):
        response = hostile_app.test_client().open(url, method=method)
    assert response.status_code == 404
    assert [record for record in caplog.records if record.levelno >= logging.ERROR] == []
