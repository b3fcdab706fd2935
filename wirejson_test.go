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
// are api's (issue 44, "One wire layer"). Each entry says why; an entry
// whose file holds no JSON any more, or is gone, fails the test, so the
// list only shrinks.
var appJSON = struct {
	// stored: encodings that are not wire: how a store or learning keeps
	// its records and files. They stay.
	stored map[string]string
}{
	stored: map[string]string{
		"app/repo/":     "the storage ports' records: how bbolt keeps each entity (and PostgreSQL its JSON columns)",
		"app/learn/":    "on-site learning's own files: runs, curves, model versions, held-out sets",
		"app/usglog.go": "the USG log's stored inputs and outputs (repo.USGLogEntry's JSON)",
		"app/desktop.go": "reads the USG log's stored inputs; to call usglog.go's decoder once the split of desktop.go " +
			"(a pure move, another branch) lands",
	},
}

// checkAppHoldsNoWireJSON is TestLayering's rule that app's non-test
// files hold no JSON (no encoding/json import, no json struct tag) but
// for appJSON's entries, and that each entry still does. It reads the
// files, not the import graph: app may link encoding/json through its
// storage and learning packages, and the rule is on who declares the
// encoding.
func checkAppHoldsNoWireJSON(t *testing.T) {
	type listed struct {
		ImportPath, Dir string
		GoFiles         []string
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	entries := maps.Clone(appJSON.stored)
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
	for _, p := range goList[listed](t, "-json=ImportPath,Dir,GoFiles", "./app/...") {
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
				t.Errorf("%s %s: app holds no wire JSON; its wire bodies are api's (or name it in appJSON with the reason)", rel, why)
				continue
			}
			holding[k] = true
		}
	}
	if checked == 0 {
		t.Fatal("no app file to check")
	}
	for k := range entries {
		if !holding[k] {
			t.Errorf("%s holds no JSON any more (or is gone): take it off appJSON", k)
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
