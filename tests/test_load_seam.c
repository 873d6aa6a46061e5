/* test_load_seam.c: the syscall seam: EINTR and short reads, mmap failure,
 * each call failing, a file that shrinks or grows while it is loaded; a
 * release whose madvise or munmap fails. */
#include "load_lib.h"

/* ---- the syscall seam ---- */

static unsigned read_calls, eintr_every;
static unsigned madvise_calls;
static int open_flags;
static const char *shrink_path;
static off_t shrink_to;

/* Short reads of 1..7 bytes, with an EINTR every EINTR_EVERY calls (and
 * on the very first). */
static ssize_t flaky_read(int fd, void *buf, size_t len)
{
    size_t n = 1 + read_calls % 7;

    if (read_calls++ % eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    return read(fd, buf, n < len ? n : len);
}

static ssize_t failing_read(int fd, void *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    read_calls++;
    errno = EIO;
    return -1;
}

static void *failing_mmap(void *addr, size_t len, int prot, int flags,
                          int fd, off_t off)
{
    (void)addr;
    (void)len;
    (void)prot;
    (void)flags;
    (void)fd;
    (void)off;
    mmap_calls++;
    errno = ENODEV;
    return MAP_FAILED;
}

static int failing_madvise(void *addr, size_t len, int advice)
{
    (void)addr;
    (void)len;
    (void)advice;
    madvise_calls++;
    errno = EINVAL;
    return -1;
}

static int failing_munmap(void *addr, size_t len)
{
    (void)addr;
    (void)len;
    errno = EINVAL;
    return -1;
}

static int recording_open(const char *path, int flags, ...)
{
    open_flags = flags;
    return open(path, flags);
}

static int failing_open(const char *path, int flags, ...)
{
    (void)path;
    (void)flags;
    errno = EMFILE;
    return -1;
}

static int failing_fstat(int fd, struct stat *sb)
{
    (void)fd;
    (void)sb;
    errno = EOVERFLOW;
    return -1;
}

/* fstat, then the file shrinks: the size the loader goes by is stale. */
static int shrinking_fstat(int fd, struct stat *sb)
{
    int r = fstat(fd, sb);

    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return r;
}

/* The file shrinks just before it is mapped. */
static void *shrinking_mmap(void *addr, size_t len, int prot, int flags,
                            int fd, off_t off)
{
    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return mmap(addr, len, prot, flags, fd, off);
}

/* The file shrinks just before the raster is read. */
static off_t shrinking_lseek(int fd, off_t off, int whence)
{
    ck_assert_int_eq(truncate(shrink_path, shrink_to), 0);
    return lseek(fd, off, whence);
}

/* EINTR and short reads on every read, by file and by pipe. */
START_TEST(test_seam_eintr_short_reads)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.pgm");
    unsigned char *data;
    size_t len;
    static const unsigned everies[] = {2, 3, 5};

    fx_make_image(&want, 53, 41, 1, 2, 65535, 4);
    fx_write_image(path, &want);
    data = fx_pnm_bytes(&want, &len);
    for (size_t e = 0; e < sizeof everies / sizeof everies[0]; e++) {
        eintr_every = everies[e];
        read_calls = 0;
        sp_sys.read = flaky_read;
        ck_assert_int_eq(sp_load(path, SP_IO_READ, &img, &info), SP_OK);
        sp_sys_reset();
        ck_assert_uint_gt(read_calls, want.base_len / 7);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);

        read_calls = 0;
        sp_sys.read = flaky_read;
        ck_assert_int_eq(load_pipe(data, len, 0, SP_IO_MMAP, &img, &info),
                         SP_OK);
        sp_sys_reset();
        ck_assert_uint_gt(read_calls, len / 7);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

/* mmap refused: the file is read instead, and io_used says so. */
START_TEST(test_seam_mmap_fails)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    int fds;

    fx_make_image(&want, 31, 17, 3, 1, 255, 6);
    fx_write_image(path, &want);
    fds = fx_count_fds();
    mmap_calls = 0;
    sp_sys.mmap = failing_mmap;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    sp_sys_reset();
    ck_assert_uint_eq(mmap_calls, 1);
    ck_assert_int_eq(info.io_used, SP_IO_READ);
    ck_assert_int_eq(img.backing, SP_BACKING_MALLOC);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&want);
}
END_TEST

/* A failing read, open or fstat is an errno, with nothing left open. */
START_TEST(test_seam_errors)
{
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    int fds;

    fx_make_image(&want, 31, 17, 3, 1, 255, 6);
    fx_write_image(path, &want);
    fds = fx_count_fds();

    sp_sys.read = failing_read;
    ck_assert_int_eq(sp_load(path, SP_IO_READ, &img, &info), EIO);
    ck_assert_ptr_null(img.base);
    ck_assert_int_eq(load_pipe("P5 1 1 255 a", 12, 0, SP_IO_READ, &img,
                               &info), EIO);
    sp_sys_reset();
    ck_assert_int_eq(fx_count_fds(), fds);

    sp_sys.open = failing_open;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), EMFILE);
    sp_sys_reset();

    sp_sys.fstat = failing_fstat;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), EOVERFLOW);
    sp_sys_reset();
    ck_assert_int_eq(fx_count_fds(), fds);

    /* The input is opened close-on-exec. */
    sp_sys.open = recording_open;
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    sp_sys_reset();
    ck_assert_int_ne(open_flags & O_CLOEXEC, 0);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    sp_image_release(&want);
}
END_TEST

/* shrink_case: make a several-page P6; load it by IO with the seam entry
 * the caller swapped in (it shrinks the file to 100 bytes); return the
 * status.  If the load "works" and TOUCH is set, every pixel is read, as
 * the scaler would. */
static volatile unsigned char sink;

static sp_status shrink_case(enum sp_io io, int touch,
                             struct sp_load_info *info)
{
    struct sp_image want, img;
    const char *path = fx_path("shrink.ppm");
    sp_status st;

    fx_make_image(&want, 100, 100, 3, 1, 255, 8);
    fx_write_image(path, &want);
    sp_image_release(&want);
    shrink_path = path;
    shrink_to = 100;
    st = sp_load(path, io, &img, info);
    sp_sys_reset();
    if (st == SP_OK) {
        for (size_t i = 0; touch && i < img.height * img.stride; i++)
            sink = img.pixels[i];
        sp_image_release(&img);
    } else {
        ck_assert_ptr_null(img.base);
    }
    return st;
}

/* The file shrinks after its size was taken, before the raster is read:
 * an error, not a crash and not a short image. */
START_TEST(test_shrink_read)
{
    struct sp_load_info info;
    int fds = fx_count_fds();

    sp_sys.lseek = shrinking_lseek;
    ck_assert_int_eq(shrink_case(SP_IO_READ, 1, &info), SP_E_CHANGED);
    sp_sys.fstat = shrinking_fstat;
    ck_assert_int_eq(shrink_case(SP_IO_READ, 1, &info), SP_E_CHANGED);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

START_TEST(test_shrink_mmap)
{
    struct sp_load_info info;
    sp_status st;

    /* The pages past the new end of a mapping raise SIGBUS when touched:
     * sp_load must notice that the file no longer holds the raster. */
    sp_sys.fstat = shrinking_fstat;
    st = shrink_case(SP_IO_MMAP, 0, &info);
    ck_assert_msg(st != SP_OK, "the file shrank after its size was taken, "
                  "yet the mmap load succeeded: its pages past the new end "
                  "raise SIGBUS when the scaler reads them");
    sp_sys.mmap = shrinking_mmap;
    st = shrink_case(SP_IO_MMAP, 0, &info);
    ck_assert_msg(st != SP_OK, "the file shrank before it was mapped, yet "
                  "the mmap load succeeded");
}
END_TEST

/* grow_case: the file holds the first CUT bytes of a 40x40 P6 when its
 * size is taken; the wrapped fstat then writes the whole image, as another
 * process appending to it would.  The loader must go by the size it took
 * (or see the change), never by what the header read past it says. */
static const unsigned char *grow_data;
static size_t grow_len;
static unsigned grow_calls;

static int growing_fstat(int fd, struct stat *sb)
{
    int r = fstat(fd, sb);

    if (grow_calls++ == 0)
        fx_write_file(shrink_path, grow_data, grow_len);
    return r;
}

START_TEST(test_grow_while_opened)
{
    static const size_t cuts[] = {1, 2, 5, 14, 15, 16, 15 + 2400};
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("grow.ppm");
    unsigned char *data;
    size_t len;
    int fds = fx_count_fds();

    fx_make_image(&want, 40, 40, 3, 1, 255, 11);
    data = fx_pnm_bytes(&want, &len);  /* a 15-byte header */
    grow_data = data;
    grow_len = len;
    shrink_path = path;
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            sp_status st;

            fx_write_file(path, data, cuts[c]);
            grow_calls = 0;
            sp_sys.fstat = growing_fstat;
            st = sp_load(path, io, &img, &info);
            sp_sys_reset();
            ck_assert_msg(st == SP_E_CHANGED, "cut %zu, %s: %s", cuts[c],
                          sp_io_name(io), sp_strerror(st));
            ck_assert_ptr_null(img.base);
            ck_assert_int_eq(img.backing, SP_BACKING_NONE);
            ck_assert_int_eq(fx_count_fds(), fds);
            ck_assert_int_eq(fx_count_maps(path), 0);
        }
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

START_TEST(test_release_seam)
{
    struct sp_image img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");
    void *base;
    size_t len;

    fx_make_image(&img, 30, 30, 3, 1, 255, 0);
    fx_write_image(path, &img);
    sp_image_release(&img);

    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    ck_assert_int_eq(img.backing, SP_BACKING_OWNED);
    madvise_calls = 0;
    sp_sys.madvise = failing_madvise;
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    sp_sys_reset();
    ck_assert_uint_eq(madvise_calls, 1);
    ck_assert_int_eq(fx_count_maps(path), 0);

    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    base = img.base;
    len = img.base_len;
    sp_sys.munmap = failing_munmap;
    ck_assert_int_eq(sp_image_release(&img), EINVAL);
    sp_sys_reset();
    ck_assert_int_eq(img.backing, SP_BACKING_NONE);
    ck_assert_ptr_null(img.base);
    ck_assert_int_eq(munmap(base, len), 0);
    ck_assert_int_eq(fx_count_maps(path), 0);
}
END_TEST

/* Load and release many times, good and bad, by both paths: no
 * descriptor and no mapping is left behind. */

static Suite *load_seam_suite(void)
{
    Suite *s = suite_create("load_seam");
    TCase *tc = fx_tcase("seam");
    tcase_add_test(tc, test_seam_eintr_short_reads);
    tcase_add_test(tc, test_seam_mmap_fails);
    tcase_add_test(tc, test_seam_errors);
    tcase_add_test(tc, test_shrink_read);
    tcase_add_test(tc, test_shrink_mmap);
    tcase_add_test(tc, test_grow_while_opened);
    suite_add_tcase(s, tc);

    tc = fx_tcase("release");
    tcase_add_test(tc, test_release_seam);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_seam_suite());
}
