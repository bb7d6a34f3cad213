package leveeconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// renderAll is render with every pattern's instances.
func renderAll(c *leveeconfig.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "profiles: %s\n", strings.Join(c.Profiles, ", "))
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "%s: %s\n", w.Level, w)
	}
	for _, p := range []registry.Pattern{registry.CircuitBreaker, registry.Retry, registry.Bulkhead,
		registry.WorkerPool, registry.RateLimiter, registry.TimeLimiter} {
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

// checkGolden compares got with testdata/<name>, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o600))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, name)
}

// The file's own spring.profiles.active, include and group, as Spring Boot: the caller's
// profiles or SPRING_PROFILES_ACTIVE replace the file's active ones, the included ones stay,
// before them; the on-profile documents take Spring's expressions; each profile's
// application-{profile}.yaml, .yml and .properties are read in that order (.properties
// wins); and a directory is read as Spring's location: application.properties over
// application.yml.
func TestProfilesTheFileActivates(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		opts       leveeconfig.Options
		golden     string
	}{
		{"the file's", "testdata/active/application.yml", leveeconfig.Options{Environ: []string{}}, "active/file.golden"},
		{"the environment's", "testdata/active/application.yml", leveeconfig.Options{Environ: []string{"SPRING_PROFILES_ACTIVE=staging,eu"}}, "active/env.golden"},
		{"the caller's", "testdata/active/application.yml", leveeconfig.Options{Profiles: []string{"eu"},
			Environ: []string{"SPRING_PROFILES_ACTIVE=staging", "SPRING_PROFILES_INCLUDE=staging"}}, "active/caller.golden"},
		{"the directory", "testdata/active", leveeconfig.Options{Environ: []string{}}, "active/dir.golden"},
	} {
		c, err := leveeconfig.Load(tc.path, tc.opts)
		require.NoError(t, err, tc.name)
		checkGolden(t, tc.golden, renderAll(c))
	}
}

// The profile keys are refused where Spring refuses them, naming the file and the line.
func TestProfileKeysWhereSpringRefusesThem(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("application.yml", `resilience4j: {}
---
spring.config.activate.on-profile: prod
spring:
  profiles:
    active: metrics
    include: [a, b]
---
spring.profiles: legacy
`)
	write("application-prod.yml", "spring.profiles.active: other\nresilience4j: {}\n")
	write("application-prod.properties", "spring.profiles.include[0]=other\nspring.profiles.group.x=y\n")
	_, err := leveeconfig.Load(filepath.Join(dir, "application.yml"), leveeconfig.Options{Profiles: []string{"prod"}, Environ: []string{}})
	assert.EqualError(t, err, strings.ReplaceAll(`DIR/application-prod.properties:1: spring.profiles.include: invalid in a profile-specific file (DIR/application-prod.properties), as in Spring: set it in the main file or in the environment
DIR/application-prod.properties:2: spring.profiles.group: invalid in a profile-specific file (DIR/application-prod.properties), as in Spring: set it in the main file or in the environment
DIR/application-prod.yml:1: spring.profiles.active: invalid in a profile-specific file (DIR/application-prod.yml), as in Spring: set it in the main file or in the environment
DIR/application.yml:6: spring.profiles.active: invalid in a document activated by spring.config.activate.on-profile (line 3), as in Spring: set it in a document without on-profile, or in the environment
DIR/application.yml:7: spring.profiles.include: invalid in a document activated by spring.config.activate.on-profile (line 3), as in Spring: set it in a document without on-profile, or in the environment
DIR/application.yml:9: spring.profiles: invalid, as in Spring Boot 2.4 and later: replace it with spring.config.activate.on-profile`, "DIR", dir))
}

// Spring's profile expressions, each against the active profiles prod and eu.
func TestProfileExpressions(t *testing.T) {
	for expr, want := range map[string]bool{
		"prod": true, "staging": false, "!staging": true, "!prod": false,
		"prod & eu": true, "prod & !eu": false, "prod | staging": true, "staging | dev": false,
		"(prod | staging) & eu": true, "!(prod & eu)": false, "staging, eu": true, "staging, dev": false,
		"(staging & eu) | (prod & !us)": true,
	} {
		yml := fmt.Sprintf("resilience4j: {}\n---\nspring.config.activate.on-profile: %q\nresilience4j.retry.instances.x.maxAttempts: 1\n", expr)
		c, err := leveeconfig.Parse("app.yml", []byte(yml), leveeconfig.Options{Profiles: []string{"prod", "eu"}, Environ: []string{}})
		require.NoError(t, err, expr)
		assert.Equal(t, want, len(c.Names(registry.Retry)) == 1, expr)
	}
	for _, expr := range []string{"prod & eu | us", "(prod", "prod)", "&", "!", "prod &", "& prod", "prod && eu", "()", "(prod) eu"} {
		yml := fmt.Sprintf("resilience4j: {}\n---\nspring.config.activate.on-profile: %q\n", expr)
		_, err := leveeconfig.Parse("app.yml", []byte(yml), leveeconfig.Options{Profiles: []string{"prod"}, Environ: []string{}})
		assert.EqualError(t, err, fmt.Sprintf(`app.yml:3: spring.config.activate.on-profile: profile expression %q is malformed, `+
			`as Spring reads it: write names joined by & or by | (parentheses to mix them), each maybe with !`, expr), expr)
	}
}

// spring.profiles.default names the profiles active when none is, as Spring's.
func TestProfilesDefaultFromTheFile(t *testing.T) {
	yml := "spring.profiles.default: local\nresilience4j: {}\n---\nspring.config.activate.on-profile: local\nresilience4j.retry.instances.x.maxAttempts: 1\n"
	c, err := leveeconfig.Parse("app.yml", []byte(yml), leveeconfig.Options{Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, []string{"local"}, c.Profiles)
	assert.Equal(t, []string{"x"}, c.Names(registry.Retry))
	c, err = leveeconfig.Parse("app.yml", []byte(yml), leveeconfig.Options{Environ: []string{"SPRING_PROFILES_ACTIVE=prod"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"prod"}, c.Profiles)
	assert.Empty(t, c.Names(registry.Retry))
}

// A .properties main file, as Spring Boot's: key=value, key: value and key value, comments,
// continuations, escapes, indexed lists, documents separated by #---, a key given twice
// keeping its last value with a warning.
func TestPropertiesFile(t *testing.T) {
	props := `# the payment breaker
! also a comment
resilience4j.circuitbreaker.instances.payment.slidingWindowSize=10
resilience4j.circuitbreaker.instances.payment.minimumNumberOfCalls : 5
resilience4j.circuitbreaker.instances.payment.waitDurationInOpenState 3s
resilience4j.circuitbreaker.instances.payment.ignoreExceptions[0]=demo.r4j.InvalidOrderException
resilience4j.retry.instances.payment.retryExceptions=demo.r4j.GatewayException,\
    java.io.IOException
resilience4j.retry.instances.payment.waitDuration=100ms
resilience4j.retry.instances.payment.waitDuration=200ms
resilience4j.retry.instances.[pay\u002Ev2].maxAttempts=2
resilience4j.retry.instances.[pay\u002Ev2].waitDuration=1s
#---
spring.config.activate.on-profile=prod
resilience4j.circuitbreaker.instances.payment.waitDurationInOpenState=5S
#---
spring.config.activate.on-profile=dev
resilience4j.circuitbreaker.instances.payment.waitDurationInOpenState=1s
`
	c, err := leveeconfig.Parse("application.properties", []byte(props), leveeconfig.Options{Errors: paymentErrors,
		Profiles: []string{"prod"}, Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, `profiles: prod
note: application.properties:10: resilience4j.retry.instances.payment.waitDuration: set again (first on line 9): the last value wins, as in a .properties file
circuitbreaker payment
  slidingWindowSize: 10  (application.properties:3)
  minimumNumberOfCalls: 5  (application.properties:4)
  waitDurationInOpenState: 5S  (application.properties:15)
  ignoreExceptions: demo.r4j.InvalidOrderException  (application.properties:6)
retry pay.v2
  maxAttempts: 2  (application.properties:11)
  waitDuration: 1s  (application.properties:12)
retry payment
  waitDuration: 200ms  (application.properties:10)
  retryExceptions: demo.r4j.GatewayException, java.io.IOException  (application.properties:7)
`, renderAll(c))

	_, err = leveeconfig.Parse("application.properties", []byte("resilience4j.retry.instances.x.maxAttempts=\n"), leveeconfig.Options{Environ: []string{}})
	assert.EqualError(t, err, "application.properties:1: resilience4j.retry.instances.x.maxAttempts: empty value")
}

// Beside a JSON main file, a profile's .json file is read first, then the others.
func TestProfileSiblingsOfAJSONFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"application.json":            `{"resilience4j": {"retry": {"instances": {"x": {"maxAttempts": 2, "waitDuration": "1ms"}}}}}`,
		"application-prod.json":       `{"resilience4j": {"retry": {"instances": {"x": {"maxAttempts": 3}}}}}`,
		"application-prod.properties": "resilience4j.retry.instances.x.maxAttempts=4\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	c, err := leveeconfig.Load(filepath.Join(dir, "application.json"), leveeconfig.Options{Profiles: []string{"prod"}, Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, 4, c.Retries.Instances["x"].MaxAttempts)
	_, err = leveeconfig.Load(filepath.Join(dir, "missing"), leveeconfig.Options{Environ: []string{}})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = leveeconfig.Load(t.TempDir(), leveeconfig.Options{Environ: []string{}})
	assert.ErrorContains(t, err, "holds no application.properties, application.yml or application.yaml")
}

// A list comes whole from one source, as Spring binds it: a later document's or profile
// file's list, whole or by index, replaces an earlier one's, never merged entry by entry.
func TestAListComesWholeFromOneSource(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"application.yml": `resilience4j.retry.instances:
  x:
    retryExceptions: [java.io.IOException, java.net.ConnectException]
  y:
    retryExceptions[0]: java.io.IOException
    retryExceptions[1]: java.net.ConnectException
---
spring.config.activate.on-profile: prod
resilience4j.retry.instances.y.retryExceptions[0]: java.net.UnknownHostException
`,
		"application-prod.properties": "resilience4j.retry.instances.x.retryExceptions[0]=java.util.concurrent.TimeoutException\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	c, err := leveeconfig.Load(filepath.Join(dir, "application.yml"), leveeconfig.Options{Profiles: []string{"prod"}, Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, "java.util.concurrent.TimeoutException", settingOf(c, registry.Retry, "x", "retryExceptions"))
	assert.Equal(t, "java.net.UnknownHostException", settingOf(c, registry.Retry, "y", "retryExceptions"))

	_, err = load(t, "resilience4j.retry.instances.x:\n  retryExceptions[0]: java.io.IOException\n  retryExceptions: java.io.IOException\n")
	assert.EqualError(t, err, "app.yml:3: resilience4j.retry.instances.x.retryExceptions: conflicts with "+
		"resilience4j.retry.instances.x.retryExceptions (app.yml:2): write the list either whole or by index")
}
