package levee_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floors is levee's layout, from the ground up, as the design document's "Layout" table gives
// it: every import of a package's non-test code points down a floor or stays on its own.
// Entries are package paths relative to github.com/levee-go/levee ("" is the root package);
// one ending in "/..." covers every package under it, and the longest entry that covers a
// package places it. A package the table does not place fails the test: a new package is
// given its floor here.
var floors = []struct {
	name     string
	packages []string
}{
	// internal helpers that know no pattern: panics, events, error matching, logging, channels.
	{"ground", []string{"internal/..."}},
	// each stands alone.
	{"patterns", []string{"circuitbreaker", "retry", "bulkhead", "ratelimiter", "timelimiter",
		"fallback", "adaptive", "chaos", "throttle", "priority"}},
	// Compose[T]().With…(), DefaultPipeline, Patterns, keyed; internal/compose is the chain
	// behind levee.Pipeline, which the engines reach by converting a *levee.Pipeline[T].
	{"composition", []string{"", "keyed", "internal/compose"}},
	// the per-element engine (one for channels and rxgo), stream, async.
	{"engines", []string{"internal/engine", "stream", "async"}},
	// internal/leveefixture fills a registry for the exporters' golden tests.
	{"edges", []string{"leveehttp", "leveestatus", "registry", "leveetest", "internal/leveefixture"}},
	// modules of their own, and the programs of examples/, which nothing imports.
	{"modules", []string{"operators/...", "leveeconfig/...", "leveeprom/...", "leveeotel/...",
		"leveegrpc/...", "leveeredis/...", "bench/...", "examples/..."}},
}

const modulePath = "github.com/levee-go/levee"

// floorOf returns the index in floors of the floor of the levee package path, or an error
// when the table does not place it.
func floorOf(path string) (int, error) {
	rel, ok := strings.CutPrefix(path, modulePath)
	if !ok || rel != "" && rel[0] != '/' {
		return 0, fmt.Errorf("%s is not a package of levee", path)
	}
	rel = strings.TrimPrefix(rel, "/")
	best, bestLen := -1, -1
	for i, f := range floors {
		for _, p := range f.packages {
			switch {
			case p == rel && len(p) > bestLen:
				best, bestLen = i, len(p)
			case strings.HasSuffix(p, "/..."):
				dir := strings.TrimSuffix(p, "/...")
				if (rel == dir || strings.HasPrefix(rel, dir+"/")) && len(dir) > bestLen {
					best, bestLen = i, len(dir)
				}
			}
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("%s has no floor: add it to the floors table of layout_test.go and to the design document's", path)
	}
	return best, nil
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Module     *struct{ Path string }
}

// listModule returns the packages of the module in dir, as `go list -json ./...` run there
// gives them.
func listModule(t *testing.T, dir string) []listed {
	t.Helper()
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the packages whose imports are checked")
	cmd := exec.Command(gobin, "list", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list in %s: %s", dir, stderr.String())
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// The packages of the core module and of the operators module import only packages on their
// own floor or below, and none registers anything at init time: their non-test code declares
// no func init (state a package needs is a variable's initialiser, and a hook from one floor
// to another is an import pointing down).
func TestLayoutFloors(t *testing.T) {
	var pkgs []listed
	for _, m := range []struct{ dir, path string }{{".", modulePath}, {"operators", modulePath + "/operators"}} {
		ps := listModule(t, m.dir)
		var mine []listed
		for _, p := range ps {
			if p.Module != nil && p.Module.Path == m.path {
				mine = append(mine, p)
			}
		}
		require.NotEmpty(t, mine, "go list in %s lists no package of %s", m.dir, m.path)
		pkgs = append(pkgs, mine...)
	}

	var upward, unplaced, inits []string
	for _, p := range pkgs {
		from, err := floorOf(p.ImportPath)
		if err != nil {
			unplaced = append(unplaced, err.Error())
			continue
		}
		for _, imp := range p.Imports {
			if imp != modulePath && !strings.HasPrefix(imp, modulePath+"/") {
				continue // the standard library or a third party
			}
			to, err := floorOf(imp)
			if err != nil {
				unplaced = append(unplaced, err.Error())
				continue
			}
			if to > from {
				upward = append(upward, fmt.Sprintf("%s (%s) imports %s (%s)",
					p.ImportPath, floors[from].name, imp, floors[to].name))
			}
		}
		for _, f := range append(append([]string(nil), p.GoFiles...), p.CgoFiles...) {
			name := filepath.Join(p.Dir, f)
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, line := range funcInits(fset, file) {
				inits = append(inits, fmt.Sprintf("%s:%d: func init", name, line))
			}
		}
	}
	sort.Strings(unplaced)
	assert.Empty(t, unplaced, "packages without a floor")
	assert.Empty(t, upward, "imports pointing up a floor")
	assert.Empty(t, inits, "non-test code registering at init time")
}

// funcInits returns the lines of the func init declarations of file.
func funcInits(fset *token.FileSet, file *ast.File) []int {
	var lines []int
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
			lines = append(lines, fset.Position(fn.Pos()).Line)
		}
	}
	return lines
}

// The floors table places each package as the design document does, the most specific entry
// winning, and refuses a package it does not know.
func TestLayoutFloorOf(t *testing.T) {
	for path, want := range map[string]string{
		modulePath:                               "composition",
		modulePath + "/internal/safe":            "ground",
		modulePath + "/internal/logging/logtest": "ground",
		modulePath + "/internal/compose":         "composition",
		modulePath + "/internal/engine":          "engines",
		modulePath + "/circuitbreaker":           "patterns",
		modulePath + "/keyed":                    "composition",
		modulePath + "/stream":                   "engines",
		modulePath + "/async":                    "engines",
		modulePath + "/leveehttp":                "edges",
		modulePath + "/internal/leveefixture":    "edges",
		modulePath + "/operators":                "modules",
		modulePath + "/operators/examples/rx":    "modules",
		modulePath + "/examples/quickstart":      "modules",
	} {
		i, err := floorOf(path)
		require.NoError(t, err, path)
		assert.Equal(t, want, floors[i].name, path)
	}
	_, err := floorOf(modulePath + "/newpattern")
	assert.ErrorContains(t, err, "newpattern has no floor")
	_, err = floorOf("github.com/levee-go/leveefork")
	assert.ErrorContains(t, err, "is not a package of levee")
}
