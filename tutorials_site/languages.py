"""The site's languages: Sphinx's language code, the URL segment and the hreflang of each."""

import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str  # Sphinx's `language`, and the folder under locales/
    seg: str  # URL segment: _build/html/<seg>/
    hreflang: str
    name: str  # the language's own name, for the switcher


ALL = (
    Language("en", "en", "en", "English"),
    Language("ko", "ko", "ko", "한국어"),
    Language("ja", "ja", "ja", "日本語"),
    Language("zh_CN", "zh-cn", "zh-CN", "简体中文"),
)
SOURCE = ALL[0]  # the language the tutorials are written in
TRANSLATED = ALL[1:]
BY_SEG = {lang.seg: lang for lang in ALL}
BY_CODE = {lang.code: lang for lang in ALL}


def selected(value=None):
    """The languages named by LANGUAGES (URL segments, space-separated), all by default."""
    value = os.environ.get("LANGUAGES", "") if value is None else value
    if not value.strip():
        return list(ALL)
    unknown = [seg for seg in value.split() if seg not in BY_SEG]
    if unknown:
        raise SystemExit(
            f"LANGUAGES: unknown language segment(s) {', '.join(unknown)}; "
            f"known: {', '.join(BY_SEG)}"
        )
    return [BY_SEG[seg] for seg in value.split()]


CHOOSER_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>PyTorch Tutorials</title>{head}
<script>
// The reader's remembered language (set by the language switcher), else the browser's, else English.
(function () {{
  var available = {segs};
  var wanted = [];
  try {{ wanted.push(localStorage.getItem("tutorials-language")); }} catch (e) {{}}
  (navigator.languages || [navigator.language]).forEach(function (tag) {{
    tag = (tag || "").toLowerCase();
    wanted.push(tag, tag.split("-")[0], tag.indexOf("zh") === 0 ? "zh-cn" : null);
  }});
  var seg = wanted.filter(function (s) {{ return s && available.indexOf(s) !== -1; }})[0] || "{default}";
  location.replace("{prefix}" + seg + "/index.html");
}})();
</script>
<noscript><meta http-equiv="refresh" content="0; url={prefix}{default}/index.html"></noscript>
</head>
<body><p>{links}</p></body>
</html>
"""


def chooser_page(langs, prefix="", head=""):
    """A page that sends the reader to <prefix><their language>/index.html (it works from disk too)."""
    segs = [lang.seg for lang in langs]
    default = SOURCE.seg if SOURCE in langs else segs[0]
    links = " · ".join(f'<a href="{prefix}{l.seg}/index.html" hreflang="{l.hreflang}">{l.name}</a>' for l in langs)
    return CHOOSER_PAGE.format(segs=json.dumps(segs), default=default, prefix=prefix, links=links, head=head)
