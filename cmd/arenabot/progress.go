package main

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
)

// progress shows the runner's progress as a bar on stderr, with notes printed above it.
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) Step(desc string, done, total int) {
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
