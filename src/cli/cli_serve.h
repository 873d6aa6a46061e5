/* cli_serve.h: `scaleppm serve`, the web front (docs/serve.md), which is
 * a program of its own: scaleppm-serve, beside scaleppm. */
#ifndef SP_CLI_SERVE_H
#define SP_CLI_SERVE_H

/* sp_cli_serve: run scaleppm-serve with ARGV's arguments after
 * "serve" (ARGV[0]), in place of this process: the one in scaleppm's own
 * directory, else the first on PATH.  Returns only when neither can be
 * run: the exit status, its one line printed. */
int sp_cli_serve(char **argv);

#endif
