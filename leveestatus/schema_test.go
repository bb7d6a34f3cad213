package leveestatus_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveestatus"
)

// conform checks v against schema (see testdata/actuator-schemas.json) and returns the
// differences, each with its JSON path.
func conform(path string, schema, v any) []string {
	switch s := schema.(type) {
	case string:
		got := "null"
		switch v.(type) {
		case string:
			got = "string"
		case float64:
			got = "number"
		case bool:
			got = "boolean"
		case map[string]any:
			got = "object"
		case []any:
			got = "array"
		}
		if got != s {
			return []string{fmt.Sprintf("%s: %s, want %s", path, got, s)}
		}
		return nil
	case []any:
		list, ok := v.([]any)
		if !ok {
			return []string{path + ": not a list"}
		}
		var out []string
		for i, item := range list {
			out = append(out, conform(fmt.Sprintf("%s[%d]", path, i), s[0], item)...)
		}
		return out
	case map[string]any:
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var out []string
		if each, ok := s["*"]; ok {
			for k, item := range obj {
				out = append(out, conform(path+"."+k, each, item)...)
			}
			return out
		}
		for k, sub := range s {
			name, optional := strings.CutSuffix(k, "?")
			item, present := obj[name]
			if !present {
				if !optional {
					out = append(out, path+"."+name+": missing")
				}
				continue
			}
			out = append(out, conform(path+"."+name, sub, item)...)
		}
		for k := range obj {
			if _, ok := s[k]; !ok {
				if _, ok := s[k+"?"]; !ok {
					out = append(out, path+"."+k+": not in Resilience4j's shape")
				}
			}
		}
		slices.Sort(out)
		return out
	}
	return []string{path + ": bad schema"}
}

// Every endpoint answers in the shape of Resilience4j's response classes, kept in a fixture.
func TestEndpointsHaveResilience4jsShapes(t *testing.T) {
	data, err := os.ReadFile("testdata/actuator-schemas.json")
	require.NoError(t, err)
	var schemas map[string]any
	require.NoError(t, json.Unmarshal(data, &schemas))
	delete(schemas, "_comment")
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, leveestatus.EnableStateUpdates())
		for endpoint, schema := range schemas {
			method, path, post := http.MethodGet, endpoint, ""
			if p, ok := strings.CutPrefix(endpoint, "POST "); ok {
				method, path, post = http.MethodPost, p, `{"updateState":"FORCE_OPEN"}`
			}
			code, _, body := do(t, s.h, method, path, post)
			require.Equal(t, http.StatusOK, code, endpoint)
			var v any
			require.NoError(t, json.Unmarshal([]byte(body), &v), endpoint)
			if list, ok := v.(map[string]any); ok {
				for _, inner := range list {
					if arr, ok := inner.([]any); ok {
						assert.NotEmpty(t, arr, "%s: the scenario gives every list an entry", endpoint)
					}
				}
			}
			assert.Empty(t, conform(endpoint, schema, v), "%s: %s", endpoint, body)
		}
	})
}
