package throttle

import (
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/reject"
)

// Defaults, from Google's SRE book (K = 2, "the last two minutes").
const (
	// DefaultK is the multiplier of accepts in the rejection probability.
	DefaultK float64 = 2
	// DefaultWindow is the span of the sliding window of counts.
	DefaultWindow = 2 * time.Minute
	// DefaultWindowBuckets is the number of buckets the window is divided into.
	DefaultWindowBuckets = 20
	// MaxWindowBuckets is the largest WindowBuckets New accepts.
	MaxWindowBuckets = 1000
)

// Config configures a Throttler. The zero value of each field means its default;
// DefaultConfig returns them filled in.
type Config struct {
	// K multiplies the accepts in the rejection probability max(0, (requests − K × accepts) /
	// (requests + 1)), in [1, 1e6]: at K = 2 the client starts shedding once the backend
	// rejects more than half of what it is sent; lower K sheds sooner, higher K later.
	// Default 2.
	K float64
	// Window is the span over which requests and accepts are counted, > 0. Default 2 min.
	Window time.Duration
	// WindowBuckets is the number of buckets Window is divided into, in [1, 1000]: counts
	// leave the window a bucket (Window / WindowBuckets) at a time. Default 20.
	WindowBuckets int

	// RecordErrors are the errors that mean the backend rejected the request (overload), as
	// errors.Is sentinels or levee.ErrorType[E]() markers (errors.As); a nil entry and a levee
	// rejection, which never counts, are refused. RecordErrorPredicate, when set, decides too: an error matching
	// either is a rejection, any other error is an accepted request. With neither set, every
	// error is a rejection. A caller's own cancellation and a levee rejection by an inner
	// pattern never count.
	RecordErrors []error
	// RecordErrorPredicate reports whether err means the backend rejected the request. A
	// panicking predicate counts the error as a rejection.
	RecordErrorPredicate func(err error) bool

	// Random returns the number in [0, 1) compared with the rejection probability; a call is
	// refused when it is lower. Default math/rand/v2's Float64. It is called without any lock
	// held, so it must be safe for concurrent use. One that panics fails the call with a
	// *levee.PanicError (Acquire returns it; nothing is counted).
	Random func() float64

	// Logger, when set, receives the throttler's local refusals as log/slog records at Debug:
	// message "throttler call rejected", attributes pattern "throttle", name, event
	// "CALL_REJECTED" and err, the *ThrottledError the caller received. Nil, the default,
	// logs nothing and costs nothing.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in (Random stays nil,
// meaning math/rand/v2).
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.WindowBuckets == 0 {
		c.WindowBuckets = DefaultWindowBuckets
	}
	return c
}

func (c Config) validate() error {
	switch {
	case !(c.K >= 1) || c.K > 1e6:
		return fmt.Errorf("throttle: K must be in [1, 1e6], got %v", c.K)
	case c.Window < 0:
		return fmt.Errorf("throttle: Window must be > 0, got %v", c.Window)
	case c.WindowBuckets < 1 || c.WindowBuckets > MaxWindowBuckets:
		return fmt.Errorf("throttle: WindowBuckets must be in [1, %d], got %d", MaxWindowBuckets, c.WindowBuckets)
	case c.Window < time.Duration(c.WindowBuckets):
		return fmt.Errorf("throttle: Window must be at least WindowBuckets (%d) ns, got %v", c.WindowBuckets, c.Window)
	}
	_, err := compileRecordErrors(c.RecordErrors)
	return err
}

// compileRecordErrors checks and compiles RecordErrors by the rule of every pattern's error
// lists: each entry a sentinel (errors.Is) or a levee.ErrorType marker (errors.As), no nil
// entry, typed or not, and no levee rejection, which never counts here and so could never
// match.
func compileRecordErrors(entries []error) (errmatch.List, error) {
	for i, e := range entries {
		if e == nil {
			return errmatch.List{}, fmt.Errorf("throttle: RecordErrors[%d] is nil", i)
		}
	}
	list, err := errmatch.Compile("throttle: RecordErrors", entries)
	if err != nil {
		return errmatch.List{}, err
	}
	for i, e := range entries {
		typ, marker := errmatch.TypeOf(e)
		if marker && typ != reflect.TypeFor[reject.Rejection]() || !marker && !reject.Is(e) {
			continue
		}
		return errmatch.List{}, fmt.Errorf("throttle: RecordErrors[%d] must not be a levee rejection, got %q; "+
			"a rejection by an inner pattern never reached the backend and is never counted", i, e.Error())
	}
	return list, nil
}
