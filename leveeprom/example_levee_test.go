package leveeprom_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

// A client-side throttler shows its window, its local rejections and its rejection
// probability under levee's own families.
func Example_throttle() {
	levreg := registry.New()
	th, _ := throttle.New("inventory", throttle.Config{Random: func() float64 { return 0.75 }})
	_ = levreg.AddThrottler(th)
	reg := prometheus.NewRegistry()
	reg.MustRegister(leveeprom.NewCollector(levreg))

	// The backend answers 503 four times: the probability (4 − 2×0)/(4 + 1) = 0.8 then throttles
	// the fifth call locally.
	for range 5 {
		_, _ = throttle.Execute(context.Background(), th, func(context.Context) (int, error) {
			return 0, errors.New("503")
		})
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		var b strings.Builder
		_, _ = expfmt.MetricFamilyToText(&b, mf)
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if !strings.HasPrefix(line, "#") {
				fmt.Println(line)
			}
		}
	}
	// Output:
	// levee_throttle_calls_total{kind="permitted",name="inventory"} 4
	// levee_throttle_calls_total{kind="throttled",name="inventory"} 1
	// levee_throttle_rejection_probability{name="inventory"} 0.8
	// levee_throttle_window_accepts{name="inventory"} 0
	// levee_throttle_window_requests{name="inventory"} 4
}
