package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The program is its own test: it exits 0 only when every figure it measures on the real
// loopback gateway is the one it expects, and it must leave no goroutine behind.
func TestRunChecksEveryFigure(t *testing.T) {
	if code := run(); code != 0 {
		t.Fatalf("run() = %d: a check failed (see the output above)", code)
	}
}
