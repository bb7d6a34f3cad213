package ratelimiter

import "time"

// StartContentionSpell starts a spell of contention, as an acquire that lost the word's
// compare-and-swap does: acquires take the serial mutex until it ends.
func StartContentionSpell(rl *RateLimiter) { rl.contended.Store(rl.elapsed() + contentionSpell) }

// InContentionSpell reports whether acquires are serialised.
func InContentionSpell(rl *RateLimiter) bool { return rl.contended.Load() != 0 }

// ContentionSpell is how long a spell lasts.
const ContentionSpell = time.Duration(contentionSpell)
