package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// Spring's indexed forms read as list entries: retryExceptions[0] in a file and
// ..._RETRYEXCEPTIONS_0 in the environment, which replaces the file's list whole.
func TestIndexedListForms(t *testing.T) {
	yml := `resilience4j:
  retry:
    instances:
      payment:
        retryExceptions[0]: demo.r4j.GatewayException
        retryExceptions[1]: java.io.IOException
`
	c, err := load(t, yml)
	require.NoError(t, err)
	assert.Equal(t, []leveeconfig.Setting{{Key: "retryExceptions", Value: "demo.r4j.GatewayException, java.io.IOException",
		Source: leveeconfig.Source{File: "app.yml", Line: 5}}}, settingsOf(c, "retryExceptions"))

	c, err = load(t, yml, "RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0=java.net.ConnectException")
	require.NoError(t, err)
	assert.Equal(t, []leveeconfig.Setting{{Key: "retryExceptions", Value: "java.net.ConnectException",
		Source: leveeconfig.Source{Env: "RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0"}}}, settingsOf(c, "retryExceptions"),
		"the environment's list replaces the file's whole, as in Spring")
}

func settingsOf(c *leveeconfig.Config, key string) []leveeconfig.Setting {
	var out []leveeconfig.Setting
	for _, s := range c.Settings(registry.Retry, "payment") {
		if s.Key == key {
			out = append(out, s)
		}
	}
	return out
}

// An error in an entry points at the entry's own line and index.
func TestIndexedEntryErrors(t *testing.T) {
	_, err := load(t, `resilience4j:
  retry:
    instances:
      payment:
        retryExceptions[0]: java.io.IOException
        retryExceptions[1]: demo.Unknown
        retryExceptions[3]: java.io.IOException
        maxAttempts[0]: 3
        ignoreExceptions: [java.io.IOException]
        ignoreExceptions[0]: java.io.IOException
`, "RESILIENCE4J_RETRY_INSTANCES_STOCK_RETRYEXCEPTIONS_1=java.io.IOException")
	assert.EqualError(t, err, `app.yml:6: resilience4j.retry.instances.payment.retryExceptions[1]: unknown exception class "demo.Unknown": map it in Options.Errors to a Go error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), or skip it with ignoreClassBindingExceptions: true
app.yml:7: resilience4j.retry.instances.payment.retryExceptions[3]: index 3 without index 2: a list's indexes run from 0 without a gap, as Spring binds them
app.yml:8: resilience4j.retry.instances.payment.maxAttempts[0]: maxAttempts is not a list: an index applies to a list key only
app.yml:10: resilience4j.retry.instances.payment.ignoreExceptions[0]: conflicts with resilience4j.retry.instances.payment.ignoreExceptions (app.yml:9): write the list either whole or by index
env RESILIENCE4J_RETRY_INSTANCES_STOCK_RETRYEXCEPTIONS_1: resilience4j.retry.instances.stock.retryExceptions[1]: index 1 without index 0: a list's indexes run from 0 without a gap, as Spring binds them`)
}
