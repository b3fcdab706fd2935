package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// goPackage is the part of `go list -json` the layering rules read.
type goPackage struct {
	ImportPath string
	Deps       []string // every package it depends on, directly or not
	Imports    []string // the packages its non-test files import directly
	// TestImports and XTestImports are what its tests import directly.
	TestImports, XTestImports []string
}

// listPackages runs `go list -json` over the module's packages (their
// non-test dependencies, as linked into the binary).
func listPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	pkgs := map[string]goPackage{}
	for _, p := range goList[goPackage](t, "-json=ImportPath,Deps,Imports,TestImports,XTestImports", "./...") {
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// goList runs `go list` with args, which ask for JSON, and decodes each
// package it prints as a T.
func goList[T any](t *testing.T, args ...string) []T {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []T
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p T
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// The engines that run their models through engine/infer (and the
// export-reference replay, which opens models with an infer.Opener it is
// given), the loaders that open those models in ONNX Runtime, and the
// runtime itself.
var (
	runtimeFree    = []string{"vetlens/engine/cardiac", "vetlens/engine/usg", "vetlens/engine/pop", "vetlens/engine/modelref"}
	runtimeLoaders = []string{"vetlens/engine/cardiac/cardiacort", "vetlens/engine/usg/usgort", "vetlens/engine/pop/poport"}
	modelRuntime   = []string{"vetlens/engine/ort", "github.com/yalue/onnxruntime_go"}
)

// under reports whether path is pkg or one of its subpackages.
func under(path, pkg string) bool { return path == pkg || strings.HasPrefix(path, pkg+"/") }

// apperr is the leaf every layer may import: the use-case error kinds.
const apperr = "vetlens/app/apperr"

// TestLayering checks the direction of calls (README, Architecture):
//
//   - engine/... (the measurement engines) depends on nothing of api,
//     app, platform, ui or cli;
//   - api (the specs' wire layer: bodies, parsers, codes, the status
//     table) depends on nothing of app, platform, ui or cli, but for
//     app/apperr, the leaf that names the use-case error kinds;
//   - app/apperr is a leaf: it depends on no package of the module;
//   - neither engine nor app links net/http: HTTP is the adapter's, and
//     statuses the wire layer's (api);
//   - app and its subpackages (the domain, its use cases and ports)
//     depend on no platform package (adapters plug into app's ports);
//   - ui and the HTTP adapter reach storage only through app: they do not
//     depend on platform/store;
//   - ui calls app only: it imports no engine package directly (model
//     info, span checks, landmark arithmetic, correction chains and the
//     values it shows come through app); it still links engine through
//     app, so this rule reads ui's own imports, not its dependencies;
//   - the product binary (package main) links no bench tooling (the
//     screenshot driver and its XWD decoder live in bench/screenshots);
//   - bench/evalcardiac does not link cli, ui or Fyne;
//   - the engines' types, geometry, guards and decisions (engine/cardiac,
//     engine/usg, engine/pop) and the export-reference replay
//     (engine/modelref) link no model runtime: their models run through
//     engine/infer's Session, and a loader beside each
//     (engine/cardiac/cardiacort, engine/usg/usgort, engine/pop/poport)
//     opens them in ONNX Runtime;
//   - app and engine hold no wire JSON: no file of app or engine (or
//     their subpackages) imports encoding/json or tags a struct field
//     with json, but for the storage and learning encodings (appJSON) and
//     the model files and test data the engines read (engineJSON), each
//     named with its reason in wirejson_test.go, lists that only shrink;
//   - ui, app (and its subpackages) and the HTTP adapter link no model
//     runtime at all: neither those loaders nor engine/ort nor
//     onnxruntime_go. The command line (and bench, and tests) load the
//     engines and hand them in, with an infer.Opener where app opens a
//     model itself (app/learn's reference check).
//
// Dependencies are transitive and exclude tests, as `go list -deps`
// shows them, but for the rules marked direct, which read the package's
// own imports (`go list`'s Imports, tests excluded). TestArrowsPointDown adds the rules on engine's own
// imports, tests included.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	// The listing must be the real graph: the composition root (cli)
	// links the store, and each rule has packages to check.
	if !contains(pkgs["vetlens/cli"].Deps, "vetlens/platform/store") {
		t.Fatalf("go list gave no dependency graph: cli deps %v", pkgs["vetlens/cli"].Deps)
	}
	// The runtime rules name packages that must exist: each loader links
	// ONNX Runtime, and cli links each loader.
	for _, p := range runtimeFree {
		if _, ok := pkgs[p]; !ok {
			t.Fatalf("no package %s: the runtime rules check nothing", p)
		}
	}
	for _, l := range runtimeLoaders {
		if !contains(pkgs[l].Deps, "github.com/yalue/onnxruntime_go") || !contains(pkgs["vetlens/cli"].Deps, l) {
			t.Fatalf("%s does not link ONNX Runtime, or cli does not link it: the runtime rules check nothing", l)
		}
	}
	type rule struct {
		name      string
		from      func(string) bool
		forbidden []string
	}
	rules := []rule{
		{"engine depends on nothing above it", func(p string) bool { return under(p, "vetlens/engine") },
			[]string{"vetlens/api", "vetlens/app", "vetlens/platform", "vetlens/ui", "vetlens/cli"}},
		{"the wire layer depends on the engines' types and the error kinds only", func(p string) bool { return under(p, "vetlens/api") },
			[]string{"vetlens/app", "vetlens/platform", "vetlens/ui", "vetlens/cli"}},
		{"the error kinds are a leaf", func(p string) bool { return p == apperr },
			[]string{"vetlens"}},
		{"engine and app do not link net/http", func(p string) bool { return under(p, "vetlens/engine") || under(p, "vetlens/app") },
			[]string{"net/http"}},
		{"app depends on no platform package", func(p string) bool { return under(p, "vetlens/app") },
			[]string{"vetlens/platform"}},
		{"ui and the HTTP adapter do not depend on the store", func(p string) bool { return p == "vetlens/ui" || p == "vetlens/platform/httpapi" },
			[]string{"vetlens/platform/store"}},
		{"the product binary links no test or bench tooling", func(p string) bool { return p == "vetlens" },
			[]string{"vetlens/bench", "vetlens/engine/testmodels"}},
		{"the engine evaluation tool does not link the command line or the GUI", func(p string) bool { return p == "vetlens/bench/evalcardiac" },
			[]string{"vetlens/cli", "vetlens/ui", "fyne.io"}},
		{"the engines and the reference replay link no model runtime", func(p string) bool { return slices.Contains(runtimeFree, p) },
			modelRuntime},
		{"ui, app and the HTTP adapter link no model runtime", func(p string) bool {
			return under(p, "vetlens/ui") || under(p, "vetlens/app") || p == "vetlens/platform/httpapi"
		}, slices.Concat(runtimeLoaders, modelRuntime)},
	}
	// The direct rules: the package's own imports.
	direct := []rule{
		{"ui imports no engine package: it calls app only", func(p string) bool { return under(p, "vetlens/ui") },
			[]string{"vetlens/engine"}},
	}
	t.Run("app holds no wire JSON", checkAppHoldsNoWireJSON)
	t.Run("engine holds no wire JSON", checkEngineHoldsNoWireJSON)
	for i, r := range slices.Concat(rules, direct) {
		t.Run(r.name, func(t *testing.T) {
			checked := 0
			for path, p := range pkgs {
				if !r.from(path) {
					continue
				}
				checked++
				deps, verb := p.Deps, "depends on"
				if i >= len(rules) {
					deps, verb = p.Imports, "imports"
				}
				for _, d := range deps {
					for _, f := range r.forbidden {
						if under(d, f) && d != apperr {
							t.Errorf("%s %s %s", path, verb, d)
						}
					}
				}
			}
			if checked == 0 {
				t.Fatal("no package to check")
			}
		})
	}
}

// TestArrowsPointDown checks that no arrow runs back into engine:
//
//   - every package of the module outside engine that engine depends on,
//     in its code or in its tests (internal/errs, internal/stats,
//     internal/config, the test fixtures ...), depends on nothing of
//     engine, so engine sits on leaves and no folder is both above and
//     below it;
//   - internal/ holds leaves only: no package under internal/ imports,
//     in its code or in its tests, a package of the module outside
//     internal/ (so none depends on engine, app or anything above).
//     What uses engine lives beside its users: the DogHeart/CCK format in
//     app/dogheart, the shipped-model loader for tests in
//     engine/testmodels (issue 44, "Arrows point down").
func TestArrowsPointDown(t *testing.T) {
	pkgs := listPackages(t)
	const engine = "vetlens/engine"
	dependsOnEngine := func(path string) (string, bool) {
		for _, d := range pkgs[path].Deps {
			if under(d, engine) {
				return d, true
			}
		}
		return "", false
	}
	t.Run("what engine imports does not import engine", func(t *testing.T) {
		checked := 0
		for path, p := range pkgs {
			if !under(path, engine) {
				continue
			}
			for _, d := range slices.Concat(p.Deps, p.TestImports, p.XTestImports) {
				if !under(d, "vetlens") || under(d, engine) {
					continue
				}
				checked++
				if e, ok := dependsOnEngine(d); ok {
					t.Errorf("%s (or its tests) imports %s, which depends on %s", path, d, e)
				}
			}
		}
		if checked == 0 {
			t.Fatal("engine imports nothing of the module: no package to check")
		}
	})
	t.Run("internal holds leaves only", func(t *testing.T) {
		checked := 0
		for path, p := range pkgs {
			if !under(path, "vetlens/internal") {
				continue
			}
			checked++
			for _, d := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				if under(d, "vetlens") && !under(d, "vetlens/internal") {
					t.Errorf("%s (or its tests) imports %s: internal/ holds leaves only; move it beside its users", path, d)
				}
			}
		}
		if checked == 0 {
			t.Fatal("no package under internal/ to check")
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
