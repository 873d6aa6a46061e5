# shellcheck shell=bash
# report.sh: the figure and the environment record of an experiment run
# (sourced by run_experiments.sh).

# csv_columns FILE NAME...: the named columns of the CSV FILE, space-
# separated, one line a row, the header dropped; an empty field is "?".
csv_columns() {
    local file=$1
    shift
    awk -F, -v want="$*" '
        NR == 1 { n = split(want, w, " ")
                  for (i = 1; i <= NF; i++) col[$i] = i
                  for (j = 1; j <= n; j++)
                      if (!(w[j] in col)) { print "no column " w[j] > "/dev/stderr"; exit 1 }
                  next }
        { line = ""
          for (j = 1; j <= n; j++) { v = $(col[w[j]]); line = line (j > 1 ? " " : "") (v == "" ? "?" : v) }
          print line }' "$file"
}

# sp_sun_report DIR: DIR's summary.csv, table1.md and figure1.png from its
# runs.csv.
sp_sun_report() {
    local dir=$1
    # shellcheck disable=SC2154  # run_experiments.sh sets spstats
    "$spstats" "$dir/runs.csv" "$dir/summary.csv" "$dir/table1.md"
    sp_plot_figure1 "$dir/summary.csv" "$dir/figure1.png"
}

# sp_plot_figure1 SUMMARY PNG: Figure 1, read/mmap against the scale
# factor with the 95% interval, for reduce (beside the 2002 curve) and for
# enlarge.
sp_plot_figure1() {
    local summary=$1 png=$2 dat
    dat=$(mktemp)
    csv_columns "$summary" scale ratio ratio_lo ratio_hi >"$dat"
    gnuplot <<GNUPLOT
set terminal pngcairo size 1200,500 font ",11"
set output "$png"
set datafile missing "?"
\$sun << EOD
2 1.14
3 1.28
4 1.48
8 2.03
EOD
set multiplot layout 1,2 title "read/scale/free time ÷ mmap/scale/free time"
set xlabel "reduce factor N (output is 1/N by 1/N)"
set ylabel "read time / mmap time"
set grid
set key bottom right box opaque
set xrange [1.5:8.5]
set yrange [0:*]
plot "$dat" using (\$1 < 0 ? -\$1 : 1/0):2:3:4 with yerrorlines lw 2 pt 7 \
         title "this machine (95% CI)", \
     \$sun using 1:2 with linespoints lw 2 pt 5 dt 2 \
         title "Sun 2002 (Ultra 30, Solaris 8)", \
     1 with lines lc "gray" notitle
set xlabel "enlarge factor N (output is N by N)"
plot "$dat" using (\$1 > 0 ? \$1 : 1/0):2:3:4 with yerrorlines lw 2 pt 7 \
         title "this machine (95% CI)", \
     1 with lines lc "gray" notitle
unset multiplot
GNUPLOT
    rm -f "$dat"
}

# sp_read_ahead_kb PATH: the read_ahead_kb of the block device holding
# PATH (a partition's is its disk's), or "n/a".
sp_read_ahead_kb() {
    local dev sys
    dev=$(stat -c '%d' "$1")
    sys=/sys/dev/block/$((dev >> 8)):$((dev & 255))
    if [[ -r $sys/queue/read_ahead_kb ]]; then
        cat "$sys/queue/read_ahead_kb"
    elif [[ -r $sys/../queue/read_ahead_kb ]]; then
        cat "$sys/../queue/read_ahead_kb"
    else
        echo n/a
    fi
}

# sp_tree_state: "clean", or "dirty: N files differ from the commit" (the
# figures then come from code no commit holds).
sp_tree_state() {
    local n
    n=$(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) || n='?'
    if [[ $n == 0 ]]; then echo clean; else echo "dirty: $n files differ from the commit"; fi
}

# sp_write_env FILE IMAGE BUILD_DIR SETTINGS: what the figures depend on.
sp_write_env() {
    local file=$1 image=$2 build=$3 settings=$4
    {
        printf 'date: %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        printf 'host: %s\n' "$(hostname)"
        printf 'cpu: %s\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
        printf 'cores: %s online\n' "$(nproc)"
        printf 'memory: %s kB\n' "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
        printf 'kernel: %s\n' "$(uname -srmv)"
        printf 'page size: %s\n' "$(getconf PAGESIZE)"
        printf 'transparent hugepages: %s; shmem: %s\n' \
            "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)" \
            "$(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || echo n/a)"
        if [[ -f $image ]]; then
            printf 'input: %s, %s bytes, %s\n' "$image" "$(stat -c %s "$image")" \
                "$(pamfile "$image" | cut -d: -f2- | sed 's/^[[:space:]]*//')"
            printf 'filesystem of the input: %s\n' \
                "$(df -PT "$image" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
        fi
        printf 'filesystem of the working copy: %s\n' \
            "$(df -PT "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 " on " $1 " at " $7 }')"
        printf 'read_ahead_kb of the working copy'"'"'s device: %s\n' \
            "$(sp_read_ahead_kb "${TMPDIR:-/tmp}")"
        printf 'compiler: %s\n' "$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") ($(cc --version | head -n 1))"
        printf 'build type: %s, flags: %s %s\n' \
            "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS:[A-Z]*=//p' "$build/CMakeCache.txt")" \
            "$(sed -n 's/^CMAKE_C_FLAGS_RELEASE:[A-Z]*=//p' "$build/CMakeCache.txt")"
        printf 'scaleppm: %s, sha256 %s\n' "$("$build/src/scaleppm" --version)" \
            "$(sha256sum <"$build/src/scaleppm" | cut -d' ' -f1)"
        printf 'commit: %s\n' "$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
        printf 'tree: %s\n' "$(sp_tree_state)"
        printf 'settings: %s\n' "$settings"
    } >"$file"
}

# The main metric of each suite: what its plot shows.
sp_suite_metric() {
    case $1 in
    syscall-vs-mmap) echo throughput ;;
    zero-page) echo time ;;
    random-access) echo latency ;;
    copy) echo real ;;
    esac
}

# sp_suite_table CSV: iobench's rows as a Markdown table, ours beside the
# source document's figure and their ratio.
sp_suite_table() {
    awk -F, 'NR == 1 { next }
        { ratio = ($8 != "" && $8 + 0 != 0) ? sprintf("%.2f", $6 / $8) : ""
          seed = $8 == "" ? "" : $8
          printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", \
              $2, $3, $4, $5, $6, seed, ratio, $7, $9 == "ok" ? "yes" : "no" }' "$1"
}

# sp_suite_report SUITE CSV MD PNG: the Markdown table and the plot (the
# suite's main metric, one bar a method, grouped by case and parameter).
sp_suite_report() {
    local suite=$1 csv=$2 md=$3 png=$4 metric dat ncol logscale=""
    metric=$(sp_suite_metric "$suite")
    {
        printf '# %s\n\n' "$suite"
        cat <<EOF
Raw rows: $(basename "$csv"). "seed" is the source document's figure,
"ours/seed" the ratio of ours to it; "checked": the data was verified
(bytes read equal the file's, copies equal, zeroed pages zero).

EOF
        printf '| case | param | method | metric | ours | seed | ours/seed | unit | checked |\n'
        printf '|---|---:|---|---|---:|---:|---:|---|---|\n'
        sp_suite_table "$csv"
    } >"$md"
    dat=$(mktemp)
    # Pivot: one line a (case, param), one column a method.
    awk -F, -v metric="$metric" 'NR > 1 && $5 == metric {
            key = $2 " " $3; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
            if (!($4 in mcol)) { mcol[$4] = ++nm; mname[nm] = $4 }
            v[key, $4] = $6 }
        END { printf "group"; for (j = 1; j <= nm; j++) printf " %s", mname[j]; print ""
              for (i = 1; i <= nk; i++) { k = keys[i]; gsub(/ 0$/, "", k); gsub(/ /, ":", k)
                  printf "%s", k
                  for (j = 1; j <= nm; j++) printf " %s", ((keys[i], mname[j]) in v) ? v[keys[i], mname[j]] : "?"
                  print "" } }' "$csv" >"$dat"
    ncol=$(head -n 1 "$dat" | wc -w)
    [[ $metric == latency ]] && logscale="set logscale y"
    gnuplot <<GNUPLOT
set terminal pngcairo size 1200,550 font ",10"
set output "$png"
set datafile missing "?"
set title "$suite: $metric ($(awk -F, -v m="$metric" 'NR > 1 && $5 == m { print $7; exit }' "$csv"))"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -35 noenhanced
set bmargin 8
set key top left noenhanced
set grid ytics
set yrange [0:*]
$logscale
plot for [i=2:$ncol] "$dat" using i:xtic(1) title columnheader(i)
GNUPLOT
    rm -f "$dat"
}
