package clock

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// clocks are the two kinds a Chan adapts to; every behaviour below holds on
// both.
func clocks() []struct {
	name string
	c    func() Clock
} {
	return []struct {
		name string
		c    func() Clock
	}{
		{"real", func() Clock { return Real{} }},
		{"virtual", func() Clock { return NewVirtual(epoch) }},
	}
}

// Values come out in the order they went in, through a buffer and through
// senders that had to wait for room.
func TestChanFIFO(t *testing.T) {
	for _, ck := range clocks() {
		for _, capacity := range []int{0, 1, 3} {
			t.Run(ck.name, func(t *testing.T) {
				c := ck.c()
				ch := NewChan[int](c, capacity)
				var got []int
				err := Run(t.Context(), c, 2, func(ctx context.Context, i int) {
					if i == 0 {
						for v := range 10 {
							if err := ch.Send(ctx, v); err != nil {
								t.Error(err)
							}
						}
						ch.Close()
						return
					}
					for {
						v, err := ch.Recv(ctx)
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil {
							t.Error(err)
							return
						}
						got = append(got, v)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
					t.Errorf("capacity %d: received %v, want %v", capacity, got, want)
				}
			})
		}
	}
}

// Close wakes blocked receivers and senders with ErrClosed; values sent
// before it are still received; a later Send fails.
func TestChanClose(t *testing.T) {
	for _, ck := range clocks() {
		t.Run(ck.name, func(t *testing.T) {
			c := ck.c()
			empty := NewChan[int](c, 0)
			full := NewChan[int](c, 1)
			buffered := NewChan[int](c, 2)
			errs := make([]error, 2)
			err := Run(t.Context(), c, 3, func(ctx context.Context, i int) {
				switch i {
				case 0:
					_, errs[i] = empty.Recv(ctx)
				case 1:
					_ = full.Send(ctx, 1)
					errs[i] = full.Send(ctx, 2) // no room: waits
				case 2:
					_ = c.Sleep(ctx, 10*time.Millisecond) // let the others block
					empty.Close()
					full.Close()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range errs {
				if !errors.Is(e, ErrClosed) {
					t.Errorf("participant %d: %v, want ErrClosed", i, e)
				}
			}
			ctx := t.Context()
			_ = buffered.Send(ctx, 7)
			buffered.Close()
			buffered.Close() // twice is fine
			if v, err := buffered.Recv(ctx); v != 7 || err != nil {
				t.Errorf("Recv after Close = %d, %v; want the buffered 7", v, err)
			}
			if _, err := buffered.Recv(ctx); !errors.Is(err, ErrClosed) {
				t.Errorf("Recv on a drained closed channel = %v, want ErrClosed", err)
			}
			if err := buffered.Send(ctx, 8); !errors.Is(err, ErrClosed) {
				t.Errorf("Send on a closed channel = %v, want ErrClosed", err)
			}
		})
	}
}

// A context bounds only waiting: a ready value is taken even when the
// context is done, a blocked call gives up with the context's error.
func TestChanContext(t *testing.T) {
	for _, ck := range clocks() {
		t.Run(ck.name, func(t *testing.T) {
			c := ck.c()
			ch := NewChan[string](c, 1)
			done, cancel := context.WithCancel(t.Context())
			cancel()
			if err := ch.Send(t.Context(), "ready"); err != nil {
				t.Fatal(err)
			}
			err := Run(t.Context(), c, 1, func(context.Context, int) {
				if v, err := ch.Recv(done); v != "ready" || err != nil {
					t.Errorf("Recv of a ready value with a done context = %q, %v", v, err)
				}
				if _, err := ch.Recv(done); !errors.Is(err, context.Canceled) {
					t.Errorf("Recv that would wait, done context = %v, want context.Canceled", err)
				}
				_ = ch.Send(done, "fills the buffer")
				if err := ch.Send(done, "no room"); !errors.Is(err, context.Canceled) {
					t.Errorf("Send that would wait, done context = %v, want context.Canceled", err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// On a virtual clock a blocked receiver wakes at the instant of the send,
// and a sender woken by its context is not delivered later.
func TestChanVirtualWakeups(t *testing.T) {
	v := NewVirtual(epoch)
	ch := NewChan[int](v, 0)
	sctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	gaveUp := false
	var gotAt time.Duration
	var got []int
	err := v.Run(t.Context(), 3, func(ctx context.Context, i int) {
		switch i {
		case 0:
			for range 2 {
				x, err := ch.Recv(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				got = append(got, x)
				gotAt = v.Now().Sub(epoch)
				if len(got) == 1 {
					_ = v.Sleep(ctx, time.Minute) // p1's second send waits meanwhile
				}
			}
		case 1:
			_ = v.Sleep(ctx, time.Second)
			_ = ch.Send(ctx, 1)
			if err := ch.Send(sctx, 99); !errors.Is(err, context.Canceled) {
				t.Errorf("abandoned Send = %v, want context.Canceled", err)
			}
			gaveUp = true
		case 2:
			_ = v.Sleep(ctx, 30*time.Second)
			cancel() // p1 wakes when the context's callback has run
			for !gaveUp {
				_ = v.Sleep(ctx, time.Microsecond)
			}
			_ = ch.Send(ctx, 2)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("received %v, want [1 2] (the abandoned 99 must not arrive)", got)
	}
	if gotAt != 61*time.Second {
		t.Errorf("second value received at %v, want 1m1s", gotAt)
	}
}

// From outside the participants, between runs, Send and Recv run as runs
// of their own and reach a long-lived participant.
func TestChanVirtualFromOutside(t *testing.T) {
	v := NewVirtual(epoch)
	requests := NewChan[int](v, 0)
	replies := NewChan[int](v, 0)
	v.Go(func() { // starts with the first run
		for {
			x, err := requests.Recv(context.Background())
			if err != nil {
				replies.Close()
				return
			}
			_ = v.Sleep(context.Background(), time.Second)
			_ = replies.Send(context.Background(), 2*x)
		}
	})
	ctx := t.Context()
	for x := range 3 {
		if err := requests.Send(ctx, x); err != nil {
			t.Fatal(err)
		}
		got, err := replies.Recv(ctx)
		if err != nil || got != 2*x {
			t.Fatalf("reply to %d = %d, %v; want %d", x, got, err, 2*x)
		}
	}
	if got := v.Now().Sub(epoch); got != 3*time.Second {
		t.Errorf("Now = %v, want 3s", got)
	}
	requests.Close()
	if _, err := replies.Recv(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after the server stopped = %v, want ErrClosed", err)
	}
}

func TestNewChanNegativeCapacity(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewChan(-1) did not panic")
		}
	}()
	NewChan[int](Real{}, -1)
}
