package reject

import (
	"errors"
	"fmt"
	"testing"
)

type rejection struct{ levee bool }

func (r *rejection) Error() string        { return "rejected" }
func (r *rejection) LeveeRejection() bool { return r.levee }

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
