package queue

import "github.com/redis/go-redis/v9"

// The Redis queue's one script, a read: every change is a transition
// computed in Go and written in an optimistic transaction (see transact).
// It derives keys from the prefix and from IDs it reads, so the queue needs
// a standalone Redis or a Sentinel-managed primary, not a Redis Cluster.

// snapshotScript reads the lines, the recent terminal jobs and the requests
// awaiting approval in one atomic step. ARGV[1] is the key prefix, [2] a pool
// ("" for every pool), [3] "1" to add the jobs awaiting approval and the
// recent terminal jobs. It returns {lines, recent, awaiting}; a line is
// {pool, {record...}}, the running jobs' records first (the one of the key
// run, as a store written before a pool could run several jobs keeps it, then
// those of the hash runs). It writes nothing.
var snapshotScript = redis.NewScript(`
local P = ARGV[1]
local function jkey(id) return P .. 'job:' .. id end
local function pkey(pool, what) return P .. 'pool:' .. pool .. ':' .. what end
local pools
if ARGV[2] ~= '' then
	pools = {ARGV[2]}
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
	local runs = redis.call('HGETALL', pkey(pool, 'runs'))
	for i = 2, #runs, 2 do
		recs[#recs + 1] = redis.call('HGETALL', jkey(runs[i]))
	end
	for _, list in ipairs({pkey(pool, 'retry'), pkey(pool, 'waiting')}) do
		for _, wid in ipairs(redis.call('LRANGE', list, 0, -1)) do
			recs[#recs + 1] = redis.call('HGETALL', jkey(wid))
		end
	end
	lines[#lines + 1] = {pool, recs}
end
local recent, awaiting = {}, {}
if ARGV[3] == '1' then
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
return {lines, recent, awaiting}
`)
