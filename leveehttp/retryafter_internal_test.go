package leveehttp

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestParseRetryAfterSeconds(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.Int64Range(1, 1<<40).Draw(t, "seconds")
		d, ok := parseRetryAfter(strconv.FormatInt(s, 10), now)
		assert.True(t, ok)
		if s > int64(math.MaxInt64/time.Second) {
			assert.Equal(t, time.Duration(math.MaxInt64), d, "saturates")
			return
		}
		assert.Equal(t, time.Duration(s)*time.Second, d)
	})
}

func TestParseRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.Int64Range(-1e6, 1e8).Draw(t, "seconds from now")
		d, ok := parseRetryAfter(now.Add(time.Duration(s)*time.Second).Format(http.TimeFormat), now)
		if s <= 0 {
			assert.False(t, ok, "a date not in the future asks for no wait")
			return
		}
		assert.True(t, ok)
		assert.Equal(t, time.Duration(s)*time.Second, d)
	})
}

func TestParseRetryAfterRefuses(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"", "0", "-5", "1.5", "soon", "Tue, 01 Dec 2026 12:00:00 UTC"} {
		d, ok := parseRetryAfter(v, now)
		assert.False(t, ok, v)
		assert.Equal(t, time.Duration(0), d, v)
	}
	d, ok := parseRetryAfter("99999999999999999", now)
	assert.True(t, ok)
	assert.Equal(t, time.Duration(1<<63-1), d, "saturates")
	d, ok = parseRetryAfter("Wednesday, 02-Dec-26 12:00:00 GMT", now)
	assert.True(t, ok, "RFC 850 dates are accepted, as http.ParseTime does")
	assert.Equal(t, 24*time.Hour, d)
}

// A Retry-After field sent twice, or as a list, is malformed and asks for no wait; a value
// with spaces around it is read.
func TestParseRetryAfterValues(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		vs   []string
		want time.Duration
		ok   bool
	}{
		{nil, 0, false},
		{[]string{"2"}, 2 * time.Second, true},
		{[]string{" 2 "}, 2 * time.Second, true},
		{[]string{"2", "3"}, 0, false},
		{[]string{"2, 3"}, 0, false},
		{[]string{"-1"}, 0, false},
		{[]string{"Wed, 02 Dec 2026 12:00:00 GMT"}, 24 * time.Hour, true},
	} {
		d, ok := parseRetryAfterValues(tc.vs, now)
		assert.Equal(t, tc.ok, ok, "%q", tc.vs)
		assert.Equal(t, tc.want, d, "%q", tc.vs)
	}
}
