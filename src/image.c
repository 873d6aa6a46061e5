#include "image.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "header.h"
#include "sys.h"

sp_status sp_image_raster_size(size_t width, size_t height, unsigned channels,
                               unsigned sample_size, size_t *size)
{
    size_t row, total;

    if (__builtin_mul_overflow(width, (size_t)channels * sample_size, &row) ||
        __builtin_mul_overflow(row, height, &total))
        return SP_E_TOOBIG;
    *size = total;
    return SP_OK;
}

sp_status sp_image_alloc(struct sp_image *img, size_t width, size_t height,
                         unsigned channels, unsigned sample_size,
                         unsigned maxval)
{
    size_t size;
    sp_status st;

    memset(img, 0, sizeof *img);
    st = sp_image_raster_size(width, height, channels, sample_size, &size);
    if (st != SP_OK)
        return st;
    /* malloc(0) may return NULL; a zero-pixel image never reaches here,
     * but keep the allocation non-zero to make NULL mean ENOMEM. */
    img->base = malloc(size ? size : 1);
    if (img->base == NULL)
        return ENOMEM;
    img->backing = SP_BACKING_MALLOC;
    img->base_len = size;
    img->pixels = img->base;
    img->width = width;
    img->height = height;
    img->stride = width * channels * sample_size;
    img->channels = channels;
    img->sample_size = sample_size;
    img->maxval = maxval;
    return SP_OK;
}

void sp_stamp_of(const struct stat *sb, struct sp_stamp *stamp)
{
    stamp->dev = sb->st_dev;
    stamp->ino = sb->st_ino;
    stamp->size = sb->st_size;
    stamp->mtime_ns = sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
    stamp->ctime_ns = sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
}

sp_status sp_stamp_check(int fd, const struct sp_stamp *was)
{
    struct stat sb;
    struct sp_stamp now;

    if (sp_sys.fstat(fd, &sb) != 0)
        return errno;
    sp_stamp_of(&sb, &now);
    return now.dev == was->dev && now.ino == was->ino &&
                   now.size == was->size && now.mtime_ns == was->mtime_ns &&
                   now.ctime_ns == was->ctime_ns
               ? SP_OK
               : SP_E_CHANGED;
}

sp_status sp_image_check(const struct sp_image *img)
{
    if (img->backing != SP_BACKING_MMAP && img->backing != SP_BACKING_FILE)
        return SP_OK;
    return sp_stamp_check(img->fd, &img->stamp);
}

sp_status sp_image_release(struct sp_image *img)
{
    sp_status st = SP_OK;

    switch (img->backing) {
    case SP_BACKING_MALLOC:
        free(img->base);
        break;
    case SP_BACKING_MMAP:
        /* The study's release: drop the pages, then the mapping. */
        (void)sp_sys.madvise((unsigned char *)img->base + img->dropped,
                             img->base_len - img->dropped, MADV_DONTNEED);
        if (sp_sys.munmap(img->base, img->base_len) != 0)
            st = errno;
        if (img->fd >= 0)
            (void)sp_sys.close(img->fd);
        break;
    case SP_BACKING_FILE:
        (void)sp_sys.close(img->fd);  /* read-only: nothing to lose */
        break;
    case SP_BACKING_NONE:
        break;
    }
    memset(img, 0, sizeof *img);
    return st;
}

void sp_image_adopt(struct sp_image *img, enum sp_backing backing, void *base,
                    size_t base_len, const struct sp_header *hdr,
                    unsigned char *raster)
{
    img->backing = backing;
    img->base = base;
    img->base_len = base_len;
    img->pixels = raster;
    img->width = hdr->width;
    img->height = hdr->height;
    img->channels = hdr->channels;
    img->sample_size = hdr->sample_size;
    img->maxval = hdr->maxval;
    img->stride = hdr->width * hdr->channels * hdr->sample_size;
    img->fd = -1;
}
