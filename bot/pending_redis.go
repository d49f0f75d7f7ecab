package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RedisPending is the Pending on a Redis server (standalone or Sentinel-managed; not
// Cluster, like queue.Redis), so the requests waiting for approval survive a restart of
// the bot. Under its prefix P it keeps:
//
//	P pending:<repo>#<pr>   string  the Request as JSON (repo in lower case)
//	P pending-keys          set     the "<repo>#<pr>" of every request, for List
//	P pending-ids           hash    request id -> "<repo>#<pr>", for Delete
//
// Put and Delete are one Lua script each, so the three keys always agree, also with
// several bots on one prefix. The "#" in every record key keeps it apart from the index
// keys.
type RedisPending struct {
	rdb    redis.UniversalClient
	prefix string
}

var _ Pending = (*RedisPending)(nil)

// NewRedisPending returns the Pending under prefix on rdb (e.g. "arena:", the queue's
// prefix). The caller owns rdb.
func NewRedisPending(rdb redis.UniversalClient, prefix string) *RedisPending {
	return &RedisPending{rdb: rdb, prefix: prefix}
}

func (p *RedisPending) recordPrefix() string { return p.prefix + "pending:" }
func (p *RedisPending) keysKey() string      { return p.prefix + "pending-keys" }
func (p *RedisPending) idsKey() string       { return p.prefix + "pending-ids" }

// pendingPutScript stores ARGV[1] (the JSON of a request with id ARGV[2]) as the record
// KEYS[1] of pull request ARGV[3], forgetting the id of the request it replaces.
// KEYS: record, keys set, ids hash.
var pendingPutScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
if old then
  local ok, dec = pcall(cjson.decode, old)
  if ok and type(dec) == 'table' and type(dec['ID']) == 'string' and dec['ID'] ~= ARGV[2] then
    if redis.call('HGET', KEYS[3], dec['ID']) == ARGV[3] then
      redis.call('HDEL', KEYS[3], dec['ID'])
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
return 1
`)

// pendingDeleteScript removes the request with id ARGV[1]; ARGV[2] is the record prefix.
// KEYS: keys set, ids hash. It returns 1 when the request was there.
var pendingDeleteScript = redis.NewScript(`
local pk = redis.call('HGET', KEYS[2], ARGV[1])
if not pk then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
local rec = ARGV[2] .. pk
local cur = redis.call('GET', rec)
if not cur then
  redis.call('SREM', KEYS[1], pk)
  return 0
end
local ok, dec = pcall(cjson.decode, cur)
if ok and type(dec) == 'table' and dec['ID'] ~= ARGV[1] then
  return 0
end
redis.call('DEL', rec)
redis.call('SREM', KEYS[1], pk)
return 1
`)

// Put implements Pending.
func (p *RedisPending) Put(ctx context.Context, r Request) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("pending: encode %s: %w", r.ID, err)
	}
	pk := prKey(r.Repo, r.PR)
	keys := []string{p.recordPrefix() + pk, p.keysKey(), p.idsKey()}
	if err := pendingPutScript.Run(ctx, p.rdb, keys, string(b), r.ID, pk).Err(); err != nil {
		return fmt.Errorf("pending: put %s: %w", r.ID, err)
	}
	return nil
}

// Get implements Pending.
func (p *RedisPending) Get(ctx context.Context, repo string, pr int) (Request, bool, error) {
	b, err := p.rdb.Get(ctx, p.recordPrefix()+prKey(repo, pr)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Request{}, false, nil
	}
	if err != nil {
		return Request{}, false, fmt.Errorf("pending: get: %w", err)
	}
	var r Request
	if err := json.Unmarshal(b, &r); err != nil {
		return Request{}, false, fmt.Errorf("pending: decode %s#%d: %w", repo, pr, err)
	}
	return r, true, nil
}

// List implements Pending. A record that does not decode is an error: it is not skipped
// silently, so a request can never wait unseen until it expires.
func (p *RedisPending) List(ctx context.Context) ([]Request, error) {
	pks, err := p.rdb.SMembers(ctx, p.keysKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("pending: list: %w", err)
	}
	out := make([]Request, 0, len(pks))
	if len(pks) == 0 {
		return out, nil
	}
	keys := make([]string, len(pks))
	for i, pk := range pks {
		keys[i] = p.recordPrefix() + pk
	}
	vals, err := p.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("pending: list: %w", err)
	}
	var errs []error
	for i, v := range vals {
		s, ok := v.(string)
		if !ok { // deleted between SMEMBERS and MGET
			continue
		}
		var r Request
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			errs = append(errs, fmt.Errorf("pending: decode %s: %w", pks[i], err))
			continue
		}
		out = append(out, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sortRequests(out)
	return out, nil
}

// Delete implements Pending.
func (p *RedisPending) Delete(ctx context.Context, id string) (bool, error) {
	n, err := pendingDeleteScript.Run(ctx, p.rdb, []string{p.keysKey(), p.idsKey()}, id, p.recordPrefix()).Int()
	if err != nil {
		return false, fmt.Errorf("pending: delete %s: %w", id, err)
	}
	return n == 1, nil
}
