package engine

import (
	"errors"
	"fmt"
)

// SetMaxUncommitted records MaxUncommitted(n): n >= 1 elements taken from the input and not
// yet below the commit watermark.
func (s *Settings) SetMaxUncommitted(n int) error {
	if n < 1 || n > MaxWindow {
		return fmt.Errorf("MaxUncommitted must be in [1, %d], got %d", MaxWindow, n)
	}
	s.MaxUncommitted = n
	return nil
}

// CheckMaxUncommitted refuses MaxUncommitted without CommitWatermark, the watermark it bounds.
func (s *Settings) CheckMaxUncommitted() error {
	if s.MaxUncommitted > 0 && s.Watermark == nil {
		return errors.New("MaxUncommitted needs CommitWatermark")
	}
	return nil
}

// WaitBelow waits until element index may be taken under a bound of n elements taken and not
// yet below the watermark (index - Load() < n), and reports false when done was closed first.
func (w *Watermark) WaitBelow(index, n int, done <-chan struct{}) bool {
	for {
		if index-w.Load() < n {
			return true
		}
		w.mu.Lock()
		if index-w.Load() < n {
			w.mu.Unlock()
			return true
		}
		if w.wake == nil {
			w.wake = make(chan struct{})
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-done:
			return false
		}
	}
}
