package payment

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strings"
	"time"
)

// Lowest and highest prices ListPrice returns, in cents.
const (
	MinPriceCents = 199
	MaxPriceCents = 9999
)

// ListPrice returns the price in cents the gateway quotes for sku: a value in
// [MinPriceCents, MaxPriceCents] derived from the SKU's FNV-1a hash, so the same SKU always has
// the same price, across runs and machines. Examples use it as the cached price of a fallback.
func ListPrice(sku string) int64 {
	h := fnv.New32a()
	h.Write([]byte(sku))
	return MinPriceCents + int64(h.Sum32()%(MaxPriceCents-MinPriceCents+1))
}

// invalidPrefix marks an order or SKU the gateway refuses as invalid, whatever its mode.
const invalidPrefix = "BAD"

// priceAnswer is the JSON body of GET /price.
type priceAnswer struct {
	SKU   string `json:"sku"`
	Cents int64  `json:"cents"`
}

func (g *Gateway) charge(w http.ResponseWriter, r *http.Request) {
	order := r.URL.Query().Get("order")
	g.serve(w, r, "charge", order, func() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("PAID:" + order))
	})
}

func (g *Gateway) price(w http.ResponseWriter, r *http.Request) {
	sku := r.URL.Query().Get("sku")
	g.serve(w, r, "price", sku, func() {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(priceAnswer{SKU: sku, Cents: ListPrice(sku)})
	})
}

// serve counts the request, calls the hook, and answers according to the mode read at arrival:
// ok writes the success answer with answerOK, other modes fail, delay or withhold it.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, endpoint, key string, answerOK func()) {
	mode := g.Mode()
	latency := g.Latency()
	seq := g.c.enter()
	defer g.c.leave()
	if hook := g.hook.Load(); hook != nil {
		(*hook)(RequestInfo{Endpoint: endpoint, Key: key, Mode: mode, Seq: seq, Arrived: time.Now()})
	}

	ctx := r.Context()
	switch {
	case key == "":
		http.Error(w, "missing "+keyName(endpoint), http.StatusBadRequest)
		return
	case strings.HasPrefix(key, invalidPrefix):
		http.Error(w, "invalid "+keyName(endpoint)+" "+key, http.StatusUnprocessableEntity)
		return
	}

	switch mode {
	case ModeOK:
	case ModeFail:
		g.giveUpIfDone(r)
		http.Error(w, "gateway unavailable", http.StatusServiceUnavailable)
		return
	case ModeSlow:
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			g.giveUpIfDone(r)
		}
	case ModeHang:
		<-ctx.Done()
		g.giveUpIfDone(r)
	default:
		http.Error(w, "unknown mode "+mode.String(), http.StatusInternalServerError)
		return
	}
	g.giveUpIfDone(r)
	answerOK()
}

// giveUpIfDone abandons the request without an answer when its context has ended, counting it
// as the client's doing unless the gateway is closing. Panicking with http.ErrAbortHandler is
// net/http's way to close the connection without writing a response; returning would let the
// server send an empty 200, which a client still connected during Close would take for an answer.
func (g *Gateway) giveUpIfDone(r *http.Request) {
	if r.Context().Err() == nil {
		return
	}
	if !g.closing.Load() {
		g.c.cancelled.Add(1)
	}
	panic(http.ErrAbortHandler)
}

func keyName(endpoint string) string {
	if endpoint == "price" {
		return "sku"
	}
	return "order"
}
