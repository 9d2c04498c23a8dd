"""sphinxext.search: Korean, Japanese and Chinese split into overlapping pairs, the same way by the index
(Python) and by the query (the page's JavaScript)."""

import json
import subprocess

import pytest

from tutorials_site.sphinxext import search

SAMPLES = {
    "데이터 병렬": ["데이", "이터", "병렬"],
    "DataParallel で学ぶ": ["DataParallel", "で学", "学ぶ"],
    "数据并行": ["数据", "据并", "并行"],
    "torch张量, nn.Module!": ["torch", "张量", "nn", "Module"],
    "한 GPU": ["한", "GPU"],  # a single character stays a word
    "snake_case 2024": ["snake_case", "2024"],
}


@pytest.mark.parametrize("text", SAMPLES)
def test_cjk_runs_become_overlapping_pairs_and_other_words_stay_whole(text):
    assert search.split(text) == SAMPLES[text]


def test_the_query_is_split_in_the_browser_as_the_index_was(tmp_path):
    script = tmp_path / "split.js"
    script.write_text(search.JS_SPLITTER + f"console.log(JSON.stringify({json.dumps(list(SAMPLES))}.map(splitQuery)));\n",
                      encoding="utf-8")
    result = subprocess.run(["node", str(script)], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == [search.split(text) for text in SAMPLES]


def test_setup_replaces_the_search_of_the_three_languages(fake_app):
    languages = {language.lang: language for language in fake_app().search_languages}
    assert sorted(languages) == ["ja", "ko", "zh"]
    korean = languages["ko"]({})
    assert korean.split("데이터 병렬") == ["데이", "이터", "병렬"]
    assert korean.stem("DataParallel") == "dataparallel"  # the index and the query compare lowercased words
    assert [word for word in ["병렬", "2024", ""] if korean.word_filter(word)] == ["병렬"]
    assert "splitQuery" in korean.js_splitter_code and "stemWord" in korean.js_stemmer_code
