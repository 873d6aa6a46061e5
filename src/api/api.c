/* The public API (scaleppm.h) on the job (job.h): a handle holds a
 * struct sp_job and what its source and target point to (the paths'
 * copies, the memory output, the image output), and the last run's
 * report, so that the caller keeps nothing alive but its own input bytes
 * and images.  The public sp_image (struct scaleppm_image) is the
 * library's struct sp_image (image.h) with its metadata. */
#include "scaleppm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "init.h"
#include "job.h"
#include "meta.h"
#include "msg.h"
#include "outfmt.h"
#include "params.h"
#include "parallel.h"

/* The longest failure's line before its escapes: a name, a status and a
 * detail. */
#define MESSAGE_MAX (2 * SP_WHY_MAX + 64)

/* An image: its raster, malloc'd (SP_BACKING_MALLOC), and metadata. */
struct scaleppm_image {
    struct sp_image img;
    struct sp_meta meta;
};

/* A handle: the job that sp_job_exec runs, and what it points to. */
struct scaleppm_job {
    struct sp_job job;
    char *in_path, *out_path;  /* copies, the source's and target's */
    unsigned char *mem;        /* a memory output's bytes, the last run's */
    size_t mem_len;
    sp_image *made;            /* an image output, the last run's, until
                                  it is taken */
    int ran;                   /* the last run succeeded */
    struct sp_report report;   /* the last run's */
    char message[4 * MESSAGE_MAX];  /* the last run's failure, one line
                                       (sp_show_name's escapes take 4
                                       bytes a byte at most) */
};

/* api: STATUS as the API returns it: an errno negated. */
static int api(sp_status status)
{
    return status > 0 ? -status : status;
}

const char *sp_version(void)
{
    return SP_VERSION;
}

int sp_init(void)
{
    return api(sp_lib_init());
}

int sp_job_new(sp_job **job)
{
    sp_job *h = calloc(1, sizeof *h);

    *job = h;
    if (h == NULL)
        return -ENOMEM;
    h->job.io = SP_IO_AUTO;
    h->job.filter = &sp_filter_sample;
    h->job.factor = 1;
    h->job.threads = 1;
    return SP_OK;
}

void sp_job_free(sp_job *job)
{
    if (job == NULL)
        return;
    free(job->in_path);
    free(job->out_path);
    free(job->mem);
    sp_image_free(job->made);
    free(job);
}

/* set_path: *SLOT a copy of PATH, the old one freed.  "-" is a file of
 * that name, not standard input or output (a descriptor is that). */
static int set_path(char **slot, const char *path)
{
    char *copy;

    if (path == NULL)
        return SP_E_USAGE;
    copy = strdup(strcmp(path, "-") == 0 ? "./-" : path);
    if (copy == NULL)
        return -ENOMEM;
    free(*slot);
    *slot = copy;
    return SP_OK;
}

int sp_job_set_input_path(sp_job *job, const char *path)
{
    int st = set_path(&job->in_path, path);

    if (st == SP_OK)
        job->job.in = sp_src_path(job->in_path);
    return st;
}

int sp_job_set_input_fd(sp_job *job, int fd)
{
    if (fd < 0)
        return SP_E_USAGE;
    job->job.in = sp_src_fd(fd);
    return SP_OK;
}

int sp_job_set_input_memory(sp_job *job, const void *data, size_t size)
{
    if (data == NULL)
        return SP_E_USAGE;
    job->job.in = sp_src_memory(data, size);
    return SP_OK;
}

int sp_job_set_output_path(sp_job *job, const char *path)
{
    int st = set_path(&job->out_path, path);

    if (st == SP_OK)
        job->job.out = sp_target_path(job->out_path);
    return st;
}

int sp_job_set_output_fd(sp_job *job, int fd)
{
    if (fd < 0)
        return SP_E_USAGE;
    job->job.out = sp_target_fd(fd);
    return SP_OK;
}

int sp_job_set_output_memory(sp_job *job)
{
    job->job.out = sp_target_memory(&job->mem, &job->mem_len);
    return SP_OK;
}

int sp_job_set_output_callback(sp_job *job, sp_write_fn *fn, void *arg)
{
    if (fn == NULL)
        return SP_E_USAGE;
    job->job.out = sp_target_callback(fn, arg);
    return SP_OK;
}

int sp_job_set_output_image(sp_job *job)
{
    /* the image it goes to is made for each run (exec) */
    job->job.out = sp_target_image(NULL, NULL);
    return SP_OK;
}

int sp_job_set_input_image(sp_job *job, const sp_image *image)
{
    if (image == NULL)
        return SP_E_USAGE;
    job->job.in = sp_src_image(&image->img, &image->meta);
    return SP_OK;
}

int sp_job_output_image(sp_job *job, sp_image **image)
{
    *image = job->made;
    job->made = NULL;
    return *image != NULL ? SP_OK : SP_E_USAGE;
}

void sp_image_layout(const sp_image *image, size_t *width, size_t *height,
                     unsigned *channels, unsigned *maxval, int *bits)
{
    const struct sp_image *i = &image->img;

    if (width != NULL)
        *width = i->width;
    if (height != NULL)
        *height = i->height;
    if (channels != NULL)
        *channels = i->channels;
    if (maxval != NULL)
        *maxval = i->maxval;
    if (bits != NULL)
        *bits = i->packed;
}

const void *sp_image_row(const sp_image *image, size_t y)
{
    return y < image->img.height ? image->img.pixels + y * image->img.stride
                                 : NULL;
}

void sp_image_free(sp_image *image)
{
    if (image == NULL)
        return;
    sp_image_release(&image->img);
    sp_meta_free(&image->meta);
    free(image);
}

int sp_job_output(const sp_job *job, const void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (job->job.out.kind != SP_TARGET_MEMORY || !job->ran)
        return SP_E_USAGE;
    *data = job->mem;
    *size = job->mem_len;
    return SP_OK;
}

/* format_named: J's format (and a PNM's type) that NAME, an extension,
 * names.  Returns 0 or SP_E_OUTFORMAT. */
static sp_status format_named(struct sp_job *j, const char *name)
{
    char file[16];

    /* the names are the extensions a path's name may end in */
    if (name == NULL || name[0] == '\0' || strpbrk(name, "./") != NULL ||
        (size_t)snprintf(file, sizeof file, "out.%s", name) >= sizeof file)
        return SP_E_OUTFORMAT;
    return sp_outfmt_for(file, &j->fmt, &j->pnm_type);
}

int sp_job_set_format(sp_job *job, const char *name)
{
    return format_named(&job->job, name);
}

int sp_job_set_factor(sp_job *job, int factor)
{
    if (factor == 0 || factor > SP_SCALE_MAX || factor < -SP_SCALE_MAX)
        return SP_E_USAGE;
    job->job.factor = factor;
    job->job.fit = (struct sp_fit){0};
    return SP_OK;
}

int sp_job_set_size(sp_job *job, size_t width, size_t height, int enlarge)
{
    if (width == 0 && height == 0)
        return SP_E_USAGE;
    job->job.fit = (struct sp_fit){.width = width, .height = height,
                                   .enlarge = enlarge != 0};
    job->job.factor = 1;
    return SP_OK;
}

/* choose: the index of NAME among the N NAMES, case-insensitive, or -1. */
static int choose(const char *name, const char *const *names, int n)
{
    for (int i = 0; name != NULL && i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

int sp_job_set_filter(sp_job *job, const char *name)
{
    for (size_t i = 0; name != NULL && i < sp_nfilters; i++)
        if (sp_filters[i]->by_factor &&
            strcasecmp(name, sp_filters[i]->name) == 0) {
            job->job.filter = sp_filters[i];
            return SP_OK;
        }
    return SP_E_USAGE;
}

int sp_job_set_option(sp_job *job, const char *key, const char *value)
{
    struct sp_job j = job->job;
    struct sp_params p;
    char why[SP_PARAMS_WHY_MAX], spelled[64];
    sp_status st;

    job->message[0] = '\0';
    /* the command line's spelling of a key, each given anew */
    sp_params_init(&p, &j, SP_PARAMS_ANY);
    j = job->job;  /* the defaults the init wrote are not this job's */
    snprintf(spelled, sizeof spelled, "--%s", key != NULL ? key : "");
    st = key == NULL ? EINVAL : sp_params_set(&p, &j, key, value, why);
    if (st == SP_OK && sp_params_given(&p, "format"))
        st = format_named(&j, p.format);
    if (st != SP_OK) {
        sp_params_message(&p, spelled, value, key != NULL ? why : "no key",
                          job->message, sizeof job->message);
        return SP_E_USAGE;
    }
    if (sp_params_given(&p, "scale"))
        j.fit = (struct sp_fit){0};
    if (sp_params_given(&p, "fit") || sp_params_given(&p, "width") ||
        sp_params_given(&p, "height"))
        j.factor = 1;
    job->job = j;
    return SP_OK;
}

int sp_job_set_io(sp_job *job, const char *name)
{
    static const char *const names[] = {"auto", "read", "mmap", "pread"};
    static const enum sp_io ios[] = {SP_IO_AUTO, SP_IO_READ, SP_IO_MMAP,
                                     SP_IO_PREAD};
    int i = choose(name, names, 4);

    if (i < 0)
        return SP_E_USAGE;
    job->job.io = ios[i];
    return SP_OK;
}

int sp_job_set_threads(sp_job *job, unsigned threads)
{
    if (threads < 1 || threads > SP_THREADS_MAX)
        return SP_E_USAGE;
    job->job.threads = threads;
    return SP_OK;
}

int sp_job_set_quality(sp_job *job, int quality)
{
    if (quality < 1 || quality > 100)
        return SP_E_USAGE;
    job->job.quality = quality;
    return SP_OK;
}

int sp_job_set_max_pixels(sp_job *job, unsigned long long max)
{
    job->job.max_pixels = max;
    return SP_OK;
}

/* failed: JOB's message for STATUS from its report, one line: the file,
 * the status, the detail. */
static void failed(sp_job *job, sp_status status)
{
    const char *file = job->report.failed_path, *why = job->report.why;
    char line[MESSAGE_MAX];

    snprintf(line, sizeof line, "%s: %s%s%s",
             file != NULL ? file : "scaleppm", sp_strerror(status),
             why[0] != '\0' ? ": " : "", why);
    sp_show_name(line, job->message, sizeof job->message);
}

/* exec: run J, JOB's job or a step of it, with JOB's message, report and
 * outputs: the last run's freed first; an image target's image made
 * here, JOB's once it succeeds. */
static int exec(sp_job *job, struct sp_job *j)
{
    sp_status st;

    job->message[0] = '\0';
    job->ran = 0;
    free(job->mem);
    job->mem = NULL;
    job->mem_len = 0;
    sp_image_free(job->made);
    job->made = NULL;
    memset(&job->report, 0, sizeof job->report);
    if (j->in.kind == SP_SRC_PATH && j->in.path == NULL) {
        snprintf(job->message, sizeof job->message, "scaleppm: no input");
        return SP_E_USAGE;
    }
    if (!sp_filter_of(j->filter)->enlarges && j->factor > 1 &&
        !j->decode_only) {
        snprintf(job->message, sizeof job->message, "scaleppm: the %s "
                 "filter is for reduces only", sp_filter_of(j->filter)->name);
        return SP_E_USAGE;
    }
    if (j->out.kind == SP_TARGET_IMAGE) {
        sp_image *made = calloc(1, sizeof *made);

        if (made == NULL)
            return -ENOMEM;
        j->out = sp_target_image(&made->img, &made->meta);
        job->made = made;
    }
    st = sp_job_exec(j, &job->report);
    if (st != SP_OK) {
        failed(job, st);
        sp_image_free(job->made);
        job->made = NULL;
    }
    job->ran = st == SP_OK;
    return api(st);
}

int sp_job_run(sp_job *job)
{
    struct sp_job j = job->job;

    return exec(job, &j);
}

int sp_job_decode(sp_job *job, sp_image **image)
{
    struct sp_job j = job->job;
    int st;

    j.decode_only = 1;
    j.out = sp_target_image(NULL, NULL);
    st = exec(job, &j);
    job->ran = 0;  /* the job's own output was not written */
    *image = job->made;
    job->made = NULL;
    return st;
}

const char *sp_job_message(const sp_job *job)
{
    return job->message;
}
