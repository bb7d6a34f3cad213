package leveegrpc

import (
	"context"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// DefaultRetryBufferSize is the number of bytes of request messages StreamClientInterceptor
// keeps per stream, for replay, until the stream commits: gRPC's own per-RPC retry buffer
// (grpc.MaxRetryRPCBufferSize, 256 KiB by default). A grpc.MaxRetryRPCBufferSize call option
// sets another bound for the calls it is given to.
const DefaultRetryBufferSize = 256 * 1024

// replayStream is the stream StreamClientInterceptor returns when its pipeline may retry:
// until the stream commits (gRPC's retry design, A6: the first response header arrives, or
// the messages sent exceed the retry buffer), it keeps the messages sent, and an attempt that
// ends before committing ends p's attempt with its status, so that p's retry may open another
// stream and replay them. The pipeline runs on its own goroutine, which ends when the stream
// commits or p gives up.
type replayStream struct {
	ctx   context.Context
	limit int

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when cur, committed or done change
	ready     chan struct{} // closed when the first attempt is open, or p has given up
	readyOnce sync.Once
	cur       grpc.ClientStream // the open attempt's stream; nil between attempts
	last      grpc.ClientStream // the last attempt's stream, for its trailer
	committed bool
	overflow  bool // the buffer exceeded limit while no attempt was open
	done      bool
	final     error // the caller's error when p gave up
	buf       []any
	size      int
	closed    bool // CloseSend was called
}

// retryBufferSize returns the retry buffer bound that opts set, or DefaultRetryBufferSize.
func retryBufferSize(opts []grpc.CallOption) int {
	limit := DefaultRetryBufferSize
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.MaxRetryRPCBufferSizeCallOption:
			limit = o.MaxRetryRPCBufferSize
		case *grpc.MaxRetryRPCBufferSizeCallOption:
			limit = o.MaxRetryRPCBufferSize
		}
	}
	return limit
}

// notify wakes the goroutines waiting for a change; rs.mu is held.
func (rs *replayStream) notify() {
	close(rs.changed)
	rs.changed = make(chan struct{})
}

// attempt runs one attempt on the stream cs that open returned: it replays the messages sent
// so far and waits for the stream to commit (nil) or to end before committing (its status).
func (rs *replayStream) attempt(actx context.Context, cs grpc.ClientStream) error {
	committed := rs.replay(cs)
	rs.readyOnce.Do(func() { close(rs.ready) })
	if committed {
		return nil
	}

	// Header blocks until the server's header arrives (the stream commits) or the stream
	// ends without one (a trailers-only answer, or the context's end).
	md, _ := cs.Header()
	rs.mu.Lock()
	if md != nil || rs.committed {
		rs.committed = true
		rs.notify()
		rs.mu.Unlock()
		return nil
	}
	rs.cur = nil // SendMsg buffers without sending until the next attempt
	rs.mu.Unlock()
	// The stream has ended: RecvMsg returns its status without reading a message.
	err := cs.RecvMsg(&struct{}{})
	if err == io.EOF {
		// The server ended the stream with OK and no response: a success, committed.
		rs.mu.Lock()
		rs.cur, rs.committed = cs, true
		rs.notify()
		rs.mu.Unlock()
		return nil
	}
	return attemptError(actx, err, cs.Trailer())
}

// replay sends cs the messages sent so far (and CloseSend when the caller called it), makes
// it the open attempt and reports whether the stream has committed. rs.mu is held
// meanwhile and released on every way out, a panic in cs's SendMsg included, so that p's
// outcome can still be recorded (finish).
func (rs *replayStream) replay(cs grpc.ClientStream) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, m := range rs.buf {
		if cs.SendMsg(m) != nil {
			break // the stream has ended: its status is read below
		}
	}
	if rs.closed {
		_ = cs.CloseSend()
	}
	rs.cur, rs.last = cs, cs
	if rs.overflow {
		rs.committed = true
	}
	rs.notify()
	return rs.committed
}

// finish records p's outcome: the stream it returned, or the error the caller receives.
func (rs *replayStream) finish(cs grpc.ClientStream, err error) {
	if err == nil && cs == nil {
		err = status.Error(codes.Internal, "leveegrpc: pipeline returned a nil stream and no error")
	}
	rs.mu.Lock()
	if err != nil {
		rs.done, rs.final, rs.cur = true, err, nil
	} else {
		rs.cur, rs.committed = cs, true // cs is a fallback's when no attempt committed
	}
	rs.buf = nil
	rs.notify()
	rs.mu.Unlock()
	rs.readyOnce.Do(func() { close(rs.ready) })
}

// wait returns the committed stream, or the error p gave up with.
func (rs *replayStream) wait() (grpc.ClientStream, error) {
	for {
		rs.mu.Lock()
		if rs.committed {
			cs := rs.cur
			rs.mu.Unlock()
			return cs, nil
		}
		if rs.done {
			err := rs.final
			rs.mu.Unlock()
			return nil, err
		}
		ch := rs.changed
		rs.mu.Unlock()
		<-ch
	}
}

// RecvMsg waits for the stream to commit, then receives from it; when p gave up before it
// committed, RecvMsg returns p's error.
func (rs *replayStream) RecvMsg(m any) error {
	cs, err := rs.wait()
	if err != nil {
		return err
	}
	return cs.RecvMsg(m)
}

// Header waits for the stream to commit and returns its header; nil, nil when p gave up (the
// error is RecvMsg's, as gRPC's Header does).
func (rs *replayStream) Header() (metadata.MD, error) {
	cs, err := rs.wait()
	if err != nil {
		return nil, nil
	}
	return cs.Header()
}

// Trailer returns the trailer of the committed stream or of the last attempt.
func (rs *replayStream) Trailer() metadata.MD {
	rs.mu.Lock()
	cs := rs.cur
	if cs == nil {
		cs = rs.last
	}
	rs.mu.Unlock()
	if cs == nil {
		return nil
	}
	return cs.Trailer()
}

// Context returns the open attempt's stream context, or the call's context between attempts.
func (rs *replayStream) Context() context.Context {
	rs.mu.Lock()
	cs := rs.cur
	if cs == nil {
		cs = rs.last
	}
	rs.mu.Unlock()
	if cs == nil {
		return rs.ctx
	}
	return cs.Context()
}

// SendMsg sends m on the open attempt and keeps it for replay until the stream commits.
// Before the stream commits, an attempt that has ended takes no error to the caller: m is
// replayed on the next attempt. A message that takes the kept messages past the buffer bound
// commits the stream (a message of no proto size does at once). After p gave up, SendMsg
// returns io.EOF and RecvMsg the error.
func (rs *replayStream) SendMsg(m any) error {
	rs.mu.Lock()
	if rs.committed {
		cs := rs.cur
		rs.mu.Unlock()
		return cs.SendMsg(m)
	}
	if rs.done {
		rs.mu.Unlock()
		return io.EOF
	}
	defer rs.mu.Unlock()
	size := rs.limit + 1
	if pm, ok := m.(proto.Message); ok {
		size = proto.Size(pm)
	}
	if rs.size+size > rs.limit {
		if rs.cur != nil {
			rs.committed, rs.buf = true, nil
			rs.notify()
			return rs.cur.SendMsg(m)
		}
		rs.overflow = true
	}
	rs.buf = append(rs.buf, m)
	rs.size += size
	if rs.cur != nil {
		if err := rs.cur.SendMsg(m); err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// CloseSend closes the sending side of the open attempt and of every attempt after it.
func (rs *replayStream) CloseSend() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closed = true
	if rs.cur != nil && !rs.done {
		return rs.cur.CloseSend()
	}
	return nil
}
