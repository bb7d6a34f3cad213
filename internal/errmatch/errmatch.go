// Package errmatch classifies errors against the lists of a pattern's config
// (RecordErrors, IgnoreErrors, RetryErrors): each entry is either a sentinel value, matched as
// errors.Is, or a type marker made by Type, matched as errors.As.
package errmatch

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/levee-go/levee/internal/reject"
)

// TypeMarker is the error value Type returns: an entry of an error list that matches every
// error whose chain holds an error of the marked type.
type TypeMarker struct {
	t     reflect.Type
	match func(error) bool
	desc  string // what the marker matches, when "any error of type t" would not say it
}

func (m *TypeMarker) Error() string {
	if m.desc != "" {
		return m.desc
	}
	return fmt.Sprintf("levee: any error of type %v", m.t)
}

// anyRejection is the one marker AnyRejection returns.
var anyRejection = &TypeMarker{
	t:     reflect.TypeFor[reject.Rejection](),
	match: reject.Is,
	desc:  "levee: any rejection by a levee pattern",
}

// AnyRejection returns a marker that matches every rejection by levee's own patterns, as
// reject.Is decides.
func AnyRejection() error { return anyRejection }

// Type returns a marker that matches any error whose chain holds an E, as errors.As.
func Type[E error]() error {
	return &TypeMarker{
		t: reflect.TypeFor[E](),
		match: func(err error) bool {
			var target E
			return errors.As(err, &target)
		},
	}
}

// TypeOf returns the type a marker matches and whether err is a marker.
func TypeOf(err error) (reflect.Type, bool) {
	m, ok := err.(*TypeMarker)
	if !ok {
		return nil, false
	}
	return m.t, true
}

// List is a compiled error list. The zero value matches nothing and reports Empty.
type List struct {
	sentinels []error
	types     []*TypeMarker
}

// Compile checks and compiles entries. A nil entry is refused with an error naming field and
// its index, since it could never match anything.
func Compile(field string, entries []error) (List, error) {
	var l List
	for i, e := range entries {
		switch m := e.(type) {
		case nil:
			return List{}, fmt.Errorf("%s[%d] is nil; want a sentinel error or levee.ErrorType[E]()", field, i)
		case *TypeMarker:
			l.types = append(l.types, m)
		default:
			if typedNil(e) {
				// (*HTTPError)(nil) reads as "any *HTTPError" but as a sentinel matches only
				// that nil pointer: refuse it as nil rather than match nothing silently.
				return List{}, fmt.Errorf("%s[%d] is a nil %T; want a sentinel error or levee.ErrorType[%T]() for every error of its type", field, i, e, e)
			}
			l.sentinels = append(l.sentinels, e)
		}
	}
	return l, nil
}

// Empty reports whether the list has no entry.
func (l List) Empty() bool { return len(l.sentinels) == 0 && len(l.types) == 0 }

// Match reports whether err matches an entry: errors.Is for sentinels, errors.As for types.
func (l List) Match(err error) bool {
	if err == nil {
		return false
	}
	for _, s := range l.sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	for _, t := range l.types {
		if t.match(err) {
			return true
		}
	}
	return false
}

// Field describes one error list of a pattern's config, for CompileField: which package and
// field it is, whether it holds levee rejections or the dependency's own errors, and where an
// entry of the other kind belongs.
type Field struct {
	Package string // the pattern's package, the prefix of every error: "retry"
	Name    string // the field: "RetryErrors"
	// Rejections is set for the lists named for levee rejections (RecordRejections,
	// RetryRejections), which see nothing else.
	Rejections bool
	// Instead is the field an entry of the other kind belongs in: for a rejection list, the
	// field for the dependency's errors; for an error list, the rejection list.
	Instead string
	// Unless, when set, replaces "list it in Instead" in the refusal of a rejection by an error
	// list whose opposite is not Instead (a list of ignored errors: a rejection is already
	// ignored unless Instead lists it): "a rejection is <Unless> unless Instead lists it".
	Unless string
}

// CompileField checks and compiles the entries of one error list of a pattern's config, by the
// one rule every pattern follows: an entry is a sentinel (matched with errors.Is) or a marker
// made by Type or AnyRejection (errors.As); nil entries are refused; and a sentinel must be a
// levee rejection (reject.Is) in a list named for rejections and must not be one in any other
// list, which never sees a rejection: either mistake could never match. Every refusal names
// the package, the field, the index and, for an entry of the wrong kind, the field to use.
func CompileField(f Field, entries []error) (List, error) {
	list, err := Compile(f.Package+": "+f.Name, entries)
	if err != nil {
		return List{}, err
	}
	for i, e := range entries {
		if e == anyRejection && !f.Rejections {
			// It would never match: the list never sees a rejection.
			return List{}, fmt.Errorf("%s: %s[%d] is levee.AllRejections(), which matches only rejections "+
				"and this list never sees one; put it in %s", f.Package, f.Name, i, f.Instead)
		}
		if _, marker := TypeOf(e); marker || reject.Is(e) == f.Rejections {
			continue
		}
		switch {
		case f.Rejections:
			return List{}, fmt.Errorf("%s: %s[%d] must be a levee rejection (levee.IsRejection) "+
				"or levee.ErrorType[E](), got %q; list other errors in %s", f.Package, f.Name, i, e.Error(), f.Instead)
		case f.Unless != "":
			return List{}, fmt.Errorf("%s: %s[%d] must not be a levee rejection, got %q; "+
				"a rejection is %s unless %s lists it", f.Package, f.Name, i, e.Error(), f.Unless, f.Instead)
		default:
			return List{}, fmt.Errorf("%s: %s[%d] must not be a levee rejection, got %q; "+
				"list it in %s", f.Package, f.Name, i, e.Error(), f.Instead)
		}
	}
	return list, nil
}

// typedNil reports whether err is a non-nil interface holding a nil pointer, map, slice, func
// or channel.
func typedNil(err error) bool {
	switch v := reflect.ValueOf(err); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}
