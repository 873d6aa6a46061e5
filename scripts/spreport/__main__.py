"""spreport's command line: one subcommand a report.

  spreport sun DIR [DIR ...]             each DIR's summary.csv, table1.md,
                                         figure1.png from its runs.csv
  spreport sun --sessions OUT S1 S2 ...  OUT/sessions.md, .csv, .png: the
                                         sessions S1, S2 ... of one case
  spreport iobench NAME CSV MD PNG       an iobench suite's table, figure
  spreport durable DIR --filesystem FS   DIR/durable.md
  spreport peers DIR ...                 DIR/peers.md, peers.png
  spreport paths CSV MD                  the load paths' tables
  spreport batch DIR                     DIR/batch.md, batch.png,
                                         batch-set.png
  spreport photos DIR                    DIR/photos.md: issue 28's targets
  spreport compressed CSV MD             the load paths on JPEG and PNG
  spreport server DIR                    DIR/server.md: memory contention
                                         in scaleppm serve
  spreport ab DIR                        DIR/ab.md: two builds against
                                         each other (scripts/ab.sh)
  spreport pool KIND OUT S1 S2 ...       a suite's sessions pooled into
                                         OUT, and OUT/sessions.md
  spreport readme [--check] (--all|FILE...)
                                         the documents' figures made (or
                                         checked) from their cells
  spreport model --units CSV... --out DIR RUNS_DIR...
                                         the cost model against the runs
                                         (model.py's options)
  spreport regen [--check] [DIR ...]     results/ folders' generated files
  spreport stability [--check] [--out FILE] [--results DIR]
                     (--rev REV | --previous DIR)
                                         this reference's verdicts against
                                         a previous one's, cell by cell
                                         made again from their raw rows

Exits 0, 1 after one line on stderr when a report cannot be made, 2 on a
usage error."""
import argparse
import sys

from .tables import ReportError


def parser():
    p = argparse.ArgumentParser(prog="spreport", description=__doc__,
                                formatter_class=argparse
                                .RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sun", help="the Sun 2002 study's table and figure")
    s.add_argument("--sessions", metavar="OUT",
                   help="compare the sessions DIR ... into OUT")
    s.add_argument("dirs", nargs="+", metavar="DIR")
    s.add_argument("--quiet", action="store_true",
                   help="do not print the table")
    s = sub.add_parser("iobench", help="an iobench suite's table, figure")
    for a in ("name", "csv", "md", "png"):
        s.add_argument(a, metavar=a.upper())
    s = sub.add_parser("durable", help="the durable suite's table")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--filesystem", default="?",
                   help="where the outputs were written, for the text")
    s = sub.add_parser("peers", help="the peers suite's tables, figure")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--memcpy", metavar="RATE,...",
                   help="bytes/s of each copy (sprun --memcpy), "
                   "comma-separated; none: nothing was timed")
    s.add_argument("--input", action="append", default=[],
                   metavar="WxH:BPP", help="an input's size and bytes a "
                   "pixel, in order (repeat)")
    s.add_argument("--commands", metavar="TSV",
                   help="job, tool, command lines for the commands table")
    s = sub.add_parser("paths", help="the load paths' tables")
    s.add_argument("csv", metavar="CSV")
    s.add_argument("md", metavar="MD")
    s = sub.add_parser("threads", help="the threads suite's tables")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--cpus", default="?", help="the busy loops' count")
    s.add_argument("--disk", default="?",
                   help="the disk output's filesystem, for the text")
    s = sub.add_parser("batch", help="the batch suite's tables, figures")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--outputs", default="tmpfs",
                   help="where the outputs were written, for the text")
    s = sub.add_parser("photos", help="the photos suite's table")
    s.add_argument("dir", metavar="DIR")
    s = sub.add_parser("compressed", help="the compressed suite's tables")
    s.add_argument("csv", metavar="CSV")
    s.add_argument("md", metavar="MD")
    s = sub.add_parser("server", help="the server suite's report")
    s.add_argument("dir", metavar="DIR")
    s = sub.add_parser("ab", help="two builds against each other")
    s.add_argument("dir", metavar="DIR")
    s = sub.add_parser("pool", help="a suite's sessions together")
    s.add_argument("kind", choices=("iobench", "paths", "durable", "peers",
                                    "threads", "batch", "compressed",
                                    "photos", "server"))
    s.add_argument("out", metavar="OUT")
    s.add_argument("dirs", nargs="+", metavar="SESSION")
    s = sub.add_parser("readme", help="the READMEs' figures and their data")
    s.add_argument("--check", action="store_true",
                   help="write nothing; differences are errors")
    s.add_argument("--all", action="store_true",
                   help="every README.md, docs/*.md and man/*.1")
    s.add_argument("files", nargs="*", metavar="FILE")
    return p


def run(args):
    if args.command == "sun":
        from . import sun
        if args.sessions:
            text = sun.sessions(args.sessions, args.dirs)
        else:
            text = "".join(sun.report(d) for d in args.dirs)
        if not args.quiet:
            sys.stdout.write(text)
    elif args.command == "iobench":
        from . import iobench
        iobench.report(args.name, args.csv, args.md, args.png)
    elif args.command == "durable":
        from . import durable
        durable.report(args.dir, args.filesystem)
    elif args.command == "peers":
        from . import peers
        peers.report(args.dir, args.memcpy, args.input, args.commands)
    elif args.command == "paths":
        from . import paths
        paths.report(args.csv, args.md)
    elif args.command == "threads":
        from . import threads
        threads.report(args.dir, args.cpus, args.disk)
    elif args.command == "batch":
        from . import batch
        batch.report(args.dir, args.outputs)
    elif args.command == "photos":
        from . import photos
        photos.report(args.dir)
    elif args.command == "compressed":
        from . import compressed
        compressed.report(args.csv, args.md)
    elif args.command == "server":
        from . import server
        server.report(args.dir)
    elif args.command == "ab":
        from . import ab
        ab.report(args.dir)
    elif args.command == "pool":
        from . import pool
        pool.pool(args.kind, args.out, args.dirs)
    elif args.command == "readme":
        from . import readme
        return readme.main(((["--check"] if args.check else [])
                            + (["--all"] if args.all else []) + args.files))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["model"]:
        from . import model
        return model.main(argv[1:])
    if argv[:1] == ["regen"]:
        from . import regen
        return regen.main(argv[1:])
    if argv[:1] == ["stability"]:
        from . import stability
        return stability.main(argv[1:])
    args = parser().parse_args(argv)
    try:
        return run(args)
    except ReportError as e:
        print(f"spreport: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
