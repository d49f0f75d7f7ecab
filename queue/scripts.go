package queue

import "github.com/redis/go-redis/v9"

// Every script takes the same first five arguments (see (*Redis).run):
// the key prefix, the time of the change (RFC 3339 with nine fraction digits,
// the caller's clock, so times compare as strings), the
// approximate bound of the event stream, how long terminal jobs are kept (ms)
// and how many terminal job IDs the recent list keeps. Its own arguments
// follow from ARGV[6]. Scripts return a table whose first element is a status
// word: ok, busy, empty, exists, notfound, finished, notawaiting or lost.
//
// The scripts derive keys from the prefix and from IDs they read (a job's key
// from the running job's ID, say), so the queue needs a standalone Redis or a
// Sentinel-managed primary, not a Redis Cluster.
const prelude = `
local P = ARGV[1]
local now = ARGV[2]
local maxlen = ARGV[3]
local retain = ARGV[4]
local nrecent = tonumber(ARGV[5])

local function jkey(id) return P .. 'job:' .. id end
local function pkey(pool, what) return P .. 'pool:' .. pool .. ':' .. what end

local terminal = {done = true, failed = true, cancelled = true, superseded = true, expired = true, rejected = true}

-- emit appends one of the queue's own events, with a snapshot of the job record.
local function emit(id, kind)
	local rec = redis.call('HGETALL', jkey(id))
	local args = {'XADD', P .. 'events', 'MAXLEN', '~', maxlen, '*', 'job', id, 'kind', kind, 'time', now}
	for i = 1, #rec, 2 do
		if rec[i] ~= 'token' and rec[i] ~= 'op' and rec[i] ~= 'owner' and rec[i] ~= 'expires_at' then
			args[#args + 1] = 'j.' .. rec[i]
			args[#args + 1] = rec[i + 1]
		end
	end
	redis.call(unpack(args))
end

-- finish moves a job to a terminal state.
local function finish(id, state, reason)
	local k = jkey(id)
	redis.call('HSET', k, 'state', state, 'reason', reason, 'finished', now)
	redis.call('SREM', P .. 'active', id)
	redis.call('LPUSH', P .. 'recent', id)
	redis.call('LTRIM', P .. 'recent', 0, nrecent - 1)
	redis.call('PEXPIRE', k, retain)
end

-- signal wakes one Claim blocked on the pool.
local function signal(pool)
	local s = pkey(pool, 'signal')
	if redis.call('LLEN', s) == 0 then
		redis.call('RPUSH', s, '1')
	end
end

-- lineup puts a queued job at the back of its pool's line and returns the
-- record of the waiting job it displaced, or an empty table.
local function lineup(id, pool, depth)
	redis.call('SADD', P .. 'pools', pool)
	local w = pkey(pool, 'waiting')
	redis.call('RPUSH', w, id)
	local displaced = {}
	if redis.call('LLEN', w) > depth then
		local old = redis.call('LPOP', w)
		redis.call('HSET', jkey(old), 'superseded_by', id)
		finish(old, 'superseded', '')
		emit(old, 'superseded')
		displaced = redis.call('HGETALL', jkey(old))
	end
	if redis.call('EXISTS', pkey(pool, 'run')) == 0 then
		signal(pool)
	end
	return displaced
end

-- unawait takes a job out of the jobs awaiting approval.
local function unawait(id)
	redis.call('LREM', P .. 'awaiting', 0, id)
	local o = redis.call('HGET', jkey(id), 'owner')
	if o and redis.call('HGET', P .. 'owners', o) == id then
		redis.call('HDEL', P .. 'owners', o)
	end
end

-- exists answers a call that would create the job record k when it exists: ok with the
-- record when it is the same call again (go-redis retries after a lost reply), else
-- exists; nil when there is no such record.
local function exists(k, op)
	if redis.call('EXISTS', k) == 0 then
		return nil
	end
	if redis.call('HGET', k, 'op') == op then
		return {'ok', redis.call('HGETALL', k), {}}
	end
	return {'exists'}
end

-- create writes a new job record: the body, the fields Amend changes
-- (status comment, moved head, ETag, shown digest, from ARGV[i..i+3]) and
-- the given fields.
local function create(k, body, i, ...)
	redis.call('HSET', k, 'body', body, 'status_comment_id', ARGV[i], 'head_moved', ARGV[i + 1],
		'etag', ARGV[i + 2], 'shown', ARGV[i + 3], ...)
end
`

// ARGV[6] id, [7] pool, [8] body, [9] depth, [10] a nonce of this call,
// [11..14] the fields Amend changes (see create).
var enqueueScript = redis.NewScript(prelude + `
local id, pool, body, depth, op = ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9]), ARGV[10]
local k = jkey(id)
local again = exists(k, op)
if again then
	return again
end
create(k, body, 11, 'state', 'queued', 'attempt', '1', 'pool', pool, 'op', op)
redis.call('SADD', P .. 'active', id)
emit(id, 'queued')
local displaced = lineup(id, pool, depth)
return {'ok', redis.call('HGETALL', k), displaced}
`)

// ARGV[6] id, [7] pool, [8] body, [9] owner (see owner in Go), [10] expiry
// (a time, or ”), [11] a nonce of this call, [12..15] the fields Amend
// changes (see create). Returns {'ok', record, replaced record or {}}.
var submitScript = redis.NewScript(prelude + `
local id, pool, body, own, expires, op = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
local k = jkey(id)
local again = exists(k, op)
if again then
	return again
end
create(k, body, 12, 'state', 'awaiting_approval', 'attempt', '0', 'pool', pool, 'op', op, 'owner', own)
if expires ~= '' then
	redis.call('HSET', k, 'expires_at', expires)
end
redis.call('SADD', P .. 'active', id)
redis.call('RPUSH', P .. 'awaiting', id)
local old = redis.call('HGET', P .. 'owners', own)
redis.call('HSET', P .. 'owners', own, id)
emit(id, 'submitted')
local replaced = {}
if old and old ~= id and redis.call('HGET', jkey(old), 'state') == 'awaiting_approval' then
	redis.call('LREM', P .. 'awaiting', 0, old)
	redis.call('HSET', jkey(old), 'superseded_by', id)
	finish(old, 'superseded', '')
	emit(old, 'superseded')
	replaced = redis.call('HGETALL', jkey(old))
end
return {'ok', redis.call('HGETALL', k), replaced}
`)

// awaiting checks that the job of ARGV[6] awaits approval. It returns nil
// when it does, else the reply: notfound, finished or notawaiting with the
// record, or ok with it when this call (nonce op) already changed it.
const awaitingCheck = `
local function awaiting(k, op)
	local state = redis.call('HGET', k, 'state')
	if not state then
		return {'notfound'}
	end
	if state == 'awaiting_approval' then
		return nil
	end
	-- The same call again (go-redis retries after a lost reply) succeeds.
	if redis.call('HGET', k, 'op') == op then
		return {'ok', redis.call('HGETALL', k), {}}
	end
	if terminal[state] then
		return {'finished', redis.call('HGETALL', k)}
	end
	return {'notawaiting', redis.call('HGETALL', k)}
end
`

// ARGV[6] id, [7] approver, [8] depth, [9] a nonce of this call.
var approveScript = redis.NewScript(prelude + awaitingCheck + `
local id, by, depth, op = ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9]
local k = jkey(id)
local r = awaiting(k, op)
if r then
	return r
end
unawait(id)
redis.call('HSET', k, 'state', 'queued', 'approver', by, 'approved', now, 'queued', now, 'attempt', '1', 'op', op)
emit(id, 'queued')
local displaced = lineup(id, redis.call('HGET', k, 'pool'), depth)
return {'ok', redis.call('HGETALL', k), displaced}
`)

// ARGV[6] id, [7] who declined, [8] a nonce of this call.
var rejectScript = redis.NewScript(prelude + awaitingCheck + `
local id, by, op = ARGV[6], ARGV[7], ARGV[8]
local k = jkey(id)
local r = awaiting(k, op)
if r then
	return r
end
unawait(id)
redis.call('HSET', k, 'rejected_by', by, 'op', op)
finish(id, 'rejected', '')
emit(id, 'rejected')
return {'ok', redis.call('HGETALL', k)}
`)

// No arguments of its own: times are stored in a fixed-width form, so
// comparing them as strings compares the times.
var expireScript = redis.NewScript(prelude + `
local out = {}
for _, id in ipairs(redis.call('LRANGE', P .. 'awaiting', 0, -1)) do
	local k = jkey(id)
	local e = redis.call('HGET', k, 'expires_at')
	if redis.call('EXISTS', k) == 0 then
		redis.call('LREM', P .. 'awaiting', 0, id)
	elseif e and e <= now then
		unawait(id)
		finish(id, 'expired', '')
		emit(id, 'expired')
		out[#out + 1] = redis.call('HGETALL', k)
	end
end
return {'ok', out}
`)

// ARGV[6] id, [7] status comment ID (” leaves it), [8] '1' to set the
// moved head to [9], [10] '1' to set the ETag to [11], [12] '1' to set the
// shown digest to [13].
var amendScript = redis.NewScript(prelude + `
local id = ARGV[6]
local k = jkey(id)
if redis.call('EXISTS', k) == 0 then
	return {'notfound'}
end
local visible = false
if ARGV[7] ~= '' and redis.call('HGET', k, 'status_comment_id') ~= ARGV[7] then
	redis.call('HSET', k, 'status_comment_id', ARGV[7])
	visible = true
end
if ARGV[8] == '1' and (redis.call('HGET', k, 'head_moved') or '') ~= ARGV[9] then
	redis.call('HSET', k, 'head_moved', ARGV[9])
	visible = true
end
if ARGV[10] == '1' then
	redis.call('HSET', k, 'etag', ARGV[11])
end
if ARGV[12] == '1' then
	redis.call('HSET', k, 'shown', ARGV[13])
end
if visible then
	emit(id, 'updated')
end
return {'ok', redis.call('HGETALL', k)}
`)

// ARGV[6] pool, [7] token, [8] lease TTL (ms).
var claimScript = redis.NewScript(prelude + `
local pool, token, ttl = ARGV[6], ARGV[7], ARGV[8]
redis.call('HSET', P .. 'runners', pool, now)
local run = pkey(pool, 'run')
local held = redis.call('HMGET', run, 'job', 'token')
if held[1] then
	-- The same call again (go-redis retries after a lost reply) gets its job.
	if held[2] == token then
		return {'ok', redis.call('HGETALL', jkey(held[1]))}
	end
	return {'busy'}
end
local id = redis.call('LPOP', pkey(pool, 'retry'))
if not id then
	id = redis.call('LPOP', pkey(pool, 'waiting'))
end
if not id then
	return {'empty'}
end
local fence = redis.call('INCR', P .. 'fence')
redis.call('HSET', run, 'job', id, 'token', token)
redis.call('SET', pkey(pool, 'lease'), token, 'PX', ttl)
redis.call('HSET', jkey(id), 'state', 'running', 'started', now, 'fence', fence, 'token', token)
emit(id, 'started')
return {'ok', redis.call('HGETALL', jkey(id))}
`)

// ARGV[6] pool, [7] id, [8] token, [9] lease TTL (ms).
var heartbeatScript = redis.NewScript(prelude + `
local pool, id, token, ttl = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
redis.call('HSET', P .. 'runners', pool, now)
local r = redis.call('HMGET', pkey(pool, 'run'), 'job', 'token')
if r[1] ~= id or r[2] ~= token then
	return {'lost'}
end
redis.call('SET', pkey(pool, 'lease'), token, 'PX', ttl)
if redis.call('HEXISTS', jkey(id), 'cancel') == 1 then
	return {'ok', 1}
end
return {'ok', 0}
`)

// ARGV[6] pool, [7] id, [8] token, [9] state, [10] reason, [11] result,
// [12] a nonce of this call.
var finishScript = redis.NewScript(prelude + `
local pool, id, token, state, reason, result, op = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12]
local run = pkey(pool, 'run')
local k = jkey(id)
local r = redis.call('HMGET', run, 'job', 'token')
if r[1] ~= id or r[2] ~= token then
	-- The same call again (go-redis retries after a lost reply) succeeds.
	if redis.call('HGET', k, 'op') == op then
		return {'ok', redis.call('HGETALL', k)}
	end
	return {'lost'}
end
redis.call('DEL', run, pkey(pool, 'lease'))
redis.call('HSET', k, 'op', op)
if result ~= '' then
	redis.call('HSET', k, 'result', result)
end
finish(id, state, reason)
emit(id, 'outcome')
if redis.call('LLEN', pkey(pool, 'retry')) + redis.call('LLEN', pkey(pool, 'waiting')) > 0 then
	signal(pool)
end
return {'ok', redis.call('HGETALL', k)}
`)

// ARGV[6] id, [7] who cancels, [8] a nonce of this call.
var cancelScript = redis.NewScript(prelude + `
local id, by, op = ARGV[6], ARGV[7], ARGV[8]
local k = jkey(id)
local state = redis.call('HGET', k, 'state')
if not state then
	return {'notfound'}
end
if terminal[state] and redis.call('HGET', k, 'op') == op then
	-- The same call again (go-redis retries after a lost reply) succeeds.
	return {'ok', redis.call('HGETALL', k)}
end
if terminal[state] then
	return {'finished', redis.call('HGETALL', k)}
end
if state == 'running' then
	redis.call('HSET', k, 'cancel', '1', 'cancelled_by', by)
	return {'ok', redis.call('HGETALL', k)}
end
if state == 'awaiting_approval' then
	unawait(id)
else
	local pool = redis.call('HGET', k, 'pool')
	redis.call('LREM', pkey(pool, 'retry'), 0, id)
	redis.call('LREM', pkey(pool, 'waiting'), 0, id)
end
redis.call('HSET', k, 'op', op, 'cancelled_by', by)
finish(id, 'cancelled', '')
emit(id, 'cancelled')
return {'ok', redis.call('HGETALL', k)}
`)

// ARGV[6] pool, [7] who cancels.
var drainScript = redis.NewScript(prelude + `
local pool, by = ARGV[6], ARGV[7]
local out = {}
for _, list in ipairs({pkey(pool, 'retry'), pkey(pool, 'waiting')}) do
	for _, id in ipairs(redis.call('LRANGE', list, 0, -1)) do
		redis.call('HSET', jkey(id), 'cancelled_by', by)
		finish(id, 'cancelled', '')
		emit(id, 'cancelled')
		out[#out + 1] = redis.call('HGETALL', jkey(id))
	end
	redis.call('DEL', list)
end
return {'ok', out}
`)

// ARGV[6] maximum attempts, [7] reason of a retry, [8] reason of a loss.
var reapScript = redis.NewScript(prelude + `
local maxattempts, rretried, rlost = tonumber(ARGV[6]), ARGV[7], ARGV[8]
local out = {}
for _, pool in ipairs(redis.call('SMEMBERS', P .. 'pools')) do
	local run = pkey(pool, 'run')
	local id = redis.call('HGET', run, 'job')
	if id and redis.call('EXISTS', pkey(pool, 'lease')) == 0 then
		redis.call('DEL', run)
		local k = jkey(id)
		local kind
		if redis.call('HEXISTS', k, 'cancel') == 1 then
			finish(id, 'cancelled', '')
			kind = 'cancelled'
		else
			local attempt = tonumber(redis.call('HGET', k, 'attempt') or '1')
			if attempt < maxattempts then
				redis.call('HSET', k, 'attempt', attempt + 1, 'state', 'queued', 'reason', rretried)
				redis.call('LPUSH', pkey(pool, 'retry'), id)
				signal(pool)
				kind = 'retried'
			else
				finish(id, 'failed', rlost)
				kind = 'lost'
			end
		end
		emit(id, kind)
		out[#out + 1] = redis.call('HGETALL', k)
	end
end
return {'ok', out}
`)

// ARGV[6] pool ("" for every pool), [7] "1" to add the jobs awaiting
// approval and the recent terminal jobs. Returns {'ok', lines, recent,
// awaiting}; a line is {pool, {record...}}, the running job's record first.
var snapshotScript = redis.NewScript(prelude + `
local pools
if ARGV[6] ~= '' then
	pools = {ARGV[6]}
else
	pools = redis.call('SMEMBERS', P .. 'pools')
end
local lines = {}
for _, pool in ipairs(pools) do
	local recs = {}
	local id = redis.call('HGET', pkey(pool, 'run'), 'job')
	if id then
		recs[#recs + 1] = redis.call('HGETALL', jkey(id))
	end
	for _, list in ipairs({pkey(pool, 'retry'), pkey(pool, 'waiting')}) do
		for _, wid in ipairs(redis.call('LRANGE', list, 0, -1)) do
			recs[#recs + 1] = redis.call('HGETALL', jkey(wid))
		end
	end
	lines[#lines + 1] = {pool, recs}
end
local recent, awaiting = {}, {}
if ARGV[7] == '1' then
	for _, id in ipairs(redis.call('LRANGE', P .. 'recent', 0, -1)) do
		local rec = redis.call('HGETALL', jkey(id))
		if #rec > 0 then
			recent[#recent + 1] = rec
		end
	end
	for _, id in ipairs(redis.call('LRANGE', P .. 'awaiting', 0, -1)) do
		local rec = redis.call('HGETALL', jkey(id))
		if #rec > 0 then
			awaiting[#awaiting + 1] = rec
		end
	end
end
return {'ok', lines, recent, awaiting}
`)
