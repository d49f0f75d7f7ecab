-- arena.lua: the arena's one wrk script, written by runner/loadgen (Wrk.WriteFiles).
--
-- Arguments after "--" on wrk's command line:
--   /abs/path/get.raw ...      raw HTTP/1.1 request files, sent as they are, in rotation
--   connections=C              wrk's -c (done() needs it to undo wrk's latency correction)
--   pipeline=P                 requests written at once per connection (1: no pipelining)
--   requests_per_conn=R        every R-th request of a thread asks the server to close
--                              ("Connection: close"); 0 keeps connections alive
--   header=Name: value         added after the request line of every request (repeatable)
--   threads=T                  wrk's -t (the stride of {SEQ} sequences; default C)
--
-- Placeholders in a request file are replaced in every request sent, zero-padded to the
-- digit count of their last number so that the request keeps its length (the file's
-- Content-Length counts the padded width):
--   {RAND:min:max}   a uniform random integer in [min, max]
--   {SEQ:start}      the next number of a sequence: thread k of T sends start+k, start+k+T,
--                    start+k+2T, ... so no two threads send the same number; past the
--                    largest number of that width the sequence wraps to start. Templates
--                    with the same start share one sequence.
-- Only batches that hold a placeholder are assembled per request; the others are built
-- once in init() and sent as they are.
--
-- There is deliberately no response() callback: with one, wrk parses every response's
-- headers and calls into Lua for each, which cuts its throughput. done() prints the run's
-- figures as "ARENA ..." lines for the Go parser.

local plain = {}   -- plain[s]: the batch of P requests starting at template s (0-based)
local closing = {} -- closing[s]: the same batch, its last request carrying Connection: close
local dynamic = false -- whether any batch holds a placeholder
local dyn = {}     -- dyn[s]: plain[s] and closing[s] are part lists for render(), not strings
local ntpl = 0     -- number of request templates
local depth = 1    -- P
local per = 0      -- R
local pos = 0      -- template the next batch starts at
local sent = 0     -- requests this thread has issued
local run, verify  -- request() and its stand-in for wrk's first call (below)

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

-- A template with placeholders is compiled into a part list: literal strings at odd
-- indexes, value generators (functions returning the padded digits) at even ones.
local seqs = {} -- seqs[start]: this thread's sequence state, shared by templates

local function digits(n)
  return #string.format("%d", n)
end

local function randgen(lo, hi)
  if lo > hi then
    error("arena.lua: {RAND:" .. lo .. ":" .. hi .. "} has min above max")
  end
  local fmt, random = "%0" .. digits(hi) .. "d", math.random
  return function()
    return string.format(fmt, random(lo, hi))
  end
end

local function seqgen(start, thread, stride)
  local w = digits(start)
  local span = 10 ^ w - start -- numbers from start of the same width
  local st = seqs[start]
  if not st then
    st = { i = thread }
    seqs[start] = st
  end
  local fmt = "%0" .. w .. "d"
  return function()
    local i = st.i
    st.i = i + stride
    return string.format(fmt, start + i % span)
  end
end

-- compile returns raw as a part list, or nil when it holds no placeholder.
local function compile(raw, thread, stride)
  if not (string.find(raw, "{RAND:", 1, true) or string.find(raw, "{SEQ:", 1, true)) then
    return nil
  end
  local parts, from, pos = {}, 1, 1
  while true do
    local b = string.find(raw, "{", pos, true)
    if not b then
      break
    end
    local gen, e
    local lo, hi, re = string.match(raw, "^{RAND:(%d+):(%d+)()}", b)
    if lo then
      gen, e = randgen(tonumber(lo), tonumber(hi)), re
    else
      local start, se = string.match(raw, "^{SEQ:(%d+)()}", b)
      if start then
        gen, e = seqgen(tonumber(start), thread, stride), se
      end
    end
    if gen then
      parts[#parts + 1] = string.sub(raw, from, b - 1)
      parts[#parts + 1] = gen
      from = e + 1
    end
    pos = (e or b) + 1
  end
  if #parts == 0 then
    return nil
  end
  parts[#parts + 1] = string.sub(raw, from)
  return parts
end

-- join concatenates the templates of a batch: a string when none has placeholders, else
-- one part list (adjacent literals merged).
local function join(list, compiled)
  local any = false
  for i = 1, #list do
    if compiled[list[i]] then
      any = true
    end
  end
  if not any then
    return table.concat(list), false
  end
  local parts = { "" }
  for i = 1, #list do
    local c = compiled[list[i]]
    if c then
      parts[#parts] = parts[#parts] .. c[1]
      for k = 2, #c do
        parts[#parts + 1] = c[k]
      end
    else
      parts[#parts] = parts[#parts] .. list[i]
    end
  end
  return parts, true
end

-- checklength fails when a request's Content-Length is not the length of its body once
-- its placeholders are replaced.
local function checklength(path, parts)
  local probe = {}
  for i = 1, #parts do
    probe[i] = type(parts[i]) == "string" and parts[i] or parts[i]()
  end
  local req = table.concat(probe)
  local head, body = string.match(req, "^(.-\r?\n)\r?\n(.*)$")
  local cl = head and string.match(head, "\n[Cc][Oo][Nn][Tt][Ee][Nn][Tt]%-[Ll][Ee][Nn][Gg][Tt][Hh]:%s*(%d+)")
  if cl and tonumber(cl) ~= #body then
    error("arena.lua: " .. path .. ": Content-Length " .. cl .. ", but the body has " .. #body ..
      " bytes once its placeholders are replaced")
  end
end

-- render assembles a batch from its part list. buf is reused: request() allocates only
-- the values and the result.
local buf = {}
local function render(parts)
  local n = #parts
  for i = 1, n, 2 do
    buf[i] = parts[i]
  end
  for i = 2, n, 2 do
    buf[i] = parts[i]()
  end
  return table.concat(buf, "", 1, n)
end

function init(args)
  local files, headers = {}, {}
  local nthreads
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
    elseif k == "threads" then
      nthreads = tonumber(v)
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

  -- setup() numbered this thread (arena_thread, from 0) before wrk called init. wrk makes
  -- at most C threads, so C is a safe stride when T is not given.
  local thread = arena_thread or 0
  local stride = nthreads or arena_connections or 1
  if stride < 1 or stride ~= math.floor(stride) or thread >= stride then
    error("arena.lua: threads must be a whole number above the thread's index " .. thread)
  end
  math.randomseed(1 + thread) -- each thread its own, repeatable, random stream

  local reqs, closed = {}, {}
  local withclose = {}
  for i = 1, #headers do
    withclose[i] = headers[i]
  end
  withclose[#withclose + 1] = "Connection: close"
  local compiled = {} -- compiled[request string]: its part list, if it has placeholders
  for i, path in ipairs(files) do
    local raw = readfile(path)
    reqs[i] = addheaders(raw, headers)
    closed[i] = addheaders(raw, withclose)
    for _, r in ipairs({ reqs[i], closed[i] }) do
      if compiled[r] == nil then
        compiled[r] = compile(r, thread, stride) or false
        if compiled[r] then
          checklength(path, compiled[r])
        end
      end
    end
  end
  ntpl = #reqs
  -- checklength drew values: start every sequence and random stream afresh.
  for _, st in pairs(seqs) do
    st.i = thread
  end
  math.randomseed(1 + thread)
  if thread == 0 then
    request = verify -- wrk looks request() up by name at every call
  end

  -- Precompute every batch so that request() does no string work, except for the values
  -- of the batches that have placeholders.
  for s = 0, ntpl - 1 do
    local parts = {}
    for k = 0, depth - 1 do
      parts[k + 1] = reqs[(s + k) % ntpl + 1]
    end
    local d1, d2
    plain[s], d1 = join(parts, compiled)
    parts[depth] = closed[(s + depth - 1) % ntpl + 1]
    closing[s], d2 = join(parts, compiled)
    if d1 or d2 then
      -- one kind for both lists, so request() asks once
      if not d1 then
        plain[s] = { plain[s] }
      end
      if not d2 then
        closing[s] = { closing[s] }
      end
      dyn[s], dynamic = true, true
    end
  end
end

-- request returns the next batch of exactly P requests (wrk counts P responses per write).
-- With R > 0 the last request of a batch asks for Connection: close whenever the thread's
-- count crosses a multiple of R, so the server closes after answering the whole batch and
-- wrk reconnects without counting an error.
function request()
  local s = pos
  pos = (pos + depth) % ntpl
  local batch = plain
  if per > 0 then
    local before = sent
    sent = sent + depth
    if math.floor(sent / per) > math.floor(before / per) then
      batch = closing
    end
  end
  if dynamic and dyn[s] then
    return render(batch[s])
  end
  return batch[s]
end

run = request

-- verify answers wrk's first call of request() in thread 0: wrk 4.1.0 asks that thread for
-- one request before the run, only to count the requests in it (its pipeline depth), and
-- never sends it. So answer without moving on: the run then starts from the first template
-- and the first number of every sequence, as it does in the other threads.
function verify()
  request = run
  local p, n, saved = pos, sent, {}
  for start, st in pairs(seqs) do
    saved[start] = st.i
  end
  local r = run()
  pos, sent = p, n
  for start, st in pairs(seqs) do
    st.i = saved[start]
  end
  return r
end

-- setup runs in wrk's main Lua state, once per thread; done() runs there too.
local threads = {}
function setup(thread)
  thread:set("arena_thread", #threads) -- before wrk calls this thread's init
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
