package burst

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Bounds and names of what goes over the wire.
const (
	// MaxAnswerBytes bounds an answer's body.
	MaxAnswerBytes = 1 << 20
	// MaxHeaderBytes bounds an answer's status line and headers together
	// on a whole HTTP/1.1 request's connection.
	MaxHeaderBytes = 64 << 10
	// MaxWireBody bounds a request's body: an HTTP/2 burst sends every
	// body before the release, and all of a connection's bodies must fit
	// the first flow-control window the protocol grants (64 KiB), which a
	// burst does not wait to see grow.
	MaxWireBody = 16 << 10
	// UserAgent names racelab to the service, unless a request's own
	// headers say otherwise.
	UserAgent = "racelab"
	// ArrivalHeader carries, on an answer of racelab serve, the instant the
	// request was complete at the server, in Unix nanoseconds.
	ArrivalHeader = "Racelab-Arrival"
)

// Wire is one request as it goes out, prepared by the caller: its
// method, its request target (path and query below the service's host,
// escaped as it is to be sent), its own headers, which go over the pool's,
// and its body (at most MaxWireBody).
type Wire struct {
	Method string
	Target string
	Header http.Header
	Body   []byte
}

// sets says the request's own headers set name: the default for it then
// stays out.
func (w Wire) sets(name string) bool {
	_, ok := w.Header[name]
	return ok
}

// Answer is what the service answered a Wire, read whole, whichever way it
// went. Arrival is the instant the service says the request was complete
// (ArrivalHeader), zero when it says none; Early says the answer came
// before the request's final part was sent: the burst was not
// synchronized.
type Answer struct {
	Status  int
	Header  http.Header
	Body    []byte
	Arrival time.Time
	Early   bool
}

// answerOf is an answer read off the wire, its arrival read.
func answerOf(status int, h http.Header, body []byte) Answer {
	return Answer{Status: status, Header: h, Body: body, Arrival: ArrivalOf(h)}
}

// errTooLarge is an answer whose body is over MaxAnswerBytes.
var errTooLarge = fmt.Errorf("answer over %d bytes", MaxAnswerBytes)

// readBody reads an answer's body, refusing one over MaxAnswerBytes.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxAnswerBytes {
		return nil, errTooLarge
	}
	return body, nil
}

// ArrivalOf reads ArrivalHeader off h; zero when absent or not a positive
// number.
func ArrivalOf(h http.Header) time.Time {
	v := h.Get(ArrivalHeader)
	if v == "" {
		return time.Time{}
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
