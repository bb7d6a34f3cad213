package operators

import "github.com/levee-go/levee/internal/engine"

// MaxUncommitted bounds to n the elements taken from the input and not yet below the commit
// watermark (CommitWatermark), so that what a crash redelivers, the elements read again from
// the committed offset, is at most n: the operator takes element i only once Watermark.Load()
// is above i - n. Window bounds the elements taken and not yet sent; it does not bound this
// under OrderByKey or Unordered, where results of other keys go out, and are acknowledged,
// above an element that waits (a backoff, a pause), so the watermark stays behind while the
// operator reads on. With MaxUncommitted, a waiting element holds the input back once n
// elements are taken from it on.
//
// Elements below the watermark are those delivered and acknowledged: a consumer that does not
// acknowledge stalls the operator once n are taken. n must be in [1, MaxWindow], and
// CommitWatermark must be given too. Resilience4j has no counterpart; Kafka's
// max.poll.records and a bounded in-flight count per consumer are the nearest.
//
// It applies to Map, MapResults, Filter and FlatMap.
func MaxUncommitted(n int) Option {
	return emissionOption("MaxUncommitted", func(em *engine.Settings) error { return em.SetMaxUncommitted(n) })
}
