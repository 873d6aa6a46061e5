/* test_load_paths.c: the loader's paths: read and mmap give the same pixels
 * in every format; pipes, FIFOs and standard input; trailing data. */
#include "load_lib.h"

struct format {
    size_t w, h;
    unsigned channels, sample_size, maxval;
    int plain;
};

static const struct format formats[] = {
    {37, 23, 3, 1, 255, 0},
    {37, 23, 1, 1, 255, 0},
    {37, 23, 3, 2, 65535, 0},
    {37, 23, 1, 2, 65535, 0},
    {29, 31, 1, 2, 1000, 0},
    {1, 1, 3, 1, 255, 0},
    {1, 1, 1, 2, 256, 0},
    {5, 3, 1, 1, 1, 0},
    {211, 157, 3, 1, 255, 0},  /* several pages: the raster crosses them */
    {13, 11, 3, 1, 255, 1},
    {13, 11, 1, 1, 200, 1},
    {13, 11, 3, 2, 65535, 1},
    {13, 11, 1, 2, 4095, 1},
    {1, 1, 1, 1, 1, 1},
};

static void make_file(const struct format *fm, const char *path,
                      struct sp_image *img, unsigned seed)
{
    fx_make_image(img, fm->w, fm->h, fm->channels, fm->sample_size, fm->maxval,
                  seed);
    if (fm->plain)
        write_plain(path, img);
    else
        fx_write_image(path, img);
}

/* Both paths give the image that was written, and say how. */
START_TEST(test_read_mmap_identical)
{
    const struct format *fm = &formats[_i];
    const char *path = fx_path("in.pnm");
    struct sp_image want, got[FX_NIO];
    struct sp_load_info info;
    struct stat sb;

    make_file(fm, path, &want, (unsigned)_i);
    ck_assert_int_eq(stat(path, &sb), 0);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];
        struct sp_image *img = &got[pi];

        ck_assert_int_eq(sp_load(path, io, img, &info), SP_OK);
        ck_assert_int_eq(info.magic, fm->plain ? (fm->channels == 3 ? '3'
                                                                   : '2')
                                               : (fm->channels == 3 ? '6'
                                                                   : '5'));
        ck_assert_uint_eq(info.input_bytes, (size_t)sb.st_size);
        ck_assert_uint_eq(info.trailing_bytes, 0);
        ck_assert_int_eq(info.trailing_image, 0);
        if (fm->plain || io == SP_IO_READ) {
            ck_assert_int_eq(info.io_used, SP_IO_READ);
            ck_assert_int_eq(img->backing, SP_BACKING_MALLOC);
        } else if (io == SP_IO_MMAP) {
            ck_assert_int_eq(info.io_used, SP_IO_MMAP);
            /* The input's (mapped) raster: its bookkeeping is the whole
             * mapping; the view is inside. */
            ck_assert_int_eq(img->backing, SP_BACKING_OWNED);
            ck_assert_uint_eq(img->base_len, (size_t)sb.st_size);
            ck_assert_ptr_eq(img->pixels,
                             (unsigned char *)img->base + info.raster_offset);
        } else {
            /* pread: the raster stays in the file, read as rows are */
            ck_assert_int_eq(info.io_used, SP_IO_PREAD);
            ck_assert_int_eq(img->backing, SP_BACKING_OWNED);
            ck_assert_ptr_null(img->pixels);
            ck_assert_ptr_null(img->base);
        }
        ck_assert_uint_eq(img->stride, fm->w * fm->channels * fm->sample_size);
        fx_in_memory(img);
        ck_assert_msg(fx_images_equal(img, &want), "%zux%zu c%u b%u m%u "
                      "plain %d by %s: pixels differ", fm->w, fm->h,
                      fm->channels, fm->sample_size, fm->maxval, fm->plain,
                      sp_io_name(io));
    }
    for (size_t pi = 1; pi < FX_NIO; pi++)
        ck_assert(fx_images_equal(&got[pi], &got[0]));
    for (size_t pi = 0; pi < FX_NIO; pi++)
        ck_assert_int_eq(sp_image_release(&got[pi]), SP_OK);
    sp_image_release(&want);
}
END_TEST

/* feed: a child process that writes LEN bytes of DATA to FD and exits;
 * returns its pid.  The caller closes its own copy of FD. */
START_TEST(test_pipe_and_stdin)
{
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;

    fx_make_image(&want, 301, 200, 3, 1, 255, 5);
    data = fx_pnm_bytes(&want, &len);
    for (int as_stdin = 0; as_stdin <= 1; as_stdin++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            ck_assert_int_eq(load_pipe(data, len, as_stdin, fx_io[pi],
                                       &img, &info), SP_OK);
            ck_assert_int_eq(info.io_used, SP_IO_READ);
            ck_assert(fx_images_equal(&img, &want));
            ck_assert_uint_eq(info.input_bytes, len);
            ck_assert_uint_eq(info.trailing_bytes, 0);
            ck_assert_int_eq(sp_image_release(&img), SP_OK);
        }
    }
    free(data);
    sp_image_release(&want);
}
END_TEST

/* Plain and 16-bit images through a pipe; an empty pipe. */
START_TEST(test_pipe_formats)
{
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;

    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        make_file(&formats[i], fx_path("f.pnm"), &want, 9);
        data = fx_read_file(fx_path("f.pnm"), &len);
        ck_assert_int_eq(load_pipe(data, len, 0, SP_IO_MMAP, &img, &info),
                         SP_OK);
        ck_assert_msg(fx_images_equal(&img, &want), "format %zu", i);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        free(data);
        sp_image_release(&want);
    }
    ck_assert_int_eq(load_pipe("", 0, 0, SP_IO_MMAP, &img, &info),
                     SP_E_EMPTY);
    ck_assert_int_eq(load_pipe("", 0, 1, SP_IO_READ, &img, &info),
                     SP_E_EMPTY);
    ck_assert_int_eq(load_pipe("P6\n2 2\n255\nabc", 15, 0, SP_IO_READ, &img,
                               &info), SP_E_TRUNCATED);
    ck_assert_ptr_null(img.base);
}
END_TEST

/* A FIFO in the file system is read, not mapped. */
START_TEST(test_fifo)
{
    const char *path = fx_path("fifo");
    struct sp_image want, img;
    struct sp_load_info info;
    unsigned char *data;
    size_t len;
    pid_t pid;

    fx_make_image(&want, 40, 30, 1, 2, 65535, 2);
    data = fx_pnm_bytes(&want, &len);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        _exit(fd < 0 || write(fd, data, len) != (ssize_t)len);
    }
    ck_assert_int_eq(sp_load(path, SP_IO_MMAP, &img, &info), SP_OK);
    reap(pid);
    ck_assert_int_eq(info.io_used, SP_IO_READ);
    ck_assert(fx_images_equal(&img, &want));
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    free(data);
    sp_image_release(&want);
}
END_TEST

/* Standard input redirected from a regular file loads right too. */
START_TEST(test_stdin_file)
{
    const char *path = fx_path("in.ppm");
    struct sp_image want, img;
    struct sp_load_info info;
    int fd;

    fx_make_image(&want, 17, 9, 3, 1, 255, 3);
    fx_write_image(path, &want);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        fd = open(path, O_RDONLY);
        ck_assert_int_ge(fd, 0);
        to_stdin(fd);
        ck_assert_int_eq(sp_load("-", fx_io[pi], &img, &info), SP_OK);
        ck_assert_int_eq(info.io_used, fx_io[pi]);
        fx_in_memory(&img);
        ck_assert(fx_images_equal(&img, &want));
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_ne(fcntl(STDIN_FILENO, F_GETFD), -1);
        close(STDIN_FILENO);
    }
    sp_image_release(&want);
}
END_TEST

/* Bytes after the first image: counted, and recognised when they start a
 * second image; by file (both paths), by pipe, plain and binary. */
START_TEST(test_trailing)
{
    static const struct {
        const char *tail;
        int image;
    } tails[] = {
        {"junk\n", 0},
        {"\n", 0},
        {"P", 0},
        {"P9", 0},
        {"P6\n1 1\n255\nabc", 1},
        {"P5\n1 1\n255\na", 1},
        {"P2\n1 1\n9\n7\n", 1},
        {"P7\n", 1},
    };
    struct sp_image img, want;
    struct sp_load_info info;
    const char *path = fx_path("t.pnm");

    for (int plain = 0; plain <= 1; plain++) {
        size_t base_len, len, tl;
        unsigned char *base, *data;

        fx_make_image(&want, 7, 5, 3, 1, 255, 1);
        if (plain)
            write_plain(path, &want);
        else
            fx_write_image(path, &want);
        base = fx_read_file(path, &base_len);
        for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
            tl = strlen(tails[i].tail);
            data = malloc(base_len + tl);
            ck_assert_ptr_nonnull(data);
            memcpy(data, base, base_len);
            memcpy(data + base_len, tails[i].tail, tl);
            len = base_len + tl;
            fx_write_file(path, data, len);
            /* by each path of the file, then by pipe */
            for (size_t how = 0; how <= FX_NIO; how++) {
                sp_status st = how < FX_NIO
                    ? sp_load(path, fx_io[how], &img, &info)
                    : load_pipe(data, len, 0, SP_IO_MMAP, &img, &info);

                ck_assert_msg(st == SP_OK, "plain %d tail '%s' how %zu: %s",
                              plain, tails[i].tail, how, sp_strerror(st));
                fx_in_memory(&img);
                ck_assert(fx_images_equal(&img, &want));
                ck_assert_msg(info.trailing_bytes == tl,
                              "plain %d tail '%s' how %zu: %zu trailing",
                              plain, tails[i].tail, how, info.trailing_bytes);
                ck_assert_int_eq(info.trailing_image, tails[i].image);
                ck_assert_uint_eq(info.input_bytes, len);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
            }
            free(data);
        }
        free(base);
        sp_image_release(&want);
    }
}
END_TEST

static Suite *load_paths_suite(void)
{
    Suite *s = suite_create("load_paths");
    TCase *tc = fx_tcase("paths");
    tcase_add_loop_test(tc, test_read_mmap_identical, 0,
                        sizeof formats / sizeof formats[0]);
    tcase_add_test(tc, test_pipe_and_stdin);
    tcase_add_test(tc, test_pipe_formats);
    tcase_add_test(tc, test_fifo);
    tcase_add_test(tc, test_stdin_file);
    tcase_add_test(tc, test_trailing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_paths_suite());
}
