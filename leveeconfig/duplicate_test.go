package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/registry"
)

// Two blocks for one instance are refused with both lines, unless they bind alike: the same
// key twice in one mapping (Spring's YAML loader refuses it), and names that levee's folding
// makes one while Spring keeps them apart (a map key keeps its case and dashes).
func TestTwoBlocksForOneInstance(t *testing.T) {
	_, err := load(t, `resilience4j:
  retry:
    instances:
      payment:
        maxAttempts: 3
      payment:
        maxAttempts: 4
      stock:
        maxAttempts: 2
      Stock:
        maxAttempts: 5
`)
	assert.EqualError(t, err, "app.yml:6: resilience4j.retry.instances.payment: written twice in one mapping (first on line 4), which Spring's YAML loader refuses\n"+
		`app.yml:10: resilience4j.retry.instances.Stock: "Stock" and "stock" (line 8) are one name to levee but two instances to Spring, which keeps a name's case and dashes: write one spelling`)

	c, err := load(t, `resilience4j:
  retry:
    instances:
      payment:
        maxAttempts: 3
        waitDuration: 1s
      payment:
        max-attempts: 3
        wait-duration: 1s
      pay_ment:
        waitDuration: 1s
`)
	require.NoError(t, err, "the same block twice, and pay_ment, which Spring binds as payment")
	assert.Equal(t, []string{"payment"}, c.Names(registry.Retry))
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, "app.yml:7: resilience4j.retry.instances.payment: the same as line 4: read once", c.Warnings[0].String())

	_, err = load(t, `resilience4j:
  retry:
    instances:
      payment:
        maxAttempts: 3
      pay_ment:
        maxAttempts: 4
      pay-ment:
        maxAttempts: 3
`)
	assert.EqualError(t, err, "app.yml:7: resilience4j.retry.instances.pay_ment.maxAttempts: set twice (first on line 5)\n"+
		`app.yml:8: resilience4j.retry.instances.pay-ment: "pay-ment" and "payment" (line 4) are one name to levee but two instances to Spring, which keeps a name's case and dashes: write one spelling`)

	// A dotted key and a nested block spell the same property paths, which Spring merges.
	c, err = load(t, `resilience4j:
  retry:
    instances:
      payment:
        maxAttempts: 3
resilience4j.retry.instances.payment.waitDuration: 1s
`)
	require.NoError(t, err)
	assert.Equal(t, 3, c.Retries.Instances["payment"].MaxAttempts)
}
