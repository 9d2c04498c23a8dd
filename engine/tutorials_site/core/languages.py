"""The site's languages: Sphinx's language code, the URL segment and the hreflang of each.

A site is written in one language, its source language (conf.py's `language`, English by default); every
other language of the site (conf.py's `tutorials_languages`) is rendered from catalogs. The engine ships its
interface labels in ALL, its default set; any other language Babel knows can be a site's too (its labels
then show in English until a catalog translates them).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError, did_you_mean


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


# The languages the engine ships its labels in, and the default site's (this repository's), English first.
ALL = (
    Language("en", "en", "en", "English"),
    Language("ko", "ko", "ko", "한국어"),
    Language("ja", "ja", "ja", "日本語", spaced=False),
    Language("zh_CN", "zh-cn", "zh-CN", "简体中文", spaced=False),
)
TRANSLATED = ALL[1:]
BY_SEG = {lang.seg: lang for lang in ALL}
BY_CODE = {lang.code: lang for lang in ALL}
# Languages written without spaces between words (Babel's language part of a code).
_UNSPACED = {"ja", "zh", "th", "lo", "km", "my", "bo"}


class LanguageError(UsageError):
    """A language code no locale data knows."""


def of(code: str) -> Language:
    """The language of a Sphinx language code: the engine's own entry, else one made from Babel's locale data
    (segment `pt-br` for `pt_BR`, its name in itself)."""
    if code in BY_CODE:
        return BY_CODE[code]
    from babel import Locale, UnknownLocaleError  # only here: `tutorials-site lock` imports this module without packages

    try:
        locale = Locale.parse(code)
    except (UnknownLocaleError, ValueError, TypeError):
        raise LanguageError(f"unknown language code {code!r} (a Sphinx language code: en, ko, ja, zh_CN, fr, pt_BR, ...)"
                            ) from None
    name = locale.get_display_name(locale) or code
    return Language(code, code.lower().replace("_", "-"), code.replace("_", "-"), name[:1].upper() + name[1:],
                    spaced=locale.language not in _UNSPACED)


def name_in(lang: Language, reader: Language) -> str:
    """LANG's name in the READER's language (Babel's locale data): English is 영어 to a Korean reader."""
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(lang.code).get_display_name(Locale.parse(reader.code)) or lang.name
    except (UnknownLocaleError, ValueError):
        return lang.name


@dataclass(frozen=True)
class SiteLanguages:
    """The languages of a site: the one its sources are written in first, then the others in conf.py's order."""

    all: tuple[Language, ...]

    @property
    def source(self) -> Language:
        """The language the sources are written in: its pages are rendered from them, without catalogs."""
        return self.all[0]

    @property
    def translated(self) -> tuple[Language, ...]:
        """The languages rendered from catalogs."""
        return self.all[1:]

    def by_seg(self, seg: str) -> Language | None:
        """The site's language of a URL segment, None for another."""
        return next((lang for lang in self.all if lang.seg == seg), None)

    def built_in(self, htmldir: Path) -> list[Language]:
        """The site's languages a build folder's HTML (HTMLDIR) holds pages of."""
        return [lang for lang in self.all if (Path(htmldir) / lang.seg / "index.html").is_file()]

    def select(self, value: str) -> list[Language]:
        """The languages named by LANGUAGES (URL segments, space-separated), all of the site's by default."""
        if not value.strip():
            return list(self.all)
        unknown = [seg for seg in value.split() if self.by_seg(seg) is None]
        if unknown:
            segs = [lang.seg for lang in self.all]
            raise UsageError(f"LANGUAGES: unknown language segment {unknown[0]!r}{did_you_mean(unknown[0], segs, 0.5)} "
                             f"(this site's, from conf.py's tutorials_languages: {' '.join(segs)})")
        return [lang for seg in dict.fromkeys(value.split()) if (lang := self.by_seg(seg)) is not None]


def site_languages(source: str, listed: Sequence[str] | None) -> SiteLanguages:
    """A site's languages from conf.py: SOURCE (its `language`) and LISTED (its `tutorials_languages`, Sphinx codes;
    None: the engine's shipped languages). The source language is always one, and always first."""
    codes = [source, *(lang.code for lang in ALL)] if listed is None else [source, *listed]
    return SiteLanguages(tuple(of(code) for code in dict.fromkeys(codes)))


def alternates(langs: Sequence[Language], default: Language | None = None) -> list[tuple[str, Language]]:
    """(hreflang, language) of each language a page is in, and "x-default" for the one a reader of
    none of them gets: DEFAULT (the site's source language) where it is among them, else the first."""
    chosen = default if default is not None and default in langs else langs[0]
    return [(lang.hreflang, lang) for lang in langs] + [("x-default", chosen)]
