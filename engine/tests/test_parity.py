"""Parity with a stock Sphinx-Gallery build.

The scripts in tests/parity/ (one per feature or option) are built twice per set of
options: by a plain Sphinx project with sphinx_gallery.gen_gallery, which executes
them itself, and by the site, which runs each one in a process of its own and only
renders inside Sphinx. A reader must get the same sphinx-gallery parts on both:
printed outputs, HTML representations, figures (files, sizes, alt texts, srcsets),
thumbnails, the code shown, the downloads, and the timing and memory lines.
What the site adds on purpose (theme, provenance, Colab, banners) is never looked at:
only those parts are extracted from each page.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from conftest import Node, build, copy_project
from conftest import parse_html as parse

pytestmark = pytest.mark.site  # every test here builds a site

PARITY = Path(__file__).parent / "parity"
EXAMPLES, GALLERY = "parity_source", "parity"
SCRAPER = "parity_scraper.py"  # goes beside conf.py, not into the gallery
THUMB_FILE = "parity_thumb.png"  # named by plot_thumbnail_path.py; written by the test, no binary in git

# Options both builds of a pair get. "defaults" keeps the site's own choices for the rest;
# "options" turns on every global option under test, each away from its default.
COMMON = {
    "ignore_pattern": r"__init__\.py|parity_helper",
    "ignore_repr_types": r"Skipped",
    "expected_failing_examples": [f"{EXAMPLES}/plot_failing.py"],
}
PAIRS = {
    "defaults": COMMON,
    "options": {
        **COMMON,
        "image_srcset": ["2x"],
        "thumbnail_size": (320, 200),
        "min_reported_time": 10_000,
        "line_numbers": True,
        "remove_config_comments": False,
        "first_notebook_cell": "# The first cell of every notebook",
        "last_notebook_cell": "print('the last cell of every notebook')",
        "promote_jupyter_magic": True,
        "download_all_examples": True,
        "within_subsection_order": "FileNameSortKey",
        "capture_repr": ("__repr__",),
        "image_scrapers": ("matplotlib", "parity_scraper.scrape"),
    },
}
BUILD_ENV = {"MPLBACKEND": "agg"}


# --- what a reader gets from a page ----------------------------------------------------------------

def _local(page: Path, ref: str) -> Path:
    """The file a relative URL of a page points to."""
    return (page.parent / ref.split("#")[0].split("?")[0]).resolve()


def _png_pixels(path: Path) -> tuple[tuple[int, int], bytes]:
    with Image.open(path) as image:
        rgba = image.convert("RGBA")
        return rgba.size, rgba.tobytes()


def _size(path: Path) -> tuple[int, int] | str:
    return _png_pixels(path)[0] if path.exists() else "missing"


def _notebook(data: bytes) -> list[tuple[str, str]]:
    """A notebook as (cell type, source) pairs: what a reader runs."""
    cells = json.loads(data)["cells"]
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in cells]


def _zip(data: bytes) -> dict[str, object]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: _notebook(archive.read(name)) if name.endswith(".ipynb") else archive.read(name)
                for name in sorted(archive.namelist())}


def _normalize_output(text: str) -> str:
    """What differs between any two runs: a traceback's absolute paths, an object's address in a default repr."""
    text = re.sub(r'File "[^"]*[/\\]([^"/\\]+)"', r'File "\1"', text)
    return re.sub(r" at 0x[0-9a-fA-F]+>", " at 0x...>", text)


def _downloads(page: Path, body: Node) -> dict[str, object]:
    """The downloads a page links to, by file name: a script's bytes, a notebook's cells, a zip's members."""
    found: dict[str, object] = {}
    for link in body.find_all("a"):
        href = link.attrs.get("href", "")
        if "_downloads/" not in href or "://" in href:  # the Colab link is the site's own addition
            continue
        data = _local(page, href).read_bytes()
        name = Path(href).name
        found[name] = _notebook(data) if name.endswith(".ipynb") else _zip(data) if name.endswith(".zip") else data
    return found


def _article(doc: Node) -> Node:
    """The page's body, without the theme around it (alabaster: div.body; the RTD theme: itemprop=articleBody)."""
    for node in doc.walk():
        if node.attrs.get("itemprop") == "articleBody" or (node.tag == "div" and "body" in node.classes
                                                            and node.attrs.get("role") == "main"):
            return node
    return doc


def example_page(page: Path) -> dict[str, object]:
    """The sphinx-gallery parts of an example's page, by aspect."""
    body = _article(parse(page))
    outputs = [_normalize_output(div.find_all("pre")[0].text()) if div.find_all("pre") else div.text()
               for div in body.find_all("div", {"sphx-glr-script-out"})]
    # As a browser's tree holds them: the sanitiser writes the tree HTML5 parses, a table's rows in its <tbody>.
    html_reprs = [re.sub(r"</?tbody>", "", div.inner_html().strip())
                  for div in body.find_all("div", {"output_subarea", "output_html", "rendered_html"})]
    figures = []
    for img in body.find_all("img"):
        if img.classes & {"sphx-glr-single-img", "sphx-glr-multi-img"}:
            kind = "multi" if "sphx-glr-multi-img" in img.classes else "single"
            srcset = [Path(part.split()[0]).name + "".join(f" {d}" for d in part.split()[1:])
                      for part in img.attrs.get("srcset", "").split(",") if part.strip()]
            figures.append({"file": Path(img.attrs["src"]).name, "kind": kind, "alt": img.attrs.get("alt", ""),
                            "srcset": srcset, "size": _size(_local(page, img.attrs["src"])),
                            "pixels": _png_pixels(_local(page, img.attrs["src"]))[1]
                            if _local(page, img.attrs["src"]).exists() else None})
    # Code: every highlighted block outside the outputs, with its language and line numbers as shown.
    in_output = {id(n) for div in body.find_all("div", {"sphx-glr-script-out"}) for n in div.walk()}
    # Trailing newlines differ by theme (the site's adds one); what the reader reads is the same.
    code = [(sorted(c for c in div.classes if c.startswith("highlight-"))[0], div.text().rstrip("\n"),
             bool(div.find_all(classes={"linenos"})) or bool(div.find_all("td", {"linenos"})))
            for div in body.find_all("div") if id(div) not in in_output
            and any(c.startswith("highlight-") for c in div.classes)]
    text = body.text()
    titles = body.find_all("h1")
    return {
        "title": _heading(titles[0]) if titles else None,
        "outputs": outputs,
        "html_reprs": html_reprs,
        "figures": figures,
        "code": code,
        "downloads": _downloads(page, body),
        "timing": bool(body.find_all(classes={"sphx-glr-timing"})) or "Total running time" in text,
        "memory": "Estimated memory usage" in text,
    }


def _heading(node: Node) -> str:
    """A heading's words, without the link sign after it (a pilcrow on stock, an icon glyph on the site)."""
    return node.text().replace("\N{PILCROW SIGN}", "").replace("\uf0c1", "").replace("#", "").strip()


def gallery_index(index: Path) -> dict[str, object]:
    """The gallery's index: sections and thumbnails in order, each thumbnail's image, the download-all archives."""
    body = _article(parse(index))
    order, thumbs = [], {}
    for node in body.walk():
        if node.tag in {"h1", "h2", "h3"}:
            order.append(("section", _heading(node)))
        elif "sphx-glr-thumbcontainer" in node.classes:
            links = [a.attrs["href"] for a in node.find_all("a") if a.attrs.get("href")]
            page = _local(index, links[0]).relative_to(index.parent.resolve()).with_suffix("").as_posix()
            order.append(("example", page))
            image = _local(index, node.find_all("img")[0].attrs["src"])
            thumbs[page] = _png_pixels(image) if image.exists() else "missing"
    return {"order": order, "thumbnails": thumbs, "download_all": _downloads(index, body)}


def snapshot(html: Path) -> dict[str, object]:
    """Everything compared of one build's gallery: its index and each example page, by page path."""
    gallery = html / GALLERY
    pages = {p.relative_to(gallery).with_suffix("").as_posix(): example_page(p) for p in sorted(gallery.rglob("*.html"))
             if p.name != "index.html" and p.stem != "sg_execution_times"}
    return {"index": gallery_index(gallery / "index.html"), "pages": pages}


# --- comparing two snapshots -----------------------------------------------------------------------

ASPECTS = ("pages", "title", "outputs", "html_reprs", "figures", "alt", "srcset", "figure_size", "figure_pixels",
           "code", "download_py", "download_ipynb", "download_zip", "timing", "memory",
           "index_order", "thumbnail", "download_all")

_DEFAULT_ALT = re.compile(r"sphx_glr_(.+)_\d{3}")


def _alt_matches(stock: dict, site: dict, title: str | None) -> bool:
    """Titled figures: the same alt text. Untitled ones (stock alt made from the file name) are
    "Figure N of <page title>" on the site, on purpose."""
    derived = _DEFAULT_ALT.match(Path(stock["file"]).stem)
    if derived and stock["alt"] == re.sub(r"[-,_]", " ", derived.group(1)) and site["alt"] != stock["alt"]:
        return re.fullmatch(rf"Figure \d+ of {re.escape(title or '')}", site["alt"]) is not None
    return site["alt"] == stock["alt"]


def _figure_view(figures: list[dict], aspect: str) -> list[object]:
    keys = {"figures": ("file", "kind"), "srcset": ("file", "srcset"), "figure_size": ("file", "size"),
            "figure_pixels": ("file", "pixels")}[aspect]
    return [tuple(f[k] for k in keys) for f in figures]


def differences(stock: dict, site: dict, aspect: str) -> list[str]:
    """How `site` differs from `stock` in one aspect, one line per difference (empty: the same)."""
    out: list[str] = []
    if aspect == "pages":
        if stock["pages"].keys() != site["pages"].keys():
            out.append(f"pages: stock {sorted(stock['pages'])}, site {sorted(site['pages'])}")
        return out
    if aspect in {"index_order", "thumbnail", "download_all"}:
        a, b = stock["index"], site["index"]
        if aspect == "index_order" and a["order"] != b["order"]:
            out.append(f"index: stock {a['order']}\n   site {b['order']}")
        if aspect == "thumbnail":
            for page in a["thumbnails"]:
                one, two = a["thumbnails"][page], b["thumbnails"].get(page, "missing")
                if one != two:
                    size = [t[0] if isinstance(t, tuple) else t for t in (one, two)]
                    out.append(f"{page}: thumbnail differs (stock {size[0]}, site {size[1]}"
                               + (", same size, other pixels)" if size[0] == size[1] else ")"))
        if aspect == "download_all" and a["download_all"] != b["download_all"]:
            out.append(f"index downloads: stock {_describe(a['download_all'])}, site {_describe(b['download_all'])}")
        return out
    for name, one in stock["pages"].items():
        two = site["pages"].get(name)
        if two is None:
            continue  # reported by "pages"
        if aspect == "alt":
            if [f["file"] for f in one["figures"]] != [f["file"] for f in two["figures"]]:
                out.append(f"{name}: other figures (see 'figures')")
            else:
                out += [f"{name}: {f['file']} alt stock {f['alt']!r}, site {g['alt']!r}"
                        for f, g in zip(one["figures"], two["figures"]) if not _alt_matches(f, g, one["title"])]
            continue
        if aspect in {"figures", "srcset", "figure_size", "figure_pixels"}:
            a, b = _figure_view(one["figures"], aspect), _figure_view(two["figures"], aspect)
            if aspect == "figure_pixels":  # names the files rather than printing their pixels
                if len(a) != len(b):
                    out.append(f"{name}: {len(a)} figure(s) on stock, {len(b)} on the site")
                else:
                    out += [f"{name}: stock {f} and site {g}: other pixels" for (f, p), (g, q) in zip(a, b) if p != q]
                continue
            if a != b:
                out.append(f"{name}: {aspect}: stock {a}\n   site {b}")
            continue
        if aspect.startswith("download_"):
            kind = "." + aspect.removeprefix("download_")
            a, b = ({n: v for n, v in page["downloads"].items() if n.endswith(kind)} for page in (one, two))
            if a != b:
                out.append(f"{name}: {kind} download: stock {_describe(a)}, site {_describe(b)}")
            continue
        if one[aspect] != two[aspect]:
            out.append(f"{name}: {aspect}: stock {one[aspect]!r}\n   site {two[aspect]!r}")
    return out


def _describe(value: object) -> str:
    """A difference's summary, short enough for an assertion message."""
    if value is None:
        return "none"
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_describe(v)}" for k, v in value.items()) + "}"
    return repr(value)[:1500]


# --- the builds ------------------------------------------------------------------------------------

def _write_thumb(path: Path) -> None:
    """The image plot_thumbnail_path.py names: two colour bands, so pixels show a wrong crop or scale."""
    image = Image.new("RGB", (240, 120), (250, 200, 40))
    image.paste((40, 40, 160), (0, 60, 240, 120))
    image.save(path)


def _place_examples(root: Path) -> None:
    """The parity scripts as a gallery folder under `root`, and the scraper module beside conf.py."""
    shutil.copytree(PARITY, root / EXAMPLES, ignore=shutil.ignore_patterns(SCRAPER, "__pycache__"))
    _write_thumb(root / EXAMPLES / THUMB_FILE)
    shutil.copyfile(PARITY / SCRAPER, root / SCRAPER)


def _site_conf_additions(options: dict) -> str:
    return (
        "\n# Added by tests/test_parity.py: the parity gallery and the options under test.\n"
        "import os, sys\n"
        "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the scraper module, as the stock conf.py\n"
        f"sphinx_gallery_conf['examples_dirs'] = [*sphinx_gallery_conf['examples_dirs'], {EXAMPLES!r}]\n"
        f"sphinx_gallery_conf['gallery_dirs'] = [*sphinx_gallery_conf['gallery_dirs'], {GALLERY!r}]\n"
        f"sphinx_gallery_conf.update({options!r})\n"
        f"exclude_patterns = [*globals().get('exclude_patterns', []), {EXAMPLES!r}]\n"
    )


def _literal_options(conf_py: Path) -> dict:
    """The sphinx_gallery_conf a conf.py ends up with, keeping the options written as plain literals."""
    script = ("import json, runpy, sys; conf = runpy.run_path(sys.argv[1])['sphinx_gallery_conf']; "
              "print(json.dumps({k: repr(v) for k, v in conf.items()}))")
    result = subprocess.run([sys.executable, "-c", script, str(conf_py)], cwd=conf_py.parent, capture_output=True,
                            text=True, check=True)
    options = {}
    for key, text in json.loads(result.stdout).items():
        # A callable or object is skipped: nothing a stock conf.py could repeat as written.
        with contextlib.suppress(ValueError, SyntaxError):
            options[key] = ast.literal_eval(text)
    return options


@dataclass
class Built:
    html: Path
    stdout: str
    seconds: float


def build_stock(root: Path, options: dict) -> Built:
    """A plain Sphinx project holding only the parity gallery, with `options`; built in this environment."""
    root.mkdir(parents=True)
    _place_examples(root)
    conf = {**options, "examples_dirs": [EXAMPLES], "gallery_dirs": [GALLERY]}
    (root / "conf.py").write_text(
        "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the scraper module\n\n"
        "project = 'Parity'\n"
        "extensions = ['sphinx_gallery.gen_gallery']\n"
        f"exclude_patterns = ['_build', {EXAMPLES!r}]\n"
        f"sphinx_gallery_conf = {conf!r}\n", encoding="utf-8")
    (root / "index.rst").write_text(f"Parity\n======\n\n.. toctree::\n\n   {GALLERY}/index\n", encoding="utf-8")
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", ".", "_build/html"], cwd=root,
                            capture_output=True, text=True, env={**os.environ, **BUILD_ENV})
    assert result.returncode == 0, result.stdout + result.stderr
    return Built(root / "_build" / "html", result.stdout + result.stderr, time.monotonic() - start)


def site_project(root: Path, options: dict) -> dict:
    """A copy of the project with the parity gallery added; returns the options its conf.py ends up with."""
    copy_project(root)
    _place_examples(root)
    with (root / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write(_site_conf_additions(options))
    index = root / "index.md"
    # The landing page's toctree gets the parity gallery as its last entry.
    text, found = re.subn(r"(```\{toctree\}.*?\n)(```)", rf"\1{GALLERY}/index\n\2", index.read_text(encoding="utf-8"),
                          count=1, flags=re.DOTALL)
    assert found, "index.md has no toctree to add the parity gallery to"
    index.write_text(text, encoding="utf-8")
    return _literal_options(root / "conf.py")


def build_site(root: Path) -> Built:
    """The project copy built in English, as `python -m tutorials_site html` builds the site."""
    start = time.monotonic()
    result = build(root, root / "_build", env={"LANGUAGES": "en", **BUILD_ENV})
    built = Built(root / "_build" / "html" / "en", result.stdout + result.stderr, time.monotonic() - start)
    assert result.returncode == 0, built.stdout[-6000:]
    return built


@pytest.fixture(scope="module", params=list(PAIRS))
def project(request, tmp_path_factory) -> tuple[Path, dict]:
    """The site's project copy for one pair of builds, and its final sphinx_gallery_conf options."""
    root = tmp_path_factory.mktemp(f"site-{request.param}") / "project"
    return root, site_project(root, PAIRS[request.param])


@pytest.fixture(scope="module")
def site(builds_site, project: tuple[Path, dict]) -> Built:
    return build_site(project[0])


@pytest.fixture(scope="module")
def stock(builds_site, project: tuple[Path, dict], tmp_path_factory) -> Built:
    """Built with the options the site's conf.py ends up with, so that only the renderer differs."""
    return build_stock(tmp_path_factory.mktemp("stock") / "project", project[1])


@pytest.fixture(scope="module")
def stock_alone(builds_site, tmp_path_factory) -> Built:
    """A stock build that needs no site: for the tests of the comparison itself."""
    options = {"filename_pattern": r"\.py$", **PAIRS["options"]}
    return build_stock(tmp_path_factory.mktemp("stock-alone") / "project", options)


# --- the tests -------------------------------------------------------------------------------------

@pytest.mark.parametrize("aspect", ASPECTS)
def test_site_renders_like_stock(aspect: str, stock: Built, site: Built) -> None:
    found = differences(snapshot(stock.html), snapshot(site.html), aspect)
    assert not found, "\n".join(found)


def test_site_executes_nothing_inside_sphinx(site: Built) -> None:
    assert not re.search(r"Sphinx-Gallery successfully executed \d+|executed \d+ out of \d+ file", site.stdout)


def test_helper_module_has_no_page_and_is_importable(stock: Built, site: Built) -> None:
    for built in (stock, site):
        assert not (built.html / GALLERY / "parity_helper.html").exists()
        assert "THE HELPER MODULE WAS IMPORTED" in example_page(built.html / GALLERY / "plot_uses_helper.html")["outputs"][0]


def test_stock_covers_the_features(stock_alone: Built) -> None:
    """The scripts do show what they are meant to exercise, so that parity means something."""
    shot = snapshot(stock_alone.html)
    pages = shot["pages"]
    assert set(pages) == {"plot_printed", "plot_figures", "plot_single_images", "plot_thumbnail_path", "plot_failing",
                          "plot_uses_helper", "section/plot_nested", "plot_no_title"}
    # A script without a heading has a page, as stock gives it (its first paragraph is its gallery title).
    assert "a script without a heading ran" in "".join(pages["plot_no_title"]["outputs"])
    printed = pages["plot_printed"]
    assert not printed["html_reprs"] and "Table(rows=1)" in "".join(printed["outputs"])  # capture_repr=("__repr__",)
    assert "must not appear" not in "".join(printed["outputs"])
    figures = pages["plot_figures"]["figures"]
    assert [f["kind"] for f in figures] == ["single", "single", "multi", "multi", "single"]
    assert figures[1]["alt"] == "Squares and cubes" and all(f["srcset"] for f in figures)
    assert [f["kind"] for f in pages["plot_single_images"]["figures"]] == ["single"] * 3
    assert pages["plot_uses_helper"]["figures"][0]["alt"] == "Blue swatch"
    assert shot["index"]["thumbnails"]["plot_thumbnail_path"][0] == (320, 200)
    assert [cell for cell in printed["downloads"]["plot_printed.ipynb"] if cell[1].startswith("%%bash")]  # promoted
    assert len(shot["index"]["download_all"]) == 2  # download_all_examples: scripts, notebooks
    assert not any(page["timing"] for page in pages.values())  # min_reported_time is high


def test_comparison_finds_an_altered_page(stock_alone: Built, tmp_path: Path) -> None:
    """Stock against itself is equal in every aspect; one changed output line, alt text and figure are not."""
    assert all(not differences(snapshot(stock_alone.html), snapshot(stock_alone.html), a) for a in ASPECTS)
    altered = tmp_path / "html"
    shutil.copytree(stock_alone.html, altered)
    page = altered / GALLERY / "plot_printed.html"
    page.write_text(page.read_text(encoding="utf-8").replace("printed line 1", "printed line one"), encoding="utf-8")
    page = altered / GALLERY / "plot_figures.html"
    page.write_text(page.read_text(encoding="utf-8").replace('alt="Squares and cubes"', 'alt="Squares"'), encoding="utf-8")
    thumb = next((altered / "_images").glob("sphx_glr_plot_figures_002.png"))
    with Image.open(thumb) as image:
        image.resize((image.width // 2, image.height)).save(thumb)
    a, b = snapshot(stock_alone.html), snapshot(altered)
    assert differences(a, b, "outputs") == ["plot_printed: outputs: stock " + repr(a["pages"]["plot_printed"]["outputs"])
                                            + "\n   site " + repr(b["pages"]["plot_printed"]["outputs"])]
    assert len(differences(a, b, "alt")) == 1 and len(differences(a, b, "figure_size")) == 1
    assert differences(a, b, "figure_pixels") == ["plot_figures: stock sphx_glr_plot_figures_002.png and "
                                                  "site sphx_glr_plot_figures_002.png: other pixels"]
    assert not differences(a, b, "code") and not differences(a, b, "thumbnail")
