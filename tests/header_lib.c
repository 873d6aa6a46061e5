/* header_lib.c: what the header suites (test_header_*.c) share: their
 * includes, and a header parsed (sp_header_parse) or loaded (sp_load) from
 * bytes or text written to a file. */
#include "header_lib.h"

/* parse_bytes: sp_header_parse() of a file holding the LEN bytes of TEXT. */
sp_status parse_bytes(const void *text, size_t len,
                      struct sp_header *hdr, char *why)
{
    const char *path = fx_path("h.pnm");
    sp_status st;
    FILE *f;

    fx_write_file(path, text, len);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    st = sp_header_parse(f, hdr, why);
    fclose(f);
    return st;
}

sp_status parse_text(const char *text, struct sp_header *hdr,
                     char *why)
{
    return parse_bytes(text, strlen(text), hdr, why);
}

/* load_bytes: sp_load() by IO of a file holding the LEN bytes of TEXT;
 * a failed load must leave the image empty. */
sp_status load_bytes(const void *text, size_t len, enum sp_io io,
                     struct sp_load_info *info)
{
    const char *path = fx_path("l.pnm");
    struct sp_image img;
    sp_status st;

    fx_write_file(path, text, len);
    st = sp_load(path, io, &img, info);
    if (st != SP_OK) {
        ck_assert_ptr_null(img.base);
        ck_assert_int_eq(img.backing, SP_BACKING_NONE);
    }
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    return st;
}

sp_status load_text(const char *text, enum sp_io io)
{
    struct sp_load_info info;

    return load_bytes(text, strlen(text), io, &info);
}
