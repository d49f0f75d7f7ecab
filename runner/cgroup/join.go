package cgroup

import (
	"errors"
	"fmt"
	"strings"
)

// Join returns a group that measures the groups together, as one: a compose stack's
// containers. A window's CPU time is the sum of theirs and its memory peak the sum of their
// peaks (each container's own high-water mark, so an upper bound of the stack's peak at any
// one moment, as summing docker stats was). Join of one group is that group.
func Join(groups ...*Group) *Group {
	if len(groups) == 1 {
		return groups[0]
	}
	j := *groups[0]
	j.more = groups
	return &j
}

func (g *Group) beginJoined() (*Window, error) {
	w := &Window{g: g}
	for _, m := range g.more {
		mw, err := m.Begin()
		if err != nil {
			for _, o := range w.more {
				o.End()
			}
			return nil, err
		}
		w.more = append(w.more, mw)
	}
	return w, nil
}

func (w *Window) endJoined() (Usage, error) {
	var u Usage
	var errs []error
	for _, m := range w.more {
		mu, err := m.End()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		u.CPU += mu.CPU
		u.MemoryPeak += mu.MemoryPeak
		u.Wall = max(u.Wall, mu.Wall)
	}
	return u, errors.Join(errs...)
}

func (g *Group) joinedString() string {
	var parts []string
	for _, m := range g.more {
		parts = append(parts, m.String())
	}
	return fmt.Sprintf("[%s]", strings.Join(parts, " + "))
}
