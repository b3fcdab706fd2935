package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// appJSON lists the files under app that may hold JSON: import
// encoding/json or declare a struct field with a json tag. Everything
// else in app is the domain and its use cases, which hand domain values
// to the adapters; the wire bodies of both specs (and the admin socket's)
// are api's (issue 44, "One wire layer"). What stays are encodings that
// are not wire: how a store or learning keeps its records and files.
// Each entry says why; an entry whose file holds no JSON any more, or is
// gone, fails the test, so the list only shrinks.
var appJSON = map[string]string{
	"app/repo/":              "the storage ports' records: how bbolt keeps each entity (and PostgreSQL its JSON columns)",
	"app/learn/":             "on-site learning's own files: runs, curves, model versions, held-out sets",
	"app/usglog.go":          "the USG log's stored inputs and outputs (repo.USGLogEntry's JSON)",
	"app/dogheart/folder.go": "a DogHeart/CCK dataset folder's provenance.json (docs/dataset.md)",
}

// engineJSON is appJSON for engine: the engines return values, and the
// usg-v1 bodies are api/usgv1's; what stays are the model files the
// trainers write and the engines read, and test data.
var engineJSON = map[string]string{
	"engine/manifest/manifest.go": "the model manifest (models/manifest.json) the trainers write",
	"engine/modelref/modelref.go": "the export references (models/reference/NAME.json) the trainers save",
	"engine/cardiac/params.go":    "the cardiac family's params in the model manifest",
	"engine/cardiac/refine.go":    "the refine stage's params (refine_margin) in the model manifest",
	"engine/usg/params.go":        "the usg family's params in the model manifest",
	"engine/cardiac/cardiactest/": "the test phantoms' truth.json (test data, for tests and bench)",
}

// checkAppHoldsNoWireJSON is TestLayering's rule that app's non-test
// files hold no JSON but for appJSON's entries (checkNoWireJSON).
func checkAppHoldsNoWireJSON(t *testing.T) { checkNoWireJSON(t, "./app/...", appJSON) }

// checkEngineHoldsNoWireJSON is the same rule on engine (engineJSON).
func checkEngineHoldsNoWireJSON(t *testing.T) { checkNoWireJSON(t, "./engine/...", engineJSON) }

// checkNoWireJSON checks that the non-test files of the packages of
// pattern hold no JSON (no encoding/json import, no json struct tag) but
// for allowed's entries (a file, or a folder ending in "/", relative to
// the module root), and that each entry still does. It reads the files,
// not the import graph: app may link encoding/json through its storage
// and learning packages, and the rule is on who declares the encoding.
func checkNoWireJSON(t *testing.T, pattern string, allowed map[string]string) {
	type listed struct {
		ImportPath, Dir string
		GoFiles         []string
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	entries := maps.Clone(allowed)
	// entry is the allow-list entry that names rel: the file, or a folder
	// (ending in "/") above it.
	entry := func(rel string) (string, bool) {
		for k := range entries {
			if rel == k || strings.HasSuffix(k, "/") && strings.HasPrefix(rel, k) {
				return k, true
			}
		}
		return "", false
	}
	holding := map[string]bool{} // allow-list entries whose files hold JSON
	checked := 0
	for _, p := range goList[listed](t, "-json=ImportPath,Dir,GoFiles", pattern) {
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			rel, err := filepath.Rel(root, path)
			if err != nil {
				t.Fatal(err)
			}
			rel = filepath.ToSlash(rel)
			checked++
			why := holdsJSON(t, path)
			if why == "" {
				continue
			}
			k, ok := entry(rel)
			if !ok {
				t.Errorf("%s %s: no wire JSON here; the wire bodies are api's (or name the file in the allow-list with the reason)", rel, why)
				continue
			}
			holding[k] = true
		}
	}
	if checked == 0 {
		t.Fatalf("no file of %s to check", pattern)
	}
	for k := range entries {
		if !holding[k] {
			t.Errorf("%s holds no JSON any more (or is gone): take it off the allow-list", k)
		}
	}
}

// holdsJSON says how the Go file at path holds JSON ("imports
// encoding/json", "tags field X with json"), or "" when it does not.
func holdsJSON(t *testing.T, path string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool { return s.Path.Value == strconv.Quote("encoding/json") }) {
		return "imports encoding/json"
	}
	var found string
	ast.Inspect(f, func(n ast.Node) bool {
		fl, ok := n.(*ast.Field)
		if !ok || fl.Tag == nil || found != "" {
			return found == ""
		}
		tag, err := strconv.Unquote(fl.Tag.Value)
		if err != nil {
			return true
		}
		if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
			name := "(embedded)"
			if len(fl.Names) > 0 {
				name = fl.Names[0].Name
			}
			found = "tags field " + name + " with json"
		}
		return true
	})
	return found
}
