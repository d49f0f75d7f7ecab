package main

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestMemCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		c := newMemCache()
		if _, ok := c.get(ctx, 1); ok {
			t.Fatal("empty cache hit")
		}
		c.set(ctx, 1, []byte(`{"id":1}`))
		if body, ok := c.get(ctx, 1); !ok || string(body) != `{"id":1}` {
			t.Fatalf("get after set = %q, %v", body, ok)
		}
		time.Sleep(cacheTTL - time.Millisecond)
		if _, ok := c.get(ctx, 1); !ok {
			t.Error("miss before the TTL")
		}
		time.Sleep(time.Millisecond)
		if _, ok := c.get(ctx, 1); ok {
			t.Error("hit at the TTL")
		}

		c.set(ctx, 2, []byte(`{"id":2}`))
		c.drop(ctx, 2)
		if _, ok := c.get(ctx, 2); ok {
			t.Error("hit after drop")
		}

		// A write a second later sweeps the expired entries out.
		c.set(ctx, 3, []byte(`{"id":3}`))
		time.Sleep(time.Second + time.Millisecond)
		c.set(ctx, 4, []byte(`{"id":4}`))
		if n := len(c.entries); n != 1 {
			t.Errorf("%d entries after the sweep, want 1", n)
		}
	})
}

func TestNewCache(t *testing.T) {
	c, err := newCache("")
	if _, ok := c.(*memCache); err != nil || !ok {
		t.Errorf(`newCache("") = %T, %v; want the in-process cache`, c, err)
	}
	c, err = newCache("redis://localhost:6379")
	if _, ok := c.(redisCache); err != nil || !ok {
		t.Errorf("newCache(redis URL) = %T, %v; want the Redis cache", c, err)
	}
	c.close()
	if _, err := newCache("http://nope"); err == nil {
		t.Error("newCache(http URL) succeeded")
	}
}
