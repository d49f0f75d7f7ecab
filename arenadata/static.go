package arenadata

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/andybalholm/brotli"
)

// The static files: the arena's 20 names (validate.sh checks these), with deterministic
// pseudo-content of realistic types and sizes. Text files compress well; fonts and images
// are incompressible, as real ones are.
var statics = []struct {
	name string
	size int // bytes: exact for binary files, a lower bound for text
	gen  func(r *rng, size int) []byte
}{
	{"reset.css", 3 << 10, genReset},
	{"layout.css", 14 << 10, genCSS},
	{"theme.css", 22 << 10, genCSS},
	{"components.css", 48 << 10, genCSS},
	{"utilities.css", 64 << 10, genCSS},
	{"analytics.js", 18 << 10, genJS},
	{"helpers.js", 12 << 10, genJS},
	{"app.js", 96 << 10, genJS},
	{"vendor.js", 240 << 10, genMinJS},
	{"router.js", 9 << 10, genJS},
	{"header.html", 6 << 10, genHeader},
	{"footer.html", 5 << 10, genFooter},
	{"regular.woff2", 44 << 10, genWOFF2},
	{"bold.woff2", 47 << 10, genWOFF2},
	{"logo.svg", 3 << 10, genLogo},
	{"icon-sprite.svg", 28 << 10, genSprite},
	{"hero.webp", 280 << 10, genWebP},
	{"thumb1.webp", 18 << 10, genWebP},
	{"thumb2.webp", 22 << 10, genWebP},
	{"manifest.json", 0, genManifest},
}

// StaticFiles returns the names of the 20 static files (without their .gz and .br twins),
// sorted.
func StaticFiles() []string {
	names := make([]string, len(statics))
	for i, s := range statics {
		names[i] = s.name
	}
	slices.Sort(names)
	return names
}

// staticContent returns the content of the static file name.
func staticContent(name string) []byte {
	for _, s := range statics {
		if s.name == name {
			return s.gen(newRNG(StaticDir+"/"+name), s.size)
		}
	}
	panic("arenadata: no static file " + name)
}

func staticSize(name string) int {
	for _, s := range statics {
		if s.name == name {
			return s.size
		}
	}
	return 0
}

func staticFiles() []file {
	var fs []file
	for _, s := range statics {
		p := StaticDir + "/" + s.name
		fs = append(fs,
			file{p, func(w io.Writer) error {
				_, err := w.Write(staticContent(s.name))
				return err
			}},
			file{p + ".gz", func(w io.Writer) error { return writeGzip(w, staticContent(s.name)) }},
			file{p + ".br", func(w io.Writer) error { return writeBrotli(w, staticContent(s.name)) }},
		)
	}
	return fs
}

// writeGzip compresses b at the best compression with an empty header (no name, zero
// modification time), so the output depends on b alone.
func writeGzip(w io.Writer, b []byte) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	return zw.Close()
}

// writeBrotli compresses b at quality 11 with a 4 MiB window.
func writeBrotli(w io.Writer, b []byte) error {
	bw := brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: 11, LGWin: 22})
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Close()
}

// Vocabulary of the text generators.
var (
	words = []string{"lorem", "ipsum", "dolor", "sit", "amet", "arena", "bench", "swift", "request",
		"latency", "server", "client", "socket", "stream", "buffer", "token", "cache", "route",
		"header", "payload", "thread", "worker", "queue", "signal", "vector", "matrix", "pixel",
		"canvas", "layout", "render", "module", "bundle", "static", "dynamic", "native", "hybrid"}
	blocks    = []string{"btn", "card", "nav", "menu", "modal", "hero", "grid", "list", "form", "input", "table", "badge", "alert", "tabs", "panel", "toast", "avatar", "footer", "header", "sidebar"}
	elements  = []string{"title", "body", "icon", "label", "item", "link", "image", "caption", "action", "content"}
	modifiers = []string{"primary", "secondary", "large", "small", "active", "disabled", "dark", "light", "outline", "compact"}
	states    = []string{":hover", ":focus", ":active", "::before", "::after", ":first-child", ":last-child"}
	cssProps  = []struct {
		name   string
		values func(r *rng) string
	}{
		{"color", cssColor},
		{"background-color", cssColor},
		{"border-color", cssColor},
		{"margin", cssBox},
		{"padding", cssBox},
		{"width", cssLength},
		{"max-width", cssLength},
		{"height", cssLength},
		{"font-size", cssRem},
		{"line-height", func(r *rng) string { return fmt.Sprintf("1.%d", r.between(1, 8)) }},
		{"font-weight", func(r *rng) string { return fmt.Sprint(r.between(3, 8) * 100) }},
		{"border-radius", cssLength},
		{"gap", cssRem},
		{"opacity", func(r *rng) string { return fmt.Sprintf("0.%d", r.between(1, 9)) }},
		{"z-index", func(r *rng) string { return fmt.Sprint(r.between(1, 100)) }},
		{"display", keyword("block", "flex", "grid", "inline-block", "none", "inline-flex")},
		{"position", keyword("relative", "absolute", "sticky", "fixed")},
		{"justify-content", keyword("center", "space-between", "flex-start", "flex-end")},
		{"align-items", keyword("center", "stretch", "baseline", "flex-start")},
		{"text-align", keyword("left", "center", "right")},
		{"transition", func(r *rng) string {
			return fmt.Sprintf("%s %dms ease-in-out", pick(r, []string{"opacity", "transform", "color", "all"}), r.between(1, 6)*50)
		}},
		{"box-shadow", func(r *rng) string {
			return fmt.Sprintf("0 %dpx %dpx rgba(0, 0, 0, 0.%d)", r.between(1, 8), r.between(2, 24), r.between(1, 3))
		}},
	}
	verbs = []string{"get", "set", "load", "save", "parse", "format", "render", "update", "create", "remove",
		"fetch", "track", "handle", "resolve", "build", "init", "sync", "emit", "merge", "apply"}
)

func keyword(list ...string) func(r *rng) string { return func(r *rng) string { return pick(r, list) } }
func cssColor(r *rng) string                     { return fmt.Sprintf("#%06x", r.intn(1<<24)) }
func cssLength(r *rng) string                    { return fmt.Sprintf("%dpx", r.between(1, 64)*4) }
func cssRem(r *rng) string                       { return fmt.Sprintf("%d.%drem", r.between(0, 3), r.intn(10)) }
func cssBox(r *rng) string {
	if r.chance(50) {
		return cssRem(r)
	}
	return fmt.Sprintf("%s %s", cssRem(r), cssRem(r))
}

func cssSelector(r *rng) string {
	s := "." + pick(r, blocks)
	if r.chance(60) {
		s += "__" + pick(r, elements)
	}
	if r.chance(30) {
		s += "--" + pick(r, modifiers)
	}
	if r.chance(25) {
		s += pick(r, states)
	}
	return s
}

func cssRule(b *bytes.Buffer, r *rng, indent string) {
	b.WriteString(indent + cssSelector(r))
	if r.chance(20) {
		b.WriteString(",\n" + indent + cssSelector(r))
	}
	b.WriteString(" {\n")
	for n := r.between(2, 6); n > 0; n-- {
		p := pick(r, cssProps)
		fmt.Fprintf(b, "%s  %s: %s;\n", indent, p.name, p.values(r))
	}
	b.WriteString(indent + "}\n\n")
}

func genCSS(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString(":root {\n")
	for i, m := range modifiers {
		fmt.Fprintf(&b, "  --color-%s: %s;\n  --space-%d: %s;\n", m, cssColor(r), i+1, cssRem(r))
	}
	b.WriteString("}\n\n")
	for b.Len() < size {
		if r.chance(8) {
			fmt.Fprintf(&b, "@media (min-width: %dpx) {\n", r.between(4, 16)*80)
			for n := r.between(1, 4); n > 0; n-- {
				cssRule(&b, r, "  ")
			}
			b.WriteString("}\n\n")
			continue
		}
		cssRule(&b, r, "")
	}
	return b.Bytes()
}

func genReset(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`*, *::before, *::after {
  box-sizing: border-box;
}

html {
  -webkit-text-size-adjust: 100%;
  line-height: 1.15;
}

body {
  margin: 0;
  min-height: 100vh;
  text-rendering: optimizeSpeed;
}

h1, h2, h3, h4, p, figure, blockquote, dl, dd {
  margin: 0;
}

ul[role="list"], ol[role="list"] {
  list-style: none;
}

img, picture, svg, video {
  display: block;
  max-width: 100%;
}

input, button, textarea, select {
  font: inherit;
}

`)
	for b.Len() < size {
		cssRule(&b, r, "")
	}
	return b.Bytes()
}

func ident(r *rng) string {
	w := pick(r, words)
	return pick(r, verbs) + strings.ToUpper(w[:1]) + w[1:]
}

func jsExpr(r *rng, v string) string {
	switch r.intn(5) {
	case 0:
		return fmt.Sprintf("%s + %d", v, r.between(1, 999))
	case 1:
		return fmt.Sprintf("%s.%s(%s)", v, pick(r, words), v)
	case 2:
		return fmt.Sprintf("%s(%s, %q)", ident(r), v, pick(r, words))
	case 3:
		return fmt.Sprintf("Math.max(%s, %d)", v, r.between(0, 99))
	default:
		return fmt.Sprintf("{ %s: %s, %s: %d }", pick(r, words), v, pick(r, words), r.between(0, 9999))
	}
}

func genJS(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString("\"use strict\";\n\n")
	fmt.Fprintf(&b, "const %s = Object.freeze({\n", strings.ToUpper(pick(r, words))+"_CONFIG")
	for i := range r.between(4, 10) {
		fmt.Fprintf(&b, "  %s%d: %d,\n", pick(r, words), i, r.between(0, 10000))
	}
	b.WriteString("});\n\n")
	for b.Len() < size {
		name, a, c := ident(r), pick(r, words), pick(r, words)
		if r.chance(30) {
			fmt.Fprintf(&b, "/**\n * %s %s the %s of a %s.\n */\n", strings.ToUpper(name[:1])+name[1:], pick(r, verbs)+"s", pick(r, words), pick(r, words))
		}
		fmt.Fprintf(&b, "export function %s(%s, %s) {\n", name, a, c)
		fmt.Fprintf(&b, "  const value = %s;\n", jsExpr(r, a))
		for n := r.between(1, 4); n > 0; n-- {
			switch r.intn(3) {
			case 0:
				fmt.Fprintf(&b, "  if (%s > %d) {\n    return %s;\n  }\n", c, r.between(0, 500), jsExpr(r, "value"))
			case 1:
				fmt.Fprintf(&b, "  for (const item of %s.%s) {\n    %s(item, %s);\n  }\n", c, pick(r, words), ident(r), a)
			default:
				fmt.Fprintf(&b, "  %s.%s = %s;\n", c, pick(r, words), jsExpr(r, "value"))
			}
		}
		fmt.Fprintf(&b, "  return %s;\n}\n\n", jsExpr(r, "value"))
	}
	return b.Bytes()
}

// genMinJS writes minified-looking JavaScript: short names, no indentation, long lines.
func genMinJS(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString("/*! vendor bundle | generated by arenadata */\n")
	short := func() string { return string(rune('a'+r.intn(26))) + string(rune('a'+r.intn(26))) }
	line := 0
	for b.Len() < size {
		fmt.Fprintf(&b, "function %s(%s,%s){var %s=%s.%s||%d;", short(), "e", "t", short(), "e", pick(r, words), r.between(0, 999))
		for n := r.between(1, 4); n > 0; n-- {
			switch r.intn(3) {
			case 0:
				fmt.Fprintf(&b, "if(t>%d)return %s(e,\"%s\");", r.between(0, 99), short(), pick(r, words))
			case 1:
				fmt.Fprintf(&b, "for(var n=0;n<e.length;n++)t[n]=%s(e[n],%d);", short(), r.between(1, 64))
			default:
				fmt.Fprintf(&b, "t.%s=e.%s?%s:%d;", pick(r, words), pick(r, words), short(), r.between(0, 9999))
			}
		}
		b.WriteString("return t}")
		if line++; line%12 == 0 {
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func sentence(r *rng) string {
	n := r.between(6, 16)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = pick(r, words)
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func htmlLinks(b *bytes.Buffer, r *rng, indent string, n int) {
	fmt.Fprintf(b, "%s<ul class=\"%s__list\">\n", indent, pick(r, blocks))
	for range n {
		w := pick(r, words)
		fmt.Fprintf(b, "%s  <li class=\"%s__item\"><a href=\"/%s/%s\">%s</a></li>\n", indent, pick(r, blocks), w, pick(r, words), strings.ToUpper(w[:1])+w[1:])
	}
	fmt.Fprintf(b, "%s</ul>\n", indent)
}

func genHeader(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString("<header class=\"site-header\">\n  <a class=\"site-header__logo\" href=\"/\"><img src=\"/static/logo.svg\" alt=\"Arena\" width=\"200\" height=\"60\"></a>\n  <nav class=\"site-header__nav\" aria-label=\"Main\">\n")
	htmlLinks(&b, r, "    ", 8)
	b.WriteString("  </nav>\n")
	for b.Len() < size-20 {
		fmt.Fprintf(&b, "  <section class=\"%s\">\n    <h2>%s</h2>\n    <p>%s %s</p>\n", pick(r, blocks), sentence(r), sentence(r), sentence(r))
		htmlLinks(&b, r, "    ", r.between(2, 5))
		b.WriteString("  </section>\n")
	}
	b.WriteString("</header>\n")
	return b.Bytes()
}

func genFooter(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString("<footer class=\"site-footer\">\n")
	for b.Len() < size-60 {
		fmt.Fprintf(&b, "  <div class=\"site-footer__column\">\n    <h3>%s</h3>\n", strings.ToUpper(pick(r, words)))
		htmlLinks(&b, r, "    ", r.between(3, 6))
		fmt.Fprintf(&b, "    <p>%s</p>\n  </div>\n", sentence(r))
	}
	b.WriteString("  <p class=\"site-footer__legal\">Generated test content.</p>\n</footer>\n")
	return b.Bytes()
}

func svgPath(r *rng, w, h int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "M%d %d", r.intn(w), r.intn(h))
	for n := r.between(3, 8); n > 0; n-- {
		if r.chance(50) {
			fmt.Fprintf(&b, "L%d %d", r.intn(w), r.intn(h))
		} else {
			fmt.Fprintf(&b, "C%d %d %d %d %d %d", r.intn(w), r.intn(h), r.intn(w), r.intn(h), r.intn(w), r.intn(h))
		}
	}
	b.WriteString("Z")
	return b.String()
}

func genLogo(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 60" width="200" height="60" role="img" aria-label="Arena">` + "\n")
	for b.Len() < size-120 {
		fmt.Fprintf(&b, "  <path d=\"%s\" fill=\"%s\"/>\n", svgPath(r, 200, 60), cssColor(r))
	}
	b.WriteString(`  <text x="70" y="38" font-family="sans-serif" font-size="24">Arena</text>` + "\n</svg>\n")
	return b.Bytes()
}

func genSprite(r *rng, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" style="display: none">` + "\n")
	for i := 0; b.Len() < size-8; i++ {
		fmt.Fprintf(&b, "  <symbol id=\"icon-%s-%d\" viewBox=\"0 0 24 24\">\n", pick(r, words), i)
		for n := r.between(1, 3); n > 0; n-- {
			fmt.Fprintf(&b, "    <path d=\"%s\"/>\n", svgPath(r, 24, 24))
		}
		b.WriteString("  </symbol>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func genManifest(*rng, int) []byte {
	return []byte(`{
  "name": "HttpArena Static Test",
  "short_name": "Arena",
  "description": "Static files served by the arena's static profiles.",
  "start_url": "/",
  "scope": "/",
  "display": "standalone",
  "orientation": "portrait",
  "background_color": "#ffffff",
  "theme_color": "#1f6feb",
  "lang": "en",
  "icons": [
    {"src": "/static/logo.svg", "sizes": "any", "type": "image/svg+xml"},
    {"src": "/static/thumb1.webp", "sizes": "192x192", "type": "image/webp"},
    {"src": "/static/thumb2.webp", "sizes": "512x512", "type": "image/webp"}
  ],
  "shortcuts": [
    {"name": "Dashboard", "url": "/dashboard"},
    {"name": "Settings", "url": "/settings"}
  ]
}
`)
}

// genWOFF2 writes a WOFF2 header followed by incompressible bytes.
func genWOFF2(r *rng, size int) []byte {
	b := make([]byte, size)
	r.fill(b)
	copy(b, "wOF2")
	binary.BigEndian.PutUint32(b[4:], 0x00010000) // flavor: TrueType
	binary.BigEndian.PutUint32(b[8:], uint32(size))
	binary.BigEndian.PutUint16(b[12:], 14) // numTables
	binary.BigEndian.PutUint16(b[14:], 0)  // reserved
	return b
}

// genWebP writes a RIFF/WEBP container with a lossy VP8 chunk header followed by
// incompressible bytes.
func genWebP(r *rng, size int) []byte {
	b := make([]byte, size)
	r.fill(b)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(size-8))
	copy(b[8:], "WEBPVP8 ")
	binary.LittleEndian.PutUint32(b[16:], uint32(size-20))
	copy(b[23:], []byte{0x9d, 0x01, 0x2a}) // VP8 key frame start code
	binary.LittleEndian.PutUint16(b[26:], 640)
	binary.LittleEndian.PutUint16(b[28:], 480)
	return b
}
