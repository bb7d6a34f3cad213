package leveeredis_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if code := faultChild(); code >= 0 { // a process of the fault run
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
