package load

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
)

// HostCPU is the machine's CPU time over one interval of a storm, as
// shares of all its CPUs' time in it. The storm shares the machine with
// the whole cluster: a second slower than the baseline with the host busy
// the same is the platform's; with the disk or the hypervisor taking the
// time, it is the machine's.
type HostCPU struct {
	// End is when the interval ended.
	End time.Time
	// Busy is user (guests' time included), system and interrupt time;
	// IOWait idle time with a disk request outstanding; Steal time the
	// hypervisor gave to another machine.
	Busy, IOWait, Steal float64
}

// HostCPUSampler reads /proc/stat at a fixed interval until stopped. Its
// goroutine alone writes samples and err; Stop reads them once it ended.
type HostCPUSampler struct {
	stop, done chan struct{}
	samples    []HostCPU
	err        error
}

// SampleHostCPU starts sampling the host's CPU every interval.
func SampleHostCPU(interval time.Duration) (*HostCPUSampler, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	prev, err := fs.Stat()
	if err != nil {
		return nil, fmt.Errorf("read /proc/stat: %w", err)
	}
	s := &HostCPUSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-tick.C:
				cur, err := fs.Stat()
				if err != nil {
					s.err = fmt.Errorf("read /proc/stat: %w", err)
					return
				}
				s.samples = append(s.samples, cpuShares(now, prev.CPUTotal, cur.CPUTotal))
				prev = cur
			}
		}
	}()
	return s, nil
}

// Stop ends the sampling and returns the samples, oldest first. Call it
// once.
func (s *HostCPUSampler) Stop() ([]HostCPU, error) {
	close(s.stop)
	<-s.done
	return s.samples, s.err
}

// cpuShares is the interval from a to b as shares of its total time.
func cpuShares(end time.Time, a, b procfs.CPUStat) HostCPU {
	busy := func(c procfs.CPUStat) float64 {
		return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
	}
	idle := func(c procfs.CPUStat) float64 { return c.Idle + c.Iowait }
	dBusy, dIdle, dSteal := busy(b)-busy(a), idle(b)-idle(a), b.Steal-a.Steal
	total := dBusy + dIdle + dSteal
	if total <= 0 {
		return HostCPU{End: end}
	}
	return HostCPU{End: end, Busy: dBusy / total, IOWait: (b.Iowait - a.Iowait) / total, Steal: dSteal / total}
}
