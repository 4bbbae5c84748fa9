"""Page weight of /mmlu/: gzip-compressed bytes of its HTML, CSS and JavaScript (Pyodide excluded).

    python bench/page_weight.py

Follows the page's <link rel=stylesheet>, <script src> and the module graph of its scripts
(static `import` statements), as a browser's first load would, but leaves out /pyodide/ files
and the explainers wheel, which load later in a worker.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import urljoin, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import create_app  # noqa: E402

ASSET = re.compile(r'<(?:link[^>]+rel="stylesheet"[^>]+href|script[^>]+src)="([^"]+)"')
JS_IMPORT = re.compile(r'(?:^|\n)\s*import\s+(?:[^"\']+from\s+)?["\']([^"\']+)["\']')


def main() -> None:
    client = create_app().test_client()
    headers = {"Accept-Encoding": "gzip"}
    page = client.get("/mmlu/", headers=headers)
    sizes = {"html": len(page.data), "css": 0, "js": 0}
    html = client.get("/mmlu/").get_data(as_text=True)
    queue = [urljoin("/mmlu/", url) for url in ASSET.findall(html)]
    seen = set()
    while queue:
        url = queue.pop()
        path = urlparse(url)
        if url in seen or path.netloc or path.path.startswith("/pyodide/") or path.path.endswith(".whl"):
            continue
        seen.add(url)
        compressed = client.get(url, headers=headers)
        kind = "css" if path.path.endswith(".css") else "js"
        sizes[kind] += len(compressed.data)
        if kind == "js":
            source = client.get(url).get_data(as_text=True)
            queue += [urljoin(url, dep) for dep in JS_IMPORT.findall(source)]
    total = sum(sizes.values())
    print(f"/mmlu/ page weight, gzip-compressed, Pyodide excluded: total {total:,} bytes "
          f"(HTML {sizes['html']:,}, CSS {sizes['css']:,}, JS {sizes['js']:,}; {len(seen)} files)")


if __name__ == "__main__":
    main()
