# The two commands the README promises: `make demo` and `make test`. Both install what is missing first.
# `make docs` builds the documentation catalogs; `make bench` runs the benchmark.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT ?= swift

.PHONY: demo test docs bench deps deps-bench clean

deps:
	@pkg-config --exists liblz4 2>/dev/null || { \
	  echo "installing liblz4-dev (LZ4 headers for the snapshot compressor)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liblz4-dev pkg-config; }

demo: deps
	$(SWIFT) build -c release --product granary
	$(SWIFT) run -c release --skip-build granary demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Every library's DocC catalog (Sources/<Module>/Documentation.docc), with warnings as errors, so that a
# renamed symbol or a broken link fails here; then each landing page is checked to curate every symbol and
# article itself (DocC's automatic topic groups are marked "generated" in the archive). The archives go
# to .build/plugins/Swift-DocC/outputs/<Module>.doccarchive. A new library is added to DOC_TARGETS
# (DocumentationTests checks that every library product is listed).
DOC_TARGETS := GranaryStorage Granary GranaryStack
DOC_OUTPUTS := .build/plugins/Swift-DocC/outputs

docs: deps
	$(SWIFT) package --disable-sandbox generate-documentation $(foreach t,$(DOC_TARGETS),--target $(t)) --warnings-as-errors
	@for t in $(DOC_TARGETS); do \
	  page=$(DOC_OUTPUTS)/$$t.doccarchive/data/documentation/$$(echo $$t | tr A-Z a-z).json; \
	  if [ ! -f $$page ]; then echo "docs: $$page is missing"; exit 1; fi; \
	  if grep -q '"generated":true' $$page; then \
	    echo "docs: Sources/$$t/Documentation.docc/$$t.md leaves symbols or articles to DocC's automatic groups; list them under ## Topics"; \
	    exit 1; fi; \
	done
	@echo "docs: $(DOC_TARGETS) built in $(DOC_OUTPUTS)"

deps-bench: deps
	@pkg-config --exists sqlite3 2>/dev/null || { \
	  echo "installing libsqlite3-dev (for the GRDB peer in the benchmark)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libsqlite3-dev; }

bench: deps-bench
	cd Benchmarks && $(SWIFT) run -c release granary-bench

clean:
	rm -rf .build Benchmarks/.build
