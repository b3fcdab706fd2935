package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// assertionAllowed are the type assertions to an interface that app's
// non-test files may make, by file and asserted type, each with why it
// is not a port's optional capability.
var assertionAllowed = map[string]string{
	// image.Image is a standard library value, not a port: asking it for
	// SubImage is the standard way to crop without copying the pixels
	// (quadCrop and the screenshot viewport retry). Every image type the
	// standard decoders return has it; an image without it is measured
	// whole, uncropped.
	"app/capture/predict.go: interface{SubImage(image.Rectangle) image.Image}": "crop an image.Image without copying",
}

// TestNoCapabilityAssertions: app discovers no optional capability of a
// port at run time. Every type assertion and type switch case in app's
// non-test files is type-checked, and one fails the test when it asserts
// to an interface type or asserts on a value whose static type is an
// interface of this module (a port), unless assertionAllowed names it.
// An optional capability is a named field of app.Deps (or of the
// relevant constructor's config), nil meaning not available (issue 44
// item 2).
func TestNoCapabilityAssertions(t *testing.T) {
	pkgs := listExports(t)
	fset := token.NewFileSet()
	imp := exportImporter(fset, pkgs)
	checked := 0
	for _, p := range pkgs {
		if !under(p.ImportPath, "vetlens/app") {
			continue
		}
		files, info, _ := typeCheck(t, fset, imp, p)
		checked++
		for _, f := range files {
			for _, a := range assertions(f, info) {
				pos := fset.Position(a.pos)
				rel, err := filepath.Rel(p.Root, pos.Filename)
				if err != nil {
					t.Fatal(err)
				}
				rel = filepath.ToSlash(rel)
				if !a.port(p.ModulePath) && !types.IsInterface(a.to) {
					continue
				}
				if _, ok := assertionAllowed[rel+": "+a.to.String()]; ok {
					continue
				}
				t.Errorf("%s:%d: type assertion of %s to %s: an optional capability of a port is discovered at run time; "+
					"make it a named field of app.Deps (or the constructor's config), nil meaning not available",
					rel, pos.Line, a.from, a.to)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no app package was checked")
	}
}

// typeCheck parses and type-checks p's non-test files.
func typeCheck(t *testing.T, fset *token.FileSet, imp types.Importer, p exportedPackage) ([]*ast.File, *types.Info, *types.Package) {
	t.Helper()
	if len(p.CgoFiles) > 0 {
		t.Fatalf("%s has cgo files, which this check does not type-check", p.ImportPath)
	}
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	pkg, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", p.ImportPath, err)
	}
	return files, info, pkg
}

// exportImporter imports pkgs from their compiled export data.
func exportImporter(fset *token.FileSet, pkgs map[string]exportedPackage) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
}

// TestFeaturePorts: app.Service is the features and nothing more, and
// each feature declares the ports it uses (issue 44 item 2). Every
// exported field of app.Service is a pointer to a feature struct; no
// feature, nor a struct it embeds or holds by value, has a field of type
// repo.Repos (all repositories: a feature names the ones it uses, in a
// ports struct of its own) or *app.Service (the whole facade).
func TestFeaturePorts(t *testing.T) {
	pkgs := listExports(t)
	fset := token.NewFileSet()
	p, ok := pkgs["vetlens/app"]
	if !ok {
		t.Fatal("vetlens/app is not listed")
	}
	_, _, pkg := typeCheck(t, fset, exportImporter(fset, pkgs), p)
	svc, ok := pkg.Scope().Lookup("Service").Type().Underlying().(*types.Struct)
	if !ok {
		t.Fatal("app.Service is not a struct")
	}
	features := 0
	for i := range svc.NumFields() {
		f := svc.Field(i)
		if !f.Exported() {
			continue
		}
		ptr, ok := f.Type().(*types.Pointer)
		if !ok {
			t.Errorf("app.Service.%s is %s, not a pointer to a feature", f.Name(), f.Type())
			continue
		}
		features++
		walkFields(ptr.Elem(), map[types.Type]bool{}, func(path string, ft types.Type) {
			switch ft.String() {
			case "vetlens/app/repo.Repos", "*vetlens/app.Service":
				t.Errorf("feature %s has field %s of type %s: declare the ports it uses instead", f.Name(), path, ft)
			}
		})
	}
	if features < 6 {
		t.Fatalf("app.Service has %d features, want the split of issue 44 (at least 6)", features)
	}
}

// walkFields calls visit for each field of the struct under typ, and of
// the structs it embeds or holds by value or by pointer to an unexported
// type of the same package (the features' shared machinery), once each.
func walkFields(typ types.Type, seen map[types.Type]bool, visit func(path string, t types.Type)) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	st, ok := typ.Underlying().(*types.Struct)
	if !ok {
		return
	}
	for i := range st.NumFields() {
		f := st.Field(i)
		visit(f.Name(), f.Type())
		inner := f.Type()
		if p, ok := inner.(*types.Pointer); ok {
			n, named := p.Elem().(*types.Named)
			if !named || n.Obj().Exported() {
				continue // another feature is checked on its own
			}
			inner = n
		}
		walkFields(inner, seen, visit)
	}
}

// assertion is one type assertion, or one case of a type switch.
type assertion struct {
	pos      token.Pos
	from, to types.Type
}

// port reports whether the asserted value's static type is an interface
// declared in module (one of app's ports, or an engine's).
func (a assertion) port(module string) bool {
	n, ok := types.Unalias(a.from).(*types.Named)
	if !ok || !types.IsInterface(n) || n.Obj().Pkg() == nil {
		return false
	}
	return under(n.Obj().Pkg().Path(), module)
}

// assertions lists f's type assertions and type switch cases.
func assertions(f *ast.File, info *types.Info) []assertion {
	var out []assertion
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeAssertExpr:
			if n.Type != nil { // x.(type) is handled with its switch
				out = append(out, assertion{n.Pos(), info.TypeOf(n.X), info.TypeOf(n.Type)})
			}
		case *ast.TypeSwitchStmt:
			var x ast.Expr
			switch s := n.Assign.(type) {
			case *ast.AssignStmt:
				x = s.Rhs[0].(*ast.TypeAssertExpr).X
			case *ast.ExprStmt:
				x = s.X.(*ast.TypeAssertExpr).X
			}
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if to := info.TypeOf(e); to != nil && to != types.Typ[types.UntypedNil] {
						out = append(out, assertion{e.Pos(), info.TypeOf(x), to})
					}
				}
			}
		}
		return true
	})
	return out
}

// exportedPackage is the part of `go list -export -json` the check reads.
type exportedPackage struct {
	ImportPath, Dir, Export string
	GoFiles, CgoFiles       []string
	// ModulePath and Root are its module's path and folder (none for
	// the standard library).
	ModulePath, Root string `json:"-"`
}

// listExports runs `go list -export -deps` over app's packages: each
// package app needs, with its compiled export data, by import path.
func listExports(t *testing.T) map[string]exportedPackage {
	t.Helper()
	type listed struct {
		exportedPackage
		Module *struct{ Path, Dir string }
	}
	pkgs := map[string]exportedPackage{}
	for _, p := range goList[listed](t, "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,CgoFiles,Module", "./app/...") {
		if p.Module != nil {
			p.ModulePath, p.Root = p.Module.Path, p.Module.Dir
		}
		pkgs[p.ImportPath] = p.exportedPackage
	}
	return pkgs
}
