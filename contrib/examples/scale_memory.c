/* scale_memory.c: libscaleppm from a program of its own, as its users
 * write one (libscaleppm(3)).
 *
 *   scale_memory IN FACTOR JOBS OUT
 *
 * reads the image IN into memory, decodes it once into an image, then
 * scales by FACTOR into a PNG in memory JOBS times at once, one job a
 * thread, half of them from IN's bytes (each its own decode) and half
 * from the one decoded image, which they share; checks that every job
 * gave the same bytes, and writes them to OUT.  Build it with
 *
 *   cc -o scale_memory scale_memory.c $(pkg-config --cflags --libs scaleppm)
 *
 * tests/api_test.sh builds and runs it, under ThreadSanitizer too. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scaleppm.h>

struct task {
    const void *in;     /* the input's bytes, shared by every task, */
    size_t in_len;
    const sp_image *image;  /* or, unless NULL, its image, decoded once */
    int factor;
    void *png;          /* the task's output, malloc'd */
    size_t png_len;
    char message[512];  /* why it failed, one line */
    int status;
};

/* scale: one job, T->IN (or T->IMAGE) scaled by T->FACTOR into a PNG in
 * memory, copied
 * into T->PNG before the job (which owns its output) is freed. */
static void *scale(void *arg)
{
    struct task *t = arg;
    const void *out;
    size_t len;
    sp_job *job;
    int st = sp_job_new(&job);

    if (st == 0)
        st = t->image != NULL ? sp_job_set_input_image(job, t->image)
                              : sp_job_set_input_memory(job, t->in,
                                                        t->in_len);
    if (st == 0)
        st = sp_job_set_output_memory(job);
    if (st == 0)
        st = sp_job_set_format(job, "png");
    if (st == 0)
        st = sp_job_set_factor(job, t->factor);
    if (st == 0)
        st = sp_job_run(job);
    if (st == 0)
        st = sp_job_output(job, &out, &len);
    if (st == 0 && (t->png = malloc(len)) == NULL)
        st = -ENOMEM;
    if (st == 0) {
        memcpy(t->png, out, len);
        t->png_len = len;
    } else {
        snprintf(t->message, sizeof t->message, "%s",
                 job != NULL && sp_job_message(job)[0] != '\0'
                     ? sp_job_message(job) : sp_strerror(st));
    }
    sp_job_free(job);
    t->status = st;
    return NULL;
}

/* slurp: the whole of PATH in *DATA (malloc'd) and *LEN; 0 or -1. */
static int slurp(const char *path, void **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);

    if (f == NULL || buf == NULL) {
        if (f != NULL)
            fclose(f);
        free(buf);
        return -1;
    }
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *more = realloc(buf, cap *= 2);

            if (more == NULL)
                break;
            buf = more;
        }
    }
    if (ferror(f) || n == cap) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    *data = buf;
    *len = n;
    return 0;
}

/* decode: IN_LEN bytes at IN decoded into *IMAGE, with FACTOR as the
 * hint of what it will be scaled by; 0, or a status said on stderr. */
static int decode(const void *in, size_t in_len, int factor,
                  sp_image **image)
{
    sp_job *job;
    int st = sp_job_new(&job);

    *image = NULL;
    if (st == 0)
        st = sp_job_set_input_memory(job, in, in_len);
    if (st == 0)
        st = sp_job_set_factor(job, factor);
    if (st == 0)
        st = sp_job_decode(job, image);
    if (st != 0)
        fprintf(stderr, "scale_memory: %s\n",
                job != NULL && sp_job_message(job)[0] != '\0'
                    ? sp_job_message(job) : sp_strerror(st));
    sp_job_free(job);
    return st;
}

int main(int argc, char **argv)
{
    struct task *tasks;
    pthread_t *threads;
    sp_image *image;
    void *in;
    size_t in_len;
    int jobs, rc = 0, st;
    FILE *out;

    if (argc != 5 || (jobs = atoi(argv[3])) < 1) {
        fprintf(stderr, "usage: scale_memory IN FACTOR JOBS OUT\n");
        return 2;
    }
    if ((st = sp_init()) != 0) {
        fprintf(stderr, "scale_memory: sp_init: %s\n", sp_strerror(st));
        return 1;
    }
    if (slurp(argv[1], &in, &in_len) != 0) {
        fprintf(stderr, "scale_memory: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (decode(in, in_len, atoi(argv[2]), &image) != 0) {
        free(in);
        return 1;
    }
    tasks = calloc((size_t)jobs, sizeof *tasks);
    threads = calloc((size_t)jobs, sizeof *threads);
    if (tasks == NULL || threads == NULL) {
        fprintf(stderr, "scale_memory: out of memory\n");
        return 1;
    }
    for (int i = 0; i < jobs; i++) {
        tasks[i] = (struct task){.in = in, .in_len = in_len,
                                 .image = i % 2 ? image : NULL,
                                 .factor = atoi(argv[2])};
        if (pthread_create(&threads[i], NULL, scale, &tasks[i]) != 0) {
            fprintf(stderr, "scale_memory: cannot start a thread\n");
            return 1;
        }
    }
    for (int i = 0; i < jobs; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < jobs; i++) {
        if (tasks[i].status != 0) {
            fprintf(stderr, "scale_memory: job %d: %s\n", i,
                    tasks[i].message);
            rc = 1;
        } else if (tasks[i].png_len != tasks[0].png_len ||
                   memcmp(tasks[i].png, tasks[0].png, tasks[0].png_len)) {
            fprintf(stderr, "scale_memory: job %d gave other bytes than "
                    "job 0\n", i);
            rc = 1;
        }
    }
    if (rc == 0) {
        int ok = (out = fopen(argv[4], "wb")) != NULL;

        if (ok)
            ok = fwrite(tasks[0].png, 1, tasks[0].png_len, out) ==
                 tasks[0].png_len;
        if (out != NULL && fclose(out) != 0)
            ok = 0;
        if (!ok) {
            fprintf(stderr, "scale_memory: %s: %s\n", argv[4],
                    strerror(errno));
            rc = 1;
        }
    }
    for (int i = 0; i < jobs; i++)
        free(tasks[i].png);
    free(tasks);
    free(threads);
    sp_image_free(image);
    free(in);
    return rc;
}
