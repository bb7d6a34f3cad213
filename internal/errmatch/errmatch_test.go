package errmatch

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type httpError struct{ status int }

func (e *httpError) Error() string { return fmt.Sprintf("http %d", e.status) }

var errSentinel = errors.New("sentinel")

func TestListMatchesSentinelsAndTypes(t *testing.T) {
	l, err := Compile("RecordErrors", []error{errSentinel, Type[*httpError]()})
	require.NoError(t, err)
	assert.False(t, l.Empty())
	assert.True(t, l.Match(fmt.Errorf("wrapped: %w", errSentinel)))
	assert.True(t, l.Match(fmt.Errorf("wrapped: %w", &httpError{503})))
	assert.True(t, l.Match(errors.Join(errors.New("other"), &httpError{500})))
	assert.False(t, l.Match(errors.New("other")))
	assert.False(t, l.Match(nil))

	var empty List
	assert.True(t, empty.Empty())
	assert.False(t, empty.Match(errSentinel))
}

func TestCompileRefusesEntriesThatCanNeverMatch(t *testing.T) {
	_, err := Compile("IgnoreErrors", []error{errSentinel, nil})
	assert.EqualError(t, err, "IgnoreErrors[1] is nil; want a sentinel error or levee.ErrorType[E]()")
	_, err = Compile("RetryErrors", []error{(*httpError)(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RetryErrors[0]")
}

func TestTypeMarker(t *testing.T) {
	m := Type[*httpError]()
	typ, ok := TypeOf(m)
	assert.True(t, ok)
	assert.Equal(t, reflect.TypeFor[*httpError](), typ)
	assert.Equal(t, "levee: any error of type *errmatch.httpError", m.Error())
	_, ok = TypeOf(errSentinel)
	assert.False(t, ok)
}

// Type[error] is the catch-all entry (Java's java.lang.Exception in a configuration file):
// errors.As into an error interface matches the first error of any chain.
func TestTypeErrorMatchesEveryError(t *testing.T) {
	l, err := Compile("RecordErrors", []error{Type[error]()})
	require.NoError(t, err)
	for _, e := range []error{
		errors.New("plain"), errSentinel, &httpError{500}, fmt.Errorf("wrapped: %w", errSentinel),
		errors.Join(errors.New("a"), errors.New("b")), fmt.Errorf("no chain"),
	} {
		assert.True(t, l.Match(e), e.Error())
	}
	assert.False(t, l.Match(nil))
	typ, ok := TypeOf(Type[error]())
	require.True(t, ok)
	assert.Equal(t, reflect.TypeFor[error](), typ)
}

type rejection struct{}

func (rejection) Error() string        { return "full" }
func (rejection) LeveeRejection() bool { return true }

var errRejected error = rejection{}

// TestCompileFieldOneRule: every pattern's lists are checked by CompileField, so one table
// covers the rule and its messages.
func TestCompileFieldOneRule(t *testing.T) {
	errs := Field{Package: "p", Name: "RecordErrors", Instead: "RecordRejections"}
	ignore := Field{Package: "p", Name: "IgnoreErrors", Instead: "RecordRejections", Unless: "ignored"}
	rejections := Field{Package: "p", Name: "RecordRejections", Rejections: true, Instead: "RecordErrors"}
	tests := []struct {
		name    string
		field   Field
		entries []error
		want    string
	}{
		{"nil", errs, []error{errSentinel, nil}, "p: RecordErrors[1] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"typed nil", rejections, []error{(*httpError)(nil)},
			"p: RecordRejections[0] is a nil *errmatch.httpError; want a sentinel error or levee.ErrorType[*errmatch.httpError]() for every error of its type"},
		{"rejection in an error list", errs, []error{errSentinel, errRejected},
			`p: RecordErrors[1] must not be a levee rejection, got "full"; list it in RecordRejections`},
		{"wrapped rejection in an error list", errs, []error{fmt.Errorf("w: %w", errRejected)},
			`p: RecordErrors[0] must not be a levee rejection, got "w: full"; list it in RecordRejections`},
		{"rejection in an ignore list", ignore, []error{errRejected},
			`p: IgnoreErrors[0] must not be a levee rejection, got "full"; a rejection is ignored unless RecordRejections lists it`},
		{"every rejection in an error list", errs, []error{errSentinel, AnyRejection()},
			"p: RecordErrors[1] is levee.AllRejections(), which matches only rejections and this list never sees one; put it in RecordRejections"},
		{"every rejection in an ignore list", ignore, []error{AnyRejection()},
			"p: IgnoreErrors[0] is levee.AllRejections(), which matches only rejections and this list never sees one; put it in RecordRejections"},
		{"error in a rejection list", rejections, []error{errRejected, errSentinel},
			`p: RecordRejections[1] must be a levee rejection (levee.IsRejection) or levee.ErrorType[E](), got "sentinel"; list other errors in RecordErrors`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := CompileField(tt.field, tt.entries)
			assert.EqualError(t, err, tt.want)
			assert.True(t, l.Empty())
		})
	}

	// Type markers pass every list; a rejection list matches the rejections it names.
	l, err := CompileField(errs, []error{errSentinel, Type[*httpError]()})
	require.NoError(t, err)
	assert.True(t, l.Match(&httpError{500}))
	l, err = CompileField(rejections, []error{errRejected, Type[*httpError]()})
	require.NoError(t, err)
	assert.True(t, l.Match(fmt.Errorf("w: %w", errRejected)))
	assert.False(t, l.Match(errSentinel))
}
