package payment

import (
	"errors"
	"fmt"
)

// ErrGateway matches, through errors.Is, every *GatewayError: the gateway failed or could not be
// reached. Resilience configs list it among the errors to record and retry.
var ErrGateway = errors.New("payment: gateway error")

// ErrInvalidOrder matches, through errors.Is, every *InvalidOrderError: the gateway refused the
// request's content. Resilience configs list it among the errors to ignore and not retry.
var ErrInvalidOrder = errors.New("payment: invalid order")

// GatewayError is a failure of the gateway itself: an answer with a status other than 200 and
// 4xx (Status holds it, as 503), an unreachable gateway (Status 0, Err holds the transport's
// error), or a 200 answer whose body the client could not understand (Status 200, Err says why).
type GatewayError struct {
	Status int   // the HTTP status, 0 when no answer arrived
	Err    error // the underlying error, if any; nil for a plain error status
}

// Error returns "gateway 503", or "gateway unreachable: ..." when no answer arrived.
func (e *GatewayError) Error() string {
	msg := fmt.Sprintf("gateway %d", e.Status)
	if e.Status == 0 {
		msg = "gateway unreachable"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrGateway.
func (e *GatewayError) Is(target error) bool { return target == ErrGateway }

// Unwrap returns Err.
func (e *GatewayError) Unwrap() error { return e.Err }

// InvalidOrderError is the gateway's refusal of a request's content, a 4xx answer: 422 for an
// order (or SKU) it rejects, 400 when the order (or SKU) is missing. For Client.Price, Order holds
// the SKU.
type InvalidOrderError struct {
	Order  string
	Status int
}

// Error returns "invalid order BAD1 (HTTP 422)".
func (e *InvalidOrderError) Error() string {
	return fmt.Sprintf("invalid order %s (HTTP %d)", e.Order, e.Status)
}

// Is reports whether target is ErrInvalidOrder.
func (e *InvalidOrderError) Is(target error) bool { return target == ErrInvalidOrder }
