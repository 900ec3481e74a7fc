#!/usr/bin/env bash
# Hostile-input run (issue 40): every command of the built soundmark over malformed media,
# subtitle, event, signature and option inputs, fixed ones and generated mutations of valid
# files, each under `timeout`. Fails (exit 1) on a signal exit (rc >= 128), a run over
# HOSTILE_HANG_SECONDS (a hang), a catalog whose content (`catalog list` and `catalog export`,
# read back with `signature show`; not the file's bytes) changed where it must not (read
# commands, refused writes), or an out-of-range numeric option that was accepted. Prints the
# counts: runs, clean refusals, results (exit 0, or 1 "no match" with nothing on stderr), unclean
# refusals (noted, not failed), signal exits, hangs, and the list of failures.
#
#   scripts/hostile-inputs.sh            # with .build/release/soundmark (make hostile builds it)
#   SOUNDMARK=path/to/soundmark HOSTILE_MUTATIONS=3 scripts/hostile-inputs.sh
#
# Bounded: about 700 runs, a few minutes with the release build. Needs sox, ffmpeg and perl.
# Not part of `make test`.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SM=${SOUNDMARK:-$ROOT/.build/release/soundmark}
HANG=${HOSTILE_HANG_SECONDS:-30}
MUTATIONS=${HOSTILE_MUTATIONS:-5}
SEED=${HOSTILE_SEED:-40}
[ -x "$SM" ] || { echo "hostile-inputs: no soundmark binary at $SM (run 'swift build -c release' or set SOUNDMARK)" >&2; exit 2; }
for tool in sox ffmpeg perl timeout; do
  command -v $tool >/dev/null || { echo "hostile-inputs: $tool is needed" >&2; exit 2; }
done
SM=$(cd "$(dirname "$SM")" && pwd)/$(basename "$SM")
W=$(mktemp -d "${TMPDIR:-/tmp}/soundmark-hostile.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
mkdir -p media subs events sigs scratch

runs=0 clean=0 accepted=0 signals=0 hangs=0 unclean=0 changed=0 outofrange=0
failures=()
notes=()

# --- the runner --------------------------------------------------------------------------------
# run [--expect-refusal] LABEL ARGS...: runs soundmark ARGS under timeout, counts the outcome.
# Sets RC. A refusal is clean when stderr's last line starts "soundmark: " and no line is a
# crash report or stack trace.
RC=0
run() {
  local expect=0
  if [ "$1" = --expect-refusal ]; then expect=1; shift; fi
  local label=$1; shift
  local start end elapsed
  start=$(date +%s%N)
  timeout -k 5 "$HANG" "$SM" "$@" >"$W/out" 2>"$W/err" </dev/null
  RC=$?
  end=$(date +%s%N)
  elapsed=$(( (end - start) / 1000000 ))
  runs=$((runs + 1))
  local cmd="soundmark $*"
  if [ $RC -eq 124 ] || { [ $RC -eq 137 ] && [ $elapsed -ge $((HANG * 1000)) ]; }; then
    hangs=$((hangs + 1)); failures+=("hang (> ${HANG} s): [$label] $cmd")
  elif [ $RC -ge 128 ]; then
    signals=$((signals + 1)); failures+=("signal exit $RC: [$label] $cmd: $(tail -c 300 "$W/err" | tr '\n' ' ')")
  elif [ $RC -eq 0 ] || { [ $RC -eq 1 ] && [ ! -s "$W/err" ]; }; then
    # A result: exit 0, or 1 with nothing on stderr ("no match", by design).
    accepted=$((accepted + 1))
    if [ $expect = 1 ]; then
      outofrange=$((outofrange + 1)); failures+=("accepted, expected a refusal: [$label] $cmd")
    fi
  else
    local last
    last=$(tail -n 1 "$W/err")
    if [[ "$last" == "soundmark: "* ]] && ! grep -qiE 'fatal error|stack dump|backtrace|segmentation|assertion|^#[0-9]+ +0x|^[0-9]+ +0x' "$W/err"; then
      clean=$((clean + 1))
    else
      unclean=$((unclean + 1))
      notes+=("unclean refusal rc $RC: [$label] $cmd: $(head -c 200 "$W/err" | tr '\n' ' ')")
    fi
  fi
}

# The content of a catalog: its list (JSON) and its export read back.
snapshot() {
  "$SM" catalog list --catalog "$1" --format json 2>&1
  rm -f "$W/export.shazamcatalog"
  "$SM" catalog export --catalog "$1" --format shazamcatalog -o "$W/export.shazamcatalog" >/dev/null 2>&1
  "$SM" signature show "$W/export.shazamcatalog" 2>&1
}

# The read-only catalog C must hold what it held at the start.
check_catalog() {
  snapshot "$W/c.db" >"$W/c.now"
  if ! cmp -s "$W/c.start" "$W/c.now"; then
    changed=$((changed + 1)); failures+=("catalog content changed after: $1")
    cp "$W/c.now" "$W/c.start"
  fi
}

# A write to the scratch catalog S: refused runs must leave its content as it was; accepted
# runs may change it, and S is then restored.
write_run() {
  local label=$1; shift
  run "$label" "$@"
  if [ $RC -ne 0 ] && [ $RC -lt 128 ]; then
    snapshot "$W/s.db" >"$W/s.now"
    if ! cmp -s "$W/s.start" "$W/s.now"; then
      changed=$((changed + 1)); failures+=("refused write changed the catalog: [$label] soundmark $*")
    fi
  fi
  rm -f "$W/s.db" "$W/s.db-wal" "$W/s.db-shm" "$W/s.db.index"
  cp "$W/s.pristine" "$W/s.db"
}

# --- valid material -----------------------------------------------------------------------------
sox -n -r 22050 -c 2 media/ref1.wav synth 8 sine 300-1800 sine 700-250 tremolo 3 60 2>/dev/null
sox -n -r 22050 -c 1 media/ref2.wav synth 8 sine 1200-200 square 110 vol 0.3 2>/dev/null
sox media/ref1.wav media/clip.wav trim 1 5 2>/dev/null
for ext in mp3 flac ogg m4a mkv; do ffmpeg -nostdin -v error -y -i media/clip.wav "media/clip.$ext"; done
"$SM" catalog add --catalog c.db media/ref1.wav media/ref2.wav >/dev/null 2>&1 || { echo "hostile-inputs: cannot build the catalog" >&2; exit 2; }
printf '1\n00:00:01,000 --> 00:00:02,500\nhello\n\n2\n00:00:03,000 --> 00:00:04,000\n<i>world</i>\n\n' >subs/valid.srt
printf 'WEBVTT\n\n00:00:01.000 --> 00:00:02.500 align:start\n<v Bob>hello\n\n00:00:03.000 --> 00:00:04.000\nworld\n\n' >subs/valid.vtt
printf '[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:02.50,Default,,0,0,0,,{\\an8}hello\n' >subs/valid.ass
"$SM" catalog annotate --catalog c.db ref1 subs/valid.srt >/dev/null 2>&1
"$SM" monitor --catalog c.db --format jsonl media/clip.wav >events/valid.jsonl 2>/dev/null
"$SM" signature -o sigs/valid.smsig media/clip.wav 2>/dev/null
"$SM" signature --format shazam -o sigs/valid.shazamsignature media/clip.wav 2>/dev/null
"$SM" catalog export --catalog c.db --format shazamcatalog -o sigs/valid.shazamcatalog >/dev/null 2>&1
cp c.db s.pristine
cp s.pristine s.db
snapshot c.db >c.start
snapshot s.db >s.start

# --- generated mutations ------------------------------------------------------------------------
# mutate SRC DST KIND SEED: flip (0.5 % of bytes), head (bytes 0-63 flipped), cut (truncated at a
# random point), zero (a block zeroed), dup (a block repeated), junk (random bytes inserted).
mutate() {
  perl -e '
    my ($src, $dst, $kind, $seed) = @ARGV; srand($seed);
    open(my $in, "<:raw", $src) or die; local $/; my $d = <$in>; close $in;
    my $n = length $d; $n > 0 or die;
    if ($kind eq "flip") { for (1 .. 1 + int($n / 200)) { my $i = int(rand $n); substr($d, $i, 1) = chr(ord(substr($d, $i, 1)) ^ (1 << int(rand 8))) } }
    elsif ($kind eq "head") { for (1 .. 8) { my $i = int(rand($n < 64 ? $n : 64)); substr($d, $i, 1) = chr(int(rand 256)) } }
    elsif ($kind eq "cut") { $d = substr($d, 0, int(rand $n)) }
    elsif ($kind eq "zero") { my $i = int(rand $n); my $l = 1 + int(rand 4096); substr($d, $i, $l) = "\0" x length(substr($d, $i, $l)) }
    elsif ($kind eq "dup") { my $i = int(rand $n); my $l = 1 + int(rand 4096); my $b = substr($d, $i, $l); substr($d, $i, 0) = $b x 3 }
    elsif ($kind eq "junk") { my $i = int(rand $n); substr($d, $i, 0) = join("", map { chr(int(rand 256)) } 1 .. 1 + int(rand 2048)) }
    open(my $out, ">:raw", $dst) or die; print $out $d; close $out;
  ' "$@"
}
KINDS=(flip head cut zero dup junk)
mutations_of() {  # mutations_of SRC DIR PREFIX EXT
  local k
  for ((k = 0; k < MUTATIONS; k++)); do
    local kind=${KINDS[$(( (k + SEED) % ${#KINDS[@]} ))]}
    mutate "$1" "$2/$3-$kind-$k.$4" "$kind" $((SEED * 1000 + k))
  done
}
for ext in wav mp3 flac ogg m4a mkv; do mutations_of "media/clip.$ext" media "mut-$ext" "$ext"; done
for ext in srt vtt ass; do mutations_of "subs/valid.$ext" subs mut "$ext"; done
mutations_of events/valid.jsonl events mut jsonl
for ext in smsig shazamsignature shazamcatalog; do mutations_of "sigs/valid.$ext" sigs mut "$ext"; done

# --- fixed malformed inputs ---------------------------------------------------------------------
: >media/empty.wav
echo "this is a text file, not FLAC" >media/text.flac
perl -e 'srand(shift); print join("", map { chr(int(rand 256)) } 1 .. 65536)' $SEED >media/garbage.mp3
head -c 44 media/clip.wav >media/header-only.wav
head -c $(( $(stat -c %s media/clip.mp3) / 2 )) media/clip.mp3 >media/truncated.mp3
sox -n -r 8000 -c 1 media/silent.wav trim 0 3 2>/dev/null
sox -n -r 8000 -c 1 media/tiny.wav synth 0.1 sine 440 2>/dev/null
sox -n -r 8000 -c 1 -b 8 -e unsigned media/u8.wav synth 2 sine 440 2>/dev/null
# patch FILE OFFSET-IN-fmt PACK VALUE: a field of the WAV "fmt " chunk
patch_fmt() {
  perl -e 'my ($f, $off, $pack, $v, $out) = @ARGV; open(my $in, "<:raw", $f) or die; local $/; my $d = <$in>;
    my $i = index($d, "fmt "); substr($d, $i + 8 + $off, length(pack($pack, 0))) = pack($pack, $v);
    open(my $o, ">:raw", $out) or die; print $o $d' "$@"
}
patch_fmt media/clip.wav 4 V 1 media/rate-1hz.wav
patch_fmt media/clip.wav 4 V 4000000000 media/rate-huge.wav
patch_fmt media/clip.wav 2 v 0 media/channels-0.wav
patch_fmt media/clip.wav 2 v 65535 media/channels-65535.wav
patch_fmt media/u8.wav 14 v 7 media/bits-7.wav
patch_fmt media/clip.wav 14 v 0 media/bits-0.wav
patch_fmt media/clip.wav 0 v 0xFFFF media/format-ffff.wav
perl -e 'open(my $in, "<:raw", shift) or die; local $/; my $d = <$in>; my $i = index($d, "data");
  substr($d, $i + 4, 4) = pack("V", 0xFFFFFFF0); print $d' media/clip.wav >media/data-huge.wav
ln -s /dev/null media/devnull.wav
ln -s "$W/nowhere.wav" media/dangling.wav
mkdir -p media/folder.wav
mkfifo media/fifo.wav
MEDIA=(media/*)
MEDIA+=(media/missing.wav)

: >subs/empty.srt
perl -e 'srand(shift); print join("", map { chr(int(rand 256)) } 1 .. 4096)' $SEED >subs/garbage.srt
printf '1\n-00:00:05,000 --> -00:00:01,000\nbefore zero\n\n2\n00:00:01,000 --> 00:00:02,000\nok\n\n' >subs/negative.srt
printf '1\n00:00:03,000 --> 00:00:01,000\nbackwards\n\n' >subs/backwards.srt
printf '1\n99999999:00:00,000 --> 99999999:00:01,000\nfar\n\n' >subs/huge-time.srt
printf '[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\pos(1,2) unclosed\n' >subs/unclosed.ass
printf 'NOT A VTT\n\n00:00:01.000 --> 00:00:02.000\nx\n' >subs/bad-header.vtt
printf '[{"start": "nan", "end": 1e999, "text": 5}]' >subs/bad.json
perl -e 'print "[" x 200000' >subs/deep.json
printf '\xef\xbb\xbf' >subs/bom-only.srt
printf '\xff\xfe1\x00\n' >subs/utf16-odd.srt
printf '1\n00:00:01,000 --> 00:00:02,000\n\xf9\xec\xe5\xed\n\n' >subs/cp1255.srt
SUBS=(subs/*)

: >events/empty.jsonl
cp subs/garbage.srt events/garbage.jsonl
printf '{"event":"start","time":-5,"reference":{"id":"ref1"}}\n{"event":"end","time":1e308}\n' >events/odd-times.jsonl
printf '{"event":"start","time":NaN}\n{"time":"x"}\n[]\n"s"\n' >events/bad-values.jsonl
cp subs/deep.json events/deep.jsonl
EVENTS=(events/*)

: >sigs/empty.smsig
cp media/garbage.mp3 sigs/garbage.smsig
cp media/garbage.mp3 sigs/garbage.shazamsignature
# A Shazam signature whose header records 0 samples, its CRC-32 made right.
perl -MCompress::Zlib -e 'open(my $in, "<:raw", shift) or die; local $/; my $d = <$in>;
  my $s = unpack("V", substr($d, 8, 4)); substr($d, $s + 40, 4) = pack("V", 0);
  substr($d, $s + 4, 4) = pack("V", crc32(substr($d, $s + 8))); print $d' sigs/valid.shazamsignature >sigs/zero-samples.shazamsignature
echo 'data:audio/vnd.shazam.sig;base64,!!!!' >sigs/bad-uri.shazamsignature
cp media/garbage.mp3 sigs/garbage.shazamcatalog
SIGS=(sigs/*)

# --- media: every command that reads media ------------------------------------------------------
for m in "${MEDIA[@]}"; do
  # The FIFO and /dev/null wait or end by design: once per command is enough (timing bounded).
  run "media" identify --catalog c.db "$m"
  run "media" identify --catalog c.db --format json "$m"
  run "media" scan --catalog c.db "$m"
  run "media" scan --catalog c.db --format srt "$m"
  run "media" monitor --catalog c.db --open-timeout 5 "$m"
  run "media" marker detect "$m"
  run "media" signature -o "$W/out.smsig" "$m"
  run "media" signature --format shazam -o "$W/out.shazamsignature" "$m"
  write_run "media" catalog add --catalog s.db "$m"
done
check_catalog "media commands"
# An unbounded stream of garbage is given up (issue 40 item 6).
ln -s /dev/urandom "$W/urandom.mp3"
run "endless garbage" identify --catalog c.db "$W/urandom.mp3"
run "endless garbage" signature -o "$W/out.smsig" "$W/urandom.mp3"
# stdin: the clip's mutations piped in.
for m in media/mut-mp3-* media/mut-ogg-*; do
  timeout -k 5 "$HANG" "$SM" identify --catalog c.db - <"$m" >"$W/out" 2>"$W/err"; RC=$?
  runs=$((runs + 1))
  if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then hangs=$((hangs + 1)); failures+=("hang: identify - < $m")
  elif [ $RC -ge 128 ]; then signals=$((signals + 1)); failures+=("signal exit $RC: identify - < $m")
  elif [ $RC -eq 0 ]; then accepted=$((accepted + 1)); else clean=$((clean + 1)); fi
done
check_catalog "stdin"

# --- subtitles ----------------------------------------------------------------------------------
for s in "${SUBS[@]}"; do
  write_run "subtitles" catalog annotate --catalog s.db ref1 "$s"
  write_run "subtitles" catalog add --catalog s.db --id ref1 --annotations "$s" media/ref1.wav
done

# --- events -------------------------------------------------------------------------------------
for e in "${EVENTS[@]}"; do
  for f in json csv srt vtt; do run "events" timeline merge --format $f "$e"; done
  rm -f "$W/lib.db"
  run "events" library import --library "$W/lib.db" "$e"
  run "events" library list --library "$W/lib.db"
  run "events" report airings --library "$W/lib.db" --format csv
  run "events" report html --library "$W/lib.db" --output "$W/r.html"
done

# --- signatures ---------------------------------------------------------------------------------
for g in "${SIGS[@]}"; do
  run "signatures" signature show "$g"
  run "signatures" signature show --format json "$g"
  run "signatures" identify --catalog c.db "$g"
  write_run "signatures" catalog import --catalog s.db "$g"
done
check_catalog "signature commands"

# --- catalogs that are not catalogs -------------------------------------------------------------
for bad in media/garbage.mp3 media/empty.wav media/folder.wav subs/deep.json; do
  cp -r "$bad" "$W/bad-catalog" 2>/dev/null || true
  run "catalog file" identify --catalog "$W/bad-catalog" media/clip.wav
  run "catalog file" catalog list --catalog "$W/bad-catalog"
  run "catalog file" catalog add --catalog "$W/bad-catalog" media/clip.wav
  run "catalog file" catalog upgrade --catalog "$W/bad-catalog"
  rm -rf "$W/bad-catalog"
done
for k in 0 1 2; do
  mutate c.db "$W/mut.db" "${KINDS[$k]}" $((SEED + k))
  run "catalog mutation" identify --catalog "$W/mut.db" media/clip.wav
  run "catalog mutation" catalog list --catalog "$W/mut.db"
  rm -f "$W/mut.db"*
done

# --- numeric options: every one found in --help, at and past its range --------------------------
# Base arguments that let a command reach its option checks.
base_args() {
  case "$1" in
    identify|scan|monitor) echo "--catalog c.db media/clip.wav" ;;
    "catalog add") echo "--catalog s.db media/clip.wav" ;;
    "marker embed") echo "--payload 1 media/clip.wav $W/marked.wav" ;;
    "marker detect") echo "media/clip.wav" ;;
    signature) echo "-o $W/o.smsig media/clip.wav" ;;
    worker|"queue add"|"queue status"|"queue results") echo "--catalog postgresql://nobody@127.0.0.1:1/none" ;;
    library*|report*) echo "--library $W/lib.db" ;;
    *) echo "" ;;
  esac
}
commands=$("$SM" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z]\+\( [a-z]\+\)\?\)  .*/\1/p' | sed 's/ *$//')
options_tried=0
while read -r command; do
  [ -n "$command" ] || continue
  # shellcheck disable=SC2086
  while IFS='|' read -r option lo hi; do
    [ -n "$option" ] || continue
    options_tried=$((options_tried + 1))
    base=$(base_args "$command")
    [ "$option" = payload ] && base="media/clip.wav $W/marked.wav"
    above=$(perl -e 'my ($h) = @ARGV; print $h =~ /\./ ? $h + 0.5 : $h + 1' -- "$hi")
    below=$(perl -e 'my ($l) = @ARGV; print $l =~ /\./ ? $l - 0.5 : $l - 1' -- "$lo")
    far=$(perl -e 'printf "%.0f", $ARGV[0] * 1000 + 1000' -- "$hi")
    for v in "$lo" "$hi"; do
      if [ "$command" = "catalog add" ]; then write_run "option" $command $base --$option "$v"
      else run "option" $command $base --$option "$v"; fi
    done
    for v in "$below" "$above" "$far" 1e300 -1e300 nan inf -inf "" abc 1e 0x; do
      if [ "$command" = "catalog add" ]; then write_run "option" $command $base --$option "$v"
      else
        case "$v" in ""|abc|1e|0x) run "option" $command $base --$option "$v" ;;
                     *) run --expect-refusal "option" $command $base --$option "$v" ;; esac
      fi
    done
  done < <("$SM" $command --help 2>/dev/null | perl -ne 'if (/^\s+--([a-z][a-z-]*) [A-Z][A-Z_]*\s.*?(?<![\w.-])(-?\d[\d.]*(?:e-?\d+)?)…(-?\d[\d.]*(?:e-?\d+)?)(?![\w])/) { print "$1|$2|$3\n" }')
done <<<"$commands"
check_catalog "options"

# --- report -------------------------------------------------------------------------------------
echo "hostile-inputs: $runs runs ($options_tried numeric options at and past their ranges): $clean clean refusals, $accepted results (exit 0, or 1 'no match'), $unclean unclean refusals, $signals signal exits, $hangs hangs (> ${HANG} s), $changed catalog changes, $outofrange out-of-range values accepted"
for n in "${notes[@]+"${notes[@]}"}"; do echo "  note: $n"; done
if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "  FAIL: $f"; done
  exit 1
fi
exit 0
