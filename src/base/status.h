/* status.h: the one status type of scaleppm.
 *
 * 0 is success, a positive value is an errno passed through unchanged, and a
 * negative value is one of the project codes below.  Library code never
 * prints and never exits: it returns an sp_status, and the program decides
 * what to say. */
#ifndef SP_STATUS_H
#define SP_STATUS_H

typedef int sp_status;

/* Room for the detail that may come with a status ("why"): a parser's
 * words, libnetpbm's, or the reason an output was refused.  It may hold
 * bytes of an input or a name as they are: show it through msg.h. */
#define SP_WHY_MAX 256

enum {
    SP_OK = 0,
    SP_E_USAGE = -1,        /* an argument out of range */
    SP_E_EMPTY = -2,        /* the input has no bytes at all */
    SP_E_NOTPNM = -3,       /* not an image of a format scaleppm reads */
    SP_E_UNSUPPORTED = -4,  /* a PNM/PAM variant we do not handle */
    SP_E_BADHEADER = -5,    /* a malformed header (libnetpbm says why) */
    SP_E_TOOBIG = -6,       /* a size does not fit in size_t (or int for stb) */
    SP_E_TRUNCATED = -7,    /* shorter than the header says */
    SP_E_BADRASTER = -8,    /* a plain-format sample is malformed or > maxval */
    SP_E_OUTFORMAT = -9,    /* output extension we cannot write */
    SP_E_ENCODE = -10,      /* the image encoder failed */
    SP_E_THREAD = -11,      /* a worker thread could not be started or joined */
    SP_E_CHANGED = -12,     /* the input changed while it was being read */
    SP_E_LIMIT = -13,       /* more pixels than the job allows */
    SP_E_REFUSED = -14,     /* an output that would not be replaced safely */
    SP_E_CONVERT = -15,     /* the output's type cannot be made from the
                               image's in one step */
    SP_E_BADJPEG = -16,     /* a malformed JPEG header (libjpeg says why) */
    SP_E_BADPNG = -17,      /* a malformed PNG header (libpng says why) */
};

/* sp_strerror: a short lower-case description of STATUS, for either kind
 * of code.  The string is static; never NULL. */
const char *sp_strerror(sp_status status);

#endif
