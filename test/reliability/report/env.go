package report

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kubevirt.dev/virt/launcher/kvm"
)

// Environment is where and when the figures were produced.
type Environment struct {
	Date time.Time
	// Commit is the repository's HEAD; Modified, whether its tracked files
	// had changes not committed.
	Commit   string
	Modified bool
	CPUs     int
	CPUModel string
	Memory   string
	// Virtualization is KVM, or TCG (software emulation) without
	// /dev/kvm.
	Virtualization string
	Kernel         string
	// Command produced the report; Runtime is how long the suite ran.
	Command string
	Runtime time.Duration
}

// ReadEnvironment describes this machine and the repository at root.
func ReadEnvironment(root string) Environment {
	// The launcher's own test: a /dev/kvm that is there but does not
	// answer as KVM (seen on these machines) still means TCG.
	e := Environment{Date: time.Now().UTC(), CPUs: runtime.NumCPU(), Virtualization: "KVM"}
	if ok, why := kvm.Usable(); !ok {
		e.Virtualization = "TCG (software emulation: " + why + ")"
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		e.Modified = len(strings.TrimSpace(string(out))) > 0
	}
	e.CPUModel = cpuModel()
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err == nil {
		e.Memory = fmt.Sprintf("%.0f GiB", float64(si.Totalram)*float64(si.Unit)/(1<<30))
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		e.Kernel = utsString(u.Release[:])
	}
	return e
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func utsString(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

func (e Environment) table() string {
	commit := e.Commit
	if commit == "" {
		commit = "unknown"
	}
	if e.Modified {
		commit += " with uncommitted changes to tracked files"
	}
	machine := strconv.Itoa(e.CPUs) + " cores"
	if e.CPUModel != "" {
		machine += " (" + e.CPUModel + ")"
	}
	if e.Memory != "" {
		machine += ", " + e.Memory + " of memory"
	}
	rows := [][2]string{
		{"date", e.Date.Format("2006-01-02 15:04 MST")},
		{"commit", commit},
		{"machine", machine},
		{"guests", e.Virtualization},
		{"kernel", e.Kernel},
		{"command", e.Command},
		{"suite runtime", e.Runtime.Round(time.Second).String()},
	}
	var s strings.Builder
	s.WriteString("| | |\n|---|---|\n")
	for _, r := range rows {
		if r[1] != "" {
			fmt.Fprintf(&s, "| %s | %s |\n", r[0], cell(r[1]))
		}
	}
	return s.String()
}
