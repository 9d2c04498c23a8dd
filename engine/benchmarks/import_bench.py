"""How much of a real translation made in place `make import-translation` brings across (issue 29, item 5): for
each tutorial script present in both an English folder and its translated copy (the same relative paths), the
English units, those imported as they are, those imported as fuzzy, those left in English (of which "as is":
the translation itself kept the English text), and the share imported, of all units and of those translated.
Target on a tutorial unchanged since its translation: at least 90% imported, none imported wrongly (that part is
judged by reading the pairs: `--pairs`).

The pairing is the command's own (commands/import_translation.pair_script), run on the two folders as they are: no
site, no catalog is written. Third-party translations stay outside the repository. The English a translation was
made from is often in the translated repository's own history: a file synced from the English and translated later
is English in the parent of the commit that translated it (the newest commit after which the file has at least 50
Hangul syllables and twenty times as many as before). It is unchanged since its translation until a later commit
brings upstream's English in (in tutorials-kr, a sync: its message names a `pytorch/tutorials@` commit); issue 35
measured each translated tutorial as it stood before such a commit, and those no such commit touched as they are now.

A file either side cannot read as a tutorial (not valid Python, not UTF-8) is reported and counted, its English
units left, as the command counts it; the others are still read.

`python benchmarks/import_bench.py ENGLISH_DIR TRANSLATED_DIR --language ko [--findings] [--pairs]`
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutorials_site.commands.import_translation import pair_script  # noqa: E402
from tutorials_site.core import languages  # noqa: E402
from tutorials_site.core.text import importing  # noqa: E402


def row(name: str, result: importing.Result) -> str:
    as_is = result.as_is
    left = result.units - result.certain - result.fuzzy
    share = f"{result.certain / result.units:.1%}" if result.units else "-"
    translated = f"{result.certain / (result.units - as_is):.1%}" if result.units > as_is else "-"
    return (f"{name:<60} {result.units:>6} {result.certain:>8} {result.fuzzy:>6} {left:>6} {as_is:>6} {share:>7}"
            f" {translated:>11}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("english", type=Path)
    parser.add_argument("translated", type=Path)
    parser.add_argument("--language", default="ko", help="the translation's language code (default ko)")
    parser.add_argument("--findings", action="store_true", help="print the report's line for each unit not imported")
    parser.add_argument("--pairs", action="store_true", help="print every import (msgid, then msgstr) to judge it")
    args = parser.parse_args()
    lang = languages.of(args.language)
    results = []
    print(f"{'file':<60} {'units':>6} {'imported':>8} {'fuzzy':>6} {'left':>6} {'as is':>6} {'share':>7}"
          f" {'translated':>11}")
    for english in sorted(args.english.rglob("*.py")):
        relative = english.relative_to(args.english).as_posix()
        translated = args.translated / relative
        if not translated.is_file():
            continue
        result = pair_script(english, translated, relative, lang, {})
        results.append(result)
        print(row(relative, result))
        if result.skipped:  # counted, its English units left, as the command counts it
            print(f"    skipped: {result.skipped}")
        for finding in result.findings if args.findings else ():
            print(f"    {relative}:{finding.line}: {finding.text}")
        for entry in result.imported if args.pairs else ():
            print(f"    {'fuzzy' if entry.fuzzy else 'import'}: {entry.msgid!r}\n           -> {entry.msgstr!r}")
    skipped = sum(bool(result.skipped) for result in results)
    print(row(f"total ({len(results)} files{f', {skipped} skipped' if skipped else ''})", importing.total(results)))


if __name__ == "__main__":
    main()
