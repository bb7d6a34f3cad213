// Package priority names how important a call is, so that a service under overload sheds the
// right work first: health checks and checkout before batch jobs. A call carries its priority
// in its context (WithPriority, or WithLevel for a finer grain), servers read it from a
// request header or metadata key (HeaderName, Format, ParseHeader) and clients send it, and
// a prioritizer (adaptive.Prioritizer) sheds from the lowest level up as its limiters fill.
//
// There are five priorities, each a range of 100 levels, as failsafe-go maps its five
// priorities to 500 levels:
//
//	Sheddable  0–99     batch jobs, prefetches: the first to go
//	Low        100–199
//	Normal     200–299  the default of a call that names none
//	High       300–399
//	Critical   400–499  health checks, checkout: never shed while anything lower is admitted
//
// The level inside a priority orders calls of the same priority: a call given only a priority
// is placed at a level drawn at random within its range, so that shedding part of a priority
// sheds a random part of its calls rather than all or none. The package uses only the
// standard library.
package priority

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Priority is one of the five named classes of importance.
type Priority uint8

// The priorities, from the first shed to the last.
const (
	// Sheddable is work nobody waits for: batch jobs, prefetches, analytics.
	Sheddable Priority = iota
	// Low is work that can be delayed.
	Low
	// Normal is the default.
	Normal
	// High is user-facing work that matters more than the rest.
	High
	// Critical is work the service exists for, and its health checks.
	Critical
)

// Count is the number of priorities; LevelsPer the levels of each; MaxLevel the highest.
const (
	Count     = 5
	LevelsPer = 100
	MaxLevel  = Level(Count*LevelsPer - 1)
)

var names = [Count]string{"sheddable", "low", "normal", "high", "critical"}

// String returns "sheddable", "low", "normal", "high" or "critical".
func (p Priority) String() string {
	if int(p) < Count {
		return names[p]
	}
	return "Priority(" + strconv.Itoa(int(p)) + ")"
}

// Valid reports whether p is one of the five priorities.
func (p Priority) Valid() bool { return p < Count }

// MinLevel returns the lowest level of p's range; MaxLevel of p its highest.
func (p Priority) MinLevel() Level { return Level(int(p) * LevelsPer) }

// MaxLevel returns the highest level of p's range.
func (p Priority) MaxLevel() Level { return Level(int(p)*LevelsPer + LevelsPer - 1) }

// RandomLevel returns a level drawn at random in p's range. It allocates nothing.
func (p Priority) RandomLevel() Level { return p.MinLevel() + Level(rand.IntN(LevelsPer)) }

// Parse returns the priority named s, case-insensitively, or an error naming the value and
// the allowed names:
//
//	priority: unknown priority "urgent", want one of sheddable, low, normal, high, critical
func Parse(s string) (Priority, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return Priority(i), nil
		}
	}
	return 0, fmt.Errorf("priority: unknown priority %q, want one of %s", s, strings.Join(names[:], ", "))
}

// Level is a priority at a finer grain, in [0, MaxLevel]: Priority(level / 100) is its
// priority. Higher levels are shed later.
type Level uint16

// Priority returns the priority whose range holds l (Critical for a level above MaxLevel).
func (l Level) Priority() Priority { return Priority(min(int(l), int(MaxLevel)) / LevelsPer) }

// String returns the level as Format writes it: "high/37" for level 337.
func (l Level) String() string { return Format(l) }

type key struct{}

// value is what the context holds: a level, or a priority whose level is drawn per call.
type value struct {
	level Level
	exact bool
}

// WithPriority returns a copy of ctx carrying p; each call made with it is placed at a level
// drawn at random in p's range. An invalid p is stored as Normal.
func WithPriority(ctx context.Context, p Priority) context.Context {
	if !p.Valid() {
		p = Normal
	}
	return context.WithValue(orBackground(ctx), key{}, value{level: p.MinLevel()})
}

// WithLevel returns a copy of ctx carrying the exact level l (above MaxLevel: MaxLevel).
func WithLevel(ctx context.Context, l Level) context.Context {
	return context.WithValue(orBackground(ctx), key{}, value{level: min(l, MaxLevel), exact: true})
}

// FromContext returns the priority ctx carries, Normal when none.
func FromContext(ctx context.Context) Priority {
	if ctx == nil {
		return Normal
	}
	if v, ok := ctx.Value(key{}).(value); ok {
		return v.level.Priority()
	}
	return Normal
}

// LevelFromContext returns the level of one call made with ctx: the exact level WithLevel
// gave, or a level drawn at random in the range of the priority WithPriority gave (Normal
// when none). It allocates nothing.
func LevelFromContext(ctx context.Context) Level {
	v := value{level: Normal.MinLevel()}
	if ctx != nil {
		if got, ok := ctx.Value(key{}).(value); ok {
			v = got
		}
	}
	if v.exact {
		return v.level
	}
	return v.level.Priority().RandomLevel()
}

// Carried reports whether ctx carries a priority or level, and which as Format writes it:
// "critical" for WithPriority(Critical), "high/37" for WithLevel(337). Client adapters send
// it in HeaderName.
func Carried(ctx context.Context) (header string, ok bool) {
	if ctx == nil {
		return "", false
	}
	v, ok := ctx.Value(key{}).(value)
	if !ok {
		return "", false
	}
	if v.exact {
		return Format(v.level), true
	}
	return v.level.Priority().String(), true
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
