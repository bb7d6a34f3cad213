package chans

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReceiveSendClosed(t *testing.T) {
	done := make(chan struct{})
	in := make(chan int, 1)
	in <- 7
	v, ok := Receive(in, done)
	assert.True(t, ok)
	assert.Equal(t, 7, v)

	out := make(chan int, 1)
	assert.True(t, Send(out, 8, done), "a ready channel takes the value")
	assert.False(t, Closed(done))

	close(done)
	assert.True(t, Closed(done))
	assert.False(t, Send(out, 9, done), "a full channel and a closed done: gives up")
	_, ok = Receive(in, done)
	assert.False(t, ok, "an empty input and a closed done: gives up")

	room := make(chan int, 1)
	assert.False(t, Send(room, 10, done), "a closed done wins over a channel with room")
	assert.Equal(t, 0, len(room))

	close(in)
	_, ok = Receive(in, make(chan struct{}))
	assert.False(t, ok, "a closed input ends the stream")
}

func TestSendOrGivesUpWhenEitherDoneIsClosed(t *testing.T) {
	open := make(chan struct{})
	closed := make(chan struct{})
	close(closed)
	out := make(chan int, 1)
	assert.True(t, SendOr(out, 1, open, open), "a channel with room takes the value")
	assert.Equal(t, 1, <-out)
	assert.False(t, SendOr(out, 2, closed, open), "the first done closed: gives up")
	assert.False(t, SendOr(out, 3, open, closed), "the second done closed: gives up")
	assert.Equal(t, 0, len(out))
	out <- 4
	assert.False(t, SendOr(out, 5, open, closed), "a full channel and a closed done: gives up")
	assert.Equal(t, 4, <-out)
}
