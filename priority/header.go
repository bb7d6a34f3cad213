package priority

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// HeaderName is the name of the HTTP header, or gRPC metadata key, that carries a call's
// priority between services; middleware options take one. Its value is what Format writes.
type HeaderName string

// DefaultHeaderName is the header levee's middleware reads and its client adapters send
// ("levee-priority" in gRPC metadata, whose keys are lower case).
const DefaultHeaderName HeaderName = "Levee-Priority"

// Format writes a level as "<priority>/<offset>", the offset in [0, 99] within the priority's
// range: Format(337) is "high/37".
func Format(l Level) string {
	l = min(l, MaxLevel)
	return l.Priority().String() + "/" + strconv.Itoa(int(l)%LevelsPer)
}

// ParseHeader reads a header value: a priority name ("critical", drawn per call in its range)
// or a priority and an offset in it ("high/37", level 337); case and surrounding spaces do
// not matter. It returns ctx carrying what it read, or ctx unchanged and an error naming the
// value for an unknown name or an offset outside [0, 99]. An empty value leaves ctx unchanged
// without an error.
func ParseHeader(ctx context.Context, header string) (context.Context, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return orBackground(ctx), nil
	}
	name, offset, hasOffset := strings.Cut(header, "/")
	p, err := Parse(strings.TrimSpace(name))
	if err != nil {
		return orBackground(ctx), err
	}
	if !hasOffset {
		return WithPriority(ctx, p), nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(offset))
	if err != nil || n < 0 || n >= LevelsPer {
		return orBackground(ctx), fmt.Errorf("priority: level offset in %q must be in [0, %d]", header, LevelsPer-1)
	}
	return WithLevel(ctx, p.MinLevel()+Level(n)), nil
}
