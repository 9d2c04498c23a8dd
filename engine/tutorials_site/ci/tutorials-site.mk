# The engine's commands as make targets (written by `tutorials-site init`): add `include tutorials-site.mk` to the
# site's Makefile, or call `tutorials-site <command>` yourself. Every setting of `tutorials-site <command> --help`
# works as a make variable: `make html LANGUAGES=en` runs `LANGUAGES=en tutorials-site html`.
TUTORIALS_SITE ?= tutorials-site
export LANGUAGES VERSION STRICT BUILDDIR PAGES SHARD SHARDS NEEDS CLASS_SHARDS REUSE RETRY_FAILED TUTORIALS PORT FROM \
  TUTORIAL_TIMEOUT TUTORIAL_OUTPUT_LIMIT SANDBOX VERBOSE PROGRESS_INTERVAL OVERWRITE CHROMIUM TORCH_CPU_WHEELS

.PHONY: html html-noplot serve check ci-build assemble docs publish update-po import-translation i18n-status lint audit lock

html html-noplot serve check ci-build assemble docs publish update-po import-translation i18n-status lint audit lock:
	$(TUTORIALS_SITE) $@
