package rawguest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A bench under nice starts raw libvirt at nice 0 and keeps its own.
func TestStartAtNice0(t *testing.T) {
	requireRoot(t)
	type result struct {
		child, after int
		err          error
	}
	c := make(chan result, 1)
	go func() {
		// The thread's nice value changes: it is thrown away after.
		runtime.LockOSThread()
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 10); err != nil {
			c <- result{err: err}
			return
		}
		cmd := exec.Command("sleep", "60")
		if err := startAtNice0(cmd); err != nil {
			c <- result{err: err}
			return
		}
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}()
		child, err := niceOf(cmd.Process.Pid)
		prio, perr := unix.Getpriority(unix.PRIO_PROCESS, 0)
		if err == nil {
			err = perr
		}
		c <- result{child: child, after: 20 - prio, err: err}
	}()
	r := <-c
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.child != 0 || r.after != 10 {
		t.Errorf("child at nice %d, the bench's thread at %d after; want 0 and 10", r.child, r.after)
	}
}

// niceOf reads a process's nice value from /proc/PID/stat (field 19).
func niceOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count after it.
	i := strings.LastIndexByte(string(b), ')')
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 17 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return strconv.Atoi(fields[16])
}
