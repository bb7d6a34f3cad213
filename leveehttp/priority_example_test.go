package leveehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/priority"
)

// A call's priority travels from the client's context to the server's: the Transport sends
// it in a header, the Middleware puts it back in the handler's context, where a prioritizer
// (adaptive.Prioritizer.Limiter as ServerConfig.ConcurrencyLimiter) sheds by it.
func ExampleServerConfig_priorityHeader() {
	mw := levee.Must(leveehttp.Middleware(leveehttp.ServerConfig{PriorityHeader: "X-Priority"}))
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		level, ok := priority.Carried(r.Context())
		if !ok {
			level = "none"
		}
		fmt.Fprintf(w, "%v (level %s)", priority.FromContext(r.Context()), level)
	})))
	defer srv.Close()
	tr := levee.Must(leveehttp.NewTransport(nil, nil, leveehttp.Config{PriorityHeader: "X-Priority"}))
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	for _, ctx := range []context.Context{
		priority.WithLevel(context.Background(), 437),
		priority.WithPriority(context.Background(), priority.Sheddable),
		context.Background(), // no priority: Normal
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(string(body))
	}
	// Output:
	// critical (level critical/37)
	// sheddable (level sheddable)
	// normal (level none)
}
