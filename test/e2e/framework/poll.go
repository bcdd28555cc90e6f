package framework

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Poll is one call of a Poller's probe.
type Poll struct {
	Start, End time.Time
	// Err is the probe's failure, nil when it succeeded.
	Err error
}

// Poller calls a probe at a fixed interval, one call at a time, and keeps
// every outcome: a client's view of the API while something happens to it.
type Poller struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	polls  []Poll
}

// StartPolling calls probe every interval (right after the previous call
// when a call takes longer) until Stop or ctx ends. A call cut off by Stop
// is not kept: it failed because it was stopped, not because of the API.
func StartPolling(ctx context.Context, interval time.Duration, probe func(context.Context) error) *Poller {
	ctx, cancel := context.WithCancel(ctx)
	p := &Poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			start := time.Now()
			err := probe(ctx)
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			p.polls = append(p.polls, Poll{Start: start, End: time.Now(), Err: err})
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Count is how many calls have ended so far.
func (p *Poller) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.polls)
}

// WaitPolls waits until n more calls have ended than when it was called,
// so a measurement covers some time after an event.
func (p *Poller) WaitPolls(ctx context.Context, n int, timeout time.Duration) error {
	want := p.Count() + n
	return WaitFor(ctx, timeout, fmt.Sprintf("%d more polls", n), func(context.Context) (bool, error) {
		return p.Count() >= want, nil
	})
}

// Stop ends the polling and returns every call's outcome, in order.
func (p *Poller) Stop() Polls {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return Polls(append([]Poll(nil), p.polls...))
}

// Polls are a Poller's outcomes in order.
type Polls []Poll

// Failed returns the calls that failed.
func (ps Polls) Failed() Polls {
	var failed Polls
	for _, p := range ps {
		if p.Err != nil {
			failed = append(failed, p)
		}
	}
	return failed
}

// String sums the outcomes up: how many, how many failed, over what span,
// and the distinct errors.
func (ps Polls) String() string {
	if len(ps) == 0 {
		return "no polls"
	}
	failed := ps.Failed()
	s := fmt.Sprintf("%d polls over %s, %d failed", len(ps), ps[len(ps)-1].End.Sub(ps[0].Start).Round(time.Millisecond), len(failed))
	if len(failed) == 0 {
		return s
	}
	s += fmt.Sprintf(" (from %s to %s)", failed[0].Start.Format("15:04:05.000"), failed[len(failed)-1].End.Format("15:04:05.000"))
	seen := map[string]int{}
	var order []string
	for _, f := range failed {
		msg := f.Err.Error()
		if seen[msg] == 0 {
			order = append(order, msg)
		}
		seen[msg]++
	}
	var lines []string
	for _, msg := range order {
		lines = append(lines, fmt.Sprintf("  %dx %s", seen[msg], msg))
	}
	return s + ":\n" + strings.Join(lines, "\n")
}
