package apipath

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"kubevirt.dev/virt/bench/proc"
)

// Processes whose CPU each create run accounts for.
const (
	CPUKube    = "kube-apiserver"
	CPUEtcd    = "etcd of kube-apiserver"
	CPUVirt    = "virt-apiserver (with its embedded etcd)"
	CPUWebhook = "twin webhook"
	CPUBench   = "load generator"
)

// CPUProcesses in the order the report shows them.
var CPUProcesses = []string{CPUKube, CPUEtcd, CPUVirt, CPUWebhook, CPUBench}

// cpuMeter reads the CPU time of the processes that serve the API: on a
// 2-core machine the throughput of each path is bounded by the CPU one
// request costs across all of them.
type cpuMeter map[string]int

func newCPUMeter(ctx context.Context, env Env, webhookPID int) cpuMeter {
	m := cpuMeter{CPUBench: os.Getpid(), CPUWebhook: webhookPID}
	if pid, err := proc.PIDFile(filepath.Join(env.State, "run", "kube-apiserver.pid")); err == nil {
		m[CPUKube] = pid
	}
	if pid, err := proc.PIDFile(filepath.Join(env.State, "run", "etcd.pid")); err == nil {
		m[CPUEtcd] = pid
	}
	if pid, err := virtAPIServerPID(ctx, env); err == nil {
		m[CPUVirt] = pid
	}
	return m
}

func (m cpuMeter) read() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range m {
		if pid <= 0 {
			continue
		}
		if s, err := proc.CPU(pid); err == nil {
			out[name] = s
		}
	}
	return out
}

// idle measures each process's CPU per second while the bench sends
// nothing: what the shared cluster spends anyway (controllers, other
// users), subtracted from every run.
func (m cpuMeter) idle(ctx context.Context, d time.Duration) map[string]float64 {
	before := m.read()
	start := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	return rate(before, m.read(), time.Since(start))
}

func rate(before, after map[string]float64, d time.Duration) map[string]float64 {
	out := map[string]float64{}
	for name, a := range after {
		out[name] = (a - before[name]) / d.Seconds()
	}
	return out
}

// perCall turns two readings around a run of elapsed into CPU
// milliseconds per call, less the idle rate.
func perCall(before, after, idle map[string]float64, elapsed time.Duration, calls int) map[string]float64 {
	out := map[string]float64{}
	if calls == 0 {
		return out
	}
	for name, a := range after {
		used := a - before[name] - idle[name]*elapsed.Seconds()
		out[name] = max(0, used) * 1000 / float64(calls)
	}
	return out
}
