package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MiB is a mebibyte in bytes.
const MiB = 1 << 20

// RSS is the resident set of a process in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	return statusField(pid, "VmRSS:")
}

func statusField(pid int, name string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		fields := strings.Fields(strings.TrimPrefix(line, name))
		if len(fields) < 1 {
			break
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pid %d %s %q: %w", pid, name, line, err)
		}
		return kib << 10, nil
	}
	return 0, fmt.Errorf("pid %d: no %s in /proc/%d/status", pid, name, pid)
}

// Anon is the anonymous part of a process's resident set (RssAnon): its
// private memory, as opposed to file pages shared with other processes.
func Anon(pid int) (int64, error) {
	return statusField(pid, "RssAnon:")
}

// Comm is a process's command name.
func Comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// Cmdline is a process's command line, arguments joined by spaces.
func Cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// PodPIDs are the processes whose cgroup belongs to the pod of uid: the
// kubelet names a pod's cgroup pod<uid> (cgroupfs) or pod<uid with
// underscores> (systemd).
func PodPIDs(uid string) ([]int, error) {
	needles := []string{"pod" + uid, "pod" + strings.ReplaceAll(uid, "-", "_")}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil {
			continue // gone meanwhile
		}
		for _, n := range needles {
			if bytes.Contains(cg, []byte(n)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process in the cgroup of pod %s", uid)
	}
	return pids, nil
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

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times; Linux
// fixes it at 100 for user space.
const clockTicks = 100

// CPU is the CPU time a process has used so far (user + system), in
// seconds.
func CPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces, so count after ')'.
	s := string(b)
	i := strings.LastIndex(s, ")")
	if i < 0 {
		return 0, fmt.Errorf("pid %d: malformed stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// Fields after ')': state(0) ... utime(11) stime(12).
	if len(f) < 13 {
		return 0, fmt.Errorf("pid %d: short stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid %d: stat times: %v %v", pid, err1, err2)
	}
	return float64(ut+st) / clockTicks, nil
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
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i, j := strings.Index(s, "("), strings.LastIndex(s, ")")
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 20 {
			continue
		}
		var t [4]int64
		for k := range t {
			t[k], _ = strconv.ParseInt(f[11+k], 10, 64)
		}
		start, _ := strconv.ParseInt(f[19], 10, 64)
		u[pid] = struct {
			Comm  string
			Start int64
			CPU   float64
		}{s[i+1 : j], start, float64(t[0]+t[1]+t[2]+t[3]) / clockTicks}
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
