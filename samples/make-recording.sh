#!/usr/bin/env bash
# Builds samples/recording.mp3 (a simulated "DJ set" recording) from the
# reference excerpts in samples/references/ plus one non-catalog Hedgewars
# track, and writes the ground truth samples/expected-setlist.json.
#
# usage: make-recording.sh [REFERENCES_DIR] [OUTPUT_DIR]
#   defaults: <script dir>/references  and  <script dir>
# needs: ffmpeg (libmp3lame, libvorbis), awk; package hedgewars-data.
# Deterministic: fixed cut points, fixed noise seed, no random choices.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REF="${1:-$HERE/references}"
OUT="${2:-$HERE}"
NONCAT="${NONCAT:-/usr/share/games/hedgewars/Data/Music/City.ogg}"   # not in the catalog
XF=4            # crossfade length (s), acrossfade c1=qsin c2=qsin (equal power)
SNR_DB=20       # music-to-pink-noise ratio (whole-recording RMS)
NOISE_SEED=20240601
CLIP_RMS_DB=-16
SR=44100

# Playlist, in recording order.
#   id (reference stem, or "-" for the non-catalog stretch) | source file |
#   offset into the source (s) | source seconds consumed | speed factor
# Recording duration of a clip = consumed / speed.
# All numbers are chosen so that offset*44100 and consumed*44100 are integers.
PLAY=(
  "wesnoth-knolls|$REF/wesnoth-knolls.ogg|1.5|38|1.0"
  "supertux-chipdisko|$REF/supertux-chipdisko.ogg|1.2|37.44|1.04"
  "-|$NONCAT|60|24|1.0"
  "wesnoth-battle|$REF/wesnoth-battle.ogg|1|38|1.0"
  "wesnoth-the-dangerous-symphony|$REF/wesnoth-the-dangerous-symphony.ogg|1.5|38|1.0"
)
# Not played (must NOT be reported): supertux-forest

TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

# Whole-file RMS / peak in dBFS of float audio (astats does not clip like volumedetect).
astat() { ffmpeg -nostdin -v info -i "$1" -af "astats=measure_perchannel=none:measure_overall=$2" -f null - 2>&1 \
            | sed -n 's/.*level dB: \([-0-9.]*\).*/\1/p' | tail -n1; }
meanvol() { astat "$1" RMS_level; }
maxvol()  { astat "$1" Peak_level; }

# ---- 1. cut, speed-change, level-match and crossfade the music -------------
# Like a DJ, each clip is gain-matched to CLIP_RMS_DB (whole-clip RMS) so the
# constant noise floor gives about SNR_DB in every passage, not only on average.
inputs=(); graph=""; n=${#PLAY[@]}
for i in "${!PLAY[@]}"; do
  IFS='|' read -r id src off cons speed <<<"${PLAY[$i]}"
  [ -f "$src" ] || { echo "missing input $src" >&2; exit 1; }
  inputs+=(-i "$src")
  f="[$i:a]aformat=sample_fmts=fltp:sample_rates=$SR:channel_layouts=stereo,atrim=start=$off:duration=$cons,asetpts=N/SR/TB"
  if [ "$speed" != "1.0" ]; then   # pitch+tempo together (varispeed)
    f="$f,asetrate=$SR*$speed,aresample=$SR,asetpts=N/SR/TB"
  fi
  rms=$(ffmpeg -nostdin -v info -i "$src" -af "$(echo "$f" | sed 's/^\[[0-9]*:a\]//'),astats=measure_perchannel=none:measure_overall=RMS_level" -f null - 2>&1 \
        | sed -n 's/.*level dB: \([-0-9.]*\).*/\1/p' | tail -n1)
  gain=$(awk -v r="$rms" -v t="$CLIP_RMS_DB" 'BEGIN{printf "%.2f", t-r}')
  echo "clip $i ${id}: rms ${rms} dB -> gain ${gain} dB" >&2
  graph+="$f,volume=${gain}dB[c$i];"
done
prev="c0"
for ((i=1;i<n;i++)); do
  graph+="[$prev][c$i]acrossfade=d=$XF:c1=qsin:c2=qsin[x$i];"; prev="x$i"
done
graph="${graph%;}"
ffmpeg -nostdin -v error -y "${inputs[@]}" -filter_complex "$graph" -map "[$prev]" \
  -c:a pcm_f32le "$TMP/music.wav"

DUR=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$TMP/music.wav")

# ---- 2. pink noise at SNR_DB below the music's RMS ---------------------------
ffmpeg -nostdin -v error -y -f lavfi -i "anoisesrc=color=pink:amplitude=0.5:sample_rate=$SR:seed=$NOISE_SEED:duration=$DUR" \
  -af "aformat=sample_fmts=fltp:channel_layouts=stereo" -c:a pcm_f32le "$TMP/noise.wav"
M=$(meanvol "$TMP/music.wav"); N=$(meanvol "$TMP/noise.wav")
NG=$(awk -v m="$M" -v n="$N" -v s="$SNR_DB" 'BEGIN{printf "%.2f", m-s-n}')
ffmpeg -nostdin -v error -y -i "$TMP/music.wav" -i "$TMP/noise.wav" -filter_complex \
  "[1:a]volume=${NG}dB[n];[0:a][n]amix=inputs=2:duration=first:normalize=0" \
  -c:a pcm_f32le "$TMP/mix.wav"

# ---- 3. peak-normalise to -1 dBFS (same gain for music and noise) and encode -
PK=$(maxvol "$TMP/mix.wav"); G=$(awk -v p="$PK" 'BEGIN{printf "%.2f", -1-p}')
ffmpeg -nostdin -v error -y -i "$TMP/mix.wav" -af "volume=${G}dB" -map_metadata -1 \
  -ar $SR -ac 2 -c:a libmp3lame -b:a 128k \
  -metadata title="soundmark test recording" -metadata artist="soundmark samples" \
  "$OUT/recording.mp3"
echo "music mean ${M} dB, noise gain ${NG} dB (SNR ${SNR_DB} dB), output gain ${G} dB, duration ${DUR}s" >&2

# ---- 4. ground truth ---------------------------------------------------------
# Clip i starts in the output at T_i = sum_{j<i}(len_j - XF), len = consumed/speed.
# Boundaries sit at crossfade midpoints: start_i = T_i + XF/2 (0 for the first),
# end_i = T_i + len_i - XF/2 (len_i for the last).  referenceStart = offset +
# speed * (start_i - T_i).  The non-catalog clip ("-") is left out.
printf '%s\n' "${PLAY[@]}" | awk -F'|' -v xf="$XF" '
  function num(x){ s=sprintf("%.4f", x); sub(/0+$/,"",s); sub(/\.$/,".0",s); return s }
  { id[NR]=$1; off[NR]=$3; spd[NR]=$5; len[NR]=$4/$5; n=NR }
  END {
    t=0; out=""
    for (i=1;i<=n;i++) {
      st = (i==1) ? t : t+xf/2
      en = (i==n) ? t+len[i] : t+len[i]-xf/2
      if (id[i] != "-") {
        seg = sprintf("{\"start\":%s,\"end\":%s,\"id\":\"%s\",\"referenceStart\":%s,\"speed\":%s}",
                      num(st), num(en), id[i], num(off[i]+spd[i]*(st-t)), num(spd[i]))
        out = out (out=="" ? "" : ",\n    ") seg
      }
      t += len[i]-xf
    }
    printf "{\"recording\":\"recording.mp3\",\"segments\":[\n    %s\n]}\n", out
  }' > "$OUT/expected-setlist.json"
echo "wrote $OUT/recording.mp3 and $OUT/expected-setlist.json" >&2
