package main

import (
	"math"
	"testing"
)

func TestPriceQuery(t *testing.T) {
	tests := []struct {
		desc                      string
		min, max, limit           string
		wantLo, wantHi, wantLimit int
	}{
		{"absent", "", "", "", 10, 50, 50},
		{"given", "5", "80", "7", 5, 80, 7},
		{"not integers", "x", "1.5", "ten", 10, 50, 50},
		{"limit 0", "10", "50", "0", 10, 50, 1},
		{"negative limit", "10", "50", "-3", 10, 50, 1},
		{"limit above 50", "10", "50", "51", 10, 50, 50},
		{"empty range", "9999", "9999", "50", 9999, 9999, 50},
		{"prices beyond integer", "-99999999999", "99999999999", "5", math.MinInt32, math.MaxInt32, 5},
		{"beyond int64", "99999999999999999999", "", "", 10, 50, 50},
	}
	for _, tt := range tests {
		lo, hi, limit := priceQuery(tt.min, tt.max, tt.limit)
		if lo != tt.wantLo || hi != tt.wantHi || limit != tt.wantLimit {
			t.Errorf("%s: priceQuery(%q, %q, %q) = %d, %d, %d; want %d, %d, %d", tt.desc,
				tt.min, tt.max, tt.limit, lo, hi, limit, tt.wantLo, tt.wantHi, tt.wantLimit)
		}
	}
}

func TestPageQuery(t *testing.T) {
	tests := []struct {
		page, limit         string
		wantPage, wantLimit int
	}{
		{"", "", 1, 10},
		{"3", "5", 3, 5},
		{"0", "0", 1, 1},
		{"-2", "99", 1, 50},
		{"x", "y", 1, 10},
		{"99999999999", "50", maxPage, 50},
	}
	for _, tt := range tests {
		page, limit := pageQuery(tt.page, tt.limit)
		if page != tt.wantPage || limit != tt.wantLimit {
			t.Errorf("pageQuery(%q, %q) = %d, %d; want %d, %d", tt.page, tt.limit, page, limit, tt.wantPage, tt.wantLimit)
		}
	}
}

func TestPoolSize(t *testing.T) {
	tests := []struct {
		maxConn string
		cpus    int
		want    int32
	}{
		{"256", 4, 16},   // api-4
		{"256", 64, 240}, // a sixteenth of the server's connections stays free
		{"256", 62, 240},
		{"", 8, 32},
		{"bad", 8, 32},
		{"0", 8, 32},
		{"10", 8, 10},
		{"1", 8, 1},
	}
	for _, tt := range tests {
		if got := poolSize(tt.maxConn, tt.cpus); got != tt.want {
			t.Errorf("poolSize(%q, %d) = %d, want %d", tt.maxConn, tt.cpus, got, tt.want)
		}
	}
}

func TestItemID(t *testing.T) {
	for s, want := range map[string]bool{"1": true, "42": true, "0": true, "": false, "x": false, "1.5": false, "2147483648": false} {
		if _, ok := itemID(s); ok != want {
			t.Errorf("itemID(%q) ok = %v, want %v", s, ok, want)
		}
	}
}

func TestDecodeNewItem(t *testing.T) {
	in, err := decodeNewItem([]byte(`{"id":200001,"name":"ValidateItem","category":"test","price":42,"quantity":7}`))
	if want := (newItem{ID: 200001, Name: "ValidateItem", Category: "test", Price: 42, Quantity: 7}); err != nil || in != want {
		t.Errorf("decodeNewItem = %+v, %v; want %+v", in, err, want)
	}
	for _, body := range []string{``, `nope`, `{"id":"1"}`, `{"name":"no id"}`, `{"id":0}`, `{"id":-1}`,
		`{"id":1,"price":1.5}`, `{"id":1,"quantity":99999999999}`, `{"id":1}x`} {
		if _, err := decodeNewItem([]byte(body)); !isInputError(err) {
			t.Errorf("decodeNewItem(%q) error = %v, want an input error", body, err)
		}
	}
}

func TestDecodeItemUpdate(t *testing.T) {
	in, err := decodeItemUpdate([]byte(`{"name":"UpdatedItem","price":99}`))
	if err != nil || in.Name == nil || *in.Name != "UpdatedItem" || in.Price == nil || *in.Price != 99 ||
		in.Category != nil || in.Quantity != nil {
		t.Errorf("decodeItemUpdate = %+v, %v", in, err)
	}
	for _, body := range []string{``, `[]`, `{"price":"1"}`} {
		if _, err := decodeItemUpdate([]byte(body)); !isInputError(err) {
			t.Errorf("decodeItemUpdate(%q) error = %v, want an input error", body, err)
		}
	}
}
