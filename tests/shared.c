#include "shared.h"

#include <string.h>

const enum sp_io fx_io[FX_NIO] = {SP_IO_PREAD, SP_IO_READ, SP_IO_MMAP};

int fx_images_equal(const struct sp_image *a, const struct sp_image *b)
{
    size_t row = sp_image_row_bytes(a, a->width);

    if (a->width != b->width || a->height != b->height ||
        a->channels != b->channels || a->sample_size != b->sample_size ||
        a->maxval != b->maxval || a->packed != b->packed)
        return 0;
    for (size_t y = 0; y < a->height; y++)
        if (memcmp(a->pixels + y * a->stride, b->pixels + y * b->stride,
                   row) != 0)
            return 0;
    return 1;
}

ssize_t fx_file_pull(void *arg, unsigned char *buf, size_t cap)
{
    FILE *f = arg;
    size_t n = fread(buf, 1, cap, f);

    return n == 0 && ferror(f) ? -1 : (ssize_t)n;
}

sp_status fx_input_open(struct sp_input *in, const char *path, int nowait,
                        struct sp_reuse *reuse)
{
    struct sp_src src = sp_src_path(path);

    return sp_input_open(in, &src, nowait, reuse);
}
