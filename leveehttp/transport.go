package leveehttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/priority"
)

// Defaults of Config.
const (
	DefaultIdempotencyKeyHeader = "Idempotency-Key"
	// DefaultAttemptCountHeader is Config.AttemptCountHeader's and ServerConfig's
	// AttemptCountHeader's default: Envoy's header for the same number.
	DefaultAttemptCountHeader = "X-Envoy-Attempt-Count"
	DefaultMaxRetryAfter      = time.Minute
	DefaultMaxBodyBuffer      = 64 << 10
	// MaxMaxBodyBuffer bounds Config.MaxBodyBuffer.
	MaxMaxBodyBuffer = 16 << 20
)

// Config configures a Transport. The zero value of every field means its default.
type Config struct {
	// Failure reports whether a response is a failure of the server: the attempt fails with
	// a *StatusError that breakers record and retries retry. A response it rejects with a
	// status >= 400 is a client error: a *StatusError matching ErrNotRetryable, which
	// CircuitBreakerConfig makes the breaker ignore. Any other response is a success.
	// [nil: DefaultFailure, 5xx and 429]
	Failure func(resp *http.Response) bool

	// IdempotencyKeyHeader is the header carrying a request's idempotency key.
	// ["": DefaultIdempotencyKeyHeader, "Idempotency-Key"]
	IdempotencyKeyHeader string

	// GenerateIdempotencyKey makes the Transport give a non-idempotent request (POST, PATCH,
	// ...) that has no idempotency key a fresh one (128 random bits from crypto/rand, as 32
	// hexadecimal digits), once per request: every attempt carries the same key, so the
	// request may be retried. Without it such a request is sent at most once unless the
	// caller set the header. The key is sent as a Structured Field sf-string (RFC 8941), in
	// double quotes, as the IETF's Idempotency-Key draft defines the field:
	// Idempotency-Key: "8e03978e40d5b8b1ad54f2f2b4a9f3c4". [false]
	GenerateIdempotencyKey bool

	// MaxRetryAfter caps the wait a Retry-After imposes: the next attempt waits
	// min(Retry-After, MaxRetryAfter). [0: DefaultMaxRetryAfter, 1 minute; must be >= 0]
	MaxRetryAfter time.Duration

	// AttemptCountHeader is the header carrying the attempt number, as Envoy's
	// x-envoy-attempt-count does: 1 on the first attempt, 2 on the first retry and one more on
	// each further one. A Transport whose pipeline holds a Retry sends it on every attempt, the
	// first included, so that a server behind Middleware knows that its caller retries
	// (retry.IncomingAttempt, retry.CallerRetries) and its own retries can leave the request to
	// the caller's (retry.Config.NoRetryOfRetries: retries at one layer, the outermost). A
	// pipeline without a Retry sends none on its first attempt, which goes out as the caller
	// built it, with no copy, so that the server it calls retries for it; should the pipeline
	// run the call again anyway (a Decorator of one's own that retries), those attempts carry
	// their number. A value the caller set is replaced on every attempt that carries one.
	// Sending the number on a first attempt costs a shallow copy of the request's header (the
	// request itself is copied into the state RoundTrip allocates anyway).
	// ["": DefaultAttemptCountHeader]
	AttemptCountHeader string

	// OmitAttemptCount sends no AttemptCountHeader. [false]
	OmitAttemptCount bool

	// PriorityHeader is the header carrying a request's priority: a request whose context
	// carries one (priority.WithPriority, priority.WithLevel) is sent with it on every
	// attempt, as priority.Carried writes it ("critical"; "high/37" for an exact level), so
	// that a server behind Middleware with the same ServerConfig.PriorityHeader admits or
	// sheds it at that priority. A request whose header already has the field keeps the
	// caller's value, and a context without a priority sends nothing. Adding the field costs
	// a copy of the request's header. ["": priority.DefaultHeaderName, "Levee-Priority"]
	PriorityHeader string

	// OmitPriority sends no PriorityHeader: for a dependency that must not learn the
	// priorities of this service's calls. [false]
	OmitPriority bool

	// MaxBodyBuffer is how many bytes of a failed or refused response's body are read and kept
	// before the body is closed (see StatusError). [0: DefaultMaxBodyBuffer, 64 KiB; must be in
	// [0, MaxMaxBodyBuffer]]
	MaxBodyBuffer int
}

// DefaultFailure reports whether resp's status is 5xx or 429 Too Many Requests: the statuses
// that say the server, not the request, is at fault (failsafe-go's failsafehttp and Polly's
// HTTP resilience handle the same, plus 408, which is left to the caller here).
func DefaultFailure(resp *http.Response) bool {
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
}

// Transport is an http.RoundTripper that sends each request through a levee pipeline: each run
// of the pipeline's innermost call is one attempt, sent with the next RoundTripper. It is safe
// for concurrent use; build it once per dependency with NewTransport.
//
// What each attempt returns to the pipeline:
//   - a response Config.Failure accepts (2xx, 3xx): the response, a success;
//   - a failure (5xx, 429): a *StatusError, body buffered and closed;
//   - a client error (other 4xx): a *StatusError matching ErrNotRetryable;
//   - a transport error: the error, as the next RoundTripper returned it.
//
// A failure of a request that cannot be sent again (a body without GetBody; a method other
// than GET, HEAD, OPTIONS, TRACE, PUT and DELETE without an idempotency key) matches
// ErrNotRetryable. If the pipeline runs the call again anyway, the Transport sends nothing and
// returns ErrNotSent, a rejection. An attempt after a Retry-After does not start before
// StatusError.RetryAt, even when the retry waited less.
//
// What RoundTrip returns: the pipeline's response; the request context's own error
// (context.Canceled, context.DeadlineExceeded) when that context is done and the pipeline
// failed, whatever an earlier attempt answered; for a pipeline that ended on a
// *StatusError, that error's Response (the last 503, say) with a nil error, as Go's clients
// expect a response for every HTTP status; a *RetryAfterError when Retry-After went past the
// deadline; otherwise the pipeline's error (a transport error, a rejection such as
// circuitbreaker.ErrCallNotPermitted, a timeout). A rejection of a later attempt (a breaker
// that the earlier 5xx answers opened) ends the pipeline on the rejection, so RoundTrip returns
// it, not the last 5xx. Every response body the caller does not get is closed.
//
// A TimeLimiter in the pipeline bounds each attempt up to its response headers; the body of
// a successful response is then read under the request's own context. A successful response
// that a retry's RetryOnResultPredicate retries, or that a time limiter gave up on, is closed
// by the Transport. A fallback in the pipeline sees client errors as *StatusError too: check
// StatusError.Failure, or answer only the errors it is for (circuitbreaker.ErrCallNotPermitted,
// say).
type Transport struct {
	next      http.RoundTripper
	p         *compose.Chain[*http.Response] // the pipeline, as levee's engines run it
	failure   func(*http.Response) bool
	keyHeader string
	attHeader string // "" with OmitAttemptCount
	priHeader string // "" with OmitPriority
	retries   bool   // p holds a Retry: every attempt carries attHeader, the first included
	genKey    bool
	maxRA     time.Duration
	maxBuf    int
}

// NewTransport returns a Transport sending requests with next (nil: http.DefaultTransport)
// through p (nil: no pattern, each request sent once). It refuses an invalid cfg with an error
// naming the field, e.g. "leveehttp: MaxRetryAfter must be >= 0, got -1s".
//
// Build p's retry with RetryConfig and its breaker with CircuitBreakerConfig, so that they
// honour Retry-After, do not retry what cannot be retried, and ignore client errors.
func NewTransport(next http.RoundTripper, p *levee.Pipeline[*http.Response], cfg Config) (*Transport, error) {
	if cfg.MaxRetryAfter < 0 {
		return nil, fmt.Errorf("leveehttp: MaxRetryAfter must be >= 0, got %v", cfg.MaxRetryAfter)
	}
	if cfg.MaxBodyBuffer < 0 || cfg.MaxBodyBuffer > MaxMaxBodyBuffer {
		return nil, fmt.Errorf("leveehttp: MaxBodyBuffer must be in [0, %d], got %d", MaxMaxBodyBuffer, cfg.MaxBodyBuffer)
	}
	if h := cfg.IdempotencyKeyHeader; h != "" && !validHeaderName(h) {
		return nil, fmt.Errorf("leveehttp: IdempotencyKeyHeader must be a valid header name, got %q", h)
	}
	if h := cfg.AttemptCountHeader; h != "" && !validHeaderName(h) {
		return nil, fmt.Errorf("leveehttp: AttemptCountHeader must be a valid header name, got %q", h)
	}
	if h := cfg.PriorityHeader; h != "" && !validHeaderName(h) {
		return nil, fmt.Errorf("leveehttp: PriorityHeader must be a valid header name, got %q", h)
	}
	t := &Transport{
		next: next, p: (*compose.Chain[*http.Response])(p), failure: cfg.Failure, genKey: cfg.GenerateIdempotencyKey,
		keyHeader: http.CanonicalHeaderKey(cfg.IdempotencyKeyHeader),
		maxRA:     cfg.MaxRetryAfter, maxBuf: cfg.MaxBodyBuffer,
		retries: (*compose.Chain[*http.Response])(p).Retries(),
	}
	if t.next == nil {
		t.next = http.DefaultTransport
	}
	if t.failure == nil {
		t.failure = DefaultFailure
	}
	if t.keyHeader == "" {
		t.keyHeader = DefaultIdempotencyKeyHeader
	}
	if !cfg.OmitPriority {
		t.priHeader = http.CanonicalHeaderKey(cfg.PriorityHeader)
		if t.priHeader == "" {
			t.priHeader = string(priority.DefaultHeaderName)
		}
	}
	if !cfg.OmitAttemptCount {
		t.attHeader = http.CanonicalHeaderKey(cfg.AttemptCountHeader)
		if t.attHeader == "" {
			t.attHeader = DefaultAttemptCountHeader
		}
	}
	if t.maxRA == 0 {
		t.maxRA = DefaultMaxRetryAfter
	}
	if t.maxBuf == 0 {
		t.maxBuf = DefaultMaxBodyBuffer
	}
	return t, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0:
		default:
			return false
		}
	}
	return true
}

// idempotent reports whether method is idempotent (RFC 9110 section 9.2.2).
func idempotent(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// CloseIdleConnections closes the idle connections of the next RoundTripper, if it has such a
// method, as http.Client.CloseIdleConnections expects of its Transport.
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return
	}
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req through the pipeline, as described on Transport. It does not modify req;
// attempts are clones of it. A nil req fails with ErrNilRequest, sending nothing; a nil or
// zero Transport (one not made by NewTransport) fails every request with ErrNilTransport,
// closing its body and sending nothing.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	if t == nil || t.next == nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even when it sends nothing
		}
		return nil, ErrNilTransport
	}
	if t.priHeader != "" && len(req.Header[t.priHeader]) == 0 {
		if v, ok := priority.Carried(req.Context()); ok {
			// Every attempt is this shallow copy or a clone of it; req itself is not modified.
			withPriority := *req
			withPriority.Header = withHeader(req.Header, t.priHeader, []string{v})
			req = &withPriority
		}
	}
	c := &call{t: t, req: req}
	c.open = c.openBuf[:0]
	hasBody := req.Body != nil && req.Body != http.NoBody
	key := req.Header.Get(t.keyHeader)
	if key == "" && t.genKey && !idempotent(req.Method) {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		var q [34]byte         // an sf-string: the hex digits in double quotes
		q[0], q[33] = '"', '"'
		hex.Encode(q[1:33], b[:])
		key = string(q[:])
		c.setKey = key
	}
	c.replayable = (!hasBody || req.GetBody != nil) && (idempotent(req.Method) || key != "")

	// As p.Execute(ctx, c.attempt), without the method value's allocation.
	resp, err := compose.Apply(req.Context(), t.p, attempt, c)

	c.mu.Lock()
	c.done = true
	open, bodySent, last := c.open, c.bodySent, c.last
	c.open = nil
	c.mu.Unlock()
	for _, o := range open {
		if o != resp {
			o.Body.Close()
		}
	}
	if hasBody && !bodySent {
		req.Body.Close() // a RoundTripper closes the body, even when it sends nothing
	}
	if err == nil {
		if resp == nil {
			return nil, errors.New("leveehttp: pipeline returned a nil response and no error")
		}
		return resp, nil
	}
	if cerr := req.Context().Err(); cerr != nil {
		// The caller gave up (during a wait, say): its own cancellation comes back as that
		// cancellation, never as an earlier attempt's response.
		return nil, cerr
	}
	if errors.Is(err, ErrNotSent) && last != nil {
		err = last
	}
	return result(err)
}

// result turns the pipeline's error into RoundTrip's outcome.
func result(err error) (*http.Response, error) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return nil, ra
	}
	var se *StatusError
	if errors.As(err, &se) && se.Response != nil {
		return se.Response, nil
	}
	return nil, err
}

// call is the state of one RoundTrip across its attempts. Attempts abandoned by a time limiter
// may still run while the next one starts, hence the mutex.
type call struct {
	t          *Transport
	req        *http.Request
	setKey     string // generated idempotency key, "" when none is added
	replayable bool

	mu        sync.Mutex
	attempts  int
	bodySent  bool              // req.Body itself went to an attempt
	final     bool              // an attempt ended with ErrNotRetryable
	notBefore time.Time         // Retry-After of the last attempt
	last      error             // error of the last attempt sent, nil after a response
	open      []*http.Response  // successful responses not yet returned
	openBuf   [1]*http.Response // open's first element, within the call
	done      bool              // RoundTrip has returned

	// first is the first attempt's request when it goes out as a shallow copy of req with the
	// attempt number added to its header: part of the call, so that the copy allocates nothing
	// but the header. Only the first attempt writes it.
	first http.Request
}

// attempt is c.attempt with its context first, as compose.Apply runs it.
func attempt(ctx context.Context, c *call) (*http.Response, error) { return c.attempt(ctx) }

// attempt sends one attempt of c.req: the pipeline's innermost call.
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	c.mu.Lock()
	if c.done || c.final || c.attempts > 0 && !c.replayable {
		last := c.last
		c.mu.Unlock()
		return nil, &notSentError{last: last}
	}
	first := c.attempts == 0
	c.attempts++
	attempt := c.attempts
	if first {
		c.bodySent = true
	}
	notBefore := c.notBefore
	c.mu.Unlock()

	if !notBefore.IsZero() {
		if err := sleepUntil(ctx, notBefore); err != nil {
			return nil, err
		}
	}
	// The request runs under the caller's context, cancelled when the attempt's context ends
	// before the headers arrive, or when the body is closed: a time limiter cancels the
	// attempt's context as soon as the call returns, which must not cut the body short. A
	// first attempt under the caller's own context (no time limiter) and no key to add is the
	// caller's request itself, sent as it is, or a shallow copy of it whose header (a shallow
	// copy too) has the attempt number when the pipeline retries.
	out, cancel, stop, own := c.req, noCancel, noStop, false
	count := c.t.attHeader != "" && (!first || c.t.retries)
	if first && c.setKey == "" && ctx == c.req.Context() {
		if count {
			c.first = *c.req
			c.first.Header = withHeader(c.req.Header, c.t.attHeader, attemptValue(attempt))
			out = &c.first
		}
	} else {
		own = true
		var reqCtx context.Context
		reqCtx, cancel = context.WithCancel(c.req.Context())
		stop = context.AfterFunc(ctx, cancel)
		out = c.req.Clone(reqCtx)
		if !first && out.Body != nil && out.Body != http.NoBody {
			body, err := c.req.GetBody()
			if err != nil {
				stop()
				cancel()
				return nil, c.fail(&notRetryable{err: fmt.Errorf("leveehttp: GetBody: %w", err)})
			}
			out.Body = body
		}
		if c.setKey != "" {
			out.Header[c.t.keyHeader] = []string{c.setKey}
		}
		if count {
			out.Header[c.t.attHeader] = attemptValue(attempt)
		} else if c.t.attHeader != "" {
			delete(out.Header, c.t.attHeader)
		}
	}
	resp, err := c.t.next.RoundTrip(out)
	if !stop() {
		// The attempt is over (timed out, or the pipeline gave up): whatever came back is
		// nobody's.
		if resp != nil {
			drain(resp.Body, c.t.maxBuf)
		}
		cancel()
		return nil, ctx.Err()
	}
	if err != nil {
		cancel()
		if !c.replayable {
			err = &NotReplayableError{Method: method(c.req), URL: c.req.URL.Redacted(), Reason: c.notReplayableReason(), Err: err}
		}
		return nil, c.fail(err)
	}
	failure := c.t.failure(resp)
	if !failure && resp.StatusCode < 400 {
		if own {
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.last = nil
		if c.done {
			resp.Body.Close()
			return nil, ctx.Err()
		}
		c.open = append(c.open, resp)
		return resp, nil
	}
	buf := drain(resp.Body, c.t.maxBuf)
	cancel()
	resp.Body = io.NopCloser(bytes.NewReader(buf))
	resp.ContentLength = int64(len(buf))
	se := &StatusError{Response: resp, StatusCode: resp.StatusCode, Failure: failure}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		now := time.Now()
		if ra, ok := parseRetryAfterValues(resp.Header.Values("Retry-After"), now); ok {
			se.RetryAfter = ra
			se.RetryAt = now.Add(min(ra, c.t.maxRA))
		}
	}
	switch {
	case !failure || !c.replayable:
		return nil, c.fail(&notRetryable{err: se})
	case !se.RetryAt.IsZero():
		wait := se.RetryAt.Sub(time.Now())
		if dl, ok := c.req.Context().Deadline(); ok {
			if left := time.Until(dl); left < wait {
				return nil, c.fail(&RetryAfterError{RetryAfter: min(se.RetryAfter, c.t.maxRA), Remaining: left, Err: se})
			}
		}
		c.mu.Lock()
		c.notBefore = se.RetryAt
		c.mu.Unlock()
	}
	return nil, c.fail(se)
}

// noCancel and noStop stand for the context machinery of an attempt sent as the caller's
// request itself.
func noCancel()    {}
func noStop() bool { return true }

// withHeader returns a copy of h with key set to v: the values of h's other keys are shared,
// which a RoundTripper may do since it modifies none of them.
func withHeader(h http.Header, key string, v []string) http.Header {
	out := make(http.Header, len(h)+1)
	for k, vs := range h {
		out[k] = vs
	}
	out[key] = v
	return out
}

// attemptValues are the header values of the first attempts, shared by every request: a
// RoundTripper does not modify its request's header, and a small number needs no allocation.
var attemptValues = [...][]string{{"1"}, {"2"}, {"3"}, {"4"}, {"5"}, {"6"}, {"7"}, {"8"}, {"9"}, {"10"}}

// attemptValue returns the header value of attempt n (1 for the first).
func attemptValue(n int) []string {
	if n >= 1 && n <= len(attemptValues) {
		return attemptValues[n-1]
	}
	return []string{strconv.Itoa(n)}
}

// method returns req's method, "" read as GET.
func method(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

// notReplayableReason says why c.req cannot be sent again.
func (c *call) notReplayableReason() string {
	if b := c.req.Body; b != nil && b != http.NoBody && c.req.GetBody == nil {
		return "its body cannot be sent again (the request has no GetBody)"
	}
	return "its method " + method(c.req) + " is not idempotent and the request has no " + c.t.keyHeader
}

// fail records err as the outcome of the last attempt sent, and whether it was final.
func (c *call) fail(err error) error {
	c.mu.Lock()
	c.last = err
	if errors.Is(err, ErrNotRetryable) {
		c.final = true
	}
	c.mu.Unlock()
	return err
}

// drain reads at most limit bytes of body, closes it and returns what it read: a connection
// whose body was read to the end goes back to the pool, a longer one is closed.
func drain(body io.ReadCloser, limit int) []byte {
	buf, _ := io.ReadAll(io.LimitReader(body, int64(limit)))
	body.Close()
	return buf
}

// cancelBody releases the attempt's request context when the caller closes the body.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// sleepUntil waits until t, or returns ctx's error as soon as ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfterValues parses the Retry-After field of a response: exactly one value, as
// parseRetryAfter reads it. A field sent twice is malformed (RFC 9110 defines one value) and
// ignored, as is a list ("1, 2"), which is neither delay-seconds nor an HTTP date.
func parseRetryAfterValues(vs []string, now time.Time) (time.Duration, bool) {
	if len(vs) != 1 {
		return 0, false
	}
	return parseRetryAfter(strings.TrimSpace(vs[0]), now)
}

// parseRetryAfter parses a Retry-After value, delay-seconds or an HTTP date (RFC 9110 section
// 10.2.3), into the wait from now. It reports false for an absent, malformed or past value.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0, false
		}
		if s > int64((1<<63-1)/time.Second) {
			return 1<<63 - 1, true
		}
		return time.Duration(s) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := at.Sub(now); d > 0 {
		return d, true
	}
	return 0, false
}
