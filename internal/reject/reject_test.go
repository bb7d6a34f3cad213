package reject

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/safe"
)

type rejection struct{ levee bool }

func (r *rejection) Error() string        { return "rejected" }
func (r *rejection) LeveeRejection() bool { return r.levee }

// translated is an error that is no Rejection itself but answers errors.As for one through its
// own As method, as an error translated from another library's would.
type translated struct{ as Rejection }

func (t translated) Error() string { return "translated" }
func (t translated) As(target any) bool {
	p, ok := target.(*Rejection)
	if ok && t.as != nil {
		*p = t.as
		return true
	}
	return false
}

func TestIs(t *testing.T) {
	yes, no := &rejection{levee: true}, &rejection{levee: false}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain error", errors.New("boom"), false},
		{"rejection", yes, true},
		{"wrapped rejection", fmt.Errorf("call: %w", yes), true},
		{"twice wrapped rejection", fmt.Errorf("a: %w", fmt.Errorf("b: %w", yes)), true},
		{"joined rejection", errors.Join(errors.New("boom"), yes), true},
		{"joined after nested join", errors.Join(errors.Join(errors.New("boom")), yes), true},
		{"rejection under a join under a wrap", fmt.Errorf("call: %w", errors.Join(nil, yes)), true},
		{"rejection that disowns itself", no, false},
		{"first match decides", fmt.Errorf("%w, %w", no, yes), false},
		{"first match decides, depth first", errors.Join(fmt.Errorf("x: %w", no), yes), false},
		{"As method answering a rejection", translated{as: yes}, true},
		{"As method answering a disowned rejection", translated{as: no}, false},
		{"As method answering nothing", fmt.Errorf("call: %w", translated{}), false},
		{"As method decides before what it wraps", fmt.Errorf("%w, %w", translated{as: no}, yes), false},
		{"rejection after a plain error in a join", errors.Join(errors.New("a"), fmt.Errorf("b: %w", yes)), true},
		{"typed nil chain", fmt.Errorf("x: %w", error(nil)), false},
		{"rejection joined before a panic", errors.Join(yes, safe.NewPanicError(errors.New("x"))), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Is(tc.err))
			// The same answer as errors.As, the rule Is follows.
			var r Rejection
			assert.Equal(t, tc.want, errors.As(tc.err, &r) && r.LeveeRejection())
		})
	}
}

// A call that panicked ran: Is does not look inside a *safe.PanicError, where errors.As would
// find the rejection the call panicked with.
func TestIsStopsAtAPanic(t *testing.T) {
	yes := &rejection{levee: true}
	for _, err := range []error{
		safe.NewPanicError(yes),
		fmt.Errorf("call: %w", safe.NewPanicError(yes)),
	} {
		assert.False(t, Is(err), "%v", err)
		var r Rejection
		assert.True(t, errors.As(err, &r), "errors.As does find it: %v", err)
	}
}

// Breakers and retries classify every failure with Is: it must not allocate.
func TestIsAllocatesNothing(t *testing.T) {
	errs := []error{
		errors.New("boom"),
		fmt.Errorf("call: %w", &rejection{levee: true}),
		errors.Join(errors.New("boom"), fmt.Errorf("call: %w", &rejection{levee: true})),
	}
	for _, err := range errs {
		assert.Zero(t, testing.AllocsPerRun(100, func() { Is(err) }), "Is(%v) allocates", err)
	}
}
