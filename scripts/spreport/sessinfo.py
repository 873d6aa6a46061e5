"""When each session of a folder ran and on what machine, from the
env.txt each session wrote: for sessions.md (the Sun study's and the
pooled suites'), so that a reader sees how far apart the sessions ran and
whether they compare like for like.

A session's start is its env.txt's "started:" line (run_experiments.sh
writes it when the invocation begins); an older env.txt has only "date:",
written when the session ended, and is shown as such.  Its identity is
the "machine:" line (the kernel's release and build, the CPU's model and
microcode, the hypervisor), else, in an older env.txt, its "kernel:" and
"cpu:" lines."""
import os
from datetime import datetime

from .tables import markdown_table

TIME = "%Y-%m-%d %H:%M:%S UTC"
ACROSS = ("The sessions' machine identities differ: this is a comparison "
          "across identities, not like for like.")


def read_env(folder):
    """FOLDER/env.txt's lines as {key: value} (the first of a key); {}
    where there is no env.txt."""
    env = {}
    try:
        with open(os.path.join(folder, "env.txt"), encoding="utf-8") as f:
            for line in f:
                k, sep, v = line.rstrip("\n").partition(": ")
                if sep and k not in env:
                    env[k] = v
    except FileNotFoundError:
        pass
    return env


def identity(env):
    """The machine's identity an env.txt records; "?" where none."""
    if "machine" in env:
        return env["machine"]
    old = [env[k] for k in ("kernel", "cpu") if k in env]
    return "; ".join(old) if old else "?"


def start(env):
    """(time, what it is) of a session: its start, else when it ended."""
    for key, what in (("started", "started"), ("date", "ended")):
        try:
            return datetime.strptime(env.get(key, ""), TIME), what
        except ValueError:
            continue
    return None, ""


def gap(a, b):
    """B - A as "12 min 5 s"; "" where either is unknown."""
    if a is None or b is None:
        return ""
    s = int((b - a).total_seconds())
    sign, s = ("-" if s < 0 else ""), abs(s)
    if s >= 3600:
        return f"{sign}{s // 3600} h {s % 3600 // 60} min"
    return f"{sign}{s // 60} min {s % 60} s" if s >= 60 else f"{sign}{s} s"


def seed(env):
    """The session's order seed, from its settings' order_seed= or
    seed=, or its "session:" line; "" where none."""
    for word in (env.get("settings", "") + " "
                 + env.get("session", "")).split():
        k, _, v = word.partition("=")
        if k in ("order_seed", "seed"):
            return v
    return ""


def differ(folders):
    """Whether the session FOLDERS' machine identities differ."""
    return len({identity(read_env(f)) for f in folders}) > 1


def section(names, folders):
    """sessions.md's lines on the sessions NAMES (their FOLDERS): when
    each ran, the time since the one before, its order seed, and, where
    the machine identities differ, which each had and a sentence saying
    the comparison is across identities."""
    envs = [read_env(f) for f in folders]
    ids = [identity(e) for e in envs]
    across = len(set(ids)) > 1
    rows, prev = [], None
    for name, env, ident in zip(names, envs, ids):
        t, what = start(env)
        rows.append([name, f"{t.strftime(TIME)} ({what})" if t else "?",
                     gap(prev, t), seed(env)]
                    + ([ident] if across else []))
        prev = t
    out = ["## The sessions", "",
           "When each session ran (its env.txt: \"started\" where it "
           "records its start, else \"ended\"), the time since the "
           "session before, and its order seed."
           + (" " + ACROSS if across else
              " No session's env.txt names its machine." if ids[0] == "?"
              else " Every session ran on one machine identity: " + ids[0]
              + "."), ""]
    out += markdown_table(["session", "time", "since the one before",
                           "order seed"] + (["machine"] if across else []),
                          "lllr" + ("l" if across else ""), rows)
    return out
