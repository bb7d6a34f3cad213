// Package integration finds the programs that integration tests run for real (redis-server, a
// headless Chromium) and records the tests it skips for want of one, so that the repository's
// test command, ./test.sh, can list them after the run: `go test` prints the output of a package
// whose tests pass only under -v, so a skip is otherwise silent.
//
// A test that needs a program calls Program. When the program is on PATH, Program returns its
// path. When it is not, Program skips the test, or fails it when the environment variable CI is
// set (CI installs every program, so there a skip would hide a test that never ran).
//
// A skipped test leaves a record in the directory named by LEVEE_SKIPPED_DIR, when set (./test.sh
// sets it): one file per test, holding its package, its name and the reason, removed the next
// time the test finds its program. The record outlives the run on purpose: when `go test`
// replays a package's cached result, the test does not run again, and the record of the run
// whose result it replays is still the one that holds.
package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// SkippedDirEnv names the environment variable holding the directory of skip records.
const SkippedDirEnv = "LEVEE_SKIPPED_DIR"

// Program returns the path of the first of names found on PATH. When none is, it skips t with
// "<names[0]> not on PATH (<install>)", recording the skip (see the package doc), or, when the
// environment variable CI is set, fails t. install says how to install the program, such as
// "apt-get install -y redis-server".
func Program(t testing.TB, install string, names ...string) string {
	t.Helper()
	pkg := callerPackage()
	record := recordFile(pkg, t.Name())
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			if record != "" {
				_ = os.Remove(record)
			}
			return p
		}
	}
	reason := names[0] + " not on PATH (" + install + ")"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s, and CI is set: this test must run", reason)
		return ""
	}
	if record != "" {
		line := pkg + "\t" + t.Name() + "\t" + reason + "\n"
		if err := os.WriteFile(record, []byte(line), 0o644); err != nil {
			t.Logf("integration: recording the skip: %v", err)
		}
	}
	t.Skip(reason)
	return ""
}

// recordFile is the path of the skip record of the test named name in package pkg, or "" when
// LEVEE_SKIPPED_DIR is unset.
func recordFile(pkg, name string) string {
	dir := os.Getenv(SkippedDirEnv)
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(pkg + "\x00" + name))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".skip")
}

// callerPackage is the import path of the package that called Program (an external test
// package's "_test" dropped).
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2) // 0: callerPackage, 1: Program, 2: its caller
	if !ok {
		return "unknown"
	}
	pkg := funcPackage(runtime.FuncForPC(pc).Name())
	if pkg == "" {
		return "unknown"
	}
	return strings.TrimSuffix(pkg, "_test")
}

// funcPackage is the import path in a function's full name, such as
// "github.com/levee-go/levee/leveeredis.startRedis.func1".
func funcPackage(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}
