package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

func TestHidePassword(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"redis://u:secret@h:1/0", "redis://u:…@h:1/0"},
		{"redis://h:1/0", "redis://h:1/0"},
		{"redis://u@h:1/0", "redis://u@h:1/0"},
		{"postgres://u:se/cr@t@h/db", "postgres://u:…@h/db"},
		{"u:secret@h", "u:…@h"},
		{"u:secret@://", "u:…@://"},
		{"u:secret@redis://h", "u:…@redis://h"},
		{"://u:secret@h", ":…@h"}, // no scheme: more hidden, never less
	}
	for _, tt := range tests {
		if got := HidePassword(tt.raw); got != tt.want {
			t.Errorf("HidePassword(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// A library's message may quote a cut piece of the URL, which hideIn
// hides all the same.
func TestHideIn(t *testing.T) {
	tests := []struct{ msg, raw, want string }{
		{`invalid URL path: /0/u:pw@`, "redis:///0/u:pw@", `invalid URL path: /0/u:…@`},
		{`invalid database number: "u:pw@"`, "redis://:/u:pw@", `invalid database number: "u:…@"`},
		{`missing "=" after "u:pw@"`, "u:pw@ @0=", `missing "=" after "u:…@"`},
		{`invalid port "x"`, "redis://u:pw@h:x", `invalid port "x"`},
	}
	for _, tt := range tests {
		if got := hideIn(tt.msg, tt.raw, HidePassword); got != tt.want {
			t.Errorf("hideIn(%q, %q) = %q, want %q", tt.msg, tt.raw, got, tt.want)
		}
	}
}

func TestParseURLAndCheckAddress(t *testing.T) {
	if _, err := ParseURL("redis://u:secret@h:1/%zz"); err == nil || errors.As(err, new(*url.Error)) {
		t.Errorf("ParseURL error = %v, want the reason alone", err)
	}
	tests := []struct{ raw, want string }{
		{"redis://h:6379/0", ""},
		{"redis://h/0", ""},
		{"redis://h:0/0", "port 0 is outside 1-65535"},
		{"redis://h:99999/0", "port 99999 is outside 1-65535"},
		{"redis://[::1]:6379/0", ""},
		{"redis://:::", `host "::": write an IPv6 address in brackets, such as [::1]:6379`},
		{"redis://::1:6379/0", `host "::1": write an IPv6 address in brackets, such as [::1]:6379`},
	}
	for _, tt := range tests {
		u, err := ParseURL(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := CheckAddress(u); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckAddress(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	if got, want := Printable("a\nb\x00c\xff"), "a?b?c\uFFFD"; got != want {
		t.Errorf("Printable = %q, want %q", got, want)
	}
}

func TestUnreachable(t *testing.T) {
	errSentinel := errors.New("kind unreachable")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	dns := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nohost"}}
	wrapped := fmt.Errorf("driver words: %w", dns)
	tests := []struct {
		name        string
		bare        bool
		err         error
		want        string
		unreachable bool
	}{
		{"refused", false, refused, "kind at h:1: connection refused", true},
		{"timeout", false, context.DeadlineExceeded, "kind at h:1: no answer within 2s", true},
		{"net error, whole", false, wrapped, "kind at h:1: driver words: " + dns.Error(), true},
		{"net error, bare", true, wrapped, "kind at h:1: " + dns.Error(), true},
		{"an answer", false, errors.New("auth failed"), "kind at h:1: auth failed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Server{Kind: "kind", Addr: "h:1", ErrUnreachable: errSentinel, BareNetErrors: tt.bare}
			err := s.Unreachable(tt.err, 2*time.Second)
			if err.Error() != tt.want {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if errors.Is(err, errSentinel) != tt.unreachable || !errors.Is(err, tt.err) {
				t.Errorf("error %v: wraps the sentinel %t, want %t; must wrap %v", err, errors.Is(err, errSentinel), tt.unreachable, tt.err)
			}
		})
	}
}

// fakePool is a driver's pool: its size and whether it was closed.
type fakePool struct {
	size   int
	closed atomic.Bool
}

func TestPoolPrepare(t *testing.T) {
	var taken, released atomic.Int64
	fail := errors.New("no connection")
	var failTake atomic.Bool
	d := Driver[*fakePool]{
		Open: func(_ context.Context, size int) (*fakePool, error) { return &fakePool{size: size}, nil },
		Take: func(context.Context, *fakePool) (func(), error) {
			taken.Add(1)
			if failTake.Load() {
				return nil, fail
			}
			return func() { released.Add(1) }, nil
		},
		Close: func(p *fakePool) error { p.closed.Store(true); return nil },
	}
	first := &fakePool{size: 4}
	pool := NewPool(Server{Kind: "kind", Addr: "h:1"}, d, first, 4)

	if err := pool.Prepare(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	if pool.Get() != first || taken.Load() != 3 || released.Load() != 3 {
		t.Errorf("Prepare(3) on a pool of 4: replaced %t, %d taken, %d released; want the same pool, 3 and 3",
			pool.Get() != first, taken.Load(), released.Load())
	}
	if err := pool.Prepare(t.Context(), 10); err != nil {
		t.Fatal(err)
	}
	if got := pool.Get(); got.size != 10 || !first.closed.Load() {
		t.Errorf("Prepare(10) on a pool of 4: pool of %d, old one closed %t; want 10, true", got.size, first.closed.Load())
	}
	failTake.Store(true)
	err := pool.Prepare(t.Context(), 2)
	if !errors.Is(err, fail) || err.Error() != "kind at h:1: prepare 2 connections: no connection\nno connection" {
		t.Errorf("Prepare with failing takes = %q", err)
	}
	if err := pool.Close(); err != nil || !pool.Get().closed.Load() {
		t.Errorf("Close = %v, closed %t", err, pool.Get().closed.Load())
	}
}

func TestPause(t *testing.T) {
	ran := false
	start := time.Now()
	Pause(t.Context(), clock.Real{}, func(context.Context) { ran = true }, 10*time.Millisecond)
	if !ran || time.Since(start) < 10*time.Millisecond {
		t.Errorf("Pause: hook ran %t after %v, want true after at least 10ms", ran, time.Since(start))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start = time.Now()
	Pause(ctx, clock.Real{}, nil, time.Hour)
	if time.Since(start) > 10*time.Second {
		t.Error("Pause did not end with its context")
	}
}

// On a virtual clock the pause moves virtual time by the think time and
// takes none of its own.
func TestPauseVirtual(t *testing.T) {
	v := clock.NewVirtual(time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC))
	before := v.Now()
	real := time.Now()
	Pause(t.Context(), v, nil, time.Hour)
	if got := v.Now().Sub(before); got != time.Hour || time.Since(real) > time.Minute {
		t.Errorf("virtual time moved %v in %v of real time; want an hour in a moment", got, time.Since(real))
	}
}
