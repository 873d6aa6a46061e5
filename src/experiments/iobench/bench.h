/* bench.h: what the iobench experiments share: options, the CSV row every
 * experiment prints, and small helpers (test files, checksums, cache
 * eviction, CPU time).
 *
 * Every experiment prints rows of one fixed CSV header, BENCH_HEADER:
 *   experiment  the suite name ("zero-page", ...)
 *   case        a variant within it ("seq-warm", "round", ...)
 *   param       its numeric parameter (block size in bytes, round number,
 *               ...), or 0
 *   method      what is measured ("read", "mmap", "memset", ...), or two
 *               of them, "a/b", in a ratio row
 *   metric      "throughput", "bandwidth", "time", "latency", "real",
 *               "user", "sys", "ratio", "limit"
 *   value       the figure, in
 *   unit        "GB/s", "s", "ns/op", "x", "B"
 *   seed        the source document's figure for this row, same unit, or
 *               empty
 *   check       "ok" once the data was verified (the bytes read equal the
 *               file's, the copy equals the source, the page is zero);
 *               an experiment whose check fails returns non-zero.
 *   file_bytes  the size of the file the row's measurement read (the
 *               copy's source, the database), or empty: none (zero-page)
 *   threads     the threads that ran the measurement: 1, every experiment
 *               runs on one (copy's cp is one process, waited for)
 * A measurement repeated (--reps) gives one row a repeat, all with the same
 * experiment, case, param, method and metric. */
#ifndef SP_BENCH_H
#define SP_BENCH_H

#include <stdint.h>
#include <stdio.h>

#define BENCH_HEADER \
    "experiment,case,param,method,metric,value,unit,seed,check,file_bytes," \
    "threads"

struct bench_opts {
    const char *dir;   /* where the large files go (and are deleted) */
    uint64_t size;     /* file size for syscall-vs-mmap, random-access, copy;
                          0: the experiment's default */
    uint64_t blocks;   /* block count for zero-page; 0: default */
    uint64_t buf;      /* read/write buffer of the copy; 0: 1 MiB */
    int quick;         /* seconds, not minutes: tiny sizes, one repetition */
    int reps;          /* runs of each measured cell, one row each; 0: the
                          experiment's default */
    int fsync;         /* copy: BENCH_FSYNC_YES or _NO, or both (their OR,
                          or 0) */
    int keep;          /* leave the files the experiments read in dir (for
                          run_experiments.sh's env.txt); made files are
                          deleted all the same */
    uint64_t seed;     /* for every random choice */
};

#define BENCH_FSYNC_YES 1
#define BENCH_FSYNC_NO 2

struct bench_row {
    const char *experiment, *kase, *method, *metric, *unit;
    double param, value;
    double seed;       /* NaN: none */
    int checked;       /* the data was verified */
    uint64_t file_bytes;  /* the size of the file read; 0: none */
};

/* bench_warn: a line on stderr, "PROGRAM: " and FMT's, PROGRAM the name
 * this program was run by (scaleppm-iobench where installed). */
void bench_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bench_print: ROW as one CSV line on OUT (flushed). */
void bench_print(FILE *out, const struct bench_row *row);

/* bench_file: create PATH of SIZE bytes of deterministic pseudo-random
 * content from SEED (written in 1 MiB writes, written back as it goes,
 * then fsync'd).  Returns 0 or an errno value. */
int bench_file(const char *path, uint64_t size, uint64_t seed);

/* bench_sum: a 64-bit checksum of LEN bytes; SUM chains calls. */
uint64_t bench_sum(uint64_t sum, const void *p, size_t len);

/* bench_file_sum: bench_sum of the whole file at PATH into *SUM, read with
 * plain read()s.  Returns 0 or an errno value. */
int bench_file_sum(const char *path, uint64_t *sum);

/* bench_evict: drop PATH from the page cache and check that it is gone.
 * Returns 0, or -1 when pages stay cached (tmpfs cannot evict). */
int bench_evict(const char *path);

/* bench_random: splitmix64, the one generator of every experiment. */
uint64_t bench_random(uint64_t *state);

/* bench_cpu: user and system CPU time so far of the process and of its
 * waited-for children (exp_copy.c's cp), in ns. */
void bench_cpu(uint64_t *user_ns, uint64_t *sys_ns);

/* bench_remove: delete PATH, a file the experiment read, unless O->keep
 * (then it stays for the caller to record and delete).  Returns 0 or an
 * errno value (a file already gone is none). */
int bench_remove(const struct bench_opts *o, const char *path);

/* bench_path: DIR/NAME into BUF (PATH_MAX). */
void bench_path(char *buf, const struct bench_opts *o, const char *name);

/* bench_memory_limit: the memory limit of the process's own memory cgroup
 * (cgroup v2 memory.max or v1 memory.limit_in_bytes), or UINT64_MAX when
 * it has none or none can be read. */
uint64_t bench_memory_limit(void);

/* bench_reps: O->reps, or DEF when the option was not given. */
int bench_reps(const struct bench_opts *o, int def);

/* The experiments: each prints its rows on OUT and returns 0, or 1 after
 * one line on stderr saying what failed. */
int exp_syscall_vs_mmap(const struct bench_opts *o, FILE *out);
int exp_zero_page(const struct bench_opts *o, FILE *out);
int exp_random_access(const struct bench_opts *o, FILE *out);
int exp_copy(const struct bench_opts *o, FILE *out);
int exp_cdb(const struct bench_opts *o, FILE *out);

/* exp_syscall_bandwidth: part of syscall-vs-mmap: rows of the copy
 * bandwidth of read() (the kernel's copy), of memcpy() from a mapping and
 * of memcpy() between anonymous buffers, over the cached file PATH (open
 * on FD, SIZE bytes).  Returns as the experiments do. */
int exp_syscall_bandwidth(const struct bench_opts *o, FILE *out, int fd,
                          const char *path, uint64_t size);

#endif
