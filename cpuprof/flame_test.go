package cpuprof

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// svgFrame is one drawn frame of a flame graph as read back from the SVG.
type svgFrame struct {
	title  string
	x, y   float64
	width  float64
	sample int
}

// readFlame parses an SVG flame graph with encoding/xml and returns its frames.
func readFlame(t *testing.T, svg []byte) []svgFrame {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var frames []svgFrame
	var cur *svgFrame
	inTitle := false
	titleRE := regexp.MustCompile(`^(.*) \((\d+) samples?, [0-9.]+%\)$`)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("flame graph is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "g":
				frames = append(frames, svgFrame{})
				cur = &frames[len(frames)-1]
			case "title":
				inTitle = true
			case "rect":
				if cur == nil {
					continue
				}
				for _, a := range tok.Attr {
					v, _ := strconv.ParseFloat(a.Value, 64)
					switch a.Name.Local {
					case "x":
						cur.x = v
					case "y":
						cur.y = v
					case "width":
						cur.width = v
					}
				}
			}
		case xml.CharData:
			if inTitle && cur != nil {
				cur.title += string(tok)
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "title":
				inTitle = false
				m := titleRE.FindStringSubmatch(cur.title)
				if m == nil {
					t.Fatalf("title %q does not say name, samples and share", cur.title)
				}
				cur.title = m[1]
				cur.sample, _ = strconv.Atoi(m[2])
			case "g":
				cur = nil
			}
		}
	}
	return frames
}

func TestFlameGraph(t *testing.T) {
	samples := synthetic()
	// A name that needs escaping.
	samples = append(samples, Sample{Period: 1e6, Stack: []Frame{{Symbol: `main.F[<T & "U">]`, DSO: "/app/server"}}})
	var buf bytes.Buffer
	if err := WriteFlameGraph(&buf, samples, FlameOptions{Title: "net/http json <test>"}); err != nil {
		t.Fatal(err)
	}
	frames := readFlame(t, buf.Bytes())
	if len(frames) == 0 || frames[0].title != "all" || frames[0].sample != 11 {
		t.Fatalf("frames = %+v, want the first to be all with 11 samples", frames)
	}
	root := frames[0]
	// The root's children sit one row above it; the widest is the hottest caller.
	var widest svgFrame
	var sum float64
	for _, f := range frames {
		if f.y == root.y-flameRow {
			sum += f.width
			if f.width > widest.width {
				widest = f
			}
		}
	}
	if widest.title != "runtime.goexit" || widest.sample != 10 {
		t.Errorf("widest child of the root = %q (%d samples), want runtime.goexit (10)", widest.title, widest.sample)
	}
	if d := sum - root.width; d > 0.01 || d < -0.01 {
		t.Errorf("children of the root are %.2f px wide together, the root %.2f", sum, root.width)
	}
	var marshal []svgFrame
	for _, f := range frames {
		if f.title == "encoding/json.(*encodeState).marshal" {
			marshal = append(marshal, f)
		}
	}
	if len(marshal) != 1 || marshal[0].sample != 4 {
		t.Errorf("marshal frames %+v, want one of 4 samples (stacks merged by prefix)", marshal)
	}
	if !strings.Contains(buf.String(), "main.F[&lt;T &amp; &#34;U&#34;&gt;]") {
		t.Errorf("the generic name is not escaped as XML text")
	}

	var again bytes.Buffer
	if err := WriteFlameGraph(&again, samples, FlameOptions{Title: "net/http json <test>"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("two graphs of the same samples differ")
	}

	golden := filepath.Join("testdata", "synthetic.svg.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestFlameGraph -update to write it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("flame graph differs from %s (go test -run TestFlameGraph -update rewrites it):\n%s", golden, buf.String())
	}
}

func TestFlameGraphEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFlameGraph(&buf, nil, FlameOptions{}); err != nil {
		t.Fatal(err)
	}
	if frames := readFlame(t, buf.Bytes()); len(frames) != 0 {
		t.Errorf("empty profile drew %d frames", len(frames))
	}
}
