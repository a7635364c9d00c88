# SPDX-License-Identifier: Apache-2.0
# Front end to CMake presets and the scripts in scripts/.
.PHONY: all deps build debug test sanitize fuzz demo bench format clean

all: build

deps:
	./scripts/install-deps

build:
	./scripts/build release

debug:
	./scripts/build debug

test:
	./scripts/test

sanitize:
	./scripts/test --sanitize

fuzz:
	./scripts/build sanitize && ./scripts/fuzz $(or $(SECONDS),60)

demo:
	./scripts/demo

bench: build
	/usr/bin/python3 bench/inspect_vs_numpy.py
	/usr/bin/python3 bench/compare_vs_numpy.py
	build/bench/parity_stats_bench
	/usr/bin/python3 bench/bench_vs_peers.py  # add --babelstream PATH for the stream peer

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf build build-debug build-sanitize
