package proc

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times; Linux
// fixes it at 100 for user space (procfs divides by the same).
const clockTicks = 100

// CPU is the CPU time a process has used so far (user + system), in
// seconds.
func CPU(pid int) (float64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	s, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("pid %d stat: %w", pid, err)
	}
	return s.CPUTime(), nil
}

// Usage is a snapshot of every process's CPU time, its own plus its
// reaped children's (so short-lived helpers such as runc count in the
// parent that waited for them), keyed by PID.
type Usage map[int]struct {
	Comm string
	// Start tells a reused PID apart (clock ticks after boot).
	Start int64
	CPU   float64
}

// Snapshot reads every process's CPU time.
func Snapshot() Usage {
	u := Usage{}
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		s, err := p.Stat()
		if err != nil {
			continue // gone meanwhile
		}
		ticks := int64(s.UTime) + int64(s.STime) + int64(s.CUTime) + int64(s.CSTime)
		u[p.PID] = struct {
			Comm  string
			Start int64
			CPU   float64
		}{s.Comm, int64(s.Starttime), float64(ticks) / clockTicks}
	}
	return u
}

// ByComm is the CPU seconds used between two snapshots, summed by command
// name. Processes that ended in between are lost, except through the
// children's time of the parent that reaped them.
func ByComm(before, after Usage) map[string]float64 {
	out := map[string]float64{}
	for pid, a := range after {
		used := a.CPU
		if b, ok := before[pid]; ok && b.Start == a.Start {
			used -= b.CPU
		}
		if used > 0 {
			out[a.Comm] += used
		}
	}
	return out
}
