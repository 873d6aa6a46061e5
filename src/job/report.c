#include "report.h"

#include <inttypes.h>

#include "decode.h"
#include "msg.h"

/* put_string: S as a JSON string: quoted, with quotes, backslashes,
 * control characters (C0, DEL, C1) and the bidirectional overrides
 * escaped as \uXXXX, so that a record stays one line and a terminal that
 * shows it acts on none of it; a byte that is not UTF-8 as the code point
 * of its value (JSON is UTF-8: the record stays valid). */
static void put_string(const char *s, FILE *f)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
         p++) {
        unsigned long cp = *p;
        size_t n = *p >= 0x80 ? sp_utf8_char(p, &cp) : 1;

        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (n > 1 && sp_char_shown(cp)) {
            fwrite(p, 1, n, f);
            p += n - 1;
        } else if (n > 1 || cp < 0x20 || cp >= 0x7f) {
            fprintf(f, "\\u%04lx", cp);
            p += n > 1 ? n - 1 : 0;
        } else {
            putc(*p, f);
        }
    }
    putc('"', f);
}

/* codec_name: how a record names the input's codec: its row's key. */
static const char *codec_name(const struct sp_codec *codec)
{
    return codec != NULL ? codec->key : "unknown";
}

void sp_report_print(const struct sp_report *r, sp_status st, int json,
                     FILE *f)
{
    static const char *names[SP_NPHASES] = {"load", "scale", "release",
                                            "write"};
    const char *io = sp_io_name(r->load.io_used);
    const char *codec = codec_name(r->load.codec);
    const char *key = json ? ",\"" : " ", *eq = json ? "\":" : "=";

    fputs(json ? "{\"input\":" : "input=", f);
    put_string(r->input != NULL ? r->input : "", f);
    fputs(json ? ",\"output\":" : " output=", f);
    if (r->output != NULL)
        put_string(r->output, f);
    else  /* no output: a word a name (always quoted) cannot be */
        fputs(json ? "null" : "none", f);
    if (json)
        fprintf(f, ",\"factor\":%d,\"filter\":\"%s\",\"io\":\"%s\","
                "\"codec\":\"%s\",\"threads\":%u", r->factor,
                r->filter ? r->filter : "", io, codec, r->threads_used);
    else
        fprintf(f, " factor=%d filter=%s io=%s codec=%s threads=%u",
                r->factor, r->filter ? r->filter : "", io, codec,
                r->threads_used);
    for (int i = 0; i < SP_NPHASES; i++)
        fprintf(f, "%s%s_ns%s%" PRIu64 "%s%s_minflt%s%ld%s%s_majflt%s%ld",
                key, names[i], eq, r->phase[i].ns, key, names[i], eq,
                r->phase[i].minflt, key, names[i], eq, r->phase[i].majflt);
    if (json)
        fprintf(f, ",\"in\":\"%zux%zu\",\"out\":\"%zux%zu\"",
                r->in_width, r->in_height, r->out_width, r->out_height);
    else
        fprintf(f, " in=%zux%zu out=%zux%zu", r->in_width, r->in_height,
                r->out_width, r->out_height);
    if (r->shrink > 1)
        fprintf(f, "%sshrink%s%u", key, eq, r->shrink);
    if (r->in_batch)
        fprintf(f, "%sworker%s%u%sstart_ns%s%" PRIu64 "%send_ns%s%" PRIu64,
                key, eq, r->worker, key, eq, r->start_ns, key, eq,
                r->end_ns);
    fprintf(f, json ? ",\"status\":\"%s\"" : " status=%s",
            st != SP_OK ? "error" : r->skipped ? "skipped" : "ok");
    if (st != SP_OK) {
        fprintf(f, "%serror%s", key, eq);
        put_string(sp_strerror(st), f);
    }
    fputs(json ? "}\n" : "\n", f);
}
