"""The run protocol: the version of how the engine runs a tutorial and of what its runner records.

A run's environment fingerprint (core.runs.fingerprint) holds this version, not the bytes of the engine's code:
an engine release that keeps it (a docstring edited, the build or the extension changed, a bug fixed outside the
runner) finds every kept run current and executes nothing again; a release that changes it executes every tutorial
of every site once more, on GPUs too, so it is changed only when a run would now differ:

- what the runner records of a run (its record's fields and format, the output files, their limits);
- how a tutorial runs (its process, sandbox, environment, working folder, start-up hooks, how its code blocks are
  split and executed, what is reset between them).

A change of the protocol is written in the engine's CHANGELOG.md, with what it changes for runs. The guard is
tests/test_protocol.py: fixture tutorials run through the runner and their records must be byte for byte those kept
for this version in tests/fixtures/protocol/ (timings and machine-dependent figures masked); a runner change that
alters a record fails it until the version is raised and the records kept again.
"""

PROTOCOL = "2"
