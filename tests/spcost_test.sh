#!/usr/bin/env bash
# spcost --quick: every unit the cost model reads is there, a row for
# each of its 3 repeats, each positive (the share of huge pages granted
# may be 0; the units of 10 threads at once, net of the gate measured
# beside them, may be below 0 where the gate's spread is more than the
# work's), and the CSV has its header.  Usage: spcost_test.sh SPCOST
set -euo pipefail
spcost=${1:?usage: spcost_test.sh SPCOST}
out=$("$spcost" --quick)
fail=0
[[ $(head -n 1 <<<"$out") == unit,value,unit_of_measure,rep,bytes ]] || {
    echo "FAIL: header: $(head -n 1 <<<"$out")"
    fail=1
}
units=(read_fresh read_touched read_process anon_fault_process free_process
    cpus wake_remote switch_local write_cached memcpy anon_fault_4k
    anon_fault_2m thp_granted madvise_anon free_large file_fault_large file_pages_per_fault_large
    file_fault_page_large file_fault_small file_pages_per_fault_small
    file_fault_page_small madvise_file_large madvise_file_small madvise_call
    madvise_call_shared syscall pread1 mmap_munmap thread reduce2_px
    reduce8_px enlarge2_byte enlarge8_byte gate_t10 reduce2_px_t10
    reduce8_px_t10 enlarge2_byte_t10 enlarge8_byte_t10 file_fault_large_t10
    file_fault_small_t10 anon_fault_2m_t10 madvise_file_large_busy
    madvise_file_small_busy read_cold mmap_cold_fault
    mmap_cold_pages_per_fault anon_fault_4k_t10 enlarge2_byte_writing
    first_malloc first_malloc_faults load_open_first load_map_first
    release_unmap_first
    enlarge8_byte_writing)
for u in "${units[@]}"; do
    rows=$(awk -F, -v u="$u" '$1 == u' <<<"$out")
    if [[ $(grep -c . <<<"$rows") != 3 ]]; then
        echo "FAIL: $u: $(grep -c . <<<"$rows") rows"
        fail=1
        continue
    fi
    min=0
    [[ $u == thp_granted ]] && min=-1
    [[ $u == *_t10 && $u != gate_t10 ]] && min=-1e12
    awk -F, -v m="$min" '!($2 > m && $4 == NR) { bad = 1 } END { exit bad }' <<<"$rows" || {
        echo "FAIL: $u: $rows"
        fail=1
    }
done
n=$(($(grep -c . <<<"$out") - 1))
((n == 3 * ${#units[@]})) || {
    echo "FAIL: $n rows, expected 3 for each of ${#units[@]} units"
    fail=1
}
((fail == 0)) && echo "spcost: ${#units[@]} units, all in range"
exit "$fail"
