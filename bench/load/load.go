package load

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one request; i numbers the calls from 0.
type Op func(ctx context.Context, i int) error

// Result is what a run did.
type Result struct {
	Clients int
	// OK and Errors count the calls that succeeded and failed.
	OK, Errors int
	// FirstError is the first failure, to tell what went wrong.
	FirstError error
	Elapsed    time.Duration
	// Latencies of the successful calls, sorted.
	Latencies []time.Duration
}

// Rate is successful calls per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// Quantile is the q-quantile (0..1) of the latencies, nearest rank.
func (r Result) Quantile(q float64) time.Duration { return Quantile(r.Latencies, q) }

// Quantile of sorted durations, nearest rank; 0 for none.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// Run calls op from clients goroutines until max calls were started or
// duration passed (each bound ignored when <= 0; at least one must be set),
// or ctx ends. A call in flight when the time is up still counts.
func Run(ctx context.Context, clients int, duration time.Duration, maxCalls int, op Op) Result {
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	var (
		next   atomic.Int64
		mu     sync.Mutex
		res    = Result{Clients: clients}
		wg     sync.WaitGroup
		lat    = make([][]time.Duration, clients)
		callCx = context.WithoutCancel(ctx)
	)
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if maxCalls > 0 && i >= maxCalls {
					return
				}
				// The call itself is not cut off by the deadline: a
				// request cancelled halfway would count as neither.
				t := time.Now()
				err := op(callCx, i)
				d := time.Since(t)
				if err != nil {
					mu.Lock()
					res.Errors++
					if res.FirstError == nil {
						res.FirstError = err
					}
					mu.Unlock()
					continue
				}
				lat[c] = append(lat[c], d)
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	for _, l := range lat {
		res.Latencies = append(res.Latencies, l...)
	}
	sort.Slice(res.Latencies, func(i, j int) bool { return res.Latencies[i] < res.Latencies[j] })
	res.OK = len(res.Latencies)
	return res
}
