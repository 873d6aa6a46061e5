/* `scaleppm serve`: the server is its own program, linked with
 * libmicrohttpd, so that scaleppm stays a static PIE (cli_serve.h). */
#include "cli_serve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "say.h"

#define SERVE_PROGRAM "scaleppm-serve"

/* try_in: exec DIR/SUB/scaleppm-serve (SUB absolute: SUB/scaleppm-serve)
 * with ARGV; returns only when it cannot be run. */
static void try_in(const char *dir, const char *sub, char **argv)
{
    char prog[2 * PATH_MAX];

    if (sub[0] == '/')
        snprintf(prog, sizeof prog, "%s/%s", sub, SERVE_PROGRAM);
    else
        snprintf(prog, sizeof prog, "%s/%s%s%s", dir, sub, sub[0] ? "/" : "",
                 SERVE_PROGRAM);
    argv[0] = prog;
    execv(prog, argv);
}

int sp_cli_serve(char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    /* Beside scaleppm (the build tree), then where the install puts it:
     * SP_SERVE_DIR under the prefix, scaleppm being in SP_BINDIR
     * (src/CMakeLists.txt). */
    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            try_in(self, "", argv);
            if (strcmp(SP_BINDIR, "bin") == 0)
                try_in(self, "../" SP_SERVE_DIR, argv);
            if (SP_SERVE_DIR[0] == '/')
                try_in(self, SP_SERVE_DIR, argv);
        }
    }
    argv[0] = SERVE_PROGRAM;
    execvp(SERVE_PROGRAM, argv);
    sp_say("serve: cannot run %s: %s", SERVE_PROGRAM, strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
