package leveegrpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind. Every test stops its grpc.Server and
// closes its grpc.ClientConn in its cleanup, and gRPC's transport goroutines end shortly after
// (the reader of a closed connection returns once the socket's close is seen);
// VerifyTestMain retries for a while before it reports, which covers that interval, so no
// goroutine is ignored.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
