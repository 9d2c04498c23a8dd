"""The site's languages: Sphinx's language code, the URL segment and the hreflang of each."""

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import UsageError


@dataclass(frozen=True)
class Language:
    """One of the site's languages."""

    code: str  # Sphinx's `language`, and the folder under locales/
    seg: str  # URL segment: _build/html/<seg>/
    hreflang: str
    name: str  # the language's own name, for the switcher
    # Whether its writing puts spaces between words; where not (Japanese, Chinese), a line break between two
    # of its characters is no space, and the build removes it where text is shown (tutorial_text.wrap).
    spaced: bool = True


ALL = (
    Language("en", "en", "en", "English"),
    Language("ko", "ko", "ko", "한국어"),
    Language("ja", "ja", "ja", "日本語", spaced=False),
    Language("zh_CN", "zh-cn", "zh-CN", "简体中文", spaced=False),
)
SOURCE = ALL[0]  # the language the tutorials are written in
TRANSLATED = ALL[1:]
BY_SEG = {lang.seg: lang for lang in ALL}
BY_CODE = {lang.code: lang for lang in ALL}


def alternates(langs: Sequence[Language]) -> list[tuple[str, Language]]:
    """(hreflang, language) of each language a page is in, and "x-default" for the one a reader of
    none of them gets: English, or the first language where English is not among them."""
    default = SOURCE if SOURCE in langs else langs[0]
    return [(lang.hreflang, lang) for lang in langs] + [("x-default", default)]


def select(value: str) -> list[Language]:
    """The languages named by LANGUAGES (URL segments, space-separated), all by default."""
    if not value.strip():
        return list(ALL)
    unknown = [seg for seg in value.split() if seg not in BY_SEG]
    if unknown:
        raise UsageError(
            f"LANGUAGES: unknown language segment(s) {', '.join(unknown)}; "
            f"known: {', '.join(BY_SEG)}"
        )
    return [BY_SEG[seg] for seg in dict.fromkeys(value.split())]  # each once, in the order given
