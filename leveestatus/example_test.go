package leveestatus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

// The status API mounted under /levee/ of an application's mux: after 8 calls of which 5
// failed in a window of 10, the breaker's failure rate is 62.5%.
func Example() {
	reg := registry.New()
	cb, err := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize: 10, MinimumNumberOfCalls: 5, FailureRateThreshold: 70,
	})
	if err != nil {
		panic(err)
	}
	if err := reg.AddCircuitBreaker(cb); err != nil {
		panic(err)
	}
	status, err := leveestatus.NewHandler(reg)
	if err != nil {
		panic(err)
	}
	defer status.Close()

	mux := http.NewServeMux()
	mux.Handle("/levee/", http.StripPrefix("/levee", status))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for i := range 8 {
		_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) {
			if i >= 3 { // the last 5 fail: the rate never reaches 70% on the way
				return 0, errors.New("card declined")
			}
			return 1, nil
		})
	}

	resp, err := http.Get(srv.URL + "/levee/circuitbreakers")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Print(string(body))
	// Output:
	// 200 application/json
	// {"circuitBreakers":{"payment":{"failureRate":62.5,"failureRateThreshold":70,"slowCallRate":0,"slowCallRateThreshold":100,"bufferedCalls":8,"failedCalls":5,"slowCalls":0,"slowFailedCalls":0,"notPermittedCalls":0,"state":"CLOSED"}}}
}
