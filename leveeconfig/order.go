package leveeconfig

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// javaNames are Resilience4j's names of the patterns, for the order's description.
var javaNames = map[registry.Pattern]string{
	registry.Retry:          "Retry",
	registry.CircuitBreaker: "CircuitBreaker",
	registry.RateLimiter:    "RateLimiter",
	registry.TimeLimiter:    "TimeLimiter",
	registry.Bulkhead:       "Bulkhead",
}

// DescribeOrder renders an order, outermost first, as nested calls:
// "Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))".
func DescribeOrder(order []registry.Pattern) string {
	var b strings.Builder
	for _, p := range order {
		name := javaNames[p]
		if name == "" {
			name = string(p)
		}
		b.WriteString(name + "(")
	}
	b.WriteString("call")
	b.WriteString(strings.Repeat(")", len(order)))
	return b.String()
}

// order reads the aspect-order keys: the patterns sorted by their order, lowest (outermost)
// first, as Spring's Ordered. Two equal orders (set, or one set equal to another's default)
// are refused, naming both keys: Spring sorts equal orders arbitrarily, so the pipeline
// would be whatever the bean order happened to be. Setting some of the keys but not all is
// accepted with a warning naming each key left at its default and the value it took: the
// numbers are absolute, so one key alone moves its pattern against the defaults of the others
// (Integer.MAX_VALUE-4 for Retry to Integer.MAX_VALUE for Bulkhead).
func (ps *parser) order() []registry.Pattern {
	type ord struct {
		p         registry.Pattern
		val, rank int
		set       *value
	}
	var ords []ord
	var set []*value
	for _, s := range sections {
		if s.order == "" {
			continue
		}
		o := ord{p: s.pattern, val: s.defaultOrder, rank: s.defaultOrder}
		if v := ps.sections[s.pattern].order; v != nil {
			n, err := parseInt(v.scalar)
			if err != nil {
				ps.fail(v.src, v.path, "%v", err)
			} else {
				o.val, o.set = n, v
				set = append(set, v)
			}
		}
		ords = append(ords, o)
	}
	slices.SortStableFunc(ords, func(a, b ord) int { return cmp.Or(cmp.Compare(a.val, b.val), cmp.Compare(a.rank, b.rank)) })
	out := make([]registry.Pattern, len(ords))
	for i, o := range ords {
		out[i] = o.p
	}
	for i := 1; i < len(ords); i++ {
		if a, b := ords[i-1], ords[i]; a.val == b.val && (a.set != nil || b.set != nil) {
			v := firstSet(b.set, a.set)
			ps.fail(v.src, "", "%s and %s are both %d: Spring orders equal aspect orders arbitrarily, give them different values",
				describeOrderKey(a.p, a.set), describeOrderKey(b.p, b.set), a.val)
		}
	}
	if len(set) > 0 && len(set) < len(ords) {
		slices.SortFunc(set, func(a, b *value) int { return sourceCmp(a.src, b.src) })
		var keys, defaults []string
		for _, v := range set {
			keys = append(keys, v.spec.name)
		}
		for _, s := range sections {
			if s.order != "" && ps.sections[s.pattern].order == nil {
				java := "Integer.MAX_VALUE"
				if d := lowestPrecedence - s.defaultOrder; d > 0 {
					java += "-" + strconv.Itoa(d)
				}
				defaults = append(defaults, fmt.Sprintf("%s: %d (%s)", s.order, s.defaultOrder, java))
			}
		}
		ps.warn(set[0].src, "", "only %s of the 5 aspect orders set; the others keep Spring's defaults (%s), so the order is %s",
			strings.Join(keys, ", "), strings.Join(defaults, ", "), DescribeOrder(out))
	}
	return out
}

// describeOrderKey names a pattern's aspect-order key and where it was set, or "(default)".
func describeOrderKey(p registry.Pattern, set *value) string {
	for _, s := range sections {
		if s.pattern == p {
			if set == nil {
				return s.order + " (default)"
			}
			return s.order + " (" + set.src.String() + ")"
		}
	}
	return string(p)
}

func firstSet(a, b *value) *value {
	if a != nil {
		return a
	}
	return b
}

// Pipeline builds the pipeline of the instances named name, in c's aspect order (c.Order,
// outermost first) with fb outermost, as Spring's annotations @Retry(name) @CircuitBreaker(name)
// ... on one method would: every pattern among Retry, CircuitBreaker, RateLimiter, TimeLimiter
// and Bulkhead that c declares an instance name of is taken from r with its get-or-create
// method (so r should hold c: see Apply), and the others are left out. A nil fb adds no
// fallback. It returns an error when c declares no such instance, or when r cannot make one.
//
// It is levee.DefaultPipeline when the order is the default; a worker pool is not a layer of
// a pipeline (use it with async.Submit).
func Pipeline[T any](c *Config, r *registry.Registry, name string, fb *fallback.Fallback[T]) (*levee.Pipeline[T], error) {
	if c == nil || r == nil {
		return nil, fmt.Errorf("leveeconfig: pipeline %q needs a Config and a registry", name)
	}
	p := levee.Compose[T]()
	found := false
	for _, pat := range slices.Backward(c.Order) {
		var err error
		switch pat {
		case registry.Retry:
			if _, ok := c.Retries.Instances[name]; ok {
				found = true
				var v *retry.Retry
				if v, err = r.Retry(name); err == nil {
					p = p.WithRetry(v)
				}
			}
		case registry.CircuitBreaker:
			if _, ok := c.CircuitBreakers.Instances[name]; ok {
				found = true
				var v *circuitbreaker.CircuitBreaker
				if v, err = r.CircuitBreaker(name); err == nil {
					p = p.WithCircuitBreaker(v)
				}
			}
		case registry.RateLimiter:
			if _, ok := c.RateLimiters.Instances[name]; ok {
				found = true
				var v *ratelimiter.RateLimiter
				if v, err = r.RateLimiter(name); err == nil {
					p = p.WithRateLimiter(v)
				}
			}
		case registry.TimeLimiter:
			if _, ok := c.TimeLimiters.Instances[name]; ok {
				found = true
				var v *timelimiter.TimeLimiter
				if v, err = r.TimeLimiter(name); err == nil {
					p = p.WithTimeLimiter(v)
				}
			}
		case registry.Bulkhead:
			if _, ok := c.Bulkheads.Instances[name]; ok {
				found = true
				var v *bulkhead.Bulkhead
				if v, err = r.Bulkhead(name); err == nil {
					p = p.WithBulkhead(v)
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("leveeconfig: pipeline %q: %w", name, err)
		}
	}
	if !found {
		return nil, fmt.Errorf("leveeconfig: pipeline %q: %s declares no retry, circuitbreaker, ratelimiter, timelimiter or bulkhead instance of that name", name, c.File)
	}
	if fb != nil {
		p = p.WithFallback(fb)
	}
	return p, nil
}
