package reject

import (
	"errors"
	"fmt"
	"testing"

	"github.com/levee-go/levee/internal/safe"
)

type rejection struct{ levee bool }

func (r *rejection) Error() string        { return "rejected" }
func (r *rejection) LeveeRejection() bool { return r.levee }

// asRejection yields r through an As method, as errors.As allows.
type asRejection struct{ r *rejection }

func (a asRejection) Error() string { return "as" }
func (a asRejection) As(target any) bool {
	if p, ok := target.(*Rejection); ok && a.r != nil {
		*p = a.r
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
		{"joined rejection", errors.Join(errors.New("boom"), yes), true},
		{"rejection that disowns itself", no, false},
		{"first match decides", fmt.Errorf("%w, %w", no, yes), false},
		{"rejection after a plain error in a join", errors.Join(errors.New("a"), fmt.Errorf("b: %w", yes)), true},
		{"rejection yielded by an As method", asRejection{yes}, true},
		{"As method that yields nothing", asRejection{nil}, false},
		{"typed nil chain", fmt.Errorf("x: %w", error(nil)), false},
		{"panic with a rejection", safe.NewPanicError(yes), false},
		{"wrapped panic with a rejection", fmt.Errorf("call: %w", safe.NewPanicError(yes)), false},
		{"rejection joined before a panic", errors.Join(yes, safe.NewPanicError(errors.New("x"))), true},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("%s: Is = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// Breakers and retries classify every failure with Is: it must not allocate.
func TestIsAllocatesNothing(t *testing.T) {
	errs := []error{errors.New("boom"), fmt.Errorf("call: %w", &rejection{levee: true})}
	for _, err := range errs {
		if n := testing.AllocsPerRun(100, func() { Is(err) }); n != 0 {
			t.Errorf("Is(%v) allocates %v times", err, n)
		}
	}
}
