package validatetest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// seedDir writes a data directory whose db/seed.sql holds n items, id i priced 1 to 500.
func seedDir(t testing.TB, n int) string {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("COPY items (id, name, category, price, quantity, active, tags, rating_score, rating_count) FROM stdin;\n")
	for i := n; i >= 1; i-- { // out of order: readTable sorts
		fmt.Fprintf(&b, "%d\titem %d\tbooks\t%d\t1\tt\t[\"a\"]\t4\t10\n", i, i, i%500+1)
	}
	b.WriteString("\\.\n")
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "db", "seed.sql"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEachOrder: a scan sees the seeded rows in id order, a row this server wrote in place
// of the seeded one, and the rows only it wrote after them, ascending; it stops when told.
func TestEachOrder(t *testing.T) {
	var d db
	if err := d.load(seedDir(t, 5)); err != nil {
		t.Fatal(err)
	}
	d.written[3] = item{ID: 3, Name: "rewritten", Price: 300}
	d.written[9] = item{ID: 9, Name: "new 9"}
	d.written[7] = item{ID: 7, Name: "new 7"}
	var got []string
	for it := range d.all() {
		got = append(got, fmt.Sprintf("%d:%s", it.ID, it.Name))
	}
	want := []string{"1:item 1", "2:item 2", "3:rewritten", "4:item 4", "5:item 5", "7:new 7", "9:new 9"}
	if !slices.Equal(got, want) {
		t.Errorf("scan %q; want %q", got, want)
	}
	n := 0
	for range d.all() {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("a scan told to stop after 2 rows saw %d", n)
	}
}

// BenchmarkEmptyRange is the scan of GET /async-db?min=9999&max=9999: every one of 100,000
// seeded rows, none matching.
func BenchmarkEmptyRange(b *testing.B) {
	var d db
	if err := d.load(seedDir(b, 100_000)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		matched := 0
		for it := range d.all() {
			if it.Price >= 9999 && it.Price <= 9999 {
				matched++
			}
		}
		if matched != 0 {
			b.Fatal(matched)
		}
	}
}
