#!/usr/bin/env bash
# stats_test.sh: spstats on a hand-made runs.csv (tests/data/runs_fixture.csv)
# whose answers are worked out below; its output files looked up by column
# name; bad inputs and bad arguments.
#
# usage: bash tests/stats_test.sh PATH/TO/spstats
#
# The fixture, per scale and method.  A run's total is load + scale +
# release (write is not in it: its large write_ns would show if it were);
# times in ms; sd is the sample (n - 1) standard deviation.
#
#   -2 read:  totals 10, 12, 14          n 3  mean 12  sd 2             median 12
#             load 4,5,6 -> 5  scale 5,6,7 -> 6  release 1  write 100
#             load_minflt 10,20,30 -> 20  load_majflt 0,0,3 -> 1
#             scale_minflt 1  write_minflt 5
#   -2 mmap:  totals 8, 8, 10, 14        n 4  mean 10  sd sqrt(24/3)
#             = 2.8284  median (8+10)/2 = 9  min 8  max 14
#             load 1  scale 6,6,8,12 -> 8  release 1  write 50
#             load_minflt 2  scale_minflt 100..400 -> 250
#             scale_majflt 1,1,0,0 -> 0.5  release_minflt 0,0,0,4 -> 1
#             write_minflt 7
#   -2 ratio: 12 / 10 = 1.2; the 2002 study: 5.48 s, 4.79 s, 1.14
#    3 read:  totals 20, 22              n 2  mean 21  sd sqrt(2) = 1.4142
#             load 10,11 -> 10.5  scale 9,10 -> 9.5  write 200
#             load_minflt 40,60 -> 50  scale_minflt 3,5 -> 4
#    3 mmap:  totals 25, 35              n 2  mean 30  sd sqrt(50) = 7.0711
#             scale 23,33 -> 28  write 300  scale_minflt 600,800 -> 700
#             release_minflt 2,4 -> 3
#    3 ratio: 21 / 30 = 0.7; not a factor of the 2002 study: empty
#   -8 read:  totals 3, 5                n 2  mean 4  sd 1.4142  median 4
#             load_minflt 1,3 -> 2  write 10
#   -8 mmap:  no runs: n 0, no ratio; the 2002 ratio is 2.03
#
# The rows are interleaved across scales; the scales come out in the order
# they first appear: -2, 3, -8.
set -euo pipefail

usage='usage: stats_test.sh PATH/TO/spstats'
if (($# != 1)) || [[ $1 == -h || $1 == --help ]]; then
    printf '%s\n' "$usage"
    exit 2
fi
case $1 in
/*) SPSTATS=$1 ;;
*) SPSTATS=$PWD/$1 ;;
esac
if [[ ! -x $SPSTATS ]]; then
    printf 'not executable: %s\n' "$SPSTATS" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURE=$here/data/runs_fixture.csv
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaleppm-stats.XXXXXX")
# shellcheck disable=SC2064  # expand WORK now, while it is set
trap "rm -rf -- '$WORK'" EXIT
trap 'exit 130' INT TERM
cd "$WORK"

npass=0
nfail=0

# result WHAT WHY: pass when WHY is empty, else fail with it.
result() {
    if [[ -z $2 ]]; then
        npass=$((npass + 1))
        printf 'ok - %s\n' "$1"
    else
        nfail=$((nfail + 1))
        printf 'FAIL - %s: %s\n' "$1" "$2"
    fi
}

# st ARGS...: run spstats; exit status in rc, stderr in the file e.
st() {
    rc=0
    "$SPSTATS" "$@" >o 2>e </dev/null || rc=$?
}

# col FILE SCALE NAME: the field NAME (looked up in the header) of the row
# whose scale field is SCALE; "<no column NAME>" or "<no row SCALE>" when
# there is none.
col() {
    awk -F, -v scale="$2" -v name="$3" '
        NR == 1 {
            for (i = 1; i <= NF; i++) {
                if ($i == "scale") s = i
                if ($i == name) c = i
            }
            if (!s || !c) { printf "<no column %s>\n", (s ? name : "scale"); exit }
            next
        }
        $s == scale { print $c; found = 1; exit }
        END { if (s && c && !found) printf "<no row %s>\n", scale }
    ' "$1"
}

# near GOT WANT: empty, or why GOT is not the number WANT (to 5e-4).
near() {
    awk -v g="$1" -v w="$2" 'BEGIN {
        if (g !~ /^-?[0-9]+(\.[0-9]+)?$/) { printf "\"%s\" is not a number", g; exit }
        d = g - w; if (d < 0) d = -d
        if (d > 5e-4) printf "%s, want %s", g, w
    }'
}

# expect SCALE NAME WANT: summary.csv's NAME at SCALE is WANT (a number,
# or empty for an empty field).
expect() {
    local got why
    got=$(col summary.csv "$1" "$2")
    if [[ -z $3 ]]; then
        why=${got:+"\"$got\", want empty"}
    else
        why=$(near "$got" "$3")
    fi
    result "summary $1 $2 = ${3:-(empty)}" "$why"
}

# one_line RC PREFIX: empty, or why the last run did not exit RC with one
# line on stderr that starts PREFIX.
one_line() {
    local n
    n=$(wc -l <e | tr -d ' ')
    if ((rc >= 128)); then
        printf 'crashed: exit %d' "$rc"
    elif ((rc != $1)); then
        printf 'exit %d, want %d; stderr: %s' "$rc" "$1" "$(head -n 1 e)"
    elif [[ $n != 1 ]]; then
        printf '%s lines on stderr, want 1: %s' "$n" "$(tr '\n' '|' <e)"
    elif [[ $(head -n 1 e) != "$2"* ]]; then
        printf 'stderr "%s" does not start "%s"' "$(head -n 1 e)" "$2"
    fi
}

# ---- The fixture's answers ----------------------------------------------

st "$FIXTURE" summary.csv table1.md
result "spstats on the fixture exits 0" \
    "$( ((rc == 0)) || printf 'exit %d: %s' "$rc" "$(head -n 1 e)")"
if ((rc != 0)); then
    printf '%d passed, %d failed\n' "$npass" "$nfail"
    exit 1
fi
result "nothing on stderr" "$(head -n 1 e)"

rows=$(($(wc -l <summary.csv) - 1))
result "summary.csv has one row a scale" \
    "$( ((rows == 3)) || printf '%d rows, want 3' "$rows")"
order=$(awk -F, 'NR > 1 { printf "%s ", $1 }' summary.csv)
result "scales in order of first appearance" \
    "$([[ $order == '-2 3 -8 ' ]] || printf '"%s", want "-2 3 -8 "' "$order")"

# scale method: n mean sd median min max
while read -r scale m n mean sd median min max; do
    expect "$scale" "${m}_n" "$n"
    expect "$scale" "${m}_mean_ms" "$mean"
    expect "$scale" "${m}_sd_ms" "$sd"
    expect "$scale" "${m}_median_ms" "$median"
    expect "$scale" "${m}_min_ms" "$min"
    expect "$scale" "${m}_max_ms" "$max"
done <<'EOF'
-2 read 3 12 2 12 10 14
-2 mmap 4 10 2.8284 9 8 14
3 read 2 21 1.4142 21 20 22
3 mmap 2 30 7.0711 30 25 35
-8 read 2 4 1.4142 4 3 5
EOF
# A method with no runs: n 0 and the rest empty, not a time of 0.
expect -8 mmap_n 0
for stat in mean sd median min max; do
    expect -8 "mmap_${stat}_ms" ''
done

# The per-phase means: times in ms, faults per run.
while read -r scale name want; do
    expect "$scale" "$name" "$want"
done <<'EOF'
-2 read_load_ms_mean 5
-2 read_scale_ms_mean 6
-2 read_release_ms_mean 1
-2 read_write_ms_mean 100
-2 read_load_minflt_mean 20
-2 read_load_majflt_mean 1
-2 read_scale_minflt_mean 1
-2 read_scale_majflt_mean 0
-2 read_write_minflt_mean 5
-2 mmap_load_ms_mean 1
-2 mmap_scale_ms_mean 8
-2 mmap_write_ms_mean 50
-2 mmap_load_minflt_mean 2
-2 mmap_scale_minflt_mean 250
-2 mmap_scale_majflt_mean 0.5
-2 mmap_release_minflt_mean 1
-2 mmap_release_majflt_mean 0
-2 mmap_write_minflt_mean 7
3 read_load_ms_mean 10.5
3 read_scale_ms_mean 9.5
3 read_write_ms_mean 200
3 read_load_minflt_mean 50
3 read_scale_minflt_mean 4
3 mmap_scale_ms_mean 28
3 mmap_write_ms_mean 300
3 mmap_scale_minflt_mean 700
3 mmap_release_minflt_mean 3
-8 read_load_minflt_mean 2
-8 read_write_ms_mean 10
EOF

expect -2 ratio 1.2
expect 3 ratio 0.7
expect -8 ratio ''
expect -8 ratio_lo ''
expect -8 ratio_hi ''
expect -2 ratio_2002 1.14
expect 3 ratio_2002 ''
expect -8 ratio_2002 2.03

for scale in -2 3; do
    lo=$(col summary.csv "$scale" ratio_lo)
    r=$(col summary.csv "$scale" ratio)
    hi=$(col summary.csv "$scale" ratio_hi)
    result "scale $scale: ratio_lo <= ratio <= ratio_hi ($lo, $r, $hi)" \
        "$(awk -v lo="$lo" -v r="$r" -v hi="$hi" 'BEGIN {
            if (lo == "" || hi == "" || !(lo + 0 <= r + 0 && r + 0 <= hi + 0))
                print "not ordered"
            else if (!(lo + 0 < hi + 0))
                print "an empty interval from varied samples"
        }')"
done

# ---- table1.md -----------------------------------------------------------

# The first table: from its header row to the blank line after it.
awk '/^\| scale \| n read\/mmap \|/ { t = 1; next } t && /^$/ { exit } t && !/^\|---/' \
    table1.md >t1
rows=$(wc -l <t1 | tr -d ' ')
result "table1.md: one row a scale in Table 1" \
    "$( ((rows == 3)) || printf '%d rows, want 3' "$rows")"
for scale in -2 3 -8; do
    n=$(grep -c -e "^| $scale\*\{0,1\} |" t1 || true)
    result "table1.md: scale $scale has one row" \
        "$( ((n == 1)) || printf '%d rows' "$n")"
done
row=$(grep -e '^| -2\* |' t1 || true)
result "table1.md: -2 is starred, n 3/4, the 2002 figures 5.48 4.79 1.14" \
    "$([[ $row == '| -2* | 3/4 | '*' | 5.48 | 4.79 | 1.14 |' ]] ||
        printf 'row "%s"' "$row")"
result "table1.md: -2 read 12.000 ± 2.000 (12.000), ratio 1.20" \
    "$([[ $row == *'| 12.000 ± 2.000 (12.000) | 10.000 ± 2.828 (9.000) | 1.20 |'* ]] ||
        printf 'row "%s"' "$row")"
row=$(grep -e '^| 3 |' t1 || true)
result "table1.md: 3 is not starred and has no 2002 figures" \
    "$([[ $row == '| 3 | 2/2 | '*'| 0.70 | '*' | | | |' ]] ||
        printf 'row "%s"' "$row")"
result "table1.md: the run context from runs.csv" \
    "$(grep -q 'image=fixture.ppm, cache=warm, page_cache=4k, threads=1' \
        table1.md || printf 'not found')"

# ---- Invariances -----------------------------------------------------------

cp summary.csv want.csv
cp table1.md want.md
st "$FIXTURE" again.csv again.md
result "the same runs give the same summary (fixed bootstrap seed)" \
    "$(cmp want.csv again.csv 2>&1)"

# Columns found by name: the fixture with its columns reversed.
awk -F, -v OFS=, '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? OFS : "\n") }' \
    "$FIXTURE" >reversed.csv
st reversed.csv rev.csv rev.md
result "columns in another order give the same summary" \
    "$( ((rc == 0)) || printf 'exit %d: %s' "$rc" "$(head -n 1 e)"; cmp want.csv rev.csv 2>&1)"

# CRLF line ends and blank lines change nothing.
{ sed 's/$/\r/' "$FIXTURE"; printf '\n\n'; } >crlf.csv
st crlf.csv crlf_s.csv crlf.md
result "CRLF line ends and blank lines give the same summary" \
    "$( ((rc == 0)) || printf 'exit %d: %s' "$rc" "$(head -n 1 e)"; cmp want.csv crlf_s.csv 2>&1)"

# A scale whose ratio cannot be computed (mmap's mean total is 0) must not
# vanish from the outputs while spstats exits 0: either it is reported
# (without a ratio) or spstats fails and says why.
printf '%s\n' 'scale,method,load_ns,scale_ns,release_ns' \
    '-2,read,1000000,0,0' '-2,mmap,0,0,0' \
    '3,read,2000000,0,0' '3,mmap,1000000,0,0' >zero.csv
st zero.csv zero_s.csv zero.md
if ((rc == 0)); then
    why=$(col zero_s.csv -2 read_n)
    why=${why#1}
    if [[ -z $why ]] && ! grep -q '^| -2\* | ' zero.md; then
        why='not in Table 1'
    fi
    result "a scale with a zero mmap mean is not dropped silently" \
        "${why:+exit 0 but scale -2 is missing: $why}"
else
    result "a scale with a zero mmap mean is not dropped silently" \
        "$(one_line 1 'spstats: ')"
fi

# ---- Bad inputs: exit 1, one line, no output -----------------------------

header=$(head -n 1 "$FIXTURE")
# bad WHAT PREFIX INPUT: spstats on INPUT fails as it should.
bad() {
    rm -f s.csv t.md
    st "$3" s.csv t.md
    local why
    why=$(one_line 1 "$2")
    if [[ -z $why ]] && [[ -e s.csv || -e t.md ]]; then
        why='an output file was written'
    fi
    result "$1" "$why"
}

bad "missing runs file" "spstats: missing.csv: No such file" missing.csv

: >empty.csv
bad "empty file: no header" "spstats: empty.csv: no header line" empty.csv

tail -n +2 "$FIXTURE" >noheader.csv
bad "a data row where the header should be" \
    "spstats: noheader.csv: needs columns" noheader.csv

printf '%s\n' "$header" | sed 's/load_ns/load_us/' >nocol.csv
tail -n +2 "$FIXTURE" >>nocol.csv
bad "no load_ns column" "spstats: nocol.csv: needs columns" nocol.csv

printf '%s\n' "$header" >headeronly.csv
bad "a header and no runs" "spstats: headeronly.csv: no runs" headeronly.csv

{
    head -n 2 "$FIXTURE"
    sed -n 3p "$FIXTURE" | sed 's/,fixture\.ppm$//'
    tail -n +4 "$FIXTURE"
} >short.csv
bad "a row with a field missing" \
    "spstats: short.csv:3: 20 fields, header has 21" short.csv

{
    head -n 3 "$FIXTURE"
    sed -n 4p "$FIXTURE" | sed 's/$/,extra/'
} >long.csv
bad "a row with a field too many" \
    "spstats: long.csv:4: 22 fields, header has 21" long.csv

{
    head -n 4 "$FIXTURE"
    sed -n 5p "$FIXTURE" | sed 's/,mmap,/,mmapp,/'
} >method.csv
bad "an unknown method" "spstats: method.csv:5: bad method" method.csv

st "$FIXTURE" no/such/dir.csv t.md
result "an output that cannot be created: exit 1, one line" \
    "$(one_line 1 'spstats: no/such/dir.csv: No such file')"

# ---- Arguments -------------------------------------------------------------

for args in 0 1 2 4; do
    set -- "$FIXTURE" s.csv t.md extra
    st "${@:1:args}"
    result "$args arguments: exit 2 with a usage line" \
        "$(one_line 2 'usage: spstats')"
done

printf '%d passed, %d failed\n' "$npass" "$nfail"
((nfail == 0))
