package migration

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/test/e2e/framework"
)

// Env is the cluster and the raw side's guest files.
type Env struct {
	Cluster *framework.Cluster
	// Guest is the test guest's kernel and initrd (hack/build-guest.sh).
	Guest startup.Guest
	Logf  func(string, ...any)
}

// Options of the part.
type Options struct {
	// Runs is how many times each case moves per side.
	Runs int
	// Timeout bounds one move, from the guest's start to its heartbeat at
	// the target.
	Timeout time.Duration
	// Sides to measure: Platform, Raw or both (empty: both).
	Sides []string
}

func (o Options) side(s string) bool {
	if len(o.Sides) == 0 {
		return true
	}
	for _, x := range o.Sides {
		if x == s {
			return true
		}
	}
	return false
}

// Namespace holds the platform's guests.
const Namespace = "bench-migration"

// Run moves every case Runs times per side, raw libvirt first in each
// round; one guest on the machine at a time. A move that fails is
// recorded and the next one still runs.
func Run(ctx context.Context, env Env, o Options) (*Result, error) {
	res := &Result{}
	if nodes, err := env.Cluster.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		res.Nodes = len(nodes.Items)
	}
	if o.side(Platform) {
		if err := namespace.Create(ctx, env.Cluster.Kube, Namespace); err != nil {
			return nil, err
		}
		defer func() {
			if err := namespace.Delete(context.WithoutCancel(ctx), env.Cluster.Kube, 2*time.Minute, Namespace); err != nil {
				env.Logf("migration: %v", err)
			}
		}()
	}
	seq := 0
	for round := range o.Runs {
		for _, c := range Cases() {
			for _, side := range []string{Raw, Platform} {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if !o.side(side) {
					continue
				}
				seq++
				var m Move
				var err error
				if side == Raw {
					m, err = rawMove(ctx, env.Guest, c, seq, o.Timeout)
				} else {
					mctx, cancel := context.WithTimeout(ctx, o.Timeout)
					m, err = platformMove(mctx, env.Cluster, Namespace, c, seq, o.Timeout)
					cancel()
				}
				if err != nil {
					m.Error = err.Error()
					env.Logf("migration: %s, %s, run %d: FAILED: %v", side, c.Name(), round+1, err)
				} else {
					env.Logf("migration: %s, %s, run %d: total %s, downtime %s (paused copy: %v)",
						side, c.Name(), round+1, m.Total.Round(time.Millisecond), m.Downtime, m.Paused)
				}
				res.Moves = append(res.Moves, m)
			}
		}
	}
	if len(res.Moves) == 0 {
		return res, fmt.Errorf("no move ran")
	}
	return res, nil
}
