package leveeconfig_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// render lists the profiles, the warnings with their level and the effective keys of each instance the test files declare, with their
// sources: the golden form of a loaded profile.
func render(c *leveeconfig.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "profiles: %s\n", strings.Join(c.Profiles, ", "))
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "%s: %s\n", w.Level, w)
	}
	for _, p := range []registry.Pattern{registry.CircuitBreaker, registry.Retry} {
		for _, name := range c.Names(p) {
			fmt.Fprintf(&b, "%s %s\n", p, name)
			for _, s := range c.Settings(p, name) {
				if s.Source.File != "" || s.Source.Env != "" {
					fmt.Fprintf(&b, "  %s: %s  (%s)\n", s.Key, s.Value, s.Source)
				}
			}
		}
	}
	return b.String()
}

// Spring's order: the file's documents in order (those of the active profiles only), then
// application-{profile}.yml for each active profile, the last profile winning, then the
// environment. SPRING_PROFILES_ACTIVE is read when Options.Profiles is nil; with no profile,
// Spring's "default" is active.
func TestProfiles(t *testing.T) {
	golden := func(name string) string {
		if *update {
			return ""
		}
		b, err := os.ReadFile("testdata/profiles/" + name)
		require.NoError(t, err)
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		opts   leveeconfig.Options
		golden string
	}{
		{"none", leveeconfig.Options{Environ: []string{}}, "default.golden"},
		{"prod", leveeconfig.Options{Environ: []string{"SPRING_PROFILES_ACTIVE= prod "}}, "prod.golden"},
		{"prod,eu", leveeconfig.Options{Environ: []string{"SPRING_PROFILES_ACTIVE=prod,eu",
			"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=60"}}, "prod-eu.golden"},
		{"eu,prod by option", leveeconfig.Options{Environ: []string{"SPRING_PROFILES_ACTIVE=dev"}, Profiles: []string{"eu", "prod"}}, "eu-prod.golden"},
	} {
		c, err := leveeconfig.Load("testdata/profiles/application.yml", tc.opts)
		require.NoError(t, err, tc.name)
		if *update {
			require.NoError(t, os.WriteFile("testdata/profiles/"+tc.golden, []byte(render(c)), 0o600))
		}
		assert.Equal(t, golden(tc.golden), render(c), tc.name)
	}
}

// A profile document inside a profile-specific file is refused, as Spring refuses it.
func TestProfileDocumentInAProfileFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/application.yml", []byte("resilience4j: {}\n"), 0o600))
	require.NoError(t, os.WriteFile(dir+"/application-prod.yml", []byte("spring.config.activate.on-profile: prod\nresilience4j: {}\n"), 0o600))
	_, err := leveeconfig.Load(dir+"/application.yml", leveeconfig.Options{Profiles: []string{"prod"}, Environ: []string{}})
	assert.EqualError(t, err, dir+"/application-prod.yml:1: spring.config.activate.on-profile: not allowed in a profile-specific file ("+dir+"/application-prod.yml), as in Spring")
}
