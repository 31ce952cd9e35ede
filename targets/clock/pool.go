package clock

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

// worker is one goroutine of the pool. Its wake channel serves every
// participant it plays in turn: a participant's last turn has taken its
// token by the time it returns, so the next one finds the channel empty.
type worker struct {
	wake chan struct{}
	jobs chan job // buffered: startLocked never blocks, holding mu
}

// job is a participant to play and what it runs.
type job struct {
	p *participant
	f func()
}

// Reuse keeps the goroutines of participants that return, to play the
// participants of later runs, until stop is called; a store that plays
// many runs of many short participants (a trial after another) runs
// faster for it. Without Reuse, every participant gets a goroutine of its
// own that ends with it. stop lets the kept goroutines end; those playing
// a participant still (a store's object parked on its mailbox) end when it
// returns. Calls nest: the goroutines are kept until every stop is called.
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
			close(w.jobs)
		}
	}
}

// startLocked starts p, which runs f, on an idle worker if there is one,
// else on a new goroutine. The caller holds mu.
func (v *Virtual) startLocked(p *participant, f func()) {
	if n := len(v.workers.idle); n > 0 {
		w := v.workers.idle[n-1]
		v.workers.idle[n-1] = nil
		v.workers.idle = v.workers.idle[:n-1]
		p.wake = w.wake
		w.jobs <- job{p, f}
		return
	}
	w := &worker{wake: make(chan struct{}, 1), jobs: make(chan job, 1)}
	p.wake = w.wake
	go v.work(w, job{p, f})
}

// work is a worker's goroutine: it plays its first participant, then, as
// long as it is kept, the next ones it is given, until stop closes its jobs.
func (v *Virtual) work(w *worker, j job) {
	for v.participate(w, j.p, j.f) {
		var ok bool
		if j, ok = <-w.jobs; !ok {
			return
		}
	}
}
