package leveeconfig

import (
	"regexp"
	"strings"

	"github.com/levee-go/levee/registry"
)

// goWord is a word of a pattern's error that may be a Go name: a field (SlidingWindowSize),
// maybe with an index (RecordErrors[0]).
var goWord = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\b`)

// goAliases are the Go names of a pattern's config or package whose file key is not their
// lower-case first letter: the keys Resilience4j names differently from levee's fields.
var goAliases = map[registry.Pattern]map[string]string{
	registry.CircuitBreaker: {
		"RecordErrors": "recordExceptions", "RecordRejections": "recordExceptions",
		"IgnoreErrors": "ignoreExceptions", "WaitIntervalFunctionInOpenState": "waitDurationInOpenState",
		"MaxSlidingWindowSize": "1048576",
	},
	registry.Retry: {
		"RetryErrors": "retryExceptions", "RetryRejections": "retryExceptions",
		"IgnoreErrors": "ignoreExceptions", "IntervalFunction": "waitDuration",
		"ExponentialBackoff": "enableExponentialBackoff", "RandomizedInterval": "enableRandomizedWait",
		"ExponentialRandomBackoff": "enableExponentialBackoff with enableRandomizedWait",
	},
	registry.Bulkhead: {
		"DisableFairCallHandling": "fairCallHandlingStrategyEnabled", "NoConcurrentCalls": "0",
	},
	registry.WorkerPool: {"NoQueue": "0", "NoKeepAlive": "0"},
	registry.RateLimiter: {
		"MaxReservablePermissions": "the most permissions a rate limiter can reserve", "NoWait": "0",
	},
	registry.TimeLimiter: {"DisableCancelRunningFuture": "cancelRunningFuture"},
	Adaptive: {
		"Algorithm": "limitAlgorithm", "MaxLimitLimit": "1048576", "NoQueueSize": "0", "NoProbe": "0",
		"Vegas": "VEGAS", "Gradient2": "GRADIENT2",
	},
	Throttle: {"RecordErrors": "recordExceptions", "MaxWindowBuckets": "1000"},
}

// fileKey returns the file's key for a Go name of pattern p's config: SlidingWindowSize is
// slidingWindowSize, RecordErrors recordExceptions. ok is false for a word that names no key;
// an alias that is not a key (a constant's value) comes back with ok false and its text.
func fileKey(p registry.Pattern, word string) (key string, ok bool) {
	if a, found := goAliases[p][word]; found {
		_, isKey := spec(p, norm(a))
		return a, isKey
	}
	for _, sp := range specs[p] {
		if strings.EqualFold(sp.name, word) && sp.name != word {
			return sp.name, true
		}
	}
	return word, false
}

// failNew reports an error of a pattern's New, or of a helper it uses, in the file's words:
// each Go field it names becomes the file's key (MaxConcurrentCalls becomes
// maxConcurrentCalls), the package prefix ("async: ") goes, and the error is reported at the
// first key it names that the entry sets (its file and line, or variable), else at src and
// path, the entry's; every other key it names is followed by where it was set, or "default",
// so that two keys in conflict are both named with their lines.
func (ps *parser) failNew(src Source, path string, p registry.Pattern, pr props, err error) {
	msg := err.Error()
	if pkg, rest, found := strings.Cut(msg, ": "); found && !strings.ContainsAny(pkg, " ") {
		msg = rest
	}
	var named []string
	msg = goWord.ReplaceAllStringFunc(msg, func(w string) string {
		key, ok := fileKey(p, w)
		if ok {
			named = append(named, key)
		}
		return key
	})
	var at *value
	for _, k := range named {
		if v := pr[k]; v != nil {
			at = v
			break
		}
	}
	if at != nil {
		src, path = at.src, at.path
		if rest, ok := strings.CutPrefix(msg, at.spec.name+" must "); ok {
			msg = "must " + rest // the path names the key
		}
	}
	var where []string
	seen := map[string]bool{}
	for _, k := range named {
		if seen[k] || at != nil && k == at.spec.name {
			continue
		}
		seen[k] = true
		if v := pr[k]; v != nil {
			where = append(where, k+": "+v.src.String())
		} else {
			where = append(where, k+": default")
		}
	}
	if len(where) > 0 {
		msg += " (" + strings.Join(where, ", ") + ")"
	}
	ps.fail(src, path, "%s", msg)
}
