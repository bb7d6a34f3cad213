package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/fallback"
)

// The property test builds random error trees and random handler lists, and checks the
// Fallback against a small model that knows, from the tree's construction alone (never by
// calling errors.Is or errors.As), what each link is.

const nSentinels = 3

var propSentinels = [nSentinels]error{errors.New("s0"), errors.New("s1"), errors.New("s2")}

type ifaceX interface {
	error
	X()
}

type propA struct{ child error } // an A and an X; wraps one error

func (e *propA) Error() string { return "A" }
func (e *propA) Unwrap() error { return e.child }
func (e *propA) X()            {}

type propB struct{ kids []error } // a B; wraps several

func (e *propB) Error() string   { return "B" }
func (e *propB) Unwrap() []error { return e.kids }

type propC struct { // a C that claims, through Is, to be sentinel k
	k     int
	child error
}

func (e *propC) Error() string        { return "C" }
func (e *propC) Is(target error) bool { return target == propSentinels[e.k] }
func (e *propC) Unwrap() error        { return e.child }

type propD struct { // becomes its inner A through As (but not an X)
	inner *propA
	child error
}

func (e *propD) Error() string { return "D" }
func (e *propD) Unwrap() error { return e.child }
func (e *propD) As(target any) bool {
	if p, ok := target.(**propA); ok {
		*p = e.inner
		return true
	}
	return false
}

// Node kinds of the model tree.
const (
	nSentinel = iota
	nA
	nB
	nC
	nD
	nWrap
	nJoin
	nKinds
)

type node struct {
	kind  int
	k     int // sentinel index for nSentinel and nC
	kids  []*node
	err   error  // the error built for this node
	inner *propA // for nD: what As yields
}

func genNode(t *rapid.T, depth int) *node {
	kind := nSentinel
	if depth < 4 {
		kind = rapid.IntRange(0, nKinds-1).Draw(t, "kind")
	}
	n := &node{kind: kind, k: rapid.IntRange(0, nSentinels-1).Draw(t, "k")}
	switch kind {
	case nA, nC, nD, nWrap:
		if kind == nWrap || rapid.Bool().Draw(t, "hasChild") {
			n.kids = []*node{genNode(t, depth+1)}
		}
	case nB, nJoin:
		for range rapid.IntRange(1, 3).Draw(t, "kids") {
			n.kids = append(n.kids, genNode(t, depth+1))
		}
	}
	return n
}

func (n *node) build() error {
	var kids []error
	for _, c := range n.kids {
		kids = append(kids, c.build())
	}
	var child error
	if len(kids) > 0 {
		child = kids[0]
	}
	switch n.kind {
	case nSentinel:
		n.err = propSentinels[n.k]
	case nA:
		n.err = &propA{child: child}
	case nB:
		n.err = &propB{kids: kids}
	case nC:
		n.err = &propC{k: n.k, child: child}
	case nD:
		n.inner = &propA{}
		n.err = &propD{inner: n.inner, child: child}
	case nWrap:
		n.err = fmt.Errorf("w: %w", child)
	case nJoin:
		n.err = errors.Join(kids...)
	}
	return n.err
}

// Handler specs of the model: 0..2 OnError(sentinel k), then the types, then the catch-all.
const (
	hTypeA = nSentinels + iota
	hTypeB
	hTypeC
	hTypeX
	hAny
	hSpecs
)

// is reports the link (what the handler receives, for a type) when node n, on its own, is
// what spec s handles; the model's knowledge of the tree.
func (n *node) is(s int) (error, bool) {
	switch {
	case s < nSentinels:
		return n.err, (n.kind == nSentinel || n.kind == nC) && n.k == s
	case s == hTypeA:
		if n.kind == nD {
			return n.inner, true
		}
		return n.err, n.kind == nA
	case s == hTypeB:
		return n.err, n.kind == nB
	case s == hTypeC:
		return n.err, n.kind == nC
	case s == hTypeX:
		return n.err, n.kind == nA
	}
	return nil, false
}

// choose is the model of closest match: pre-order over the tree, the first node any spec
// handles, and among the specs the first listed.
func (n *node) choose(specs []int) (int, error) {
	for _, s := range specs {
		if link, ok := n.is(s); ok {
			return s, link
		}
	}
	for _, c := range n.kids {
		if s, link := c.choose(specs); s >= 0 {
			return s, link
		}
	}
	return -1, nil
}

// conflict is the model of New's refusals: the first handler that duplicates, or is shadowed
// by, one listed before it.
func conflict(specs []int) (string, bool) {
	for i, s := range specs {
		for j, p := range specs[:i] {
			switch {
			case p == s && s == hAny:
				return fmt.Sprintf("handlers %d and %d are both catch-alls", j, i), true
			case p == s:
				return fmt.Sprintf("handlers %d and %d both handle", j, i), true
			case p == hTypeX && s == hTypeA:
				return fmt.Sprintf("handler %d (type *fallback_test.propA) is shadowed by handler %d", i, j), true
			}
		}
	}
	return "", false
}

type received struct {
	spec int
	err  error
}

func TestPropertyFallbackMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs := rapid.SliceOfN(rapid.IntRange(0, hSpecs-1), 1, 6).Draw(t, "specs")
		fails := rapid.SliceOfN(rapid.Bool(), len(specs), len(specs)).Draw(t, "fails")

		var got received
		var hs []fallback.Handler[int]
		for i, s := range specs {
			fail := fails[i]
			h := func(_ context.Context, err error) (int, error) {
				got = received{s, err}
				if fail {
					return 0, fmt.Errorf("handler %d failed", s)
				}
				return 100 + s, nil
			}
			switch {
			case s < nSentinels:
				hs = append(hs, fallback.OnError(propSentinels[s], h))
			case s == hTypeA:
				hs = append(hs, fallback.OnType(func(ctx context.Context, e *propA) (int, error) { return h(ctx, e) }))
			case s == hTypeB:
				hs = append(hs, fallback.OnType(func(ctx context.Context, e *propB) (int, error) { return h(ctx, e) }))
			case s == hTypeC:
				hs = append(hs, fallback.OnType(func(ctx context.Context, e *propC) (int, error) { return h(ctx, e) }))
			case s == hTypeX:
				hs = append(hs, fallback.OnType(func(ctx context.Context, e ifaceX) (int, error) { return h(ctx, e) }))
			case s == hAny:
				hs = append(hs, fallback.OnAny(h))
			}
		}
		f, err := fallback.New("p", hs...)
		if want, refused := conflict(specs); refused {
			require.Error(t, err)
			require.Contains(t, err.Error(), want)
			return
		}
		require.NoError(t, err)
		errSpecs := slices.DeleteFunc(slices.Clone(specs), func(s int) bool { return s == hAny })
		failOf := map[int]bool{}
		for i, s := range specs {
			failOf[s] = fails[i]
		}

		var want fallback.Metrics
		for range rapid.IntRange(1, 20).Draw(t, "calls") {
			if rapid.Bool().Draw(t, "success") {
				v, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) (int, error) { return 7, nil })
				require.NoError(t, err)
				require.Equal(t, 7, v)
				require.False(t, out.Fallback)
				continue
			}
			tree := genNode(t, 0)
			cause := tree.build()
			got = received{-1, nil}
			v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[int](cause))

			spec, link := tree.choose(errSpecs)
			if spec < 0 && slices.Contains(specs, hAny) {
				spec, link = hAny, cause
			}
			switch {
			case spec < 0:
				want.NumberOfUnhandledErrors++
				require.True(t, err == cause, "want the cause unchanged, got %v", err)
				require.Equal(t, -1, got.spec, "no handler may run")
				// The stdlib agrees that nothing in the chain matches.
				for _, s := range specs {
					if s < nSentinels {
						require.False(t, errors.Is(cause, propSentinels[s]))
					}
				}
				continue
			case spec < nSentinels || spec == hAny:
				link = cause // sentinel handlers and the catch-all receive the whole error
			}
			require.Equal(t, spec, got.spec, "chosen handler")
			require.True(t, got.err == link, "handler %d received %v, want %v", spec, got.err, link)
			if spec < nSentinels {
				require.True(t, errors.Is(cause, propSentinels[spec]), "errors.Is disagrees")
			}
			if failOf[spec] {
				want.NumberOfFailedFallbacks++
				var fe *fallback.Error
				require.ErrorAs(t, err, &fe)
				require.True(t, fe.Cause == cause)
				require.False(t, out.Fallback)
			} else {
				want.NumberOfFallbackAnswers++
				require.NoError(t, err)
				require.Equal(t, 100+spec, v)
				require.Equal(t, fallback.Outcome{Fallback: true, Cause: cause}, out)
			}
		}
		require.Equal(t, want, f.Metrics())
	})
}
