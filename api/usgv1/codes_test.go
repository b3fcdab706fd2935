package usgv1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCodesListsEveryCode: Codes names every Code constant declared in
// the package, so that the status table's test (api.TestStatusTable),
// which walks Codes, sees a new code.
func TestCodesListsEveryCode(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []Code
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				return true
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a Code constant's value is not a literal: %T", v)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				declared = append(declared, Code(s))
			}
			return true
		})
	}
	if len(declared) == 0 {
		t.Fatal("no Code constant found")
	}
	listed := Codes()
	for _, c := range declared {
		if !slices.Contains(listed, c) {
			t.Errorf("Code %q is not in Codes()", c)
		}
	}
	if len(listed) != len(declared) {
		t.Errorf("Codes() has %d entries, the package declares %d", len(listed), len(declared))
	}
}
