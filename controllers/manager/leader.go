package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"
)

// controllersStopGrace bounds how long the manager waits for its controllers
// to return once it left the lead: the Lease is already released by then, so
// waiting only makes the exit clean, and a controller stuck in shutdown must
// not keep a process that no longer leads from restarting.
const controllersStopGrace = 10 * time.Second

// namedController is one controller the leader runs: its name says which
// one died in logs and errors, run is its Run with the worker count bound.
type namedController struct {
	name string
	run  func(ctx context.Context) error
}

// runAll runs every controller until ctx is done or the first of them
// returns. A controller that returns while ctx is live has died, with or
// without an error: the others are cancelled, because a leader running only
// some of its controllers would hold the Lease while, say, no VMI gets a pod.
// runAll waits for all of them and returns why the first one stopped, or nil
// if they all stopped because ctx was done.
func runAll(ctx context.Context, controllers []namedController) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type stopped struct {
		name string
		err  error
	}
	stops := make(chan stopped, len(controllers))
	for _, c := range controllers {
		go func() {
			cctx := klog.NewContext(ctx, klog.LoggerWithName(logger, c.name))
			stops <- stopped{name: c.name, err: c.run(cctx)}
		}()
	}

	var first error
	var rest []error
	for range controllers {
		s := <-stops
		// Read ctx before cancel() below marks it done for everyone.
		died := ctx.Err() == nil
		switch {
		case died && s.err != nil:
			first = fmt.Errorf("controller %s: %w", s.name, s.err)
		case died:
			first = fmt.Errorf("controller %s returned while leading", s.name)
		case s.err != nil:
			rest = append(rest, fmt.Errorf("controller %s: %w", s.name, s.err))
		}
		if died {
			logger.Error(first, "Controller died, stopping the others", "controller", s.name)
			cancel()
		}
	}
	return errors.Join(append([]error{first}, rest...)...)
}

// runWhileLeading takes part in leader election with config (its Callbacks
// are set here) and runs lead while it holds the Lease. It returns when
// ctx is done (nil), when the Lease is lost, or when lead returns: a leader
// whose controllers died gives the Lease up at once and returns lead's
// error, so the process exits and a standby takes over instead of waiting
// behind a Lease that a replica doing nothing keeps renewing.
func runWhileLeading(ctx context.Context, config leaderelection.LeaderElectionConfig, lead func(ctx context.Context) error) error {
	logger := klog.FromContext(ctx)
	identity := config.Lock.Identity()
	electionCtx, leaveElection := context.WithCancel(ctx)
	defer leaveElection()

	// The elector starts OnStartedLeading in a goroutine of its own, which
	// may not have run yet when elector.Run returns; electionOver and
	// leading, under mu, decide whether lead runs and must be waited for.
	var mu sync.Mutex
	electionOver, leading := false, false
	// leadErr is written before leadDone is closed and read after.
	var leadErr error
	leadDone := make(chan struct{})
	config.Callbacks = leaderelection.LeaderCallbacks{
		OnStartedLeading: func(leaderCtx context.Context) {
			mu.Lock()
			if electionOver {
				mu.Unlock()
				return
			}
			leading = true
			mu.Unlock()
			defer close(leadDone)

			logger.Info("Started leading", "identity", identity)
			leadErr = lead(leaderCtx)
			if leaderCtx.Err() != nil {
				return // the lead ended first: lost, or ctx is done
			}
			if leadErr == nil {
				leadErr = errors.New("controllers returned while leading")
			}
			// Ends the elector's renewals; with ReleaseOnCancel it then
			// empties the Lease's holder before elector.Run returns.
			logger.Error(leadErr, "Giving up the lead", "identity", identity)
			leaveElection()
		},
		OnStoppedLeading: func() {
			logger.Info("Stopped leading", "identity", identity)
		},
		OnNewLeader: func(leader string) {
			logger.Info("Leader is", "identity", leader)
		},
	}
	// Leaving the election, because a controller died or ctx is done, must
	// hand over at once rather than make the standby wait out the lease.
	config.ReleaseOnCancel = true
	elector, err := leaderelection.NewLeaderElector(config)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	if config.WatchDog != nil {
		config.WatchDog.SetLeaderElection(elector)
	}
	logger.Info("Waiting for the lead", "lease", config.Lock.Describe(), "identity", identity)
	elector.Run(electionCtx)

	mu.Lock()
	electionOver = true
	led := leading
	mu.Unlock()
	if led {
		select {
		case <-leadDone:
		case <-time.After(controllersStopGrace):
			return fmt.Errorf("controllers did not stop within %s of leaving the lead", controllersStopGrace)
		}
	}
	if leadErr != nil {
		return leadErr
	}
	if ctx.Err() == nil {
		// A process whose controllers were stopped midway restarts rather
		// than trusting its state.
		return errors.New("lost the lead")
	}
	return nil
}
