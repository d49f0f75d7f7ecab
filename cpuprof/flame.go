package cpuprof

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
)

// FlameOptions shape a flame graph.
type FlameOptions struct {
	// Title is drawn above the graph; "" means "CPU".
	Title string
	// Width is the image width in pixels; 0 means 1200.
	Width int
}

// Geometry of the flame graph, in pixels.
const (
	flameRow     = 16   // height of one frame
	flameMargin  = 10   // left, right and bottom
	flameTop     = 36   // room for the title
	flameFont    = 11   // font size
	flameCharW   = 6.6  // approximate width of one character at flameFont
	flameMinRect = 0.25 // narrower frames (and what they call) are not drawn
)

// A flameNode is a call path: samples whose stacks start with the path from the root.
type flameNode struct {
	name     string
	kernel   bool
	count    int
	children map[string]*flameNode
}

func (n *flameNode) child(f Frame) *flameNode {
	name := f.Name()
	c := n.children[name]
	if c == nil {
		if n.children == nil {
			n.children = map[string]*flameNode{}
		}
		c = &flameNode{name: name, kernel: f.Kernel()}
		n.children[name] = c
	}
	return c
}

// sorted returns the children ordered by name, which makes the output deterministic and
// puts the same function at the same place in every graph.
func (n *flameNode) sorted() []*flameNode {
	out := make([]*flameNode, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *flameNode) int { return strings.Compare(a.name, b.name) })
	return out
}

func (n *flameNode) depth() int {
	d := 0
	for _, c := range n.children {
		d = max(d, c.depth())
	}
	return d + 1
}

// WriteFlameGraph draws samples as an SVG flame graph: the root ("all") at the bottom,
// each frame above its caller, stacks that share a prefix merged, widths proportional to
// the number of samples. Every frame has a <title> with its name, samples and share.
// The same samples give the same bytes.
func WriteFlameGraph(w io.Writer, samples []Sample, opt FlameOptions) error {
	root := &flameNode{name: "all"}
	for _, s := range samples {
		root.count++
		n := root
		for i := len(s.Stack) - 1; i >= 0; i-- {
			n = n.child(s.Stack[i])
			n.count++
		}
	}
	width := opt.Width
	if width <= 0 {
		width = 1200
	}
	title := opt.Title
	if title == "" {
		title = "CPU"
	}
	depth := root.depth()
	height := flameTop + depth*flameRow + flameMargin
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(bw, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"%d\">\n",
		width, height, width, height, flameFont)
	fmt.Fprintf(bw, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdfdf6\"/>\n", width, height)
	fmt.Fprintf(bw, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">%s</text>\n", width/2, escape(title))
	g := flameGraph{w: bw, total: root.count, scale: 0}
	if root.count > 0 {
		g.scale = float64(width-2*flameMargin) / float64(root.count)
	}
	g.bottom = height - flameMargin - flameRow
	g.draw(root, flameMargin, 0)
	fmt.Fprintf(bw, "</svg>\n")
	return bw.Flush()
}

type flameGraph struct {
	w      *bufio.Writer
	total  int
	scale  float64 // pixels per sample
	bottom int     // y of the root row
}

func (g *flameGraph) draw(n *flameNode, x float64, level int) {
	wid := float64(n.count) * g.scale
	if wid < flameMinRect {
		return
	}
	y := g.bottom - level*flameRow
	pct := 0.0
	if g.total > 0 {
		pct = 100 * float64(n.count) / float64(g.total)
	}
	plural := "s"
	if n.count == 1 {
		plural = ""
	}
	fmt.Fprintf(g.w, "<g><title>%s (%d sample%s, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>",
		escape(n.name), n.count, plural, pct, x, y, wid, flameRow-1, color(n))
	if label := fitLabel(n.name, wid); label != "" {
		fmt.Fprintf(g.w, "<text x=\"%.2f\" y=\"%d\">%s</text>", x+3, y+flameRow-4, escape(label))
	}
	fmt.Fprintf(g.w, "</g>\n")
	cx := x
	for _, c := range n.sorted() {
		g.draw(c, cx, level+1)
		cx += float64(c.count) * g.scale
	}
}

// fitLabel is the name cut to what fits in a frame wid pixels wide, "" when not even a
// few characters fit.
func fitLabel(name string, wid float64) string {
	fit := int((wid - 6) / flameCharW)
	r := []rune(name)
	switch {
	case fit < 3:
		return ""
	case len(r) <= fit:
		return name
	default:
		return string(r[:fit-2]) + ".."
	}
}

// color is a stable warm colour per name for user code, cool for the kernel, grey for
// what nobody could name.
func color(n *flameNode) string {
	h := fnv.New32a()
	h.Write([]byte(n.name))
	v := h.Sum32()
	a, b := int(v%64), int(v>>8%64)
	switch {
	case n.name == "all":
		return "rgb(200,200,200)"
	case strings.HasPrefix(n.name, Unknown):
		return fmt.Sprintf("rgb(%d,%d,%d)", 160+a/2, 160+a/2, 160+a/2)
	case n.kernel:
		return fmt.Sprintf("rgb(%d,%d,%d)", 90+a, 170+b/2, 200+b/2)
	default:
		return fmt.Sprintf("rgb(%d,%d,%d)", 205+a*3/4, 90+b*2, 40+a/2)
	}
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
