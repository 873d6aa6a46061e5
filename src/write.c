/* The output: the format a path asks for, and sp_output's calls, which
 * open the atomic file (outfile.c) and hand the rows to the PNM encoder
 * (write_pnm.c) or the image to the stb encoder (write_stb.c). */
#include "write.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "encode.h"

sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt)
{
    static const struct { const char *ext; enum sp_outfmt fmt; } known[] = {
        {"ppm", SP_OUT_PNM}, {"pgm", SP_OUT_PNM}, {"pnm", SP_OUT_PNM},
        {"png", SP_OUT_PNG}, {"jpg", SP_OUT_JPEG}, {"jpeg", SP_OUT_JPEG},
        {"bmp", SP_OUT_BMP}, {"tga", SP_OUT_TGA},
    };
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base != NULL ? base + 1 : path;
    dot = strrchr(base, '.');
    *fmt = SP_OUT_PNM;
    if (dot == NULL || dot == base)  /* no extension, or a dot file */
        return SP_OK;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcasecmp(dot + 1, known[i].ext) == 0) {
            *fmt = known[i].fmt;
            return SP_OK;
        }
    }
    return SP_E_OUTFORMAT;
}

sp_status sp_output_open(struct sp_output *o, const char *path,
                         enum sp_outfmt fmt, const struct sp_image *layout,
                         char *why)
{
    sp_status st = SP_OK;

    why[0] = '\0';
    memset(o, 0, sizeof *o);
    o->file = (struct sp_outfile){.fd = -1, .dir = -1};
    o->fmt = fmt;
    /* Refused before the file exists, and before anything is scaled. */
    if (fmt != SP_OUT_PNM && strcmp(path, "-") != 0) {
        st = sp_outfmt_fits(fmt, layout->width, layout->height,
                            layout->channels, why);
        if (st != SP_OK)
            return st;
    }
    if (strcmp(path, "-") == 0) {
        o->fmt = SP_OUT_PNM;
        o->f = stdout;
    } else {
        st = sp_outfile_open(&o->file, path, why);
        if (st == SP_OK && (o->f = fdopen(o->file.fd, "wb")) == NULL) {
            st = errno;
            close(o->file.fd);
        }
    }
    if (st == SP_OK && o->fmt == SP_OUT_PNM) {
        errno = 0;
        st = sp_header_write(o->f, layout->width, layout->height,
                             layout->channels, layout->maxval, why);
    }
    if (st != SP_OK)
        return sp_output_close(o, st);
    return SP_OK;
}

sp_status sp_output_put(struct sp_output *o, const struct sp_image *img,
                        char *why)
{
    errno = 0;
    if (o->fmt == SP_OUT_PNM)
        return sp_pnm_put_rows(img, o->f);
    return sp_stb_put(img, o->f, o->fmt, why);
}

sp_status sp_output_put_repeated(struct sp_output *o,
                                 const struct sp_image *img, unsigned times)
{
    if (times == 1)
        return sp_pnm_put_rows(img, o->f);
    return sp_pnm_put_repeated(img, times, o->f);
}

sp_status sp_output_close(struct sp_output *o, sp_status st)
{
    if (o->f != NULL) {
        errno = 0;
        if (fflush(o->f) != 0 && st == SP_OK)
            st = errno ? errno : EIO;
        if (ferror(o->f) && st == SP_OK)
            st = EIO;
    }
    /* Standard output is the caller's to close. */
    if (o->f != stdout) {
        if (st == SP_OK && o->f != NULL)
            st = sp_outfile_commit(&o->file);
        if (o->f != NULL && fclose(o->f) != 0 && st == SP_OK)
            st = errno;
        sp_outfile_close(&o->file);
    }
    memset(o, 0, sizeof *o);
    o->file = (struct sp_outfile){.fd = -1, .dir = -1};
    return st;
}
