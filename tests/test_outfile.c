/* The output file: out of sight until committed (unnamed, or a named
 * temporary where O_TMPFILE is refused), descriptors the process holds
 * written directly, what a replaced file keeps and what refuses it, and
 * the fsyncs that make a replacement durable. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_pending.h"
#include "fixtures.h"
#include "outfile.h"
#include "sys.h"

/* put: DATA to O's descriptor. */
static void put(struct sp_outfile *o, const char *data)
{
    size_t len = strlen(data);

    ck_assert_int_eq(write(o->fd, data, len), (ssize_t)len);
}

/* commit_text: PATH opened, TEXT written and committed; returns the
 * status of the open (then nothing else is done) or of the commit. */
static sp_status commit_text(const char *path, const char *text)
{
    struct sp_outfile o;
    char why[SP_WHY_MAX];
    sp_status st = sp_outfile_open(&o, path, 0, why);

    if (st != SP_OK)
        return st;
    put(&o, text);
    st = sp_outfile_commit(&o);
    close(o.fd);
    sp_outfile_close(&o);
    return st;
}

static void assert_text(const char *path, const char *want)
{
    size_t len;
    unsigned char *got = fx_read_file(path, &len);

    ck_assert_uint_eq(len, strlen(want));
    ck_assert_mem_eq(got, want, len);
    free(got);
}

/* Until the commit nothing is seen in the directory, after it the target
 * alone, and a close without a commit leaves nothing at all. */
START_TEST(test_unnamed_until_commit)
{
    const char *path = fx_path("out.ppm");
    struct sp_outfile o;
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();

    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_OK);
    put(&o, "abc");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    ck_assert_int_eq(sp_outfile_commit(&o), SP_OK);
    close(o.fd);
    sp_outfile_close(&o);
    assert_text(path, "abc");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);

    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_OK);
    put(&o, "never");
    ck_assert_int_eq(sp_cli_discard_pending(), 1);
    close(o.fd);
    sp_outfile_close(&o);
    ck_assert_int_eq(sp_cli_discard_pending(), 0);
    assert_text(path, "abc");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

/* openat refusing O_TMPFILE, as some filesystems do. */
static int no_tmpfile(int dir, const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;

    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
    if ((flags & O_TMPFILE) == O_TMPFILE) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return openat(dir, path, flags, mode);
}

/* Without O_TMPFILE: a named ".NAME.XXXXXX" while writing, renamed by the
 * commit, removed by a close without one and by the signal handler's
 * discard. */
START_TEST(test_named_fallback)
{
    const char *path = fx_path("out.ppm");
    struct sp_outfile o;
    char why[SP_WHY_MAX];

    sp_sys.openat = no_tmpfile;
    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_OK);
    put(&o, "abc");
    ck_assert_int_eq(fx_count_entries(fx_dir, ".out.ppm."), 1);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    ck_assert_int_eq(sp_outfile_commit(&o), SP_OK);
    close(o.fd);
    sp_outfile_close(&o);
    assert_text(path, "abc");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);

    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_OK);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    close(o.fd);
    sp_outfile_close(&o);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);

    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_OK);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    ck_assert_int_eq(sp_cli_discard_pending(), 1);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    close(o.fd);
    sp_outfile_close(&o);
    sp_sys_reset();
    assert_text(path, "abc");
}
END_TEST

/* /dev/fd/N and /dev/stdout are the descriptors the process holds:
 * written at their offset with their flags (O_APPEND from >>), never
 * replaced. */
START_TEST(test_held_descriptors)
{
    const char *path = fx_path("all.ppm");
    char name[64];
    int fd, saved;

    fx_write_text(path, "head,");
    fd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    snprintf(name, sizeof name, "/dev/fd/%d", fd);
    ck_assert_int_eq(commit_text(name, "one,"), SP_OK);
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    ck_assert_int_eq(commit_text(name, "two"), SP_OK);
    assert_text(path, "head,one,two");

    saved = dup(STDOUT_FILENO);
    ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
    ck_assert_int_eq(commit_text("/dev/stdout", ",out"), SP_OK);
    ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
    close(saved);
    close(fd);
    assert_text(path, "head,one,two,out");
}
END_TEST

/* Standard output is known by what it is, not by its name: its other
 * names, and the file's own name, append through it. */
START_TEST(test_stdout_by_identity)
{
    const char *path = fx_path("all.ppm");
    char pid[64], name[PATH_MAX + 8];
    const char *names[] = {"//dev/stdout", "/dev//stdout", "/dev/./stdout",
                           "/proc/thread-self/fd/1", pid, name};
    int fd, saved;

    snprintf(pid, sizeof pid, "/proc/%d/fd/1", (int)getpid());
    snprintf(name, sizeof name, "%s", path);
    fx_write_text(path, "head");
    fd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    saved = dup(STDOUT_FILENO);
    ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
    close(fd);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ck_assert_msg(commit_text(names[i], ",x") == SP_OK, "%s", names[i]);
    ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
    close(saved);
    assert_text(path, "head,x,x,x,x,x,x");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
}
END_TEST

/* A pipe named /dev/fd/N gets the bytes; a descriptor open only for
 * reading, or not open, is refused. */
START_TEST(test_held_refused)
{
    const char *path = fx_path("all.ppm");
    char name[64], buf[16];
    int p[2], ro;

    fx_write_text(path, "head,one,two,out");

    ck_assert_int_eq(pipe(p), 0);
    snprintf(name, sizeof name, "/dev/fd/%d", p[1]);
    ck_assert_int_eq(commit_text(name, "piped"), SP_OK);
    close(p[1]);
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 5);
    ck_assert_mem_eq(buf, "piped", 5);
    close(p[0]);

    ro = open(path, O_RDONLY);
    snprintf(name, sizeof name, "/dev/fd/%d", ro);
    ck_assert_int_eq(commit_text(name, "x"), EBADF);
    close(ro);
    ck_assert_int_eq(commit_text(name, "x"), EBADF);
    ck_assert_int_eq(commit_text("/dev/fd/999", "x"), EBADF);
    assert_text(path, "head,one,two,out");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
}
END_TEST

/* A file with another hard link is not replaced: both names keep the old
 * contents, and the refusal says why. */
START_TEST(test_hard_link_refused)
{
    const char *path = fx_path("out.ppm"), *other = fx_path("other.ppm");
    struct sp_outfile o;
    char why[SP_WHY_MAX];

    fx_write_text(path, "old");
    ck_assert_int_eq(link(path, other), 0);
    ck_assert_int_eq(sp_outfile_open(&o, path, 0, why), SP_E_REFUSED);
    ck_assert_msg(strstr(why, "2 hard links") != NULL, "why: %s", why);
    ck_assert_int_eq(o.fd, -1);
    assert_text(path, "old");
    assert_text(other, "old");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
}
END_TEST

/* NOWAIT never waits in open(): a FIFO with no reader at the target (as
 * one made after a batch's check would be) and a device are refused at
 * once, opened for nothing, and left as they were; a regular file and a
 * new one are written as without it. */
START_TEST(test_nowait_refuses_in_place)
{
    const char *fifo = fx_path("fifo.ppm"), *path = fx_path("out.ppm");
    struct sp_outfile o;
    struct stat sb;
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();

    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(sp_outfile_open(&o, fifo, 1, why), SP_E_REFUSED);
    ck_assert_msg(strstr(why, "a FIFO, not a regular file") != NULL,
                  "why: %s", why);
    ck_assert_int_eq(o.fd, -1);
    ck_assert_int_eq(lstat(fifo, &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    ck_assert_int_eq(sp_outfile_open(&o, "/dev/null", 1, why), SP_E_REFUSED);
    ck_assert_msg(strstr(why, "a device") != NULL, "why: %s", why);
    ck_assert_int_eq(fx_count_fds(), fds);

    for (int i = 0; i < 2; i++) {  /* made, then replaced */
        ck_assert_int_eq(sp_outfile_open(&o, path, 1, why), SP_OK);
        put(&o, i == 0 ? "new" : "again");
        ck_assert_int_eq(sp_outfile_commit(&o), SP_OK);
        close(o.fd);
        sp_outfile_close(&o);
    }
    assert_text(path, "again");
}
END_TEST

/* As root, a replaced file keeps its owner and group. */
START_TEST(test_replace_keeps_owner)
{
    const char *path = fx_path("out.ppm");
    struct stat sb;

    if (geteuid() != 0)
        return;  /* only root may give a file away */
    fx_write_text(path, "old");
    ck_assert_int_eq(chown(path, 65534, 65534), 0);
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(commit_text(path, "new"), SP_OK);
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_eq(sb.st_uid, 65534);
    ck_assert_uint_eq(sb.st_gid, 65534);
    ck_assert_uint_eq(sb.st_mode & 07777, 0640);
    assert_text(path, "new");
}
END_TEST

static int fsyncs;
static int counting_fsync(int fd)
{
    fsyncs++;
    return fsync(fd);
}

static int failing_fsync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/* A replacement is fsynced before the rename and its directory after; a
 * new file is not (its input makes it again; --skip-existing tells a
 * short one from a whole one); a failed fsync keeps the old file. */
START_TEST(test_durable_replace)
{
    const char *path = fx_path("out.ppm");

    sp_sys.fsync = counting_fsync;
    ck_assert_int_eq(commit_text(path, "one"), SP_OK);
    ck_assert_int_eq(fsyncs, 0);
    ck_assert_int_eq(commit_text(path, "two"), SP_OK);
    ck_assert_int_eq(fsyncs, 2);
    sp_sys.fsync = failing_fsync;
    ck_assert_int_eq(commit_text(path, "three"), EIO);
    sp_sys_reset();
    assert_text(path, "two");
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
}
END_TEST

/* Links are followed by the kernel: through a link in another directory
 * the file it names is replaced there, and the link stays. */
START_TEST(test_link_to_other_dir)
{
    struct stat sb;

    ck_assert_int_eq(mkdir(fx_path("a"), 0755), 0);
    ck_assert_int_eq(mkdir(fx_path("b"), 0755), 0);
    fx_write_text(fx_path("b/real.ppm"), "old");
    ck_assert_int_eq(symlink("../b/real.ppm", fx_path("a/link.ppm")), 0);
    ck_assert_int_eq(commit_text(fx_path("a/link.ppm"), "new"), SP_OK);
    assert_text(fx_path("b/real.ppm"), "new");
    ck_assert_int_eq(lstat(fx_path("a/link.ppm"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    ck_assert_int_eq(fx_count_entries(fx_path("a"), NULL), 1);
    ck_assert_int_eq(fx_count_entries(fx_path("b"), NULL), 1);
}
END_TEST

/* With no registry installed (a library host): a named temporary is
 * registered nowhere, so no handler could remove it, and a close still
 * does. */
START_TEST(test_no_registry)
{
    char why[SP_WHY_MAX];
    struct sp_outfile o;
    sp_status st;

    sp_sys.openat = no_tmpfile;
    st = sp_outfile_open(&o, fx_path("out.ppm"), 0, why);
    sp_sys_reset();
    ck_assert_int_eq(st, SP_OK);
    /* named, but in no registry: nothing a handler would find */
    ck_assert(o.tmp != NULL && o.slot == 0);
    ck_assert_int_eq(sp_cli_discard_pending(), 0);
    ck_assert_int_eq(fx_count_entries(fx_dir, ".out.ppm."), 1);
    close(o.fd);
    sp_outfile_close(&o);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
}
END_TEST

/* The command line's registry, as main.c installs it. */
static void registry_setup(void)
{
    sp_cli_pending_install();
}

static Suite *outfile_suite(void)
{
    Suite *s = suite_create("outfile");
    TCase *bare = fx_tcase("no_registry");
    TCase *tc = fx_tcase("outfile");

    tcase_add_checked_fixture(tc, registry_setup, NULL);
    tcase_add_test(tc, test_unnamed_until_commit);
    tcase_add_test(tc, test_named_fallback);
    tcase_add_test(tc, test_held_descriptors);
    tcase_add_test(tc, test_stdout_by_identity);
    tcase_add_test(tc, test_held_refused);
    tcase_add_test(tc, test_hard_link_refused);
    tcase_add_test(tc, test_nowait_refuses_in_place);
    tcase_add_test(tc, test_replace_keeps_owner);
    tcase_add_test(tc, test_durable_replace);
    tcase_add_test(tc, test_link_to_other_dir);
    suite_add_tcase(s, tc);
    tcase_add_test(bare, test_no_registry);
    suite_add_tcase(s, bare);
    return s;
}

int main(void)
{
    return fx_run(outfile_suite());
}
