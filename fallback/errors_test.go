package fallback_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/fallback"
)

// panickyIsError is an error whose Is method panics, as a typed-nil receiver's can.
type panickyIsError struct{}

func (*panickyIsError) Error() string { return "panicky" }
func (*panickyIsError) Is(error) bool { panic("Is bug") }

// Printing a fallback Error never panics, even when the handler's error has an Is method that
// does.
func TestErrorStringSurvivesAnIsMethodThatPanics(t *testing.T) {
	e := &fallback.Error{Name: "fb", Cause: errors.New("cause"), Err: &panickyIsError{}}
	assert.Equal(t, `fallback "fb": panicky (cause: cause)`, e.Error())
}
