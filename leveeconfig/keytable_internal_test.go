package leveeconfig

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
	"github.com/levee-go/levee/timelimiter"
)

// goFieldNames are the exported field names of every config a file configures: none of them
// may appear in a load error, which speaks the file's words.
func goFieldNames() []string {
	var out []string
	for _, v := range configTypes {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			out = append(out, t.Field(i).Name)
		}
	}
	return out
}

var configTypes = []any{circuitbreaker.Config{}, retry.Config{}, bulkhead.Config{}, async.WorkerPoolConfig{},
	ratelimiter.Config{}, timelimiter.Config{}, adaptive.Config{}, adaptive.PrioritizerConfig{}, throttle.Config{}}

// badValues are values of the wrong type or out of range for a key of each kind; each key of
// the table is loaded with each of them, alone and with the switches that make it count.
var badValues = map[kind][]string{
	kDuration: {"soon", "-1s", "0", "1ns", "999999999999d", "10000d", "\"\""},
	kInt:      {"x", "-1", "0", "99999999999", "2147483647", "\"\""},
	kFloat:    {"x", "-1", "0", "101", "1e300", "0.5", "\"\""},
	kBool:     {"maybe", "\"\""},
	kEnum:     {"BOGUS", "\"\""},
	kList:     {"demo.Unknown"},
	kString:   {"x"},
	kMap:      {"x", "[a]"},
}

// TestEveryKeyErrsInTheFilesWords walks every key of the key table with bad values: each key
// gets at least one error, and every error names the file, the key's own line and its path,
// and no Go field name.
func TestEveryKeyErrsInTheFilesWords(t *testing.T) {
	fields := goFieldNames()
	goName := regexp.MustCompile(`\b(` + strings.Join(fields, "|") + `)\b`)
	for _, s := range sections {
		for _, sp := range specs[s.pattern] {
			failed := false
			for _, switches := range []string{"", "enableExponentialBackoff: true", "enableRandomizedWait: true"} {
				if switches != "" && !hasSpec(s.pattern, strings.TrimSuffix(switches, ": true")) {
					continue
				}
				for _, bad := range badValues[sp.kind] {
					path := s.root + "." + s.key + ".instances.x." + sp.name
					y := fmt.Sprintf("%s:\n  %s:\n    instances:\n      x:\n        %s: %s\n", s.root, s.key, sp.name, bad)
					if switches != "" && !strings.HasPrefix(switches, sp.name) {
						y += "        " + switches + "\n"
					}
					_, err := Parse("app.yml", []byte(y), Options{Environ: []string{}})
					if err == nil {
						continue
					}
					failed = true
					for _, e := range unjoin(err) {
						var le *Error
						require.ErrorAs(t, e, &le)
						what := fmt.Sprintf("%s=%s with %q: %v", path, bad, switches, e)
						assert.Equal(t, Source{File: "app.yml", Line: 5}, le.Source, what)
						assert.Equal(t, path, le.Path, what) // a comma-separated list: the key's own path
						assert.Empty(t, goName.FindAllString(le.Msg, -1), what)
						assert.NotContains(t, le.Msg, string(s.pattern)+":", what)
					}
				}
			}
			// An ignored list (contextPropagators) names Java classes nothing loads: any value goes.
			assert.Equal(t, sp.ignored == "" || sp.kind != kList, failed, "whether a bad value of %s.%s fails", s.key, sp.name)
		}
	}
}

func hasSpec(p registry.Pattern, name string) bool {
	_, ok := spec(p, norm(name))
	return ok
}

func unjoin(err error) []error {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		return joined.Unwrap()
	}
	return []error{err}
}
