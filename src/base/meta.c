/* An image's metadata (meta.h), and libexif's one entry: the EXIF block
 * parsed for its Orientation, and an output's EXIF made with it. */
#include "meta.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libexif/exif-data.h>

static const unsigned char exif_head[SP_META_EXIF_HEAD] = "Exif\0";

void sp_meta_init(struct sp_meta *m)
{
    memset(m, 0, sizeof *m);
}

void sp_meta_free(struct sp_meta *m)
{
    free(m->icc);
    free(m->exif);
    sp_meta_init(m);
}

/* dup: a malloc'd copy of the N bytes at P into *TO (NULL when N is 0). */
static sp_status dup(unsigned char **to, const unsigned char *p, size_t n)
{
    *to = NULL;
    if (n == 0)
        return SP_OK;
    if ((*to = malloc(n)) == NULL)
        return ENOMEM;
    memcpy(*to, p, n);
    return SP_OK;
}

sp_status sp_meta_copy(struct sp_meta *dst, const struct sp_meta *src)
{
    sp_meta_free(dst);
    if (dup(&dst->icc, src->icc, src->icc_len) != SP_OK ||
        dup(&dst->exif, src->exif, src->exif_len) != SP_OK) {
        sp_meta_free(dst);
        return ENOMEM;
    }
    dst->icc_len = src->icc_len;
    dst->exif_len = src->exif_len;
    dst->orientation = src->orientation;
    return SP_OK;
}

sp_status sp_meta_set_icc(struct sp_meta *m, const unsigned char *p,
                          size_t len, unsigned channels)
{
    /* the profile header's data colour space, bytes 16 to 19 of 128 */
    const char *space = channels <= 2 ? "GRAY" : "RGB ";
    unsigned char *icc;

    if (len < 128 || len > SP_META_ICC_MAX || memcmp(p + 16, space, 4) != 0)
        return SP_OK;
    if (dup(&icc, p, len) != SP_OK)
        return ENOMEM;
    free(m->icc);
    m->icc = icc;
    m->icc_len = len;
    return SP_OK;
}

/* orientation: the Orientation tag of the EXIF block of LEN bytes at P
 * (from its TIFF header), 1 to 8, or 0. */
static unsigned orientation(const unsigned char *p, size_t len)
{
    unsigned char *app1 = malloc(SP_META_EXIF_HEAD + len);
    ExifData *ed = exif_data_new();
    ExifEntry *e;
    unsigned o = 0;

    if (app1 != NULL && ed != NULL) {
        /* libexif reads an APP1 marker's payload: the header first */
        memcpy(app1, exif_head, SP_META_EXIF_HEAD);
        memcpy(app1 + SP_META_EXIF_HEAD, p, len);
        /* parsed as stored, not made to follow the standard */
        exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
        exif_data_load_data(ed, app1, (unsigned)(SP_META_EXIF_HEAD + len));
        e = exif_content_get_entry(ed->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
        if (e != NULL && e->format == EXIF_FORMAT_SHORT &&
            e->components >= 1 && e->size >= 2)
            o = exif_get_short(e->data, exif_data_get_byte_order(ed));
    }
    if (ed != NULL)
        exif_data_unref(ed);
    free(app1);
    return o >= 1 && o <= 8 ? o : 0;
}

sp_status sp_meta_set_exif(struct sp_meta *m, const unsigned char *p,
                           size_t len)
{
    unsigned char *exif;

    if (len == 0 || len > SP_META_EXIF_MAX)
        return SP_OK;
    if (dup(&exif, p, len) != SP_OK)
        return ENOMEM;
    free(m->exif);
    m->exif = exif;
    m->exif_len = len;
    m->orientation = orientation(p, len);
    return SP_OK;
}

sp_status sp_meta_exif_block(const struct sp_meta *m, unsigned char **block,
                             size_t *len)
{
    ExifData *ed;
    ExifEntry *e;
    unsigned int n = 0;

    *block = NULL;
    *len = 0;
    if (m->orientation == 0)
        return SP_OK;
    if ((ed = exif_data_new()) == NULL)
        return ENOMEM;
    /* the one tag, none of those the standard asks for added */
    exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_set_byte_order(ed, EXIF_BYTE_ORDER_MOTOROLA);
    if ((e = exif_entry_new()) != NULL) {
        exif_content_add_entry(ed->ifd[EXIF_IFD_0], e);
        exif_entry_initialize(e, EXIF_TAG_ORIENTATION);
        if (e->data != NULL) {
            exif_set_short(e->data, EXIF_BYTE_ORDER_MOTOROLA,
                           (ExifShort)m->orientation);
            exif_data_save_data(ed, block, &n);
        }
        exif_entry_unref(e);
    }
    exif_data_unref(ed);
    if (*block == NULL)
        return ENOMEM;
    *len = n;
    return SP_OK;
}
