package validate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// seedSQL is a seed file with the items table's COPY block and the given rows.
func seedSQL(rows ...string) string {
	s := "-- test seed\nCOPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;\n"
	for _, r := range rows {
		s += r + "\n"
	}
	return s + "\\.\n"
}

// TestCachedSeed: Runs against one data directory share one parse of its seed while the
// file is unchanged; a file rewritten since is read again, and a missing one is an error
// each time, never a cached table.
func TestCachedSeed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(seedFile))
	if _, err := cachedSeed(dir); err == nil {
		t.Fatal("a missing seed read without an error")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-time.Hour).Truncate(time.Second)
	write(seedSQL("1\tUltra Helmet\tsports\t62\t81\tt\t[\"limited\"]\t4\t4470"), then)
	first, err := cachedSeed(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cachedSeed(dir)
	if err != nil || again != first {
		t.Fatalf("second read of an unchanged seed = %p, %v; want the first table %p", again, err, first)
	}
	if len(first.rows) != 1 || first.byID[1].Name != "Ultra Helmet" {
		t.Fatalf("rows %+v", first.rows)
	}

	// Another row, so another size, at the same modification time; then the same size at
	// another time.
	write(seedSQL("1\tUltra Helmet\tsports\t62\t81\tt\t[\"limited\"]\t4\t4470", "2\tEco Kettle\thome\t7\t3\tf\t[]\t1\t0"), then)
	grown, err := cachedSeed(dir)
	if err != nil || grown == first || len(grown.rows) != 2 {
		t.Fatalf("a seed with another row read as %+v, %v", grown, err)
	}
	write(seedSQL("1\tUltra Helmet\tsports\t62\t81\tt\t[\"limited\"]\t4\t4470", "2\tEco Kettle\thome\t8\t3\tf\t[]\t1\t0"), then.Add(time.Minute))
	edited, err := cachedSeed(dir)
	if err != nil || edited == grown || edited.byID[2].Price != 8 {
		t.Fatalf("a seed edited in place read as %+v, %v", edited, err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := cachedSeed(dir); err == nil {
		t.Error("a removed seed read from the cache")
	}
}
