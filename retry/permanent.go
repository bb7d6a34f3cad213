package retry

// Permanent marks err as not worth retrying, whatever the Config's lists and predicates say,
// as cenkalti/backoff's Permanent and failsafe-go's AbortOn: a call whose attempt returns
// Permanent(err) stops at once and ends with err itself, the mark removed. It is counted as a
// failed call without retry and published as an IGNORED_ERROR, as an error IgnoreErrors lists
// (IgnoreErrors is the way to name such errors in the Config rather than at the call site).
//
// The mark wins over RetryErrors, RetryOnErrorPredicate and RetryRejections; it is checked
// before them, so they never see a marked error. When the attempt returns the mark wrapped in
// another error (fmt.Errorf("charge: %w", retry.Permanent(err))), the call still stops at once
// and ends with that outer error unchanged; errors.Is and errors.As find err through it.
//
// Permanent(nil) is nil, and marking an error twice marks it once. The marked error's Error is
// err's, and Unwrap returns err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	if p, ok := err.(*permanentError); ok {
		return p
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// unmarkPermanent reports whether err carries the mark of Permanent, and returns the error the
// call ends with: err without the mark when err is the mark itself, else err unchanged.
func unmarkPermanent(err error) (error, bool) {
	if p, ok := err.(*permanentError); ok {
		return p.err, true
	}
	return err, hasPermanent(err)
}

// hasPermanent walks the tree of err as errors.As does, looking for the mark by its type. It
// calls Unwrap methods but no Is or As method, and allocates nothing.
func hasPermanent(err error) bool {
	for err != nil {
		if _, ok := err.(*permanentError); ok {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if hasPermanent(e) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
