package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits of the options that size what an operator allocates up front, so that a mistyped
// value is refused rather than exhausting memory.
const (
	MaxConcurrency = 1 << 16 // Concurrency: workers
	MaxWindow      = 1 << 16 // Window: reorder slots
	MaxBuffer      = 1 << 20 // Buffer: capacity of the output channel
)

// DefaultBuffer is the capacity of a per-emission operator's output channel when no Buffer
// option is given. An unbuffered output costs two goroutine switches per element, which on a
// cheap call are most of the stage's cost; with room for 64 results the stage and its consumer
// each run for many elements at a time. 64 results are a small memory bound, and backpressure
// still reaches the calls once they are out.
const DefaultBuffer = 64

// Settings is what the per-emission options of one operator amount to. Its zero value is
// not the default: start from Defaults.
type Settings struct {
	Concurrency     int
	Window          int // 0: Concurrency
	Buffer          int // capacity of the output channel
	Unordered       bool
	StopOnError     bool
	ContinueOnError bool
	Fallback        any           // func(context.Context, V, error) (R, error), checked by Fallback
	Pause           bool          // PauseWhileOpen given
	MaxPause        time.Duration // its bound, 0 for none
	Watermark       *Watermark    // CommitWatermark, nil without it
	MaxUncommitted  int           // MaxUncommitted: elements taken and not below Watermark, 0 for no bound
	Key             any           // OrderByKey's or OrderByKeyAndInput's *Key[V, K], checked by Keys; nil without either
	KeyInputOrder   bool          // the Key is OrderByKeyAndInput's: results in input order too
	keyOptions      uint8         // keyByOption | keyAndInputOption: which of the two were given
}

const (
	keyByOption       uint8 = 1 << iota // OrderByKey
	keyAndInputOption                   // OrderByKeyAndInput
)

// Ordered reports whether results are delivered in input order: by default and with
// OrderByKeyAndInput, not with Unordered, nor with OrderByKey, which orders them by key only.
func (s *Settings) Ordered() bool { return !s.Unordered && (s.Key == nil || s.KeyInputOrder) }

// Defaults returns the settings of an operator given no option.
func Defaults() Settings { return Settings{Concurrency: 1, Buffer: DefaultBuffer} }

// The setters below check one option's value and record it. Their errors name the option and
// the allowed range; the caller prefixes them with its package's name.

// SetConcurrency records Concurrency(n).
func (s *Settings) SetConcurrency(n int) error {
	if n < 1 || n > MaxConcurrency {
		return fmt.Errorf("Concurrency must be in [1, %d], got %d", MaxConcurrency, n)
	}
	s.Concurrency = n
	return nil
}

// SetWindow records Window(n); Check compares it with the concurrency once every option is in.
func (s *Settings) SetWindow(n int) error {
	if n < 1 || n > MaxWindow {
		return fmt.Errorf("Window must be in [1, %d], got %d", MaxWindow, n)
	}
	s.Window = n
	return nil
}

// SetBuffer records Buffer(n).
func (s *Settings) SetBuffer(n int) error {
	if n < 0 || n > MaxBuffer {
		return fmt.Errorf("Buffer must be in [0, %d], got %d", MaxBuffer, n)
	}
	s.Buffer = n
	return nil
}

// SetPauseWhileOpen records PauseWhileOpen(maxWait).
func (s *Settings) SetPauseWhileOpen(maxWait time.Duration) error {
	if maxWait < 0 {
		return fmt.Errorf("PauseWhileOpen maxWait must be >= 0 (0: no bound), got %v", maxWait)
	}
	s.Pause, s.MaxPause = true, maxWait
	return nil
}

// SetWatermark records CommitWatermark(w); the operator binds w once it starts nothing else
// can refuse it.
func (s *Settings) SetWatermark(w *Watermark) error {
	switch {
	case w == nil:
		return errors.New("CommitWatermark needs a *Watermark from NewWatermark, got nil")
	case w.open == nil:
		return errors.New("CommitWatermark needs a *Watermark from NewWatermark, got a zero Watermark")
	}
	s.Watermark = w
	return nil
}

// SetFallback records WithFallback(fn); isNil tells whether fn is a nil function.
func (s *Settings) SetFallback(fn any, isNil bool) error {
	if isNil {
		return errors.New("WithFallback needs a function, got nil")
	}
	s.Fallback = fn
	return nil
}

// Check checks what no single option can: the options that depend on one another.
func (s *Settings) Check() error {
	switch {
	// OrderByKey with Unordered is OrderByKey: it already sends the Results of different keys
	// as their calls end. Window with Unordered is a bound that unordered output always keeps:
	// it takes no more than Concurrency elements ahead of those sent, and the Window is at least
	// that. Only options that contradict one another are refused.
	case s.keyOptions == keyByOption|keyAndInputOption:
		return errors.New("set OrderByKey or OrderByKeyAndInput, not both")
	case s.KeyInputOrder && s.Unordered:
		return errors.New("set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end")
	case s.Window != 0 && s.Window < s.Concurrency:
		return fmt.Errorf("Window must be in [%d, %d] (at least Concurrency), got %d", s.Concurrency, MaxWindow, s.Window)
	case s.StopOnError && s.ContinueOnError:
		return errors.New("set StopOnError or ContinueOnError, not both")
	}
	return nil
}

// Fallback returns the WithFallback function of s as the type the operator op needs, or nil.
func Fallback[V, R any](op string, s *Settings) (func(context.Context, V, error) (R, error), error) {
	if s.Fallback == nil {
		return nil, nil
	}
	fb, ok := s.Fallback.(func(context.Context, V, error) (R, error))
	if !ok {
		return nil, fmt.Errorf("%s needs a WithFallback function of type %T, got %T",
			op, (func(context.Context, V, error) (R, error))(nil), s.Fallback)
	}
	return fb, nil
}
