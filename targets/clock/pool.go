package clock

import "iter"

// pool is the goroutines a Virtual keeps, while Reuse is on, to play
// participants: a run of ten participants then starts no goroutine, and
// above all grows no stack. A fresh goroutine starts on a 2 KB stack that a
// store's request outgrows twice, copying it each time; in a virtual trial
// of ten hits that copying was a third of the time (issue 24). A kept
// goroutine keeps the stack it grew.
type pool struct {
	on   int       // Reuse calls not yet stopped
	idle []*worker // goroutines waiting for a participant to play
}

// worker is one goroutine that plays participants, one after another
// while it is kept. It runs as a coroutine (iter.Pull): the goroutine that
// drives a Run switches to it with resume to give its participant the
// turn, and it switches back with yield when its participant waits or
// returns. A switch hands the thread over directly (the runtime's
// coroswitch), where a channel hand-off would make the next goroutine
// runnable, wake an idle P to look for it (runtime.wakep → futexwakeup)
// and park the sender: most of a virtual trial's cost before (issue 24).
type worker struct {
	resume func() (struct{}, bool) // run the worker until it yields or ends
	yield  func(struct{}) bool     // hand control back to whoever resumed it
	end    func()                  // end an idle worker: its yield returns false
	p      *participant            // the participant to play from the next resume
	// broken says its participant did not return: it called
	// runtime.Goexit (as t.FailNow does) or panicked, and the goroutine
	// is unwinding (see finish).
	broken bool
}

// Reuse keeps the goroutines of participants that return, to play the
// participants of later runs, until stop is called; a store that plays
// many runs of many short participants (a trial after another) runs
// faster for it. Without Reuse, every participant gets a goroutine of its
// own that ends with it. stop lets the kept goroutines end; those playing
// a participant still (a store's object parked on its mailbox) end when it
// returns. Calls nest: the goroutines are kept until every stop is called.
// stop must not be called while a Run is in progress.
func (v *Virtual) Reuse() (stop func()) {
	v.mu.Lock()
	v.workers.on++
	v.mu.Unlock()
	stopped := false
	return func() {
		v.mu.Lock()
		if stopped {
			v.mu.Unlock()
			return
		}
		stopped = true
		v.workers.on--
		var idle []*worker
		if v.workers.on == 0 {
			idle, v.workers.idle = v.workers.idle, nil
		}
		v.mu.Unlock()
		for _, w := range idle {
			w.end()
		}
	}
}

// startLocked gives p a worker: an idle one if there is one, else a new
// one. It starts playing p at p's first turn. The caller holds mu.
func (v *Virtual) startLocked(p *participant) {
	var w *worker
	if n := len(v.workers.idle); n > 0 {
		w = v.workers.idle[n-1]
		v.workers.idle[n-1] = nil
		v.workers.idle = v.workers.idle[:n-1]
	} else {
		w = v.newWorker()
	}
	w.p, p.w = p, w
}

// newWorker returns a worker that has yet to run: its goroutine exists,
// parked, and starts on its first resume.
func (v *Virtual) newWorker() *worker {
	w := new(worker)
	w.resume, w.end = iter.Pull(func(yield func(struct{}) bool) {
		w.yield = yield
		for {
			p := w.p
			w.p = nil
			if !v.participate(w, p) {
				return // not kept: the coroutine ends, and resume returns
			}
			// Kept: idle until its next participant's first turn, or
			// until Reuse's stop ends it.
			if !yield(struct{}{}) {
				return
			}
		}
	})
	return w
}

// finish is called by the driving goroutine when w handed control back
// from a participant that did not return. Its goroutine is parked half
// way through unwinding; resumed from here, iter.Pull would pass the
// Goexit (or panic) on to the driver, ending the Run's caller too. It is
// resumed instead on a goroutine of its own, which ends with it: a Goexit
// ends both quietly, and a panic crashes the program as it would have in
// any goroutine.
func (w *worker) finish() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.resume()
	}()
	<-done
}
