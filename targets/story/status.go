package story

import "context"

// A load counts its answers by HTTP status, as hey and vegeta do, yet the
// story interfaces answer in the story's words (a total, a grant) and no
// status. The status therefore travels beside the answer, in the
// request's context, the way net/http/httptrace's hooks do: the load asks
// for it, an HTTP target notes it, and every other store ignores it.

type statusKey struct{}

// WithStatus returns a copy of ctx whose HTTP answer's status is written
// to *code: the last answer's, when a request made several; left as it
// was when no HTTP answer came (a refused connection, a store that is not
// HTTP). Only the request's own goroutine may read *code, after it
// returns.
func WithStatus(ctx context.Context, code *int) context.Context {
	return context.WithValue(ctx, statusKey{}, code)
}

// NoteStatus writes code where ctx asks for it (WithStatus), if it does.
func NoteStatus(ctx context.Context, code int) {
	if p, ok := ctx.Value(statusKey{}).(*int); ok {
		*p = code
	}
}
