package main

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tfb are TechEmpower's 12 fortunes, the first rows of the arena's fortune table.
var tfb = []Fortune{
	{1, "fortune: No such file or directory"},
	{2, "A computer scientist is someone who fixes things that aren't broken."},
	{3, "After enough decimal places, nobody gives a damn."},
	{4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"},
	{5, "A computer program does what you tell it to do, not what you want it to do."},
	{6, "Emacs is a nice operating system, but I prefer UNIX. \u2014 Tom Christaensen"},
	{7, "Any program that runs right is obsolete."},
	{8, "A list is only as strong as its weakest link. \u2014 Donald Knuth"},
	{9, "Feature: A bug with seniority."},
	{10, "Computers make very fast, very accurate mistakes."},
	{11, `<script>alert("This should not be displayed in a browser alert box.");</script>`},
	{12, "\u30d5\u30ec\u30fc\u30e0\u30ef\u30fc\u30af\u306e\u30d9\u30f3\u30c1\u30de\u30fc\u30af"},
}

// TestSortFortunes: byte order, not a locale's: the <script> row first, upper case before
// lower case, the multi-byte row last.
func TestSortFortunes(t *testing.T) {
	fs := append(slices.Clone(tfb), Fortune{0, runtimeFortune})
	sortFortunes(fs)
	var ids []int32
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	if want := []int32{11, 4, 5, 2, 8, 0, 3, 7, 10, 6, 9, 1, 12}; !slices.Equal(ids, want) {
		t.Errorf("sorted ids %v, want %v", ids, want)
	}
}

// TestRenderFortunes renders the page from the template: a complete document, the header row,
// one row per fortune in the given order, every message escaped (quotes and apostrophes too).
func TestRenderFortunes(t *testing.T) {
	fs := append(slices.Clone(tfb), Fortune{0, runtimeFortune}, Fortune{13, "Q&A: \"it's\" \u2014 done"})
	sortFortunes(fs)
	var buf bytes.Buffer
	if err := renderFortunes(&buf, fs); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"<!DOCTYPE html>", "<tr><th>id</th><th>message</th></tr>",
		"<tr><td>11</td><td>&lt;script&gt;alert(&#34;This should not be displayed in a browser alert box.&#34;);&lt;/script&gt;</td></tr>",
		"<tr><td>0</td><td>" + runtimeFortune + "</td></tr>",
		"<td>Q&amp;A: &#34;it&#39;s&#34; \u2014 done</td>",
		"<td>A computer scientist is someone who fixes things that aren&#39;t broken.</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Errorf("an unescaped <script> in the page:\n%s", page)
	}
	var ids []string
	for _, m := range regexp.MustCompile(`<tr><td>(\d+)</td>`).FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	if want := []string{"11", "4", "5", "2", "8", "0", "3", "7", "10", "6", "9", "13", "1", "12"}; !slices.Equal(ids, want) {
		t.Errorf("rows in the order %v, want %v", ids, want)
	}
	if n := strings.Count(page, "<tr>"); n != len(fs)+1 {
		t.Errorf("%d rows, want %d fortunes and the header", n, len(fs))
	}
}

func TestFortunesWithoutDatabase(t *testing.T) {
	w := serve(t, &server{}, "GET", "/fortunes", "")
	if w.Code != http.StatusServiceUnavailable || w.Body.String() != noDatabase+"\n" {
		t.Errorf("GET /fortunes without a database = %d %q, want 503", w.Code, w.Body)
	}
	if w := serve(t, &server{}, "POST", "/fortunes", ""); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /fortunes = %d, want 405", w.Code)
	}
}
