package leveeredis

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
)

// Counters of the default replica ids handed out in this process, one per kind of object, so
// that several limiters (or breakers) of one process are distinct replicas.
var limiterSeq, breakerSeq atomic.Uint64

// defaultReplicaID returns "<host name>:<pid>", then "<host name>:<pid>/2", "/3" ... for each
// later call with the same counter. Characters of the host name outside the allowed set are
// replaced by '-'.
func defaultReplicaID(seq *atomic.Uint64) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	b := []byte(host)
	for i, ch := range b {
		if !replicaIDChar(ch) {
			b[i] = '-'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	id := string(b) + ":" + strconv.Itoa(os.Getpid())
	if n := seq.Add(1); n > 1 {
		id += "/" + strconv.FormatUint(n, 10)
	}
	return id
}

func replicaIDChar(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
		ch == '.' || ch == '_' || ch == ':' || ch == '/' || ch == '@' || ch == '-'
}

// checkReplicaID refuses an id that could not be recorded unambiguously.
func checkReplicaID(id string) error {
	ok := len(id) >= 1 && len(id) <= 128
	for i := 0; ok && i < len(id); i++ {
		ok = replicaIDChar(id[i])
	}
	if !ok {
		return fmt.Errorf("leveeredis: ReplicaID must be 1 to 128 characters among letters, digits and . _ : / @ -, got %q", id)
	}
	return nil
}
