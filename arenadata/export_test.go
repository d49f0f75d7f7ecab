package arenadata

import (
	"fmt"
	"io"
)

// SetWriteForTest makes Ensure generate with f instead of Write and returns a function that
// restores Write.
func SetWriteForTest(f func(dir string) error) (restore func()) {
	old := writeTree
	writeTree = f
	return func() { writeTree = old }
}

// WriteFileForTest writes the contents of the tree's file path (slash-separated) to w.
func WriteFileForTest(w io.Writer, path string) error {
	for _, f := range tree() {
		if f.path == path {
			return f.write(w)
		}
	}
	return fmt.Errorf("no file %s in the tree", path)
}

// WriteOneForTest writes the tree's file path into dir as Write does.
func WriteOneForTest(dir, path string) error {
	for _, f := range tree() {
		if f.path == path {
			return writeFile(dir, f)
		}
	}
	return fmt.Errorf("no file %s in the tree", path)
}
