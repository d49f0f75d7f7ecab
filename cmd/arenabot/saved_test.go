package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabot/arenabot/frameworks"
	"github.com/arenabot/arenabot/internal/arenagen"
	"github.com/arenabot/arenabot/profile"
	"github.com/arenabot/arenabot/result"
)

// readSaved reads the result `bench --save` wrote for the entry in entryDir (an arena's
// frameworks/<name>): its row in its display name's results file, site/data/results/<slug>.json
// or, for a --lite row, the lite one. A row that is not there wraps fs.ErrNotExist.
func readSaved(entryDir, test string, conns int) (result.Result, error) {
	fwDir := filepath.Dir(entryDir)
	e, err := frameworks.Load(fwDir, filepath.Base(entryDir), profile.Names())
	if err != nil {
		return result.Result{}, err
	}
	for _, lite := range []bool{false, true} {
		f, found, err := result.ReadSite(filepath.Dir(fwDir), e.Meta.DisplayName, lite)
		if err != nil {
			return result.Result{}, err
		}
		if !found {
			continue
		}
		rows, err := f.EntryRows(e.Name)
		if err != nil {
			return result.Result{}, err
		}
		for _, r := range rows {
			if r.Profile == test && r.Connections == conns {
				return r, nil
			}
		}
	}
	return result.Result{}, fmt.Errorf("%s %s-%d: no saved row: %w", e.Name, test, conns, fs.ErrNotExist)
}

// checkBoard reads an arena's site/data as the arena's own generator does and fails the test
// on every problem it finds.
func checkBoard(t *testing.T, root string) arenagen.Board {
	t.Helper()
	board, problems := arenagen.Read(filepath.Join(root, "site", "data"))
	if len(problems) > 0 {
		t.Errorf("the arena's generator would misread %s:\n%s", filepath.Join(root, "site", "data"), strings.Join(problems, "\n"))
	}
	return board
}
