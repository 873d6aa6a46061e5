/* sprun: the peer benchmark's runner (run_experiments.sh --suite peers).
 *   sprun [-i FILE] [-o FILE] [-t SECONDS] -- CMD [ARGS...]
 *       run CMD with stdin from FILE and stdout to FILE (created 0644,
 *       truncated) when given, else /dev/null, and print "WALL_NS
 *       MAXRSS_KB EXIT_STATUS":
 *       CLOCK_MONOTONIC from just before fork() to just after wait4(), and
 *       the child's peak resident set from wait4()'s rusage (the figure
 *       /usr/bin/time -v calls "Maximum resident set size").  A child
 *       killed by signal S has EXIT_STATUS 128+S.  With -t, a command
 *       still running after SECONDS is killed (SIGKILL) and that is said.
 *       Exits 1, with one line on stderr, when the command could not run
 *       or did not exit 0.
 *   sprun --memcpy
 *       print the single-thread memcpy rate, bytes copied per second, of
 *       each of 5 copies of a 256 MiB buffer into another, both
 *       pre-faulted: one line a copy.  Their median is the report's to
 *       take (scripts/spreport), not this tool's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"
#include "timing.h"

#define COPY_BYTES ((size_t)256 << 20)
#define COPY_RUNS 5

static int usage(void)
{
    fprintf(stderr, "usage: sprun [-i FILE] [-o FILE] [-t SECONDS] -- CMD "
            "[ARGS...] | "
            "sprun --memcpy\n");
    return 2;
}

/* The copy goes through a volatile pointer so that the compiler cannot see
 * a memcpy into a buffer that is freed unread, and drop it. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static int memcpy_rate(void)
{
    unsigned char *src = malloc(COPY_BYTES), *dst = malloc(COPY_BYTES);
    long long t[COPY_RUNS];

    if (src == NULL || dst == NULL) {
        fprintf(stderr, "sprun: --memcpy: cannot allocate 2 x %zu bytes\n",
                COPY_BYTES);
        free(src);
        free(dst);
        return 1;
    }
    /* Pre-fault both (non-zero source: no shared zero page behind it). */
    memset(src, 0x5a, COPY_BYTES);
    memset(dst, 0, COPY_BYTES);
    for (int i = 0; i < COPY_RUNS; i++) {
        uint64_t t0 = sp_now_ns();
        copy_fn(dst, src, COPY_BYTES);
        t[i] = (long long)(sp_now_ns() - t0);
        src[i]++;  /* each copy moves different bytes */
    }
    free(src);
    free(dst);
    for (int i = 0; i < COPY_RUNS; i++)
        if (t[i] <= 0) {
            fprintf(stderr, "sprun: --memcpy: clock did not advance\n");
            return 1;
        }
    for (int i = 0; i < COPY_RUNS; i++)
        printf("%.0f\n", (double)COPY_BYTES * 1e9 / (double)t[i]);
    return 0;
}

/* move_fd FD TARGET: FD becomes TARGET, open across exec. */
static int move_fd(int fd, int target)
{
    if (fd == target)
        return fcntl(fd, F_SETFD, 0);
    return dup2(fd, target) < 0 ? -1 : 0;
}

/* open_redirect PATH OUTPUT: a descriptor for the child's stdin or stdout,
 * or -1 with the reason printed. */
static int open_redirect(const char *path, int output)
{
    int fd = output
                 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                 : open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        fprintf(stderr, "sprun: %s: %s\n", path, strerror(errno));
    return fd;
}

static volatile sig_atomic_t child, timed_out;

static void on_alarm(int sig)
{
    (void)sig;
    timed_out = 1;
    if (child > 0)
        kill((pid_t)child, SIGKILL);
}

/* What the command line asks for. */
struct opts {
    const char *in, *out;  /* the child's stdin and stdout, or NULL */
    unsigned limit;        /* seconds before SIGKILL; 0: none */
    char **cmd;            /* the command after "--" */
};

/* parse: ARGV into *O; 0, or usage()'s 2 after its line on stderr. */
static int parse(int argc, char **argv, struct opts *o)
{
    int c;

    opterr = 0;  /* the usage line is the only message */
    /* "+": options end at the first word that is not one */
    while ((c = getopt(argc, argv, "+i:o:t:")) != -1) {
        switch (c) {
        case 'i':
            o->in = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 't':
            o->limit = (unsigned)strtoul(optarg, NULL, 10);
            if (o->limit == 0)
                return usage();
            break;
        default:
            return usage();
        }
    }
    /* the command comes only after "--", and there must be one */
    if (optind <= 1 || optind >= argc || strcmp(argv[optind - 1], "--") != 0)
        return usage();
    o->cmd = argv + optind;
    return 0;
}

/* start: fork, and in the child move IN_FD and OUT_FD (either -1) to
 * stdin and stdout and exec O's command; an exec that fails writes its
 * errno to REPORT.  The child's pid, or -1 with the reason printed. */
static pid_t start(const struct opts *o, int in_fd, int out_fd, int report)
{
    pid_t pid = fork();
    int err;

    if (pid < 0)
        fprintf(stderr, "sprun: fork: %s\n", strerror(errno));
    if (pid != 0)
        return pid;
    if ((in_fd >= 0 && move_fd(in_fd, STDIN_FILENO) != 0) ||
        (out_fd >= 0 && move_fd(out_fd, STDOUT_FILENO) != 0)) {
        err = errno;
    } else {
        execvp(o->cmd[0], o->cmd);
        err = errno;
    }
    if (write(report, &err, sizeof err) < 0) {
        /* Nothing left to tell it with: the exit status says 127. */
    }
    _exit(127);
}

/* finish: print the figures of a child that ran (wall clock WALL, STATUS,
 * RU) and say what went wrong with it; the exit status of sprun. */
static int finish(const struct opts *o, long long wall, int status,
                  const struct rusage *ru)
{
    int code = WIFEXITED(status) ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;

    printf("%lld %ld %d\n", wall, ru->ru_maxrss, code);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "sprun: stdout: %s\n", strerror(errno));
        return 1;
    }
    if (timed_out) {
        fprintf(stderr, "sprun: %s: still running after %u s: killed\n",
                o->cmd[0], o->limit);
        return 1;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "sprun: %s: killed by signal %d (%s)\n", o->cmd[0],
                WTERMSIG(status), strsignal(WTERMSIG(status)));
        return 1;
    }
    if (code != 0) {
        fprintf(stderr, "sprun: %s: exit status %d\n", o->cmd[0], code);
        return 1;
    }
    return 0;
}

/* run: O's command with its redirections, timed; the exit status. */
static int run(const struct opts *o, int in_fd, int out_fd)
{
    int status, err, report[2];
    struct rusage ru;
    uint64_t t0;
    long long wall;
    pid_t pid;
    size_t got;
    sp_status st;

    /* A close-on-exec pipe carries the child's errno when exec fails. */
    if (pipe2(report, O_CLOEXEC) != 0) {
        fprintf(stderr, "sprun: pipe: %s\n", strerror(errno));
        return 1;
    }
    fflush(NULL);

    t0 = sp_now_ns();
    pid = start(o, in_fd, out_fd, report[1]);
    if (pid < 0)
        return 1;
    close(report[1]);
    if (o->limit > 0) {
        struct sigaction sa;

        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, NULL);
        child = pid;
        alarm(o->limit);
    }
    if (in_fd >= 0)
        close(in_fd);
    if (out_fd >= 0)
        close(out_fd);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "sprun: wait4: %s\n", strerror(errno));
            return 1;
        }
    }
    wall = (long long)(sp_now_ns() - t0);
    alarm(0);

    st = sp_sys_read_full(report[0], &err, sizeof err, &got);
    close(report[0]);
    if (st == SP_OK && got == sizeof err) {
        fprintf(stderr, "sprun: %s: %s\n", o->cmd[0], strerror(err));
        return 1;
    }
    return finish(o, wall, status, &ru);
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    int in_fd = -1, out_fd = -1;

    if (argc == 2 && strcmp(argv[1], "--memcpy") == 0)
        return memcpy_rate();
    if (parse(argc, argv, &o) != 0)
        return 2;
    /* Opened before the clock starts: the redirections are the runner's
     * cost, not the command's. */
    if (o.in != NULL && (in_fd = open_redirect(o.in, 0)) < 0)
        return 1;
    if (o.out != NULL && (out_fd = open_redirect(o.out, 1)) < 0)
        return 1;
    /* Without -o the command's stdout is not ours: it must not mix with
     * the figures this prints. */
    if (o.out == NULL && (out_fd = open_redirect("/dev/null", 1)) < 0)
        return 1;
    return run(&o, in_fd, out_fd);
}
