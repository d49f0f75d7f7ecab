package frameworks

import (
	"path"
	"slices"
	"strings"
)

// Touched returns the sorted, de-duplicated names of the entries that a list
// of changed repository paths touches: "frameworks/gin/main.go" gives "gin".
// Files directly in frameworks/, directories that are never entries (_shared,
// names starting with "." or "_", testdata) and paths outside frameworks/ are
// ignored. A name is returned even if the entry no longer exists.
func Touched(paths []string) []string {
	var names []string
	for _, p := range paths {
		p = path.Clean(strings.TrimPrefix(p, "/"))
		rest, ok := strings.CutPrefix(p, "frameworks/")
		if !ok {
			continue
		}
		name, file, ok := strings.Cut(rest, "/")
		if !ok || file == "" || skipDir(name) {
			continue // a file directly in frameworks/
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
