// Package logtest is a log/slog handler that keeps the records it handles, for tests that
// assert what a pattern logs.
package logtest

import (
	"context"
	"log/slog"
	"sync"
)

// Record is one handled record: its level, message and attributes by key (each value as
// slog.Value.Any returns it: string, int64, float64, time.Duration, error, ...).
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// Handler keeps every record at or above its level. It is safe for concurrent use.
type Handler struct {
	level slog.Leveler
	mu    sync.Mutex
	recs  []Record
}

// New returns a Handler enabled from level on, and a logger writing to it.
func New(level slog.Leveler) (*Handler, *slog.Logger) {
	h := &Handler{level: level}
	return h, slog.New(h)
}

// Enabled reports whether level is at least the handler's level.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle keeps r.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Msg: r.Message, Attrs: make(map[string]any, r.NumAttrs())}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

// WithAttrs is not supported: the patterns never call it. It returns h.
func (h *Handler) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup is not supported: the patterns never call it. It returns h.
func (h *Handler) WithGroup(string) slog.Handler { return h }

// Records returns a copy of the records kept so far, in the order they were handled.
func (h *Handler) Records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Record(nil), h.recs...)
}
