package arenadata

// SetWriteForTest makes Ensure generate with f instead of Write and returns a function that
// restores Write.
func SetWriteForTest(f func(dir string) error) (restore func()) {
	old := writeTree
	writeTree = f
	return func() { writeTree = old }
}
