"""serve_soak.py: a soak of `scaleppm serve` (serve_soak_test.sh).

usage: serve_soak.py HOST:PORT MANIFEST COUNT CLIENTS

MANIFEST holds a request a line, "CODE METHOD PATH [FILE]": PATH (sent as
it is, escapes and all) asked with METHOD must answer CODE; with FILE, a
GET's body must be FILE's bytes (the command line's output) and a HEAD's
Content-Length its size.  CODE 304 sends, as If-None-Match, the ETag that
the 200 of the same PATH answered.  First each 200 is asked once (its tag
learned), then COUNT requests, the manifest's lines drawn at random (a
fixed seed), are sent by CLIENTS threads, each on one keep-alive
connection.  Prints a line of counts by status; exits 1 at the first
unexpected answer (printed), 0 when every answer was as expected.
"""
import http.client
import random
import sys
import threading


def read_manifest(path):
    """The manifest's lines as (code, method, path, body or None)."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            body = None
            if len(words) > 3:
                with open(words[3], "rb") as b:
                    body = b.read()
            lines.append((int(words[0]), words[1], words[2], body))
    return lines


def ask(conn, method, path, headers):
    """METHOD PATH on CONN: (status, headers, body)."""
    conn.request(method, path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    return resp.status, resp, body


def unexpected(line, status, resp, body):
    """Why an answer to LINE is not the one expected; None when it is."""
    code, method, path, want = line
    if status != code:
        return f"{method} {path}: {status}, not {code} ({body[:80]!r})"
    if method == "HEAD" and body:
        return f"HEAD {path}: a body"
    if code == 304 and body:
        return f"{path}: a 304 with a body"
    if want is None:
        return None
    if method == "GET" and body != want:
        return f"GET {path}: not the command line's bytes"
    if method == "HEAD" and resp.getheader("Content-Length") != str(len(want)):
        return f"HEAD {path}: Content-Length {resp.getheader('Content-Length')}"
    return None


def learn_tags(address, lines):
    """The ETag of each path the manifest expects a 200 from."""
    conn = http.client.HTTPConnection(address, timeout=60)
    tags = {}
    for line in lines:
        if line[0] == 200 and line[1] == "GET" and line[2] not in tags:
            status, resp, body = ask(conn, "GET", line[2], {})
            why = unexpected(line, status, resp, body)
            if why:
                raise SystemExit(f"serve_soak: {why}")
            tags[line[2]] = resp.getheader("ETag")
    conn.close()
    return tags


def client(address, work, tags, counts, failures, lock):
    """One thread: the requests WORK on one keep-alive connection."""
    conn = http.client.HTTPConnection(address, timeout=60)
    mine = {}
    for line in work:
        if failures:
            break
        headers = {"If-None-Match": tags[line[2]]} if line[0] == 304 else {}
        try:
            status, resp, body = ask(conn, line[1], line[2], headers)
        except (OSError, http.client.HTTPException) as e:
            status, resp, body = f"{type(e).__name__}: {e}", None, b""
        why = unexpected(line, status, resp, body)
        if why:
            with lock:
                failures.append(why)
            break
        mine[status] = mine.get(status, 0) + 1
    conn.close()
    with lock:
        for status, n in mine.items():
            counts[status] = counts.get(status, 0) + n


def main():
    address, manifest, count, clients = sys.argv[1:5]
    lines = read_manifest(manifest)
    tags = learn_tags(address, lines)
    draw = random.Random(29)
    work = [draw.choice(lines) for _ in range(int(count))]
    n = int(clients)
    counts, failures, lock = {}, [], threading.Lock()
    threads = [threading.Thread(target=client,
                                args=(address, work[i::n], tags, counts,
                                      failures, lock))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(" ".join(f"{k}:{counts[k]}" for k in sorted(counts)))
    if failures:
        print(f"serve_soak: {failures[0]}", file=sys.stderr)
        return 1
    if sum(counts.values()) != int(count):
        print("serve_soak: answers missing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
