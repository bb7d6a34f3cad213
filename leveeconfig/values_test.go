package leveeconfig_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/leveeconfig"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0":           0,
		"100":         100 * time.Millisecond,
		"100ms":       100 * time.Millisecond,
		"3s":          3 * time.Second,
		"1m30s":       90 * time.Second,
		"1.5s":        1500 * time.Millisecond,
		"500ns":       500,
		"10us":        10 * time.Microsecond,
		"2h":          2 * time.Hour,
		"2d":          48 * time.Hour,
		"PT3S":        3 * time.Second,
		"pt3s":        3 * time.Second,
		"PT0.5S":      500 * time.Millisecond,
		"PT0,25S":     250 * time.Millisecond,
		"PT1M30S":     90 * time.Second,
		"P1DT2H":      26 * time.Hour,
		" 250ms ":     250 * time.Millisecond,
		"PT0.000001S": time.Microsecond,
		// Spring's simple style matches its unit in any case, as DurationStyle.
		"3S":     3 * time.Second,
		"1M":     time.Minute,
		"500MS":  500 * time.Millisecond,
		"500Ms":  500 * time.Millisecond,
		"10US":   10 * time.Microsecond,
		"7NS":    7,
		"2H":     2 * time.Hour,
		"2D":     48 * time.Hour,
		"+5s":    5 * time.Second,
		"p1dt2h": 26 * time.Hour,
	} {
		got, err := leveeconfig.ParseDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestParseDurationRefuses(t *testing.T) {
	for in, msg := range map[string]string{
		"":                        "empty duration",
		"-1":                      `duration "-1" is negative`,
		"-5s":                     `duration "-5s" is negative`,
		"PT-1M30S":                `duration "PT-1M30S" is negative`,
		"-PT1S":                   `duration "-PT1S" is negative`,
		"3 seconds":               `invalid duration "3 seconds": use 100ms, 3s, PT3S or milliseconds`,
		"1.5":                     `invalid duration "1.5": use 100ms, 3s, PT3S or milliseconds`,
		"P":                       `invalid ISO-8601 duration "P" (as PT3S or PT0.5S)`,
		"PT":                      `invalid ISO-8601 duration "PT" (as PT3S or PT0.5S)`,
		"P1Y":                     `invalid ISO-8601 duration "P1Y" (as PT3S or PT0.5S)`,
		"99999999999d":            `duration "99999999999d" is out of range`,
		"PT99999999999999999999S": `ISO-8601 duration "PT99999999999999999999S" is out of range`,
		"9223372036854775807":     `duration "9223372036854775807" is out of range`,
		"3x":                      `unknown unit "x" in duration "3x": use ns, us, ms, s, m, h or d, in any case`,
		"3SEC":                    `invalid duration "3SEC": use 100ms, 3s, PT3S or milliseconds`,
		"9999999999999999999H":    `duration "9999999999999999999H" is out of range`,
	} {
		_, err := leveeconfig.ParseDuration(in)
		assert.EqualError(t, err, msg, in)
	}
}

// Every form of one duration reads as that duration: bare milliseconds, Go's String and ISO
// seconds with a fraction.
func TestParseDurationFormsAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms := rapid.Int64Range(0, 1e9).Draw(t, "ms")
		d := time.Duration(ms) * time.Millisecond
		iso := "PT" + strconv.FormatInt(ms/1000, 10) + "." + leftPad(ms%1000) + "S"
		for _, form := range []string{strconv.FormatInt(ms, 10), d.String(), iso} {
			got, err := leveeconfig.ParseDuration(form)
			if err != nil {
				t.Fatalf("%q: %v", form, err)
			}
			if got != d {
				t.Fatalf("%q: got %v, want %v", form, got, d)
			}
		}
	})
}

func leftPad(n int64) string {
	s := strconv.FormatInt(n, 10)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}
