"""core.terminal: a tutorial's output as a terminal shows it, within the limits, read in chunks."""

import pytest

from tutorials_site.core.terminal import ESCAPE, OutputLimits, RunOutput, parse_size, render

LIMIT = 10_000


def shown(text: str) -> str:
    return render(text, LIMIT)


@pytest.mark.parametrize(("printed", "expected"), [
    ("10%\r20%\r100%\n", "100%\n"),  # a progress bar shows its last state
    ("epoch 1: 10%|#         |\repoch 1: 100%|##########|\n", "epoch 1: 100%|##########|\n"),
    ("100%\rab", "ab0%"),  # a shorter redraw leaves the end of the longer one, as on a terminal
    ("100%\r\x1b[Kab", "ab"),  # unless it erases the line first
    ("abc\x1b[2Kd", "   d"),
    ("ab\bc", "ac"),
    ("\b\bab", "ab"),
    ("a\tb\n12345678\tc", "a       b\n12345678        c"),
    ("line\r\n", "line\n"),
    ("\x1b[1;31mred\x1b[0m", "red"),
    ("\x1b]0;title\x07text", "text"),
    ("\x1b]8;;https://x.org\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("a\x1b]0;never ended\nb", "a\nb"),
    ("\x1b(Ba\x1b=b\x1b7c\x1b", "abc"),
    ("a\x00b\x07c\x7fd\x01e\x9bf\x85g", "abcdefg"),
    ("ab\x0bc", "ab\n  c"),  # VT and FF move down a line, in the same column
    ("ab\x0cc", "ab\n  c"),
    ("a\u2028b\u2029c", "a\nb\nc"),
    ("\ud800x\ufffe\U0010ffff\ufdd0", "\ufffdx\ufffd\ufffd\ufffd"),
    ("été 日本 \u200b🙂", "été 日本 \u200b🙂"),
])
def test_output_is_shown_as_a_terminal_shows_it(printed, expected):
    assert shown(printed) == expected


def test_what_is_shown_holds_no_character_docutils_or_html_would_change():
    everything = "".join(map(chr, range(0x110000)))
    text = shown(everything[:LIMIT // 4]) + render(everything, 3 * 0x110000)
    assert not ESCAPE.search(text)
    assert text.splitlines() == text.split("\n")  # no line break but \n: docutils splits where splitlines does
    assert not any(ord(c) < 32 and c != "\n" or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) < 0xE000 for c in text)
    assert "\ufffe" not in text and "\uffff" not in text


@pytest.mark.parametrize("printed", [
    "A\x1b[31mB\x1b]0;t\x1b\\C\x1b]2;x\x07D\r\nE\x1b(BF\tG",
    "x\x1b]8;;http://a/\x1b\\y\x1b]8;;\x1b\\z",
])
def test_an_escape_sequence_cut_between_two_chunks_is_still_removed(printed):
    whole = shown(printed)
    for cut in range(len(printed) + 1):
        assert RunOutput(OutputLimits(LIMIT, LIMIT)).block().show([printed[:cut], printed[cut:]]) == whole


def test_a_long_output_shows_its_start_and_end_and_says_what_was_left_out():
    printed = "".join(f"line {n}\n" for n in range(10_000))
    text = RunOutput(OutputLimits(1000, 8000)).block().show_text(printed)
    head, marker, tail = text.partition("[output truncated:")
    assert head.startswith("line 0\nline 1\n") and head.endswith("\n")
    assert tail.endswith("line 9998\nline 9999\n")
    shown_lines = [line for line in (head + tail.split("\n", 1)[1]).splitlines() if line.startswith("line ")]
    left_out = len(printed) - sum(len(line) + 1 for line in shown_lines)
    assert f"{left_out:,} characters ({10_000 - len(shown_lines):,} lines) left out here" in tail
    assert "a code block shows at most 1,000 characters of output (TUTORIAL_OUTPUT_LIMIT)]" in tail
    assert len(text) < 1000 + 200


def test_one_endless_line_and_an_endless_redraw_stay_within_the_limit():
    block = RunOutput(OutputLimits(100, 800)).block()
    text = block.show("x" * 1000 for _ in range(1000))
    assert len(text) < 300 and "999,900 characters left out" in text
    bar = RunOutput(OutputLimits(100, 800)).block().show(f"\r{n:>6}/200000" for n in range(1, 200_001))
    assert bar == "200000/200000"  # the last state, however much was printed


def test_the_run_limit_is_shared_by_its_blocks():
    run = RunOutput(OutputLimits(100, 250))
    texts = [run.block().show_text("y" * 9 + "\n") for _ in range(30)]
    assert texts[:25] == ["y" * 9 + "\n"] * 25
    assert "a tutorial shows at most 250 characters of output in all (TUTORIAL_OUTPUT_LIMIT)" in texts[25]
    assert texts[26:] == ["[output truncated: 10 characters (1 line) left out here; a tutorial shows at most 250 "
                          "characters of output in all (TUTORIAL_OUTPUT_LIMIT)]\n"] * 4


def test_a_file_is_read_only_as_far_as_it_was_recorded(tmp_path):
    path = tmp_path / "0.txt"
    path.write_bytes(b"ok\n" + "é".encode() * 10)
    limits = OutputLimits(1000, 8000)
    assert RunOutput(limits).block().show_file(path, 3, 0) == "ok\n"
    assert RunOutput(limits).block().show_file(tmp_path / "missing.txt", 0, 0) == ""
    assert RunOutput(limits).block().show_file(path, 4, 0) == "ok\n\ufffd"  # a character cut in two
    text = RunOutput(limits).block().show_file(path, 3, 17)
    assert text == ("ok\n[output truncated: at least 17 more bytes printed and not recorded; a code block records at "
                    "most 8,000 bytes of output and a tutorial 64,000 bytes (TUTORIAL_OUTPUT_LIMIT)]\n")


def test_limits_sizes_and_what_each_block_may_record():
    assert [parse_size(v) for v in ("262144", "256K", "2m", " 1G ")] == [262144, 262144, 2 << 20, 1 << 30]
    assert [parse_size(v) for v in ("0", "-1", "1.5M", "K", "10 MB", "")] == [None] * 6
    limits = OutputLimits.of_block_limit(100)
    assert (limits.run, limits.recorded_block, limits.recorded_run) == (800, 800, 6400)
    assert limits.recorded_caps([10, 5000, 800, 800, 6000, 0]) == [800, 800, 800, 800, 800, 800]
    assert limits.recorded_caps([800] * 9) == [800] * 8 + [0]
    assert limits.recorded_caps([300, 800, 800, 800, 800, 800, 800, 800, 800]) == [800] * 8 + [500]
