-- arena.lua: the arena's one wrk script, written by runner/loadgen (Wrk.WriteFiles).
--
-- Arguments after "--" on wrk's command line:
--   /abs/path/get.raw ...      raw HTTP/1.1 request files, sent as they are, in rotation
--   connections=C              wrk's -c (done() needs it to undo wrk's latency correction)
--   pipeline=P                 requests written at once per connection (1: no pipelining)
--   requests_per_conn=R        every R-th request of a thread asks the server to close
--                              ("Connection: close"); 0 keeps connections alive
--   header=Name: value         added after the request line of every request (repeatable)
--
-- There is deliberately no response() callback: with one, wrk parses every response's
-- headers and calls into Lua for each, which cuts its throughput. done() prints the run's
-- figures as "ARENA ..." lines for the Go parser.

local plain = {}   -- plain[s]: the batch of P requests starting at template s (0-based)
local closing = {} -- closing[s]: the same batch, its last request carrying Connection: close
local ntpl = 0     -- number of request templates
local depth = 1    -- P
local per = 0      -- R
local pos = 0      -- template the next batch starts at
local sent = 0     -- requests this thread has issued

-- addheaders inserts extra header lines after the request line, in the file's line ending.
local function addheaders(raw, lines)
  if #lines == 0 then
    return raw
  end
  local nl = string.find(raw, "\n", 1, true)
  if not nl then
    error("arena.lua: request has no request line: " .. string.sub(raw, 1, 60))
  end
  local eol = "\n"
  if nl > 1 and string.sub(raw, nl - 1, nl - 1) == "\r" then
    eol = "\r\n"
  end
  return string.sub(raw, 1, nl) .. table.concat(lines, eol) .. eol .. string.sub(raw, nl + 1)
end

local function readfile(path)
  local f, err = io.open(path, "rb")
  if not f then
    error("arena.lua: " .. tostring(err))
  end
  local s = f:read("*a")
  f:close()
  if not s or #s == 0 then
    error("arena.lua: empty request file " .. path)
  end
  return s
end

function init(args)
  local files, headers = {}, {}
  for i = 1, #args do
    local a = args[i]
    local k, v = string.match(a, "^([%w_]+)=(.*)$")
    if k == "connections" then
      arena_connections = tonumber(v)
    elseif k == "pipeline" then
      depth = tonumber(v)
    elseif k == "requests_per_conn" then
      per = tonumber(v)
    elseif k == "header" then
      headers[#headers + 1] = v
    elseif k then
      error("arena.lua: unknown argument " .. a)
    else
      files[#files + 1] = a
    end
  end
  if not depth or depth < 1 or depth ~= math.floor(depth) then
    error("arena.lua: pipeline must be a whole number >= 1")
  end
  if not per or per < 0 or per ~= math.floor(per) then
    error("arena.lua: requests_per_conn must be a whole number >= 0")
  end
  if #files == 0 then
    error("arena.lua: no request files")
  end
  arena_depth = depth -- globals, read by done() in wrk's main Lua state through thread:get

  local reqs, closed = {}, {}
  local withclose = {}
  for i = 1, #headers do
    withclose[i] = headers[i]
  end
  withclose[#withclose + 1] = "Connection: close"
  for i, path in ipairs(files) do
    local raw = readfile(path)
    reqs[i] = addheaders(raw, headers)
    closed[i] = addheaders(raw, withclose)
  end
  ntpl = #reqs

  -- Precompute every batch so that request() does no string work.
  for s = 0, ntpl - 1 do
    local parts = {}
    for k = 0, depth - 1 do
      parts[k + 1] = reqs[(s + k) % ntpl + 1]
    end
    plain[s] = table.concat(parts)
    parts[depth] = closed[(s + depth - 1) % ntpl + 1]
    closing[s] = table.concat(parts)
  end
end

-- request returns the next batch of exactly P requests (wrk counts P responses per write).
-- With R > 0 the last request of a batch asks for Connection: close whenever the thread's
-- count crosses a multiple of R, so the server closes after answering the whole batch and
-- wrk reconnects without counting an error.
function request()
  local s = pos
  pos = (pos + depth) % ntpl
  if per > 0 then
    local before = sent
    sent = sent + depth
    if math.floor(sent / per) > math.floor(before / per) then
      return closing[s]
    end
  end
  return plain[s]
end

-- setup runs in wrk's main Lua state, once per thread; done() runs there too.
local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
end

-- correct applies wrk's latency correction (stats_correct: for each sample n >= 2e, add
-- samples at n-e, n-2e, ... while above e) to histogram d[0..max] with interval e, or undoes
-- it (sign -1), which is exact: going down from max, d[n] is back to its recorded count
-- when n is reached.
local function correct(d, max, e, sign)
  if e < 1 then
    return
  end
  local from, to, step = 2 * e, max, 1
  if sign < 0 then
    from, to, step = max, 2 * e, -1
  end
  for n = from, to, step do
    local c = d[n]
    if c ~= 0 then
      local m = n - e
      while m > e do
        d[m] = d[m] + sign * c
        m = m - e
      end
    end
  end
end

-- interval is the interval wrk corrects with: runtime / (completions per connection).
local function interval(runtime_us, completions, conns)
  local per = math.floor(completions / conns)
  if per < 1 then
    return 0
  end
  return math.floor(runtime_us / per)
end

-- batchLatency returns the latency statistics of a pipelined run, or nil.
--
-- wrk records one latency per batch of P responses but corrects its histogram with the
-- interval between responses, P times too short: the synthetic samples it adds swamp the
-- recorded ones, many land below the recorded minimum, and its own percentiles then read 0.
-- So read wrk's histogram (through LuaJIT's FFI; the layout of wrk 4's struct stats, checked
-- against what wrk reports), undo its correction, and redo it with the interval between
-- batches, as wrk would have had it counted batches.
local function batchLatency(summary, latency)
  local conns = threads[1] and threads[1]:get("arena_connections")
  local p = threads[1] and threads[1]:get("arena_depth")
  if not conns or not p or conns < 1 then
    return nil
  end
  local okffi, ffi = pcall(require, "ffi")
  if not okffi then
    return nil
  end
  pcall(ffi.cdef, "typedef struct { uint64_t count, limit, min, max; uint64_t data[]; } arena_wrk_stats;")
  local st = ffi.cast("arena_wrk_stats **", latency)[0]
  local count, max = tonumber(st.count), tonumber(st.max)
  if tonumber(st.min) ~= latency.min or max ~= latency.max then
    return nil
  end
  local out = { mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, recorded = 0 }
  if count == 0 then
    return out
  end
  if tonumber(st.limit) <= max then
    return nil
  end
  local d = ffi.new("double[?]", max + 1)
  local total = 0
  for i = 0, max do
    local c = tonumber(st.data[i])
    d[i] = c
    total = total + c
  end
  if total ~= count then
    return nil
  end
  correct(d, max, interval(summary.duration, summary.requests, conns), -1)
  local recorded = 0
  for i = 0, max do
    if d[i] < 0 then
      return nil
    end
    recorded = recorded + d[i]
  end
  out.recorded = recorded
  correct(d, max, interval(summary.duration, math.floor(summary.requests / p), conns), 1)

  total = 0
  local sum = 0
  for i = 0, max do
    total = total + d[i]
    sum = sum + i * d[i]
  end
  if total == 0 then
    return out
  end
  -- percentiles the way wrk's stats_percentile takes them
  local want = { { "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p999", 99.9 } }
  local k, cum = 1, 0
  for i = 0, max do
    cum = cum + d[i]
    while k <= #want and cum >= math.floor(want[k][2] / 100 * total + 0.5 + 0.5) do
      out[want[k][1]] = i
      k = k + 1
    end
  end
  out.mean = sum / total
  out.max = max
  return out
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("ARENA summary requests=%.0f duration_us=%.0f bytes=%.0f\n",
    summary.requests, summary.duration, summary.bytes))
  io.write(string.format("ARENA errors connect=%.0f read=%.0f write=%.0f timeout=%.0f status=%.0f\n",
    e.connect, e.read, e.write, e.timeout, e.status))
  local l, source
  local p = threads[1] and threads[1]:get("arena_depth") or 1
  if p > 1 then
    local ok, res = pcall(batchLatency, summary, latency)
    l, source = ok and res, "batches"
    if not l then
      -- wrk's figures are wrong here and cannot be fixed: report only the maximum.
      l, source = { mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = latency.max }, "max-only"
    end
  else
    l = {
      mean = latency.mean, p50 = latency:percentile(50), p90 = latency:percentile(90),
      p99 = latency:percentile(99), p999 = latency:percentile(99.9), max = latency.max,
    }
    source = "wrk"
  end
  local extra = ""
  if l.recorded then
    extra = string.format(" recorded=%.0f", l.recorded) -- batches wrk timed
  end
  io.write(string.format("ARENA latency_us mean=%.3f p50=%.0f p90=%.0f p99=%.0f p99.9=%.0f max=%.0f source=%s%s\n",
    l.mean, l.p50, l.p90, l.p99, l.p999, l.max, source, extra))
end
