package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxMethods is the most methods one type may declare outside the test-support packages:
// a type with more does too many things (issue 22: queue.Memory had 47, the runner's
// Bencher 57, before they were split by what they do).
const maxMethods = 20

// testSupport are the packages that exist for tests (fakes of GitHub and of servers), whose
// types mirror a whole API and are exempt.
var testSupport = map[string]bool{"bot/githubtest": true, "validate/validatetest": true}

// TestMethodSets counts, in every non-test Go file of the module, the methods declared on
// each type, and fails for a type with more than maxMethods.
func TestMethodSets(t *testing.T) {
	root := filepath.Join("..", "..")
	counts := map[string]int{} // "pkg/dir.Type" → methods
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "frameworks") {
				return filepath.SkipDir // entries are their own modules
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || testSupport[filepath.ToSlash(filepath.Dir(rel))] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			counts[filepath.ToSlash(filepath.Dir(rel))+"."+receiver(fn.Recv.List[0].Type)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) < 50 {
		t.Fatalf("found methods on only %d types: the walk missed the module", len(counts))
	}
	for typ, n := range counts {
		if n > maxMethods {
			t.Errorf("%s declares %d methods, more than %d: split it by what it does", typ, n, maxMethods)
		}
	}
}

// receiver names the type of a method's receiver: T for T, *T, T[K] and *T[K].
func receiver(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiver(x.X)
	case *ast.IndexExpr:
		return receiver(x.X)
	case *ast.IndexListExpr:
		return receiver(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
