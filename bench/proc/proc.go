package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// MiB is a mebibyte in bytes.
const MiB = 1 << 20

// RSS is the resident set of a process in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	s, err := status(pid)
	if err != nil {
		return 0, err
	}
	return int64(s.VmRSS), nil
}

// Anon is the anonymous part of a process's resident set (RssAnon): its
// private memory, as opposed to file pages shared with other processes.
func Anon(pid int) (int64, error) {
	s, err := status(pid)
	if err != nil {
		return 0, err
	}
	return int64(s.RssAnon), nil
}

// status is a process's /proc/<pid>/status. Kernel threads and zombies
// have no memory lines, which procfs reads as zeros: callers skip such
// processes by the error, as they did when the lines were looked up.
func status(pid int) (procfs.ProcStatus, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStatus{}, err
	}
	s, err := p.NewStatus()
	if err != nil {
		return s, fmt.Errorf("pid %d status: %w", pid, err)
	}
	if s.VmRSS == 0 {
		return s, fmt.Errorf("pid %d: no VmRSS in /proc/%d/status", pid, pid)
	}
	return s, nil
}

// Comm is a process's command name, empty when it is gone.
func Comm(pid int) string {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return ""
	}
	c, _ := p.Comm()
	return c
}

// PodPIDs are the processes whose cgroup belongs to the pod of uid: the
// kubelet names a pod's cgroup pod<uid> (cgroupfs) or pod<uid with
// underscores> (systemd).
func PodPIDs(uid string) ([]int, error) {
	needles := []string{"pod" + uid, "pod" + strings.ReplaceAll(uid, "-", "_")}
	pids := matching(func(p procfs.Proc) bool {
		cgroups, err := p.Cgroups()
		if err != nil {
			return false // gone meanwhile
		}
		for _, cg := range cgroups {
			for _, n := range needles {
				if strings.Contains(cg.Path, n) {
					return true
				}
			}
		}
		return false
	})
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process in the cgroup of pod %s", uid)
	}
	return pids, nil
}

// WithCommandLine are the processes whose arguments match.
func WithCommandLine(match func(args []string) bool) []int {
	return matching(func(p procfs.Proc) bool {
		args, err := p.CmdLine()
		return err == nil && len(args) > 0 && match(args)
	})
}

// Children are the processes whose parent is pid.
func Children(pid int) []int {
	return matching(func(p procfs.Proc) bool {
		s, err := p.Stat()
		return err == nil && s.PPID == pid
	})
}

// matching are the PIDs of the processes for which match is true;
// processes that end while they are looked at are left out.
func matching(match func(procfs.Proc) bool) []int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs {
		if match(p) {
			out = append(out, p.PID)
		}
	}
	return out
}

// PodMemory is the memory usage (page cache included) of the cgroup one
// level above pid's, that is of its pod for a process in a container:
// memory.usage_in_bytes on cgroup v1, memory.current on v2; 0 when
// unreadable.
func PodMemory(pid int) int64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	cgroups, err := p.Cgroups()
	if err != nil {
		return 0
	}
	for _, cg := range cgroups {
		var file string
		switch {
		case hasController(cg, "memory"):
			file = filepath.Join("/sys/fs/cgroup/memory", filepath.Dir(cg.Path), "memory.usage_in_bytes")
		case cg.HierarchyID == 0 && len(cg.Controllers) == 0:
			file = filepath.Join("/sys/fs/cgroup", filepath.Dir(cg.Path), "memory.current")
		default:
			continue
		}
		if v, err := os.ReadFile(file); err == nil {
			n, _ := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
			return n
		}
	}
	return 0
}

func hasController(cg procfs.Cgroup, name string) bool {
	for _, c := range cg.Controllers {
		if c == name {
			return true
		}
	}
	return false
}

// PIDFile reads the PID at the start of a file.
func PIDFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// The cluster's scripts write "<pid> <command>".
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, fmt.Errorf("pid file %s is empty", path)
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, nil
}

// MemAvailable is the machine's MemAvailable from /proc/meminfo in bytes,
// 0 when unreadable.
func MemAvailable() int64 {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	m, err := fs.Meminfo()
	if err != nil || m.MemAvailableBytes == nil {
		return 0
	}
	return int64(*m.MemAvailableBytes)
}

// MemAvailableFall is how much MemAvailable fell since it was before (an
// earlier MemAvailable), 0 when either reading failed.
func MemAvailableFall(before int64) int64 {
	now := MemAvailable()
	if before == 0 || now == 0 {
		return 0
	}
	return before - now
}
