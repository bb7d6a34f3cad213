package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeT records what Program asks of its test instead of ending it.
type fakeT struct {
	testing.TB
	name           string
	skipped, fatal string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Name() string                      { return f.name }
func (f *fakeT) Skip(args ...any)                  { f.skipped = fmt.Sprint(args...) }
func (f *fakeT) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeT) Logf(format string, args ...any)   { f.fatal = "log: " + fmt.Sprintf(format, args...) }

func records(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.skip"))
	require.NoError(t, err)
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	return lines
}

// A missing program skips the test and records it; found later, it removes the record.
func TestProgramRecordsASkipUntilTheProgramIsFound(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	t.Setenv(SkippedDirEnv, dir)
	t.Setenv("CI", "")
	t.Setenv("PATH", bin)

	ft := &fakeT{name: "TestRedis/sub"}
	assert.Empty(t, Program(ft, "apt-get install -y redis-server", "redis-server"))
	assert.Equal(t, "redis-server not on PATH (apt-get install -y redis-server)", ft.skipped)
	assert.Empty(t, ft.fatal)
	assert.Equal(t, []string{"github.com/levee-go/levee/internal/integration\tTestRedis/sub\t" +
		"redis-server not on PATH (apt-get install -y redis-server)\n"}, records(t, dir))

	other := &fakeT{name: "TestOther"}
	Program(other, "apt-get install -y chromium", "chromium", "google-chrome")
	assert.Equal(t, "chromium not on PATH (apt-get install -y chromium)", other.skipped)
	assert.Len(t, records(t, dir), 2)

	exe := filepath.Join(bin, "google-chrome")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	found := &fakeT{name: "TestOther"}
	assert.Equal(t, exe, Program(found, "apt-get install -y chromium", "chromium", "google-chrome"))
	assert.Empty(t, found.skipped)
	assert.Equal(t, []string{"github.com/levee-go/levee/internal/integration\tTestRedis/sub\t" +
		"redis-server not on PATH (apt-get install -y redis-server)\n"}, records(t, dir),
		"TestOther found its program: its record is gone, TestRedis's stays")
}

// Under CI the test fails instead, and leaves no record.
func TestProgramFailsUnderCI(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SkippedDirEnv, dir)
	t.Setenv("CI", "true")
	t.Setenv("PATH", t.TempDir())

	ft := &fakeT{name: "TestRedis"}
	Program(ft, "apt-get install -y redis-server", "redis-server")
	assert.Equal(t, "redis-server not on PATH (apt-get install -y redis-server), and CI is set: this test must run", ft.fatal)
	assert.Empty(t, records(t, dir))
}

// Without LEVEE_SKIPPED_DIR a skip is only a skip.
func TestProgramWithoutRecordDirectory(t *testing.T) {
	t.Setenv(SkippedDirEnv, "")
	t.Setenv("CI", "")
	t.Setenv("PATH", t.TempDir())
	ft := &fakeT{name: "TestRedis"}
	Program(ft, "apt-get install -y redis-server", "redis-server")
	assert.Equal(t, "redis-server not on PATH (apt-get install -y redis-server)", ft.skipped)
	assert.Empty(t, ft.fatal)
}

func TestFuncPackage(t *testing.T) {
	assert.Equal(t, "github.com/levee-go/levee/leveeredis", funcPackage("github.com/levee-go/levee/leveeredis.startRedis.func1"))
	assert.Equal(t, "github.com/levee-go/levee/leveeredis_test", funcPackage("github.com/levee-go/levee/leveeredis_test.TestX"))
	assert.Equal(t, "main", funcPackage("main.main"))
	assert.Empty(t, funcPackage("nodot"))
}
