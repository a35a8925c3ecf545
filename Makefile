# The two commands the README promises: `make demo` and `make test`. Both install what is missing first.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT ?= swift

.PHONY: demo test bench deps deps-bench clean

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

deps-bench: deps
	@pkg-config --exists sqlite3 2>/dev/null || { \
	  echo "installing libsqlite3-dev (for the GRDB peer in the benchmark)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libsqlite3-dev; }

bench: deps-bench
	cd Benchmarks && $(SWIFT) run -c release granary-bench

clean:
	rm -rf .build Benchmarks/.build
