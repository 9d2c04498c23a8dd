"""Search for Korean, Japanese and Chinese: the index and the query split text the same way.

Sphinx splits Japanese with TinySegmenter and Chinese with jieba when it builds
the index, but the browser splits the query on non-letters only, so a query
rarely meets the index's words. Here both sides split CJK runs into
overlapping bigrams (a single character stays a word) and keep other words
whole: "데이터 병렬" -> 데이, 이터, 병렬; "DataParallel" -> dataparallel.
"""

import re

from sphinx.application import Sphinx
from sphinx.search import SearchLanguage
from sphinx.util.typing import ExtensionMetadata

from .. import __version__

CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(r"[^\W_]+|_", re.UNICODE)
_RUNS = re.compile(f"[{CJK}]+|[^{CJK}]+")
_IS_CJK = re.compile(f"[{CJK}]")


def split(text: str) -> list[str]:
    """The words of TEXT as the index and the query both split them (see above)."""
    words = []
    for word in re.findall(r"\w+", text):
        for run in _RUNS.findall(word):
            if _IS_CJK.match(run):
                words += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
            else:
                words.append(run)
    return words


JS_SPLITTER = r"""
const CJK_RUNS = /[%(cjk)s]+|[^%(cjk)s]+/gu;
const IS_CJK = /^[%(cjk)s]/u;
function splitQuery(query) {
  const words = [];
  for (const word of query.match(/[\p{L}\p{N}\p{M}_]+/gu) || []) {
    for (const run of word.match(CJK_RUNS)) {
      if (!IS_CJK.test(run)) words.push(run);
      else if (run.length === 1) words.push(run);
      else for (let i = 0; i + 1 < run.length; i++) words.push(run.slice(i, i + 2));
    }
  }
  return words;
}
""" % {"cjk": CJK}


class _CJKBigrams(SearchLanguage):
    """A search language whose words are split(): CJK bigrams, other words whole and lower-cased."""

    js_splitter_code = JS_SPLITTER
    js_stemmer_code = "function Stemmer() { this.stemWord = (word) => word; }"

    def split(self, input: str) -> list[str]:
        return split(input)

    def stem(self, word: str) -> str:
        return word.lower()

    def word_filter(self, word: str) -> bool:
        return bool(word) and not word.isdigit()


def _language(code: str, name: str) -> type[SearchLanguage]:
    return type(f"Search{name}", (_CJKBigrams,), {"lang": code, "language_name": name})


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the search languages of Korean, Japanese and Chinese."""
    for code, name in (("ko", "Korean"), ("ja", "Japanese"), ("zh", "Chinese")):
        app.add_search_language(_language(code, name))
    # Sphinx feeds the search index in the main process only, reading and writing in parallel or not.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
