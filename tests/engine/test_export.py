"""The static export (engine/export.py) on the fixture document: the same input gives the same
bytes, every address in the files is relative (so the folder works under any base path), oEmbed
is written only with --base-url, and a page naming an address the folder cannot answer fails the
export, naming it; the live site's packages (engine/site_packages.py) are built once, by the same
code, and offered in the share box only once built. The real documents' export, served and read in
Chromium, is tests/browser/test_static_export.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from engine import create_app
from engine.export import FREEZE_ORIGIN, ExportError, export, main
from engine.packages import packaged_widgets
from engine.site_packages import build, start_building

FIXTURE_CONTENT = Path(__file__).resolve().parents[1] / "fixtures" / "content"
pytestmark = pytest.mark.slow  # each export copies Pyodide's 14 MiB (about half a second)
ROOT_RELATIVE = re.compile(r"""\s(?:href|src|action|data-[a-z-]+)="/(?!/)""")


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_input_gives_the_same_bytes_and_only_relative_addresses(tmp_path):
    first = export(tmp_path / "one", content_dir=FIXTURE_CONTENT)
    second = export(tmp_path / "two", content_dir=FIXTURE_CONTENT)
    one, two = files_of(tmp_path / "one"), files_of(tmp_path / "two")
    assert one == two
    assert first.files == len(one) and first.bytes == sum(map(len, one.values())) == second.bytes
    for name in ("index.html", "demo/index.html", "demo/glossary/index.html", "demo/widgets/index.html",
                 "demo/widgets/coin-flips.html", "embed/demo/coin-flips.html", "api/python-runtime"):
        assert name in one, name
    for name, data in one.items():
        if name.endswith((".html", ".js", ".css")) or name.startswith("api/"):
            text = data.decode()
            assert FREEZE_ORIGIN not in text, name
            assert not ROOT_RELATIVE.search(text), f"{name}: {ROOT_RELATIVE.search(text)}"
    runtime = json.loads(one["api/python-runtime"])
    assert runtime["pyodide_module"].startswith("../pyodide/") and runtime["wheel"].startswith("../wheels/")
    assert "oembed" not in {name.split("/")[0] for name in one}
    assert b"json+oembed" not in one["demo/widgets/coin-flips.html"]
    page = one["demo/widgets/coin-flips.html"].decode()
    assert "data-static-export" in page and 'href="../../static/css/site.css' in page


def test_oembed_is_written_with_the_exports_own_address(tmp_path):
    base = "https://example.org/courses/ml/papers/"
    export(tmp_path / "out", base_url=base, content_dir=FIXTURE_CONTENT)
    oembed = json.loads((tmp_path / "out" / "oembed" / "demo" / "coin-flips.json").read_text())
    assert oembed["type"] == "rich" and oembed["provider_url"] == base
    assert f'src="{base}embed/demo/coin-flips.html"' in oembed["html"]
    page = (tmp_path / "out" / "demo" / "widgets" / "coin-flips.html").read_text()
    assert f'href="{base}oembed/demo/coin-flips.json"' in page
    assert f"{base}demo/widgets/coin-flips.html" in page  # the share box's link a teacher copies


@pytest.mark.parametrize(("link", "said"), [
    ("/no-such-page/at/all", "names /no-such-page/at/all, which is not a page of this site"),
    ("/no-such-document/", "404"),
])
def test_a_page_naming_what_the_folder_cannot_answer_fails_the_export(tmp_path, link, said):
    content = tmp_path / "content"
    shutil.copytree(FIXTURE_CONTENT, content)
    section = content / "demo" / "sections" / "02-second.md"
    section.write_text(section.read_text() + f"\nSee [elsewhere]({link}).\n")
    with pytest.raises(ExportError, match=re.escape(said)):
        export(tmp_path / "out", content_dir=content)


def test_the_command_refuses_a_relative_base_url(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["/tmp/never-written", "--base-url", "example.org/papers"])
    assert stopped.value.code == 2
    assert "--base-url must be an absolute http(s) address" in capsys.readouterr().err


def test_the_live_sites_share_box_offers_the_packages_once_they_are_built(tmp_path):
    """What a teacher sees in a widget's Share box on the live site: nothing where the server makes no
    packages; that they are being made while the build runs; then both, with their sizes, and the
    link sends the file built once (no package is made for the request)."""
    app = create_app({"CONTENT_DIR": FIXTURE_CONTENT, "PACKAGES_DIR": tmp_path, "PACKAGES_AT_START": False})
    client = app.test_client()
    page = "/demo/widgets/coin-flips"
    assert start_building(app) is None  # the suite's apps build nothing unless asked
    assert "Download for a lesson" not in client.get(page).get_data(as_text=True)
    assert client.get("/packages/demo/coin-flips.zip").status_code == 404

    lock = tmp_path / f"{app.extensions['site_version']}.building"
    lock.write_text(str(os.getpid()))  # a build running (this process stands for it)
    shown = " ".join(client.get(page).get_data(as_text=True).split())
    assert "are being made for this version of the site: reload this page in a few minutes" in shown
    version = app.extensions["site_version"]
    assert build(tmp_path, version, FIXTURE_CONTENT) is None  # one build at a time
    lock.unlink()

    folder = build(tmp_path, version, FIXTURE_CONTENT)
    assert folder == tmp_path / app.extensions["site_version"] and not lock.exists()
    shown = client.get(page).get_data(as_text=True)
    links = dict(re.findall(r'<a href="(/packages/demo/[^"]+)" download>[^<]+</a> \((\d+\.\d) MB, zip\)', shown))
    assert sorted(links) == ["/packages/demo/coin-flips-scorm12.zip", "/packages/demo/coin-flips.zip"]
    for url, size in links.items():
        response = client.get(url)
        assert response.status_code == 200 and response.mimetype == "application/zip"
        data = response.get_data()
        assert data == (folder / "demo" / url.rsplit("/", 1)[-1]).read_bytes()
        assert f"{len(data) / 2**20:.1f}" == size
        with zipfile.ZipFile(BytesIO(data)) as package:
            assert "embed/demo/coin-flips.html" in package.namelist() and package.testzip() is None
    assert "imsmanifest.xml" in zipfile.ZipFile(folder / "demo" / "coin-flips-scorm12.zip").namelist()
    assert client.get("/packages/demo/made.json").status_code == 404
    assert build(tmp_path, version, FIXTURE_CONTENT) == folder  # built once per version: nothing to do again
    # The same code packages an export's widgets; one that is not there is refused, by name.
    with pytest.raises(ValueError, match="no widget the worker draws is named demo/no-such-widget"):
        packaged_widgets(app.extensions["documents"], ["demo/no-such-widget"])
