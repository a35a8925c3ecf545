# The two commands the README promises: `make demo` and `make test`. Both install what is missing first.
# `make docs` builds the documentation catalogs; `make bench` runs the benchmark.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT ?= swift

.PHONY: demo test docs bench deps deps-bench clean fuzz fuzz-build fuzz-seeds sanitize sanitize-address sanitize-thread

deps:
	@pkg-config --exists liblz4 2>/dev/null || { \
	  echo "installing liblz4-dev (LZ4 headers for the snapshot compressor)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liblz4-dev pkg-config; }
	@command -v python3 >/dev/null 2>&1 || { \
	  echo "installing python3 (the web service GranaryConnect's tests start on 127.0.0.1)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3; }

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
DOC_TARGETS := GranaryStorage Granary GranaryStack GranaryCoreData GranaryRecords GranarySync GranaryConnect
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

# Coverage-guided fuzzing (Fuzz/): every target runs for FUZZ_SECONDS from its seed corpus in Fuzz/Corpus,
# built in release with libFuzzer and AddressSanitizer in a build directory of its own (Fuzz/run says
# where inputs and crashes are kept and how each target is limited). FUZZ_TARGETS picks some of them.
FUZZ_TARGETS ?= predicate xml model row log snapshot store
FUZZ_SECONDS ?= 60
# lld, not the default gold: gold stops with an internal error on the sanitized objects.
FUZZ_BUILD := -c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DGRANARY_FUZZ -Xswiftc -use-ld=lld

fuzz-build: deps
	@for t in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_BUILD) --product fuzz-$$t || exit 1; done

fuzz: fuzz-build
	Fuzz/run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The test suite under AddressSanitizer, then ThreadSanitizer, each in a build directory of its own.
# ThreadSanitizer runs with GRANARY_TSAN, which swaps Synchronization.Mutex for a pthread lock it can see
# (SanitizerVisibleMutex); reports left that are not races would be suppressed, each with its reason, in
# .sanitizers/tsan.supp. Any report fails the run. The whole suite takes about 9 minutes under each on
# 2 cores; SANITIZE_FILTER runs the suites it matches only (CI runs the threaded suites: see .ci/run).
SANITIZE_FILTER ?=
SANITIZE_TESTS = $(if $(SANITIZE_FILTER),--filter '$(SANITIZE_FILTER)')

sanitize: sanitize-address sanitize-thread

sanitize-address: deps
	$(SWIFT) build --build-tests --scratch-path .build-asan --sanitize=address
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 SWIFT_BACKTRACE=enable=no \
	  $(SWIFT) test --skip-build --scratch-path .build-asan --sanitize=address $(SANITIZE_TESTS)

sanitize-thread: deps
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread -Xswiftc -DGRANARY_TSAN
	TSAN_OPTIONS=suppressions=$(CURDIR)/.sanitizers/tsan.supp:halt_on_error=0:exitcode=66 SWIFT_BACKTRACE=enable=no \
	  $(SWIFT) test --skip-build --scratch-path .build-tsan --sanitize=thread -Xswiftc -DGRANARY_TSAN $(SANITIZE_TESTS)

# Rewrites the seed corpora from real encodings (after a format change).
fuzz-seeds:
	$(SWIFT) run fuzz-seeds

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan .fuzz Benchmarks/.build
