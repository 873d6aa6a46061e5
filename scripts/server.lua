-- server.lua: wrk's script for run_experiments.sh --suite server
-- (scripts/server.sh).  The targets after wrk's "--" are requested in
-- turn (one file, or a set of them); at the end one line of KEY=VALUE:
-- the answers, wrk's error counts (status: answers not 2xx or 3xx) and
-- the latency percentiles in microseconds.
local targets = {}
local next_target = 0

function init(args)
   for i, a in ipairs(args) do
      targets[i] = a
   end
end

function request()
   next_target = next_target % #targets + 1
   return wrk.format("GET", targets[next_target])
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format("requests=%d duration_us=%d connect=%d read=%d "
                          .. "write=%d status=%d timeout=%d p50_us=%d "
                          .. "p90_us=%d p99_us=%d p999_us=%d max_us=%d\n",
                          summary.requests, summary.duration, e.connect,
                          e.read, e.write, e.status, e.timeout,
                          latency:percentile(50), latency:percentile(90),
                          latency:percentile(99), latency:percentile(99.9),
                          latency.max))
end
