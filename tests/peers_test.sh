#!/usr/bin/env bash
# peers_test.sh BUILD_DIR: run_experiments.sh --suite peers --quick end to
# end (every file; peers.csv has one row a round for every (size, job,
# tool); the tools that must agree with scaleppm were found equal), then
# the verification's teeth: peers_compare on corrupted copies, and the
# suite itself with a pamenlarge that flips one byte of its output.
set -euo pipefail

build=${1:?usage: peers_test.sh BUILD_DIR}
build=$(cd "$build" && pwd)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"

# shellcheck source=scripts/peers.sh
. "$repo/scripts/peers.sh"

sizes=(320x256 200x150) runs=2
out=$work/quick
if "$repo/run_experiments.sh" --suite peers --quick --bin "$build" \
    --out "$out" >"$work/quick.log" 2>&1; then
    result "run_experiments.sh --suite peers --quick" ""
else
    result "run_experiments.sh --suite peers --quick" \
        "exit $?: $(tail -n 3 "$work/quick.log" | tr '\n' ' ')"
fi
for f in peers.csv peers-scale.csv peers-verify.tsv peers.md peers.png env.txt; do
    result "$f written" "$([[ -s $out/$f ]] || echo missing)"
done
result "env.txt: both inputs read, each with its folios, and the machine" \
    "$(n=$(grep -cE '^input: .*/images/gen(320x256|200x150)\.ppm, [0-9]+ bytes' \
        "$out/env.txt" 2>/dev/null); ((n == 2)) || echo "$n input lines"
        n=$(grep -c '^folios of the cached input' "$out/env.txt" 2>/dev/null)
        ((n == 2)) || echo "$n folio lines"
        grep -qE '^machine: kernel .*microcode .*; hypervisor ' \
            "$out/env.txt" || echo 'no machine line')"
result "peers.png is a PNG" \
    "$(head -c 4 "$out/peers.png" 2>/dev/null | od -An -c | grep -q 'P   N   G' ||
        echo 'no PNG signature')"
result "peers.csv header" \
    "$([[ $(head -n 1 "$out/peers.csv" 2>/dev/null) == size,job,tool,round,wall_ns,maxrss_kb ]] ||
        echo 'header differs')"

# One row a round for every (size, job, tool); nothing else.
want=$work/want
for size in "${sizes[@]}"; do
    for job in "${PEERS_JOBS[@]}"; do
        for tool in $(peers_tools "$job"); do
            for ((r = 1; r <= runs; r++)); do printf '%s,%s,%s,%d\n' "$size" "$job" "$tool" "$r"; done
        done
    done
done | sort >"$want"
result "peers.csv: $runs rounds of all $(($(wc -l <"$want") / runs)) (size, job, tool)" \
    "$(tail -n +2 "$out/peers.csv" 2>/dev/null | cut -d, -f1-4 | sort |
        diff "$want" - | head -n 4 | tr '\n' ' ')"
result "peers.csv: times and peak RSS are positive" \
    "$(awk -F, 'NR > 1 && !($5 > 0 && $6 > 0) { print "row " NR ": " $0; exit }' "$out/peers.csv" 2>/dev/null)"
result "peers-scale.csv: default threads per job, -t 1 and -t 2 for enlarge" \
    "$(awk -F, -v r="$runs" 'NR == 1 && $0 != "size,job,threads_arg,run,scale_ns,threads" { print "header: " $0; exit }
        NR > 1 { n[$3]++; if (!($5 > 0)) { print "row " NR ": " $0; exit } }
        END { if (n["default"] != 2 * 8 * r || n["1"] != 2 * 2 * r || n["2"] != 2 * 2 * r)
                  printf "%d default, %d -t 1, %d -t 2 rows", n["default"], n["1"], n["2"] }' \
        "$out/peers-scale.csv" 2>/dev/null)"

# The verification table: the tools that must agree with scaleppm did.
# verify_row SIZE JOB TOOL: the table's "against scaleppm | expected |
# verdict" cells.
verify_row() {
    awk -F' [|] ' -v s="$1" -v j="$(peers_label "$2")" -v t="$3" \
        '$1 == "| " s && $2 == j && $3 == t { print $5 "|" $6 "|" $7; exit }' "$out/peers.md"
}
bad=""
for size in "${sizes[@]}"; do
    jobs=(enlarge2 enlarge4 reduce2)
    [[ $size == 320x256 ]] && jobs+=(reduce4 reduce8)
    for job in "${jobs[@]}"; do
        for tool in $(peers_tools "$job"); do
            [[ $tool == scaleppm ]] && continue
            row=$(verify_row "$size" "$job" "$tool")
            [[ $row == "equal|equal|as expected |" ]] || bad+="$size $job $tool: '$row'; "
        done
    done
done
result "verification: enlarge, and reduce where N divides the size, equal" "$bad"
bad=""
for sj in 320x256:box2 320x256:box4 200x150:box2; do
    for tool in vips-shrink pamscale gm im; do
        row=$(verify_row "${sj%:*}" "${sj#*:}" "$tool")
        [[ $row =~ ^(equal|differs:.*max\ abs\ diff\ 1)\|within\ 1\|as\ expected ]] ||
            bad+="$sj $tool: '$row'; "
    done
done
result "verification: box within 1 where N divides the size" "$bad"
result "verification: no mismatch, nothing skipped" \
    "$(grep -E '^\|.*(\*\*MISMATCH\*\*|not run:)' "$out/peers.md" | head -n 2 | tr '\n' ' ')"
result "peers.md: a speed table a size, the floor, threads, commands" \
    "$(for h in '## 320x256' '## 200x150' '## The scale phase' '## Thread scaling' '## Verification' '## Commands'; do
        grep -q "^$h" "$out/peers.md" || printf '%s missing; ' "$h"; done)"

# peers_compare against corrupted copies of a scaleppm output.
gen=$build/images/genimage sp=$build/src/scaleppm
"$gen" -o "$work/in.ppm" 90 60
"$sp" -s -3 "$work/in.ppm" "$work/ref.ppm"
"$sp" --filter box -s -3 "$work/in.ppm" "$work/box.ppm"
# flip FILE OFFSET_FROM_END DELTA: add DELTA to one byte (mod 256).
flip() {
    local size b
    size=$(stat -c %s "$1")
    b=$(od -An -tu1 -j $((size - $2)) -N 1 "$1" | tr -d ' ')
    # shellcheck disable=SC2059  # the format is the byte, as an octal escape
    printf "\\$(printf '%03o' $(((b + $3) % 256)))" |
        dd of="$1" bs=1 seek=$((size - $2)) conv=notrunc status=none
}
cmp_result() { peers_compare "$1" 3 90 60 "$2" "$3" | cut -f1,3; }
{ printf 'P6\n# a comment\n30   20\n255\n'; tail -c $((30 * 20 * 3)) "$work/ref.ppm"; } >"$work/hdr.ppm"
result "compare: another header, same raster: equal" \
    "$(r=$(cmp_result reduce "$work/ref.ppm" "$work/hdr.ppm"); [[ $r == equal* ]] || echo "$r")"
cp "$work/ref.ppm" "$work/bad.ppm"
flip "$work/bad.ppm" 3 1  # the last pixel's red
result "compare: one sample off by one: differs at the last pixel" \
    "$(r=$(cmp_result reduce "$work/ref.ppm" "$work/bad.ppm")
        [[ $r == $'differs\tfirst differs at pixel (29,19)' ]] || echo "$r")"
result "compare: ... and that is a MISMATCH where equal is owed" \
    "$(v=$(peers_verdict equal differs -); [[ $v == MISMATCH ]] || echo "$v")"
pamcut -left 0 -top 0 -width 30 -height 19 "$work/ref.ppm" >"$work/short.ppm"
result "compare: a row short: dims, the common region equal" \
    "$(r=$(cmp_result reduce "$work/ref.ppm" "$work/short.ppm")
        [[ $r == $'dims\tcommon 30x19 region equal' ]] || echo "$r")"
printf 'P6\n30 20\n255\n' >"$work/trunc.ppm"
result "compare: a truncated raster: bad" \
    "$(r=$(cmp_result reduce "$work/ref.ppm" "$work/trunc.ppm"); [[ $r == bad* ]] || echo "$r")"
cp "$work/box.ppm" "$work/box1.ppm" && flip "$work/box1.ppm" 2 1
cp "$work/box.ppm" "$work/box2.ppm" && flip "$work/box2.ppm" 2 2
result "compare: box off by 1 is within 1, off by 2 a MISMATCH" \
    "$(m1=$(peers_compare box 3 90 60 "$work/box.ppm" "$work/box1.ppm" | cut -f4)
        m2=$(peers_compare box 3 90 60 "$work/box.ppm" "$work/box2.ppm" | cut -f4)
        v1=$(peers_verdict "within 1" differs "$m1"); v2=$(peers_verdict "within 1" differs "$m2")
        [[ $m1 == 1 && $m2 == 2 && $v1 == "as expected" && $v2 == MISMATCH ]] ||
            echo "max $m1 -> $v1, max $m2 -> $v2")"

# The suite with a pamenlarge that gets one byte wrong: it must stop,
# loudly, before timing anything.
mkdir "$work/shim"
real=$(command -v pamenlarge)
cat >"$work/shim/pamenlarge" <<EOF
#!/usr/bin/env bash
set -euo pipefail
tmp=\$(mktemp)
trap 'rm -f "\$tmp"' EXIT
"$real" "\$@" >"\$tmp"
size=\$(stat -c %s "\$tmp")
b=\$(od -An -tu1 -j \$((size / 2)) -N 1 "\$tmp" | tr -d ' ')
printf "\\\\\$(printf '%03o' \$(((b + 1) % 256)))" |
    dd of="\$tmp" bs=1 seek=\$((size / 2)) conv=notrunc status=none
cat "\$tmp"
EOF
chmod +x "$work/shim/pamenlarge"
out=$work/wrong
PATH=$work/shim:$PATH "$repo/run_experiments.sh" --suite peers --quick \
    --bin "$build" --out "$out" >"$work/wrong.log" 2>&1 && rc=0 || rc=$?
result "a wrong pamenlarge output stops the suite (exit non-zero)" \
    "$( ((rc != 0)) || echo 'exit 0')"
result "... saying MISMATCH on stderr, for pamenlarge" \
    "$(grep -q 'MISMATCH: scaleppm and pamenlarge should agree' "$work/wrong.log" ||
        tail -n 2 "$work/wrong.log" | tr '\n' ' ')"
result "... and in peers.md, with nothing timed" \
    "$(grep -q '| pamenlarge | .* | \*\*MISMATCH\*\* |' "$out/peers.md" 2>/dev/null ||
        echo 'no MISMATCH row'; [[ ! -e $out/peers.csv ]] || echo 'peers.csv written')"

# Bad options are usage errors.
"$repo/run_experiments.sh" --suite peers --runs 0 --bin "$build" \
    --out "$work/no" >/dev/null 2>&1 && rc=0 || rc=$?
result "--suite peers --runs 0 is refused" "$( ((rc != 0)) || echo 'exit 0')"

# sprun: a command past -t is killed and said to be (before the minute it
# would run: a loaded machine cannot stretch 1 s so far); its stdout is
# not mixed with the figures.
t0=$SECONDS
"$build/src/sprun" -t 1 -- sleep 60 >"$work/sp.out" 2>"$work/sp.err" && rc=0 || rc=$?
result "sprun -t 1 kills a command that runs on" \
    "$( ((rc == 1 && SECONDS - t0 < 60)) || echo "exit $rc after $((SECONDS - t0)) s")$(
        grep -q 'still running after 1 s' "$work/sp.err" || echo ': no timeout message')"
res=$("$build/src/sprun" -- echo noise) || res="exit $?"
result "sprun without -o: the command's stdout is not in its figures" \
    "$([[ $res =~ ^[0-9]+\ [0-9]+\ 0$ ]] || echo "got: $res")"

finish
