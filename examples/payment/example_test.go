package payment_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/examples/payment"
)

// A gateway and its client: each mode, the invalid-order rule, and what the gateway counted.
func Example() {
	gw, err := payment.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()
	client := payment.NewClient(gw.URL())
	defer client.Close()
	ctx := context.Background()

	receipt, err := client.Charge(ctx, "DH001")
	fmt.Println("ok:  ", receipt, err)

	cents, err := client.Price(ctx, "book-1")
	fmt.Println("price:", cents, err)

	_, err = client.Charge(ctx, "BAD1")
	fmt.Println("bad: ", err, "| customer's error:", errors.Is(err, payment.ErrInvalidOrder))

	gw.SetMode(payment.ModeFail)
	_, err = client.Charge(ctx, "DH002")
	fmt.Println("fail:", err, "| gateway's error:", errors.Is(err, payment.ErrGateway))

	// A hanging gateway answers nothing: only the caller's deadline ends the call, and the
	// gateway sees the request's context end.
	gw.SetMode(payment.ModeHang)
	attempt, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = client.Charge(attempt, "DH003")
	cancel()
	fmt.Println("hang:", err)

	if err := gw.WaitIdle(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("received %d, cancelled by client %d, max in flight %d\n",
		gw.Received(), gw.CancelledByClient(), gw.MaxInFlight())
	// Output:
	// ok:   PAID:DH001 <nil>
	// price: 9966 <nil>
	// bad:  invalid order BAD1 (HTTP 422) | customer's error: true
	// fail: gateway 503 | gateway's error: true
	// hang: context deadline exceeded
	// received 5, cancelled by client 1, max in flight 1
}

// OnRequest shows each request as it reaches the gateway, here three attempts of a caller that
// tries again after a 503.
func ExampleGateway_OnRequest() {
	gw, err := payment.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()
	client := payment.NewClient(gw.URL())
	defer client.Close()

	gw.OnRequest(func(r payment.RequestInfo) {
		fmt.Printf("gateway: request %d, %s %s, mode %s\n", r.Seq, r.Endpoint, r.Key, r.Mode)
	})
	gw.SetMode(payment.ModeFail)
	for attempt := 1; attempt <= 3; attempt++ {
		if attempt == 3 {
			gw.SetMode(payment.ModeOK) // the gateway recovers
		}
		receipt, err := client.Charge(context.Background(), "DH001")
		fmt.Printf("attempt %d: %q %v\n", attempt, receipt, err)
	}
	// Output:
	// gateway: request 1, charge DH001, mode fail
	// attempt 1: "" gateway 503
	// gateway: request 2, charge DH001, mode fail
	// attempt 2: "" gateway 503
	// gateway: request 3, charge DH001, mode ok
	// attempt 3: "PAID:DH001" <nil>
}
