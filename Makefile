# soundmark — build, demo and tests. `make demo` and `make test` install what they need first.
SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_PACKAGES := pkg-config libavformat-dev libavcodec-dev libavutil-dev libswresample-dev \
                libfftw3-dev libsqlite3-dev libvorbis-dev zlib1g-dev ffmpeg sox cuetools shntool \
                postgresql libpq-dev espeak-ng python3-jsonschema
SOUNDMARK := .build/release/soundmark
DEMO_CATALOG := .build/demo/catalog.db

.PHONY: deps build demo test browser-check fuzz fuzz-smoke hostile clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v swift >/dev/null || { echo "swift not found: install the Swift toolchain (6.x) and put it on PATH" >&2; exit 1; }

build: deps
	swift build -c release

demo: build
	@rm -f $(DEMO_CATALOG) $(DEMO_CATALOG)-wal $(DEMO_CATALOG)-shm $(DEMO_CATALOG).index; mkdir -p $(dir $(DEMO_CATALOG))
	$(SOUNDMARK) catalog add --catalog $(DEMO_CATALOG) samples/references
	$(SOUNDMARK) catalog annotate --catalog $(DEMO_CATALOG) wesnoth-knolls samples/wesnoth-knolls.srt
	$(SOUNDMARK) catalog list --catalog $(DEMO_CATALOG)
	$(SOUNDMARK) identify --catalog $(DEMO_CATALOG) samples/clip.mp3
	$(SOUNDMARK) scan --catalog $(DEMO_CATALOG) samples/recording.mp3
	$(SOUNDMARK) scan --catalog $(DEMO_CATALOG) --format srt --cues annotations samples/recording.mp3

# scripts/folder-deps.sh fails on a cycle among the folders of Sources/Soundmark (seconds).
test: deps
	scripts/folder-deps.sh
	swift build -c release
	swift test

# Our WebVTT in a real browser's <track> element and our HTML reports (no console errors, one block
# and plot line per airing, screenshots in .build/browser-check) in headless Chromium; CI runs it.
browser-check: build
	@dpkg-query -W -f='$${Status}\n' chromium 2>/dev/null | grep -q 'install ok installed' || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }
	scripts/browser-check-scan.sh

# libFuzzer targets (Fuzz/, built with -sanitize=fuzzer,address) for every parser of untrusted
# input, each run FUZZ_SECONDS seconds from the seeds in Fuzz/corpus/; see scripts/fuzz.sh.
FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

# The short run CI does: each target for 10 s.
fuzz-smoke: deps
	scripts/fuzz.sh 10

# Every command over malformed media, subtitle, event, signature and option inputs (fixed and
# generated mutations, every numeric option of --help at and past its range) under timeout:
# fails on a signal exit, a hang over 30 s or a changed catalog; prints the counts. Not in `make test`.
hostile: build
	scripts/hostile-inputs.sh

clean:
	rm -rf .build
