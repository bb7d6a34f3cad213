package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxBody bounds how much of an answer the client reads; the gateway's answers are tiny.
const maxBody = 64 << 10

// Client calls a Gateway over HTTP. It is safe for concurrent use. Its calls honour their
// context: when it ends first, they return its error (context.Canceled or
// context.DeadlineExceeded) as is, and the gateway sees the request's context end.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client for the gateway at baseURL (as Gateway.URL returns). It owns its
// transport, with no proxy and enough idle connections per host for the examples' concurrency;
// Close releases them.
func NewClient(baseURL string) *Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{Transport: tr}}
}

// Close closes the client's idle connections, ending the goroutines that keep them. Calls in
// progress are not affected, and the client stays usable.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Charge pays orderID and returns the gateway's receipt, "PAID:" followed by the order id.
// Errors: *GatewayError (errors.Is ErrGateway) for a 5xx answer or an unreachable gateway,
// *InvalidOrderError (errors.Is ErrInvalidOrder) for a 4xx answer, or ctx's error.
func (c *Client) Charge(ctx context.Context, orderID string) (string, error) {
	body, err := c.do(ctx, http.MethodPost, "/charge?"+url.Values{"order": {orderID}}.Encode(), orderID)
	if err != nil {
		return "", err
	}
	receipt := string(body)
	if receipt != "PAID:"+orderID {
		return "", &GatewayError{Status: http.StatusOK, Err: fmt.Errorf("unexpected receipt %q", receipt)}
	}
	return receipt, nil
}

// Price returns the gateway's price of sku in cents, ListPrice(sku) when the gateway answers.
// Errors are those of Charge, the SKU taking the place of the order id.
func (c *Client) Price(ctx context.Context, sku string) (int64, error) {
	body, err := c.do(ctx, http.MethodGet, "/price?"+url.Values{"sku": {sku}}.Encode(), sku)
	if err != nil {
		return 0, err
	}
	var a priceAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return 0, &GatewayError{Status: http.StatusOK, Err: fmt.Errorf("decoding price: %w", err)}
	}
	if a.SKU != sku {
		return 0, &GatewayError{Status: http.StatusOK, Err: fmt.Errorf("price of sku %q for %q", a.SKU, sku)}
	}
	return a.Cents, nil
}

// do sends one request and returns the body of a 200 answer, or the error the answer means.
func (c *Client) do(ctx context.Context, method, pathQuery, key string) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+pathQuery, nil)
	if err != nil {
		return nil, &GatewayError{Err: err}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, transportError(ctx, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, &InvalidOrderError{Order: key, Status: resp.StatusCode}
	default:
		return nil, &GatewayError{Status: resp.StatusCode}
	}
}

// transportError returns ctx's own error when ctx has ended, since then the failure is the
// caller's doing and resilience patterns must be able to tell it by identity (the transport may
// report it wrapped, or as the context's cause); any other failure is the gateway's.
func transportError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is the client's business, not the error's
	}
	return &GatewayError{Err: err}
}
