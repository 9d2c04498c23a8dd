"""core.runs.signing: a kept or shard run is taken, where the build holds the runs key, only signed with it."""

import json

from tutorials_site.core.runs import seal, signing

KEY = b"a repository secret"


def _run(tmp_path):
    run = tmp_path / "beginner" / "x"
    run.mkdir(parents=True)
    (run / "result.json").write_text("{}")
    (run / seal.STAMP).write_text(json.dumps({"hardware": {"device": "CPU"}, "commit": "abc", "date": "2026-01-01"}))
    return run


def test_a_signed_run_verifies_and_any_edit_of_its_stamp_or_a_re_seal_breaks_it(tmp_path):
    run = _run(tmp_path)
    assert signing.unsigned(KEY, run, "beginner/x").startswith("not signed by a trusted build")
    signing.sign(KEY, run, "beginner/x")
    assert signing.unsigned(KEY, run, "beginner/x") is None
    assert signing.unsigned(b"another key", run, "beginner/x").startswith("its signature does not match")
    assert signing.unsigned(KEY, run, "beginner/y").startswith("its signature does not match")  # moved to another
    stamp = run / seal.STAMP
    stamp.write_text(stamp.read_text().replace("CPU", "NVIDIA H100").replace("abc", "0000000"))
    assert signing.unsigned(KEY, run, "beginner/x").startswith("its signature does not match")


def test_the_signature_and_the_unverified_mark_are_outside_the_seal(tmp_path):
    run = _run(tmp_path)
    files = seal.seal(tmp_path, "beginner/x")
    signing.sign(KEY, run, "beginner/x")
    signing.mark_unverified(run, "REUSE=/kept")
    assert seal.verify(tmp_path, "beginner/x", files) == [] and not signing.verified(run)
