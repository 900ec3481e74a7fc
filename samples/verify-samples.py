#!/usr/bin/env python3
"""Independent check of expected-setlist.json / expected-clip.json.

For every segment, 5 s chunks (early, middle, late) are cut from the decoded
recording and located by normalised cross-correlation over the WHOLE decoded
reference (after applying the segment's speed factor to the reference).  The
found reference position is compared with the truth
    ref(t) = referenceStart + speed * (t - start).
Also checks that the non-catalog stretch and the unused reference match
nothing well, and locates clip.mp3.  Needs python3, numpy, ffmpeg.
"""
import json, os, subprocess, sys
import numpy as np

SR = 44100
HERE = os.path.dirname(os.path.abspath(__file__))

def decode(path, speed=1.0):
    af = ["-af", f"asetrate={SR}*{speed},aresample={SR}"] if speed != 1.0 else []
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, *af, "-ac", "1", "-ar", str(SR),
                          "-f", "f32le", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.float32).astype(np.float64)

def locate(chunk, hay):
    """best lag (samples) and normalised correlation of chunk inside hay"""
    n, m = len(chunk), len(hay)
    size = 1 << int(np.ceil(np.log2(n + m)))
    num = np.fft.irfft(np.fft.rfft(hay, size) * np.conj(np.fft.rfft(chunk, size)), size)[: m - n + 1]
    c2 = np.concatenate([[0.0], np.cumsum(hay ** 2)])
    den = np.sqrt((c2[n:] - c2[:-n]) * np.sum(chunk ** 2)) + 1e-12
    ncc = num / den
    k = int(np.argmax(ncc))
    return k, float(ncc[k])

def main():
    setlist = json.load(open(os.path.join(HERE, "expected-setlist.json")))
    rec = decode(os.path.join(HERE, setlist["recording"]))
    print(f"recording: {len(rec)/SR:.3f} s decoded")
    refs = {f[:-4]: os.path.join(HERE, "references", f)
            for f in sorted(os.listdir(os.path.join(HERE, "references")))}
    cache = {}
    def ref(id_, speed):
        if (id_, speed) not in cache:
            cache[(id_, speed)] = decode(refs[id_], speed)
        return cache[(id_, speed)]
    worst = 0.0
    ok = True
    L = 5.0
    for seg in setlist["segments"]:
        s, e, sp, r0 = seg["start"], seg["end"], seg["speed"], seg["referenceStart"]
        hay = ref(seg["id"], sp)
        for label, t in (("early", s + 2.5), ("middle", (s + e) / 2 - L / 2), ("late", e - 2.5 - L)):
            chunk = rec[int(round(t * SR)): int(round((t + L) * SR))]
            k, c = locate(chunk, hay)
            found = k / SR * sp                      # position in un-sped reference seconds
            expect = r0 + sp * (t - s)
            err = (found - expect) * 1000
            worst = max(worst, abs(err))
            good = abs(err) <= 50 and c > 0.5
            ok &= good
            print(f"  {seg['id']:32s} x{sp:<4} rec {t:7.2f}s {label:6s} -> ref {found:7.3f}s "
                  f"(expected {expect:7.3f}s, err {err:+6.1f} ms, ncc {c:.3f}) {'OK' if good else 'FAIL'}")
    print(f"worst segment offset error: {worst:.1f} ms")

    # negative controls: non-catalog stretch and every chunk vs. the unused reference
    used = {s["id"] for s in setlist["segments"]}
    segs = sorted(setlist["segments"], key=lambda s: s["start"])
    gaps = [(a["end"], b["start"]) for a, b in zip(segs, segs[1:]) if b["start"] - a["end"] > 6]
    for g0, g1 in gaps:
        t = (g0 + g1) / 2 - L / 2
        chunk = rec[int(t * SR): int((t + L) * SR)]
        best = max((locate(chunk, ref(i, sp))[1], i, sp) for i in refs for sp in (1.0, 1.04))
        print(f"  non-catalog gap {g0}-{g1}s: best ncc vs any reference {best[0]:.3f} ({best[1]} x{best[2]})")
        ok &= best[0] < 0.3
    for unused in sorted(set(refs) - used):
        best = 0.0
        for t in np.arange(0, len(rec) / SR - L, 2.5):
            chunk = rec[int(t * SR): int((t + L) * SR)]
            best = max(best, locate(chunk, ref(unused, 1.0))[1])
        print(f"  unused reference {unused}: best ncc over whole recording {best:.3f}")
        ok &= best < 0.3

    clip = json.load(open(os.path.join(HERE, "expected-clip.json")))
    c = decode(os.path.join(HERE, "clip.mp3"))
    k, v = locate(c[SR:6 * SR], ref(clip["id"], 1.0))
    found = k / SR - 1.0
    err = (found - clip["matchOffset"]) * 1000
    print(f"clip.mp3 -> {clip['id']} at {found:.3f}s (expected {clip['matchOffset']}s, err {err:+.1f} ms, ncc {v:.3f})")
    ok &= abs(err) <= 50
    print("ALL OK" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
