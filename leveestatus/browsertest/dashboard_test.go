package browsertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/integration"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// red is the computed background of an OPEN breaker's state badge (--open: #d64545).
const red = "rgb(214, 69, 69)"

// green is CLOSED's (--closed: #1f9d55).
const green = "rgb(31, 157, 85)"

// chromium finds the browser on PATH. Without it the test is skipped on a developer's
// machine and fails under CI (CI set), where .ci/run installs Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	return integration.Program(t, "apt-get install -y chromium", "chromium", "chromium-browser", "google-chrome")
}

// artifacts is where screenshots go: $LEVEE_ARTIFACTS when set, else a temporary directory
// (removed after the test; its path is logged).
func artifacts(t *testing.T) string {
	dir := os.Getenv("LEVEE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// browse starts a headless Chromium with a fresh profile and returns a tab's context. The
// flags keep it off the network it is not asked to reach and out of first-run dialogs.
func browse(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()   // closes the browser and waits for it
		cancelAlloc() // waits for the process to exit
	})
	return ctx
}

// service is a registry with a few instances that have served calls, so that the page has
// something to show.
func service(t *testing.T) (*registry.Registry, *circuitbreaker.CircuitBreaker) {
	reg := registry.New()
	ctx := context.Background()
	payment, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5, FailureRateThreshold: 70})
	require.NoError(t, err)
	stock, err := circuitbreaker.New("stock", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
	require.NoError(t, err)
	rt, err := retry.New("payment", retry.Config{WaitDuration: retry.NoWait})
	require.NoError(t, err)
	bh, err := bulkhead.New("db", bulkhead.Config{MaxConcurrentCalls: 8})
	require.NoError(t, err)
	rl, err := ratelimiter.New("api", ratelimiter.Config{LimitForPeriod: 100, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait})
	require.NoError(t, err)
	require.NoError(t, errors.Join(reg.AddCircuitBreaker(payment), reg.AddCircuitBreaker(stock),
		reg.AddRetry(rt), reg.AddBulkhead(bh), reg.AddRateLimiter(rl)))
	fail := errors.New("declined")
	for i := range 8 {
		_, _ = circuitbreaker.Execute(ctx, payment, func(context.Context) (int, error) {
			if i >= 3 {
				return 0, fail
			}
			return 1, nil
		})
		_, _ = circuitbreaker.Execute(ctx, stock, func(context.Context) (int, error) { return 1, nil })
		_, _ = bulkhead.Execute(ctx, bh, func(context.Context) (int, error) { return 1, nil })
		_, _ = ratelimiter.Execute(ctx, rl, func(context.Context) (int, error) { return 1, nil })
	}
	_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 1, nil })
	return reg, payment
}

// badge is the script reading the state badge of the breaker named payment: its data-state
// and computed background color, or "" while the card is not on the page.
const badge = `(() => {
	const e = document.querySelector('article[data-pattern="circuitbreaker"][data-name="payment"] .state');
	return e ? e.dataset.state + " " + getComputedStyle(e).backgroundColor : "";
})()`

func TestDashboardShowsABreakerTurningRed(t *testing.T) {
	ctx := browse(t)
	reg, _ := service(t)
	h, err := leveestatus.NewHandler(reg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/levee/", http.StripPrefix("/levee", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() }) // runs before srv.Close: ends the page's stream

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/levee/")))
	got, err := chromedp.Run(ctx, chromedp.Poll[string](badge+` || false`, chromedp.WithPollingTimeout(5*time.Second)))
	require.NoError(t, err)
	assert.Equal(t, "CLOSED "+green, got)

	// Open the breaker through the registry, as an operator's code would find it.
	cb, ok := reg.FindCircuitBreaker("payment")
	require.True(t, ok)
	start := time.Now()
	require.NoError(t, cb.TransitionToOpenState())
	got, err = chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const s = `+badge+`; return s.startsWith("OPEN ") ? s : false; })()`,
		chromedp.WithPollingTimeout(time.Second)))
	require.NoError(t, err, "the breaker did not turn red within a second")
	assert.Equal(t, "OPEN "+red, got)
	assert.Less(t, time.Since(start), time.Second)

	// The card carries the state too, and lists the transition.
	// The badge may turn red from a snapshot a moment before the transition's own event
	// lists it: wait for the list.
	card, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const c = document.querySelector('article[data-name="payment"][data-pattern="circuitbreaker"]');
		const li = c && c.querySelector(".trans li span");
		return li ? c.dataset.state + " | " + li.textContent : false; })()`,
		chromedp.WithPollingTimeout(time.Second)))
	require.NoError(t, err)
	assert.Equal(t, "OPEN | CLOSED → OPEN", card)

	// Calls made now show as calls per second at the next snapshot.
	traffic(t, reg, 40)
	cps, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const b = document.querySelector('article[data-name="stock"] .cps b'); return b && b.textContent !== "0" ? b.textContent : false; })()`,
		chromedp.WithPollingTimeout(3*time.Second)))
	require.NoError(t, err)
	// On the real clock the rate is 40 calls over the time between two snapshots, about a
	// second; its exact value is tested in leveestatus on the fake clock.
	rate, err := strconv.ParseFloat(cps, 64)
	require.NoError(t, err, cps)
	assert.InDelta(t, 40, rate, 20)

	dir := artifacts(t)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	writePNG(t, filepath.Join(dir, "leveestatus-dashboard.png"), png)

	// The same page on a phone's screen.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)))
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	require.NoError(t, err)
	assert.LessOrEqual(t, width, 390, "the page must not scroll sideways on a phone")
	png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	writePNG(t, filepath.Join(dir, "leveestatus-dashboard-phone.png"), png)
}

// traffic makes n successful calls through the stock breaker, the bulkhead and the rate
// limiter.
func traffic(t *testing.T, reg *registry.Registry, n int) {
	ctx := context.Background()
	stock, ok1 := reg.FindCircuitBreaker("stock")
	bh, ok2 := reg.FindBulkhead("db")
	rl, ok3 := reg.FindRateLimiter("api")
	require.True(t, ok1 && ok2 && ok3)
	ok := func(context.Context) (int, error) { return 1, nil }
	for range n {
		_, _ = circuitbreaker.Execute(ctx, stock, ok)
		_, _ = bulkhead.Execute(ctx, bh, ok)
		_, _ = ratelimiter.Execute(ctx, rl, ok)
	}
}

func writePNG(t *testing.T, path string, png []byte) {
	require.Equal(t, "\x89PNG", string(png[:4]))
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}
