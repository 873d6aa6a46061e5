"""The photos suite's report (run_experiments.sh --suite photos).

From photos.csv (name, source, format, width, height, bytes: the
photographs), photos-thumbs.csv (files, contender, round, wall_ns, rss_kb,
bytes: a folder of JPEGs to thumbnails) and photos-encode.csv (image,
contender, round, wall_ns, rss_kb, bytes: a PPM written as PNG, JPEG or
PPM): issue 28's targets, each with whether it was met.  Writes
photos.md."""
import os

from . import stats
from .tables import (ReportError, markdown_table, number, read_rows,
                     write_text)

LIST_NEED = ("name", "format", "width", "height", "bytes")
THUMBS_NEED = ("files", "contender", "round", "wall_ns", "rss_kb", "bytes")
ENCODE_NEED = ("image", "contender", "round", "wall_ns", "rss_kb", "bytes")
PNG_PEERS = ("pamtopng", "magick", "gm", "vips")
COMMANDS = {
    "scaleppm": "scaleppm --fit 320x320 -o DIR/ FILE.jpg...",
    "vipsthumbnail": "vipsthumbnail -s 320x320 -o DIR/%s.jpg FILE.jpg...",
    "scaleppm-png": "scaleppm -s 1 IN.ppm OUT.png",
    "pamtopng": "pamtopng IN.ppm > OUT.png",
    "magick": "convert IN.ppm OUT.png",
    "gm": "gm convert IN.ppm OUT.png",
    "vips": "vips copy IN.ppm OUT.png",
    "scaleppm-jpg": "scaleppm -s 1 IN.ppm OUT.jpg",
    "scaleppm-ppm": "scaleppm -s 1 IN.ppm OUT.ppm",
}


def by(rows, key, path):
    """{(key of a row): {"wall": [...], "rss": [...], "bytes": [...]}}, in
    the order the keys first appear."""
    out = {}
    for r in rows:
        d = out.setdefault(key(r), {"wall": [], "rss": [], "bytes": []})
        d["wall"].append(number(r, "wall_ns", path))
        d["rss"].append(number(r, "rss_kb", path))
        d["bytes"].append(number(r, "bytes", path))
    return out


def met(ok):
    return "yes" if ok else "**no**"


def photos_text(rows):
    jpeg = [r for r in rows if r["format"] == "jpeg"]
    png = [r for r in rows if r["format"] == "png"]
    px = sorted(int(r["width"]) * int(r["height"]) for r in jpeg)
    small = min(jpeg, key=lambda r: int(r["width"]) * int(r["height"]))
    large = max(jpeg, key=lambda r: int(r["width"]) * int(r["height"]))
    mib = sum(int(r["bytes"]) for r in jpeg) / (1 << 20)
    return [f"The photographs (`photos.csv`): {len(jpeg)} JPEGs, "
            f"{small['width']}x{small['height']} to "
            f"{large['width']}x{large['height']} "
            f"({px[len(px) // 2] / 1e6:.1f} Mpixel the median), "
            f"{mib:.1f} MiB in all, and {len(png)} PNGs."]


def thumbs_rows(groups):
    """The thumbnails table's rows and the targets (met, counted)."""
    if "scaleppm" not in groups or "vipsthumbnail" not in groups:
        return [], 0, 0
    vt = groups["vipsthumbnail"]
    r = stats.ratio_bootstrap(groups["scaleppm"]["wall"], vt["wall"])
    sp = stats.summarize(groups["scaleppm"]["wall"]).median
    v = stats.summarize(vt["wall"]).median
    ok = sp / v <= 0.5
    out = [["scaleppm", f"{sp / 1e9:.2f}",
            f"{stats.median(groups['scaleppm']['bytes']) / 1024:.0f}",
            f"{sp / v:.2f}", f"{r.lo:.2f}–{r.hi:.2f}", "≤ 0.5", met(ok),
            len(groups["scaleppm"]["wall"])],
           ["vipsthumbnail", f"{v / 1e9:.2f}",
            f"{stats.median(vt['bytes']) / 1024:.0f}", "", "", "", "",
            len(vt["wall"])]]
    return out, int(ok), 1


def encode_rows(groups, images):
    """The encode table's rows and the targets (met, counted): for each
    image, every contender's time, size and peak RSS beside
    scaleppm-png's figure."""
    rows, got, count = [], 0, 0
    for image in images:
        g = {who: d for (im, who), d in groups.items() if im == image}
        if not {"scaleppm-png", "pamtopng", "vips", "scaleppm-ppm"} <= set(g):
            raise ReportError(f"{image}: a contender's rows are missing")
        png = g["scaleppm-png"]
        first = True
        for who, d in g.items():
            wall = stats.median(d["wall"])
            size = stats.median(d["bytes"])
            rss = stats.median(d["rss"])
            target, ok = "", None
            if who == "pamtopng":
                ratio = stats.median(png["bytes"]) / size
                target, ok = "size ≤ 1.05", ratio <= 1.05
                versus = f"{ratio:.3f}"
            elif who == "vips":
                r = stats.ratio_bootstrap(png["wall"], d["wall"])
                ratio = stats.median(png["wall"]) / wall
                target, ok = "time < 1", ratio < 1
                versus = f"{ratio:.2f} ({r.lo:.2f}–{r.hi:.2f})"
            elif who in ("scaleppm-jpg", "scaleppm-png") and \
                    image == images[-1]:
                ratio = rss / stats.median(g["scaleppm-ppm"]["rss"])
                target, ok = "RSS / PPM's ≤ 2", ratio <= 2
                versus = f"{ratio:.2f}"
            elif who in PNG_PEERS:
                versus = f"{stats.median(png['bytes']) / size:.3f}"
            else:
                versus = ""
            if ok is not None:
                got, count = got + int(ok), count + 1
            rows.append([image if first else "", who, f"{wall / 1e6:.1f}",
                         f"{size / 1024:.0f}", f"{rss / 1024:.1f}", versus,
                         target, "" if ok is None else met(ok),
                         len(d["wall"])])
            first = False
    return rows, got, count


def report(folder):
    photos = read_rows(os.path.join(folder, "photos.csv"), LIST_NEED)
    path = os.path.join(folder, "photos-thumbs.csv")
    thumbs = by(read_rows(path, THUMBS_NEED), lambda r: r["contender"],
                path)
    path = os.path.join(folder, "photos-encode.csv")
    enc = read_rows(path, ENCODE_NEED)
    images = list(dict.fromkeys(r["image"] for r in enc))
    encode = by(enc, lambda r: (r["image"], r["contender"]), path)
    trows, tgot, tcount = thumbs_rows(thumbs)
    erows, egot, ecount = encode_rows(encode, images)
    out = ["# photos: issue 28's targets on real photographs", ""]
    out += photos_text(photos) + [""]
    out += ["Each command a whole process timed by `sprun`, its outputs "
            "removed before each run, the contenders' order rotated by "
            "one each round; medians over the rounds. The commands:", ""]
    out += [f"- {who}: `{cmd}`" for who, cmd in COMMANDS.items()]
    out += ["", f"Targets met: {tgot + egot} of {tcount + ecount}"
            + ("." if trows else " (the thumbnails' not run)."), "",
            "## Thumbnails", ""]
    if trows:
        n = len([p for p in photos if p["format"] == "jpeg"])
        out += [f"{n} JPEGs to 320x320-bounded JPEG thumbnails, the whole "
                "run, each tool at its default JPEG quality (\"KiB out\": "
                "the thumbnails' bytes in all). \"/ vipsthumbnail\": the "
                "ratio of the medians; the interval: 95%, bootstrap of the "
                "means.", ""]
        out += markdown_table(
            ["contender", "s", "KiB out", "/ vipsthumbnail", "95%",
             "target", "met?", "rounds"],
            "lrrrrllr", trows)
    else:
        out += ["Not run: this scaleppm has no `--fit` (env.txt's "
                "thumbs setting)."]
    out += ["", "## PNG, JPEG and PPM outputs", "",
            "A PPM (warm) written whole by each contender, the PNGs at "
            "their default level. \"vs\": for a PNG peer, scaleppm's PNG "
            "size over the peer's; for vips, scaleppm's PNG time over "
            "vips's, the ratio of the medians (95% interval, bootstrap of "
            "the means); for scaleppm's JPEG and PNG of the "
            "largest image, their peak RSS over its PPM output's.", ""]
    out += markdown_table(
        ["image", "contender", "ms", "KiB out", "peak RSS MiB", "vs",
         "target", "met?", "rounds"], "llrrrrllr", erows)
    write_text(os.path.join(folder, "photos.md"), "\n".join(out) + "\n")
