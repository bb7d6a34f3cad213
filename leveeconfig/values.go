package leveeconfig

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration in any form a Spring Boot configuration file accepts, and in
// Go's: a bare integer is milliseconds (Spring's default unit for a Duration, so
// "maxWaitDuration: 0" is 0 and "waitDuration: 100" is 100ms); Spring's simple form, an
// integer and one of the units ns, us, ms, s, m, h, d in any case ("3S", "1M" is one minute,
// "500MS"), as Spring's DurationStyle; Go's form ("1m30s", "1.5s", case-sensitive as Go's
// time.ParseDuration); and ISO-8601 as Java's Duration.parse, in any case ("PT3S", "pt0.5s",
// "P1DT2H"). Negative durations are refused: no key of
// Resilience4j accepts one.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	switch {
	case s == "":
		return 0, fmt.Errorf("empty duration")
	case s[0] == '-':
		return 0, fmt.Errorf("duration %q is negative", s)
	case isDigits(s):
		var ms int64
		ms, err = strconv.ParseInt(s, 10, 64)
		if err != nil || ms > math.MaxInt64/int64(time.Millisecond) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
		d = time.Duration(ms) * time.Millisecond
	case s[0] == 'P' || s[0] == 'p' || ((s[0] == '-' || s[0] == '+') && len(s) > 1 && (s[1] == 'P' || s[1] == 'p')):
		d, err = parseISO(s)
	case simpleDuration.MatchString(s):
		m := simpleDuration.FindStringSubmatch(s)
		unit, ok := simpleUnits[strings.ToLower(m[2])]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q in duration %q: use ns, us, ms, s, m, h or d, in any case", m[2], s)
		}
		var n int64
		n, err = strconv.ParseInt(m[1], 10, 64)
		if err != nil || n > math.MaxInt64/int64(unit) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
		d = time.Duration(n) * unit
	default:
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: use 100ms, 3s, PT3S or milliseconds", s)
		}
	}
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

// simpleDuration is Spring's DurationStyle.SIMPLE: an integer and a unit of one or two
// letters, matched in any case (Spring's Unit.fromSuffix compares with equalsIgnoreCase).
var simpleDuration = regexp.MustCompile(`^\+?(\d+)([a-zA-Z]{1,2})$`)

// simpleUnits are the units of Spring's simple style, by their lower-case suffix.
var simpleUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var isoDuration = regexp.MustCompile(`^(?i)([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$`)

// parseISO reads Java's Duration.parse format: PnDTnHnMn.nS.
func parseISO(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || strings.HasSuffix(strings.ToUpper(s), "T") || strings.EqualFold(strings.TrimLeft(s, "+-"), "P") {
		return 0, fmt.Errorf("invalid ISO-8601 duration %q (as PT3S or PT0.5S)", s)
	}
	var total float64
	unit := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, u := range unit {
		if m[i+2] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+2], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("ISO-8601 duration %q is out of range", s)
		}
		total += float64(n) * float64(u)
		d += time.Duration(n) * u
	}
	if frac := m[6]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[5], "-") {
			ns = -ns
		}
		d += time.Duration(ns)
		total += float64(ns)
	}
	if math.Abs(total) > math.MaxInt64 {
		return 0, fmt.Errorf("ISO-8601 duration %q is out of range", s)
	}
	if m[1] == "-" {
		d = -d
	}
	return d, nil
}

// parseInt reads a decimal int, as Spring binds an int property.
func parseInt(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer in [-2147483648, 2147483647]", s)
	}
	return int(n), nil
}

// isInteger reports whether s is written as a decimal integer, of any size.
func isInteger(s string) bool {
	s = strings.TrimSpace(s)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return isDigits(s)
}

// parseFloat reads a finite decimal number.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// parseBool reads true or false, in any case, as Spring binds a boolean.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}
