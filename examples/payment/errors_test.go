package payment_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/examples/payment"
)

func TestErrorMessagesAndIdentities(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	tests := []struct {
		name         string
		err          error
		msg          string
		gateway      bool
		invalidOrder bool
		unwrapsTo    error
	}{
		{"5xx", &payment.GatewayError{Status: 503}, "gateway 503", true, false, nil},
		{"unreachable", &payment.GatewayError{Err: cause}, "gateway unreachable: unexpected EOF", true, false, cause},
		{"bad body", &payment.GatewayError{Status: 200, Err: cause}, "gateway 200: unexpected EOF", true, false, cause},
		{"422", &payment.InvalidOrderError{Order: "BAD1", Status: 422}, "invalid order BAD1 (HTTP 422)", false, true, nil},
		{"400", &payment.InvalidOrderError{Status: 400}, "invalid order  (HTTP 400)", false, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("charging: %w", tt.err)
			for _, err := range []error{tt.err, wrapped} {
				assert.Equal(t, tt.gateway, errors.Is(err, payment.ErrGateway))
				assert.Equal(t, tt.invalidOrder, errors.Is(err, payment.ErrInvalidOrder))
				if tt.unwrapsTo != nil {
					assert.ErrorIs(t, err, tt.unwrapsTo)
				}
			}
			assert.EqualError(t, tt.err, tt.msg)
		})
	}
}

func TestErrorsAsThroughWrapping(t *testing.T) {
	_, c := start(t)
	_, err := c.Charge(context.Background(), "BAD7")
	wrapped := fmt.Errorf("order service: %w", err)
	var ie *payment.InvalidOrderError
	require.ErrorAs(t, wrapped, &ie)
	assert.Equal(t, "BAD7", ie.Order)
	var ge *payment.GatewayError
	assert.False(t, errors.As(wrapped, &ge))
}

func TestContextErrorsReturnedAsIs(t *testing.T) {
	gw, c := start(t)
	gw.SetMode(payment.ModeHang)
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := c.Charge(ctx, "DH001")
	assert.Equal(t, context.Canceled, err, "ctx.Err(), not the cause")

	gw.SetMode(payment.ModeOK)
	var nilCtx context.Context
	cents, err := c.Price(nilCtx, "book-1")
	require.NoError(t, err, "a nil context counts as Background")
	assert.Equal(t, payment.ListPrice("book-1"), cents)
}
