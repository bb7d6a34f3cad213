package leveeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

// retryOn loads a retry whose retryExceptions is the one class given and returns its config.
func retryOn(t *testing.T, class string) retry.Config {
	t.Helper()
	c, err := load(t, instance("retry", "retryExceptions: ["+class+"]"))
	require.NoError(t, err)
	return c.Retries.Instances["x"]
}

// matches reports whether a retry made of cfg retries err: it calls twice.
func matches(t *testing.T, cfg retry.Config, err error) bool {
	t.Helper()
	cfg.MaxAttempts, cfg.WaitDuration = 2, retry.NoWait
	r, rerr := retry.New("x", cfg)
	require.NoError(t, rerr)
	calls := 0
	_, _ = retry.Execute(context.Background(), r, func(context.Context) (int, error) { calls++; return 0, err })
	return calls == 2
}

// Each row of the JDK table: the Go errors a Java class stands for, and one it does not.
func TestJDKExceptionTable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	dns := &net.DNSError{Err: "no such host", Name: "payment.invalid", IsNotFound: true}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	deadline := fmt.Errorf("charge: %w", context.DeadlineExceeded)
	other := errors.New("card declined")
	for _, tc := range []struct {
		class   string
		match   []error
		noMatch []error
	}{
		{"java.net.ConnectException", []error{refused}, []error{dns, readTimeout, deadline, other}},
		{"java.net.SocketTimeoutException", []error{readTimeout, deadline}, []error{refused, dns, other}},
		{"java.util.concurrent.TimeoutException", []error{readTimeout, deadline}, []error{refused, dns, other}},
		{"java.net.UnknownHostException", []error{dns, fmt.Errorf("lookup: %w", dns)}, []error{refused, readTimeout, other}},
		{"java.io.IOException", []error{refused, dns, readTimeout, io.ErrUnexpectedEOF}, []error{other, io.EOF}},
	} {
		cfg := retryOn(t, tc.class)
		for _, err := range tc.match {
			assert.True(t, matches(t, cfg, err), "%s should match %v", tc.class, err)
		}
		for _, err := range tc.noMatch {
			assert.False(t, matches(t, cfg, err), "%s should not match %v", tc.class, err)
		}
	}
}

// An unmapped class is an error at the entry's own line and index, listing the ways to map
// it; with ignoreClassBindingExceptions: true it is a warning and skipped, as Resilience4j's
// IgnoreClassBindingExceptionConverter skips a class it cannot load.
func TestUnmappedExceptionClass(t *testing.T) {
	yml := `resilience4j:
  retry:
    instances:
      x:
        retryExceptions:
          - java.io.IOException
          - com.acme.Unknown
`
	_, err := load(t, yml)
	assert.EqualError(t, err, `app.yml:7: resilience4j.retry.instances.x.retryExceptions[1]: unknown exception class "com.acme.Unknown": `+
		`map it in Options.Errors to a Go error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), `+
		`write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), `+
		`or skip it with ignoreClassBindingExceptions: true`)

	c, err := load(t, yml+"        ignoreClassBindingExceptions: true\n")
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, `app.yml:7: resilience4j.retry.instances.x.retryExceptions[1]: unknown exception class "com.acme.Unknown" skipped, as ignoreClassBindingExceptions: true`,
		c.Warnings[0].String())
	assert.Len(t, c.Retries.Instances["x"].RetryErrors, 2, "java.io.IOException's two errors")
}

// An empty value says so, with the key as written.
func TestEmptyValue(t *testing.T) {
	_, err := load(t, instance("thread-pool-bulkhead", `coreThreadPoolSize: ""`))
	assert.EqualError(t, err, `app.yml:5: resilience4j.thread-pool-bulkhead.instances.x.coreThreadPoolSize: empty value`)
}
