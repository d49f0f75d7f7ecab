package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows the runner's progress on stderr: a bar with notes printed above it on a
// terminal, one plain line per step otherwise (logs and CI stay readable) and when NO_COLOR
// is set to anything.
type progress struct {
	w    io.Writer
	tty  bool
	bar  *progressbar.ProgressBar
	last string
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""}
}

func (p *progress) Step(desc string, done, total int) {
	if !p.tty {
		if desc != p.last {
			fmt.Fprintf(p.w, "[%d/%d runs] %s\n", done, total, desc)
			p.last = desc
		}
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	p.bar.Describe(fmt.Sprintf("%-28s", desc))
	_ = p.bar.Set(done)
}

func (p *progress) Note(line string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, line)
	if p.bar != nil {
		_ = p.bar.RenderBlank()
	}
}

func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
