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

int sp_cli_serve(char **argv)
{
    char self[PATH_MAX], prog[PATH_MAX + sizeof SERVE_PROGRAM];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(prog, sizeof prog, "%s/%s", self, SERVE_PROGRAM);
            argv[0] = prog;
            execv(prog, argv);
        }
    }
    argv[0] = SERVE_PROGRAM;
    execvp(SERVE_PROGRAM, argv);
    sp_say("serve: cannot run %s: %s", SERVE_PROGRAM, strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
