/* fuzz_scale: load + scale + write, as scaleppm runs them (sp_job_exec).
 *
 * The input is a file's bytes, put in a memfd and loaded through
 * /proc/self/fd/N, so every load path sees a regular file.
 * The job's factor (-8..8 but 0), filter, thread counts and output format
 * come from a hash of the input: the input stays a plain PNM file that
 * `scaleppm` itself can be run on (SP_FUZZ_VERBOSE=1 prints the job).
 *
 * Each input runs a job by every path of fx_io (shared.h: pread, the
 * default, then read and mmap) into a file of the chosen format each,
 * which must all give the same status and the same bytes, and one job
 * again into /dev/null (a target written in place).  A PNM output is
 * also checked against a reference scale computed here from the loaded
 * input; the input as a stream named by a path (a pipe as /proc/self/fd/N,
 * a FIFO) must load, image by image through one sp_input, as the file
 * does, whitespace between images and junk after them alike; the job on
 * a FIFO by its path, its writer on a thread, must end as the default
 * (pread) job on the file did, byte for byte; and nothing may be left
 * open or in the output directory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* memfd_create */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "fuzz.h"
#include "header.h"
#include "job.h"
#include "input.h"
#include "../shared.h"
#include "../write_whole.h"

/* Inputs whose output would have more pixels than this are skipped. */
#define OUT_PIXELS_MAX ((size_t)1 << 20)

/* The job an input asks for. */
struct params {
    int factor;
    const struct sp_filter_row *filter;
    unsigned threads[2];  /* of the jobs by fx_io[0], [2], ... and by
                             fx_io[1], [3], ... */
    const char *ext;      /* output format, by extension */
    int pnm;              /* ... which is PNM */
    enum sp_io null_io;   /* of the /dev/null job */
};

static const char *outdir;  /* sp_fuzz_outdir() */

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

static struct params pick(const uint8_t *data, size_t size)
{
    /* .pnm keeps the input's type, which check_pnm checks; .pam, .ppm
     * and .pgm convert (formats_test.sh holds them to netpbm's tools) */
    static const char *exts[8] = {"pnm", "pam", "pgm", "ppm",
                                  "png", "jpg", "bmp", "tga"};
    uint64_t h = fnv1a(data, size);
    struct params p;
    int f = (int)(h % 16);  /* 0..15 -> -8..-1, 1..8 */

    p.factor = f < 8 ? f - 8 : f - 7;
    p.filter = (h >> 4) & 1 ? &sp_filter_box : &sp_filter_sample;
    p.threads[0] = 1 + (unsigned)((h >> 5) & 3);
    p.threads[1] = 1 + (unsigned)((h >> 7) & 3);
    p.ext = exts[(h >> 9) & 7];
    p.pnm = ((h >> 9) & 7) == 0;
    p.null_io = fx_io[((h >> 12) & 3) % FX_NIO];
    return p;
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* too_big: does the input parse to a header whose output, scaled by
 * FACTOR, would have more than OUT_PIXELS_MAX pixels? */
static int too_big(const uint8_t *data, size_t size, int factor)
{
    char why[SP_WHY_MAX];
    struct sp_header hdr;
    size_t ow, oh;
    int big = 0;
    FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;

    if (f == NULL)
        return 0;
    if (sp_header_parse(f, &hdr, why) == SP_OK)
        big = sp_scale_size(hdr.width, hdr.height, factor, &ow, &oh) !=
                  SP_OK ||
              oh == 0 || ow > OUT_PIXELS_MAX / oh;
    fclose(f);
    return big;
}

/* get: sample C of pixel (X, Y); a PBM's bit as gray, 0 black and 255
 * white (so that a box of it is its gray mean). */
static unsigned get(const struct sp_image *img, size_t x, size_t y,
                    unsigned c)
{
    const unsigned char *p = img->pixels + y * img->stride;

    if (img->packed)
        return (p[x / 8] >> (7 - x % 8) & 1) ? 0 : 255;
    p += (x * img->channels + c) * img->sample_size;
    return img->sample_size == 2 ? (unsigned)p[0] << 8 | p[1] : p[0];
}

/* ref_sample: sample C of output pixel (X, Y) as scale.h defines it,
 * one sample at a time and independent of src/scale.c. */
static unsigned ref_sample(const struct sp_image *src, int factor,
                           const struct sp_filter_row *filter, size_t x,
                           size_t y, unsigned c)
{
    size_t n = (size_t)(factor < 0 ? -factor : factor);
    size_t x1, y1;
    uint64_t sum = 0, count;

    if (n <= 1)
        return get(src, x, y, c);
    if (factor > 0)
        return get(src, x / n, y / n, c);
    if (filter == &sp_filter_sample)
        return get(src, x * n, y * n, c);
    x1 = x * n + n < src->width ? x * n + n : src->width;
    y1 = y * n + n < src->height ? y * n + n : src->height;
    count = (uint64_t)(x1 - x * n) * (y1 - y * n);
    if (src->alpha && c + 1 < src->channels) {  /* colour by opacity */
        unsigned __int128 wsum = 0, asum = 0;

        for (size_t yy = y * n; yy < y1; yy++) {
            for (size_t xx = x * n; xx < x1; xx++) {
                unsigned a = get(src, xx, yy, src->channels - 1);
                wsum += (unsigned __int128)get(src, xx, yy, c) * a;
                asum += a;
            }
        }
        if (asum > 0)
            return (unsigned)((wsum + asum / 2) / asum);
    }
    for (size_t yy = y * n; yy < y1; yy++)
        for (size_t xx = x * n; xx < x1; xx++)
            sum += get(src, xx, yy, c);
    return (unsigned)((sum + count / 2) / count);
}

/* orientation_of: an accept that keeps the header's EXIF orientation
 * (ARG: an unsigned) and leaves the raster as stored. */
static sp_status orientation_of(struct sp_header *hdr, void *arg, char *why)
{
    (void)why;
    *(unsigned *)arg = hdr->orientation;
    return SP_OK;
}

/* upright: IMG (a decoded image: never a PBM's bits) replaced by the
 * picture a viewer shows for EXIF orientation O, each pixel fetched from
 * where O stores it (here, not by sp_image_orient); 0 and 1 leave it. */
static void upright(struct sp_image *img, unsigned o)
{
    const size_t w = img->width, h = img->height;
    const size_t px = sp_image_pixel_size(img);
    const int swap = o >= 5;
    struct sp_image up;

    if (o < 2 || o > 8)
        return;
    SP_FUZZ_CHECK(!img->packed);
    SP_FUZZ_CHECK(sp_image_alloc_like(&up, swap ? h : w, swap ? w : h,
                                      img) == SP_OK);
    for (size_t y = 0; y < up.height; y++) {
        for (size_t x = 0; x < up.width; x++) {
            size_t sx = w - 1 - y, sy = x;  /* 8: turned counter-clockwise */

            switch (o) {
            case 2: sx = w - 1 - x, sy = y; break;
            case 3: sx = w - 1 - x, sy = h - 1 - y; break;
            case 4: sx = x, sy = h - 1 - y; break;
            case 5: sx = y, sy = x; break;
            case 6: sx = y, sy = h - 1 - x; break;
            case 7: sx = w - 1 - y, sy = h - 1 - x; break;
            }
            memcpy(up.pixels + y * up.stride + x * px,
                   img->pixels + sy * img->stride + sx * px, px);
        }
    }
    SP_FUZZ_CHECK(sp_image_release(img) == SP_OK);
    *img = up;
}

/* check_pnm: OUT (LEN bytes) is the PNM file of IN_PATH's first image
 * scaled as P says, in the type scaling makes of it (sp_scale_type), and
 * with IMAGES > 1, the other images' files after it. */
static void check_pnm(const char *in_path, const struct params *p,
                      const unsigned char *out, size_t len, unsigned images)
{
    struct sp_load_info info;
    struct sp_image src, type, got;
    struct sp_header hdr;
    char why[SP_WHY_MAX];
    size_t ow, oh;
    unsigned orientation = 0;
    int shrunk;
    FILE *f = fmemopen((void *)out, len, "r");

    SP_FUZZ_CHECK(f != NULL);
    SP_FUZZ_CHECK(sp_header_parse(f, &hdr, why) == SP_OK);
    fclose(f);
    /* the picture upright, as the job turns it by default */
    SP_FUZZ_CHECK(sp_load_checked(in_path, SP_IO_READ, orientation_of,
                                  &orientation, &src, &info) == SP_OK);
    upright(&src, orientation);
    SP_FUZZ_CHECK(sp_scale_size(src.width, src.height, p->factor, &ow,
                                &oh) == SP_OK);
    sp_scale_type(&src, p->factor,
                  p->filter == &sp_filter_box ? SP_REDUCE_BOX
                                              : SP_REDUCE_SAMPLE,
                  &type);
    SP_FUZZ_CHECK(!hdr.plain && hdr.channels == type.channels);
    SP_FUZZ_CHECK(hdr.packed == type.packed);
    SP_FUZZ_CHECK(hdr.width == ow && hdr.height == oh);
    SP_FUZZ_CHECK(hdr.maxval == type.maxval &&
                  hdr.sample_size == type.sample_size);
    /* the first image's; a multi-image input has the others after it */
    SP_FUZZ_CHECK(images > 1
                      ? (size_t)hdr.raster_offset + hdr.raster_bytes < len
                      : (size_t)hdr.raster_offset + hdr.raster_bytes == len);
    sp_image_type_of(&got, &hdr);
    got.pixels = (unsigned char *)out + hdr.raster_offset;
    /* A JPEG reduced with the box filter by an even factor is decoded
     * shrunk (shrink-on-load: its IDCT's 1/2, 1/4 or 1/8, then the rest
     * of the reduce), not from the full decode: fit_test.sh bounds that
     * difference; here its size and type are checked, its pixels not. */
    shrunk = info.codec == sp_decode_named("jpeg") &&
             p->filter == &sp_filter_box && p->factor < 0 &&
             -p->factor % 2 == 0;
    for (size_t y = 0; !shrunk && y < oh; y++)
        for (size_t x = 0; x < ow; x++)
            for (unsigned c = 0; c < type.channels; c++)
                SP_FUZZ_CHECK(get(&got, x, y, c) ==
                              ref_sample(&src, p->factor, p->filter, x, y,
                                         c));
    SP_FUZZ_CHECK(sp_image_release(&src) == SP_OK);
}

/* The way a stream is named by a path: a pipe as /proc/self/fd/N (as
 * bash names a process substitution), or a FIFO by its own path. */
enum named { BY_PIPE, BY_FIFO };

/* stream_path: DATA (SIZE bytes, no more than a pipe holds) in a stream
 * of kind HOW, written whole and its writer gone, so that a reader gets
 * the bytes and then the end; PATH (LEN bytes) names it.  Returns a
 * descriptor to close once the stream is opened by its path (the read
 * end of a pipe; the FIFO's writer, opened O_RDWR so that neither open
 * waits), or -1 when the stream cannot be made here. */
static int stream_path(enum named how, const uint8_t *data, size_t size,
                       char *path, size_t len)
{
    int p[2];

    if (how == BY_PIPE) {
        if (pipe2(p, O_CLOEXEC) != 0)
            return -1;
        snprintf(path, len, "/proc/self/fd/%d", p[0]);
    } else {
        snprintf(path, len, "%s/in.fifo", outdir);
        if (mkfifo(path, 0600) != 0)
            return -1;
        p[1] = open(path, O_RDWR | O_CLOEXEC);
        SP_FUZZ_CHECK(unlink(path) == 0 || p[1] < 0);
        if (p[1] < 0)
            return -1;
        /* the FIFO is gone from the directory, but /proc names it */
        snprintf(path, len, "/proc/self/fd/%d", p[1]);
        p[0] = p[1];
    }
    SP_FUZZ_CHECK(size == 0 || write(p[1], data, size) == (ssize_t)size);
    if (how == BY_PIPE)
        close(p[1]);
    return p[0];
}

/* check_images: the input as a stream named by a path (HOW) gives, image
 * by image through one sp_input each, the same statuses and images as
 * the file at IN_PATH: the whitespace between images skipped alike, and
 * anything else after an image refused alike. */
static void check_images(const uint8_t *data, size_t size,
                         const char *in_path, enum named how)
{
    struct sp_input fin, sin;
    char path[128];
    int keep, more_f = 1, more_s = 1;
    sp_status fst, sst;

    if (size > 65536)
        return;  /* more than a pipe holds with no reader yet */
    keep = stream_path(how, data, size, path, sizeof path);
    if (keep < 0)
        return;
    sst = fx_input_open(&sin, path, 1, NULL);
    /* the stream's only writer gone: the reader gets the bytes, then the
     * end */
    close(keep);
    SP_FUZZ_CHECK(sst == SP_OK);
    SP_FUZZ_CHECK(fx_input_open(&fin, in_path, 0, NULL) == SP_OK);
    for (unsigned n = 0; more_f && n < 64; n++) {
        struct sp_load_info fi, si;

        sst = sp_input_next(&sin, SP_IO_READ, NULL, NULL, &si);
        fst = sp_input_next(&fin, SP_IO_READ, NULL, NULL, &fi);
        SP_FUZZ_CHECK(sst == fst);
        if (fst == SP_OK) {
            SP_FUZZ_CHECK(fx_images_equal(&fin.img, &sin.img));
            SP_FUZZ_CHECK(si.magic == fi.magic);
            /* where the image ends, counted from where it started */
            SP_FUZZ_CHECK(si.next == fi.next - (fi.raster_offset -
                                                si.raster_offset));
        }
        SP_FUZZ_CHECK(sp_input_release(&sin) == SP_OK);
        SP_FUZZ_CHECK(sp_input_release(&fin) == SP_OK);
        if (fst != SP_OK)
            break;
        SP_FUZZ_CHECK(sp_input_more(&fin, &more_f) == SP_OK);
        SP_FUZZ_CHECK(sp_input_more(&sin, &more_s) == SP_OK);
        SP_FUZZ_CHECK(more_f == more_s && fin.skipped == sin.skipped);
        SP_FUZZ_CHECK(fin.pos == sin.pos);
    }
    sp_input_close(&sin);
    sp_input_close(&fin);
}

static sp_status run_job(const char *in, const char *out, enum sp_io io,
                         const struct params *p, unsigned threads,
                         struct sp_report *r)
{
    struct sp_job job = {
        .in = sp_src_path(in),
        .out = sp_target_path(out),
        .io = io,
        .factor = p->factor,
        .filter = p->filter,
        .threads = threads,
    };
    sp_status st = fx_job_run(&job, r);

    SP_FUZZ_CHECK(strnlen(r->why, sizeof r->why) < sizeof r->why);
    SP_FUZZ_CHECK(strnlen(r->load.why, sizeof r->load.why) <
                  sizeof r->load.why);
    return st;
}

/* A FIFO's writer, on a thread of its own: open (which waits for the
 * job's open), write everything it can, close.  OPENED is set once its
 * open has returned, whatever it returned. */
struct feed {
    const char *path;
    const uint8_t *data;
    size_t size;
    atomic_int opened;
};

static void *feed_fifo(void *arg)
{
    struct feed *f = arg;
    size_t done = 0;
    int fd;

    /* a signal (libFuzzer's timers) must not end the wait: the job's
     * open would then wait for a writer that never comes */
    do
        fd = open(f->path, O_WRONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    atomic_store(&f->opened, 1);

    while (fd >= 0 && done < f->size) {
        ssize_t n = write(fd, f->data + done, f->size - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;  /* EPIPE: the job has read all it wanted */
        done += (size_t)n;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* check_fifo_job: the job of P on DATA sent through a FIFO named by its
 * path, its writer slow to come and gone before the end (a one-file run
 * waits for it), must end as the pread job on the file did: status ST and
 * the LEN output bytes at WANT. */
static void check_fifo_job(const uint8_t *data, size_t size,
                           const struct params *p, sp_status st,
                           const unsigned char *want, size_t len)
{
    char fifo[128], out[128];
    struct feed f = {fifo, data, size, 0};
    struct sp_report r;
    pthread_t tid;
    sp_status got;
    int wake;

    snprintf(fifo, sizeof fifo, "%s/job.fifo", outdir);
    snprintf(out, sizeof out, "%s/fifo.%s", outdir, p->ext);
    SP_FUZZ_CHECK(mkfifo(fifo, 0600) == 0);
    SP_FUZZ_CHECK(pthread_create(&tid, NULL, feed_fifo, &f) == 0);
    got = run_job(fifo, out, SP_IO_READ, p, p->threads[0], &r);
    /* A writer still waiting in open() for a reader is let go, or one
     * not yet there once it comes (a job that never opened the FIFO);
     * with no reader left, its writes then fail. */
    while (!atomic_load(&f.opened)) {
        wake = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        SP_FUZZ_CHECK(wake >= 0);
        close(wake);
        sched_yield();
    }
    SP_FUZZ_CHECK(pthread_join(tid, NULL) == 0);
    SP_FUZZ_CHECK(unlink(fifo) == 0);
    /* A file too short for a header's raster is found so before the
     * header is offered to the job's limits; a stream's length is known
     * only at its end, so the limits speak first (hostile_test.sh's
     * pbm_P4_huge rows). */
    SP_FUZZ_CHECK(got == st ||
                  (st == SP_E_TRUNCATED &&
                   (got == SP_E_LIMIT || got == SP_E_TOOBIG)));
    if (got == SP_OK) {
        size_t n;
        unsigned char *bytes = sp_fuzz_read_all(out, &n);

        SP_FUZZ_CHECK(n == len && memcmp(bytes, want, n) == 0);
        SP_FUZZ_CHECK(r.images > 0);
        free(bytes);
        SP_FUZZ_CHECK(unlink(out) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct params p = pick(data, size);
    char in[64], out[FX_NIO][128];
    unsigned char *bytes[FX_NIO] = {NULL};
    size_t len[FX_NIO] = {0};
    struct sp_report r[FX_NIO], rn;
    sp_status st[FX_NIO], stn;
    int fds, fd;

    sp_fuzz_init();
    outdir = sp_fuzz_outdir("sp_fuzz");
    /* a FIFO's writer meets a job that stopped reading: EPIPE, not
     * death */
    signal(SIGPIPE, SIG_IGN);
    if (too_big(data, size, p.factor))
        return 0;
    if (getenv("SP_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "scaleppm --io pread|read|mmap --factor %d "
                "--filter %s --threads %u|%u (out .%s; /dev/null by %s)\n",
                p.factor, sp_filter_of(p.filter)->name, p.threads[0],
                p.threads[1], p.ext, sp_io_name(p.null_io));
    fds = count_entries("/proc/self/fd");
    fd = memfd_create("sp_fuzz_in", MFD_CLOEXEC);
    SP_FUZZ_CHECK(fd >= 0);
    SP_FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
    snprintf(in, sizeof in, "/proc/self/fd/%d", fd);

    for (int i = 0; i < FX_NIO; i++) {
        snprintf(out[i], sizeof out[i], "%s/%s.%s", outdir,
                 sp_io_name(fx_io[i]), p.ext);
        st[i] = run_job(in, out[i], fx_io[i], &p, p.threads[i % 2], &r[i]);
        if (st[i] == SP_OK) {
            bytes[i] = sp_fuzz_read_all(out[i], &len[i]);
            SP_FUZZ_CHECK(unlink(out[i]) == 0);
        }
    }
    /* every path: the default's answer, byte for byte */
    for (int i = 1; i < FX_NIO; i++) {
        SP_FUZZ_CHECK(st[i] == st[0]);
        SP_FUZZ_CHECK(len[i] == len[0]);
        SP_FUZZ_CHECK(len[0] == 0 ||
                      memcmp(bytes[i], bytes[0], len[0]) == 0);
    }
    if (st[0] == SP_OK) {
        for (int i = 0; i < FX_NIO; i++) {
            /* a memfd maps and preads, so only a plain raster takes the
             * read path whatever was asked; a JPEG or PNG is mapped or
             * read whole (the last image's report) */
            int coded = r[i].load.codec != NULL &&
                        r[i].load.codec->whole;

            SP_FUZZ_CHECK(r[i].load.io_used ==
                          ((r[i].load.magic >= '1' && r[i].load.magic <= '3') ||
                                   (coded && fx_io[i] != SP_IO_MMAP)
                               ? SP_IO_READ
                               : fx_io[i]));
            SP_FUZZ_CHECK(r[i].out_width == r[0].out_width &&
                          r[i].out_height == r[0].out_height);
        }
        if (p.pnm)
            check_pnm(in, &p, bytes[0], len[0], r[0].images);
    }
    check_images(data, size, in, BY_PIPE);
    check_images(data, size, in, BY_FIFO);
    check_fifo_job(data, size, &p, st[0], bytes[0], len[0]);
    for (int i = 0; i < FX_NIO; i++)
        free(bytes[i]);

    /* a target that is not a regular file is written in place */
    stn = run_job(in, "/dev/null", p.null_io, &p, p.threads[0], &rn);
    /* (/dev/null takes a PNM of the input's own type: where the chosen
     * format failed for its own reasons, a multi-image input into a
     * one-image stb format or a type it cannot be made from, the
     * /dev/null job goes on, and may fail later, otherwise) */
    SP_FUZZ_CHECK(stn == st[0] || (st[0] != SP_OK && stn == SP_OK) ||
                  (!p.pnm && (st[0] == SP_E_ENCODE ||
                              st[0] == SP_E_CONVERT)));

    close(fd);
    SP_FUZZ_CHECK(count_entries(outdir) == 0);   /* no temporary left */
    SP_FUZZ_CHECK(count_entries("/proc/self/fd") == fds);  /* none open */
    return 0;
}
