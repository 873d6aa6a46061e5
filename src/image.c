#include "image.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "header.h"
#include "sys.h"

sp_status sp_image_raster_size(size_t width, size_t height,
                               const struct sp_image *layout, size_t *size)
{
    size_t row, total;

    if (layout->packed)
        row = width / 8 + (width % 8 != 0);
    else if (__builtin_mul_overflow(width, (size_t)layout->channels *
                                               layout->sample_size, &row))
        return SP_E_TOOBIG;
    if (__builtin_mul_overflow(row, height, &total))
        return SP_E_TOOBIG;
    *size = total;
    return SP_OK;
}

sp_status sp_image_alloc_like(struct sp_image *img, size_t width,
                              size_t height, const struct sp_image *layout)
{
    struct sp_image type = *layout;  /* LAYOUT may be IMG */
    size_t size;
    sp_status st;

    memset(img, 0, sizeof *img);
    st = sp_image_raster_size(width, height, &type, &size);
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
    img->fd = -1;
    img->width = width;
    img->height = height;
    img->channels = type.channels;
    img->sample_size = type.sample_size;
    img->maxval = type.maxval;
    img->packed = type.packed;
    img->alpha = type.alpha;
    img->magic = type.magic;
    memcpy(img->tuple_type, type.tuple_type, sizeof img->tuple_type);
    img->stride = sp_image_row_bytes(img, width);
    return SP_OK;
}

sp_status sp_image_alloc(struct sp_image *img, size_t width, size_t height,
                         unsigned channels, unsigned sample_size,
                         unsigned maxval)
{
    struct sp_image type = {.channels = channels, .sample_size = sample_size,
                            .maxval = maxval};

    type.magic = channels == 1 ? '5' : channels == 3 ? '6' : '7';
    snprintf(type.tuple_type, sizeof type.tuple_type, "%s",
             channels == 1 ? "GRAYSCALE" : channels == 3 ? "RGB" : "");
    return sp_image_alloc_like(img, width, height, &type);
}

void sp_image_type_of(struct sp_image *img, const struct sp_header *hdr)
{
    img->width = hdr->width;
    img->height = hdr->height;
    img->channels = hdr->channels;
    img->sample_size = hdr->sample_size;
    img->maxval = hdr->maxval;
    img->packed = hdr->packed;
    img->alpha = hdr->alpha;
    img->magic = hdr->plain ? (char)(hdr->magic + 3) : hdr->magic;
    memcpy(img->tuple_type, hdr->tuple_type, sizeof img->tuple_type);
    img->stride = sp_image_row_bytes(img, hdr->width);
}

const char *sp_image_kind(const struct sp_image *img)
{
    static __thread char buf[SP_TUPLE_MAX + 8];

    if (img->magic == '7') {
        snprintf(buf, sizeof buf, "PAM %s", img->tuple_type[0] != '\0'
                                                ? img->tuple_type
                                                : "(no tuple type)");
        return buf;
    }
    return img->packed ? "PBM" : img->channels == 3 ? "color" : "gray";
}

void sp_stamp_of(const struct stat *sb, struct sp_stamp *stamp)
{
    stamp->dev = sb->st_dev;
    stamp->ino = sb->st_ino;
    stamp->size = sb->st_size;
    stamp->mtime_ns = sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
    stamp->ctime_ns = sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
    stamp->nlink = sb->st_nlink;
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
                   (now.ctime_ns == was->ctime_ns || now.nlink != was->nlink)
               ? SP_OK
               : SP_E_CHANGED;
}

sp_status sp_image_check(const struct sp_image *img)
{
    if (img->backing != SP_BACKING_MMAP && img->backing != SP_BACKING_FILE)
        return SP_OK;
    return sp_stamp_check(img->fd, &img->stamp);
}

static enum sp_buffer_policy buffer_policy;
static __thread struct {
    void *p;
    size_t len;
} kept;

void sp_buffer_policy(enum sp_buffer_policy policy)
{
    buffer_policy = policy;
    if (policy == SP_BUFFER_FRESH)
        (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

void *sp_buffer_take(size_t n)
{
    void *p = kept.p;

    if (p != NULL && kept.len >= n) {
        kept.p = NULL;
        return p;
    }
    return malloc(n ? n : 1);
}

void sp_buffer_drop(void)
{
    free(kept.p);
    kept.p = NULL;
}

/* give_back: BASE (LEN bytes) freed, or kept for this thread's next
 * sp_buffer_take(). */
static void give_back(void *base, size_t len)
{
    if (buffer_policy != SP_BUFFER_REUSE) {
        free(base);
        return;
    }
    if (kept.p != NULL && kept.len >= len) {
        free(base);
        return;
    }
    free(kept.p);
    kept.p = base;
    kept.len = len;
}

sp_status sp_image_release(struct sp_image *img)
{
    sp_status st = SP_OK;

    switch (img->backing) {
    case SP_BACKING_MALLOC:
        give_back(img->base, img->base_len);
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
    sp_image_type_of(img, hdr);
    img->fd = -1;
}
