#!/usr/bin/env bash
# cli_test.sh: the scaleppm command line contract: usage errors, bad inputs
# under both load paths, output targets and formats, --timings, -v, and the
# thread clamp.
#
# usage: bash tests/cli_test.sh PATH/TO/scaleppm [PATH/TO/genimage]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
setup "usage: cli_test.sh PATH/TO/scaleppm [PATH/TO/genimage]" "$@"
cd "$WORK"
mkdir od adir

# sp ARGS...: run scaleppm; exit status in rc, stdout in o, stderr in e.
# Its standard input is a pipe from the file $pipe_in when that is set.
pipe_in=''
sp() {
    rc=0
    if [[ -n $pipe_in ]]; then
        "$SP" "$@" >o 2>e < <(cat -- "$pipe_in") || rc=$?
    else
        "$SP" "$@" >o 2>e </dev/null || rc=$?
    fi
}

# lines FILE: how many lines FILE has.
lines() {
    wc -l <"$1" | tr -d ' '
}

# temps DIR: the temporary files ('.NAME.XXXXXX') left in DIR, if any.
temps() {
    find "$1" -maxdepth 1 -name '.?*.??????' -printf '%f '
}

# expect_status WANT: empty, or why the last run's status is not WANT.
expect_status() {
    if ((rc >= 128)); then
        printf 'crashed: exit %d (signal %d)' "$rc" $((rc - 128))
    elif ((rc != $1)); then
        printf 'exit %d, want %d; stderr: %s' "$rc" "$1" "$(head -n 1 e)"
    fi
}

# one_line PREFIX: empty, or why stderr is not one line starting PREFIX.
one_line() {
    if [[ $(lines e) != 1 ]]; then
        printf '%s lines on stderr, want 1: %s' "$(lines e)" "$(tr '\n' '|' <e)"
    elif [[ $(head -n 1 e) != "$1"* ]]; then
        printf 'stderr "%s" does not start "%s"' "$(head -n 1 e)" "$1"
    fi
}

printf 'P6\n3 2\n255\n' >hdr6.ppm
noise 31 17 255 1 3 >c.ppm
noise 13 7 255 4 1 >g.pgm
noise 13 7 65535 7 1 >g16.pgm
noise 9 5 65535 10 3 >c16.ppm
noise 5 3 255 13 3 >rows3.ppm
pamenlarge 2 c.ppm >c2.ppm

# --- usage errors: exit 2, one line on stderr, nothing written ------------
usage_case() {
    local what=$1 why
    shift
    rm -f od/u.ppm
    sp "$@"
    why=$(expect_status 2)
    [[ -n $why ]] || why=$(one_line 'scaleppm: ')
    [[ -n $why || ! -s o ]] || why='stdout is not empty'
    [[ -n $why || ! -e od/u.ppm ]] || why='an output file was created'
    result "usage error: $what" "$why"
}
usage_case 'no arguments'
usage_case '-s 0' -s 0 c.ppm od/u.ppm
usage_case '-s x' -s x c.ppm od/u.ppm
usage_case '-s 2x' -s 2x c.ppm od/u.ppm
usage_case '-s 65537' -s 65537 c.ppm od/u.ppm
usage_case '-s with no value' c.ppm od/u.ppm -s
usage_case 'missing -s' c.ppm od/u.ppm
usage_case '-t 0' -s 2 -t 0 c.ppm od/u.ppm
usage_case '-t 1025' -s 2 -t 1025 c.ppm od/u.ppm
usage_case '-t -1' -s 2 -t -1 c.ppm od/u.ppm
usage_case '--io foo' --io foo -s 2 c.ppm od/u.ppm
usage_case '--filter foo' --filter foo -s -2 c.ppm od/u.ppm
usage_case '--timings=xml' --timings=xml -s 2 c.ppm od/u.ppm
usage_case 'unknown long option' --bogus -s 2 c.ppm od/u.ppm
usage_case 'unknown short option' -x -s 2 c.ppm od/u.ppm
usage_case 'three files' -s 2 c.ppm od/u.ppm od/v.ppm
usage_case '--filter box with an enlarge' --filter box -s 2 c.ppm od/u.ppm
usage_case '--quality 0' --quality 0 -s 2 c.ppm od/u.jpg
usage_case '--compression 10' --compression 10 -s 2 c.ppm od/u.png
usage_case '--subsample 411' --subsample 411 -s 2 c.ppm od/u.jpg
# An option that cannot apply to the output (issue 25): a usage error, not
# ignored; by each output's format in a batch, before any is written.
usage_case '--quality with a PNG output' --quality 50 -s 2 c.ppm od/u.png
usage_case '--quality with a PNM output' --quality 50 -s 2 c.ppm od/u.ppm
usage_case '--quality to standard output' --quality 50 -s 2 c.ppm
usage_case '--compression with a JPEG output' --compression 3 -s 2 c.ppm \
    od/u.jpg
usage_case '--compression with a BMP output' --compression 3 -s 2 c.ppm \
    od/u.BMP
usage_case '--compression to standard output' --compression 3 -s 2 c.ppm -
usage_case '--subsample with a PNG output' --subsample 444 -s 2 c.ppm \
    od/u.png
usage_case '--subsample in a batch of PNM outputs' --subsample 422 -s 2 \
    -o od/ c.ppm
usage_case '--quality in a batch of PNG outputs' --quality 50 -s 2 \
    -o od/ --format png c.ppm
usage_case '--compression in a batch of JPEG outputs (pattern)' \
    --compression 3 -s 2 -o 'od/%s.jpeg' c.ppm
cp c.ppm x.jpg  # a PNM named .jpg: its output in DIR/ is a JPEG
usage_case '--quality in a batch where one output of two is not JPEG' \
    --quality 50 -s 2 -o od/ x.jpg c.ppm
[[ ! -e od/x.jpg ]] || fail '--quality in a mixed batch' 'x.jpg was written'
usage_case 'a second --files-from' -s 2 -o od/ --files-from /dev/null \
    --files-from /dev/null c.ppm
for args in '--quality 50 od/q.JPG' '--quality 50 od/q.jpeg' \
    '--compression 3 od/q.PNG'; do
    read -ra a <<<"$args"
    sp -s 2 "${a[@]:0:2}" c.ppm "${a[2]}"
    why=$(expect_status 0)
    [[ -n $why || -s ${a[2]} ]] || why='no output'
    result "$args: applies (any case)" "$why"
done
for f in PNG Jpg pAm; do
    rm -rf od/fmt && mkdir od/fmt
    sp -q -s 2 -o od/fmt/ --format "$f" c.ppm
    why=$(expect_status 0)
    [[ -n $why || -s od/fmt/c.$f ]] || why="no od/fmt/c.$f: $(ls od/fmt)"
    result "--format $f: case-blind, as an extension is" "$why"
done
head -c 8 od/fmt/c.pAm | grep -q '^P7' ||
    fail '--format pAm' 'the output is not a PAM'

# The message names the unknown option, also inside a cluster of flags.
sp -Qv -s 2 c.ppm od/u.ppm
why=$(expect_status 2)
[[ -n $why ]] || grep -q -- '-Q' e || why="stderr does not name -Q: $(head -n 1 e)"
result 'usage error: unknown option in a cluster (-Qv) is named' "$why"

sp --help
why=$(expect_status 0)
[[ -n $why ]] || grep -q '^usage: scaleppm' o || why='no usage on stdout'
[[ -n $why || ! -s e ]] || why='stderr is not empty'
result '--help: exit 0, usage on stdout' "$why"

sp -h
why=$(expect_status 0)
[[ -n $why ]] || cmp -s o <("$SP" --help) || why='-h differs from --help'
result '-h: same as --help' "$why"

sp --version
why=$(expect_status 0)
[[ -n $why ]] || [[ $(lines o) == 1 && $(head -n 1 o) == 'scaleppm '* ]] ||
    why="stdout: $(tr '\n' '|' <o)"
[[ -n $why || ! -s e ]] || why='stderr is not empty'
result '--version: exit 0, one line on stdout' "$why"

# --- bad inputs: exit 1, 'scaleppm: FILE: ...', no output -----------------
printf '' >empty.ppm
printf 'this is not an image at all\n' >junk.ppm
printf 'P1\n2 2\n0 1\n1 0\n' >p1.pbm
printf 'P4\n8 1\n\377' >p4.pbm
printf 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n\001' >p7.pam
printf 'P6\n0 2\n255\n' >w0.ppm
printf 'P5\n2 0\n255\n' >h0.pgm
printf 'P6\n2 2\n0\n' >maxval0.ppm
printf 'P6\n2 2\n70000\n' >maxval70000.ppm
head -c 40 c.ppm >truncated.ppm
head -c 30 g16.pgm >truncated16.pgm
printf 'P6\n100000 100000\n255\n\0\0\0\0\0\0' >claims_huge.ppm
printf 'P3\n100000 100000\n255\n1 2 3\n' >claims_huge_plain.ppm
printf 'P6\n4294967295 4294967295\n255\n\0\0\0' >dims_u32max.ppm
printf 'P5\n99999999999999999999 1\n255\n\0' >dims_overflow.pgm
printf 'P5\n-3 2\n255\n\0\0\0\0\0\0' >dims_negative.pgm
printf 'P3\n2 1\n255\n0 0 0 0 0 256\n' >plain_over_maxval.ppm
printf 'P2\n3 1\n10\n1 2 11\n' >plain_over_maxval.pgm
printf 'P2\n2 2\n255\n1 2 x 4\n' >plain_garbage.pgm
printf 'P3\n1 1\n255\n1 2\n' >plain_short.ppm
printf 'P6\n3 2\n255' >header_no_raster.ppm
printf 'P2\n1 1\n255\n' >header_only.pgm

bad_inputs=(empty.ppm junk.ppm w0.ppm h0.pgm maxval0.ppm
    maxval70000.ppm truncated.ppm truncated16.pgm claims_huge.ppm
    claims_huge_plain.ppm dims_u32max.ppm dims_overflow.pgm
    dims_negative.pgm plain_over_maxval.ppm plain_over_maxval.pgm
    plain_garbage.pgm plain_short.ppm hdr6.ppm header_no_raster.ppm
    header_only.pgm)

# bad_case WHAT NAME ARGS...: scaleppm ARGS... OUT must fail naming NAME,
# create no OUT, and leave an existing OUT (mode 0640) as it was.
bad_case() {
    local what=$1 name=$2 why
    shift 2
    rm -f od/new.ppm
    sp "$@" od/new.ppm
    why=$(expect_status 1)
    [[ -n $why ]] || why=$(one_line "scaleppm: $name: ")
    [[ -n $why || ! -e od/new.ppm ]] || why='an output file was created'
    if [[ -z $why ]]; then
        printf 'keep me\n' >od/keep.ppm
        chmod 0640 od/keep.ppm
        sp "$@" od/keep.ppm
        why=$(expect_status 1)
        [[ -n $why ]] || [[ $(cat od/keep.ppm) == 'keep me' ]] ||
            why='an existing output was changed'
        [[ -n $why || $(stat -c %a od/keep.ppm) == 640 ]] ||
            why='an existing output changed mode'
    fi
    [[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
    rm -f od/keep.ppm
    result "$what" "$why"
}

for io in "${IO_PATHS[@]}"; do
    bad_case "bad input, --io $io: nonexistent file" nope.ppm \
        --io "$io" -s 2 nope.ppm
    bad_case "bad input, --io $io: a directory" adir --io "$io" -s 2 adir
    bad_case "bad input, --io $io: /dev/null" /dev/null --io "$io" -s 2 /dev/null
    for f in "${bad_inputs[@]}"; do
        bad_case "bad input, --io $io: $f" "$f" --io "$io" -s 2 "$f"
    done
done
for f in "${bad_inputs[@]}"; do
    pipe_in=$f
    bad_case "bad input, piped: $f" - --io mmap -s -2 -
done
pipe_in=''

for f in p1.pbm p4.pbm p7.pam; do
    rm -f od/new.pnm
    sp -s 2 "$f" od/new.pnm
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/new.pnm <(pamenlarge 2 "$f") ||
        why='not pamenlarge 2 of it'
    result "PBM and PAM are read: $f, as pamenlarge 2" "$why"
done

# A stream is read whole before its header is looked at, so an endless one
# that is not an image would take all memory.  A bounded stand-in: 64 MiB of
# zeros must be refused at the magic number, before the writer is done
# (it then dies of SIGPIPE instead of exiting 0).
(
    set +o pipefail
    { head -c 67108864 /dev/zero; echo "$?" >writer.rc; } |
        { rc=0; "$SP" -s 2 - od/new.ppm 2>e || rc=$?; echo "$rc" >sp.rc; }
)
rc=$(cat sp.rc)
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: -: not a format scaleppm reads')
[[ -n $why || $(cat writer.rc) != 0 ]] ||
    why='all 64 MiB of a non-image stream were read before it was refused'
result 'bad input: a long non-image stream is refused at its magic number' "$why"

# --- outputs -------------------------------------------------------------
sp -s 2 c.ppm od/file.ppm
sp -s 2 c.ppm -
why=$(expect_status 0)
[[ -n $why ]] || cmp -s o od/file.ppm || why='stdout differs from the file'
[[ -n $why ]] || cmp -s o c2.ppm || why='output differs from pamenlarge 2'
result 'output - writes the PNM to stdout' "$why"
# --scale and --s (the server's older key, an alias) are -s.
for opt in --scale --s; do
    sp "$opt" 2 c.ppm -
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s o c2.ppm || why='output differs from pamenlarge 2'
    result "$opt 2: as -s 2" "$why"
done

for io in "${IO_PATHS[@]}"; do
    why=''
    rc=0
    # shellcheck disable=SC2002  # a pipe, not a redirected file, is the point
    cat c.ppm | "$SP" --io "$io" --timings -s 2 - od/pipe.ppm 2>e || rc=$?
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/pipe.ppm c2.ppm || why='output differs'
    [[ -n $why ]] || grep -q ' io=read ' e || why="not io=read: $(head -n 1 e)"
    result "input - from a pipe, --io $io: works, io=read" "$why"

    rm -f fifo
    mkfifo fifo
    # shellcheck disable=SC2016  # $1 and $2 are the inner shell's
    timeout 20 bash -c 'cat "$1" >"$2"' _ c.ppm fifo &
    rc=0
    timeout 20 "$SP" --io "$io" --timings -s 2 fifo od/fifo.ppm 2>e || rc=$?
    wait $! || true
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/fifo.ppm c2.ppm || why='output differs'
    [[ -n $why ]] || grep -q ' io=read ' e || why="not io=read: $(head -n 1 e)"
    result "input is a FIFO, --io $io: works, io=read" "$why"

    rc=0
    "$SP" --io "$io" --timings -s 2 - od/redir.ppm <c.ppm 2>e || rc=$?
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/redir.ppm c2.ppm || why='output differs'
    [[ -n $why ]] || grep -q " io=$io " e || why="not io=$io: $(head -n 1 e)"
    result "input - redirected from a file, --io $io: works, io=$io" "$why"

    cp c.ppm od/same.ppm
    sp --io "$io" -s 2 od/same.ppm od/same.ppm
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/same.ppm c2.ppm || why='output differs from pamenlarge 2'
    result "output over input, --io $io: right result" "$why"

    cp c.ppm od/target.ppm
    ln -sf target.ppm od/link.ppm
    sp --io "$io" -s 2 od/link.ppm od/link.ppm
    why=$(expect_status 0)
    [[ -n $why || -L od/link.ppm ]] || why='the link was replaced by a file'
    [[ -n $why ]] || cmp -s od/target.ppm c2.ppm || why='the link target is wrong'
    result "output over input through a symbolic link, --io $io" "$why"
    rm -f od/link.ppm od/target.ppm od/same.ppm
done

# Standard input already read past a first image, as the next reader of a
# stream of images finds it: from a pipe, scaleppm takes the second image;
# redirected from the same file it must take the same one, at the offset,
# not the first image again from the start of the file.
cat c.ppm g.pgm >two.ppm
first=$(stat -c %s c.ppm)
pamtopnm g.pgm >g_raw.pgm
for io in "${IO_PATHS[@]}"; do
    rc=0
    { head -c "$first" >/dev/null && "$SP" --io "$io" -s 1 - od/second.pnm; } \
        <two.ppm 2>e || rc=$?
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/second.pnm g_raw.pgm ||
        why="not the image at the offset ($(pamfile od/second.pnm | cut -f 2))"
    result "input - from a file at a non-zero offset, --io $io: the image there" "$why"
done

sp -s 2 c.ppm /dev/full
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: /dev/full: ')
[[ -n $why ]] || grep -q 'No space left' e || why="no 'No space left': $(head -n 1 e)"
result 'output /dev/full: exit 1, No space left' "$why"

rc=0
"$SP" -s 2 c.ppm - >/dev/full 2>e || rc=$?
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: -: ')
[[ -n $why ]] || grep -q 'No space left' e || why="no 'No space left': $(head -n 1 e)"
result 'output - to /dev/full: exit 1, No space left' "$why"

sp -s 2 c.ppm od/no/such/dir/x.ppm
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: od/no/such/dir/x.ppm: ')
result 'output into a nonexistent directory: exit 1' "$why"

sp -s 2 c.ppm adir
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: adir: ')
result 'output is a directory: exit 1' "$why"

rm -f ofifo
mkfifo ofifo
# shellcheck disable=SC2016  # $1 and $2 are the inner shell's
timeout 20 bash -c 'cat "$1" >"$2"' _ ofifo od/from_fifo.ppm &
rc=0
timeout 20 "$SP" -s 2 c.ppm ofifo 2>e || rc=$?
wait $! || true
why=$(expect_status 0)
[[ -n $why ]] || cmp -s od/from_fifo.ppm c2.ppm || why='output differs'
result 'output to a FIFO is written in place' "$why"

# The output's format comes from its extension, case-insensitively.
sp -s 2 c.ppm od/x.gif
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: od/x.gif: ')
[[ -n $why ]] || grep -q 'unsupported output format: the extensions written are .pnm .pam .pbm .pgm .ppm .png .jpg .jpeg .bmp .tga (none: PNM)$' e ||
    why="stderr: $(head -n 1 e)"
[[ -n $why || ! -e od/x.gif ]] || why='od/x.gif was created'
result 'output .gif: exit 1, unsupported output format, the ones written listed, no file' "$why"

# An empty OUT says so (not "Is a directory").
sp -s 2 c.ppm ''
why=$(expect_status 2)
[[ -n $why ]] || why=$(one_line 'scaleppm: OUT is an empty name: ')
result "an empty OUT: exit 2, the name said to be empty" "$why"

sp -s 2 nope.ppm od/x.gif
why=$(expect_status 1)
result 'output .gif with a missing input: exit 1' "$why"

# decode_check WHAT EXT DECODER REF: OUT.EXT decodes to exactly REF.
decode_check() {
    local what=$1 ext=$2 decoder=$3 ref=$4 why
    if ! have "$decoder"; then
        skip "$what" "$decoder not installed"
        return
    fi
    why=$(expect_status 0)
    [[ -n $why ]] || "$decoder" "od/out.$ext" >dec.pnm 2>/dev/null ||
        why="$decoder cannot read it"
    [[ -n $why ]] || cmp -s dec.pnm "$ref" ||
        why="$decoder gives other pixels than the PNM output"
    result "$what" "$why"
}

for in in c.ppm g.pgm; do
    "$SP" -s -2 "$in" od/ref.pnm
    # stb writes BMP and TGA as RGB even for gray; tgatoppm and bmptopnm
    # give PPM then, so compare with the PNM output promoted to PPM.
    ppmtoppm <od/ref.pnm >od/ref_rgb.ppm
    sp -s -2 "$in" od/out.png
    decode_check "output .png of $in decodes to the PNM output" png pngtopam od/ref.pnm
    sp -s -2 "$in" od/out.bmp
    decode_check "output .bmp of $in decodes to the PNM output" bmp bmptopnm od/ref_rgb.ppm
    sp -s -2 "$in" od/out.tga
    decode_check "output .tga of $in decodes to the PNM output" tga tgatoppm od/ref_rgb.ppm
    sp -s -2 "$in" od/out.PNG
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s od/out.PNG od/out.png || why='differs from .png'
    result "output .PNG of $in: same as .png" "$why"
done

if have jpegtopnm; then
    for in in c.ppm g.pgm; do
        for ext in jpg jpeg; do
            sp -s 3 "$in" "od/out.$ext"
            why=$(expect_status 0)
            if [[ -z $why ]]; then
                [[ $(head -c 2 "od/out.$ext" | od -An -tx1 | tr -d ' ') == ffd8 ]] ||
                    why='no JPEG SOI marker'
                [[ -n $why ]] || jpegtopnm "od/out.$ext" >dec.pnm 2>/dev/null ||
                    why='jpegtopnm cannot read it'
                [[ -n $why ]] || [[ $(pamfile -size dec.pnm) == $(pamfile -size <("$SP" -s 3 "$in" -)) ]] ||
                    why="size $(pamfile -size dec.pnm)"
            fi
            result "output .$ext of $in decodes (jpegtopnm), right size" "$why"
        done
    done
else
    skip 'output .jpg decodes' 'jpegtopnm not installed'
fi

# 16-bit inputs go to PNG as 16 bits, v*65535/maxval rounded to nearest
# (write.h; a maxval of 65535 as it is).  Checked exactly against that
# formula in awk, and against pamdepth 65535, allowed to be off by one
# (netpbm 11.1's pamdepth rounds the same way and is equal; the line says
# so when it is not).
# samples FILE: the samples of the PNM FILE, one a line.
samples() {
    pnmnoraw "$1" | tail -n +4 | tr -s ' \n' '\n' | sed '/^$/d'
}
noise 11 6 1000 20 1 >g1000.pgm
for in in g16.pgm c16.ppm g1000.pgm; do
    if ! have pngtopam; then
        skip "16-bit $in to .png" 'pngtopam not installed'
        continue
    fi
    "$SP" -s 2 "$in" od/ref16.pnm
    m=$(pnmnoraw od/ref16.pnm | sed -n 3p)
    sp -s 2 "$in" od/out16.png
    why=$(expect_status 0)
    [[ -n $why ]] || pngtopam od/out16.png >dec.pnm || why='pngtopam cannot read it'
    [[ -n $why ]] || why=$(paste <(samples od/ref16.pnm) <(samples dec.pnm) |
        awk -v m="$m" 'NF != 2 {print "sizes differ"; exit}
            {w = int(($1 * 65535 + int(m / 2)) / m)
             if (w != $2) {printf "sample %d: %d -> %d, want %d\n", NR, $1, $2, w; exit}}')
    result "output .png of $in (maxval $m) = round(v*65535/$m)" "$why"

    why=$(paste <(samples dec.pnm) \
        <(pamdepth 65535 od/ref16.pnm 2>/dev/null | samples /dev/stdin) |
        awk 'NF != 2 {print "sizes differ"; exit}
            {d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d}
            END {if (m > 1) print "differs by up to " m; else if (m) print "# off by one"}')
    if [[ $why == '# off by one' ]]; then
        why=''
        note=' (off by one somewhere: pamdepth rounds differently)'
    else
        note=' (equal)'
    fi
    result "output .png of $in within 1 of pamdepth 65535$note" "$why"
done

# Permissions: an existing output keeps its mode; a new one gets 0666 less
# the umask.
cp c.ppm od/perm.ppm
chmod 0604 od/perm.ppm
sp -s 2 c.ppm od/perm.ppm
why=$(expect_status 0)
[[ -n $why || $(stat -c %a od/perm.ppm) == 604 ]] ||
    why="mode $(stat -c %a od/perm.ppm), want 604"
result 'an existing output keeps its permissions (0604)' "$why"

rm -f od/new.ppm
rc=0
(umask 027 && "$SP" -s 2 c.ppm od/new.ppm) 2>e || rc=$?
why=$(expect_status 0)
[[ -n $why || $(stat -c %a od/new.ppm) == 640 ]] ||
    why="mode $(stat -c %a od/new.ppm), want 640"
result 'a new output gets 0666 less the umask (027 -> 0640)' "$why"

why=''
[[ -z $(temps od) ]] || why="left: $(temps od)"
result 'no temporary files left after the successful writes' "$why"

# A write that fails half way (the file size limit: EFBIG, with SIGXFSZ
# ignored) leaves the old output as it was and no temporary file.
cp c.ppm od/big.ppm
chmod 0640 od/big.ppm
rc=0
(trap '' XFSZ && ulimit -f 8 && "$SP" -s 8 c.ppm od/big.ppm) 2>e || rc=$?
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: od/big.ppm: ')
[[ -n $why ]] || cmp -s od/big.ppm c.ppm || why='the old output was changed'
[[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
result 'a write failing half way (EFBIG) leaves the old file, no temporary' "$why"

# Names that are valid but near NAME_MAX (255): the temporary name beside
# them must still fit.
for len in 251 255; do
    long=$(printf "L%.0s" $(seq 5 "$len")).ppm
    sp -s 2 c.ppm "od/$long"
    why=$(expect_status 0)
    [[ -n $why ]] || cmp -s "od/$long" c2.ppm || why='output differs'
    [[ -n $why || -z $(temps od) ]] || why="temporary files left: $(temps od)"
    result "output with a $len-character file name (NAME_MAX is 255)" "$why"
    rm -f "od/$long"
done

# A dangling symbolic link as the output is refused, as cp refuses it: the
# link stays a link and nothing is created where it points.
mkdir -p od/sub
ln -sf ../made.ppm od/sub/dangling.ppm
sp -s 2 c.ppm od/sub/dangling.ppm
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line 'scaleppm: od/sub/dangling.ppm: refused: a dangling symbolic link')
[[ -n $why || -L od/sub/dangling.ppm ]] || why='the link was replaced by a file'
[[ -n $why || ! -e od/made.ppm ]] || why='the link target was created'
result 'output through a dangling symbolic link: refused, nothing created' "$why"
rm -rf od/sub od/made.ppm

# --- --timings and -v ----------------------------------------------------
sp -s 2 c.ppm od/quiet.ppm
why=$(expect_status 0)
[[ -n $why || (! -s o && ! -s e) ]] || why='something was printed'
result 'success is silent without -v or --timings' "$why"

sp -s 2 c.ppm - 
why=$(expect_status 0)
[[ -n $why || ! -s e ]] || why='stderr is not empty'
result 'success to stdout: nothing on stderr' "$why"

for io in "${IO_PATHS[@]}"; do
    sp --io "$io" --timings -t 4 -s 2 c.ppm od/t.ppm
    why=$(expect_status 0)
    [[ -n $why || ! -s o ]] || why='stdout is not empty'
    [[ -n $why || $(lines e) == 1 ]] || why="$(lines e) lines on stderr"
    [[ -n $why ]] || grep -Eq "(^| )io=$io( |$)" e || why="io= is not $io"
    [[ -n $why ]] || grep -Eq '(^| )threads=4( |$)' e || why='threads= is not 4'
    for phase in load scale release write; do
        for key in ns minflt majflt; do
            [[ -n $why ]] || grep -Eq "(^| )${phase}_$key=[0-9]+( |$)" e ||
                why="no ${phase}_$key=N"
        done
    done
    result "--timings --io $io: one key=value line, all keys" "$why"
done

if have python3; then
    sp --timings=json -s -2 c.ppm od/t.ppm
    why=$(expect_status 0)
    [[ -n $why || $(lines e) == 1 ]] || why="$(lines e) lines on stderr"
    [[ -n $why ]] || why=$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
want = ["io", "threads"] + [p + "_" + k for p in ("load", "scale", "release", "write")
                            for k in ("ns", "minflt", "majflt")]
miss = [k for k in want if k not in d]
if miss:
    print("missing", miss)
elif d["io"] != "pread" or not all(isinstance(d[k], int) for k in want[1:]):
    print("bad values", d)
' e 2>&1 | tail -n 1) || true
    result '--timings=json: one line of valid JSON with all keys' "$why"
else
    skip '--timings=json is valid JSON' 'python3 not installed'
fi

# --- --no-output: the study's span, nothing written ------------------------
usage_case '--no-output with OUT' --no-output -s 2 c.ppm od/u.ppm
usage_case '--no-output in a batch' --no-output -s 2 -o od/ c.ppm
usage_case '--no-output with --quality' --no-output --quality 50 -s 2 c.ppm

# timing_keys FILE: the keys of the one --timings line in FILE, sorted.
timing_keys() {
    tr ' ' '\n' <"$1" | sed -n 's/=.*//p' | sort
}

# timing_value FILE KEY: KEY's value in FILE's --timings line.
timing_value() {
    tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}

# Every path and thread count: the same record as a run that writes od/n.ppm
# (the same keys; the same input, sizes, path and threads), with output=none
# and the write phase zero; nothing on stdout, and no file made where it
# runs.
mkdir nodir
for io in "${IO_PATHS[@]}" auto; do
    for t in 1 3; do
        sp --io "$io" -t "$t" --timings -s -2 c.ppm od/n.ppm
        mv e wrote.e
        (cd nodir && "$SP" --io "$io" -t "$t" --timings --no-output -s -2 \
            ../c.ppm >../o 2>../e) && rc=0 || rc=$?
        why=$(expect_status 0)
        [[ -n $why || ! -s o ]] || why='stdout is not empty'
        [[ -n $why || -z $(ls -A nodir) ]] || why="it made $(ls -A nodir)"
        [[ -n $why || $(lines e) == 1 ]] || why="$(lines e) lines on stderr"
        [[ -n $why ]] || cmp -s <(timing_keys e) <(timing_keys wrote.e) ||
            why="keys differ: $(diff <(timing_keys e) <(timing_keys wrote.e) | tr '\n' ' ')"
        for key in output write_ns write_minflt write_majflt; do
            want=0
            [[ $key == output ]] && want=none
            [[ -n $why || $(timing_value e "$key") == "$want" ]] ||
                why="$key=$(timing_value e "$key"), want $want"
        done
        for key in io threads factor in out codec status; do
            [[ -n $why || $(timing_value e "$key") == "$(timing_value wrote.e "$key")" ]] ||
                why="$key=$(timing_value e "$key"), written: $(timing_value wrote.e "$key")"
        done
        [[ -n $why || $(timing_value e scale_ns) -gt 0 ]] || why='scale_ns=0'
        result "--no-output --io $io -t $t: the written run's record, write 0, nothing made" "$why"
    done
done

# A bad input fails as it does for a run that writes: the same line and
# status, and no file.
for io in "${IO_PATHS[@]}"; do
    sp --io "$io" -s 2 hdr6.ppm od/bad.ppm
    mv e wrote.e
    want=$rc
    sp --io "$io" -s 2 --no-output hdr6.ppm
    why=$(expect_status "$want")
    [[ -n $why ]] || cmp -s e wrote.e ||
        why="stderr \"$(head -n 1 e)\", written: \"$(head -n 1 wrote.e)\""
    [[ -n $why || ! -e od/bad.ppm ]] || why='the written run left od/bad.ppm'
    result "--no-output --io $io, a raster cut short: the written run's error" "$why"
done

# Standard input (a pipe) and a stream of images: every image scaled.
cat c.ppm g.pgm c.ppm >three-no.ppm
pipe_in=three-no.ppm
sp -v --no-output -s 2
pipe_in=''
why=$(expect_status 0)
[[ -n $why || ! -s o ]] || why='stdout is not empty'
[[ -n $why ]] || grep -q '3 images' e || why="-v does not say 3 images: $(tr '\n' '|' <e)"
[[ -n $why ]] || grep -q 'no output' e || why="-v does not say no output: $(head -n 1 e)"
result '--no-output from a pipe, three images: each scaled, nothing written' "$why"

if have python3; then
    sp --timings=json --no-output -s 3 c.ppm
    why=$(expect_status 0)
    [[ -n $why ]] || why=$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
if d["output"] is not None or d["write_ns"] != 0 or not d["scale_ns"] > 0:
    print("output, write_ns or scale_ns wrong:", d)
' e 2>&1 | tail -n 1) || true
    result '--no-output --timings=json: output null, write_ns 0' "$why"
else
    skip '--no-output --timings=json' 'python3 not installed'
fi

# Multi-image streams: every image scaled, as pamscale does, from a file
# on every I/O path, and from a pipe.
cat c.ppm g.pgm c.ppm >three.ppm
cat c2.ppm <(pamenlarge 2 g.pgm) c2.ppm >three2.pnm
for io in "${IO_PATHS[@]}"; do
    sp -v --io "$io" -s 2 three.ppm od/three.pnm
    why=$(expect_status 0)
    [[ -n $why ]] || grep -q '3 images' e || why="-v does not say 3 images: $(tr '\n' '|' <e)"
    [[ -n $why ]] || cmp -s od/three.pnm three2.pnm || why='not the three images scaled'
    result "a stream of three images, --io $io: each scaled" "$why"
done
rc=0
# shellcheck disable=SC2002  # a pipe, not a redirected file, is the point
cat three.ppm | "$SP" -s 2 >od/three.pnm 2>e || rc=$?
why=$(expect_status 0)
[[ -n $why ]] || cmp -s od/three.pnm three2.pnm || why='not the three images scaled'
result 'a stream of three images from a pipe: each scaled' "$why"

printf 'P2\n2 1\n255\n7 9\n' >plain1.pgm
cat plain1.pgm plain1.pgm >plain2.pgm
sp -v -s 1 plain2.pgm od/p.pgm
why=$(expect_status 0)
[[ -n $why ]] || grep -q '2 images' e || why="-v does not say 2 images: $(tr '\n' '|' <e)"
[[ -n $why ]] || cmp -s od/p.pgm <(pamtopnm plain1.pgm; pamtopnm plain1.pgm) ||
    why='output is not the two images'
result 'two plain images: both converted' "$why"
rc=0
# shellcheck disable=SC2002  # a pipe, as above
cat plain2.pgm | "$SP" -s 1 >od/p.pgm 2>e || rc=$?
why=$(expect_status 0)
[[ -n $why ]] || cmp -s od/p.pgm <(pamtopnm plain1.pgm; pamtopnm plain1.pgm) ||
    why='output is not the two images'
result 'two plain images from a pipe: both converted' "$why"

sp -s 2 three.ppm od/three.png
why=$(expect_status 1)
[[ -n $why ]] || grep -q 'holds one' e || why="$(head -n 1 e)"
[[ -n $why || ! -e od/three.png ]] || why='a PNG was left'
result 'a stream of images into PNG: refused, no file' "$why"

sp -v -s 2 c.ppm od/v.ppm
why=$(expect_status 0)
[[ -n $why ]] || ! grep -q 'after the last image' e || why='mentions trailing data that is not there'
[[ -n $why ]] || grep -q 'c.ppm' e || why='does not name the input'
result '-v on one image: describes it, no trailing-data note' "$why"

# --- threads -------------------------------------------------------------
sp --timings -t 1024 -s 1 rows3.ppm od/t3.ppm
why=$(expect_status 0)
[[ -n $why ]] || grep -Eq '(^| )threads=3( |$)' e || why="$(head -n 1 e)"
[[ -n $why ]] || cmp -s od/t3.ppm rows3.ppm || why='output differs from the input'
result '-t 1024 on a 3-row output: works, threads=3' "$why"

sp --timings -t 1024 -s -2 c.ppm od/t9.ppm
why=$(expect_status 0)
[[ -n $why ]] || grep -Eq '(^| )threads=9( |$)' e || why="$(head -n 1 e)"
result '-t 1024 on a 9-row reduced output: threads=9' "$why"

noise 451 300 255 40 3 >c451.ppm
"$SP" -t 1 -s 4 c451.ppm od/t1.ppm
sp --timings -t 1024 -s 4 c451.ppm od/t1024.ppm
why=$(expect_status 0)
# A thread an item, an item at least a source row (4 output rows): 300.
[[ -n $why ]] || grep -Eq '(^| )threads=300( |$)' e || why="$(head -n 1 e)"
[[ -n $why ]] || cmp -s od/t1.ppm od/t1024.ppm || why='differs from -t 1'
result '-t 1024 on a 1200-row enlarged output: threads=300, same bytes as -t 1' "$why"
rm -f od/t1.ppm od/t1024.ppm

# The default is one thread per CPU this process may use (nproc, not
# getconf's CPUs online), clamped to the output's rows.
cpus=$(nproc)
((cpus <= 1024)) || cpus=1024
sp --timings -s 2 rows3.ppm od/t6.ppm
why=$(expect_status 0)
want=$((cpus < 6 ? cpus : 6))
[[ -n $why ]] || grep -Eq "(^| )threads=$want( |\$)" e || why="$(head -n 1 e)"
result "default threads ($cpus CPUs) on a 6-row output: threads=$want" "$why"

sp --timings -s 4 c451.ppm od/tdef.ppm
why=$(expect_status 0)
[[ -n $why ]] || grep -Eq "(^| )threads=$cpus( |\$)" e || why="$(head -n 1 e)"
[[ -n $why ]] || "$SP" -t 1 -s 4 c451.ppm od/t1.ppm
[[ -n $why ]] || cmp -s od/t1.ppm od/tdef.ppm || why='differs from -t 1'
result "default threads ($cpus CPUs) on a 1200-row output: threads=$cpus, same bytes as -t 1" "$why"
rm -f od/t1.ppm od/tdef.ppm

# threads_in LO HI: empty, or why the last run's threads= is not in LO..HI.
threads_in() {
    local n
    n=$(grep -Eo '(^| )threads=[0-9]+' e | head -n 1 | cut -d= -f2)
    [[ -n $n ]] && ((n >= $1 && n <= $2)) ||
        printf 'threads=%s, want %s..%s: %s' "$n" "$1" "$2" "$(head -n 1 e)"
}
if have taskset; then
    rc=0
    taskset -c "$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')" \
        "$SP" --timings -s 4 c451.ppm od/tdef.ppm 2>e </dev/null || rc=$?
    why=$(expect_status 0)
    [[ -n $why ]] || why=$(threads_in 1 1)
    result "default threads on one CPU (taskset): 1" "$why"
    rm -f od/tdef.ppm
else
    skip "default threads on one CPU" "no taskset"
fi

sp --help
why=$(expect_status 0)
[[ -n $why ]] || grep -Eq 'default: one per CPU it may use\)' o ||
    why="--help does not give the default: $(grep -e '--threads' o)"
result "--help gives the default threads: one per CPU it may use" "$why"

# --- what reaches the terminal (issue 25) --------------------------------
# Bytes from a header (in libnetpbm's words), a file name, or an argument
# echoed by a usage error never reach stderr as they are: no C0 control
# but each line's newline, no DEL, no C1 control (U+0080..U+009F, or such
# a byte alone), nothing that is not UTF-8; and printable UTF-8 shows as
# it is.
# tame_why: empty, or why the last run's stderr holds what a terminal
# could obey.
tame_why() {
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' e; then
        printf 'a control byte on stderr: %s' "$(od -c e | head -n 3 | tr '\n' ' ')"
    elif LC_ALL=C grep -qP '\xc2[\x80-\x9f]' e; then
        printf 'a C1 control on stderr: %s' "$(od -c e | head -n 3 | tr '\n' ' ')"
    elif ! iconv -f UTF-8 -t UTF-8 e >/dev/null 2>&1; then
        printf 'stderr is not UTF-8: %s' "$(od -c e | head -n 3 | tr '\n' ' ')"
    fi
}
nasty=$'\e]0;owned\a\e[2J\e[1A\r\x7f\xc2\x9b31m\x9b2J\xe2\x80\xae'
printf 'P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n%s\nENDHDR\n\001\002' \
    "$nasty" >esc_header.pam
printf 'P6\n%s 1\n255\n\001\002\003' "$nasty" >esc_size.ppm
cp c.ppm "named$nasty.ppm"
printf 'junk\n' >"junk$nasty.ppm"
# tame_case WHAT WANT_RC ARGS...: scaleppm ARGS exits WANT_RC, with a
# tame stderr of one line.
tame_case() {
    local what=$1 want=$2 why
    shift 2
    sp "$@"
    why=$(expect_status "$want")
    [[ -n $why ]] || why=$(one_line 'scaleppm: ')
    [[ -n $why ]] || why=$(tame_why)
    result "escaped on stderr: $what" "$why"
}
tame_case 'a header line with escapes (libnetpbm quotes it)' 1 -s 2 \
    esc_header.pam od/u.ppm
tame_case 'a size with escapes' 1 -s 2 esc_size.ppm od/u.ppm
tame_case 'a missing input named with escapes' 1 -s 2 "gone$nasty.ppm" \
    od/u.ppm
tame_case 'a bad input named with escapes' 1 -s 2 "junk$nasty.ppm" od/u.ppm
tame_case 'an output named with escapes' 1 -s 2 c.ppm "od/no/$nasty.ppm"
tame_case 'an output extension with escapes' 1 -s 2 c.ppm "od/u.$nasty"
tame_case '-s with escapes' 2 -s "$nasty" c.ppm od/u.ppm
tame_case '--io with escapes' 2 --io "$nasty" -s 2 c.ppm od/u.ppm
tame_case '--timings= with escapes' 2 --timings="$nasty" -s 2 c.ppm
tame_case 'an unknown long option with escapes' 2 "--$nasty" -s 2 c.ppm
tame_case 'an unknown short option ESC' 2 $'-\e' -s 2 c.ppm
tame_case 'an unknown short option CSI' 2 $'-\x9b' -s 2 c.ppm
tame_case 'a third file with escapes' 2 -s 2 c.ppm od/u.ppm "$nasty"
tame_case 'an -o pattern with escapes' 2 -s 2 -o "od/$nasty" c.ppm
mkdir -p od/esc
sp -q -s 2 -o od/esc/ c.ppm "junk$nasty.ppm"
why=$(expect_status 1)
[[ -n $why ]] || why=$(one_line "scaleppm: junk")
[[ -n $why ]] || why=$(tame_why)
[[ -n $why ]] || [[ -s od/esc/c.ppm ]] || why='c.ppm was not scaled'
result 'escaped on stderr: a batch input named with escapes' "$why"
sp -s 2 $'caf\xc3\xa9 \xe2\x82\xac.ppm' od/u.ppm
why=$(expect_status 1)
[[ -n $why ]] || grep -q $'caf\xc3\xa9 \xe2\x82\xac.ppm' e ||
    why="the name is not shown as it is: $(head -n 1 e)"
result 'printable UTF-8 in a name (café €) shows as it is' "$why"
sp -v -s 2 "named$nasty.ppm" od/u.ppm
why=$(expect_status 0)
[[ -n $why ]] || why=$(tame_why)
result 'escaped on stderr: -v with an input named with escapes' "$why"
rm -f od/u.ppm

# --- an encoder out of memory (issue 25) ---------------------------------
# Under address-space limits from where scaleppm can start up to where the
# job succeeds, every run either works or exits 1 with one line
# "scaleppm: FILE: Cannot allocate memory", leaves no output nor temporary
# file, and never aborts (stb_image_write asserted on a failed growth of
# its PNG buffers: exit 134).  The same for a PNM output converted on the
# way (.pgm from colour), and for a batch, in which the large file's
# failure must leave the small files' outputs written.
# as_run KB ARGS...: scaleppm ARGS under an address space of KB KiB, one
# thread; rc, o and e as sp.
as_run() {
    local kb=$1
    shift
    rc=0
    # (not exec'd: a crash is the inner shell's to report, into e)
    bash -c 'ulimit -v "$1" && shift && "$@"; exit $?' _ "$kb" "$SP" -t 1 \
        "$@" >o 2>e </dev/null || rc=$?
}
# oom_why OUT...: empty, or why the last run is not a clean failure: exit
# 1, each line on stderr "scaleppm: FILE: Cannot allocate memory" for an
# input or output, no OUT and no temporary file in od/.
oom_why() {
    local out line
    expect_status 1
    while IFS= read -r line; do
        [[ $line =~ ^scaleppm:\ (big|small[12])\.ppm:\ Cannot\ allocate\ memory$ ||
            $line =~ ^scaleppm:\ od/[a-z0-9./]*:\ Cannot\ allocate\ memory$ ||
            $line =~ ^scaleppm:\ [0-9]+\ scaled ]] ||
            { printf 'stderr: %s' "$line"; return; }
    done <e
    for out; do
        [[ ! -e $out ]] || { printf '%s was left' "$out"; return; }
    done
    [[ -z $(temps od) ]] || printf 'temporary files left: %s' "$(temps od)"
}
noise 300 300 255 61 3 >big.ppm
noise 20 20 255 62 3 >small1.ppm
noise 20 20 255 63 3 >small2.ppm
mkdir -p od/oom
# start: the smallest limit, in 256 KiB steps, at which scaleppm starts
start=''
for ((kb = 512; kb <= 65536; kb += 256)); do
    # (the inner shell reports a crash there, to /dev/null)
    if [[ $(bash -c 'ulimit -v "$1" && "$2" --version >/dev/null 2>&1
                     echo $?' _ "$kb" "$SP" 2>/dev/null) == 0 ]]; then
        start=$kb
        break
    fi
done
as_run 1048576 -s 2 big.ppm od/m.png
if [[ -z $start ]] || ((rc != 0)); then
    skip 'an encoder out of memory' 'no address-space limit lets it run here (a sanitizer build?)'
else
    for out in m.png m.jpg m.pgm batch; do
        why='' failed=0 at_out=0
        for ((kb = start; kb <= start + 131072; kb += 256)); do
            rm -f "od/$out" od/oom/*
            if [[ $out == batch ]]; then
                as_run "$kb" -q -s 2 -o od/oom/ --format png small1.ppm \
                    big.ppm small2.ppm
                # A batch that cannot start its one worker thread says so.
                grep -q 'cannot run worker threads' e && continue
            else
                as_run "$kb" -s 2 big.ppm "od/$out"
            fi
            ((rc == 0)) && break
            failed=$((failed + 1))
            why=$(oom_why "od/$out" od/oom/big.png)
            if [[ -n $why ]]; then
                why="under ulimit -v $kb: $why"
                break
            fi
            if grep -q "^scaleppm: od/.*$out" e ||
                { [[ $out == batch ]] && grep -q '^scaleppm: od/oom/big.png' e &&
                    [[ -s od/oom/small1.png && -s od/oom/small2.png ]]; }; then
                at_out=$((at_out + 1))
            fi
        done
        ((rc == 0)) || [[ -n $why ]] || why="fails even under ulimit -v $kb"
        # The PNM writer and the JPEG encoder stream in little memory: at
        # 256 KiB steps either may never be the one to fail.
        [[ -n $why || $out == m.pgm || $out == m.jpg ]] || ((at_out > 0)) ||
            why='no limit failed at the output (with the small files written)'
        result "-s 2 to $out under ulimit -v $start.. KiB: each run works or fails in one line ($failed failed, $at_out at the output)" "$why"
    done
fi

# --- genimage, when it is built ------------------------------------------
if [[ -n $GEN ]]; then
    "$GEN" -o gen.ppm 41 29
    "$GEN" -p -g -m 1000 -o genp.pgm 17 9
    for f in gen.ppm genp.pgm; do
        sp --io mmap -s 3 "$f" od/gen3.pnm
        why=$(expect_status 0)
        [[ -n $why ]] || pamenlarge 3 "$f" | cmp -s - od/gen3.pnm ||
            why='differs from pamenlarge 3'
        result "genimage $f: -s 3 equals pamenlarge 3" "$why"
    done
else
    skip 'genimage inputs' 'genimage not given or not working'
fi

finish
